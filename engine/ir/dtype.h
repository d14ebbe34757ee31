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
  // ONNX 1.14+ (opsets 19 to 23): eight-bit floats, four-bit integers packed two per byte (element 0 in the low
  // nibble), and the four-bit float (opset 23).
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  // ONNX 1.19 / 1.20 (opsets 24, 25): the unsigned power-of-two scale of MX formats, and two-bit integers packed four
  // per byte (element 0 in the lowest bits).
  Float8E8M0 = 24,
  UInt2 = 25,
  Int2 = 26,
};

inline constexpr int kMaxDTypeCode = 26;

// Short lowercase name as users read it in tables: "fp32", "fp16", "bf16", "int64"...
std::string_view dtypeName(DType t);
// Parses the short name or the ONNX spelling ("float", "float16", "int64"...).
std::optional<DType> dtypeFromName(std::string_view name);
// From an ONNX data_type code; nullopt when the code is not a known element type.
std::optional<DType> dtypeFromOnnx(int code);
inline int dtypeToOnnx(DType t) { return static_cast<int>(t); }
// Bytes per element; 0 for String and Undefined (variable or unknown size). A four-bit type answers 1 (the byte
// one element needs on its own); sizes of whole tensors come from storageBytes, which packs them.
int dtypeSize(DType t);
// Bits per element (4 for the packed types); 0 for String and Undefined.
int dtypeBits(DType t);
// Bytes `count` elements occupy: packed types by bits, rounded up to whole bytes. -1 when the product overflows.
int64_t storageBytes(DType t, int64_t count);
// The eight- and four-bit floats: stored, cast and (de)quantized, not computed on directly.
bool isLowBitFloat(DType t);
// Sub-byte types: four-bit ones two per byte, two-bit ones four per byte.
inline bool isPacked(DType t) {
  return t == DType::UInt4 || t == DType::Int4 || t == DType::Float4E2M1 || t == DType::UInt2 || t == DType::Int2;
}
bool isFloating(DType t);
bool isInteger(DType t);

}  // namespace kiln
