#include "io/onnx/onnx_reader.h"

#include "ir/opdefs/op_registry.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <functional>
#include <unordered_map>
#include <set>
#include <unordered_set>

#include "ir/attribute_ranges.h"
#include "ir/opdefs/proto_convert.h"
#include "io/onnx/initializer_bytes_in_file.h"
#include "io/onnx/tensor_proto_reader.h"
#include "io/lenient/lenient_proto.h"
#include "ir/verifier.h"

namespace kiln {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

constexpr int kProtoRecursionLimit = 64 * 3 + 64;

// Names visible while converting one graph: its own values, then its ancestors'. Real files sometimes define one
// name twice (gpt2_past.onnx: a tool appended new Constant nodes writing the names of the originals it replaced).
// ONNX Runtime and the onnx Python tools resolve such a name to its LAST definition; so does Kiln, with a warning.
struct Scope {
  // Most names have one definition; only real duplicates pay for a vector.
  struct Definitions {
    long position = 0;
    Value* value = nullptr;
    std::vector<std::pair<long, Value*>> more;
  };
  const Scope* parent = nullptr;
  long positionInParent = 0;  // index of the owning node in the parent graph
  std::unordered_map<std::string, Definitions> names;  // position -1: inputs/initializers

  Value* lookupHere(const std::string& n, long /*position*/) const {
    auto it = names.find(n);
    if (it == names.end()) return nullptr;
    const Definitions& d = it->second;
    return d.more.empty() ? d.value : d.more.back().second;  // the last definition wins
  }
  Value* lookup(const std::string& n, long position) const {
    long pos = position;
    for (const Scope* s = this; s; pos = s->positionInParent, s = s->parent)
      if (Value* v = s->lookupHere(n, pos)) return v;
    return nullptr;
  }
};

class Importer {
 public:
  Importer(Model& model, onnxio::ExternalDataResolver* resolver, std::vector<std::string>& warnings)
      : model_(model), resolver_(resolver), warnings_(warnings) {}
  // The main graph's initializers whose raw_data the parse left in the mapped file, by position.
  void setInitializerBytesInFile(std::shared_ptr<const Storage> file,
                                 std::vector<std::optional<onnxio::InitializerBytes>> positions) {
    file_ = std::move(file);
    inFile_ = std::move(positions);
  }

  void importGraph(onnx::GraphProto& gp, Graph& g, const Scope* parentScope, long positionInParent, int depth);

 private:
  // `kind` and `name` make up the message subject ("input 'x'"), composed only when something is wrong.
  ValueType checkedType(const onnx::TypeProto& tp, const char* kind, const std::string& name);
  Attribute convertAttribute(onnx::AttributeProto& ap, Graph& g, const Scope& scope, long position,
                             const onnx::NodeProto& owner, int depth);
  void define(Scope& scope, const std::string& name, Value* v, long position);
  std::set<std::string> redefined_;
  bool minusOneWarned_ = false;

