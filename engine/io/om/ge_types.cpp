#include "io/om/ge_types.h"

#include <array>
#include <utility>

namespace kiln::om {
namespace {

// Kiln's DType against GE's protobuf DataType code.
constexpr std::array<std::pair<DType, int>, 15> kProto{{
    {DType::Undefined, 0}, {DType::Float, 1},   {DType::Float16, 2},  {DType::Int8, 3},     {DType::UInt8, 4},
    {DType::Int16, 5},     {DType::UInt16, 6},  {DType::Int32, 7},    {DType::Int64, 8},    {DType::UInt32, 9},
    {DType::UInt64, 10},   {DType::Bool, 11},   {DType::Double, 12},  {DType::String, 13},  {DType::BFloat16, 27},
}};

// ... and GE's C++ DataType code (MODEL_INOUT_INFO).
constexpr std::array<std::pair<DType, int>, 13> kCpp{{
    {DType::Float, 0},   {DType::Float16, 1}, {DType::Int8, 2},    {DType::Int32, 3},  {DType::UInt8, 4},
    {DType::Int16, 6},   {DType::UInt16, 7},  {DType::UInt32, 8},  {DType::Int64, 9},  {DType::UInt64, 10},
    {DType::Double, 11}, {DType::Bool, 12},   {DType::BFloat16, 27},
}};

}  // namespace

int geProtoDataType(DType t) {
  for (const auto& [d, code] : kProto)
    if (d == t) return code;
  return 0;
}

std::optional<DType> dtypeFromGeProto(int code) {
  for (const auto& [d, c] : kProto)
    if (c == code) return d;
  return std::nullopt;
}

int geCppDataType(DType t) {
  for (const auto& [d, code] : kCpp)
    if (d == t) return code;
  return -1;
}

int geCppFormat(Format f) {
  switch (f) {
    case Format::NCHW: return 0;
    case Format::NHWC: return 1;
    case Format::ND: return 2;
    case Format::NC1HWC0: return 3;
    case Format::FRACTAL_Z: return 4;
    case Format::HWCN: return 16;
    case Format::NDHWC: return 27;
    case Format::FRACTAL_NZ: return 29;
    case Format::NCDHW: return 30;
  }
  return 2;
}

}  // namespace kiln::om
