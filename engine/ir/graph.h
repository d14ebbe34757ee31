#pragma once
// The graph IR. A Graph owns its Nodes and Values; Nodes refer to Values by pointer and every Value knows its
// producer and its uses, so rewiring is O(uses). Every Node and Value has an integer id drawn from an IdSource shared
// by a model's graph and all of its subgraphs: ids are never reused or renumbered, so they identify the same thing
// across every pass (the history and diffs rely on this).
//
// Subgraphs (If/Loop/Scan bodies) are Graphs whose parent is the graph of the owning node. A node inside a subgraph
// may use a Value of any ancestor graph directly (an implicit capture, as in ONNX); that use is recorded on the outer
// Value like any other.
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory_resource>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/annotation_journal.h"
#include "ir/attribute.h"
#include "ir/tensor.h"
#include "ir/value_type.h"

namespace kiln {

using NodeId = int64_t;
using ValueId = int64_t;

class Graph;
class Node;

struct IdSource {
  NodeId nextNode = 1;
  ValueId nextValue = 1;
  // Every live node of the graphs sharing this source, by id (Graph::findNodeInModel): a pass looks a node up in
  // O(1) wherever it sits, instead of walking every subgraph of the model.
  std::unordered_map<NodeId, Node*> liveNodes;
  // Bumped by every mutation, erasures included; each node and value remembers the revision of its last change, so
  // an observer (the history recorder, the verifier) finds what a pass changed without comparing whole graphs, and
  // learns from an unchanged revision that nothing changed.
  uint64_t revision = 0;
  // The revision of the last change other than to annotations (what defines the graph): while it stays, a pass
  // only annotated, and an observer that ignores annotations (the verifier) or follows them otherwise (the
  // recorder, through the annotation journal) need not walk the graph.
  uint64_t definitionRevision = 0;
  // Bumped whenever a node changes place in its list (moveBefore, sortTopologically): the incremental verifier
  // relies on untouched nodes keeping their relative order.
  uint64_t orderRevision = 0;
  // Where setAnnotation / eraseAnnotation log their changes (ir/annotation_journal.h); null when nobody asked.
  AnnotationJournal* annotationJournal = nullptr;
};

// Lets only Graph construct Nodes and Values (in place, inside its pooled lists).
class GraphKey {
  GraphKey() = default;
  friend class Graph;
};

struct Use {
  Node* node = nullptr;
  size_t index = 0;  // input slot of node
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  ValueId id() const { return id_; }
  const std::string& name() const { return name_; }
  void setName(std::string n);
  const ValueType& type() const { return type_; }
  void setType(ValueType t);
  Node* producer() const { return producer_; }
  size_t producerIndex() const { return producerIndex_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  bool isGraphInput() const { return graphInput_; }
  bool isGraphOutput() const { return graphOutputCount_ > 0; }
  // Constant data of an initializer (a value with no producer). Null for everything else.
  const Tensor* constant() const { return constant_ ? &*constant_ : nullptr; }
  void setConstant(Tensor t);
  Graph* graph() const { return graph_; }
  const std::string& docString() const { return doc_; }
  void setDocString(std::string d);
  // Revision (IdSource::revision) of the last change to this value's own fields or its producer/output status.
  uint64_t revision() const { return revision_; }

  Value(GraphKey, Graph* g, ValueId id, std::string name, ValueType type)
      : graph_(g), id_(id), name_(std::move(name)), type_(std::move(type)) {}
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

 private:
  friend class Graph;
  Graph* graph_;
  ValueId id_;
  std::string name_;
  ValueType type_;
  Node* producer_ = nullptr;
  size_t producerIndex_ = 0;
  std::vector<Use> uses_;
  std::optional<Tensor> constant_;
  bool graphInput_ = false;
  int graphOutputCount_ = 0;
  std::string doc_;
  uint64_t revision_ = 0;
  void touch();
  std::pmr::list<Value>::iterator self_;
};

class Node {
 public:
  NodeId id() const { return id_; }
  const std::string& opType() const { return opType_; }
  void setOpType(std::string t);
  const std::string& domain() const { return domain_; }  // "" is the default ONNX domain
  void setDomain(std::string d);
  const std::string& name() const { return name_; }
  void setName(std::string n);
  // "Conv", or "com.microsoft:Attention" outside the default domain.
  std::string qualifiedType() const;
  // qualifiedType() == qualified, without building the string (fusion asks it of every node, for every rule).
  bool hasQualifiedType(std::string_view qualified) const;

