#include "emulator/function_expander.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <mutex>

#include "io/onnx/onnx_reader.h"
#include "ir/opdefs/proto_convert.h"

namespace kiln {

namespace {

// The node as libonnx sees it (context-dependent bodies look at its attributes and input types).
onnx::NodeProto toNodeProto(const Node& n, const std::vector<const Tensor*>& tensors,
                            std::vector<onnx::TypeProto>* inputTypes) {
  onnx::NodeProto np;
  np.set_op_type(n.opType());
  np.set_domain(n.domain());
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    np.add_input(v ? "in" + std::to_string(i) : "");
    onnx::TypeProto tp;
    const Tensor* t = i < tensors.size() ? tensors[i] : nullptr;
    if (t)
      onnxio::toTypeProto(ValueType::tensor(t->dtype(), Shape::ofStatic(t->dims())), &tp);
    else if (v && v->type().known())
      onnxio::toTypeProto(v->type(), &tp);
    inputTypes->push_back(tp);
  }
  for (size_t i = 0; i < n.numOutputs(); ++i) np.add_output(n.output(i) ? "out" + std::to_string(i) : "");
  for (const NamedAttribute& a : n.attributes())
    onnxio::toAttributeProto(a.name, a.value, np.add_attribute(), true, nullptr, nullptr);
  return np;
}

// Replaces attribute references by the caller's values (or the schema's defaults); false when a referenced
// attribute has neither, which leaves the body unusable.
bool bindAttributes(onnx::NodeProto& body, const onnx::NodeProto& caller, const onnx::OpSchema* schema) {
  auto& attrs = *body.mutable_attribute();
  for (int i = 0; i < attrs.size();) {
    onnx::AttributeProto& a = attrs[i];
    if (a.ref_attr_name().empty()) {
      ++i;
      continue;
    }
    const onnx::AttributeProto* bound = nullptr;
    for (const auto& c : caller.attribute())
      if (c.name() == a.ref_attr_name()) bound = &c;
    if (!bound && schema) {
      auto it = schema->attributes().find(a.ref_attr_name());
      if (it != schema->attributes().end() && it->second.default_value.type() != onnx::AttributeProto::UNDEFINED)
        bound = &it->second.default_value;
    }
    if (!bound) {
      attrs.erase(attrs.begin() + i);  // an optional attribute the caller left out: the op's own default applies
      continue;
    }
    const std::string name = a.name();
    a = *bound;
    a.set_name(name);
    ++i;
  }
  for (auto& a : *body.mutable_attribute()) {
    if (a.has_g()) return false;  // bodies with nested graphs are not expanded
  }
  return true;
}

class Expander {
 public:
  explicit Expander(const Model& model) : model_(model) {
    for (const std::string& bytes : model.functionProtos) {
      onnx::FunctionProto f;
      if (f.ParseFromString(bytes)) local_[f.domain() + ":" + f.name()] = std::move(f);
    }
  }

  std::shared_ptr<Graph> operator()(const Node& n, const std::vector<const Tensor*>& tensors) {
    // Bodies depend on the input element types (and ranks, for some builders), so those are part of the key.
    std::string key;
    for (const Tensor* t : tensors)
      key += t ? std::string(dtypeName(t->dtype())) + std::to_string(t->dims().size()) + "," : "-,";
    if (!n.subgraphs().empty()) return nullptr;  // graph attributes: control flow or a body of its own, not a function
    std::lock_guard lock(mutex_);
    auto it = built_.find({&n, key});
    if (it != built_.end()) return it->second;
    std::shared_ptr<Graph> g;
    try {
      g = build(n, tensors);
    } catch (const std::exception&) {
      g = nullptr;  // a body libonnx cannot build for these types: the op stays unsupported
    }
    built_.emplace(std::make_pair(&n, key), g);
    return g;
  }

 private:
  std::shared_ptr<Graph> build(const Node& n, const std::vector<const Tensor*>& tensors) {
    std::vector<onnx::TypeProto> inputTypes;
    const onnx::NodeProto caller = toNodeProto(n, tensors, &inputTypes);
    onnx::FunctionProto body;
    const onnx::OpSchema* schema = nullptr;
    if (auto it = local_.find(n.domain() + ":" + n.opType()); it != local_.end()) {
      body = it->second;
    } else {
      const std::string domain = n.domain();
      schema = onnx::OpSchemaRegistry::Schema(n.opType(), static_cast<int>(model_.opsetFor(domain)), domain);
      if (!schema) return nullptr;
      if (schema->HasFunction() && schema->GetFunction()) {
        body = *schema->GetFunction();
      } else if (schema->HasContextDependentFunction()) {
        onnx::FunctionBodyBuildContextImpl ctx(caller, inputTypes);
        if (!schema->BuildContextDependentFunction(ctx, body)) return nullptr;
      } else {
        return nullptr;
      }
    }
    onnx::ModelProto mp;
    mp.set_ir_version(8);
    std::map<std::string, int64_t> opsets(model_.opsets.begin(), model_.opsets.end());
    for (const auto& o : body.opset_import()) opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
    for (const auto& [domain, version] : opsets) {
      auto* o = mp.add_opset_import();
      o->set_domain(domain);
      o->set_version(version);
    }
    onnx::GraphProto& gp = *mp.mutable_graph();
    gp.set_name(n.qualifiedType() + " body");
    // Formal inputs map positionally to the node's inputs; an omitted one becomes "" wherever the body reads it.
    std::map<std::string, std::string> rename;
    for (int i = 0; i < body.input_size(); ++i) {
      const bool present = i < static_cast<int>(n.numInputs()) && n.input(static_cast<size_t>(i));
      if (!present) rename[body.input(i)] = "";
      auto* vi = gp.add_input();
      vi->set_name(body.input(i));
      if (present && inputTypes[static_cast<size_t>(i)].has_tensor_type())
        *vi->mutable_type() = inputTypes[static_cast<size_t>(i)];
    }
    for (const auto& np : body.node()) {
      onnx::NodeProto& copy = *gp.add_node();
      copy = np;
      for (auto& in : *copy.mutable_input())
        if (auto r = rename.find(in); r != rename.end()) in = r->second;
      if (!bindAttributes(copy, caller, schema)) return nullptr;
    }
    // Only the outputs the node asks for: a body may leave an optional output (SoftmaxCrossEntropyLoss's log_prob)
    // undefined when the caller does not use it.
    for (int i = 0; i < body.output_size() && i < static_cast<int>(n.numOutputs()); ++i)
      gp.add_output()->set_name(body.output(i));
    OnnxImport imported = readOnnxBytes(mp.SerializeAsString(), n.qualifiedType() + " function body", "",
                                        {.runChecker = false});
    std::shared_ptr<Model> owner(std::move(imported.model));
    return std::shared_ptr<Graph>(owner, owner->graph.get());
  }

  const Model& model_;
  std::map<std::string, onnx::FunctionProto> local_;
  std::map<std::pair<const Node*, std::string>, std::shared_ptr<Graph>> built_;
  std::mutex mutex_;
};

}  // namespace

FunctionExpander makeFunctionExpander(const Model& model) {
  auto expander = std::make_shared<Expander>(model);
  return [expander](const Node& n, const std::vector<const Tensor*>& inputs) { return (*expander)(n, inputs); };
}

}  // namespace kiln
