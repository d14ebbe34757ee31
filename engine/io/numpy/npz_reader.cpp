#include "io/numpy/npz_reader.h"

#include <zlib.h>

#include <cstring>
#include <fstream>

#include "util/load_error.h"
#include "ir/shape.h"

namespace kiln {

namespace {

uint32_t le(const std::string& b, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(b[at + size_t(i)]);
  return v;
}

// A NumPy descr ("<f4", "|b1", "<i8"...) as a Kiln element type; Undefined for what Kiln does not read.
DType dtypeOfDescr(const std::string& d) {
  if (d.size() != 3 || (d[0] != '<' && d[0] != '|')) return DType::Undefined;
  const std::string k = d.substr(1);
  if (k == "f2") return DType::Float16;
  if (k == "f4") return DType::Float;
  if (k == "f8") return DType::Double;
  if (k == "i1") return DType::Int8;
  if (k == "i2") return DType::Int16;
  if (k == "i4") return DType::Int32;
  if (k == "i8") return DType::Int64;
  if (k == "u1") return DType::UInt8;
  if (k == "u2") return DType::UInt16;
  if (k == "u4") return DType::UInt32;
  if (k == "u8") return DType::UInt64;
  if (k == "b1") return DType::Bool;
  return DType::Undefined;
}

// The value of `key` in the header's Python dict literal: text up to the next ',' or '}' at depth 0.
std::string dictValue(const std::string& header, const std::string& key, const std::string& file,
                      const std::string& what) {
  const size_t at = header.find("'" + key + "':");
  if (at == std::string::npos) throw LoadError(file, what + ": the .npy header has no '" + key + "'");
  size_t i = at + key.size() + 3, depth = 0;
  std::string v;
  for (; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '(') ++depth;
    if (c == ')' && depth) --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    v += c;
  }
  const size_t b = v.find_first_not_of(' '), e = v.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
}

}  // namespace

Tensor parseNpy(const std::string& b, const std::string& file, const std::string& what) {
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) throw LoadError(file, what + " is not a .npy array");
  const int major = static_cast<uint8_t>(b[6]);
  if (major < 1 || major > 3) throw LoadError(file, what + ": .npy version " + std::to_string(major) + " is unknown");
  const size_t prefix = major == 1 ? 10 : 12;
  if (b.size() < prefix) throw LoadError(file, what + " is truncated");
  const size_t headerLen = major == 1 ? le(b, 8, 2) : le(b, 8, 4);
  if (headerLen > b.size() - prefix) throw LoadError(file, what + ": the .npy header runs past the data");
  const std::string header = b.substr(prefix, headerLen);
  std::string descr = dictValue(header, "descr", file, what);
  if (descr.size() >= 2 && descr.front() == '\'' && descr.back() == '\'') descr = descr.substr(1, descr.size() - 2);
  const DType type = dtypeOfDescr(descr);
  if (type == DType::Undefined) throw LoadError(file, what + ": element type '" + descr + "' is not supported");
  if (dictValue(header, "fortran_order", file, what) != "False")
    throw LoadError(file, what + ": Fortran-order arrays are not supported");
  const std::string shape = dictValue(header, "shape", file, what);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape.size();) {
    if (shape[i] >= '0' && shape[i] <= '9') {
      size_t j = i;
      int64_t v = 0;
      for (; j < shape.size() && shape[j] >= '0' && shape[j] <= '9'; ++j) {
        if (v > (INT64_MAX - 9) / 10) throw LoadError(file, what + ": a dimension overflows");
        v = v * 10 + (shape[j] - '0');
      }
      dims.push_back(v);
      i = j;
    } else if (shape[i] == '-') {
      throw LoadError(file, what + ": a negative dimension");
    } else {
      ++i;
    }
  }
  if (dims.size() > 64) throw LoadError(file, what + ": rank " + std::to_string(dims.size()) + " is too high");
  const auto count = checkedProduct(dims);
  const auto bytes = count ? checkedMul(*count, dtypeSize(type)) : std::nullopt;
  const size_t data = prefix + headerLen;
  if (!bytes || static_cast<uint64_t>(*bytes) != b.size() - data)
    throw LoadError(file, what + ": shape " + Shape::ofStatic(dims).toString() + " does not match the " +
                              std::to_string(b.size() - data) + " data bytes");
  return Tensor::fromBytes(type, dims, b.substr(data));
}

