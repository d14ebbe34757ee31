#pragma once
// Numbers as people read them: thousands separators and binary units (1,234 nodes; 12.4 MiB; 18.2 µs).
#include <cstdint>
#include <string>

namespace kiln {

std::string withThousands(int64_t v);         // 1234567 -> "1,234,567"
std::string formatBytes(double bytes);        // 12998.0 -> "12.7 KiB"
std::string formatDuration(double seconds);   // 1.82e-5 -> "18.2 µs"

}  // namespace kiln
