#include "io/msprof/measured_tensors.h"

#include <algorithm>
#include <cctype>

#include "ir/format.h"

namespace kiln::msprof {

namespace {

std::string trimQuotes(std::string s) {
  while (!s.empty() && (s.front() == '"' || std::isspace(static_cast<unsigned char>(s.front())))) s.erase(0, 1);
  while (!s.empty() && (s.back() == '"' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

bool notRecorded(const std::string& s) { return s.empty() || s == "N/A" || s == "NA" || s == "-"; }

constexpr size_t kMaxTensors = 256, kMaxRank = 16;

}  // namespace

std::optional<std::vector<std::vector<int64_t>>> parseShapeList(const std::string& text) {
  const std::string s = trimQuotes(text);
  if (notRecorded(s)) return std::nullopt;
  std::vector<std::vector<int64_t>> shapes;
  for (const std::string& tensor : split(s, ';')) {
    std::vector<int64_t> extents;
    const std::string t = trimQuotes(tensor);
    if (!t.empty())
      for (const std::string& d : split(t, ',')) {
        const std::string e = trimQuotes(d);
        if (e.empty() || e.size() > 12 || !std::all_of(e.begin(), e.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return std::nullopt;  // -1, ranges, symbols: not a size
        extents.push_back(std::stoll(e));
      }
    if (extents.size() > kMaxRank) return std::nullopt;
    shapes.push_back(std::move(extents));
    if (shapes.size() > kMaxTensors) return std::nullopt;
  }
  return shapes;
}

std::optional<DType> parseDataType(std::string s) {
  s = trimQuotes(s);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (s.rfind("dt_", 0) == 0) s.erase(0, 3);
  if (s == "float32" || s == "fp32") s = "float";
  if (s == "bf16") s = "bfloat16";
  return dtypeFromName(s);
}

std::optional<std::vector<ValueType>> tensorTypes(const std::string& shapes, const std::string& types,
                                                  const std::string& formats, const char* side, std::string& why) {
  const auto extents = parseShapeList(shapes);
  if (!extents) {
    const std::string text = trimQuotes(shapes);
    why = notRecorded(text) ? std::string("no ") + side + " shapes recorded"
                            : std::string("unusable ") + side + " shapes '" + text + "' (not plain sizes)";
    return std::nullopt;
  }
  const std::string typeText = trimQuotes(types);
  const std::vector<std::string> typeList = notRecorded(typeText) ? std::vector<std::string>{} : split(typeText, ';');
  const std::vector<std::string> formatList = split(trimQuotes(formats), ';');
  std::vector<ValueType> out;
  for (size_t i = 0; i < extents->size(); ++i) {
    const std::string typeName = i < typeList.size() ? typeList[i] : typeList.empty() ? "" : typeList.front();
    const std::optional<DType> dt = parseDataType(typeName);
    if (!dt || dtypeSize(*dt) == 0) {
      why = std::string("no known element type for ") + side + " " + std::to_string(i) + " ('" + typeName + "')";
      return std::nullopt;
    }
    const Format f = i < formatList.size() ? formatFromName(trimQuotes(formatList[i])).value_or(Format::ND) : Format::ND;
    out.push_back(ValueType::tensor(*dt, Shape::ofStatic((*extents)[i]), f));
  }
  return out;
}

}  // namespace kiln::msprof
