#include "util/json.h"

#include "util/text_encoding.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kiln {

const Json* Json::find(const std::string& key) const {
  if (!isObject()) return nullptr;
  for (const auto& [k, v] : asObject())
    if (k == key) return &v;
  return nullptr;
}

Json& Json::set(const std::string& key, Json value) {
  if (!isObject()) v_ = Object{};
  for (auto& [k, v] : asObject())
    if (k == key) return v = std::move(value);
  asObject().emplace_back(key, std::move(value));
  return asObject().back().second;
}

Json& Json::push(Json value) {
  if (!isArray()) v_ = Array{};
  asArray().push_back(std::move(value));
  return asArray().back();
}

const char* Json::typeName() const {
  switch (v_.index()) {
    case 0: return "null";
    case 1: return "boolean";
    case 2: return "integer";
    case 3: return "number";
    case 4: return "string";
    case 5: return "array";
    default: return "object";
  }
}

std::string jsonQuote(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  appendJsonQuoted(out, s);
  return out;
}

void appendJsonQuoted(std::string& out, std::string_view s) {
  // Runs of characters that need no escape are appended whole: the history writer quotes every annotation and
  // attribute string of a run, and appending them a character at a time was a fifth of its instructions.
  out += '"';
  size_t plain = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      }
    }
  }
  out.append(s.data() + plain, s.size() - plain);
  out += '"';
}

void Json::dumpTo(std::string& out, int indent, int level) const {
  auto newline = [&](int lvl) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * lvl), ' ');
  };
  switch (v_.index()) {
    case 0: out += "null"; break;
    case 1: out += asBool() ? "true" : "false"; break;
    case 2: out += std::to_string(std::get<int64_t>(v_)); break;
    case 3: {
      const double d = std::get<double>(v_);
      if (!std::isfinite(d)) {
        out += "null";  // JSON has no NaN/Inf
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", d);
        // Prefer the shortest representation that round-trips.
        for (int p = 6; p <= 17; ++p) {
          char tmp[32];
          std::snprintf(tmp, sizeof tmp, "%.*g", p, d);
          if (std::strtod(tmp, nullptr) == d) {
            std::memcpy(buf, tmp, sizeof tmp);
            break;
          }
        }
        out += buf;
      }
      break;
    }
    case 4: appendJsonQuoted(out, asString()); break;
    case 5: {
      const auto& a = asArray();
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out += ',';
        newline(level + 1);
        a[i].dumpTo(out, indent, level + 1);
      }
      if (!a.empty()) newline(level);
      out += ']';
      break;
    }
    default: {
      const auto& o = asObject();
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out += ',';
        newline(level + 1);
        appendJsonQuoted(out, o[i].first);
        out += indent < 0 ? ":" : ": ";
        o[i].second.dumpTo(out, indent, level + 1);
      }
      if (!o.empty()) newline(level);
      out += '}';
    }
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  dumpTo(out, indent, 0);
  return out;
}

JsonReader::JsonReader(std::string_view text, size_t maxDepth) : s_(text), maxDepth_(maxDepth) {}

Json JsonReader::readDocument() {
  skipWs();
  Json v = readValue();
  skipWs();
  if (pos_ != s_.size()) fail("unexpected text after the JSON value");
  return v;
}

