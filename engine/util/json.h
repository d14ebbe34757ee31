#pragma once
// A small JSON value with a strict parser and a serializer: option sets, reports and `--json` outputs. The parser
// is for untrusted files: depth and size are bounded, errors carry line and column.
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
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

// Quotes and escapes a string as JSON.
std::string jsonQuote(const std::string& s);

}  // namespace kiln
