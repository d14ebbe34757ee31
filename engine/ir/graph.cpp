#include "ir/graph.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

namespace kiln {

// ---------------------------------------------------------------- Value / Node

namespace {
bool isGraphKind(const Attribute& a) {
  return a.kind() == Attribute::Kind::Graph || a.kind() == Attribute::Kind::Graphs;
}
}  // namespace

void Value::touch() {
  IdSource& ids = graph_->ids();
  ids.definitionRevision = revision_ = ++ids.revision;
}
void Value::setName(std::string n) {
  name_ = std::move(n);
  touch();
}
void Value::setType(ValueType t) {
  if (t == type_) return;  // re-inference that finds nothing new is not a change
  type_ = std::move(t);
  touch();
}
void Value::setDocString(std::string d) {
  doc_ = std::move(d);
  touch();
}
void Value::setConstant(Tensor t) {
  constant_ = std::move(t);
  touch();
}

void Node::touch() {
  IdSource& ids = graph_->ids();
  ids.definitionRevision = definitionRevision_ = revision_ = ++ids.revision;
}
void Node::touchAnnotations() { revision_ = ++graph_->ids().revision; }
void Node::setOpType(std::string t) {
  opType_ = std::move(t);
  touch();
}
void Node::setDomain(std::string d) {
  domain_ = std::move(d);
  touch();
}
void Node::setName(std::string n) {
  name_ = std::move(n);
  touch();
}
void Node::setDocString(std::string d) {
  doc_ = std::move(d);
  touch();
}

std::string Node::qualifiedType() const {
  if (domain_.empty() || domain_ == "ai.onnx") return opType_;
  return domain_ + ":" + opType_;
}

bool Node::hasQualifiedType(std::string_view qualified) const {
  if (domain_.empty() || domain_ == "ai.onnx") return qualified == opType_;
  return qualified.size() == domain_.size() + 1 + opType_.size() && qualified.starts_with(domain_) &&
         qualified[domain_.size()] == ':' && qualified.ends_with(opType_);
}

const Attribute* Node::attr(std::string_view name) const {
  for (const auto& a : attrs_)
    if (a.name == name) return &a.value;
  return nullptr;
}

void Node::setAttr(std::string name, Attribute value) {
  auto adopt = [this](const Attribute::GraphPtr& g) {
    if (g) {
      g->parent_ = graph_;
      g->owner_ = this;
      g->ownerId_ = id_;
    }
  };
  if (auto g = value.get<Attribute::GraphPtr>()) adopt(*g);
  if (auto gs = value.get<std::vector<Attribute::GraphPtr>>())
    for (auto& g : *gs) adopt(g);
  touch();
  attrsRevision_ = revision_;
  const bool held = hasSubgraphs();
  graphAttrs_ += isGraphKind(value) ? 1 : 0;
  auto it = std::find_if(attrs_.begin(), attrs_.end(), [&](const NamedAttribute& a) { return a.name == name; });
  if (it != attrs_.end()) {
    graphAttrs_ -= isGraphKind(it->value) ? 1 : 0;
    it->value = std::move(value);
  } else {
    attrs_.push_back({std::move(name), std::move(value)});
  }
  if (held != hasSubgraphs()) graph_->subgraphHolders_ += hasSubgraphs() ? 1 : size_t(-1);
}

bool Node::removeAttr(std::string_view name) {
  auto it = std::find_if(attrs_.begin(), attrs_.end(), [&](const NamedAttribute& a) { return a.name == name; });
  if (it == attrs_.end()) return false;
  if (isGraphKind(it->value) && --graphAttrs_ == 0) --graph_->subgraphHolders_;
  attrs_.erase(it);
  touch();
  attrsRevision_ = revision_;
  return true;
}

int64_t Node::attrInt(std::string_view name, int64_t fallback) const {
  const Attribute* a = attr(name);
  if (a)
    if (auto v = a->get<int64_t>()) return *v;
  return fallback;
}

float Node::attrFloat(std::string_view name, float fallback) const {
  const Attribute* a = attr(name);
  if (a)
    if (auto v = a->get<float>()) return *v;
  return fallback;
}

std::string Node::attrString(std::string_view name, std::string fallback) const {
  const Attribute* a = attr(name);
  if (a)
    if (auto v = a->get<std::string>()) return *v;
  return fallback;
}

std::vector<int64_t> Node::attrInts(std::string_view name) const {
  const Attribute* a = attr(name);
  if (a)
    if (auto v = a->get<std::vector<int64_t>>()) return *v;
  return {};
}

std::string Node::annotation(const std::string& key) const {
  auto it = annotations_.find(key);
  return it == annotations_.end() ? std::string() : it->second;
}

void Node::setAnnotation(const std::string& key, std::string value) {
  auto it = annotations_.lower_bound(key);
  const bool present = it != annotations_.end() && it->first == key;
  if (present && it->second == value) return;
  if (AnnotationJournal* j = graph_->ids().annotationJournal)
    j->push_back({id_, key, present ? std::optional<std::string>(it->second) : std::nullopt, value});
  if (present)
    it->second = std::move(value);
  else
    annotations_.emplace_hint(it, key, std::move(value));
  touchAnnotations();
}

void Node::eraseAnnotation(const std::string& key) {
  auto it = annotations_.find(key);
  if (it == annotations_.end()) return;
  if (AnnotationJournal* j = graph_->ids().annotationJournal) j->push_back({id_, key, std::move(it->second), {}});
  annotations_.erase(it);
  touchAnnotations();
}

std::vector<Graph*> Node::subgraphs() const {
  std::vector<Graph*> out;
  if (!hasSubgraphs()) return out;
  for (const auto& a : attrs_) {
    if (auto g = a.value.get<Attribute::GraphPtr>()) {
      if (*g) out.push_back(g->get());
    } else if (auto gs = a.value.get<std::vector<Attribute::GraphPtr>>()) {
      for (const auto& sg : *gs)
        if (sg) out.push_back(sg.get());
    }
  }
  return out;
}

// ---------------------------------------------------------------- Graph

Graph::Graph(std::shared_ptr<IdSource> ids, Graph* parent) : ids_(std::move(ids)), parent_(parent) {
  if (!ids_) ids_ = std::make_shared<IdSource>();
}

Graph::~Graph() {
  // Uses of ancestor values from inside this graph must not outlive it.
  // Only uses of ancestor values must be withdrawn (this graph's own values die with it); nested subgraphs do the
  // same for theirs when their owning nodes go.
  for (Node& n : nodes_)
    for (size_t i = 0; i < n.inputs_.size(); ++i)
      if (n.inputs_[i] && n.inputs_[i]->graph_ != this) removeUse(n.inputs_[i], &n, i);
  // Nodes (and with them nested subgraphs) go before values so nothing refers to a freed value meanwhile.
  for (Node& n : nodes_)
    if (auto it = ids_->liveNodes.find(n.id_); it != ids_->liveNodes.end() && it->second == &n)
      ids_->liveNodes.erase(it);
  nodes_.clear();
  values_.clear();
}

std::shared_ptr<Graph> Graph::makeSubgraph(std::string name) {
  auto g = std::make_shared<Graph>(ids_, this);
  g->setName(std::move(name));
  return g;
}

Value* Graph::newValue(std::string name, ValueType type) {
  const ValueId id = ids_->nextValue++;
  values_.emplace_back(GraphKey(), this, id, std::move(name), std::move(type));
  Value* v = &values_.back();
  v->self_ = std::prev(values_.end());
  v->touch();
  valueById_.emplace(id, v);
  return v;
}

Value* Graph::addValue(std::string name, ValueType type) { return newValue(std::move(name), std::move(type)); }

Value* Graph::addInput(std::string name, ValueType type) {
  Value* v = newValue(std::move(name), std::move(type));
  v->graphInput_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::addInitializer(std::string name, Tensor data) {
  ValueType t = ValueType::tensor(data.dtype(), Shape::ofStatic(data.dims()));
  Value* v = newValue(std::move(name), std::move(t));
  v->constant_ = std::move(data);
  return v;
}

Node* Graph::addNode(std::string opType, const std::vector<Value*>& inputs, const std::vector<std::string>& outputNames,
                     std::string name, std::string domain, Node* before) {
  const NodeId id = ids_->nextNode++;
  auto pos = before ? before->self_ : nodes_.end();
  auto it = nodes_.emplace(pos, GraphKey(), this, id, std::move(opType), std::move(domain), std::move(name));
  Node* n = &*it;
  n->self_ = it;
  placeInOrder(n);
  n->touch();
  nodeById_.emplace(id, n);
  ids_->liveNodes[id] = n;
  n->inputs_.reserve(inputs.size());
  n->useSlot_.reserve(inputs.size());
  for (Value* in : inputs) {
    n->inputs_.push_back(in);
    n->useSlot_.push_back(0);
    if (in) addUse(in, n, n->inputs_.size() - 1);
  }
  for (size_t i = 0; i < outputNames.size(); ++i) {
    Value* out = newValue(outputNames[i], {});
    out->producer_ = n;
    out->producerIndex_ = i;
    n->outputs_.push_back(out);
  }
  return n;
}

Node* Graph::addNode(std::string opType, const std::vector<Value*>& inputs, size_t numOutputs, std::string name,
                     std::string domain, Node* before) {
  std::vector<std::string> names;
  const std::string base = name.empty() ? opType : name;
  for (size_t i = 0; i < numOutputs; ++i) names.push_back(numOutputs == 1 ? base + "_out" : base + "_out" + std::to_string(i));
  return addNode(std::move(opType), inputs, names, std::move(name), std::move(domain), before);
}

void Graph::setNodeOutput(Node* node, size_t index, Value* v) {
  if (v->producer_ || v->graph_ != this) throw std::logic_error("setNodeOutput: value already produced or foreign");
  if (node->outputs_.size() <= index) node->outputs_.resize(index + 1, nullptr);
  if (Value* old = node->outputs_[index]) {
    if (old->hasUses() || old->isGraphOutput()) throw std::logic_error("setNodeOutput: replaced output still used");
    old->producer_ = nullptr;
    eraseValue(old);
  }
  node->outputs_[index] = v;
  v->producer_ = node;
  v->producerIndex_ = index;
  node->touch();
  v->touch();
}

void Graph::clearNodeOutput(Node* node, size_t index) {
  Value* old = node->output(index);
  if (!old) return;
  if (old->hasUses() || old->isGraphOutput()) throw std::logic_error("clearNodeOutput: output still used");
  old->producer_ = nullptr;
  node->outputs_[index] = nullptr;
  node->touch();
  eraseValue(old);
}

void Graph::addOutput(Value* v) {
  outputs_.push_back(v);
  ++v->graphOutputCount_;
  v->touch();
}

void Graph::setOutputs(const std::vector<Value*>& outs) {
  for (Value* v : outputs_) {
    --v->graphOutputCount_;
    v->touch();
  }
  outputs_.clear();
  for (Value* v : outs) addOutput(v);
}

void Graph::addUse(Value* v, Node* n, size_t index) {
  n->useSlot_[index] = v->uses_.size();
  v->uses_.push_back(Use{n, index});
}

void Graph::removeUse(Value* v, Node* n, size_t index) {
  auto& u = v->uses_;
  const size_t slot = n->useSlot_[index];
  if (slot >= u.size() || !(u[slot] == Use{n, index})) return;  // not registered (defensive)
  // Swap-remove: the last use takes the freed slot and its node learns the new position.
  u[slot] = u.back();
  u[slot].node->useSlot_[u[slot].index] = slot;
  u.pop_back();
}

void Graph::setNodeInput(Node* node, size_t index, Value* v) {
  if (index >= node->inputs_.size()) {
    node->inputs_.resize(index + 1, nullptr);
    node->useSlot_.resize(index + 1, 0);
  }
  if (Value* old = node->inputs_[index]) removeUse(old, node, index);
  node->inputs_[index] = v;
  if (v) addUse(v, node, index);
  node->touch();
}

void Graph::appendNodeInput(Node* node, Value* v) { setNodeInput(node, node->inputs_.size(), v); }

void Graph::setNodeInputs(Node* node, const std::vector<Value*>& inputs) {
  for (size_t i = 0; i < node->inputs_.size(); ++i)
    if (node->inputs_[i]) removeUse(node->inputs_[i], node, i);
  node->inputs_.clear();
  node->useSlot_.clear();
  node->touch();
  for (Value* v : inputs) appendNodeInput(node, v);
}

void Graph::replaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  const std::vector<Use> uses = std::move(from->uses_);
  from->uses_.clear();
  for (const Use& u : uses) {
    u.node->inputs_[u.index] = to;
    addUse(to, u.node, u.index);
    u.node->touch();
  }
  // Graph outputs of the graph that defines `from` (only that graph can list it as output).
  Graph* g = from->graph_;
  for (Value*& o : g->outputs_) {
    if (o == from) {
      o = to;
      --from->graphOutputCount_;
      ++to->graphOutputCount_;
      from->touch();
      to->touch();
    }
  }
}

void Graph::dropReferencesOf(Node* n) {
  for (size_t i = 0; i < n->inputs_.size(); ++i)
    if (n->inputs_[i]) removeUse(n->inputs_[i], n, i);
  n->inputs_.clear();
  n->useSlot_.clear();
  for (Graph* sg : n->subgraphs())
    for (Node& inner : sg->nodes_) sg->dropReferencesOf(&inner);
}

void Graph::eraseNode(Node* node) {
  if (node->graph_ != this) throw std::logic_error("eraseNode: node belongs to another graph");
  for (Value* out : node->outputs_) {
    if (out && (out->hasUses() || out->isGraphOutput()))
      throw std::logic_error("eraseNode: output '" + out->name() + "' of '" + node->name() + "' is still used");
  }
  dropReferencesOf(node);
  for (Value* out : node->outputs_) {
    if (!out) continue;
    out->producer_ = nullptr;
    eraseValue(out);
  }
  if (node->hasSubgraphs()) --subgraphHolders_;
  // An erasure touches nothing that remains, but observers must still see a change.
  ids_->definitionRevision = ++ids_->revision;
  nodeById_.erase(node->id_);
  if (auto it = ids_->liveNodes.find(node->id_); it != ids_->liveNodes.end() && it->second == node)
    ids_->liveNodes.erase(it);
  nodes_.erase(node->self_);
}

void Graph::eraseValue(Value* v) {
  if (v->producer_ || v->hasUses() || v->isGraphOutput())
    throw std::logic_error("eraseValue: value '" + v->name() + "' is still produced or used");
  if (v->graphInput_) removeInput(v);
  ids_->definitionRevision = ++ids_->revision;
  valueById_.erase(v->id_);
  values_.erase(v->self_);
}

void Graph::removeInput(Value* v) {
  inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), v), inputs_.end());
  v->graphInput_ = false;
  v->touch();
}