  Model& model_;
  onnxio::ExternalDataResolver* resolver_;
  std::vector<std::string>& warnings_;
  std::shared_ptr<const Storage> file_;
  std::vector<std::optional<onnxio::InitializerBytes>> inFile_;
};

ValueType Importer::checkedType(const onnx::TypeProto& tp, const char* kind, const std::string& name) {
  auto subject = [&] { return *kind ? std::string(kind) + " '" + name + "'" : name; };
  std::function<void(const onnx::TypeProto&)> check = [&](const onnx::TypeProto& t) {
    const onnx::TensorShapeProto* shape = nullptr;
    if (t.has_tensor_type()) {
      if (t.tensor_type().elem_type() != 0 && !dtypeFromOnnx(t.tensor_type().elem_type()))
        fail(subject() + " has unknown element type " + std::to_string(t.tensor_type().elem_type()));
      if (t.tensor_type().has_shape()) shape = &t.tensor_type().shape();
    } else if (t.has_sparse_tensor_type() && t.sparse_tensor_type().has_shape()) {
      shape = &t.sparse_tensor_type().shape();
    } else if (t.has_sequence_type() && t.sequence_type().has_elem_type()) {
      check(t.sequence_type().elem_type());
    } else if (t.has_optional_type() && t.optional_type().has_elem_type()) {
      check(t.optional_type().elem_type());
    } else if (t.has_map_type() && t.map_type().has_value_type()) {
      check(t.map_type().value_type());
    }
    if (!shape) return;
    std::vector<int64_t> staticDims;
    for (const auto& d : shape->dim()) {
      if (!d.has_dim_value()) continue;
      if (d.dim_value() == -1) {
        // Some exporters write -1 for "unknown" in type declarations (never valid in tensor data).
        if (!minusOneWarned_) warnings_.push_back(subject() + " uses dim_value -1; read as an unknown dimension");
        minusOneWarned_ = true;
        continue;
      }
      if (d.dim_value() < 0) fail(subject() + " has negative dimension " + std::to_string(d.dim_value()));
      staticDims.push_back(d.dim_value());
    }
    if (!checkedProduct(staticDims)) fail(subject() + " has dimensions whose product overflows int64");
  };
  check(tp);
  return onnxio::fromTypeProto(tp);
}

void Importer::define(Scope& scope, const std::string& name, Value* v, long position) {
  if (name.empty()) return;
  auto [it, fresh] = scope.names.try_emplace(name);
  Scope::Definitions& defs = it->second;
  if (fresh) {
    defs.position = position;
    defs.value = v;
    return;
  }
  if (position < 0 && defs.position < 0) fail("graph input or initializer '" + name + "' is defined more than once");
  if (redefined_.insert(name).second && redefined_.size() <= 20)
    warnings_.push_back("value '" + name + "' is defined more than once; every use takes its last definition");
  defs.more.emplace_back(position, v);
}

Attribute Importer::convertAttribute(onnx::AttributeProto& ap, Graph& g, const Scope& scope, long position,
                                     const onnx::NodeProto& owner, int depth) {
  using AP = onnx::AttributeProto;
  // Simple attributes (the vast majority) never need a message.
  switch (ap.type()) {
    case AP::FLOAT: return Attribute(ap.f());
    case AP::INT: return Attribute(static_cast<int64_t>(ap.i()));
    case AP::STRING: return Attribute(ap.s());
    case AP::INTS: return Attribute(std::vector<int64_t>(ap.ints().begin(), ap.ints().end()));
    case AP::FLOATS: return Attribute(std::vector<float>(ap.floats().begin(), ap.floats().end()));
    default: break;
  }
  const std::string where = "node '" + owner.name() + "' (" + owner.op_type() + ") attribute '" + ap.name() + "'";
  auto type = ap.type();
  if (type == AP::UNDEFINED) {  // very old exporters: deduce from the field present
    if (ap.has_f()) type = AP::FLOAT;
    else if (ap.has_i()) type = AP::INT;
    else if (ap.has_s()) type = AP::STRING;
    else if (ap.has_t()) type = AP::TENSOR;
    else if (ap.has_g()) type = AP::GRAPH;
    else if (ap.floats_size()) type = AP::FLOATS;
    else if (ap.ints_size()) type = AP::INTS;
    else if (ap.strings_size()) type = AP::STRINGS;
    else if (ap.tensors_size()) type = AP::TENSORS;
    else if (ap.graphs_size()) type = AP::GRAPHS;
    else fail(where + " has no value");
  }
  auto subgraph = [&](onnx::GraphProto& gp) {
    auto sg = g.makeSubgraph(gp.name());
    importGraph(gp, *sg, &scope, position, depth + 1);
    return sg;
  };
  switch (type) {
    case AP::FLOAT: return Attribute(ap.f());
    case AP::INT: return Attribute(static_cast<int64_t>(ap.i()));
    case AP::STRING: return Attribute(ap.s());
    case AP::TENSOR: return Attribute(onnxio::tensorFromProto(*ap.mutable_t(), resolver_, where));
    case AP::GRAPH: return Attribute(subgraph(*ap.mutable_g()));
    case AP::FLOATS: return Attribute(std::vector<float>(ap.floats().begin(), ap.floats().end()));
    case AP::INTS: return Attribute(std::vector<int64_t>(ap.ints().begin(), ap.ints().end()));
    case AP::STRINGS: return Attribute(std::vector<std::string>(ap.strings().begin(), ap.strings().end()));
    case AP::TENSORS: {
      std::vector<Tensor> ts;
      for (auto& t : *ap.mutable_tensors()) ts.push_back(onnxio::tensorFromProto(t, resolver_, where));
      return Attribute(std::move(ts));
    }
    case AP::GRAPHS: {
      std::vector<Attribute::GraphPtr> gs;
      for (auto& sg : *ap.mutable_graphs()) gs.push_back(subgraph(sg));
      return Attribute(std::move(gs));
    }
    case AP::TYPE_PROTO: return Attribute(checkedType(ap.tp(), "", where));
    case AP::TYPE_PROTOS: {
      std::vector<ValueType> ts;
      for (const auto& t : ap.type_protos()) ts.push_back(checkedType(t, "", where));
      return Attribute(std::move(ts));
    }
    case AP::SPARSE_TENSOR: return Attribute(onnxio::denseFromSparse(*ap.mutable_sparse_tensor(), resolver_, where));
    case AP::SPARSE_TENSORS: {
      std::vector<Tensor> ts;
      for (auto& t : *ap.mutable_sparse_tensors()) ts.push_back(onnxio::denseFromSparse(t, resolver_, where));
      return Attribute(std::move(ts));
    }
    default:
      fail(where + " has unknown attribute type " + std::to_string(static_cast<int>(type)));
  }
}

void Importer::importGraph(onnx::GraphProto& gp, Graph& g, const Scope* parentScope, long positionInParent,
                           int depth) {
  if (depth > 64) fail("subgraphs nested more than 64 deep");
  Scope scope;
  scope.parent = parentScope;
  scope.positionInParent = positionInParent;
  scope.names.reserve(static_cast<size_t>(gp.initializer_size() + gp.input_size() + gp.node_size() * 2));
  g.setName(gp.name());
  const std::string gname = gp.name().empty() ? std::string("graph") : "graph '" + gp.name() + "'";

  for (int i = 0; i < gp.initializer_size(); ++i) {
    onnx::TensorProto& init = *gp.mutable_initializer(i);
    const std::string what = "initializer '" + init.name() + "'";
    if (init.name().empty()) fail(gname + ": an initializer has no name");
    const auto at = static_cast<size_t>(i);
    const onnxio::InitializerBytes* left = depth == 0 && at < inFile_.size() && inFile_[at] ? &*inFile_[at] : nullptr;
    onnxio::RawDataInFile raw;
    if (left) raw = {file_, left->offset, left->size};
    Tensor t = onnxio::tensorFromProto(init, resolver_, what, left ? &raw : nullptr);
    Value* v = g.addInitializer(init.name(), std::move(t));
    v->setDocString(init.doc_string());
    define(scope, init.name(), v, -1);
  }
  for (auto& sp : *gp.mutable_sparse_initializer()) {
    const std::string name = sp.values().name();
    if (name.empty()) fail(gname + ": a sparse initializer has no name");
    Value* v = g.addInitializer(name, onnxio::denseFromSparse(sp, resolver_, "sparse initializer '" + name + "'"));
    define(scope, name, v, -1);
  }

  for (const auto& in : gp.input()) {
    if (in.name().empty()) fail(gname + ": a graph input has no name");
    ValueType t = checkedType(in.type(), "input", in.name());
    if (Value* init = scope.lookupHere(in.name(), -1)) {
      // Pre-IR-4 models list initializers as inputs too; the initializer is the definition.
      if (t.known() && t.dtype != DType::Undefined && init->type().dtype != t.dtype)
        fail("input '" + in.name() + "' disagrees with its initializer's data type");
      continue;
    }
    Value* v = g.addInput(in.name(), std::move(t));
    v->setDocString(in.doc_string());
    define(scope, in.name(), v, -1);
  }

  // Pass 1: create every node with its outputs so that out-of-order files still resolve.
  std::vector<std::pair<onnx::NodeProto*, Node*>> created;
  created.reserve(static_cast<size_t>(gp.node_size()));
  long position = 0;
  for (auto& np : *gp.mutable_node()) {
    if (np.op_type().empty()) fail(gname + ": a node has no op_type");
    std::vector<std::string> outs(np.output().begin(), np.output().end());
    Node* n = g.addNode(np.op_type(), {}, outs, np.name(), np.domain() == "ai.onnx" ? "" : np.domain());
    n->setDocString(np.doc_string());
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].empty()) continue;  // omitted optional output: keep the slot, drop the value below
      define(scope, outs[i], n->output(i), position);
    }
    created.emplace_back(&np, n);
    ++position;
  }
  // Omitted optional outputs ("") become null slots.
  for (auto& [np, n] : created)
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (np->output(static_cast<int>(i)).empty()) g.clearNodeOutput(n, i);

  // Pass 2: inputs and attributes (subgraphs see every name of this graph).
  position = 0;
  for (auto& [np, n] : created) {
    auto what = [np = np] { return "node '" + np->name() + "' (" + np->op_type() + ")"; };
    std::vector<Value*> ins;
    ins.reserve(static_cast<size_t>(np->input_size()));
    for (const auto& name : np->input()) {
      if (name.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      Value* v = scope.lookup(name, position);
      if (!v) fail(what() + " uses '" + name + "', which is not defined");
      ins.push_back(v);
    }
    g.setNodeInputs(n, ins);
    for (int a = 0; a < np->attribute_size(); ++a) {
      auto& ap = *np->mutable_attribute(a);
      for (int b = 0; b < a; ++b)
        if (np->attribute(b).name() == ap.name()) fail(what() + " has attribute '" + ap.name() + "' twice");
      if (!ap.ref_attr_name().empty()) fail(what() + " attribute '" + ap.name() + "' refers to a function attribute");
      n->setAttr(ap.name(), convertAttribute(ap, g, scope, position, *np, depth));
    }
    ++position;
  }

  const long end = position;
  for (const auto& vi : gp.value_info()) {
    Value* v = scope.lookupHere(vi.name(), end);
    if (!v) continue;  // value_info for a name that does not exist: ignore, as onnx does
    v->setType(checkedType(vi.type(), "value_info", vi.name()));
  }

  for (const auto& out : gp.output()) {
    Value* v = scope.lookup(out.name(), end);
    if (!v) fail(gname + ": output '" + out.name() + "' is not defined");
    ValueType declared = checkedType(out.type(), "output", out.name());
    if (v->graph() != &g) {
      // A subgraph returning an outer value directly: route it through an Identity so the output belongs here.
      Node* id = g.addNode("Identity", {v}, {out.name() + "_captured"}, out.name() + "_capture");
      v = id->output(0);
    }
    if (declared.known() && (!v->type().known() || !v->constant())) v->setType(declared);
    g.addOutput(v);
  }

  if (!g.sortTopologically()) fail(gname + " contains a cycle");
}

