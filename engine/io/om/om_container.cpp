#include "io/om/om_container.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace kiln::om {
namespace {

// Little-endian reads at a checked position; every read names what it wanted in its error.
class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> bytes, const std::string& file, std::string where)
      : b_(bytes), file_(file), where_(std::move(where)) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return b_.size() - pos_; }
  void seek(uint64_t p) {
    if (p > b_.size()) fail("offset " + std::to_string(p) + " is past the end (" + std::to_string(b_.size()) + " bytes)");
    pos_ = p;
  }
  std::span<const uint8_t> take(uint64_t n, const char* what) {
    if (n > remaining())
      fail(std::string(what) + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) + ", only " +
           std::to_string(remaining()) + " remain");
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  uint64_t uint(size_t width, const char* what) {
    auto s = take(width, what);
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= static_cast<uint64_t>(s[i]) << (8 * i);
    return v;
  }
  uint32_t u32(const char* what) { return static_cast<uint32_t>(uint(4, what)); }
  int32_t i32(const char* what) { return static_cast<int32_t>(u32(what)); }
  uint64_t u64(const char* what) { return uint(8, what); }
  int64_t i64(const char* what) { return static_cast<int64_t>(u64(what)); }
  std::string str(uint64_t n, const char* what) {
    auto s = take(n, what);
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw LoadError(file_, where_.empty() ? problem : where_ + ": " + problem);
  }

 private:
  std::span<const uint8_t> b_;
  uint64_t pos_ = 0;
  const std::string& file_;
  std::string where_;
};

class ByteWriter {
 public:
  void uint(uint64_t v, size_t width) {
    for (size_t i = 0; i < width; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void u32(uint32_t v) { uint(v, 4); }
  void u64(uint64_t v) { uint(v, 8); }
  void bytes(std::string_view s) { out_.append(s); }
  // A NUL-padded fixed-size field (truncated when longer).
  void fixed(std::string_view s, size_t width) {
    const size_t n = std::min(s.size(), width);
    out_.append(s.substr(0, n));
    out_.append(width - n, '\0');
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

// A NUL-padded fixed-size string field.
std::string fixedString(std::span<const uint8_t> h, size_t offset, size_t width) {
  const char* p = reinterpret_cast<const char*>(h.data() + offset);
  return std::string(p, strnlen(p, width));
}

uint64_t le(std::span<const uint8_t> h, size_t offset, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= static_cast<uint64_t>(h[offset + i]) << (8 * i);
  return v;
}

std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b) {
  if (a > UINT64_MAX - b) return std::nullopt;
  return a + b;
}

constexpr uint64_t kTinyEntry = 12, kWideEntry = 24;

// Reads one model's table at `at` in the given form. Returns the problem instead of throwing, so the caller can try
// the other form before giving up.
std::optional<std::string> readTable(std::span<const uint8_t> file, uint64_t at, bool wide, OmModelPartitions& out,
                                     uint64_t& end) {
  out = OmModelPartitions{};
  out.wideTable = wide;
  out.tableOffset = at;
  const uint64_t size = file.size();
  const uint64_t countBytes = wide ? 8 : 4;
  if (at > size || size - at < countBytes) return "partition table at offset " + std::to_string(at) + " is truncated";
  const uint64_t count = le(file, at, 4);
  const uint64_t entry = wide ? kWideEntry : kTinyEntry;
  // Bounded before allocating: a count in the billions cannot fit in the bytes that remain.
  if (count > (size - at - countBytes) / entry)
    return "partition table at offset " + std::to_string(at) + " declares " + std::to_string(count) +
           " partitions, more than the " + std::to_string(size - at) + " remaining bytes can hold";
  if (count == 0) return "partition table at offset " + std::to_string(at) + " is empty";
  const uint64_t base = at + countBytes + count * entry;  // partitions start right after the table
  out.partitions.reserve(count);
  end = base;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t e = at + countBytes + i * entry;
    OmPartition p;
    p.type = static_cast<uint32_t>(le(file, e, 4));
    const uint64_t rel = wide ? le(file, e + 8, 8) : le(file, e + 4, 4);
    p.size = wide ? le(file, e + 16, 8) : le(file, e + 8, 4);
    const auto abs = checkedAdd(base, rel);
    const auto last = abs ? checkedAdd(*abs, p.size) : std::nullopt;
    if (!last || *last > size)
      return "partition " + std::to_string(i) + " (" + partitionTypeName(p.type) + ") at relative offset " +
             std::to_string(rel) + " with " + std::to_string(p.size) + " bytes lies past the end of the file (" +
             std::to_string(size) + " bytes)";
    p.offset = *abs;
    end = std::max(end, *last);
    out.partitions.push_back(p);
  }
  // Partitions are stored back to back: none may overlap another.
  std::vector<const OmPartition*> sorted;
  for (const auto& p : out.partitions) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1]->offset + sorted[i - 1]->size > sorted[i]->offset)
      return "partitions " + partitionTypeName(sorted[i - 1]->type) + " and " + partitionTypeName(sorted[i]->type) +
             " overlap (offsets " + std::to_string(sorted[i - 1]->offset) + "+" + std::to_string(sorted[i - 1]->size) +
             " and " + std::to_string(sorted[i]->offset) + ")";
  return std::nullopt;
}