void Graph::moveBefore(Node* node, Node* before) {
  auto pos = before ? before->self_ : nodes_.end();
  nodes_.splice(pos, nodes_, node->self_);
  placeInOrder(node);
  ++ids_->orderRevision;
}

// Keys are spaced 2^20 apart when renumbered, so about 20 inserts at one spot fit before the next renumbering.
constexpr uint64_t kOrderGap = uint64_t{1} << 20;

void Graph::placeInOrder(Node* n) {
  const auto it = n->self_;
  const uint64_t prev = it == nodes_.begin() ? 0 : std::prev(it)->order_;
  const auto next = std::next(it);
  if (next == nodes_.end()) {
    if (prev > UINT64_MAX - kOrderGap) return renumberOrder();
    n->order_ = prev + kOrderGap;
    return;
  }
  if (next->order_ - prev < 2 || next->order_ <= prev) return renumberOrder();
  n->order_ = prev + (next->order_ - prev) / 2;
}

void Graph::renumberOrder() {
  uint64_t k = 0;
  for (Node& n : nodes_) n.order_ = (k += kOrderGap);
}

size_t Graph::numNodesRecursive() const {
  size_t n = 0;
  forEachGraph([&n](const Graph& g) { n += g.numNodes(); });
  return n;
}

std::vector<Value*> Graph::initializers() const {
  std::vector<Value*> out;
  for (Value* v : values())
    if (v->constant() && !v->producer()) out.push_back(v);
  return out;
}

