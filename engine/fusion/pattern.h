#pragma once
// A small declarative matcher for fusion rules. A pattern is a tree of op patterns rooted at the anchor (the LAST
// node of the group); each operand either binds any value, or must be produced by another op pattern. Named
// bindings unify: an operand bound under a name already bound must be that same value, which is how "x feeds both
// the Erf branch and the final Mul" is written. Two-input ops marked commutative (Add, Mul) are tried both ways,
// with backtracking. After a match, every value produced inside the group except the anchor's outputs must be read
// only inside the group (and not be a graph output): a rule can fuse the group away without changing the meaning of
// anything outside it. So "single use" is the common case, and a value read twice inside the group (x in x·σ(x)) is
// still fine.
//
//   using namespace kiln::pattern;
//   const Op silu = op("Mul", {any("x"), from(op("Sigmoid", {any("x")}))}).commutative();
//   if (auto m = match(silu, anchor)) use(m->value("x"), m->nodes());
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class Node;
class Tensor;
class Value;

namespace pattern {

struct OpSpec;
class Op;

using NodePredicate = std::function<bool(const Node&)>;
using ValuePredicate = std::function<bool(const Value&)>;

// One input position of an op pattern.
struct Operand {
  std::string bind;                                      // name of the value (optional); unifies with earlier bindings
  ValuePredicate where;                                  // extra test on the value (constant, shape, dtype...)
  std::vector<std::shared_ptr<const OpSpec>> producers;  // when non-empty: produced by one of these (in the group)
  bool optional = false;                                 // the input may be omitted (null) or absent
};

// An op pattern: the node's qualified type is one of `types`, it has at least as many inputs as operands listed
// (extra inputs are not matched), and `where` holds.
struct OpSpec {
  std::vector<std::string> types;
  std::vector<Operand> inputs;
  bool commutative = false;  // two operands, tried in both orders
  NodePredicate where;
  std::string bind;
};

// Builder around an OpSpec with value semantics: a modified copy never changes the pattern it was copied from.
class Op {
 public:
  Op(std::vector<std::string> types, std::vector<Operand> inputs);
  Op& commutative();
  Op& where(NodePredicate p);
  Op& bind(std::string name);
  std::shared_ptr<const OpSpec> spec() const { return spec_; }

 private:
  void own();
  std::shared_ptr<OpSpec> spec_;
};

inline Op op(std::string type, std::vector<Operand> inputs) { return Op({std::move(type)}, std::move(inputs)); }
inline Op op(std::vector<std::string> types, std::vector<Operand> inputs) {
  return Op(std::move(types), std::move(inputs));
}

// Any value (named, optionally tested).
Operand any(std::string bind = {}, ValuePredicate where = {});
// A value produced by `p` (or by any of `ps`), whose producer joins the group.
Operand from(const Op& p, std::string bind = {});
Operand fromAny(const std::vector<Op>& ps, std::string bind = {});
// A constant (initializer or Constant node output, not a graph input) whose every element is within `tolerance`
// (relative) of `x`. Bound under `bind` when given.
Operand scalar(double x, double tolerance = 1e-6, std::string bind = {});
// Any constant; `where` may test its data.
Operand constant(std::string bind = {}, std::function<bool(const Tensor&)> where = {});

class Match {
 public:
  Node* node(const std::string& name) const;    // null when not bound
  Value* value(const std::string& name) const;  // null when not bound
  // Every matched node, anchor first.
  const std::vector<Node*>& nodes() const { return nodes_; }
  bool contains(const Node* n) const;

 private:
  friend class Matcher;
  std::map<std::string, Node*> nodeBinds_;
  std::map<std::string, Value*> valueBinds_;
  std::vector<Node*> nodes_;
};

// Matches `p` at `anchor`. `keep` lists values produced in the group that may be read outside it besides the
// anchor's outputs (null entries ignored).
std::optional<Match> match(const Op& p, Node& anchor, const std::vector<const Value*>& keep = {});

// The constant data of a value: an initializer or a Constant node's tensor, never a graph input. Null otherwise.
const Tensor* constantOf(const Value* v);
// True when `v` is a constant whose every element is within `tolerance` (relative) of `x`.
bool isConstantNear(const Value* v, double x, double tolerance = 1e-6);

}  // namespace pattern
}  // namespace kiln
