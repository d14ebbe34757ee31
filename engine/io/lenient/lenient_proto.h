#pragma once
// Generous readers of protobuf messages in the two text forms Ascend's toolchain writes: protobuf text format (GE's
// graph dumps, ge_proto_*.txt, and its ONNX-text dumps, ge_onnx_*.pbtxt) and JSON (`atc --mode=1`'s om -> JSON).
//
// Real files vary between releases: a newer GE puts fields where Kiln's schema (io/om/ge_ir.proto) has none, and a
// reader that fails on them fails on the next release's files. So, unlike protobuf's own parsers, these never fail
// on what the schema does not know:
//   - a field the message type does not declare (or an extension, "[pkg.ext]") is kept as an ExtraField of the
//     message it appeared in — its name and its value as compact text — for the importer to show as a raw
//     attribute;
//   - so is a value that does not fit the declared field (a string where a number is declared, an enum name the
//     schema lacks, an integer out of range, a message where a scalar is declared);
//   - `string` fields that are not UTF-8 are decoded (util/text_encoding.h: GB18030, else escaped); `bytes` stay raw.
// What they do refuse, with LoadError naming the file, line and column: text that is not protobuf text format (or
// JSON) at all, nesting deeper than kMaxDepth, JSON whose shape contradicts the schema where no reading is possible
// (an array where a message is declared).
// GE's JSON writes maps as lists of {"key": ..., "value": ...}; both that and JSON objects are read as maps.
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace kiln {
class Json;
}  // namespace kiln

namespace kiln::lenient {

inline constexpr int kMaxDepth = 200;           // message nesting (GE's graphs nest inside attributes)
inline constexpr size_t kMaxExtraText = 512;    // an extra field's value text is cut here ("…" marks the cut)

struct ExtraField {
  std::string name;  // as the file spells it (extensions keep their brackets)
  std::string text;  // the value as compact text: scalars as written, messages as "{a: 1 b: \"x\"}"
};

struct ParseReport {
  // Extra fields by the message they appeared in (pointers into the message tree that was filled).
  std::unordered_map<const google::protobuf::Message*, std::vector<ExtraField>> extras;
  size_t extraCount = 0;
  std::vector<std::string> extraKinds;  // distinct "Type.field" of the extras, at most 8, for a warning
  size_t decodedStrings = 0;            // `string` values that were not UTF-8
};

// Fills `msg` (merging into what it holds). Throws LoadError(displayName, ...) on syntax errors.
void parseText(std::string_view text, google::protobuf::Message& msg, const std::string& displayName,
               ParseReport& report);
void parseJson(const Json& json, google::protobuf::Message& msg, const std::string& displayName, ParseReport& report);

// Where each extra field sits: the nearest enclosing message whose type is `anchorType` (a full name, e.g.
// "ge.proto.OpDef"; null when none encloses it) and the path from there, e.g. "output_desc[0].cmps_size" or
// "attr[_op_info].foo" (map entries by key). Call it before anything reads a map field of `root` through its generated
// accessors: that copies the map's values, and the extras' owners are the copies' originals.
struct LocatedExtra {
  const google::protobuf::Message* anchor = nullptr;
  std::string path;
  const ExtraField* field = nullptr;
};
std::vector<LocatedExtra> locateExtras(const google::protobuf::Message& root, const ParseReport& report,
                                       const std::string& anchorType);

// One warning line summarising a report's extras and decoded strings, or "" when there are none.
std::string summarize(const ParseReport& report);

}  // namespace kiln::lenient