// Whether the walk below would find nothing in a node or a value info: no unknown field in it or in its parts, and
// no part of a kind checked only by the walk (an attribute's tensor or graph, a non-tensor type). Nodes and value
// infos are most of a model's messages, and the generated accessors answer at once what the walk's reflection
// (listing every set field of every message) answers slowly: on a 2k-node llama the walk was 2 of the 13 ms of
// loading. Any other is walked as before.
bool plainNode(const onnx::NodeProto& node) {
  if (node.unknown_fields().field_count()) return false;
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.unknown_fields().field_count() || a.has_t() || a.has_g() || a.has_sparse_tensor() || a.has_tp() ||
        a.tensors_size() || a.graphs_size() || a.sparse_tensors_size() || a.type_protos_size())
      return false;
  return true;
}

bool plainValueInfo(const onnx::ValueInfoProto& v) {
  if (v.unknown_fields().field_count()) return false;
  if (!v.has_type()) return true;
  const onnx::TypeProto& t = v.type();
  if (t.unknown_fields().field_count() || t.value_case() != onnx::TypeProto::kTensorType) return false;
  const onnx::TypeProto_Tensor& tt = t.tensor_type();
  if (tt.unknown_fields().field_count()) return false;
  if (!tt.has_shape()) return true;
  if (tt.shape().unknown_fields().field_count()) return false;
  for (const onnx::TensorShapeProto_Dimension& d : tt.shape().dim())
    if (d.unknown_fields().field_count()) return false;
  return true;
}

