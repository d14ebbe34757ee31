#pragma once
// Text and attribute values for XML and HTML (the JUnit report, the HTML report and its inline SVG). Model files
// choose node and tensor names, so every string from them goes through here. Control characters XML 1.0 cannot
// carry become U+FFFD; bytes that are not UTF-8 are left to the viewer (browsers and JUnit readers replace them).
#include <string>

namespace kiln {

std::string xmlEscape(const std::string& s);

}  // namespace kiln
