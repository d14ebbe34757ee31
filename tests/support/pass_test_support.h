#pragma once
// What the pass and fusion tests share: run one pass on a model, read a counter, list verifier problems.
#include <QString>
#include <QStringList>
#include <QtGlobal>

#include "ir/model.h"
#include "ir/verifier.h"
#include "options/options.h"
#include "passes/pass.h"

namespace kiln::testing {

// Runs `pass` once; its warnings are printed so a failing test shows them.
inline PassResult runPass(Pass& pass, Model& m, const Options& options = Options()) {
  std::vector<std::string> warnings;
  PassContext ctx{m, options, warnings};
  PassResult r = pass.run(ctx);
  for (const auto& w : warnings) qInfo("  warning: %s", w.c_str());
  return r;
}

inline int64_t counter(const PassResult& r, const std::string& name) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? 0 : it->second;
}

// Every problem the verifier finds, one per line; empty for a valid model.
inline QString problems(const Model& m) {
  QStringList out;
  for (const auto& p : verifyModel(m)) out << QString::fromStdString(p);
  return out.join("\n");
}

}  // namespace kiln::testing
