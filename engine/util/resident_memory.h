#pragma once
// The resident memory a stretch of work adds at its peak, for the emulator's memory report: the process's peak
// resident set (VmHWM) is reset when the stretch starts (/proc/self/clear_refs) and read when it ends, less what
// was resident at the start. Linux only; elsewhere, or where /proc cannot be written, the peak is not measured.
#include <cstdint>
#include <optional>

namespace kiln {

class ResidentPeak {
 public:
  ResidentPeak();  // starts the stretch
  // Bytes resident at the stretch's peak beyond those resident when it started; nullopt when not measured.
  std::optional<int64_t> addedBytes() const;

 private:
  std::optional<int64_t> start_;
};

}  // namespace kiln
