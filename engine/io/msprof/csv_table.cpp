#include "io/msprof/csv_table.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>

#include "util/load_error.h"

namespace kiln::msprof {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

LoadError lineError(const std::string& file, size_t line, const std::string& problem) {
  return LoadError(file, "line " + std::to_string(line) + ": " + problem);
}

}  // namespace

std::string normaliseColumnName(std::string_view name) {
  name = trim(name);
  if (const size_t paren = name.rfind('('); paren != std::string_view::npos && paren > 0 && name.back() == ')')
    name = trim(name.substr(0, paren));
  std::string out;
  for (char c : name)
    if (c != ' ' && c != '_' && c != '-' && c != '\t') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

CsvTable CsvTable::read(const std::string& path, const CsvLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path, "cannot open");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw LoadError(path, "cannot read");
  if (static_cast<uint64_t>(size) > limits.maxFileBytes)
    throw LoadError(path, "file is " + std::to_string(size) + " bytes, above the limit of " +
                              std::to_string(limits.maxFileBytes));
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (in.gcount() != size) throw LoadError(path, "cannot read");
  return parse(text, path, limits);
}

CsvTable CsvTable::parse(std::string_view text, const std::string& file, const CsvLimits& limits) {
  CsvTable t;
  t.file_ = file;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  std::vector<std::string> record;
  std::string fieldText;
  size_t line = 1, recordLine = 1, lineStart = 0;
  bool quoted = false, any = false;
  auto finishRecord = [&] {
    record.push_back(std::move(fieldText));
    fieldText.clear();
    const bool blank = record.size() == 1 && trim(record[0]).empty();
    if (!blank) {
      if (record.size() > limits.maxColumns)
        throw lineError(file, recordLine, std::to_string(record.size()) + " fields, above the limit of " +
                                              std::to_string(limits.maxColumns));
      if (t.header_.empty()) {
        t.header_ = std::move(record);
      } else {
        if (t.rows_.size() >= limits.maxRows)
          throw lineError(file, recordLine, "more than " + std::to_string(limits.maxRows) + " rows");
        t.rows_.push_back(std::move(record));
        t.lines_.push_back(recordLine);
      }
    }
    record.clear();
    any = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i - lineStart > limits.maxLineBytes)
      throw lineError(file, line, "line longer than " + std::to_string(limits.maxLineBytes) + " bytes");
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          fieldText += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') {
          ++line;
          lineStart = i + 1;
        }
        fieldText += c;
      }
      continue;
    }
    if (c == '"' && trim(fieldText).empty()) {
      fieldText.clear();
      quoted = true;
      any = true;
    } else if (c == ',') {
      record.push_back(std::move(fieldText));
      fieldText.clear();
      any = true;
    } else if (c == '\n') {
      finishRecord();
      ++line;
      lineStart = i + 1;
      recordLine = line;
    } else {
      fieldText += c;
      any = true;
    }
  }
  if (quoted) throw lineError(file, recordLine, "a quoted field is never closed");
  if (any || !fieldText.empty()) finishRecord();
  if (t.header_.empty()) throw LoadError(file, "empty: no header row");
  return t;
}

std::optional<size_t> CsvTable::column(std::initializer_list<std::string_view> names) const {
  for (std::string_view want : names) {
    const std::string n = normaliseColumnName(want);
    for (size_t i = 0; i < header_.size(); ++i)
      if (normaliseColumnName(header_[i]) == n) return i;
  }
  return std::nullopt;
}

std::string_view CsvTable::field(size_t row, size_t column) const {
  const auto& r = rows_[row];
  return column < r.size() ? trim(r[column]) : std::string_view{};
}

std::optional<double> CsvTable::number(size_t row, std::optional<size_t> column) const {
  if (!column) return std::nullopt;
  const std::string_view f = field(row, *column);
  if (f.empty() || f == "N/A" || f == "NA" || f == "-") return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ec != std::errc() || end != f.data() + f.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> CsvTable::integer(size_t row, std::optional<size_t> column) const {
  const std::optional<double> v = number(row, column);
  if (!v || *v != std::floor(*v) || std::fabs(*v) > 9.0e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

}  // namespace kiln::msprof
