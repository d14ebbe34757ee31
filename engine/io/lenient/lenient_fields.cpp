#include "io/lenient/lenient_fields.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "util/text_encoding.h"

namespace kiln::lenient {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Text-format integers: decimal, 0x hex or 0-prefixed octal, with an optional sign.
bool parseInteger(std::string_view t, bool& negative, uint64_t& magnitude) {
  negative = !t.empty() && t[0] == '-';
  if (negative || (!t.empty() && t[0] == '+')) t.remove_prefix(1);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  } else if (t.size() > 1 && t[0] == '0') {
    base = 8;
    t.remove_prefix(1);
  }
  if (t.empty()) return false;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), magnitude, base);
  return ec == std::errc() && p == t.data() + t.size();
}

bool parseSigned(std::string_view t, int64_t lo, int64_t hi, int64_t& out) {
  bool neg = false;
  uint64_t mag = 0;
  if (!parseInteger(t, neg, mag)) return false;
  if (neg) {
    if (mag > uint64_t(std::numeric_limits<int64_t>::max()) + 1) return false;
    out = mag == uint64_t(std::numeric_limits<int64_t>::max()) + 1 ? std::numeric_limits<int64_t>::min() : -int64_t(mag);
  } else {
    if (mag > uint64_t(std::numeric_limits<int64_t>::max())) return false;
    out = int64_t(mag);
  }
  return out >= lo && out <= hi;
}

bool parseUnsigned(std::string_view t, uint64_t hi, uint64_t& out) {
  bool neg = false;
  if (!parseInteger(t, neg, out)) return false;
  return (!neg || out == 0) && out <= hi;
}

bool parseDouble(std::string_view t, double& out) {
  std::string s(t);
  if (!s.empty() && (s.back() == 'f' || s.back() == 'F') && s.find_first_of("xX") == std::string::npos) s.pop_back();
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const bool neg = !lower.empty() && lower[0] == '-';
  const std::string_view word = neg ? std::string_view(lower).substr(1) : std::string_view(lower);
  if (word == "inf" || word == "infinity") {
    out = neg ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (word == "nan") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno != EINVAL;
}

bool parseBool(const Scalar& v, bool& out) {
  const std::string& t = v.text;
  if (t == "true" || t == "True" || t == "t" || t == "1") return out = true, true;
  if (t == "false" || t == "False" || t == "f" || t == "0") return out = false, true;
  return false;
}

}  // namespace

std::string compactText(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= kMaxExtraText) {
      out += "…";
      break;
    }
  }
  return displayableUtf8(out);
}

void addExtra(ParseReport& report, const Message& owner, std::string name, std::string_view text) {
  const std::string kind = owner.GetDescriptor()->name() + "." + name;
  if (report.extraKinds.size() < 8 && std::find(report.extraKinds.begin(), report.extraKinds.end(), kind) == report.extraKinds.end())
    report.extraKinds.push_back(kind);
  ++report.extraCount;
  report.extras[&owner].push_back({displayableUtf8(name), compactText(text)});
}

bool setScalar(Message& msg, const FieldDescriptor& f, const Scalar& v, ParseReport& report) {
  const Reflection& r = *msg.GetReflection();
  const bool rep = f.is_repeated();
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64: {
      const bool i32 = f.cpp_type() == FieldDescriptor::CPPTYPE_INT32;
      int64_t x = 0;
      if (v.kind == Scalar::Kind::Identifier ||
          !parseSigned(v.text, i32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min(),
                       i32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max(), x))
        return false;
      if (i32) rep ? r.AddInt32(&msg, &f, int32_t(x)) : r.SetInt32(&msg, &f, int32_t(x));
      else rep ? r.AddInt64(&msg, &f, x) : r.SetInt64(&msg, &f, x);
      return true;
    }
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      const bool u32 = f.cpp_type() == FieldDescriptor::CPPTYPE_UINT32;
      uint64_t x = 0;
      if (v.kind == Scalar::Kind::Identifier ||
          !parseUnsigned(v.text, u32 ? std::numeric_limits<uint32_t>::max() : std::numeric_limits<uint64_t>::max(), x))
        return false;
      if (u32) rep ? r.AddUInt32(&msg, &f, uint32_t(x)) : r.SetUInt32(&msg, &f, uint32_t(x));
      else rep ? r.AddUInt64(&msg, &f, x) : r.SetUInt64(&msg, &f, x);
      return true;
    }
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double x = 0;
      if (!parseDouble(v.text, x)) return false;
      if (f.cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
        const float fx = std::isfinite(x) && std::fabs(x) > double(std::numeric_limits<float>::max())
                             ? (x < 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity())
                             : float(x);
        rep ? r.AddFloat(&msg, &f, fx) : r.SetFloat(&msg, &f, fx);
      } else {
        rep ? r.AddDouble(&msg, &f, x) : r.SetDouble(&msg, &f, x);
      }
      return true;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool b = false;
      if (!parseBool(v, b)) return false;
      rep ? r.AddBool(&msg, &f, b) : r.SetBool(&msg, &f, b);
      return true;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      int64_t x = 0;
      if (v.kind == Scalar::Kind::Number || v.kind == Scalar::Kind::String) {
        if (const auto* known = f.enum_type()->FindValueByName(v.text)) {
          x = known->number();
        } else if (!parseSigned(v.text, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), x)) {
          return false;
        } else if (!f.enum_type()->FindValueByNumber(int(x)) && f.enum_type()->file()->syntax() == google::protobuf::FileDescriptor::SYNTAX_PROTO2) {
          return false;
        }
      } else {
        const auto* known = f.enum_type()->FindValueByName(v.text);
        if (!known) return false;
        x = known->number();
      }
      rep ? r.AddEnumValue(&msg, &f, int(x)) : r.SetEnumValue(&msg, &f, int(x));
      return true;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      if (v.kind != Scalar::Kind::String) return false;
      std::string s = v.text;
      if (f.type() == FieldDescriptor::TYPE_STRING) {
        bool decoded = false;
        s = displayableUtf8(v.text, &decoded);
        if (decoded) ++report.decodedStrings;
      }
      rep ? r.AddString(&msg, &f, std::move(s)) : r.SetString(&msg, &f, std::move(s));
      return true;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: return false;
  }
  return false;
}

}  // namespace kiln::lenient