  // Inputs may contain nullptr for an omitted optional input; outputs likewise for an omitted optional output.
  const std::vector<Value*>& inputs() const { return inputs_; }
  size_t numInputs() const { return inputs_.size(); }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // Where this node's use of input i sits in that value's use list (for O(1) consistency checks).
  size_t useSlotOf(size_t i) const { return i < useSlot_.size() ? useSlot_[i] : SIZE_MAX; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  size_t numOutputs() const { return outputs_.size(); }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

  const std::vector<NamedAttribute>& attributes() const { return attrs_; }
  const Attribute* attr(std::string_view name) const;
  void setAttr(std::string name, Attribute value);  // adopts subgraphs (sets their owner)
  bool removeAttr(std::string_view name);
  int64_t attrInt(std::string_view name, int64_t fallback) const;
  float attrFloat(std::string_view name, float fallback) const;
  std::string attrString(std::string_view name, std::string fallback) const;
  std::vector<int64_t> attrInts(std::string_view name) const;
  // Subgraphs held in graph-valued attributes, in attribute order.
  std::vector<Graph*> subgraphs() const;
  // Whether any attribute holds a graph: O(1), so walks over every node need not build subgraphs() for each.
  bool hasSubgraphs() const { return graphAttrs_ > 0; }

  // Kiln's own facts about a node that are not ONNX attributes (never exported as such): "engine" (aicore, aicpu,
  // host), later the fusion rule, replaced node ids, stream... Recorded in the history with the node.
  const std::map<std::string, std::string>& annotations() const { return annotations_; }
  std::string annotation(const std::string& key) const;
  void setAnnotation(const std::string& key, std::string value);
  void eraseAnnotation(const std::string& key);

  Graph* graph() const { return graph_; }
  const std::string& docString() const { return doc_; }
  void setDocString(std::string d);
  // Revision of the last change to this node: op, name, attributes, inputs, outputs or annotations.
  uint64_t revision() const { return revision_; }
  // Revision of the last change to what defines the node (all of the above but its annotations): what the verifier
  // re-checks after a pass.
  uint64_t definitionRevision() const { return definitionRevision_; }
  // The revision of the last change to the attributes alone: a recorder re-serialises them only when it moved.
  uint64_t attrsRevision() const { return attrsRevision_; }

  Node(GraphKey, Graph* g, NodeId id, std::string op, std::string domain, std::string name)
      : graph_(g), id_(id), opType_(std::move(op)), domain_(std::move(domain)), name_(std::move(name)) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

 private:
  friend class Graph;
  Graph* graph_;
  NodeId id_;
  std::string opType_, domain_, name_, doc_;
  std::vector<Value*> inputs_, outputs_;
  // useSlot_[i]: position of this node's use of inputs_[i] in that value's use list, so that removing a use is
  // O(1) even for a constant shared by thousands of nodes.
  std::vector<size_t> useSlot_;
  std::vector<NamedAttribute> attrs_;
  int graphAttrs_ = 0;  // attributes of kind Graph or Graphs (kept by setAttr / removeAttr)
  std::map<std::string, std::string> annotations_;
  std::pmr::list<Node>::iterator self_;
  uint64_t order_ = 0;  // increases along the node list (Graph::comesBefore); gaps left for inserts
  mutable size_t scratch_ = 0;
  uint64_t revision_ = 0;
  uint64_t definitionRevision_ = 0;
  uint64_t attrsRevision_ = 0;
  void touch();
  void touchAnnotations();  // dense index used by Graph::topologicalOrder
};

// Iterates a graph's node or value list as pointers (handles stay valid until the element is erased).
template <typename T>
class PtrListRange {
 public:
  using List = std::pmr::list<T>;
  class iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = T*;
    using difference_type = std::ptrdiff_t;
    using pointer = T**;
    using reference = T*;
    explicit iterator(typename List::const_iterator it) : it_(it) {}
    T* operator*() const { return const_cast<T*>(&*it_); }
    iterator& operator++() { ++it_; return *this; }
    iterator operator++(int) { auto c = *this; ++it_; return c; }
    iterator& operator--() { --it_; return *this; }
    bool operator==(const iterator& o) const { return it_ == o.it_; }
   private:
    typename List::const_iterator it_;
  };
  explicit PtrListRange(const List& l) : l_(&l) {}
  iterator begin() const { return iterator(l_->begin()); }
  iterator end() const { return iterator(l_->end()); }
  size_t size() const { return l_->size(); }
  bool empty() const { return l_->empty(); }

 private:
  const List* l_;
};

class Graph {
 public:
  explicit Graph(std::shared_ptr<IdSource> ids, Graph* parent = nullptr);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  Graph* parent() const { return parent_; }
  Node* owner() const { return owner_; }  // node holding this subgraph, null for the main graph
  IdSource& ids() const { return *ids_; }
  const std::shared_ptr<IdSource>& idSource() const { return ids_; }
  // Creates an empty subgraph sharing this graph's id source, to be stored in a node attribute.
  std::shared_ptr<Graph> makeSubgraph(std::string name);

