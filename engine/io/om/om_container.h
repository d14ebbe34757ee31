#pragma once
// The container of an Ascend offline model (.om): a 256-byte header, then per model a partition table and its
// partitions (MODEL_DEF, WEIGHTS_DATA, TASK_INFO, ...). Only the byte layout lives here — no protobuf — so the
// container can be read, validated and written without knowing what the partitions hold.
//
// Everything read is untrusted: every count, offset and size is checked against the file size before it is used,
// with overflow-safe arithmetic; problems are thrown as LoadError(displayName, one-line problem).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/load_error.h"

namespace kiln::om {

inline constexpr uint32_t kOmMagic = 0x444F4D49;  // "IMOD" on disk
inline constexpr uint32_t kOmHeaderSize = 256;
inline constexpr uint32_t kOmVersion1 = 0x10000000;
inline constexpr uint32_t kOmVersion2 = 0x20000000;

enum class PartitionType : uint32_t {
  ModelDef = 0,
  WeightsData = 1,
  TaskInfo = 2,
  TbeKernels = 3,
  CustAicpuKernels = 4,
  SoBins = 5,
  FlowModel = 6,
  FlowSubmodel = 7,
  ModelInOutInfo = 8,
  StaticTaskDesc = 9,
  DynamicTaskDesc = 10,
  TaskParam = 11,
  TilingData = 12,
};
// "MODEL_DEF", "WEIGHTS_DATA", ... ; "TYPE_<n>" for numbers without a name.
std::string partitionTypeName(uint32_t type);

struct OmHeader {
  uint32_t version = kOmVersion2;  // kOmVersion1 or kOmVersion2 (other values are read as v2 with a warning)
  uint32_t length = 0;             // legacy: bytes after the header (v2 writers put 0)
  uint8_t isEncrypt = 0, isChecksum = 0, modelType = 0, genMode = 0;
  std::string name;  // up to 32 bytes
  uint32_t ops = 0;
  std::string userDefineInfo;  // up to 32 bytes
  uint32_t omIrVersion = 0;
  uint32_t modelNum = 0;          // v2 only
  std::string platformVersion;   // up to 20 bytes (SoC, e.g. "Ascend310")
  uint8_t platformType = 0;
  uint64_t modelLength = 0;       // v2 only: bytes after the header; wins over `length` when non-zero
  uint8_t needCheckOsCpuInfo = 0;  // v2 only
  uint8_t isUnknownModel = 0;      // v2 only: 1 = dynamic shape

  bool isV1() const { return version == kOmVersion1; }
  // The partition table form the header implies: wide when model_length != 0 or modeltype == 3 (flow).
  bool impliesWideTable() const { return modelLength != 0 || modelType == 3; }
};

struct OmPartition {
  uint32_t type = 0;
  uint64_t offset = 0;  // absolute file offset of the payload (the table stores it relative to the table's end)
  uint64_t size = 0;
};

struct OmModelPartitions {
  bool wideTable = false;
  uint64_t tableOffset = 0;  // where this model's table starts in the file
  std::vector<OmPartition> partitions;
  // First partition of that type, or null.
  const OmPartition* find(PartitionType t) const;
};

struct OmContainer {
  OmHeader header;
  std::vector<OmModelPartitions> models;  // model 0 is the root model
  std::vector<std::string> warnings;      // e.g. table form differing from the header's rule
};

// Parses and validates the header and every model's partition table against bytes.size(). Throws LoadError.
OmContainer parseOmContainer(std::span<const uint8_t> bytes, const std::string& displayName);
// Header only (the first 256 bytes must be present); also used to report encryption before anything else.
OmHeader parseOmHeader(std::span<const uint8_t> bytes, const std::string& displayName);

std::span<const uint8_t> partitionBytes(std::span<const uint8_t> file, const OmPartition& p);

// --- writing -------------------------------------------------------------------------------------------------------

struct OmPartitionPayload {
  uint32_t type = 0;
  std::string bytes;
};

enum class OmLayout {
  V2Wide,  // current writers: v2 header (model_length, model_num), 24-byte table entries
  V1Tiny,  // older files: v1 header (length), 12-byte entries (every offset and size must fit 32 bits)
};

// Builds header + per model [table + partitions back to back]. The header's version, lengths and model_num are set
// from the layout and the payloads; its other fields are taken from `header`. Throws std::invalid_argument when a
// size does not fit the layout.
std::string writeOmContainer(const OmHeader& header, const std::vector<std::vector<OmPartitionPayload>>& models,
                             OmLayout layout = OmLayout::V2Wide);

// --- MODEL_INOUT_INFO: TLV records {i32 type, u32 length, value} ---------------------------------------------------

enum class InOutRecordType : int32_t { InputDesc = 0, OutputDesc = 1, DynamicBatch = 2, DynamicHw = 3, DynamicDims = 4 };

struct OmTensorInfo {
  uint64_t size = 0;
  int32_t format = 0;    // GE's C++ Format enum
  int32_t dataType = 0;  // GE's C++ DataType enum (FLOAT 0, FLOAT16 1, ...), not the protobuf one
  std::string name;
  std::vector<int64_t> dims, dimsV2;
  std::vector<std::pair<int64_t, int64_t>> shapeRange;
  bool operator==(const OmTensorInfo&) const = default;
};

struct OmTlvRecord {
  int32_t type = 0;
  std::string value;
  bool operator==(const OmTlvRecord&) const = default;
};

struct OmInOutInfo {
  std::vector<OmTensorInfo> inputs, outputs;
  std::vector<OmTlvRecord> others;  // dynamic batch/HW/dims and unknown records, kept as bytes
  bool operator==(const OmInOutInfo&) const = default;
};

// The tensor lists' name/dims/dimsV2/shape_range lengths are byte counts (dims: 8 bytes each, ranges: 16).
OmInOutInfo parseInOutInfo(std::span<const uint8_t> bytes, const std::string& displayName);
std::string writeInOutInfo(const OmInOutInfo& info);

// Name of a MODEL_INOUT_INFO C++ data type code ("float", "float16", ...; "type <n>" when unknown).
std::string inOutDataTypeName(int32_t code);

}  // namespace kiln::om