bool backToBack(const OmModelPartitions& t) {
  const uint64_t entry = t.wideTable ? kWideEntry : kTinyEntry;
  uint64_t next = t.tableOffset + (t.wideTable ? 8 : 4) + t.partitions.size() * entry;
  for (const auto& p : t.partitions) {
    if (p.offset != next) return false;
    next += p.size;
  }
  return true;
}

}  // namespace

std::string partitionTypeName(uint32_t type) {
  static const char* const kNames[] = {"MODEL_DEF",        "WEIGHTS_DATA",      "TASK_INFO",    "TBE_KERNELS",
                                       "CUST_AICPU_KERNELS", "SO_BINS",         "FLOW_MODEL",   "FLOW_SUBMODEL",
                                       "MODEL_INOUT_INFO", "STATIC_TASK_DESC", "DYNAMIC_TASK_DESC", "TASK_PARAM",
                                       "TILING_DATA"};
  if (type < std::size(kNames)) return kNames[type];
  return "TYPE_" + std::to_string(type);
}

const OmPartition* OmModelPartitions::find(PartitionType t) const {
  for (const auto& p : partitions)
    if (p.type == static_cast<uint32_t>(t)) return &p;
  return nullptr;
}

std::span<const uint8_t> partitionBytes(std::span<const uint8_t> file, const OmPartition& p) {
  // Checked when the table was read; re-checked so a hand-made OmPartition cannot read out of bounds.
  if (p.offset > file.size() || p.size > file.size() - p.offset) return {};
  return file.subspan(p.offset, p.size);
}

OmHeader parseOmHeader(std::span<const uint8_t> file, const std::string& displayName) {
  if (file.size() < 4 || le(file, 0, 4) != kOmMagic)
    throw LoadError(displayName, "not an Ascend offline model: the file does not start with the magic \"IMOD\"");
  if (file.size() < kOmHeaderSize)
    throw LoadError(displayName, "truncated .om header: " + std::to_string(file.size()) + " bytes, the header needs " +
                                     std::to_string(kOmHeaderSize));
  const auto h = file.first(kOmHeaderSize);
  const uint32_t headSize = static_cast<uint32_t>(le(h, 4, 4));
  if (headSize != kOmHeaderSize)
    throw LoadError(displayName, ".om header declares headsize " + std::to_string(headSize) + ", expected 256");
  OmHeader o;
  o.version = static_cast<uint32_t>(le(h, 8, 4));
  o.length = static_cast<uint32_t>(le(h, 76, 4));
  o.isEncrypt = h[80];
  o.isChecksum = h[81];
  o.modelType = h[82];
  o.genMode = h[83];
  o.name = fixedString(h, 84, 32);
  o.ops = static_cast<uint32_t>(le(h, 116, 4));
  o.userDefineInfo = fixedString(h, 120, 32);
  o.omIrVersion = static_cast<uint32_t>(le(h, 152, 4));
  if (o.isV1()) {
    o.platformVersion = fixedString(h, 156, 20);
    o.platformType = h[176];
  } else {
    o.modelNum = static_cast<uint32_t>(le(h, 156, 4));
    o.platformVersion = fixedString(h, 160, 20);
    o.platformType = h[180];
    o.modelLength = le(h, 184, 8);
    o.needCheckOsCpuInfo = h[192];
    o.isUnknownModel = h[193];
  }
  return o;
}

