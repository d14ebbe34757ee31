#include "ir/dtype.h"

#include <array>

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
