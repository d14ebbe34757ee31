#pragma once
// A CSV file as the Ascend profiler writes it, read generously and bounded: a header row naming the columns, then
// one row per record. Fields may be quoted (RFC 4180, doubled quotes inside; msprof's shapes arrive as
// `"""32,1024;1024,1024"""`), carry trailing tabs or spaces (msprof's times do), and lines may end in CRLF. Columns
// are found by name, ignoring case, spaces, underscores and a unit suffix, so "Task Duration(us)", "task_duration"
// and "Block Dim"/"Block Num" (two releases' names) are all found. Any problem is a LoadError naming the file and
// line; the size of the file, of a line and the number of rows are capped.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::msprof {

struct CsvLimits {
  uint64_t maxFileBytes = uint64_t{2} << 30;
  size_t maxLineBytes = size_t{1} << 20;
  size_t maxRows = 20'000'000;
  size_t maxColumns = 1024;
};

class CsvTable {
 public:
  // Reads `path`; LoadError for an unreadable file, no header, a line over the limits or an unterminated quote.
  static CsvTable read(const std::string& path, const CsvLimits& limits = {});
  // The same rules on text in memory; `file` names it in errors.
  static CsvTable parse(std::string_view text, const std::string& file, const CsvLimits& limits = {});

  const std::string& file() const { return file_; }
  const std::vector<std::string>& header() const { return header_; }
  size_t rows() const { return rows_.size(); }
  size_t lineOf(size_t row) const { return lines_[row]; }  // 1-based line in the file
  // Column index of the first header matching any of `names` (normalised as above); nullopt when none does.
  std::optional<size_t> column(std::initializer_list<std::string_view> names) const;
  // The field, trimmed of surrounding whitespace and tabs; "" for a short row.
  std::string_view field(size_t row, size_t column) const;
  // Numbers: nullopt for "", "N/A" or text that is not a number; a LoadError naming the line when `required`.
  std::optional<double> number(size_t row, std::optional<size_t> column) const;
  std::optional<int64_t> integer(size_t row, std::optional<size_t> column) const;

 private:
  std::string file_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> lines_;
};

// "Task Duration(us)" -> "taskduration": lower case, no spaces/underscores/dashes, a trailing "(unit)" dropped.
std::string normaliseColumnName(std::string_view name);

}  // namespace kiln::msprof
