#pragma once
// Replaces a matched group of nodes with one fused node, keeping what the views and reports need to explain it:
// annotations "fusion.rule" (the rule's name), "fusion.replaced" (ids of the ORIGINAL nodes it stands for, comma
// separated; a fused node absorbed by a later fusion contributes its own replaced ids, so the list always names
// nodes of the imported graph), "fusion.original_names" (their names, a JSON array in graph order: what GE calls
// _datadump_original_op_names, and how an .om's ops are matched with the source model's) and
// "fusion.hbm_bytes_saved" (intermediates no longer written to and read back from HBM).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"

namespace kiln {

class Node;
class Value;

struct FusedNodeSpec {
  std::string opType, domain;  // the fused op (must be known to the op registry for later stages)
  std::string name;            // empty: named after the anchor
  std::vector<Value*> inputs;  // values from outside the group (nullptr for an omitted optional input)
  // Values produced inside the group that the fused node produces instead, in the fused op's output order. Every
  // other value produced inside the group must be used only inside it.
  std::vector<Value*> outputs;
  std::vector<NamedAttribute> attrs;
};

// `group` holds the matched nodes (any order, no duplicates, all in one graph). Throws std::logic_error when an
// intermediate escapes the group (a rule bug: the match should have checked single use). The fused node is placed
// where the last node of the group was; outputs keep their names and types, uses move to the fused node.
Node* fuseNodes(const std::vector<Node*>& group, const FusedNodeSpec& spec, const std::string& ruleName);

// Bytes the group's intermediates cost in HBM traffic today: each is written once and read by each consumer.
// Intermediates whose size is not static (symbolic batch or sequence dims) are counted in `unknownSized` instead of
// being guessed; the fused node then records "fusion.hbm_unknown_tensors" next to the bytes.
int64_t hbmBytesSaved(const std::vector<Node*>& group, const std::vector<Value*>& keptOutputs,
                      int* unknownSized = nullptr);

// The ids recorded in "fusion.replaced" of a node (empty for a node that is not fused).
std::vector<int64_t> replacedNodeIds(const Node& n);
// The names in "fusion.original_names" (empty for a node that is not fused, or a list that does not parse).
std::vector<std::string> originalNodeNames(const Node& n);
// "12,40,41" -> {12, 40, 41}: the form of "fusion.replaced" (stops at the first item that is not a number).
std::vector<int64_t> nodeIdList(std::string_view text);

}  // namespace kiln
