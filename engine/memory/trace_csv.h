#pragma once
// Memory-planning traces: CSV rows `id,lower,upper,size` (one buffer each; an `id,lower,upper,size` header line is
// optional; ids are unique, at least one row). The file is untrusted: its size, line length, row count and every
// number are bounded, and any problem is a TraceError naming the file and the line.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/load_error.h"
#include "memory/memory_plan.h"

namespace kiln::memory {

struct TraceLimits {
  uint64_t maxFileBytes = uint64_t{1} << 30;
  size_t maxBuffers = 10'000'000;
  size_t maxLineLength = 1024;
  int64_t maxTime = int64_t{1} << 62;
  int64_t maxSize = int64_t{1} << 53;  // bytes per buffer; their total is capped so plans stay inside int64
};

// A LoadError (file + "line N: problem") that also keeps the line number (0 = the file as a whole).
class TraceError : public LoadError {
 public:
  TraceError(std::string file, size_t line, const std::string& problem)
      : LoadError(std::move(file), line ? "line " + std::to_string(line) + ": " + problem : problem), line_(line) {}
  size_t line() const { return line_; }

 private:
  size_t line_;
};

std::vector<Buffer> readTraceCsv(const std::string& path, const TraceLimits& limits = {});
// The same rules on text already in memory; `file` names it in errors.
std::vector<Buffer> parseTraceCsv(std::string_view text, const std::string& file, const TraceLimits& limits = {});

}  // namespace kiln::memory
