// ATC's dynamic gears in one .om, laid out as GE's multi-batch clone pass lays out the graph (om_writer.h).
// Approximate where GE's own choices are not recorded by anything Kiln reads: the mbatch_dynamic_type codes (1 batch,
// 2 image size, 3 dims, after GE's enum order), the task list's branch selection (one LABEL_SWITCH on stream 0, a
// LABEL_SET before each gear's tasks and a LABEL_GOTO past the others; GE uses LabelSwitchByIndex with its own
// argument block), and weights: identical constants are stored once, as GE shares them, but a constant folded
// differently per gear is stored per gear.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "io/om/om_writer.h"
#include "io/om/om_writer_parts.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "memory/lifetimes.h"
#include "options/options.h"

namespace kiln::om {
namespace {

ge::proto::AttrDef intValue(int64_t i) {
  ge::proto::AttrDef a;
  a.set_i(i);
  return a;
}

ge::proto::AttrDef intList(const std::vector<int64_t>& v) {
  ge::proto::AttrDef a;
  for (int64_t x : v) a.mutable_list()->add_i(x);
  a.mutable_list()->set_val_type(ge::proto::AttrDef::ListValue::VT_LIST_INT);
  return a;
}

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

std::string gearSuffix(size_t i) { return "_ascend_mbatch_batch_" + std::to_string(i); }

// "op:idx" -> "op<suffix>:idx" ("" stays "").
std::string renamedRef(const std::string& ref, const std::string& suffix) {
  if (ref.empty()) return ref;
  const size_t colon = ref.rfind(':');
  return colon == std::string::npos ? ref + suffix : ref.substr(0, colon) + suffix + ref.substr(colon);
}

// The weights of every gear in one blob, identical constants once. Rewrites a gear's Const data offsets and the
// input_i of its readers (is_input_const) to the blob's offsets.
class SharedWeights {
 public:
  void adopt(ge::proto::ModelDef& m, const std::string& weights) {
    std::unordered_map<int64_t, int64_t> moved;  // the gear's weight offset -> the blob's
    for (auto& g : *m.mutable_graph())
      for (auto& op : *g.mutable_op())
        for (int k = 0; k < op.output_desc_size(); ++k) {
          auto& d = *op.mutable_output_desc(k);
          if (d.weight_size() <= 0 || d.data_offset() < 0) continue;
          const int64_t at = d.data_offset(), size = d.weight_size();
          if (at + size > int64_t(weights.size())) continue;
          const int64_t to = place(weights.substr(size_t(at), size_t(size)));
          moved[at] = to;
          d.set_data_offset(to);
          if (k < op.output_i_size()) op.set_output_i(k, to);
        }
    for (auto& g : *m.mutable_graph())
      for (auto& op : *g.mutable_op())
        for (int k = 0; k < op.input_i_size() && k < op.is_input_const_size(); ++k)
          if (op.is_input_const(k))
            if (auto it = moved.find(op.input_i(k)); it != moved.end()) op.set_input_i(k, it->second);
  }
  int64_t place(const std::string& bytes) {
    if (auto it = at_.find(bytes); it != at_.end()) return it->second;
    const int64_t at = alignTo(int64_t(blob_.size()), memory::kArenaAlignment);
    blob_.resize(size_t(at), '\0');
    blob_ += bytes;
    at_.emplace(bytes, at);
    return at;
  }
  std::string take() { return std::move(blob_); }