std::vector<std::pair<std::string, Tensor>> readNpz(const std::string& path, int64_t maxBytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path, "cannot open the file");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<int64_t>(in.tellg());
  if (size < 22) throw LoadError(path, "not a .npz (zip) archive: too short");
  if (size > maxBytes) throw LoadError(path, "the archive is larger than the " + std::to_string(maxBytes) + "-byte limit");
  std::string zip(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(zip.data(), size);
  // The end-of-central-directory record: within the last 22 + 65535 bytes (its comment).
  size_t eocd = std::string::npos;
  for (size_t at = zip.size() - 22;; --at) {
    if (le(zip, at, 4) == 0x06054b50) {
      eocd = at;
      break;
    }
    if (at == 0 || zip.size() - at > 22 + 65535) break;
  }
  if (eocd == std::string::npos) throw LoadError(path, "not a .npz (zip) archive: no central directory");
  const uint32_t entries = le(zip, eocd + 10, 2), cdSize = le(zip, eocd + 12, 4), cdOffset = le(zip, eocd + 16, 4);
  if (cdOffset == 0xffffffff || entries == 0xffff) throw LoadError(path, "ZIP64 archives are not supported");
  if (uint64_t(cdOffset) + cdSize > eocd) throw LoadError(path, "the central directory lies outside the file");
  std::vector<std::pair<std::string, Tensor>> out;
  int64_t total = 0;
  size_t at = cdOffset;
  for (uint32_t e = 0; e < entries; ++e) {
    if (at + 46 > eocd || le(zip, at, 4) != 0x02014b50) throw LoadError(path, "a central directory entry is corrupt");
    const uint32_t flags = le(zip, at + 8, 2), method = le(zip, at + 10, 2);
    const uint32_t packed = le(zip, at + 20, 4), unpacked = le(zip, at + 24, 4);
    const uint32_t nameLen = le(zip, at + 28, 2), extraLen = le(zip, at + 30, 2), commentLen = le(zip, at + 32, 2);
    const uint32_t local = le(zip, at + 42, 4);
    if (at + 46 + nameLen > eocd) throw LoadError(path, "a central directory entry is corrupt");
    std::string name = zip.substr(at + 46, nameLen);
    at += 46 + size_t(nameLen) + extraLen + commentLen;
    if (flags & 1) throw LoadError(path, name + " is encrypted");
    if (packed == 0xffffffff || unpacked == 0xffffffff) throw LoadError(path, "ZIP64 members are not supported");
    total += unpacked;
    if (total > maxBytes) throw LoadError(path, "the arrays exceed the " + std::to_string(maxBytes) + "-byte limit");
    if (uint64_t(local) + 30 > zip.size() || le(zip, local, 4) != 0x04034b50)
      throw LoadError(path, name + ": its local header lies outside the file");
    const uint64_t data = uint64_t(local) + 30 + le(zip, local + 26, 2) + le(zip, local + 28, 2);
    if (data + packed > zip.size()) throw LoadError(path, name + ": its data runs past the end of the file");
    // Sizes are checked before the buffer is made: a 500-byte member must not cost a gigabyte's allocation.
    // Deflate never shrinks data more than 1032:1.
    if (method == 0 && packed != unpacked) throw LoadError(path, name + ": stored sizes disagree");
    if (method == 8 && uint64_t(unpacked) > uint64_t(packed) * 1032 + 1024)
      throw LoadError(path, name + ": claims " + std::to_string(unpacked) + " bytes from " + std::to_string(packed) +
                                " deflated bytes, more than deflate can give");
    if (method != 0 && method != 8)
      throw LoadError(path, name + ": compression method " + std::to_string(method) + " is not supported");
    std::string raw(unpacked, '\0');
    if (method == 0) {
      std::memcpy(raw.data(), zip.data() + data, unpacked);
    } else if (method == 8) {
      z_stream zs{};
      if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw LoadError(path, "zlib could not start");
      zs.next_in = reinterpret_cast<Bytef*>(zip.data() + data);
      zs.avail_in = packed;
      zs.next_out = reinterpret_cast<Bytef*>(raw.data());
      zs.avail_out = unpacked;
      const int rc = inflate(&zs, Z_FINISH);
      const bool whole = rc == Z_STREAM_END && zs.total_out == unpacked;
      inflateEnd(&zs);
      if (!whole) throw LoadError(path, name + ": the deflated data is corrupt");
    }
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    Tensor t = parseNpy(raw, path, name);
    out.emplace_back(std::move(name), std::move(t));
  }
  return out;
}

}  // namespace kiln
