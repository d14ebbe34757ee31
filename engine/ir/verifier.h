#pragma once
// Structural checks of a graph: acyclic, every use defined and visible, use lists consistent with inputs, producers
// consistent with outputs, subgraph captures valid, and (when the op registry knows the op) input/output counts and
// type constraints respected. An input of unknown element type is not checked, except next to an fp16/bf16 operand
// of the same type variable: a precision change narrowed what it could see and left that input in the file's type.
// The loader runs it on every import (findings are warnings), the PassManager after every pass while option
// verify_each_pass is on (the default).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

class Graph;
struct IdSource;
struct Model;

struct VerifyOptions {
  bool checkTypes = true;  // op type constraints (needs known dtypes; unknown ones are skipped but next to fp16/bf16)
  // Per-node checks only for nodes changed after this revision (IdSource::revision); whole-graph checks (cycles,
  // visibility, use lists) always run. 0 checks everything. Lets the pass manager verify after every pass cheaply.
  uint64_t changedSince = 0;
};

// Problems found, one line each ("node 'x' (Add): input 1 is not defined"); empty when the graph is valid.
std::vector<std::string> verifyGraph(const Graph& g, int64_t defaultOpset, const VerifyOptions& options = {});
std::vector<std::string> verifyModel(const Model& m, const VerifyOptions& options = {});

// Verification after every pass at a cost that follows what the pass changed: the first check() sees the whole
// model; later ones check only nodes and values changed since (IdSource::revision), and find cycles through the
// changed nodes' edges as long as every node list stayed a topological order and no node moved (else every graph
// is sorted again, as verifyModel does). A pass that changed only annotations (IdSource::definitionRevision did not
// move) costs nothing. Finds what verifyModel would find among the changed nodes; problems left in unchanged nodes
// were reported before.
class IncrementalVerifier {
 public:
  std::vector<std::string> check(const Model& m);

 private:
  std::shared_ptr<IdSource> ids_;  // revisions compare only within one id source: a replaced graph is checked whole
  bool forward_ = false;  // every edge ran forward along the node list at the last check
  uint64_t verifiedAt_ = 0, orderAt_ = 0;
};

}  // namespace kiln
