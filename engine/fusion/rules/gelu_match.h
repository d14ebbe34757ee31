#pragma once
// GELU as exporters write it out, shared by GeluFusion (-> kiln:Gelu) and MatMulAddGeluFusion (-> FusedMatMul):
//   erf:  x · 0.5 · (1 + Erf(x / √2))           (x/1.4142 or x·0.7071; the 0.5 on either side)
//   tanh: x · 0.5 · (1 + Tanh(√(2/π) · (x + 0.044715 · x³)))   (x³ as Pow(x, 3) or x·(x·x)), or factored as
//         x · 0.5 · (1 + Tanh((√(2/π) · x) · (1 + 0.044715 · x²)))
// Anchored at the last Mul of the three factors x, 0.5 and (1 + ...), in any association.
#include <optional>
#include <vector>

namespace kiln {

class Node;
class Value;

struct GeluMatch {
  Value* x = nullptr;
  std::vector<Node*> nodes;  // the written-out ops, anchor first; x's producer is not among them
  bool tanh = false;
};

// The written-out GELU ending at `anchor`; every intermediate is read only inside it.
std::optional<GeluMatch> matchWrittenOutGelu(Node& anchor);

}  // namespace kiln
