#include "util/resident_memory.h"

#include <fstream>
#include <string>

namespace kiln {
namespace {

// A "Name:   1234 kB" line of /proc/self/status, in bytes.
std::optional<int64_t> statusBytes(const char* name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(name) + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    try {
      return std::stoll(line.substr(key.size())) * 1024;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

ResidentPeak::ResidentPeak() {
  std::ofstream reset("/proc/self/clear_refs");
  reset << "5";  // resets VmHWM to the current resident set
  reset.flush();
  if (!reset) return;
  const auto rss = statusBytes("VmRSS"), hwm = statusBytes("VmHWM");
  // After a reset the peak equals the resident set (a page or two apart); otherwise the reset did not take.
  if (rss && hwm && *hwm <= *rss + (int64_t{1} << 20)) start_ = rss;
}

std::optional<int64_t> ResidentPeak::addedBytes() const {
  if (!start_) return std::nullopt;
  const auto hwm = statusBytes("VmHWM");
  if (!hwm) return std::nullopt;
  return *hwm > *start_ ? *hwm - *start_ : 0;
}

}  // namespace kiln