Node* Graph::findNode(NodeId id) const {
  auto it = nodeById_.find(id);
  return it == nodeById_.end() ? nullptr : it->second;
}

Node* Graph::findNodeInTree(NodeId id) const {
  auto it = ids_->liveNodes.find(id);
  if (it == ids_->liveNodes.end()) return nullptr;
  // Attached below this graph: each graph up the chain is held by a live node of the graph above it.
  for (const Graph* g = it->second->graph_; g; g = g->parent_) {
    if (g == this) return it->second;
    if (!g->owner_) return nullptr;
    auto o = ids_->liveNodes.find(g->ownerId_);
    if (o == ids_->liveNodes.end() || o->second != g->owner_ || g->owner_->graph_ != g->parent_) return nullptr;
  }
  return nullptr;
}

Value* Graph::findValue(ValueId id) const {
  auto it = valueById_.find(id);
  return it == valueById_.end() ? nullptr : it->second;
}

bool Graph::isVisible(const Value* v) const {
  for (const Graph* g = this; g; g = g->parent_)
    if (v->graph_ == g) return true;
  return false;
}

namespace {
// Appends to `deps` the nodes of `g` that the nested graph `inner` (transitively) uses through captures.
void collectCaptureProducers(const Graph& g, const Graph& inner, std::vector<Node*>& deps) {
  for (Node* n : inner.nodes()) {
    for (Value* in : n->inputs())
      if (in && in->graph() == &g && in->producer()) deps.push_back(in->producer());
    for (Graph* sg : n->subgraphs()) collectCaptureProducers(g, *sg, deps);
  }
}

// The node of `g` that contains `n` (n itself, or the owner of the subgraph n sits in); null if none.
const Node* ancestorIn(const Graph& g, const Node* n) {
  while (n && n->graph() != &g) n = n->graph()->owner();
  return n;
}
}  // namespace

