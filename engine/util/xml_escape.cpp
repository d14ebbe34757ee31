#include "util/xml_escape.h"

namespace kiln {

std::string xmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') out += "\xEF\xBF\xBD";
        else out += ch;
    }
  }
  return out;
}

}  // namespace kiln
