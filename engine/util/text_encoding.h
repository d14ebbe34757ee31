#pragma once
// Text from files Kiln does not control is not always UTF-8: GE writes its graph dumps in the machine's locale, and
// the tools that parse them read them as GBK. Everything Kiln shows or stores as text (the inspector, JSON reports,
// the history) must be valid UTF-8, so foreign strings pass through here once, where they are read.
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

bool isValidUtf8(std::string_view s);

// Appends code point `cp` in UTF-8; a surrogate or a value above U+10FFFF becomes U+FFFD (the replacement character).
void appendUtf8(std::string& out, uint32_t cp);

// `s` itself when it is valid UTF-8; otherwise its decoding as GB18030 (a superset of GBK) when every byte decodes;
// otherwise `s` with each byte that is not part of a valid UTF-8 sequence written as "\xNN". Always valid UTF-8.
// `decoded` (when given) is set when the text was not UTF-8 to begin with.
std::string displayableUtf8(std::string_view s, bool* decoded = nullptr);

}  // namespace kiln
