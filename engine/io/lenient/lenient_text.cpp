// Protobuf text format, read generously (lenient_proto.h). A hand-written tokenizer and recursive descent over the
// message's descriptor: protobuf's own TextFormat::Parser either fails on an unknown field or drops it
// (AllowUnknownField), and Kiln must keep it.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cstdint>

#include "io/lenient/lenient_fields.h"
#include "io/lenient/lenient_proto.h"
#include "util/load_error.h"
#include "util/text_encoding.h"

namespace kiln::lenient {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

class TextReader {
 public:
  TextReader(std::string_view text, const std::string& file, ParseReport& report)
      : s_(text), file_(file), report_(report) {}

  void readMessage(Message& msg) {
    readFields(msg, '\0', 0);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw LoadError(file_, "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what +
                               " (protobuf text format expected)");
  }

  void skipSpace() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  bool atEnd() {
    skipSpace();
    return pos_ >= s_.size();
  }
  char peek() {
    skipSpace();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  std::string_view identifier() {
    skipSpace();
    const size_t b = pos_;
    if (pos_ >= s_.size() || !isIdentStart(s_[pos_])) return {};
    while (pos_ < s_.size() && isIdentChar(s_[pos_])) ++pos_;
    return s_.substr(b, pos_ - b);
  }

  // A field name: an identifier, or an extension / Any type URL in brackets (kept whole, as an extra).
  std::string fieldName() {
    if (consume('[')) {
      const size_t b = pos_;
      while (pos_ < s_.size() && s_[pos_] != ']' && s_[pos_] != '\n') ++pos_;
      if (pos_ >= s_.size() || s_[pos_] != ']') fail("an extension name in '[' is not closed by ']'");
      ++pos_;
      return "[" + std::string(s_.substr(b, pos_ - 1 - b)) + "]";
    }
    const std::string_view id = identifier();
    if (id.empty()) fail("a field name was expected");
    return std::string(id);
  }

  // Fields until `close` ('}' or '>'), or the end of the text for the top level ('\0').
  void readFields(Message& msg, char close, int depth) {
    if (depth > kMaxDepth) fail("messages nested deeper than " + std::to_string(kMaxDepth) + " levels");
    const auto* desc = msg.GetDescriptor();
    for (;;) {
      while (consume(',') || consume(';')) {
      }
      if (close == '\0' ? atEnd() : consume(close)) return;
      if (atEnd()) fail(std::string("the text ends inside a message ('") + close + "' missing)");
      const size_t fieldStart = pos_;
      const std::string name = fieldName();
      const FieldDescriptor* f = name[0] == '[' ? nullptr : desc->FindFieldByName(name);
      if (!f && name[0] != '[') f = desc->FindFieldByLowercaseName(name);  // groups are named in lower case
      const bool colon = consume(':');
      if (peek() == '[') {  // a list: [v, v, ...]
        ++pos_;
        if (!consume(']')) {
          do {
            readValue(msg, f, name, depth);
          } while (consume(','));
          if (!consume(']')) fail("a list of values for '" + name + "' is not closed by ']'");
        }
      } else {
        const char c = peek();
        if (!colon && c != '{' && c != '<') {
          pos_ = fieldStart;
          fail("':' or '{' expected after field name '" + name + "'");
        }
        readValue(msg, f, name, depth);
      }
    }
  }

  void readValue(Message& msg, const FieldDescriptor* f, const std::string& name, int depth) {
    const size_t start = (skipSpace(), pos_);
    const char c = peek();
    if (c == '{' || c == '<') {
      ++pos_;
      const char close = c == '{' ? '}' : '>';
      if (f && f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        Message* child = f->is_repeated() ? msg.GetReflection()->AddMessage(&msg, f)
                                          : msg.GetReflection()->MutableMessage(&msg, f);
        readFields(*child, close, depth + 1);
      } else {
        skipMessage(close, depth + 1);
        addExtra(report_, msg, name, s_.substr(start, pos_ - start));
      }
      return;
    }
    Scalar v = scalar();
    if (f && f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE && setScalar(msg, *f, v, report_)) return;
    addExtra(report_, msg, name, s_.substr(start, pos_ - start));
  }

  void skipMessage(char close, int depth) {
    if (depth > kMaxDepth) fail("messages nested deeper than " + std::to_string(kMaxDepth) + " levels");
    for (;;) {
      while (consume(',') || consume(';')) {
      }
      if (consume(close)) return;
      if (atEnd()) fail(std::string("the text ends inside a message ('") + close + "' missing)");
      const std::string name = fieldName();
      const bool colon = consume(':');
      auto one = [&] {
        const char c = peek();
        if (c == '{' || c == '<') {
          ++pos_;
          skipMessage(c == '{' ? '}' : '>', depth + 1);
        } else {
          if (!colon) fail("':' or '{' expected after field name '" + name + "'");
          scalar();
        }
      };
      if (colon && peek() == '[') {
        ++pos_;
        if (!consume(']')) {
          do one();
          while (consume(','));
          if (!consume(']')) fail("a list of values for '" + name + "' is not closed by ']'");
        }
      } else {
        one();
      }
    }
  }

  Scalar scalar() {
    Scalar v;
    const char c = peek();
    if (c == '"' || c == '\'') {
      v.kind = Scalar::Kind::String;
      while (peek() == '"' || peek() == '\'') appendString(v.text);  // adjacent literals concatenate
      return v;
    }
    const size_t b = pos_;
    if (c == '-' || c == '+') ++pos_;
    skipSpace();  // "- inf" and "-  1" are allowed by protobuf's tokenizer
    if (pos_ < s_.size() && (isDigit(s_[pos_]) || (s_[pos_] == '.' && pos_ + 1 < s_.size() && isDigit(s_[pos_ + 1])))) {
      v.kind = Scalar::Kind::Number;
      const size_t numStart = pos_;
      while (pos_ < s_.size() && (isIdentChar(s_[pos_]) || s_[pos_] == '.' ||
                                  ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E') &&
                                   !(s_[numStart] == '0' && numStart + 1 < s_.size() && (s_[numStart + 1] == 'x' || s_[numStart + 1] == 'X')))))
        ++pos_;
      v.text = (c == '-' ? "-" : "") + std::string(s_.substr(numStart, pos_ - numStart));
      return v;
    }
    const std::string_view id = identifier();
    if (id.empty()) {
      pos_ = b;
      fail("a value was expected");
    }
    v.kind = c == '-' ? Scalar::Kind::Number : Scalar::Kind::Identifier;  // "-inf"
    v.text = (c == '-' ? "-" : "") + std::string(id);
    return v;
  }

