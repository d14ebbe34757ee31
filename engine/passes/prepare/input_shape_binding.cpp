// InputShapeBinding: gives every symbolic dimension of the graph's inputs its extent (ir/shape_binding.h: input_shape,
// then dim_values, then dim_policy unless dim_values says keep), and binds each symbol everywhere else it appears
// (other inputs, declared value_info, outputs; sums like "past_sequence_length + 1" too), so that inference and
// folding see the static shapes GE compiles for. The binding is kept on the model for the reports and the history.
// The policy's sequence extents are fitted to the model first (passes/prepare/binding_fit.h).
// Counters: inputs_bound, dims_bound, symbols_bound, symbols_by_policy, symbols_fitted, symbols_kept.
#include <stdexcept>

#include "ir/model.h"
#include "options/options.h"
#include "passes/prepare/binding_fit.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

// " (its symbols: batch_size, seq_len)" for a warning; "" when the inputs have none.
std::string symbolList(const Graph& g) {
  std::string list;
  for (const SymbolSite& s : inputSymbols(g)) list += (list.empty() ? "" : ", ") + s.symbol;
  return list.empty() ? std::string(" (its inputs have no symbolic dimension)") : " (its symbols: " + list + ")";
}

class InputShapeBinding final : public Pass {
 public:
  std::string name() const override { return "InputShapeBinding"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    ShapeBinding binding;
    try {
      binding = resolveFittedBinding(ctx.model, ctx.options.bindingRequest());
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(e.what());
    }
    ctx.model.binding = binding;
    for (const std::string& name : binding.ignored)
      ctx.warnings.push_back("InputShapeBinding: dim_values names '" + name +
                             "', which is neither a symbol nor a role of this model; ignored" + symbolList(*ctx.model.graph));
    if (binding.empty() && binding.inputShapes.empty()) return r;
    for (const BoundSymbol& b : binding.bound) {
      r.add("symbols_bound");
      if (b.source.rfind("dim_policy", 0) == 0) r.add("symbols_by_policy");
      if (b.source.find("fitted to the model") != std::string::npos) r.add("symbols_fitted");
    }
    if (!binding.kept.empty()) r.counters["symbols_kept"] = static_cast<int64_t>(binding.kept.size());
    const BindingApplied applied = applyShapeBinding(*ctx.model.graph, binding);
    if (applied.inputs) r.add("inputs_bound", applied.inputs);
    if (applied.dims) r.add("dims_bound", applied.dims);
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeInputShapeBindingPass() { return std::make_unique<InputShapeBinding>(); }

}  // namespace kiln
