#pragma once
// A small JSON value with a strict parser and a serializer: option sets, reports and `--json` outputs. The parser
// is for untrusted files: depth and size are bounded, errors carry line and column.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln {

class Json {
 public:
  using Array = std::vector<Json>;
  // Keys keep insertion order for readable output; lookups are linear (objects here are small).
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int v) : v_(static_cast<int64_t>(v)) {}
  Json(int64_t v) : v_(v) {}
  Json(uint64_t v) : v_(static_cast<int64_t>(v)) {}
  Json(double v) : v_(v) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(Array a) : v_(std::move(a)) {}
  Json(Object o) : v_(std::move(o)) {}
  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  bool isNull() const { return v_.index() == 0; }
  bool isBool() const { return v_.index() == 1; }
  bool isInt() const { return v_.index() == 2; }
  bool isNumber() const { return v_.index() == 2 || v_.index() == 3; }
  bool isString() const { return v_.index() == 4; }
  bool isArray() const { return v_.index() == 5; }
  bool isObject() const { return v_.index() == 6; }

  bool asBool() const { return std::get<bool>(v_); }
  int64_t asInt() const { return isInt() ? std::get<int64_t>(v_) : static_cast<int64_t>(std::get<double>(v_)); }
  double asDouble() const { return isInt() ? static_cast<double>(std::get<int64_t>(v_)) : std::get<double>(v_); }
  const std::string& asString() const { return std::get<std::string>(v_); }
  const Array& asArray() const { return std::get<Array>(v_); }
  Array& asArray() { return std::get<Array>(v_); }
  const Object& asObject() const { return std::get<Object>(v_); }
  Object& asObject() { return std::get<Object>(v_); }

  // Object access: find returns null when absent; set replaces or appends.
  const Json* find(const std::string& key) const;
  Json& set(const std::string& key, Json value);
  Json& push(Json value);  // array append
  const char* typeName() const;

  std::string dump(int indent = -1) const;  // indent < 0: compact
  // Throws JsonError.
  static Json parse(const std::string& text, size_t maxDepth = 256);

  bool operator==(const Json& o) const { return v_ == o.v_; }

 private:
  void dumpTo(std::string& out, int indent, int level) const;
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> v_;
};

class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& msg, size_t line, size_t column)
      : std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + msg) {}
};

// A pull reader over JSON text, for documents too large to hold as one Json (a history's per-pass annotation
// changes): the caller walks the structure with next/expect and reads leaves; Json::parse is built on it. Errors
// throw JsonError with line and column. The text must outlive the reader.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text, size_t maxDepth = 256);
  Json readDocument();           // one value and nothing after it
  Json readValue();              // the next value, whatever it is
  std::string readString();      // the next value, which must be a string
  // The next string as a view into the text when it has no escapes; empty, and nothing consumed, when it has (the
  // caller reads it with readString then).
  std::optional<std::string_view> readPlainString();
  bool readNull();               // consumes a null if one comes next
  void skipValue();              // passes over the next value without building it (strings checked, not decoded)
  bool next(char c);             // consumes c if it comes next (after whitespace)
  void expect(char c);           // consumes c or throws
  void skipWs();
  bool atEnd() const { return pos_ >= s_.size(); }
  [[noreturn]] void fail(const std::string& msg) const;

 private:
  bool consume(std::string_view lit);
  Json parseValue(size_t depth);
  Json parseObject(size_t depth);
  Json parseArray(size_t depth);
  std::string parseString();
  uint32_t parseHex4();
  Json parseNumber();

  std::string_view s_;
  size_t maxDepth_;
  size_t pos_ = 0;
};

// Quotes and escapes a string as JSON.
std::string jsonQuote(const std::string& s);
void appendJsonQuoted(std::string& out, std::string_view s);  // the same, appended to `out`

}  // namespace kiln
