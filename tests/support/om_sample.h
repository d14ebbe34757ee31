#pragma once
// A tiny valid Ascend .om built with Kiln's own protos (Data -> Conv2D(x, Const w) -> NetOutput, TASK_INFO with one
// kernel), and byte helpers to corrupt it: shared by test_om_reader and the malformed-input corpus.

#include <cstring>
#include <string>
#include <vector>

#include "io/om/ge_ir.pb.h"
#include "io/om/om_container.h"
#include "io/om/om_writer.h"
#include "io/om/task.pb.h"

namespace kiln::om::test {

inline void setShape(ge::proto::TensorDescriptor* d, std::initializer_list<int64_t> dims) {
  for (int64_t x : dims) d->mutable_shape()->add_dim(x);
}

inline ge::proto::TensorDescriptor* desc(google::protobuf::RepeatedPtrField<ge::proto::TensorDescriptor>* list,
                                  ge::proto::DataType dt, std::initializer_list<int64_t> dims, const char* layout) {
  auto* d = list->Add();
  d->set_dtype(dt);
  setShape(d, dims);
  d->set_layout(layout);
  return d;
}

// Data x -> Conv2D(x, w) -> NetOutput, with w a Const whose 4 fp16 values sit at offset 8 of WEIGHTS_DATA, and a
// control edge w -> NetOutput. Ops are listed out of order (NetOutput first) on purpose.
struct Sample {
  ge::proto::ModelDef md;
  domi::ModelTaskDef tasks;
  std::string weights;
  ge::proto::OpDef* op(const std::string& name) {
    for (auto& o : *md.mutable_graph(0)->mutable_op())
      if (o.name() == name) return &o;
    return nullptr;
  }
};

inline Sample sample() {
  Sample s;
  s.md.set_name("tiny");
  s.md.set_version(2);
  (*s.md.mutable_attr())["memory_size"].set_i(4096);
  (*s.md.mutable_attr())["soc_version"].set_s("Ascend310");
  auto* g = s.md.add_graph();
  g->set_name("tiny_0");

  auto* out = g->add_op();
  out->set_name("out");
  out->set_type("NetOutput");
  out->set_id(3);
  out->add_input("conv:0");
  out->add_input("w:-1");
  desc(out->mutable_input_desc(), ge::proto::DT_FLOAT16, {1, 1, 4, 4, 16}, "NC1HWC0");

  auto* x = g->add_op();
  x->set_name("x");
  x->set_type("Data");
  x->set_id(0);
  x->add_input("");
  desc(x->mutable_input_desc(), ge::proto::DT_FLOAT, {1, 3, 4, 4}, "NCHW");
  desc(x->mutable_output_desc(), ge::proto::DT_FLOAT, {1, 3, 4, 4}, "NCHW");

  auto* w = g->add_op();
  w->set_name("w");
  w->set_type("Const");
  w->set_id(1);
  auto* wd = desc(w->mutable_output_desc(), ge::proto::DT_FLOAT16, {2, 2}, "FRACTAL_Z");
  (*wd->mutable_attr())["origin_format"].set_s("HWCN");
  auto* value = (*w->mutable_attr())["value"].mutable_t()->mutable_desc();
  *value = *wd;
  value->set_data_offset(8);
  value->set_weight_size(8);

  auto* conv = g->add_op();
  conv->set_name("conv");
  conv->set_type("Conv2D");
  conv->set_id(2);
  conv->set_stream_id(1);
  conv->add_input("x:0");
  conv->add_input("w:0");
  conv->add_input_i(0);
  conv->add_input_i(512);
  conv->add_output_i(1024);
  conv->add_workspace_bytes(64);
  (*conv->mutable_attr())["strides"].mutable_list()->add_i(1);
  (*conv->mutable_attr())["data_format"].set_s("NCHW");
  auto* cd = desc(conv->mutable_output_desc(), ge::proto::DT_FLOAT16, {1, 1, 4, 4, 16}, "NC1HWC0");
  (*cd->mutable_attr())["origin_format"].set_s("NCHW");
  auto* os = (*cd->mutable_attr())["origin_shape"].mutable_list();
  for (int64_t d : {1, 3, 4, 4}) os->add_i(d);

  s.weights.assign(16, '\0');
  const uint16_t half[4] = {0x3c00, 0x4000, 0x4200, 0x4400};  // 1, 2, 3, 4
  std::memcpy(s.weights.data() + 8, half, 8);

  s.tasks.set_memory_size(4096);
  s.tasks.set_stream_num(2);
  auto* k = s.tasks.add_task();
  k->set_type(0);
  k->set_stream_id(1);
  k->mutable_kernel()->set_block_dim(8);
  k->mutable_kernel()->set_kernel_name("te_conv2d_kernel0");
  k->mutable_kernel()->mutable_context()->set_op_index(2);
  s.tasks.add_task()->set_type(19);
  return s;
}

// Map fields in a fixed order, so the same sample gives the same bytes in every run (the mutation test replays).
inline std::string serialize(const google::protobuf::Message& m) { return deterministicBytes(m); }

inline std::vector<OmPartitionPayload> partitions(const Sample& s) {
  return {{0, serialize(s.md)}, {1, s.weights}, {2, serialize(s.tasks)}};
}

inline OmHeader header() {
  OmHeader h;
  h.name = "tiny";
  h.platformVersion = "Ascend310";
  return h;
}

inline std::string fileOf(const Sample& s, OmLayout layout = OmLayout::V2Wide) {
  return writeOmContainer(header(), {partitions(s)}, layout);
}


inline void put32(std::string& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
inline void put64(std::string& b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

}  // namespace kiln::om::test