// Protobuf keeps a field whose wire type does not match its declaration as an unknown field instead of failing.
// For a field number the schema knows, that is a corrupt file (a graph sent as a varint...): refused. Field
// numbers the schema does not know (a newer ONNX) are counted for a warning. Walks every message once.
void checkUnknownFields(const google::protobuf::Message& msg,
                        std::vector<std::pair<const google::protobuf::FieldDescriptor*, int>>& at, size_t& unknown) {
  const google::protobuf::Reflection* r = msg.GetReflection();
  const google::protobuf::Descriptor* d = msg.GetDescriptor();
  const google::protobuf::UnknownFieldSet& u = r->GetUnknownFields(msg);
  for (int i = 0; i < u.field_count(); ++i) {
    const auto* f = d->FindFieldByNumber(u.field(i).number());
    if (!f) {
      ++unknown;
      continue;
    }
    // A varint for an enum field is a value this ONNX does not know (proto2 keeps it here): the importer judges it.
    if (f->type() == google::protobuf::FieldDescriptor::TYPE_ENUM &&
        u.field(i).type() == google::protobuf::UnknownField::TYPE_VARINT)
      continue;
    std::string path = "model";  // built only now: the walk itself stays allocation-free
    for (const auto& [field, index] : at)
      path += "." + field->name() + (index >= 0 ? "[" + std::to_string(index) + "]" : "");
    fail(path + "." + f->name() + " (field " + std::to_string(f->number()) + " of " + d->full_name() +
         ") has the wrong wire type: corrupt file");
  }
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(msg, &fields);
  static const google::protobuf::Descriptor* const nodeType = onnx::NodeProto::descriptor();
  static const google::protobuf::Descriptor* const valueInfoType = onnx::ValueInfoProto::descriptor();
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const int n = f->is_repeated() ? r->FieldSize(msg, f) : 1;
    const google::protobuf::Descriptor* type = f->message_type();
    for (int i = 0; i < n; ++i) {
      const google::protobuf::Message& child =
          f->is_repeated() ? r->GetRepeatedMessage(msg, f, i) : r->GetMessage(msg, f);
      if (type == nodeType && plainNode(static_cast<const onnx::NodeProto&>(child))) continue;
      if (type == valueInfoType && plainValueInfo(static_cast<const onnx::ValueInfoProto&>(child))) continue;
      at.emplace_back(f, f->is_repeated() ? i : -1);
      checkUnknownFields(child, at, unknown);
      at.pop_back();
    }
  }
}

