#pragma once
// The smallest valid ONNX ModelProto (y = Relu(x), x: float[2]) for tests to corrupt field by field: shared by
// test_onnx_io and the malformed-input corpus.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace kiln::test {

// A minimal valid ModelProto to corrupt: y = Relu(x), x: float[2].
inline onnx::ModelProto baseProto() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->set_name("relu");
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

// baseProto plus an initializer w: float[4] whose data is external, at `location` + `offset`.
inline onnx::ModelProto withExternalData(const std::string& location, int64_t offset) {
  onnx::ModelProto m = baseProto();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value(location);
  auto* o = t->add_external_data();
  o->set_key("offset");
  o->set_value(std::to_string(offset));
  return m;
}

}  // namespace kiln::test