 private:
  std::string blob_;
  std::map<std::string, int64_t> at_;
};

// The TLV record MODEL_INOUT_INFO keeps the gears in (GE's model_introduction: DYNAMIC_BATCH a count then int64s;
// DYNAMIC_HW and DYNAMIC_DIMS a gear count, each gear's length, then every value), little-endian.
OmTlvRecord gearRecord(const std::string& option, const std::vector<GearModel>& gears) {
  std::string bytes;
  auto u32 = [&](uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
  auto i64 = [&](int64_t v) { bytes.append(reinterpret_cast<const char*>(&v), 8); };
  OmTlvRecord r;
  if (option == "dynamic_batch_size") {
    r.type = 2;
    u32(uint32_t(gears.size()));
    for (const GearModel& g : gears) i64(g.values.at(0));
  } else {
    r.type = option == "dynamic_image_size" ? 3 : 4;
    u32(uint32_t(gears.size()));
    for (const GearModel& g : gears) u32(uint32_t(g.values.size()));
    for (const GearModel& g : gears)
      for (int64_t v : g.values) i64(v);
  }
  r.value = std::move(bytes);
  return r;
}

// The gear whose tensor has the most elements.
size_t largestGear(const std::vector<const OmTensorInfo*>& perGear) {
  size_t best = 0;
  double most = -1;
  for (size_t i = 0; i < perGear.size(); ++i) {
    double n = 1;
    for (int64_t d : perGear[i]->dims) n *= double(std::max<int64_t>(d, 1));
    if (n > most) most = n, best = i;
  }
  return best;
}

// An input's dims across the gears: the largest gear's (GE gives the root Data the max shape) and -1 where the
// gears differ (its _mbatch_origin_input_dims).
void mergeDims(const std::vector<const OmTensorInfo*>& perGear, std::vector<int64_t>& maxDims,
               std::vector<int64_t>& originDims) {
  maxDims = perGear[largestGear(perGear)]->dims;
  originDims = maxDims;
  for (const OmTensorInfo* t : perGear)
    for (size_t a = 0; a < originDims.size() && a < t->dims.size(); ++a)
      if (t->dims[a] != maxDims[a]) originDims[a] = -1;
}

}  // namespace

std::string buildGearOmFile(const std::vector<GearModel>& gears, const std::string& gearOption, const Options& options) {
  if (gears.size() < 2) throw std::runtime_error("a dynamic-gear .om needs at least two gears");
  std::vector<OmParts> parts;
  for (const GearModel& g : gears) {
    if (!g.compiled) throw std::runtime_error("a gear was not compiled");
    parts.push_back(buildOmParts(*g.compiled, options));
  }
  const OmInOutInfo& first = parts.front().io;
  for (const OmParts& p : parts)
    if (p.io.inputs.size() != first.inputs.size() || p.io.outputs.size() != first.outputs.size())
      throw std::runtime_error("the gears' graphs have different inputs or outputs");

  OmParts out;
  ge::proto::ModelDef& model = out.model;
  model.set_name(parts.front().model.name());
  model.set_version(1);
  ge::proto::GraphDef& root = *model.add_graph();
  root.set_name(model.name());
  SharedWeights weights;
  int64_t nextId = 0;

  // Root: the real inputs at the largest gear's shapes, the gear selector, Case, NetOutput. Descriptors are the
  // gears' own (dtype, layout), with the largest gear's dims.
  auto dataDesc = [&](size_t gear, size_t input) -> const ge::proto::TensorDescriptor* {
    for (const auto& op : parts[gear].model.graph(0).op())
      if (op.type() == "Data" && op.attr().count("index") && op.attr().at("index").i() == int64_t(input) &&
          op.output_desc_size() > 0)
        return &op.output_desc(0);
    return nullptr;
  };
  auto outputDesc = [&](size_t gear, size_t output) -> const ge::proto::TensorDescriptor* {
    for (const auto& op : parts[gear].model.graph(0).op())
      if (op.type() == "NetOutput" && op.input_desc_size() > int(output)) return &op.input_desc(int(output));
    return nullptr;
  };
  auto withDims = [](const ge::proto::TensorDescriptor* from, const std::vector<int64_t>& dims) {
    ge::proto::TensorDescriptor d;
    if (from) d = *from;
    d.mutable_shape()->clear_dim();
    for (int64_t x : dims) d.mutable_shape()->add_dim(x);
    return d;
  };
  std::vector<std::string> dataNames;
  for (size_t i = 0; i < first.inputs.size(); ++i) {
    std::vector<const OmTensorInfo*> perGear;
    for (const OmParts& p : parts) perGear.push_back(&p.io.inputs[i]);
    std::vector<int64_t> maxDims, originDims;
    mergeDims(perGear, maxDims, originDims);
    ge::proto::OpDef& op = *root.add_op();
    op.set_name(first.inputs[i].name);
    op.set_type("Data");
    op.set_id(nextId++);
    *op.add_output_desc() = withDims(dataDesc(largestGear(perGear), i), maxDims);
    (*op.mutable_attr())["index"] = intValue(int64_t(i));
    (*op.mutable_attr())["_mbatch_origin_input_dims"] = intList(originDims);
    root.add_input(op.name() + ":0");
    dataNames.push_back(op.name());
    OmTensorInfo io = first.inputs[i];
    io.dims = originDims;  // MODEL_INOUT_INFO keeps the -1s
    out.io.inputs.push_back(io);
  }
  const size_t gearLength = gears.front().values.size();
  {
    ge::proto::OpDef& shapeData = *root.add_op();
    shapeData.set_name("ascend_mbatch_shape_data");
    shapeData.set_type("Data");
    shapeData.set_id(nextId++);
    auto& d = *shapeData.add_output_desc();
    d.set_dtype(ge::proto::DT_INT32);
    d.mutable_shape()->add_dim(int64_t(gearLength));
    d.set_layout("ND");
    (*shapeData.mutable_attr())["index"] = intValue(int64_t(first.inputs.size()));
    root.add_input("ascend_mbatch_shape_data:0");

    std::string table;
    for (const GearModel& g : gears)
      for (int64_t v : g.values) {
        const int32_t x = static_cast<int32_t>(v);
        table.append(reinterpret_cast<const char*>(&x), 4);
      }
    ge::proto::OpDef& shapeConst = *root.add_op();
    shapeConst.set_name("ascend_mbatch_shape_const");
    shapeConst.set_type("Const");
    shapeConst.set_id(nextId++);
    auto& c = *shapeConst.add_output_desc();
    c.set_dtype(ge::proto::DT_INT32);
    c.mutable_shape()->add_dim(int64_t(gears.size() * gearLength));
    c.set_layout("ND");
    c.set_data_offset(weights.place(table));
    c.set_weight_size(int64_t(table.size()));

    ge::proto::OpDef& mapIndex = *root.add_op();
    mapIndex.set_name("ascend_mbatch_shape_mapindex");
    mapIndex.set_type("MapIndex");
    mapIndex.set_id(nextId++);
    mapIndex.add_input("ascend_mbatch_shape_data:0");
    mapIndex.add_input("ascend_mbatch_shape_const:0");
    mapIndex.add_output_desc()->set_dtype(ge::proto::DT_INT32);
  }
  ge::proto::OpDef& caseOp = *root.add_op();
  caseOp.set_name("ascend_mbatch_shape_case");
  caseOp.set_type("Case");
  caseOp.set_id(nextId++);
  caseOp.add_input("ascend_mbatch_shape_mapindex:0");
  for (const std::string& d : dataNames) caseOp.add_input(d + ":0");
  auto& caseAttrs = *caseOp.mutable_attr();
  caseAttrs["_batch_num"] = intValue(int64_t(gears.size()));
  for (size_t i = 0; i < gears.size(); ++i) caseAttrs["_pred_value_" + std::to_string(i)] = intList(gears[i].values);
  caseAttrs["mbatch_dynamic_type"] = intValue(gearOption == "dynamic_batch_size" ? 1 : gearOption == "dynamic_image_size" ? 2 : 3);
  caseAttrs["mbatch-inserted-node"].set_b(true);
  for (size_t o = 0; o < first.outputs.size(); ++o) {
    std::vector<const OmTensorInfo*> perGear;
    for (const OmParts& p : parts) perGear.push_back(&p.io.outputs[o]);
    std::vector<int64_t> maxDims, originDims;
    mergeDims(perGear, maxDims, originDims);
    *caseOp.add_output_desc() = withDims(outputDesc(largestGear(perGear), o), maxDims);
    OmTensorInfo io = first.outputs[o];
    io.dims = maxDims;
    out.io.outputs.push_back(io);
  }
  out.io.others.push_back(gearRecord(gearOption, gears));

  // Branches: each gear's graphs, renamed so they stay apart, its Data ops reading the Case's inputs.
  uint32_t taskId = 0;
  auto addTask = [&](uint32_t type, uint32_t stream) -> domi::TaskDef& {
    domi::TaskDef& t = *out.tasks.add_task();
    t.set_id(taskId++);
    t.set_type(type);
    t.set_stream_id(stream);
    return t;
  };
  addTask(10, 0).set_label_id(uint32_t(gears.size()));  // LABEL_SWITCH on the gear index
  uint32_t streams = 0, events = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    OmParts& p = parts[i];
    weights.adopt(p.model, p.weights);
    const std::string suffix = gearSuffix(i);
    const int64_t idBase = nextId;
    int64_t maxId = 0;
    for (int gi = 0; gi < p.model.graph_size(); ++gi) {
      ge::proto::GraphDef g = p.model.graph(gi);
      g.set_name(gi == 0 ? "Batch_" + std::to_string(i) : g.name() + suffix);
      for (auto& op : *g.mutable_op()) {
        op.set_name(op.name() + suffix);
        maxId = std::max(maxId, op.id());
        op.set_id(idBase + op.id());
        for (auto& in : *op.mutable_input()) in = renamedRef(in, suffix);
        for (auto& sub : *op.mutable_subgraph_name()) sub += suffix;
        if (gi == 0 && op.type() == "Data" && op.attr().count("index"))  // Case input 0 is the gear index
          (*op.mutable_attr())["_parent_node_index"] = intValue(op.attr().at("index").i() + 1);
        if (gi == 0 && op.type() == "Data" && op.attr().count("index"))
          (*op.mutable_attr())["_batch_label"].set_s("Batch_" + std::to_string(i));
      }
      for (auto& in : *g.mutable_input()) in = renamedRef(in, suffix);
      for (auto& o : *g.mutable_output()) o = renamedRef(o, suffix);
      *model.add_graph() = std::move(g);
    }
    caseOp.add_subgraph_name("Batch_" + std::to_string(i));
    nextId = idBase + maxId + 1;
    addTask(9, 0).set_label_id(uint32_t(i));  // LABEL_SET: gear i starts here
    for (const domi::TaskDef& t : p.tasks.task()) {
      if (t.type() == 19) continue;  // END_GRAPH: one for the whole model, below
      domi::TaskDef& copy = addTask(t.type(), t.stream_id());
      copy = t;
      copy.set_id(taskId - 1);
      if (copy.has_kernel())
        copy.mutable_kernel()->mutable_context()->set_op_index(uint32_t(idBase) + t.kernel().context().op_index());
    }
    if (i + 1 < parts.size()) addTask(11, 0).set_label_id(uint32_t(gears.size()));  // LABEL_GOTO past the others
    streams = std::max(streams, p.tasks.stream_num());
    events = std::max(events, p.tasks.event_num());
    out.memorySize = std::max(out.memorySize, p.memorySize);
    out.arenaBytes = std::max(out.arenaBytes, p.arenaBytes);
  }
  addTask(9, 0).set_label_id(uint32_t(gears.size()));  // LABEL_SET: after every gear
  addTask(19, 0);                                      // END_GRAPH
  ge::proto::OpDef& netOutput = *root.add_op();
  netOutput.set_name("NetOutput");
  netOutput.set_type("NetOutput");
  netOutput.set_id(nextId++);
  for (size_t o = 0; o < first.outputs.size(); ++o) {
    netOutput.add_input("ascend_mbatch_shape_case:" + std::to_string(o));
    *netOutput.add_input_desc() = caseOp.output_desc(int(o));
    root.add_output("ascend_mbatch_shape_case:" + std::to_string(o));
  }

  out.weights = weights.take();
  out.tasks.set_version("1");
  out.tasks.set_memory_size(uint64_t(out.memorySize));
  out.tasks.set_weight_size(out.weights.size());
  out.tasks.set_stream_num(streams);
  out.tasks.set_event_num(events);
  out.tasks.set_batch_num(uint32_t(gears.size()));
  auto& attrs = *model.mutable_attr();
  attrs = parts.front().model.attr();
  attrs["memory_size"] = intValue(out.memorySize);
  attrs["weight_size"] = intValue(int64_t(out.weights.size()));
  attrs["stream_num"] = intValue(streams);
  attrs["event_num"] = intValue(events);
  attrs["label_num"] = intValue(int64_t(gears.size()) + 1);
  attrs["batch_num"] = intValue(int64_t(gears.size()));
  attrs["_kiln.arena_bytes"] = intValue(out.arenaBytes);
  attrs["_kiln.gear_option"].set_s(gearOption);
  return assembleOmFile(out, options);
}

void writeGearOmFile(const std::vector<GearModel>& gears, const std::string& gearOption, const Options& options,
                     const std::string& path) {
  writeBytesFile(buildGearOmFile(gears, gearOption, options), path);
}

}  // namespace kiln::om