// ONNX forbids recursive functions; libonnx's inference (and any expansion) would recurse until the stack runs
// out. Refuses a model-local function that reaches itself through calls of local functions (nodes of its body and
// of the graphs its nodes hold).
void refuseRecursiveFunctions(const onnx::ModelProto& proto) {
  std::unordered_map<std::string, const onnx::FunctionProto*> local;
  for (const auto& f : proto.functions()) local[f.domain() + ":" + f.name()] = &f;
  std::unordered_map<std::string, std::set<std::string>> calls;
  std::function<void(const google::protobuf::RepeatedPtrField<onnx::NodeProto>&, std::set<std::string>&)> collect =
      [&](const auto& nodes, std::set<std::string>& out) {
        for (const auto& n : nodes) {
          const std::string callee = (n.domain() == "ai.onnx" ? "" : n.domain()) + ":" + n.op_type();
          if (local.count(callee)) out.insert(callee);
          for (const auto& a : n.attribute()) {
            if (a.has_g()) collect(a.g().node(), out);
            for (const auto& g : a.graphs()) collect(g.node(), out);
          }
        }
      };
  for (const auto& [name, f] : local) collect(f->node(), calls[name]);
  enum class Mark { None, Active, Done };
  std::unordered_map<std::string, Mark> mark;
  std::function<void(const std::string&, const std::string&)> visit = [&](const std::string& fn, const std::string& chain) {
    Mark& m = mark[fn];
    if (m == Mark::Done) return;
    if (m == Mark::Active) fail("model-local function '" + fn + "' is recursive (" + chain + "); ONNX forbids recursion");
    m = Mark::Active;
    for (const std::string& callee : calls[fn]) visit(callee, chain + " -> " + callee);
    mark[fn] = Mark::Done;
  };
  for (const auto& [name, f] : local) visit(name, name);
}

