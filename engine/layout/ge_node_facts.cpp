#include "layout/ge_node_facts.h"

namespace kiln::layout {
namespace {

std::string text(const Json& v) {
  if (v.isString()) return v.asString();
  if (v.isArray()) {
    std::string s;
    for (const Json& x : v.asArray()) s += (s.empty() ? "" : ", ") + text(x);
    return s;
  }
  return v.dump();
}

const Json* find(const Json& obj, const char* key) { return obj.isObject() ? obj.find(key) : nullptr; }

}  // namespace

std::vector<NodeFact> geNodeFacts(const Json& attrs, const Json& annotations) {
  std::vector<NodeFact> out;
  auto add = [&](const char* label, const Json* v) {
    if (v && !v->isNull() && !(v->isArray() && v->asArray().empty()) && !(v->isString() && v->asString().empty()))
      out.push_back({label, text(*v)});
  };
  add("absorbed framework ops", find(attrs, "_datadump_original_op_names"));
  add("fused by GE pass", find(attrs, "pass_name"));
  const Json* kernel = find(annotations, "om.kernel_name");
  if (!kernel && attrs.isObject())
    for (const auto& [k, v] : attrs.asObject())
      if (k.ends_with("_kernelname") && v.isString()) kernel = &v;
  add("kernel", kernel);
  const Json* lib = find(attrs, "_ge_attr_op_kernel_lib_name");
  add("kernel library", lib ? lib : find(attrs, "_lxfusion_op_kernel_lib_name"));
  add("GE engine", find(attrs, "_lxfusion_engine_name"));
  add("stream", find(annotations, "om.stream_id"));
  const Json* blocks = find(annotations, "om.block_dim");
  add("block dim", blocks ? blocks : find(attrs, "tvm_blockdim"));
  add("task", find(annotations, "om.task"));
  add("input offsets", find(annotations, "om.input_offsets"));
  add("output offsets", find(annotations, "om.output_offsets"));
  add("workspace bytes", find(annotations, "om.workspace_bytes"));
  int raw = 0;
  if (attrs.isObject())
    for (const auto& [k, v] : attrs.asObject()) raw += k.starts_with("raw.");
  if (raw) out.push_back({"fields Kiln's schema does not know", std::to_string(raw) + " (the raw.* attributes)"});
  return out;
}

}  // namespace kiln::layout