OmContainer parseOmContainer(std::span<const uint8_t> file, const std::string& displayName) {
  OmContainer c;
  c.header = parseOmHeader(file, displayName);
  const OmHeader& h = c.header;
  if (h.version != kOmVersion1 && h.version != kOmVersion2)
    c.warnings.push_back("unknown .om header version 0x" + [&] {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%08x", h.version);
      return std::string(buf);
    }() + ", read as version 2");
  if (h.isEncrypt == 1)
    throw LoadError(displayName, "the model is encrypted (is_encrypt=1); Kiln reads only plain .om files");
  if (h.isEncrypt != 0)
    throw LoadError(displayName, ".om header has an invalid is_encrypt value " + std::to_string(h.isEncrypt));
  const uint64_t body = file.size() - kOmHeaderSize;
  const uint64_t declared = h.modelLength != 0 ? h.modelLength : h.length;
  if (declared != body)
    throw LoadError(displayName, ".om header says " + std::to_string(declared) + " bytes follow the header (" +
                                     (h.modelLength != 0 ? "model_length" : "length") + "), the file has " +
                                     std::to_string(body) + ": truncated or not a valid .om file");

  const uint64_t models = h.isV1() || h.modelNum == 0 ? 1 : h.modelNum;
  // Each model needs at least a table count and one entry: a huge model_num cannot fit.
  if (models > body / (4 + kTinyEntry))
    throw LoadError(displayName, ".om header declares " + std::to_string(models) + " models, more than " +
                                     std::to_string(body) + " bytes can hold");
  uint64_t at = kOmHeaderSize;
  const bool ruleWide = h.impliesWideTable();
  for (uint64_t m = 0; m < models; ++m) {
    OmModelPartitions parts;
    uint64_t end = 0;
    auto problem = readTable(file, at, ruleWide, parts, end);
    if (problem) {
      // Be robust to writers that did not follow the rule: accept the other form when every entry fits the file.
      OmModelPartitions other;
      uint64_t otherEnd = 0;
      // Only a table whose partitions lie back to back in table order from its end is taken: a misread table of the
      // other form would rarely look like that.
      if (!readTable(file, at, !ruleWide, other, otherEnd) && backToBack(other) &&
          (m + 1 < models || otherEnd == file.size())) {
        c.warnings.push_back("model " + std::to_string(m) + ": partition table is in " + (ruleWide ? "tiny" : "wide") +
                             " form, the header implies " + (ruleWide ? "wide" : "tiny"));
        parts = std::move(other);
        end = otherEnd;
        problem.reset();
      }
    }
    if (problem) throw LoadError(displayName, (models > 1 ? "model " + std::to_string(m) + ": " : "") + *problem);
    c.models.push_back(std::move(parts));
    at = end;
  }
  if (at != file.size())
    c.warnings.push_back(std::to_string(file.size() - at) + " bytes after the last partition are not described by any "
                         "partition table");
  return c;
}

