#include "fusion/pattern.h"

#include <algorithm>
#include <cmath>

#include "ir/graph.h"
#include "passes/constant_value.h"

namespace kiln::pattern {

Op::Op(std::vector<std::string> types, std::vector<Operand> inputs) : spec_(std::make_shared<OpSpec>()) {
  spec_->types = std::move(types);
  spec_->inputs = std::move(inputs);
}

// Copies share their spec until one of them is changed.
void Op::own() {
  if (spec_.use_count() > 1) spec_ = std::make_shared<OpSpec>(*spec_);
}

Op& Op::commutative() {
  own();
  spec_->commutative = true;
  return *this;
}

Op& Op::where(NodePredicate p) {
  own();
  spec_->where = std::move(p);
  return *this;
}

Op& Op::bind(std::string name) {
  own();
  spec_->bind = std::move(name);
  return *this;
}

Operand any(std::string bind, ValuePredicate where) { return Operand{std::move(bind), std::move(where), {}, false}; }

Operand from(const Op& p, std::string bind) { return Operand{std::move(bind), {}, {p.spec()}, false}; }

Operand fromAny(const std::vector<Op>& ps, std::string bind) {
  Operand o{std::move(bind), {}, {}, false};
  for (const Op& p : ps) o.producers.push_back(p.spec());
  return o;
}

Operand scalar(double x, double tolerance, std::string bind) {
  return any(std::move(bind), [x, tolerance](const Value& v) { return isConstantNear(&v, x, tolerance); });
}

Operand constant(std::string bind, std::function<bool(const Tensor&)> where) {
  return any(std::move(bind), [where = std::move(where)](const Value& v) {
    const Tensor* t = constantOf(&v);
    return t && (!where || where(*t));
  });
}

const Tensor* constantOf(const Value* v) {
  if (!v || v->isGraphInput()) return nullptr;  // an input with a default can be overridden by the caller
  return constantValueOf(v);
}

bool isConstantNear(const Value* v, double x, double tolerance) {
  const Tensor* t = constantOf(v);
  if (!t || (!isFloating(t->dtype()) && !isInteger(t->dtype()))) return false;
  if (t->numel() == 0 || t->numel() > 4096) return false;  // a scalar broadcast, not a whole tensor of them
  for (double e : t->toDouble())
    if (!(std::fabs(e - x) <= tolerance * std::max(1.0, std::fabs(x)))) return false;
  return true;
}

Node* Match::node(const std::string& name) const {
  auto it = nodeBinds_.find(name);
  return it == nodeBinds_.end() ? nullptr : it->second;
}

Value* Match::value(const std::string& name) const {
  auto it = valueBinds_.find(name);
  return it == valueBinds_.end() ? nullptr : it->second;
}

bool Match::contains(const Node* n) const { return std::find(nodes_.begin(), nodes_.end(), n) != nodes_.end(); }

class Matcher {
 public:
  explicit Matcher(const Graph* g) : graph_(g) {}

  bool matchOp(const OpSpec& p, Node& n, Match& m) const {
    if (n.graph() != graph_) return false;  // a subgraph's node and an outer one never fuse together
    if (std::none_of(p.types.begin(), p.types.end(), [&](const std::string& t) { return n.hasQualifiedType(t); }))
      return false;
    if (p.where && !p.where(n)) return false;
    if (!p.bind.empty()) {
      if (Node* bound = m.node(p.bind); bound && bound != &n) return false;
      m.nodeBinds_[p.bind] = &n;
    }
    if (!m.contains(&n)) m.nodes_.push_back(&n);
    if (p.commutative && p.inputs.size() == 2 && n.numInputs() == 2) {
      Match saved = m;
      if (matchOperand(p.inputs[0], n.input(0), m) && matchOperand(p.inputs[1], n.input(1), m)) return true;
      m = std::move(saved);
      return matchOperand(p.inputs[0], n.input(1), m) && matchOperand(p.inputs[1], n.input(0), m);
    }
    for (size_t i = 0; i < p.inputs.size(); ++i)
      if (!matchOperand(p.inputs[i], n.input(i), m)) return false;
    return true;
  }

 private:
  bool matchOperand(const Operand& o, Value* v, Match& m) const {
    if (!v) return o.optional;
    if (!o.bind.empty())
      if (Value* bound = m.value(o.bind); bound && bound != v) return false;
    if (o.where && !o.where(*v)) return false;
    if (!o.producers.empty()) {
      Node* p = v->producer();
      if (!p) return false;
      bool found = false;
      for (const auto& alt : o.producers) {
        Match saved = m;
        if (matchOp(*alt, *p, m)) {
          found = true;
          break;
        }
        m = std::move(saved);
      }
      if (!found) return false;
    }
    if (!o.bind.empty()) m.valueBinds_[o.bind] = v;
    return true;
  }

  const Graph* graph_;
};

std::optional<Match> match(const Op& p, Node& anchor, const std::vector<const Value*>& keep) {
  Match m;
  if (!Matcher(anchor.graph()).matchOp(*p.spec(), anchor, m)) return std::nullopt;
  // Closure: what the group computes internally must not be needed outside it.
  for (const Node* n : m.nodes())
    for (const Value* out : n->outputs()) {
      if (!out || n == &anchor || std::find(keep.begin(), keep.end(), out) != keep.end()) continue;
      if (out->isGraphOutput()) return std::nullopt;
      for (const Use& u : out->uses())
        if (!m.contains(u.node)) return std::nullopt;
    }
  return m;
}

}  // namespace kiln::pattern