std::optional<std::vector<Node*>> Graph::topologicalOrder() const {
  // Kahn's algorithm over dense indices (kept in each node's scratch field: no hash maps on this hot path). A ready
  // min-heap on list position keeps the current order wherever it is already valid.
  constexpr size_t kNever = SIZE_MAX;
  std::vector<Node*> byPos;
  byPos.reserve(nodes_.size());
  for (const Node& n : nodes_) {
    n.scratch_ = byPos.size();
    byPos.push_back(const_cast<Node*>(&n));
  }
  std::vector<size_t> pending(byPos.size(), 0);
  std::vector<Node*> deps;
  for (Node* n : byPos) {
    deps.clear();
    for (Value* in : n->inputs_)
      if (in && in->graph_ == this && in->producer_) deps.push_back(in->producer_);
    if (n->hasSubgraphs())
      for (Graph* sg : n->subgraphs()) collectCaptureProducers(*this, *sg, deps);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (Node* d : deps) {
      if (d == n || d->graph_ != this) {
        if (d == n) pending[n->scratch_] = kNever;  // uses its own output: never ready
        continue;
      }
      if (pending[n->scratch_] != kNever) ++pending[n->scratch_];
    }
  }
  std::vector<size_t> ready;
  auto later = [](size_t a, size_t b) { return a > b; };
  for (size_t i = 0; i < pending.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::make_heap(ready.begin(), ready.end(), later);
  std::vector<Node*> order;
  order.reserve(byPos.size());
  std::vector<size_t> users;
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    Node* n = byPos[ready.back()];
    ready.pop_back();
    order.push_back(n);
    // Each distinct dependent was counted once per distinct producer: release it once.
    users.clear();
    for (Value* out : n->outputs_) {
      if (!out) continue;
      for (const Use& u : out->uses_)
        if (const Node* user = ancestorIn(*this, u.node); user && user != n) users.push_back(user->scratch_);
    }
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    for (size_t i : users) {
      size_t& p = pending[i];
      if (p != kNever && p > 0 && --p == 0) {
        ready.push_back(i);
        std::push_heap(ready.begin(), ready.end(), later);
      }
    }
  }
  if (order.size() != byPos.size()) return std::nullopt;
  return order;
}

