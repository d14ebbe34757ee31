#pragma once
// Regression gates: `--fail-on EXPR`, a comparison of arithmetic over a case's metrics, numbers and the baseline —
// `latency > 1.05*baseline`, `arena > 1.02*lower_bound`, `max_error > 1e-3`, `fusions < baseline`,
// `baseline.arena - arena < -1048576`. The gate FAILS a case when the comparison holds. `baseline` alone is the
// baseline's value of the first metric the expression names; `baseline.NAME` names one. Grammar:
//   gate    := sum CMP sum            CMP: < <= > >= == !=
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := '-' unary | NUMBER | NAME | 'baseline' | 'baseline.' NAME | '(' sum ')'
#include <memory>
#include <string>

#include "report/run_metrics.h"

namespace kiln {

struct GateOutcome {
  enum class State { Passed, Failed, Skipped } state = State::Passed;
  std::string detail;  // "fusions 0 < 9 baseline" / why it was skipped
};

class GateExpr {
 public:
  // Throws std::invalid_argument with the position and what was expected.
  static GateExpr parse(const std::string& text);
  const std::string& text() const { return text_; }
  bool usesBaseline() const { return usesBaseline_; }
  // `baseline` null: the case has no baseline (a gate that uses one is skipped).
  GateOutcome evaluate(const RunMetrics& current, const RunMetrics* baseline) const;

  struct Node;

 private:
  std::string text_;
  bool usesBaseline_ = false;
  std::shared_ptr<const Node> root_;
};

const char* gateStateName(GateOutcome::State s);  // "passed", "failed", "skipped"

}  // namespace kiln