std::string writeOmContainer(const OmHeader& header, const std::vector<std::vector<OmPartitionPayload>>& models,
                             OmLayout layout) {
  const bool v1 = layout == OmLayout::V1Tiny;
  if (models.empty()) throw std::invalid_argument("writeOmContainer: no model");
  if (v1 && models.size() > 1) throw std::invalid_argument("writeOmContainer: a v1 file holds one model");
  ByteWriter body;
  for (const auto& parts : models) {
    if (v1) {
      body.u32(static_cast<uint32_t>(parts.size()));
    } else {
      body.u32(static_cast<uint32_t>(parts.size()));
      body.u32(0);
    }
    uint64_t rel = 0;
    for (const auto& p : parts) {
      if (v1 && (rel > UINT32_MAX || p.bytes.size() > UINT32_MAX))
        throw std::invalid_argument("writeOmContainer: partition does not fit a tiny (32-bit) table entry");
      body.u32(p.type);
      if (v1) {
        body.u32(static_cast<uint32_t>(rel));
        body.u32(static_cast<uint32_t>(p.bytes.size()));
      } else {
        body.u32(0);
        body.u64(rel);
        body.u64(p.bytes.size());
      }
      rel += p.bytes.size();
    }
    for (const auto& p : parts) body.bytes(p.bytes);
  }
  const uint64_t bodySize = body.str().size();
  if (v1 && bodySize > UINT32_MAX) throw std::invalid_argument("writeOmContainer: a v1 file is limited to 4 GiB");

  ByteWriter w;
  w.u32(kOmMagic);
  w.u32(kOmHeaderSize);
  w.u32(v1 ? kOmVersion1 : kOmVersion2);
  w.fixed("", 64);  // checksum
  w.u32(v1 ? static_cast<uint32_t>(bodySize) : 0);
  w.uint(header.isEncrypt, 1);
  w.uint(header.isChecksum, 1);
  w.uint(header.modelType, 1);
  w.uint(header.genMode, 1);
  w.fixed(header.name, 32);
  w.u32(header.ops);
  w.fixed(header.userDefineInfo, 32);
  w.u32(header.omIrVersion);
  if (v1) {
    w.fixed(header.platformVersion, 20);
    w.uint(header.platformType, 1);
  } else {
    w.u32(static_cast<uint32_t>(models.size()));
    w.fixed(header.platformVersion, 20);
    w.uint(header.platformType, 1);
    w.fixed("", 3);
    w.u64(bodySize);
    w.uint(header.needCheckOsCpuInfo, 1);
    w.uint(header.isUnknownModel, 1);
  }
  w.fixed("", kOmHeaderSize - w.str().size());  // reserved
  w.bytes(body.str());
  return std::move(w.str());
}

// --- MODEL_INOUT_INFO ----------------------------------------------------------------------------------------------

namespace {

constexpr uint64_t kTensorInfoFixed = 8 + 4 + 4 + 4 * 4;

std::vector<OmTensorInfo> parseTensorList(ByteReader& r, const char* which) {
  const uint64_t count = r.u32("tensor count");
  if (count > r.remaining() / kTensorInfoFixed)
    r.fail(std::string(which) + " declares " + std::to_string(count) + " tensors, more than its " +
           std::to_string(r.remaining()) + " bytes can hold");
  std::vector<OmTensorInfo> out;
  out.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    OmTensorInfo t;
    t.size = r.u64("tensor size");
    t.format = r.i32("tensor format");
    t.dataType = r.i32("tensor data type");
    const uint64_t nameLen = r.u32("name length"), dimsLen = r.u32("dims length"), dimsV2Len = r.u32("dimsV2 length"),
                   rangeLen = r.u32("shape range length");
    if (dimsLen % 8 || dimsV2Len % 8 || rangeLen % 16)
      r.fail(std::string(which) + " tensor " + std::to_string(i) + ": dims/ranges lengths are not whole int64 values");
    t.name = r.str(nameLen, "tensor name");
    auto ints = [&](uint64_t len, const char* what) {
      const auto raw = r.take(len, what);  // bounded by the bytes present before allocating
      std::vector<int64_t> v(len / 8);
      for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<int64_t>(le(raw, k * 8, 8));
      return v;
    };
    t.dims = ints(dimsLen, "tensor dims");
    t.dimsV2 = ints(dimsV2Len, "tensor dimsV2");
    const auto ranges = ints(rangeLen, "tensor shape range");
    for (size_t k = 0; k + 1 < ranges.size(); k += 2) t.shapeRange.emplace_back(ranges[k], ranges[k + 1]);
    out.push_back(std::move(t));
  }
  return out;
}

