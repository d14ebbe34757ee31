#include "ir/dtype.h"

#include <array>
#include <cstdint>

namespace kiln {
namespace {
struct DTypeInfo {
  std::string_view shortName;
  std::string_view onnxName;
  int size;
};
constexpr std::array<DTypeInfo, kMaxDTypeCode + 1> kInfo{{
    {"undefined", "undefined", 0},
    {"fp32", "float", 4},
    {"uint8", "uint8", 1},
    {"int8", "int8", 1},
    {"uint16", "uint16", 2},
    {"int16", "int16", 2},
    {"int32", "int32", 4},
    {"int64", "int64", 8},
    {"string", "string", 0},
    {"bool", "bool", 1},
    {"fp16", "float16", 2},
    {"fp64", "double", 8},
    {"uint32", "uint32", 4},
    {"uint64", "uint64", 8},
    {"complex64", "complex64", 8},
    {"complex128", "complex128", 16},
    {"bf16", "bfloat16", 2},
    {"fp8e4m3fn", "float8e4m3fn", 1},
    {"fp8e4m3fnuz", "float8e4m3fnuz", 1},
    {"fp8e5m2", "float8e5m2", 1},
    {"fp8e5m2fnuz", "float8e5m2fnuz", 1},
    {"uint4", "uint4", 1},
    {"int4", "int4", 1},
    {"fp4e2m1", "float4e2m1", 1},
    {"fp8e8m0", "float8e8m0", 1},
    {"uint2", "uint2", 1},
    {"int2", "int2", 1},
}};
}  // namespace

std::string_view dtypeName(DType t) { return kInfo[static_cast<size_t>(t)].shortName; }

std::optional<DType> dtypeFromName(std::string_view name) {
  for (size_t i = 1; i < kInfo.size(); ++i)
    if (kInfo[i].shortName == name || kInfo[i].onnxName == name) return static_cast<DType>(i);
  if (name == "float32") return DType::Float;
  if (name == "float64") return DType::Double;
  return std::nullopt;
}

std::optional<DType> dtypeFromOnnx(int code) {
  if (code < 1 || code > kMaxDTypeCode) return std::nullopt;
  return static_cast<DType>(code);
}

int dtypeSize(DType t) { return kInfo[static_cast<size_t>(t)].size; }

int dtypeBits(DType t) {
  if (t == DType::UInt2 || t == DType::Int2) return 2;
  return isPacked(t) ? 4 : 8 * dtypeSize(t);
}

int64_t storageBytes(DType t, int64_t count) {
  const int64_t bits = dtypeBits(t);
  if (count < 0) return -1;
  if (bits == 0 || count == 0) return 0;
  if (count > (INT64_MAX - 7) / bits) return -1;
  return (count * bits + 7) / 8;
}

bool isLowBitFloat(DType t) {
  return t == DType::Float8E4M3FN || t == DType::Float8E4M3FNUZ || t == DType::Float8E5M2 ||
         t == DType::Float8E5M2FNUZ || t == DType::Float4E2M1 || t == DType::Float8E8M0;
}

bool isFloating(DType t) {
  return t == DType::Float || t == DType::Float16 || t == DType::BFloat16 || t == DType::Double;
}

bool isInteger(DType t) {
  switch (t) {
    case DType::UInt8: case DType::Int8: case DType::UInt16: case DType::Int16: case DType::Int32:
    case DType::Int64: case DType::UInt32: case DType::UInt64:
      return true;
    default:
      return false;
  }
}

}  // namespace kiln
