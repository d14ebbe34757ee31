#pragma once
// Element types. Numbering follows ONNX TensorProto.DataType so that import/export is a range check, not a table.
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

enum class DType : uint8_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

inline constexpr int kMaxDTypeCode = 16;

// Short lowercase name as users read it in tables: "fp32", "fp16", "bf16", "int64"...
std::string_view dtypeName(DType t);
// Parses the short name or the ONNX spelling ("float", "float16", "int64"...).
std::optional<DType> dtypeFromName(std::string_view name);
// From an ONNX data_type code; nullopt when the code is not a known element type.
std::optional<DType> dtypeFromOnnx(int code);
inline int dtypeToOnnx(DType t) { return static_cast<int>(t); }
// Bytes per element; 0 for String and Undefined (variable or unknown size).
int dtypeSize(DType t);
bool isFloating(DType t);
bool isInteger(DType t);

}  // namespace kiln