void writeTensorList(ByteWriter& w, const std::vector<OmTensorInfo>& list) {
  w.u32(static_cast<uint32_t>(list.size()));
  for (const auto& t : list) {
    w.u64(t.size);
    w.u32(static_cast<uint32_t>(t.format));
    w.u32(static_cast<uint32_t>(t.dataType));
    w.u32(static_cast<uint32_t>(t.name.size()));
    w.u32(static_cast<uint32_t>(t.dims.size() * 8));
    w.u32(static_cast<uint32_t>(t.dimsV2.size() * 8));
    w.u32(static_cast<uint32_t>(t.shapeRange.size() * 16));
    w.bytes(t.name);
    for (int64_t d : t.dims) w.u64(static_cast<uint64_t>(d));
    for (int64_t d : t.dimsV2) w.u64(static_cast<uint64_t>(d));
    for (const auto& [lo, hi] : t.shapeRange) {
      w.u64(static_cast<uint64_t>(lo));
      w.u64(static_cast<uint64_t>(hi));
    }
  }
}

}  // namespace

OmInOutInfo parseInOutInfo(std::span<const uint8_t> bytes, const std::string& displayName) {
  OmInOutInfo info;
  ByteReader r(bytes, displayName, "MODEL_INOUT_INFO");
  while (r.remaining() > 0) {
    const int32_t type = r.i32("record type");
    const uint64_t len = r.u32("record length");
    const auto value = r.take(len, "record value");
    if (type == static_cast<int32_t>(InOutRecordType::InputDesc) ||
        type == static_cast<int32_t>(InOutRecordType::OutputDesc)) {
      const bool in = type == static_cast<int32_t>(InOutRecordType::InputDesc);
      ByteReader v(value, displayName, in ? "MODEL_INOUT_INFO input descriptions" : "MODEL_INOUT_INFO output descriptions");
      auto list = parseTensorList(v, in ? "input list" : "output list");
      if (v.remaining() != 0) v.fail(std::to_string(v.remaining()) + " bytes left after the last tensor");
      auto& dst = in ? info.inputs : info.outputs;
      dst.insert(dst.end(), std::make_move_iterator(list.begin()), std::make_move_iterator(list.end()));
    } else {
      info.others.push_back({type, std::string(reinterpret_cast<const char*>(value.data()), value.size())});
    }
  }
  return info;
}

std::string writeInOutInfo(const OmInOutInfo& info) {
  ByteWriter w;
  auto record = [&](int32_t type, const std::string& value) {
    w.u32(static_cast<uint32_t>(type));
    w.u32(static_cast<uint32_t>(value.size()));
    w.bytes(value);
  };
  for (auto [type, list] : {std::pair{InOutRecordType::InputDesc, &info.inputs},
                            std::pair{InOutRecordType::OutputDesc, &info.outputs}}) {
    ByteWriter v;
    writeTensorList(v, *list);
    record(static_cast<int32_t>(type), v.str());
  }
  for (const auto& o : info.others) record(o.type, o.value);
  return std::move(w.str());
}

std::string inOutDataTypeName(int32_t code) {
  switch (code) {
    case 0: return "float";
    case 1: return "float16";
    case 2: return "int8";
    case 3: return "int32";
    case 4: return "uint8";
    case 6: return "int16";
    case 7: return "uint16";
    case 8: return "uint32";
    case 9: return "int64";
    case 10: return "uint64";
    case 11: return "double";
    case 12: return "bool";
    case 27: return "bf16";
    default: return "type " + std::to_string(code);
  }
}

}  // namespace kiln::om