  // --- construction ---
  Value* addValue(std::string name, ValueType type = {});
  Value* addInput(std::string name, ValueType type);
  Value* addInitializer(std::string name, Tensor data);
  // Creates a node with fresh output values, placed before `before` (end of graph when null).
  Node* addNode(std::string opType, const std::vector<Value*>& inputs, const std::vector<std::string>& outputNames,
                std::string name = {}, std::string domain = {}, Node* before = nullptr);
  // Same with an output count; outputs are named after the node.
  Node* addNode(std::string opType, const std::vector<Value*>& inputs, size_t numOutputs, std::string name = {},
                std::string domain = {}, Node* before = nullptr);
  void addOutput(Value* v);
  void setOutputs(const std::vector<Value*>& outs);
  // Attaches an existing value (created by addValue) as output `index` of node, growing the output list.
  void setNodeOutput(Node* node, size_t index, Value* v);
  // Drops output `index` of node (an omitted optional output); the slot stays, null. The value must be unused.
  void clearNodeOutput(Node* node, size_t index);

  // --- mutation for passes ---
  void setNodeInput(Node* node, size_t index, Value* v);  // v may be null (omitted optional input)
  void appendNodeInput(Node* node, Value* v);
  void setNodeInputs(Node* node, const std::vector<Value*>& inputs);
  // Every use of `from` (including graph outputs and uses from subgraphs) now uses `to`.
  void replaceAllUsesWith(Value* from, Value* to);
  // Removes a node. Its outputs must have no uses left and must not be graph outputs; they are erased with it.
  void eraseNode(Node* node);
  // Removes a value that has no producer and no uses (a dead initializer or an unused input).
  void eraseValue(Value* v);
  void removeInput(Value* v);  // un-marks a graph input (the value stays)
  void moveBefore(Node* node, Node* before);  // before == null moves to the end

  // --- queries ---
  PtrListRange<Node> nodes() const { return PtrListRange<Node>(nodes_); }
  PtrListRange<Value> values() const { return PtrListRange<Value>(values_); }
  size_t numNodes() const { return nodes_.size(); }
  // Whether any node of this graph holds a subgraph (O(1)).
  bool hasNestedGraphs() const { return subgraphHolders_ > 0; }
  size_t numNodesRecursive() const;  // including every subgraph's nodes
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  std::vector<Value*> initializers() const;
  Node* findNode(NodeId id) const;
  // A node anywhere in this graph or the subgraphs below it (null when erased, or in a graph detached from here).
  Node* findNodeInTree(NodeId id) const;
  Value* findValue(ValueId id) const;
  // True when v belongs to this graph or one of its ancestors (i.e. is visible here).
  bool isVisible(const Value* v) const;
  // Whether `a` sits before `b` in the node list (both of this graph): O(1), from keys kept in list order, so a pass
  // never walks the whole graph to order a few nodes (a fusion's members, say).
  bool comesBefore(const Node* a, const Node* b) const { return a->order_ < b->order_; }
  // Nodes in a dependency order (stable: keeps the current order where it is already valid). Uses from inside a
  // node's subgraphs count as that node's dependencies. Nullopt when there is a cycle.
  std::optional<std::vector<Node*>> topologicalOrder() const;
  // Reorders the node list topologically; false (order unchanged) on a cycle.
  bool sortTopologically();
  // The nodes of this graph `n` depends on: producers of its inputs and of the values its subgraphs capture,
  // without duplicates, in first-use order.
  std::vector<Node*> predecessorsOf(const Node& n) const;
  // Visits this graph and every nested subgraph, depth first.
  void forEachGraph(const std::function<void(Graph&)>& fn);
  void forEachGraph(const std::function<void(const Graph&)>& fn) const;

 private:
  Value* newValue(std::string name, ValueType type);
  void addUse(Value* v, Node* n, size_t index);
  void removeUse(Value* v, Node* n, size_t index);
  void dropReferencesOf(Node* n);  // removes n's (and its subgraphs') uses of values
  void placeInOrder(Node* n);      // gives n an order key between its neighbours (renumbering when there is no gap)
  void renumberOrder();
  friend class Node;

  std::shared_ptr<IdSource> ids_;
  Graph* parent_ = nullptr;
  Node* owner_ = nullptr;
  NodeId ownerId_ = 0;  // the owner's id: whether owner_ is still alive is asked by id, never through the pointer
  std::string name_;
  // Nodes and values live inside pooled list cells: one allocation each, from contiguous chunks, so walking a
  // 100k-node graph stays cache friendly. The pool must outlive the lists (declared first).
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::list<Node> nodes_{&pool_};
  size_t subgraphHolders_ = 0;  // nodes with hasSubgraphs(): walks for nested graphs skip a graph that has none
  std::pmr::list<Value> values_{&pool_};
  std::vector<Value*> inputs_, outputs_;
  std::unordered_map<NodeId, Node*> nodeById_;
  std::unordered_map<ValueId, Value*> valueById_;
};

}  // namespace kiln
