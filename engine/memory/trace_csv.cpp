// Trace reading: streamed in fixed-size chunks (the file is never held whole), lines bounded, every number through
// std::from_chars with its range checked before it is used.
#include "memory/trace_csv.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unordered_map>

namespace kiln::memory {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

class TraceParser {
 public:
  TraceParser(const std::string& file, const TraceLimits& limits) : file_(file), limits_(limits) {}

  // Text of any length, split at newlines; a line is parsed when its newline (or finish()) arrives.
  void feed(std::string_view chunk) {
    while (true) {
      const size_t nl = chunk.find('\n');
      partial_.append(chunk.substr(0, nl));
      if (partial_.size() > limits_.maxLineLength)
        throw TraceError(file_, lineNo_ + 1, "line longer than " + std::to_string(limits_.maxLineLength) + " characters");
      if (nl == std::string_view::npos) return;
      parseLine();
      chunk.remove_prefix(nl + 1);
    }
  }

  std::vector<Buffer> finish() {
    if (!partial_.empty()) parseLine();
    if (buffers_.empty()) throw TraceError(file_, 0, "holds no buffers (id,lower,upper,size rows)");
    return std::move(buffers_);
  }

 private:
  // planMemory's own limit on the total (repeated here so the error names the line).
  static constexpr int64_t kMaxTotal = std::numeric_limits<int64_t>::max() / 8;

  void parseLine() {
    ++lineNo_;
    std::string_view text = trim(partial_);
    const bool first = !sawContent_;
    if (!text.empty()) sawContent_ = true;
    if (text.empty()) {
      partial_.clear();
      return;
    }
    std::string_view fields[4];
    size_t count = 0;
    while (true) {
      if (count == 4) fail("more than 4 fields (expected id,lower,upper,size)");
      const size_t comma = text.find(',');
      fields[count++] = trim(text.substr(0, comma));
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
    if (count != 4) fail(std::to_string(count) + " field(s), expected 4 (id,lower,upper,size)");
    if (first && !fields[0].empty() && !isNumberStart(fields[0].front())) {
      if (fields[0] != "id" || fields[1] != "lower" || fields[2] != "upper" || fields[3] != "size")
        fail("the header must be id,lower,upper,size");
      partial_.clear();
      return;
    }
    Buffer b;
    b.id = number(fields[0], "id", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    b.lower = number(fields[1], "lower", 0, limits_.maxTime);
    b.upper = number(fields[2], "upper", 0, limits_.maxTime);
    b.size = number(fields[3], "size", 1, limits_.maxSize);
    if (b.upper <= b.lower)
      fail("upper " + std::to_string(b.upper) + " is not after lower " + std::to_string(b.lower));
    if (buffers_.size() >= limits_.maxBuffers) fail("more than " + std::to_string(limits_.maxBuffers) + " buffers");
    if (b.size > kMaxTotal - total_) fail("the buffers' total size exceeds " + std::to_string(kMaxTotal) + " bytes");
    // An id names one buffer in the results: a repeated one would make them ambiguous.
    if (auto [it, fresh] = idLines_.emplace(b.id, lineNo_); !fresh)
      fail("id " + std::to_string(b.id) + " already used on line " + std::to_string(it->second));
    total_ += b.size;
    buffers_.push_back(b);
    partial_.clear();
  }

  static bool isNumberStart(char c) { return c == '-' || c == '+' || (c >= '0' && c <= '9'); }

  [[noreturn]] void fail(const std::string& problem) const { throw TraceError(file_, lineNo_, problem); }

  int64_t number(std::string_view field, const char* what, int64_t lo, int64_t hi) const {
    const std::string shown(field.substr(0, 40));
    if (field.empty()) fail(std::string("empty ") + what);
    if (field.front() == '+') field.remove_prefix(1);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec == std::errc::result_out_of_range) fail(std::string(what) + " " + shown + " does not fit in 64 bits");
    if (ec != std::errc() || ptr != field.data() + field.size())
      fail(std::string(what) + " '" + shown + "' is not an integer");
    if (v < lo || v > hi)
      fail(std::string(what) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
    return v;
  }

  const std::string& file_;
  const TraceLimits& limits_;
  std::string partial_;
  size_t lineNo_ = 0;
  bool sawContent_ = false;
  int64_t total_ = 0;
  std::vector<Buffer> buffers_;
  std::unordered_map<int64_t, size_t> idLines_;
};

}  // namespace

std::vector<Buffer> parseTraceCsv(std::string_view text, const std::string& file, const TraceLimits& limits) {
  if (text.size() > limits.maxFileBytes)
    throw TraceError(file, 0, "larger than " + std::to_string(limits.maxFileBytes) + " bytes");
  TraceParser parser(file, limits);
  parser.feed(text);
  return parser.finish();
}

std::vector<Buffer> readTraceCsv(const std::string& path, const TraceLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw TraceError(path, 0, "not a readable regular file");
  const uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec) throw TraceError(path, 0, "cannot read its size: " + ec.message());
  if (bytes > limits.maxFileBytes)
    throw TraceError(path, 0, "larger than " + std::to_string(limits.maxFileBytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path, 0, "cannot open");
  TraceParser parser(path, limits);
  std::string chunk(size_t{1} << 16, '\0');
  uint64_t total = 0;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<size_t>(in.gcount());
    // The size was checked before reading, but the file may grow meanwhile.
    if ((total += got) > limits.maxFileBytes)
      throw TraceError(path, 0, "larger than " + std::to_string(limits.maxFileBytes) + " bytes");
    parser.feed(std::string_view(chunk.data(), got));
  }
  if (in.bad()) throw TraceError(path, 0, "read error");
  return parser.finish();
}

}  // namespace kiln::memory
