#include "batch/gate_expr.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "batch/case_metric.h"

namespace kiln {

struct GateExpr::Node {
  enum class Kind { Number, Metric, Baseline, Neg, Binary } kind = Kind::Number;
  double number = 0;
  std::string metric;  // Metric / Baseline
  std::string op;      // Binary: + - * / < <= > >= == !=
  std::shared_ptr<const Node> left, right;
};

namespace {

using Node = GateExpr::Node;
using NodePtr = std::shared_ptr<const Node>;

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  NodePtr gate() {
    NodePtr l = sum();
    skipSpace();
    const size_t at = pos_;
    const std::string op = comparison();
    if (op.empty()) fail(at, "expected a comparison (< <= > >= == !=)");
    NodePtr r = sum();
    skipSpace();
    if (pos_ < s_.size()) fail(pos_, "unexpected '" + std::string(1, s_[pos_]) + "'");
    return binary(op, l, r);
  }

  std::string firstMetric;  // what a bare `baseline` refers to
  bool bareBaseline = false, usesBaseline = false;

 private:
  const std::string& s_;
  size_t pos_ = 0;

  [[noreturn]] void fail(size_t at, const std::string& what) const {
    throw std::invalid_argument("--fail-on '" + s_ + "': at column " + std::to_string(at + 1) + ": " + what);
  }
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  std::string comparison() {
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (s_.compare(pos_, std::char_traits<char>::length(op), op) == 0) {
        pos_ += std::char_traits<char>::length(op);
        return op;
      }
    return {};
  }
  static NodePtr binary(const std::string& op, NodePtr l, NodePtr r) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Binary;
    n->op = op;
    n->left = std::move(l);
    n->right = std::move(r);
    return n;
  }
  // One left-associative level: operands from `next`, joined by any of `ops`.
  template <typename Next>
  NodePtr leftAssociative(const char* ops, Next next) {
    NodePtr l = next();
    for (;;) {
      skipSpace();
      if (pos_ >= s_.size() || !std::strchr(ops, s_[pos_]) || s_[pos_] == '\0') return l;
      const std::string op(1, s_[pos_++]);
      l = binary(op, l, next());
    }
  }
  NodePtr sum() { return leftAssociative("+-", [this] { return product(); }); }
  NodePtr product() { return leftAssociative("*/", [this] { return unary(); }); }
  NodePtr unary() {
    skipSpace();
    if (pos_ >= s_.size()) fail(pos_, "expected a number, a metric or '('");
    const char c = s_[pos_];
    auto n = std::make_shared<Node>();
    if (c == '-') {
      ++pos_;
      n->kind = Node::Kind::Neg;
      n->left = unary();
      return n;
    }
    if (c == '(') {
      ++pos_;
      NodePtr inner = sum();
      skipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ')') fail(pos_, "expected ')'");
      ++pos_;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = s_.c_str() + pos_;
      char* end = nullptr;
      n->number = std::strtod(begin, &end);
      if (end == begin || !std::isfinite(n->number)) fail(pos_, "bad number");
      pos_ += static_cast<size_t>(end - begin);
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t at = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' ||
                                  s_[pos_] == '.' || s_[pos_] == ':'))
        ++pos_;
      std::string name = s_.substr(at, pos_ - at);
      if (name == "baseline") {
        n->kind = Node::Kind::Baseline;
        bareBaseline = usesBaseline = true;
        return n;
      }
      if (name.rfind("baseline.", 0) == 0) {
        n->kind = Node::Kind::Baseline;
        name = name.substr(9);
        usesBaseline = true;
      } else {
        n->kind = Node::Kind::Metric;
        if (firstMetric.empty()) firstMetric = name;
      }
      if (!isCaseMetric(name)) {
        std::string known;
        for (const std::string& k : caseMetricNames()) known += (known.empty() ? "" : ", ") + k;
        fail(at, "unknown metric '" + name + "' (known: " + known + ", baseline)");
      }
      n->metric = name;
      return n;
    }
    fail(pos_, "unexpected '" + std::string(1, c) + "'");
  }
};

// Gives the bare `baseline` nodes the expression's first metric (a fresh tree: nodes are shared and immutable).
NodePtr resolveBaseline(const NodePtr& n, const std::string& metric) {
  if (!n) return n;
  auto copy = std::make_shared<Node>(*n);
  if (copy->kind == Node::Kind::Baseline && copy->metric.empty()) copy->metric = metric;
  copy->left = resolveBaseline(n->left, metric);
  copy->right = resolveBaseline(n->right, metric);
  return copy;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Evaluator {
  const RunMetrics& current;
  const RunMetrics* baseline;
  std::string why;  // set when a value is missing

  std::optional<double> eval(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Number: return n.number;
      case Node::Kind::Metric: return caseMetric(current, n.metric, &why);
      case Node::Kind::Baseline: {
        if (!baseline) {
          why = "no baseline case for this model and option set";
          return std::nullopt;
        }
        auto v = caseMetric(*baseline, n.metric, &why);
        if (!v) why = "baseline: " + why;
        return v;
      }
      case Node::Kind::Neg: {
        auto v = eval(*n.left);
        return v ? std::optional<double>(-*v) : std::nullopt;
      }
      case Node::Kind::Binary: break;
    }
    auto l = eval(*n.left);
    auto r = eval(*n.right);
    if (!l || !r) return std::nullopt;
    if (n.op == "+") return *l + *r;
    if (n.op == "-") return *l - *r;
    if (n.op == "*") return *l * *r;
    if (n.op == "/") return *r == 0 ? std::optional<double>() : *l / *r;
    return std::nullopt;  // comparisons are evaluated by evaluate()
  }
};

}  // namespace

GateExpr GateExpr::parse(const std::string& text) {
  Parser p(text);
  GateExpr g;
  g.text_ = text;
  NodePtr root = p.gate();
  if (p.bareBaseline) {
    if (p.firstMetric.empty())
      throw std::invalid_argument("--fail-on '" + text + "': 'baseline' stands for a metric the expression names; "
                                  "name one (e.g. latency > 1.05*baseline) or use baseline.NAME");
    root = resolveBaseline(root, p.firstMetric);
  }
  g.usesBaseline_ = p.usesBaseline;
  g.root_ = std::move(root);
  return g;
}

GateOutcome GateExpr::evaluate(const RunMetrics& current, const RunMetrics* baseline) const {
  Evaluator ev{current, baseline, {}};
  auto l = ev.eval(*root_->left);
  auto r = l ? ev.eval(*root_->right) : std::nullopt;
  GateOutcome out;
  if (!l || !r) {
    out.state = GateOutcome::State::Skipped;
    out.detail = ev.why.empty() ? std::string("division by zero") : ev.why;
    return out;
  }
  const std::string& op = root_->op;
  const bool holds = op == "<" ? *l < *r : op == "<=" ? *l <= *r : op == ">" ? *l > *r : op == ">=" ? *l >= *r
                     : op == "==" ? *l == *r : *l != *r;
  out.state = holds ? GateOutcome::State::Failed : GateOutcome::State::Passed;
  out.detail = text_ + ": " + number(*l) + " " + op + " " + number(*r) + (holds ? " holds" : " does not hold");
  return out;
}

const char* gateStateName(GateOutcome::State s) {
  switch (s) {
    case GateOutcome::State::Passed: return "passed";
    case GateOutcome::State::Failed: return "failed";
    case GateOutcome::State::Skipped: return "skipped";
  }
  return "?";
}

}  // namespace kiln
