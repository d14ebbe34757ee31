#pragma once
// What the precision and format passes share: inserting a conversion node (Cast, TransData) the way ValidityCheck
// would have tagged it, storing a converted copy of a constant, and retiring the constants those copies replaced.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir/format.h"
#include "ir/tensor.h"

namespace kiln {

class Graph;
class Node;
class Value;

// A one-input conversion node `op` (domain "kiln" for TransData) reading `in`, placed before `before`; its output is
// named `outName` and the node is tagged engine=aicore, unit=vector (Stage 1's placement has already run). The node
// is named by conversionNodeName(in, before, what).
Node* insertConversion(Graph& g, const std::string& op, const std::string& domain, Value* in, const std::string& what,
                       const std::string& outName, Node* before);
// "<scope of the node it serves><last part of in's name>_<what>": a conversion sits in the name scope of its input's
// producer (its consumer's for a graph input), so scoped views group it with the layer it belongs to, and a value
// name's slashes never invent scopes of their own.
std::string conversionNodeName(const Value& in, const Node* before, const std::string& what);

// The node of `g` that holds n (n itself when n is in g; else the owner of the subgraph n sits in, walking up): where
// a conversion for a subgraph's capture goes.
Node* nodeInGraph(Graph& g, Node* n);

// Nodes inside subgraphs of g that read one of `values` read convert(value, the node of g holding them) instead: a
// pass that rewrites only the main graph hands subgraphs the form they were written for.
void rewireSubgraphUses(Graph& g, const std::vector<Value*>& values,
                        const std::function<Value*(Value*, Node*)>& convert);
// Each graph output v with affected(v) is replaced by convert(v); the replacement takes the output's name (users and
// exports know the model by it) and v is renamed to name + suffix(v).
void replaceGraphOutputs(Graph& g, const std::function<bool(Value*)>& affected,
                         const std::function<Value*(Value*)>& convert,
                         const std::function<std::string(Value*)>& suffix);

// Converted constants: each new initializer remembers the one it stands for. `retire` erases originals nobody uses
// any more and gives their name to the copy, so weights keep the names users know.
class ConstantCopies {
 public:
  Value* add(Graph& g, Value* original, Tensor data, Format format, const std::string& suffix);
  void retire(Graph& g);
  size_t size() const { return copies_.size(); }

 private:
  std::vector<std::pair<Value*, Value*>> copies_;  // (original, copy)
};

}  // namespace kiln
