#pragma once
// Which engine runs a node: AI Core (its cube or vector unit), AI CPU, or the host — GE's engine placement. The
// op registry says where an op normally runs; on top of that, AI Core kernels compute no 64-bit integer, double,
// string or complex data, so a node producing such data goes to AI CPU (shape arithmetic in int64 is the common
// case). An op no engine knows is "unsupported".
#include <string>

namespace kiln {

class Model;
class Node;

struct Placement {
  std::string engine;  // "aicore", "aicpu", "host", "unsupported"
  std::string unit;    // "cube", "vector", "aicpu", "host"; empty when unsupported
  std::string reason;  // set when the placement differs from the op's usual unit
};

Placement placementOf(const Node& n, const Model& m);
// Writes it into the node's annotations "engine", "unit" and "engine.reason"; true when one of them changed.
bool annotatePlacement(Node& n, const Placement& p);

}  // namespace kiln
