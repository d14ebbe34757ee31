// ConvActivationFusion: the activation after a Conv runs on the Cube's output on its way out of L0C instead of as
// a separate Vector pass over the whole activation in HBM:
//   act(Conv(x, W[, B]))            ->  kiln:FusedConv(x, W[, B])      activation, activation_params
//   act(Add(Conv(x, W[, B]), z))    ->  kiln:FusedConv(x, W, B, z)     (ResNet's residual shaped like the output;
//                                                                        a two-input Sum too)
// Activations: Relu, Clip (Relu6 for [0, 6], Relu for [0, inf); bounds from attributes before opset 11, from
// constant inputs after — computed bounds do not fuse), LeakyRelu [alpha], Sigmoid, HardSigmoid [alpha, beta],
// HardSwish (also written out as x·HardSigmoid(x) with 1/6, 1/2 or x·Relu6(x + 3)/6), Tanh, SiLU (x·Sigmoid(x)).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/fused_node.h"
#include "fusion/pattern.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"
#include "ir/tensor.h"

namespace kiln {
namespace {

using namespace pattern;

// A float attribute value for "no bound" that stays finite (JSON and the history cannot hold inf).
constexpr float kNoBound = std::numeric_limits<float>::max();

// Clip's bounds, or nullopt when one is computed at run time.
std::optional<std::pair<float, float>> clipBounds(const Node& clip) {
  if (clip.attr("min") || clip.attr("max"))  // opset < 11
    return std::pair{clip.attrFloat("min", -kNoBound), clip.attrFloat("max", kNoBound)};
  float bound[2] = {-kNoBound, kNoBound};
  for (size_t i = 0; i < 2; ++i) {
    const Value* v = clip.input(i + 1);
    if (!v) continue;  // omitted optional input: unbounded
    const Tensor* t = constantOf(v);
    if (!t || t->numel() != 1 || !isFloating(t->dtype())) return std::nullopt;
    bound[i] = static_cast<float>(std::clamp(t->toDouble()[0], -double(kNoBound), double(kNoBound)));
  }
  return std::pair{bound[0], bound[1]};
}

bool isRelu6(const Node& clip) {
  const auto b = clipBounds(clip);
  return b && b->first == 0.0f && b->second == 6.0f;
}

bool near(float a, double b) { return std::fabs(a - b) <= 1e-4 * std::max(1.0, std::fabs(b)); }

struct Activation {
  std::string name;
  std::vector<float> params;
};

// The activation a matched anchor stands for (the written-out forms are told by their anchor's shape).
std::optional<Activation> activationOf(const Node& anchor, const Match& m) {
  const std::string& t = anchor.opType();
  if (m.node("hswish")) return Activation{"HardSwish", {}};
  if (m.node("sigmoid")) return Activation{"SiLU", {}};
  if (t == "Relu" || t == "Sigmoid" || t == "Tanh" || t == "HardSwish") return Activation{t, {}};
  if (t == "LeakyRelu") return Activation{t, {anchor.attrFloat("alpha", 0.01f)}};
  if (t == "HardSigmoid") return Activation{t, {anchor.attrFloat("alpha", 0.2f), anchor.attrFloat("beta", 0.5f)}};
  if (t == "Clip") {
    const auto b = clipBounds(anchor);
    if (!b || !(b->first <= b->second)) return std::nullopt;
    if (b->first == 0.0f && b->second == 6.0f) return Activation{"Relu6", {}};
    if (b->first == 0.0f && b->second == kNoBound) return Activation{"Relu", {}};
    return Activation{"Clip", {b->first, b->second}};
  }
  return std::nullopt;
}

// The activation's input "s": the conv output "y" itself, or Add(y, z) with z shaped like y.
std::vector<Op> preActivation() {
  const auto plainConv = [](const Node& n) { return n.attrString("activation", "").empty() && n.numInputs() <= 3; };
  const Op conv =
      op(std::vector<std::string>{"Conv", "kiln:FusedConv"}, {any("x"), any("w")}).where(plainConv).bind("conv");
  const auto sameShape = [](const Value& z) { return z.type().shape.rankKnown(); };
  const auto twoInputs = [](const Node& n) { return n.numInputs() == 2; };  // Sum (opset < 8 exports) takes more
  return {conv, op(std::vector<std::string>{"Add", "Sum"}, {from(conv, "y"), any("z", sameShape)})
                    .commutative()
                    .where(twoInputs)
                    .bind("add")};
}

std::vector<Op> patterns() {
  const Operand pre = fromAny(preActivation(), "s");
  const Operand same = any("s");
  const auto unaryTypes =
      std::vector<std::string>{"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh"};
  const Op relu6 = op("Clip", {from(op("Add", {same, scalar(3.0)}).commutative())}).where(isRelu6).bind("hswish");
  const auto hardSigmoid6 = [](const Node& n) {
    return near(n.attrFloat("alpha", 0.2f), 1.0 / 6) && near(n.attrFloat("beta", 0.5f), 0.5);
  };
  return {
      op(unaryTypes, {pre}),
      op("Mul", {pre, from(op("Sigmoid", {same}).bind("sigmoid"))}).commutative(),
      op("Mul", {pre, from(op("HardSigmoid", {same}).where(hardSigmoid6).bind("hswish"))}).commutative(),
      // x·Relu6(x + 3)/6 in the orders exporters write it: (x·r)/6, (x·r)·(1/6), x·(r/6), x·(r·(1/6)).
      op("Div", {from(op("Mul", {pre, from(relu6)}).commutative()), scalar(6.0)}),
      op("Mul", {from(op("Mul", {pre, from(relu6)}).commutative()), scalar(1.0 / 6, 1e-4)}).commutative(),
      op("Mul", {pre, from(op("Div", {from(relu6), scalar(6.0)}))}).commutative(),
      op("Mul", {pre, from(op("Mul", {from(relu6), scalar(1.0 / 6, 1e-4)}).commutative())}).commutative(),
  };
}

class ConvActivationFusion final : public FusionRule {
 public:
  std::string name() const override { return "ConvActivationFusion"; }
  std::vector<std::string> anchorTypes() const override {
    return {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Mul", "Div"};
  }

  Node* apply(Node& anchor, PassContext&) override {
    static const std::vector<Op> kPatterns = patterns();
    for (const Op& p : kPatterns) {
      const auto m = match(p, anchor);
      if (!m) continue;
      const auto act = activationOf(anchor, *m);
      if (!act) continue;
      Node* conv = m->node("conv");
      std::vector<Value*> inputs = conv->inputs();
      if (Node* add = m->node("add")) {
        // The residual must not broadcast: the fused op adds z element for element.
        const Value* y = conv->output(0);
        const Value* z = m->value("z");
        if (!(z->type().shape == y->type().shape) || !(add->output(0)->type().shape == y->type().shape) ||
            z->type().dtype != y->type().dtype)
          continue;
        inputs.resize(3, nullptr);
        inputs.push_back(m->value("z"));
      }
      FusedNodeSpec spec;
      spec.opType = "FusedConv";
      spec.domain = std::string(kKilnDomain);
      spec.name = conv->name();
      spec.inputs = std::move(inputs);
      spec.outputs = {anchor.output(0)};
      for (const NamedAttribute& a : conv->attributes())
        if (a.name != "activation" && a.name != "activation_params") spec.attrs.push_back(a);
      spec.attrs.push_back({"activation", Attribute(act->name)});
      spec.attrs.push_back({"activation_params", Attribute(act->params)});
      return fuseNodes(m->nodes(), spec, name());
    }
    return nullptr;
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeConvActivationFusion() { return std::make_shared<ConvActivationFusion>(); }

}  // namespace kiln
