// InputShapeBinding: applies the input_shape option (ATC's --input_shape) to the graph inputs, and binds each
// symbolic dimension it fixes ("batch" -> 1) everywhere else the same symbol appears, so that inference and
// folding see static shapes. The dim_values option binds symbols by name directly (ONNX Runtime's free dimension
// overrides), for models whose inputs share a few named dimensions.
#include <stdexcept>

#include "ir/model.h"
#include "passes/options.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

class InputShapeBinding final : public Pass {
 public:
  std::string name() const override { return "InputShapeBinding"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    const auto shapes = ctx.options.inputShapes();
    std::map<std::string, int64_t> symbols = ctx.options.dimValues();  // symbol -> bound extent
    if (shapes.empty() && symbols.empty()) return r;
    const std::map<std::string, int64_t> named = symbols;
    Graph& g = *ctx.model.graph;
    for (const auto& [name, dims] : shapes) {
      Value* in = nullptr;
      for (Value* v : g.inputs())
        if (v->name() == name) in = v;
      if (!in) throw std::runtime_error("input_shape names '" + name + "', which is not a graph input");
      ValueType t = in->type();
      if (!t.isTensor()) throw std::runtime_error("input '" + name + "' is not a tensor");
      if (t.shape.rankKnown() && t.shape.rank() != dims.size())
        throw std::runtime_error("input_shape gives '" + name + "' rank " + std::to_string(dims.size()) +
                                 " but the model declares rank " + std::to_string(t.shape.rank()));
      std::vector<Dim> bound = dims;
      for (size_t i = 0; i < bound.size(); ++i) {
        const Dim old = t.shape.rankKnown() ? t.shape[i] : Dim::unknown();
        if (!bound[i].isStatic()) {
          bound[i] = old;  // -1 keeps what the model says
          continue;
        }
        if (old.isStatic() && old.value != bound[i].value)
          throw std::runtime_error("input_shape gives '" + name + "' dimension " + std::to_string(i) + " = " +
                                   std::to_string(bound[i].value) + " but the model fixes it to " +
                                   std::to_string(old.value));
        if (old.isSymbolic()) {
          auto [it, fresh] = symbols.emplace(old.symbol, bound[i].value);
          if (!fresh && it->second != bound[i].value)
            throw std::runtime_error("input_shape binds '" + old.symbol + "' to both " + std::to_string(it->second) +
                                     " and " + std::to_string(bound[i].value) +
                                     (named.count(old.symbol) ? " (dim_values)" : ""));
        }
      }
      t.shape = Shape(bound);
      if (!(t == in->type())) {
        in->setType(t);
        r.add("inputs_bound");
      }
    }
    // The same symbol elsewhere (other inputs, declared value_info) is the same extent.
    g.forEachGraph([&](Graph& sg) {
      for (Value* v : sg.values()) {
        if (!v->type().isTensor() || !v->type().shape.rankKnown()) continue;
        ValueType t = v->type();
        bool changed = false;
        for (Dim& d : t.shape.dims()) {
          if (!d.isSymbolic()) continue;
          auto it = symbols.find(d.symbol);
          if (it == symbols.end()) continue;
          d = Dim::fixed(it->second);
          changed = true;
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
