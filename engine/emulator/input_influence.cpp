#include "emulator/input_influence.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_set>

#include "ir/dtype.h"
#include "ir/model.h"

namespace kiln {
namespace {

bool within(const Graph* g, const Node& holder) {
  for (; g; g = g->owner() ? g->owner()->graph() : nullptr)
    if (g->owner() == &holder) return true;
  return false;
}

// Main-graph inputs behind `seeds`: back through producers, through a body's parameters to the node holding the
// body, and through the values a producer's bodies capture from outside.
std::vector<const Value*> mainInputsBehind(std::vector<const Value*> seeds) {
  std::vector<const Value*> found;
  std::unordered_set<const Value*> seen;
  std::unordered_set<const Node*> expanded;
  auto push = [&](const Value* v) {
    if (v && seen.insert(v).second) seeds.push_back(v);
  };
  auto expand = [&](const Node& n) {
    if (!expanded.insert(&n).second) return;
    for (const Value* in : n.inputs()) push(in);
    if (!n.hasSubgraphs()) return;
    for (const Graph* body : n.subgraphs())
      body->forEachGraph([&](const Graph& g) {
        for (const Node* inner : g.nodes())
          for (const Value* in : inner->inputs())
            if (in && !within(in->graph(), n)) push(in);  // a capture from outside the node
      });
  };
  for (const Value* v : seeds) seen.insert(v);
  while (!seeds.empty()) {
    const Value* v = seeds.back();
    seeds.pop_back();
    if (v->constant()) continue;
    if (v->isGraphInput()) {
      if (const Node* holder = v->graph()->owner()) {
        expand(*holder);  // a body's parameter: what the holding node passes in
      } else if (std::find(found.begin(), found.end(), v) == found.end()) {
        found.push_back(v);
      }
    } else if (const Node* p = v->producer()) {
      expand(*p);
    }
  }
  return found;
}

// "'sr' (int64 scalar = 7)", "'input' (fp32[1×16000])": small inputs show the value they got.
std::string describe(const Value& v, const Graph& main, const std::vector<Tensor>& inputs) {
  std::string s = "'" + v.name() + "'";
  const auto& ins = main.inputs();
  const auto at = std::find(ins.begin(), ins.end(), &v);
  const size_t i = static_cast<size_t>(at - ins.begin());
  if (at == ins.end() || i >= inputs.size() || !inputs[i].valid()) return s;
  const Tensor& t = inputs[i];
  s += " (" + std::string(dtypeName(t.dtype()));
  if (t.numel() > 4 || t.dtype() == DType::String) {
    std::string dims;
    for (int64_t d : t.dims()) dims += (dims.empty() ? "" : "×") + std::to_string(d);
    return s + "[" + dims + "])";
  }
  s += t.dims().empty() ? " scalar = " : " = ";
  const std::vector<double> values = t.toDouble();
  std::string shown;
  for (double x : values) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    shown += (shown.empty() ? "" : ", ") + std::string(buf);
  }
  return s + (t.dims().empty() ? shown : "[" + shown + "]") + ")";
}

std::string listed(const std::vector<const Value*>& values, const Graph& main, const std::vector<Tensor>& inputs) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i == 4) return s + " and " + std::to_string(values.size() - 4) + " more";
    s += (i == 0 ? "" : i + 1 == values.size() ? " and " : ", ") + describe(*values[i], main, inputs);
  }
  return s;
}

}  // namespace

InputInfluence inputsBehind(const Model& m, const std::vector<const Node*>& path) {
  InputInfluence r;
  std::set<const Node*> live;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* n : g.nodes()) live.insert(n);
  });
  for (const Node* n : path)
    if (live.count(n)) {
      r.failed = n;
      break;
    }
  if (!r.failed) return r;
  // Deciding: the conditions (and trip counts) of every If/Loop holding the node.
  std::vector<const Value*> conditions;
  for (const Graph* g = r.failed->graph(); g && g->owner(); g = g->owner()->graph()) {
    const Node& holder = *g->owner();
    if (!holder.domain().empty()) continue;
    if (holder.opType() == "If") conditions.push_back(holder.input(0));
    if (holder.opType() == "Loop")
      for (size_t i = 0; i < 2 && i < holder.numInputs(); ++i) conditions.push_back(holder.input(i));
  }
  conditions.erase(std::remove(conditions.begin(), conditions.end(), nullptr), conditions.end());
  r.deciding = mainInputsBehind(conditions);
  std::vector<const Value*> reads;
  for (const Value* v : r.failed->inputs())
    if (v) reads.push_back(v);
  for (const Value* v : mainInputsBehind(reads))
    if (std::find(r.deciding.begin(), r.deciding.end(), v) == r.deciding.end()) r.feeding.push_back(v);
  return r;
}

std::string madeUpInputsHint(const Model& m, const std::vector<const Node*>& path, const std::vector<Tensor>& inputs,
                             const std::vector<bool>& madeUp) {
  InputInfluence inf = inputsBehind(m, path);
  const Graph& main = *m.graph;
  auto keepMadeUp = [&](std::vector<const Value*>& values) {
    std::erase_if(values, [&](const Value* v) {
      const auto at = std::find(main.inputs().begin(), main.inputs().end(), v);
      const size_t i = static_cast<size_t>(at - main.inputs().begin());
      return i >= madeUp.size() || !madeUp[i];
    });
  };
  keepMadeUp(inf.deciding);
  keepMadeUp(inf.feeding);
  // Made-up floats change values, rarely where a run goes; made-up integers are ids, indices, lengths and shapes
  // that can point past a table or make a tensor that does not fit. Only those are worth a user's attention.
  std::erase_if(inf.feeding, [](const Value* v) { return isFloating(v->type().dtype); });
  if (!inf.failed || (inf.deciding.empty() && inf.feeding.empty())) return {};
  std::string s = "made up at random: ";
  if (!inf.deciding.empty())
    s += listed(inf.deciding, main, inputs) + (inf.deciding.size() == 1 ? " decides" : " decide") +
         " whether it runs (the condition of an If or Loop holding it)";
  if (!inf.feeding.empty())
    s += std::string(inf.deciding.empty() ? "" : ", ") + listed(inf.feeding, main, inputs) +
         (inf.feeding.size() == 1 ? " feeds" : " feed") + " it";
  const Value* example = !inf.deciding.empty() ? inf.deciding.front() : inf.feeding.front();
  return s + "; give values with --value " + example->name() + "=V (small inputs) or --inputs DIR|FILE.npz";
}

}  // namespace kiln
