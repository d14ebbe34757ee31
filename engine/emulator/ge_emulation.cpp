#include "emulator/ge_emulation.h"

#include <chrono>
#include <unordered_map>

#include "emulator/arena_executor.h"
#include "emulator/function_expander.h"
#include "emulator/stored_layout.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace kiln {
namespace {

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

ExecutionOptions twinOptions(const Model& twin, ExecutionOptions o) {
  o.opset = twin.opsetFor("");
  o.functions = makeFunctionExpander(twin);
  return o;
}

// A graph output as its logical tensor (a blocked one at its origin), floats widened to fp32 for comparing.
Tensor comparable(const Tensor& t, const ValueType& type, int64_t maxBytes) {
  Tensor x = logicalTensor(t, type, maxBytes);
  if (isFloating(x.dtype()) && x.dtype() != DType::Float && x.dtype() != DType::Double) x = convertTensor(x, DType::Float);
  return x;
}

// `t` in the element type of `to` (inputs of one side fed to the other).
Tensor fitTo(const Tensor& t, const Value& to) {
  const DType want = to.type().dtype;
  return want != DType::Undefined && want != t.dtype() ? convertTensor(t, want) : t;
}

Value* valueNamed(const Graph& g, const std::string& name) {
  for (Value* v : g.values())
    if (v->name() == name) return v;
  return nullptr;
}

std::vector<std::string> absorbedNames(const Node& n) {
  if (const Attribute* a = n.attr("_datadump_original_op_names"))
    if (const auto* names = a->get<std::vector<std::string>>(); names && !names->empty()) return *names;
  return {n.name()};
}

bool isStructural(const Node& n) {
  const std::string& t = n.opType();
  return t == "Data" || t == "Const" || t == "Constant" || t == "NetOutput";
}

// `t` at extents `dims` when they hold as many elements (an output GE keeps 4-D that the source has 2-D).
Tensor reshaped(const Tensor& t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (!t.valid() || t.dims() == dims || t.numel() != n) return t;
  return Tensor::fromBytes(t.dtype(), dims, std::string(reinterpret_cast<const char*>(t.data()), t.byteSize()));
}

}  // namespace

std::string GeEmulation::notRunSummary() const {
  std::string s = std::to_string(issues.size()) + (issues.size() == 1 ? " op cannot run: " : " ops cannot run: ");
  for (size_t i = 0; i < issues.size() && i < 3; ++i) s += (i ? "; " : "") + issues[i].text();
  if (issues.size() > 3) s += "; ...";
  return s;
}

GeEmulation emulateGeModel(const Model& ge, const std::vector<Tensor>& inputs, const ExecutionOptions& options) {
  GeEmulation out;
  geops::LoweredModel compiled = geops::lowerGeModel(ge);
  out.issues = compiled.issues;
  out.inferred = compiled.inferred;
  if (!compiled.model) return out;
  geops::LoweredModel full = geops::lowerGeModel(ge, {.promoteFloat16 = true});
  if (!full.model) {
    out.issues = full.issues;
    return out;
  }
  const Graph& cg = *compiled.model->graph;
  const Graph& fg = *full.model->graph;
  if (inputs.size() != fg.inputs().size())
    throw std::runtime_error("the graph takes " + std::to_string(fg.inputs().size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  std::vector<Tensor> fullInputs, compiledInputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    fullInputs.push_back(fitTo(inputs[i], *fg.inputs()[i]));
    compiledInputs.push_back(fitTo(inputs[i], *cg.inputs()[i]));
  }
  const int64_t limit = options.kernel.maxOutputBytes;
  EmulationReport& r = out.report;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Tensor> ref = ReferenceExecutor(twinOptions(*full.model, options)).run(fg, fullInputs);
  r.referenceMs = msSince(start);
  for (size_t i = 0; i < ref.size(); ++i) r.reference.push_back(comparable(ref[i], fg.outputs()[i]->type(), limit));
  out.ran = true;
  bool planned = false;
  for (const Node* n : cg.nodes()) planned = planned || !n->annotation("mem.out").empty();
  out.inArena = planned;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    if (planned) {
      r.arena = runInArena(cg, compiledInputs, twinOptions(*compiled.model, options));
    } else {  // a graph before GE's Build stage: no offsets to run at, every tensor in its own buffer
      r.arena.outputs = ReferenceExecutor(twinOptions(*compiled.model, options)).run(cg, compiledInputs);
    }
    r.compiledMs = msSince(t0) - r.arena.prepareMs;
  } catch (const NotEmulatable& e) {
    r.compiledError = e.what();
    r.compiledNotEmulatable = true;
    return out;
  } catch (const std::exception& e) {
    r.compiledError = e.what();
    return out;
  }
  for (size_t i = 0; i < r.arena.outputs.size(); ++i) {
    r.compiled.push_back(comparable(r.arena.outputs[i], cg.outputs()[i]->type(), limit));
    r.errors.push_back({cg.outputs()[i]->name(), compareTensors(r.compiled.back(), r.reference[i])});
  }
  return out;
}

