#include "ir/opdefs/proto_convert.h"

#include <cstring>

#include "ir/graph.h"

namespace kiln::onnxio {

void toShapeProto(const Shape& s, onnx::TensorShapeProto* out) {
  out->Clear();
  for (const Dim& d : s.dims()) {
    auto* pd = out->add_dim();
    if (d.isStatic())
      pd->set_dim_value(d.value);
    else if (d.isSymbolic())
      pd->set_dim_param(d.symbol);
  }
}

Shape fromShapeProto(const onnx::TensorShapeProto& s) {
  std::vector<Dim> dims;
  dims.reserve(static_cast<size_t>(s.dim_size()));
  for (const auto& d : s.dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0)
      dims.push_back(Dim::fixed(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty())
      dims.push_back(Dim::symbolic(d.dim_param()));
    else
      dims.push_back(Dim::unknown());
  }
  return Shape(std::move(dims));
}

void toTypeProto(const ValueType& t, onnx::TypeProto* out) {
  out->Clear();
  switch (t.kind) {
    case ValueType::Kind::Unknown:
      return;
    case ValueType::Kind::Tensor:
    case ValueType::Kind::SparseTensor: {
      auto* tt = t.kind == ValueType::Kind::Tensor ? out->mutable_tensor_type() : nullptr;
      if (tt) {
        tt->set_elem_type(dtypeToOnnx(t.dtype));
        if (t.shape.rankKnown()) toShapeProto(t.shape, tt->mutable_shape());
      } else {
        auto* st = out->mutable_sparse_tensor_type();
        st->set_elem_type(dtypeToOnnx(t.dtype));
        if (t.shape.rankKnown()) toShapeProto(t.shape, st->mutable_shape());
      }
      if (t.format != Format::ND) out->set_denotation(std::string(formatName(t.format)));
      return;
    }
    case ValueType::Kind::Sequence:
      if (t.element) toTypeProto(*t.element, out->mutable_sequence_type()->mutable_elem_type());
      else out->mutable_sequence_type();
      return;
    case ValueType::Kind::Optional:
      if (t.element) toTypeProto(*t.element, out->mutable_optional_type()->mutable_elem_type());
      else out->mutable_optional_type();
      return;
    case ValueType::Kind::Map:
      out->mutable_map_type()->set_key_type(dtypeToOnnx(t.dtype));
      if (t.element) toTypeProto(*t.element, out->mutable_map_type()->mutable_value_type());
      return;
  }
}

ValueType fromTypeProto(const onnx::TypeProto& t) {
  ValueType v;
  auto elem = [](const onnx::TypeProto& e) { return std::make_shared<const ValueType>(fromTypeProto(e)); };
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: {
      v.kind = ValueType::Kind::Tensor;
      v.dtype = dtypeFromOnnx(t.tensor_type().elem_type()).value_or(DType::Undefined);
      v.shape = t.tensor_type().has_shape() ? fromShapeProto(t.tensor_type().shape()) : Shape::unknownRank();
      break;
    }
    case onnx::TypeProto::kSparseTensorType:
      v.kind = ValueType::Kind::SparseTensor;
      v.dtype = dtypeFromOnnx(t.sparse_tensor_type().elem_type()).value_or(DType::Undefined);
      v.shape = t.sparse_tensor_type().has_shape() ? fromShapeProto(t.sparse_tensor_type().shape())
                                                    : Shape::unknownRank();
      break;
    case onnx::TypeProto::kSequenceType:
      v.kind = ValueType::Kind::Sequence;
      if (t.sequence_type().has_elem_type()) v.element = elem(t.sequence_type().elem_type());
      break;
    case onnx::TypeProto::kOptionalType:
      v.kind = ValueType::Kind::Optional;
      if (t.optional_type().has_elem_type()) v.element = elem(t.optional_type().elem_type());
      break;
    case onnx::TypeProto::kMapType:
      v.kind = ValueType::Kind::Map;
      v.dtype = dtypeFromOnnx(t.map_type().key_type()).value_or(DType::Undefined);
      if (t.map_type().has_value_type()) v.element = elem(t.map_type().value_type());
      break;
    default:
      break;
  }
  if (t.has_denotation())
    if (auto f = formatFromName(t.denotation())) v.format = *f;
  return v;
}

void toTensorProto(const Tensor& t, const std::string& name, onnx::TensorProto* out, bool withData) {
  out->Clear();
  if (!name.empty()) out->set_name(name);
  out->set_data_type(dtypeToOnnx(t.dtype()));
  for (int64_t d : t.dims()) out->add_dims(d);
  if (!withData) return;
  if (t.dtype() == DType::String) {
    for (const auto& s : t.strings()) out->add_string_data(s);
  } else if (t.byteSize() > 0) {
    out->set_raw_data(reinterpret_cast<const char*>(t.data()), t.byteSize());
  }
}

void toAttributeProto(const std::string& name, const Attribute& a, onnx::AttributeProto* out, bool tensorData,
                      GraphWriter writeGraph, void* context) {
  using K = Attribute::Kind;
  out->Clear();
  out->set_name(name);
  switch (a.kind()) {
    case K::Float:
      out->set_type(onnx::AttributeProto::FLOAT);
      out->set_f(*a.get<float>());
      break;
    case K::Int:
      out->set_type(onnx::AttributeProto::INT);
      out->set_i(*a.get<int64_t>());
      break;
    case K::String:
      out->set_type(onnx::AttributeProto::STRING);
      out->set_s(*a.get<std::string>());
      break;
    case K::Tensor:
      out->set_type(onnx::AttributeProto::TENSOR);
      toTensorProto(*a.get<Tensor>(), "", out->mutable_t(), tensorData);
      break;
    case K::Graph:
      out->set_type(onnx::AttributeProto::GRAPH);
      if (*a.get<Attribute::GraphPtr>()) writeGraph(**a.get<Attribute::GraphPtr>(), out->mutable_g(), context);
      break;
    case K::Floats:
      out->set_type(onnx::AttributeProto::FLOATS);
      for (float f : *a.get<std::vector<float>>()) out->add_floats(f);
      break;
    case K::Ints:
      out->set_type(onnx::AttributeProto::INTS);
      for (int64_t i : *a.get<std::vector<int64_t>>()) out->add_ints(i);
      break;
    case K::Strings:
      out->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : *a.get<std::vector<std::string>>()) out->add_strings(s);
      break;
    case K::Tensors:
      out->set_type(onnx::AttributeProto::TENSORS);
      for (const auto& t : *a.get<std::vector<Tensor>>()) toTensorProto(t, "", out->add_tensors(), tensorData);
      break;
    case K::Graphs:
      out->set_type(onnx::AttributeProto::GRAPHS);
      for (const auto& g : *a.get<std::vector<Attribute::GraphPtr>>())
        if (g) writeGraph(*g, out->add_graphs(), context);
      break;
    case K::Type:
      out->set_type(onnx::AttributeProto::TYPE_PROTO);
      toTypeProto(*a.get<ValueType>(), out->mutable_tp());
      break;
    case K::Types:
      out->set_type(onnx::AttributeProto::TYPE_PROTOS);
      for (const auto& t : *a.get<std::vector<ValueType>>()) toTypeProto(t, out->add_type_protos());
      break;
  }
}

}  // namespace kiln::onnxio
