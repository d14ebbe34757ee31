#include "util/text_encoding.h"

#include <iconv.h>

#include <cerrno>
#include <cstdio>

namespace kiln {
namespace {

// Length of the valid UTF-8 sequence at s[i] (1..4), or 0 when none starts there (overlong forms, surrogates and
// code points above U+10FFFF are invalid, as in RFC 3629).
size_t utf8SequenceAt(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) len = 3, lo = 0xA0;
  else if (c == 0xED) len = 3, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF) len = 3;
  else if (c == 0xF0) len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else if (c == 0xF4) len = 4, hi = 0x8F;
  else return 0;
  if (i + len > s.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  return len;
}

bool decodeGb18030(std::string_view s, std::string& out) {
  iconv_t cd = iconv_open("UTF-8", "GB18030");
  if (cd == reinterpret_cast<iconv_t>(-1)) return false;
  out.assign(s.size() * 4 + 4, '\0');  // a GB18030 character of n bytes is at most 4 UTF-8 bytes, n >= 1
  char* in = const_cast<char*>(s.data());
  size_t inLeft = s.size();
  char* o = out.data();
  size_t outLeft = out.size();
  const size_t rc = iconv(cd, &in, &inLeft, &o, &outLeft);
  const bool ok = rc != static_cast<size_t>(-1) && inLeft == 0 && iconv(cd, nullptr, nullptr, &o, &outLeft) != static_cast<size_t>(-1);
  iconv_close(cd);
  if (!ok) return false;
  out.resize(out.size() - outLeft);
  return isValidUtf8(out);
}

}  // namespace

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8SequenceAt(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string displayableUtf8(std::string_view s, bool* decoded) {
  if (decoded) *decoded = false;
  if (isValidUtf8(s)) return std::string(s);
  if (decoded) *decoded = true;
  std::string out;
  if (decodeGb18030(s, out)) return out;
  out.clear();
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = utf8SequenceAt(s, i)) {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    char buf[5];
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(s[i]));
    out += buf;
    ++i;
  }
  return out;
}

}  // namespace kiln