SourceComparison compareGeWithSource(const Model& ge, Model& source, const std::vector<Tensor>& inputs,
                                     const PrecisionGate& gate, const ExecutionOptions& options) {
  SourceComparison out;
  geops::LoweredModel lowered = geops::lowerGeModel(ge);
  out.ge.issues = lowered.issues;
  out.ge.inferred = lowered.inferred;
  if (!lowered.model) return out;
  const Graph& sg = *source.graph;
  const Graph& tg = *lowered.model->graph;
  // Inputs: by name where every GE input names a source input, else by position.
  std::vector<Tensor> geInputs;
  bool byName = true;
  for (const Value* v : tg.inputs()) {
    bool found = false;
    for (size_t i = 0; i < sg.inputs().size() && i < inputs.size(); ++i)
      found = found || sg.inputs()[i]->name() == v->name();
    byName = byName && found;
  }
  if (!byName && tg.inputs().size() != inputs.size())
    throw std::runtime_error("the .om takes " + std::to_string(tg.inputs().size()) + " inputs and the source " +
                             std::to_string(inputs.size()) + ", and their names differ: they cannot be paired");
  for (size_t k = 0; k < tg.inputs().size(); ++k) {
    size_t from = k;
    if (byName)
      for (size_t i = 0; i < sg.inputs().size(); ++i)
        if (sg.inputs()[i]->name() == tg.inputs()[k]->name()) from = i;
    Tensor t = fitTo(inputs[from], *tg.inputs()[k]);
    if (const auto dims = tg.inputs()[k]->type().shape.staticExtents(); dims && *dims != t.dims()) {
      t = reshaped(t, *dims);
      out.notes.push_back("input '" + tg.inputs()[k]->name() + "' fed at the .om's extents " +
                          Shape::ofStatic(*dims).toString() + " (the source's are " +
                          Shape::ofStatic(inputs[from].dims()).toString() + ")");
    }
    geInputs.push_back(std::move(t));
  }
  out.inputMatching = byName ? "by name" : "by position";

  // Which GE op is compared with which source node: the last (in the source's order) of the ops it absorbed.
  std::unordered_map<std::string, const Node*> sourceByName;
  std::unordered_map<const Node*, size_t> sourceOrder;
  size_t order = 0;
  for (const Node* n : sg.nodes()) {
    sourceByName.emplace(n->name(), n);
    sourceOrder[n] = order++;
  }
  struct Pair {
    const Node* ge;
    const Node* source;
  };
  std::vector<Pair> pairs;
  for (const Node* n : ge.graph->nodes()) {
    if (isStructural(*n) || n->numOutputs() == 0 || !n->output(0)) continue;
    const Node* best = nullptr;
    for (const std::string& name : absorbedNames(*n))
      if (auto it = sourceByName.find(name); it != sourceByName.end())
        if (!best || sourceOrder[it->second] > sourceOrder[best]) best = it->second;
    if (best && best->numOutputs() > 0 && best->output(0)) pairs.push_back({n, best});
  }

  // The source, with the paired nodes' results as extra outputs for this run.
  Graph& sgm = *source.graph;
  const std::vector<Value*> sourceOutputs = sg.outputs();
  for (const Pair& p : pairs) sgm.addOutput(p.source->output(0));
  std::vector<Tensor> sourceResults;
  const auto start = std::chrono::steady_clock::now();
  try {
    sourceResults = runReference(source, inputs, options).outputs;
  } catch (...) {
    sgm.setOutputs(sourceOutputs);
    throw;
  }
  out.ge.report.referenceMs = msSince(start);
  sgm.setOutputs(sourceOutputs);

  // The .om as compiled, in GE's arena: its outputs.
  EmulationReport& r = out.ge.report;
  const int64_t limit = options.kernel.maxOutputBytes;
  bool planned = false;
  for (const Node* n : tg.nodes()) planned = planned || !n->annotation("mem.out").empty();
  out.ge.inArena = planned;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    if (planned) r.arena = runInArena(tg, geInputs, twinOptions(*lowered.model, options));
    else r.arena.outputs = ReferenceExecutor(twinOptions(*lowered.model, options)).run(tg, geInputs);
    r.compiledMs = msSince(t0) - r.arena.prepareMs;
  } catch (const NotEmulatable& e) {
    r.compiledError = e.what();
    r.compiledNotEmulatable = true;
  } catch (const std::exception& e) {
    r.compiledError = e.what();
  }
  out.ge.ran = r.compiledError.empty();
  for (size_t i = 0; i < sourceOutputs.size(); ++i) r.reference.push_back(sourceResults[i]);
  if (out.ge.ran) {
    if (r.arena.outputs.size() != sourceOutputs.size())
      out.notes.push_back("the .om has " + std::to_string(r.arena.outputs.size()) + " outputs and the source " +
                          std::to_string(sourceOutputs.size()) + ": the first " +
                          std::to_string(std::min(r.arena.outputs.size(), sourceOutputs.size())) + " are compared in order");
    for (size_t i = 0; i < r.arena.outputs.size() && i < sourceOutputs.size(); ++i) {
      Tensor got = reshaped(comparable(r.arena.outputs[i], tg.outputs()[i]->type(), limit), sourceResults[i].dims());
      if (!isFloating(sourceResults[i].dtype()) && got.dtype() != sourceResults[i].dtype())
        got = convertTensor(got, sourceResults[i].dtype());
      r.compiled.push_back(got);
      r.errors.push_back({sourceOutputs[i]->name(), compareTensors(got, sourceResults[i])});
      out.outputs.push_back(judgeOutput(sourceOutputs[i]->name(), got, sourceResults[i], gate));
    }
  }

  // Per op: the twin in reference mode (GE's element types, every tensor its own buffer), paired results captured.
  if (!pairs.empty()) {
    Graph& tgm = *lowered.model->graph;
    const std::vector<Value*> twinOutputs = tg.outputs();
    std::vector<const Pair*> kept;
    for (const Pair& p : pairs)
      if (Value* v = valueNamed(tg, p.ge->output(0)->name())) {
        tgm.addOutput(v);
        kept.push_back(&p);
      }
    const std::vector<Tensor> geResults = ReferenceExecutor(twinOptions(*lowered.model, options)).run(tg, geInputs);
    for (size_t k = 0; k < kept.size(); ++k) {
      const Value* v = tg.outputs()[twinOutputs.size() + k];
      const Tensor& want = sourceResults[sourceOutputs.size() + size_t(&*kept[k] - &pairs[0])];
      Tensor got = reshaped(comparable(geResults[twinOutputs.size() + k], v->type(), limit), want.dims());
      if (!isFloating(want.dtype()) && got.dtype() != want.dtype()) got = convertTensor(got, want.dtype());
      NodeComparison c{kept[k]->ge->name(), kept[k]->ge->opType(), kept[k]->source->name(),
                       judgeOutput(kept[k]->ge->name(), got, want, gate)};
      if (!c.verdict.passed && out.firstDivergence.empty())
        out.firstDivergence = "op '" + c.geOp + "' (" + c.geType + ", source '" + c.sourceNode + "'): " + c.verdict.reason;
      out.nodes.push_back(std::move(c));
    }
    tgm.setOutputs(twinOutputs);
  }
  return out;
}

}  // namespace kiln
