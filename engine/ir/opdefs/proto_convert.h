#pragma once
// Conversions between Kiln's IR types and ONNX protobuf messages. Internal to the engine: only .cpp files include
// this header, so the protobuf-generated ONNX headers stay out of the public IR.
#include <onnx/onnx_pb.h>

#include <string>

#include "ir/attribute.h"
#include "ir/value_type.h"

namespace kiln::onnxio {

// Our ValueType -> TypeProto. Formats other than ND travel in TypeProto.denotation.
void toTypeProto(const ValueType& t, onnx::TypeProto* out);
// Tolerant reverse conversion: unknown element types become Undefined, negative dims become unknown.
ValueType fromTypeProto(const onnx::TypeProto& t);
// Shape from a TensorShapeProto (negative dim_value -> unknown).
Shape fromShapeProto(const onnx::TensorShapeProto& s);
void toShapeProto(const Shape& s, onnx::TensorShapeProto* out);

// Dims and type always; element bytes only when withData (a 2 GB weight is never copied for a type query).
void toTensorProto(const Tensor& t, const std::string& name, onnx::TensorProto* out, bool withData = true);

// Attribute -> AttributeProto. Graph-valued attributes are written by `writeGraph` (the exporter recurses; the
// inference adapter writes only the graph's formal inputs/outputs).
using GraphWriter = void (*)(const Graph& g, onnx::GraphProto* out, void* context);
void toAttributeProto(const std::string& name, const Attribute& a, onnx::AttributeProto* out, bool tensorData,
                      GraphWriter writeGraph, void* context);

}  // namespace kiln::onnxio