namespace kiln::lenient {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The map key of an entry message, as text.
std::string mapKeyText(const Message& entry) {
  const FieldDescriptor* k = entry.GetDescriptor()->map_key();
  const auto* r = entry.GetReflection();
  switch (k->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: return displayableUtf8(r->GetString(entry, k));
    case FieldDescriptor::CPPTYPE_INT32: return std::to_string(r->GetInt32(entry, k));
    case FieldDescriptor::CPPTYPE_INT64: return std::to_string(r->GetInt64(entry, k));
    case FieldDescriptor::CPPTYPE_UINT32: return std::to_string(r->GetUInt32(entry, k));
    case FieldDescriptor::CPPTYPE_UINT64: return std::to_string(r->GetUInt64(entry, k));
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(entry, k) ? "true" : "false";
    default: return "?";
  }
}

struct Locator {
  const ParseReport& report;
  const std::string& anchorType;
  std::vector<LocatedExtra> out;
  size_t left;  // extras not yet found: the walk stops when none are

  void walk(const Message& m, const Message* anchor, const std::string& path, int depth) {
    if (!left || depth > kMaxDepth) return;
    if (m.GetDescriptor()->full_name() == anchorType) {
      anchor = &m;
      return walkFields(m, anchor, "", depth);
    }
    walkFields(m, anchor, path, depth);
  }

  void walkFields(const Message& m, const Message* anchor, const std::string& path, int depth) {
    if (auto it = report.extras.find(&m); it != report.extras.end())
      for (const ExtraField& f : it->second) {
        out.push_back({anchor, path.empty() ? f.name : path + "." + f.name, &f});
        --left;
      }
    const auto* r = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    r->ListFields(m, &fields);
    for (const FieldDescriptor* f : fields) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
      const std::string base = path.empty() ? f->name() : path + "." + f->name();
      if (!f->is_repeated()) {
        walk(r->GetMessage(m, f), anchor, base, depth + 1);
        continue;
      }
      const int n = r->FieldSize(m, f);
      for (int i = 0; i < n && left; ++i) {
        const Message& item = r->GetRepeatedMessage(m, f, i);
        if (!f->is_map()) {
          walk(item, anchor, base + "[" + std::to_string(i) + "]", depth + 1);
          continue;
        }
        const std::string at = base + "[" + mapKeyText(item) + "]";
        if (auto it = report.extras.find(&item); it != report.extras.end())
          for (const ExtraField& x : it->second) {
            out.push_back({anchor, at + "." + x.name, &x});
            --left;
          }
        const FieldDescriptor* v = item.GetDescriptor()->map_value();
        if (v->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && item.GetReflection()->HasField(item, v))
          walk(item.GetReflection()->GetMessage(item, v), anchor, at, depth + 1);
      }
    }
  }
};

}  // namespace

std::vector<LocatedExtra> locateExtras(const Message& root, const ParseReport& report, const std::string& anchorType) {
  Locator l{report, anchorType, {}, report.extraCount};
  l.walk(root, nullptr, "", 0);
  return std::move(l.out);
}

}  // namespace kiln::lenient
