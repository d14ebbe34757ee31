#pragma once
// The type of a value: a tensor (dtype + shape + layout) or a container of tensors (ONNX sequence / optional / map).
#include <memory>
#include <string>

#include "ir/dtype.h"
#include "ir/format.h"
#include "ir/shape.h"

namespace kiln {

struct ValueType {
  enum class Kind : uint8_t { Unknown, Tensor, SparseTensor, Sequence, Optional, Map };
  Kind kind = Kind::Unknown;
  DType dtype = DType::Undefined;  // element type of a tensor; key type of a map
  Shape shape = Shape::unknownRank();
  Format format = Format::ND;
  // For a blocked layout (NC1HWC0, FRACTAL_Z, FRACTAL_NZ): the logical shape and layout the blocks hide, as GE's
  // origin_shape / origin_format. The padding makes them unrecoverable from `shape`, and whoever needs the logical
  // tensor back (the emulator, a TransData to the logical layout) reads them here. Unknown rank when not recorded.
  Shape originShape = Shape::unknownRank();
  Format originFormat = Format::ND;
  std::shared_ptr<const ValueType> element;  // Sequence / Optional / Map value type

  static ValueType tensor(DType t, Shape s, Format f = Format::ND) {
    ValueType v;
    v.kind = Kind::Tensor;
    v.dtype = t;
    v.shape = std::move(s);
    v.format = f;
    return v;
  }
  // This tensor stored in `f` with extents `physical`. A blocked f records this type's shape and format as the
  // origin (a logical f clears it).
  ValueType storedAs(Format f, Shape physical) const;
  bool isTensor() const { return kind == Kind::Tensor; }
  bool known() const { return kind != Kind::Unknown; }
  // Bytes of a static tensor; nullopt when unknown, symbolic or not a fixed-size element type.
  std::optional<int64_t> byteSize() const;
  std::string toString() const;  // "fp32[1×3×224×224]", "seq<int64[?]>", "?"
  bool operator==(const ValueType& o) const;
};

}  // namespace kiln