bool Graph::sortTopologically() {
  auto order = topologicalOrder();
  if (!order) return false;
  for (Node* n : *order) nodes_.splice(nodes_.end(), nodes_, n->self_);
  renumberOrder();
  ++ids_->orderRevision;
  return true;
}

std::vector<Node*> Graph::predecessorsOf(const Node& n) const {
  std::vector<Node*> deps;
  for (Value* in : n.inputs())
    if (in && in->graph() == this && in->producer()) deps.push_back(in->producer());
  for (Graph* sg : n.subgraphs()) collectCaptureProducers(*this, *sg, deps);
  std::vector<Node*> unique;
  std::unordered_set<const Node*> seen{&n};  // a Concat of thousands of inputs must not go quadratic
  for (Node* d : deps)
    if (seen.insert(d).second) unique.push_back(d);
  return unique;
}

void Graph::forEachGraph(const std::function<void(Graph&)>& fn) {
  fn(*this);
  if (subgraphHolders_ == 0) return;
  for (Node& n : nodes_)
    if (n.hasSubgraphs())
      for (Graph* sg : n.subgraphs()) sg->forEachGraph(fn);
}

void Graph::forEachGraph(const std::function<void(const Graph&)>& fn) const {
  fn(*this);
  if (subgraphHolders_ == 0) return;
  for (const Node& n : nodes_)
    if (n.hasSubgraphs())
      for (const Graph* sg : n.subgraphs()) sg->forEachGraph(fn);
}

}  // namespace kiln
