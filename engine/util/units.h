#pragma once
// Numbers as people read them: thousands separators and binary units (1,234 nodes; 12.4 MiB; 18.2 µs).
#include <cstdint>
#include <string>

namespace kiln {

std::string withThousands(int64_t v);         // 1234567 -> "1,234,567"
std::string formatBytes(double bytes);        // 12998.0 -> "12.7 KiB"
std::string formatDuration(double seconds);   // 1.82e-5 -> "18.2 µs"
// Columns a UTF-8 string occupies in a terminal ("1×3" is 3, not 4): for aligning tables.
size_t displayWidth(const std::string& s);
// Pads to `width` display columns, on the right (left-aligned) or on the left (right-aligned).
std::string padRight(const std::string& s, size_t width);
std::string padLeft(const std::string& s, size_t width);

}  // namespace kiln