// Strides, dilations, kernel sizes, block sizes and groups of 0 or less are invalid ONNX, and a zero divides by zero
// in libonnx's shape inference (SIGFPE): refused in the graph, its subgraphs and the model's functions.
void refuseNonPositiveAttributes(const onnx::ModelProto& proto) {
  std::function<void(const google::protobuf::RepeatedPtrField<onnx::NodeProto>&, const std::string&)> check =
      [&](const auto& nodes, const std::string& where) {
        for (const auto& n : nodes) {
          for (const auto& a : n.attribute()) {
            if (attributeMustBePositive(a.name())) {
              auto refuse = [&](int64_t v) {
                fail(where + "node '" + n.name() + "' (" + n.op_type() + "): " + nonPositiveAttributeMessage(a.name(), v));
              };
              if (a.has_i() && a.i() < 1) refuse(a.i());
              for (int64_t v : a.ints())
                if (v < 1) refuse(v);
            }
            if (a.has_g()) check(a.g().node(), where);
            for (const auto& g : a.graphs()) check(g.node(), where);
          }
        }
      };
  check(proto.graph().node(), "");
  for (const auto& f : proto.functions()) check(f.node(), "function '" + f.name() + "': ");
}

// A mapping of a model file that tensors refer to (the weights left in the file by the parse).
class MappedRegion final : public Storage {
 public:
  MappedRegion(void* addr, size_t size) : addr_(addr), size_(size) {}
  ~MappedRegion() override { ::munmap(addr_, size_); }
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  const uint8_t* data() const override { return static_cast<const uint8_t*>(addr_); }
  size_t size() const override { return size_; }

 private:
  void* addr_;
  size_t size_;
};

