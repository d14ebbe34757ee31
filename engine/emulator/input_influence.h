#pragma once
// Which of a model's inputs led a run to the node that failed, for telling a user what to change when the inputs
// were made up: a random `sr` that picks the wrong branch of an If, a random token id past a table's end. The
// failing node reads some inputs through the values it computes from (its "feeding" inputs); some decide that the
// node runs at all, through the condition or trip count of an If or Loop holding it ("deciding" inputs).
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace kiln {

struct Model;
class Node;
class Value;

struct InputInfluence {
  const Node* failed = nullptr;         // the innermost node of the model on the failure's path; null if none is
  std::vector<const Value*> deciding;   // main-graph inputs reaching the condition of an If/Loop holding it
  std::vector<const Value*> feeding;    // the other main-graph inputs it reads, directly or through other nodes
};

// `path` runs from the node that failed outwards (NodeFailed::nodes()); entries not in `m` (a function body's
// nodes) are skipped.
InputInfluence inputsBehind(const Model& m, const std::vector<const Node*>& path);

// One sentence for an error message when some inputs were made up (`madeUp`, per main-graph input): which of those
// decide whether the failed node runs, and which integer ones (ids, indices, lengths; not floats) feed it, small ones with the values they got, and how to give others (--value, --inputs).
// `inputs` holds one tensor per main-graph input. Empty when no made-up input leads there.
std::string madeUpInputsHint(const Model& m, const std::vector<const Node*>& path, const std::vector<Tensor>& inputs,
                             const std::vector<bool>& madeUp);

}  // namespace kiln
