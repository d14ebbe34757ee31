#pragma once
// The content of one versioned row per table, shared by the recorder (which keeps the open row of every id in
// memory to compare against) and the reader (which returns them). A node's or value's content excludes its
// validity interval: two rows with equal content describe the same state.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

class Node;
class Value;
class Attribute;

// Validity interval [firstPass, lastPass); lastPass empty = still valid at the run's last pass.
struct RowSpan {
  int firstPass = 0;
  std::optional<int> lastPass;
  bool validAt(int pass) const { return firstPass <= pass && (!lastPass || *lastPass > pass); }
};

struct NodeRow {
  int64_t id = 0;
  RowSpan span;
  int64_t graphOwner = 0;  // 0: main graph; else the id of the node whose subgraph holds this node
  std::string graphAttr;   // attribute of graphOwner holding that subgraph ("" in the main graph)
  std::string opType, domain, name;
  std::string attrsJson;        // {"axis":1,"value":{"dtype":"fp32","dims":[3],"fnv1a64":"..."}} sorted by name
  std::string annotationsJson;  // {"engine":"aicore"}
  // Everything but the annotations: what re-versions a node's row (annotation_changes.h).
  bool sameStructure(const NodeRow& o) const {
    return graphOwner == o.graphOwner && graphAttr == o.graphAttr && opType == o.opType && domain == o.domain &&
           name == o.name && attrsJson == o.attrsJson;
  }
  bool sameContent(const NodeRow& o) const { return sameStructure(o) && annotationsJson == o.annotationsJson; }
};

struct ValueRow {
  int64_t id = 0;
  RowSpan span;
  int64_t graphOwner = 0;
  std::string graphAttr;
  std::string name;
  // Tensors: the short element type name ("fp32"); containers: the whole type ("seq<int64[?]>"); unknown: "".
  std::string dtype;
  // Shape::toString() form: "1×3×224×224", "batch×128", "?" dims unknown, "scalar" for rank 0; empty when the rank
  // is unknown (or the value is not a tensor). Readable in the sqlite3 shell and in diffs as is.
  std::optional<std::string> shape;
  std::string format;            // "ND", "NC1HWC0", ...
  std::optional<int64_t> bytes;  // static tensors only
  std::optional<int64_t> producerNode;
  std::optional<int64_t> producerIndex;
  bool isInput = false, isOutput = false, isConstant = false;
  bool sameContent(const ValueRow& o) const {
    return graphOwner == o.graphOwner && graphAttr == o.graphAttr && name == o.name && dtype == o.dtype &&
           shape == o.shape && format == o.format && bytes == o.bytes && producerNode == o.producerNode &&
           producerIndex == o.producerIndex && isInput == o.isInput && isOutput == o.isOutput &&
           isConstant == o.isConstant;
  }
};

// One input slot of a node: value `valueId` feeds input `consumerIndex` of `consumerNode`. Omitted optional
// inputs have no edge.
struct EdgeRow {
  int64_t valueId = 0;
  int64_t consumerNode = 0;
  int64_t consumerIndex = 0;
  RowSpan span;
  bool sameContent(const EdgeRow& o) const {
    return valueId == o.valueId && consumerNode == o.consumerNode && consumerIndex == o.consumerIndex;
  }
};

// Serialisation of live IR objects into row content (span left default). graphOwner/graphAttr come from the
// graph the object sits in.
// `knownAttrsJson`: the attributes as last serialised, when the caller knows they have not changed since.
// `withAnnotations` false leaves annotationsJson empty (the recorder compares annotations as maps).
NodeRow nodeRowOf(const Node& n, const std::string* knownAttrsJson = nullptr, bool withAnnotations = true);
ValueRow valueRowOf(const Value& v);
// Whether nodeRowOf(n) would have the same structure as `row` (NodeRow::sameStructure), without building it:
// the recorder asks this of every node a pass touched. `attrsUnchanged`: the attributes are known to be as
// serialised in the row.
bool sameStructure(const NodeRow& row, const Node& n, bool attrsUnchanged);
// One attribute as JSON text: numbers and strings as themselves, tensors summarised as
// {"dtype","dims","fnv1a64"} (the bytes are hashed, never stored), graphs as "<graph NAME>".
std::string attributeJson(const Attribute& a);

}  // namespace kiln