// A file's bytes for the parse: mapped read-only from the page cache where possible, with no copy and no zeroed
// buffer (reading a 400 MB model into a string cost a third of its compile), else read into a string. A file
// truncated by another process while it is mapped is not guarded against (SIGBUS), as with any mapped read.
class FileBytes {
 public:
  FileBytes(const std::string& path, uint64_t maxBytes) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw LoadError(path, "cannot open: no such file");
    if (S_ISDIR(st.st_mode)) throw LoadError(path, "is a directory, not an ONNX file");
    if (static_cast<uint64_t>(st.st_size) > maxBytes)
      throw LoadError(path, "file is " + std::to_string(st.st_size) + " bytes, above the " +
                                std::to_string(maxBytes) + "-byte limit for a single ONNX protobuf");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw LoadError(path, "cannot open for reading");
    struct stat opened {};
    if (S_ISREG(st.st_mode) && ::fstat(fd, &opened) == 0 && opened.st_size == st.st_size && st.st_size > 0) {
      void* m = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) {
        ::madvise(m, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
        map_ = m;
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    ::close(fd);
    if (map_) return;
    std::ifstream f(path, std::ios::binary);
    if (!f) throw LoadError(path, "cannot open for reading");
    copy_.assign(static_cast<size_t>(st.st_size), '\0');
    f.read(copy_.data(), static_cast<std::streamsize>(copy_.size()));
    if (static_cast<size_t>(f.gcount()) != copy_.size()) throw LoadError(path, "short read");
  }
  ~FileBytes() { release(); }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  std::string_view view() const {
    return map_ ? std::string_view(static_cast<const char*>(map_), size_) : std::string_view(copy_);
  }
  bool mapped() const { return map_ != nullptr; }
  // The mapping, handed over to live as long as the tensors that refer to it; this object no longer has it.
  std::shared_ptr<const Storage> keepMapping() {
    // Read once in order no more: the passes read the weights as they come to them.
    ::madvise(map_, size_, MADV_NORMAL);
    auto kept = std::make_shared<MappedRegion>(map_, size_);
    map_ = nullptr;
    return kept;
  }
  // Once parsed, the model holds copies of everything it needs.
  void release() {
    if (map_) ::munmap(map_, size_);
    map_ = nullptr;
    std::string().swap(copy_);
  }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string copy_;
};

std::string dirOf(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The bytes for protobuf in chunks. From a mapped file, each chunk the parse has moved past is dropped from the
// process (the parse has copied what it keeps by then): the mapping and the parsed weights are not both resident,
// which kept a 435 MB model's load at twice its weights.
class ChunkedInput final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  ChunkedInput(std::string_view bytes, bool dropConsumed) : bytes_(bytes), drop_(dropConsumed) {}
  bool Next(const void** data, int* size) override {
    if (pos_ >= bytes_.size()) return false;
    dropBefore(pos_);  // protobuf may back up into the chunk it holds, never into earlier ones
    const size_t n = std::min(kChunk, bytes_.size() - pos_);
#ifdef MADV_POPULATE_READ
    // Maps the chunk's pages in one call rather than a fault per few pages (a kernel without it says EINVAL).
    if (drop_ && pos_ >= populated_) {
      const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
      const size_t from = pos_ / page * page, to = std::min(bytes_.size(), pos_ + kChunk);
      ::madvise(const_cast<char*>(bytes_.data()) + from, to - from, MADV_POPULATE_READ);
      populated_ = to;
    }
#endif
    *data = bytes_.data() + pos_;
    *size = static_cast<int>(n);
    pos_ += n;
    return true;
  }
  void BackUp(int count) override {
    pos_ -= static_cast<size_t>(count);
  }
  bool Skip(int count) override {
    const size_t n = std::min(static_cast<size_t>(count), bytes_.size() - pos_);
    pos_ += n;
    return n == static_cast<size_t>(count);
  }
  int64_t ByteCount() const override { return static_cast<int64_t>(pos_); }

 private:
  static constexpr size_t kChunk = size_t{16} << 20;
  void dropBefore(size_t end) {
    if (!drop_) return;
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t to = end / page * page;
    if (to <= dropped_) return;
    ::madvise(const_cast<char*>(bytes_.data()) + dropped_, to - dropped_, MADV_DONTNEED);
    dropped_ = to;
  }
  std::string_view bytes_;
  bool drop_;
  size_t pos_ = 0, dropped_ = 0, populated_ = 0;
};

// The main graph's initializers whose bytes stay in the mapped model file (initializer_bytes_in_file.h).
struct WeightsInFile {
  std::shared_ptr<const Storage> file;
  std::vector<std::optional<onnxio::InitializerBytes>> initializers;
};

// The import of a model's bytes; `releaseBytes` frees them once they are parsed (before the graph is built, which
// would otherwise hold the model's weights twice). `weights`: initializers whose bytes the parse left in the file.
OnnxImport importBytes(std::string_view bytes, bool mapped, const std::function<void()>& releaseBytes,
                       const std::string& displayName, const std::string& baseDir, const OnnxReadOptions& options,
                       WeightsInFile* weights = nullptr) {
  if (bytes.empty()) throw LoadError(displayName, "file is empty");
  if (bytes.size() > INT_MAX) throw LoadError(displayName, "file exceeds protobuf's 2 GiB message limit");
  // An arena makes parsing and, above all, freeing the hundreds of thousands of small messages of a big model
  // cheap (one release of a few large blocks instead of a free per message).
  google::protobuf::ArenaOptions arenaOptions;
  arenaOptions.start_block_size = 64 * 1024;
  arenaOptions.max_block_size = 8 * 1024 * 1024;
  google::protobuf::Arena arena(arenaOptions);
  onnx::ModelProto& proto = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  {
    ChunkedInput raw(bytes, mapped);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    // Room for the 64 levels of subgraphs the importer accepts (graph -> node -> attribute -> graph is three
    // messages a level), so a deeper model gets that message rather than a parse failure.
    coded.SetRecursionLimit(kProtoRecursionLimit);
    if (!proto.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
      throw LoadError(displayName, "not a valid ONNX model (protobuf parse failed: truncated, not ONNX, or messages "
                                   "nested deeper than " + std::to_string(kProtoRecursionLimit) + " levels)");
  }
  releaseBytes();
  if (!proto.has_graph()) throw LoadError(displayName, "not a valid ONNX model (no graph)");
  size_t unknownFields = 0;
  try {
    std::vector<std::pair<const google::protobuf::FieldDescriptor*, int>> at;
    checkUnknownFields(proto, at, unknownFields);
    refuseRecursiveFunctions(proto);
    refuseNonPositiveAttributes(proto);
  } catch (const std::exception& e) {
    throw LoadError(displayName, e.what());
  }

  OnnxImport result;
  if (unknownFields)
    result.warnings.push_back(std::to_string(unknownFields) + " protobuf field(s) unknown to ONNX 1.12 ignored");
  result.model = std::make_unique<Model>();
  Model& m = *result.model;
  m.sourcePath = displayName;
  m.irVersion = proto.ir_version();
  m.producerName = proto.producer_name();
  m.producerVersion = proto.producer_version();
  m.domain = proto.domain();
  m.modelVersion = proto.model_version();
  m.docString = proto.doc_string();
  for (const auto& op : proto.opset_import()) {
    const std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
    m.opsets[d] = op.version();
  }
  // An opset no ONNX release has defined (or one newer than Kiln knows) would be read with another version's meaning.
  if (auto it = m.opsets.find(""); it != m.opsets.end() && (it->second < 1 || it->second > OpRegistry::newestOnnxOpset()))
    throw LoadError(displayName, "imports ai.onnx opset " + std::to_string(it->second) + ", which Kiln does not know: " +
                                     "it reads opsets 1 to " + std::to_string(OpRegistry::newestOnnxOpset()));
  if (!m.opsets.count("")) {
    if (proto.ir_version() >= 3)
      result.warnings.push_back("model imports no default-domain opset; assuming opset 1");
    m.opsets[""] = 1;
  }
  for (const auto& p : proto.metadata_props()) m.metadata.emplace_back(p.key(), p.value());
  for (const auto& f : proto.functions()) {
    m.functionProtos.push_back(f.SerializeAsString());
    m.localFunctionNames.push_back(f.domain() + ":" + f.name());
  }

  if (options.runChecker) {
    try {
      onnx::checker::CheckerContext ctx;
      ctx.set_ir_version(static_cast<int>(proto.ir_version()));
      std::unordered_map<std::string, int> opsets;
      for (const auto& [d, v] : m.opsets) opsets[d] = static_cast<int>(v);
      ctx.set_opset_imports(opsets);
      onnx::checker::LexicalScopeContext lex;
      // The checker only stats external files (our resolver maps them after validating the path).
      ctx.set_model_dir(baseDir);
      onnx::checker::check_graph(proto.graph(), ctx, lex);
    } catch (const std::exception& e) {
      std::string msg;
      for (char c : std::string(e.what())) {
        if (c == '\n' || c == '\r') c = ' ';
        if (!(c == ' ' && !msg.empty() && msg.back() == ' ')) msg += c;
      }
      if (msg.size() > 300) msg = msg.substr(0, 297) + "...";
      result.warnings.push_back("onnx checker: " + msg);
    }
  }

  try {
    std::unique_ptr<onnxio::ExternalDataResolver> resolver;
    if (!baseDir.empty()) resolver = std::make_unique<onnxio::ExternalDataResolver>(baseDir);
    Importer imp(m, resolver.get(), result.warnings);
    if (weights) imp.setInitializerBytesInFile(std::move(weights->file), std::move(weights->initializers));
    imp.importGraph(*proto.mutable_graph(), *m.graph, nullptr, 0, 0);
  } catch (const LoadError&) {
    throw;
  } catch (const std::exception& e) {
    throw LoadError(displayName, e.what());
  }
  return result;
}

}  // namespace

OnnxImport readOnnxBytes(std::string bytes, const std::string& displayName, const std::string& baseDir,
                         const OnnxReadOptions& options) {
  return importBytes(bytes, false, [&bytes] { std::string().swap(bytes); }, displayName, baseDir, options);
}

OnnxImport readOnnxFile(const std::string& path, const OnnxReadOptions& options) {
  FileBytes bytes(path, options.maxFileBytes);
  if (options.weightsStayInFile && bytes.mapped()) {
    // Initializers of a KiB and more stay in the file; smaller ones are not worth a slice each.
    if (auto left = onnxio::leaveInitializerBytesInFile(bytes.view(), 1024)) {
      WeightsInFile weights{bytes.keepMapping(), std::move(left->initializers)};
      std::string proto = std::move(left->proto);
      return importBytes(proto, false, [&proto] { std::string().swap(proto); }, path, dirOf(path), options,
                         &weights);
    }
  }
  return importBytes(bytes.view(), bytes.mapped(), [&bytes] { bytes.release(); }, path, dirOf(path), options);
}

OnnxImport readOnnxText(const std::string& path, const OnnxReadOptions& options) {
  google::protobuf::Arena arena;
  auto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  lenient::ParseReport report;
  {
    FileBytes text(path, options.maxFileBytes);
    lenient::parseText(text.view(), model, path, report);
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw LoadError(path, "the model in text is too large to import");
  OnnxImport imp = readOnnxBytes(std::move(bytes), path, dirOf(path), options);
  if (std::string s = lenient::summarize(report); !s.empty()) imp.warnings.insert(imp.warnings.begin(), s);
  return imp;
}

}  // namespace kiln
