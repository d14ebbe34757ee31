// InputShapeBinding: gives every symbolic dimension of the graph's inputs its extent (ir/shape_binding.h: input_shape,
// then dim_values, then dim_policy unless dim_values says keep), and binds each symbol everywhere else it appears
// (other inputs, declared value_info, outputs; sums like "past_sequence_length + 1" too), so that inference and
// folding see the static shapes GE compiles for. The binding is kept on the model for the reports and the history.
// Counters: inputs_bound, dims_bound, symbols_bound, symbols_by_policy, symbols_kept.
#include <stdexcept>

#include "ir/model.h"
#include "options/options.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

class InputShapeBinding final : public Pass {
 public:
  std::string name() const override { return "InputShapeBinding"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    Graph& g = *ctx.model.graph;
    ShapeBinding binding;
    try {
      binding = resolveShapeBinding(g, ctx.options.bindingRequest());
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(e.what());
    }
    ctx.model.binding = binding;
    if (binding.empty() && binding.inputShapes.empty()) return r;
    const std::map<std::string, int64_t> symbols = binding.values();
    for (const BoundSymbol& b : binding.bound) {
      r.add("symbols_bound");
      if (b.source.rfind("dim_policy", 0) == 0) r.add("symbols_by_policy");
    }
    if (!binding.kept.empty()) r.counters["symbols_kept"] = static_cast<int64_t>(binding.kept.size());
    // input_shape's static positions on inputs that were unknown (not symbolic) there.
    for (Value* in : g.inputs()) {
      auto it = binding.inputShapes.find(in->name());
      if (it == binding.inputShapes.end()) continue;
      ValueType t = in->type();
      std::vector<Dim> dims = t.shape.rankKnown() ? t.shape.dims() : std::vector<Dim>(it->second.size());
      for (size_t i = 0; i < dims.size() && i < it->second.size(); ++i)
        if (it->second[i].isStatic()) dims[i] = it->second[i];
      t.shape = Shape(dims);
      if (!(t == in->type())) {
        in->setType(t);
        r.add("inputs_bound");
      }
    }
    // The same symbol elsewhere is the same extent.
    g.forEachGraph([&](Graph& sg) {
      for (Value* v : sg.values()) {
        if (!v->type().isTensor() || !v->type().shape.rankKnown()) continue;
        ValueType t = v->type();
        bool changed = false;
        for (Dim& d : t.shape.dims()) {
          if (!d.isSymbolic()) continue;
          if (auto e = evaluateSymbol(d.symbol, symbols)) {
            d = Dim::fixed(*e);
            changed = true;
          }
        }
        if (changed) {
          v->setType(t);
          r.add("dims_bound");
        }
      }
    });
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeInputShapeBindingPass() { return std::make_unique<InputShapeBinding>(); }

}  // namespace kiln