  static int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // One quoted literal, unescaped (C escapes, octal, \x hex, \u and \U code points) onto `out`.
  void appendString(std::string& out) {
    const char quote = s_[pos_++];
    for (;;) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') fail("a string is not closed");
      const char c = s_[pos_++];
      if (c == quote) return;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("a string ends in a lone backslash");
      const char e = s_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'x':
        case 'X': {
          int v = 0, n = 0;
          while (n < 2 && pos_ < s_.size() && hexValue(s_[pos_]) >= 0) v = v * 16 + hexValue(s_[pos_++]), ++n;
          if (n == 0) fail("\\x without hex digits in a string");
          out += char(v);
          break;
        }
        case 'u':
        case 'U': {
          const int digits = e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int k = 0; k < digits; ++k) {
            if (pos_ >= s_.size() || hexValue(s_[pos_]) < 0) fail(std::string("\\") + e + " needs " + std::to_string(digits) + " hex digits");
            cp = cp * 16 + uint32_t(hexValue(s_[pos_++]));
          }
          appendUtf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0', n = 1;
            while (n < 3 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7') v = v * 8 + (s_[pos_++] - '0'), ++n;
            out += char(v & 0xFF);
          } else {
            out += e;  // \" \' \\ \? and anything else taken literally
          }
      }
    }
  }

  std::string_view s_;
  const std::string& file_;
  ParseReport& report_;
  size_t pos_ = 0;
};

}  // namespace

void parseText(std::string_view text, Message& msg, const std::string& displayName, ParseReport& report) {
  TextReader(text, displayName, report).readMessage(msg);
}

std::string summarize(const ParseReport& report) {
  std::string out;
  if (report.extraCount) {
    out += std::to_string(report.extraCount) + " field" + (report.extraCount == 1 ? "" : "s") +
           " Kiln's schema does not know kept as raw attributes (";
    for (size_t i = 0; i < report.extraKinds.size(); ++i) out += (i ? ", " : "") + report.extraKinds[i];
    out += report.extraKinds.size() == 8 ? ", ...)" : ")";
  }
  if (report.decodedStrings) {
    out += out.empty() ? "" : "; ";
    out += std::to_string(report.decodedStrings) + " string" + (report.decodedStrings == 1 ? " was" : "s were") +
           " not UTF-8 and were read as GBK (or escaped)";
  }
  return out;
}

}  // namespace kiln::lenient
