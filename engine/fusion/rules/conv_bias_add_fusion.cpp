// ConvBiasAddFusion: Conv followed by an Add of a per-channel constant becomes one Conv with that bias, which the
// Cube unit accumulates in L0C for free instead of a separate Vector pass over the whole output.
//   y = Add(Conv(x, W[, b]), c)  with c broadcasting per output channel  ->  y = Conv(x, W, b + c)
// c may be a scalar, or have the output-channel count on axis 1 of the Conv output and 1 everywhere else
// ([C,1,1], [1,C,1,1]); a [C] constant would broadcast along the LAST axis and is not a bias.
#include <optional>

#include "kernels/kernel.h"
#include "ir/fused_node.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "passes/prepare/fold_support.h"

namespace kiln {
namespace {

// The per-channel values of `c` for a Conv output of rank `rank` with `channels` channels, if c is a bias.
std::optional<std::vector<double>> perChannel(const Tensor& c, size_t rank, int64_t channels) {
  const std::vector<double> v = c.toDouble();
  if (v.size() == 1) return std::vector<double>(static_cast<size_t>(channels), v[0]);
  const auto& d = c.dims();
  if (rank < 2 || d.size() > rank || d.size() + 1 < rank) return std::nullopt;
  const size_t channelAxis = 1 - (rank - d.size());  // axis 1 of the output, right-aligned into c
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != (i == channelAxis ? channels : 1)) return std::nullopt;
  return v;
}

class ConvBiasAddFusion final : public FusionRule {
 public:
  std::string name() const override { return "ConvBiasAddFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Add"}; }

  Node* apply(Node& add, PassContext&) override {
    for (size_t side = 0; side < 2; ++side) {
      Node* conv = producerOfType(add.input(side), "Conv");
      const Value* cValue = add.input(1 - side);
      if (!conv || conv->graph() != add.graph() || !hasSingleUse(add.input(side))) continue;
      const Tensor* c = constantData(cValue);
      const Tensor* w = constantData(conv->input(1));
      const Value* y = conv->output(0);
      if (!c || !w || !isFloating(w->dtype()) || w->dims().empty() || !y->type().shape.rankKnown()) continue;
      // The Add must not broadcast the Conv output up: its result has the Conv output's type.
      if (!(add.output(0)->type().shape == y->type().shape)) continue;
      const int64_t channels = w->dims()[0];
      auto bias = perChannel(*c, y->type().shape.rank(), channels);
      if (!bias) continue;
      const Tensor* oldBias = conv->numInputs() > 2 && conv->input(2) ? constantData(conv->input(2)) : nullptr;
      if (conv->numInputs() > 2 && conv->input(2) && !oldBias) continue;  // a computed bias: leave it
      if (oldBias) {
        const std::vector<double> b = oldBias->toDouble();
        if (b.size() != bias->size()) continue;
        for (size_t i = 0; i < b.size(); ++i) (*bias)[i] += b[i];
      }
      Graph& g = *add.graph();
      const Tensor biasTensor =
          convertTensor(Tensor::fromVector(DType::Double, {channels}, *bias), w->dtype());
      Value* b = g.addInitializer(add.output(0)->name() + "_bias_fused", biasTensor);
      FusedNodeSpec spec;
      spec.opType = "Conv";
      spec.name = conv->name();
      spec.inputs = {conv->input(0), conv->input(1), b};
      spec.outputs = {add.output(0)};
      spec.attrs = conv->attributes();
      Value* oldBiasValue = oldBias ? conv->input(2) : nullptr;
      Value* constant = add.input(1 - side);
      Node* fused = fuseNodes({conv, &add}, spec, name());
      eraseIfDeadInitializer(oldBiasValue);
      eraseIfDeadInitializer(constant);
      return fused;
    }
    return nullptr;
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeConvBiasAddFusion() { return std::make_shared<ConvBiasAddFusion>(); }

}  // namespace kiln
