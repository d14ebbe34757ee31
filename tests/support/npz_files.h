#pragma once
// NumPy .npy / .npz bytes as numpy.savez writes them (stored or deflated members): shared by test_npz_reader and
// the malformed-input corpus.
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::test {

inline std::string le(uint32_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += char((v >> (8 * i)) & 0xff);
  return s;
}

inline std::string npy(const std::string& descr, const std::string& shape, const std::string& data,
                const std::string& order = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  return std::string("\x93NUMPY\x01\x00", 8) + le(uint32_t(header.size()), 2) + header + data;
}

struct Member {
  std::string name, bytes;
  bool deflate = false;
};

// A zip with local headers, a central directory and its end record, as numpy.savez writes it.
inline std::string zipOf(const std::vector<Member>& members) {
  std::string out, cd;
  for (const Member& m : members) {
    std::string data = m.bytes;
    if (m.deflate) {
      z_stream zs{};
      deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
      std::string buf(m.bytes.size() + 64, '\0');
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(m.bytes.data()));
      zs.avail_in = uInt(m.bytes.size());
      zs.next_out = reinterpret_cast<Bytef*>(buf.data());
      zs.avail_out = uInt(buf.size());
      deflate(&zs, Z_FINISH);
      buf.resize(zs.total_out);
      deflateEnd(&zs);
      data = buf;
    }
    const uint32_t crc = uint32_t(crc32(0, reinterpret_cast<const Bytef*>(m.bytes.data()), uInt(m.bytes.size())));
    const std::string sizes = le(crc, 4) + le(uint32_t(data.size()), 4) + le(uint32_t(m.bytes.size()), 4);
    const uint32_t method = m.deflate ? 8 : 0;
    cd += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(method, 2) + le(0, 4) + sizes +
          le(uint32_t(m.name.size()), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
          le(uint32_t(out.size()), 4) + m.name;
    out += le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(method, 2) + le(0, 4) + sizes + le(uint32_t(m.name.size()), 2) +
           le(0, 2) + m.name + data;
  }
  const uint32_t cdOffset = uint32_t(out.size());
  out += cd + le(0x06054b50, 4) + le(0, 4) + le(uint32_t(members.size()), 2) + le(uint32_t(members.size()), 2) +
         le(uint32_t(cd.size()), 4) + le(cdOffset, 4) + le(0, 2);
  return out;
}


inline std::string floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

}  // namespace kiln::test