void JsonReader::fail(const std::string& msg) const {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
    if (s_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  throw JsonError(msg, line, col);
}

void JsonReader::skipWs() {
  while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
}

bool JsonReader::consume(std::string_view lit) {
  if (s_.substr(pos_, lit.size()) == lit) {
    pos_ += lit.size();
    return true;
  }
  return false;
}

bool JsonReader::next(char c) {
  skipWs();
  if (pos_ < s_.size() && s_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

void JsonReader::expect(char c) {
  if (!next(c)) fail(std::string("expected '") + c + "'");
}

bool JsonReader::readNull() {
  skipWs();
  return consume("null");
}

std::string JsonReader::readString() {
  skipWs();
  if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string");
  return parseString();
}

void JsonReader::skipValue() {
  skipWs();
  if (pos_ < s_.size() && s_[pos_] != '{' && s_[pos_] != '[') {
    parseValue(0);  // a scalar: cheap to read as it is
    return;
  }
  size_t depth = 0;
  do {
    if (pos_ >= s_.size()) fail("unexpected end of input");
    const char c = s_[pos_];
    if (c == '"') {
      ++pos_;
      for (;;) {
        if (pos_ >= s_.size()) fail("unterminated string");
        const char x = s_[pos_++];
        if (x == '"') break;
        if (x == '\\') ++pos_;
      }
    } else if (c == '{' || c == '[') {
      if (++depth > maxDepth_) fail("nesting deeper than " + std::to_string(maxDepth_));
      ++pos_;
    } else if (c == '}' || c == ']') {
      if (depth == 0) fail(std::string("unexpected '") + c + "'");
      --depth;
      ++pos_;
    } else {
      ++pos_;  // separators, whitespace and the characters of numbers and literals
    }
  } while (depth > 0);
}

std::optional<std::string_view> JsonReader::readPlainString() {
  skipWs();
  if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string");
  for (size_t i = pos_ + 1; i < s_.size(); ++i) {
    const char c = s_[i];
    if (c == '"') {
      const std::string_view out = s_.substr(pos_ + 1, i - pos_ - 1);
      pos_ = i + 1;
      return out;
    }
    if (c == '\\') return std::nullopt;
    if (static_cast<unsigned char>(c) < 0x20) {
      pos_ = i;
      fail("control character in string");
    }
  }
  pos_ = s_.size();
  fail("unterminated string");
}

Json JsonReader::readValue() {
  skipWs();
  return parseValue(0);
}

Json JsonReader::parseValue(size_t depth) {
  if (depth > maxDepth_) fail("nesting deeper than " + std::to_string(maxDepth_));
  if (pos_ >= s_.size()) fail("unexpected end of input");
  const char c = s_[pos_];
  if (c == '{') return parseObject(depth);
  if (c == '[') return parseArray(depth);
  if (c == '"') return Json(parseString());
  if (consume("true")) return Json(true);
  if (consume("false")) return Json(false);
  if (consume("null")) return Json();
  if (c == '-' || (c >= '0' && c <= '9')) return parseNumber();
  fail(std::string("unexpected character '") + c + "'");
}

namespace {

// The members of an object or the elements of an array, after its opening bracket: `one` reads each, the commas
// between them and the closing bracket are consumed here.
template <typename ReadOne>
void readList(JsonReader& r, char close, ReadOne&& one) {
  if (r.next(close)) return;
  do one();
  while (r.next(','));
  if (!r.next(close)) r.fail(std::string("expected ',' or '") + close + "'");
}

}  // namespace

Json JsonReader::parseObject(size_t depth) {
  ++pos_;
  Json::Object o;
  readList(*this, '}', [&] {
    skipWs();
    if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
    std::string key = parseString();
    for (const auto& kv : o)
      if (kv.first == key) fail("duplicate key \"" + key + "\"");
    if (!next(':')) fail("expected ':'");
    skipWs();
    o.emplace_back(std::move(key), parseValue(depth + 1));
  });
  return Json(std::move(o));
}

Json JsonReader::parseArray(size_t depth) {
  ++pos_;
  Json::Array a;
  readList(*this, ']', [&] {
    skipWs();
    a.push_back(parseValue(depth + 1));
  });
  return Json(std::move(a));
}

uint32_t JsonReader::parseHex4() {
  if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const char h = s_[pos_++];
    v <<= 4;
    if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
    else fail("bad \\u escape");
  }
  return v;
}
std::string JsonReader::parseString() {
  ++pos_;  // opening quote
  std::string out;
  while (pos_ < s_.size()) {
    const char c = s_[pos_++];
    if (c == '"') return out;
    if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= s_.size()) break;
    const char e = s_[pos_++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = parseHex4();
        if (cp >= 0xd800 && cp < 0xdc00 && consume("\\u")) {
          const uint32_t lo = parseHex4();
          if (lo >= 0xdc00 && lo < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        kiln::appendUtf8(out, cp);
        break;
      }
      default: fail(std::string("bad escape '\\") + e + "'");
    }
  }
  fail("unterminated string");
}
Json JsonReader::parseNumber() {
  const size_t start = pos_;
  if (s_[pos_] == '-') ++pos_;
  bool isFloat = false;
  while (pos_ < s_.size()) {
    const char c = s_[pos_];
    if (c >= '0' && c <= '9') {
      ++pos_;
    } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
      isFloat = true;
      ++pos_;
    } else {
      break;
    }
  }
  const std::string text(s_.substr(start, pos_ - start));
  if (text == "-" || text.empty()) fail("bad number");
  char* end = nullptr;
  if (!isFloat) {
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end && *end == '\0') return Json(static_cast<int64_t>(v));
  }
  const double d = std::strtod(text.c_str(), &end);
  if (!end || *end != '\0') fail("bad number '" + text + "'");
  return Json(d);
}


Json Json::parse(const std::string& text, size_t maxDepth) { return JsonReader(text, maxDepth).readDocument(); }

}  // namespace kiln
