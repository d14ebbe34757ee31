#pragma once
// GE's numbering of element types and layouts, both ways. Two different enums exist in GE: the protobuf one
// (MODEL_DEF's TensorDescriptor.dtype) and the C++ one (MODEL_INOUT_INFO records); the layout has a C++ enum code
// in MODEL_INOUT_INFO and a string in MODEL_DEF.
#include <cstdint>
#include <optional>

#include "ir/dtype.h"
#include "ir/format.h"

namespace kiln::om {

int geProtoDataType(DType t);                    // DT_FLOAT = 1, DT_FLOAT16 = 2, ...; 0 (undefined) when none
std::optional<DType> dtypeFromGeProto(int code);
int geCppDataType(DType t);                      // FLOAT 0, FLOAT16 1, INT8 2, INT32 3, ...; -1 when none
int geCppFormat(Format f);                       // FORMAT_NCHW 0, NHWC 1, ND 2, NC1HWC0 3, FRACTAL_Z 4, ...

}  // namespace kiln::om
