// Stage 2 (optimize) benchmark: for every shared model and the generated samples, the nodes after Stage 1 and
// Stage 2, fusions by rule, TransData left, streams, events and the Stage 2 time (median of 3 runs). LLaMA at 8, 16
// and 32 layers shows whether Stage 2 grows linearly with the graph (time per node should stay flat). Target:
// Stage 2 <= 200 ms for llama --layers 32. A second table shows Stage 3's memory plan per model: the arena with
// reuse against every tensor in its own block, the lower bound, and the Stage 3 time; a model with symbolic input
// dims is planned again with them bound as `kiln run` binds them (1 each; the generated LLaMA at sequence 128), since
// tensors without a static size are never planned. Prints the tables and writes JSON.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench_corpus.h"
#include "bench_json.h"
#include "emulator/emulation_inputs.h"
#include "io/model_loader.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/compile_summary.h"
#include "samples/sample_models.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

struct Row {
  std::string model, status = "ok";
  int64_t stage1Nodes = 0, stage2Nodes = 0;
  double stage2Ms = 0, stage3Ms = 0;
  CompileSummary compiled;
};

// `load` builds a fresh model for each repetition (passes rewrite it). With `dims`, symbolic inputs are bound first
// (each symbol from it, else 1).
Row measure(const std::string& name, const std::function<std::unique_ptr<Model>()>& load,
            const std::map<std::string, int64_t>* dims = nullptr) {
  Row row;
  row.model = name;
  std::vector<double> times, stage3;
  for (int rep = 0; rep < 3; ++rep) {
    std::unique_ptr<Model> m;
    try {
      m = load();
    } catch (const std::exception& e) {
      row.status = std::string("load failed: ") + e.what();
      return row;
    }
    PassManager pm;
    Options o;
    o.set("verify_each_pass=false");  // measure the passes, not the checker
    std::string bound;
    if (dims) {
      std::string text;
      for (const auto& [symbol, v] : *dims) text += symbol + ":" + std::to_string(v) + ";";
      o.setValue("dim_values", Json(text));
      bound = resolveShapeBinding(*m->graph, o.bindingRequest()).shortText();
    }
    if (dims && rep == 0) row.model += " (" + (bound.empty() ? std::string("static") : bound) + ")";
    addStandardPasses(pm, o);
    const RunSummary s = pm.run(*m, o);
    if (s.status == RunStatus::Failed) {
      row.status = "failed: " + s.error;
      return row;
    }
    double ms = 0, ms3 = 0;
    for (const PassRecord& p : s.passes) {
      if (p.stage == Stage::Prepare) row.stage1Nodes = p.nodesAfter;
      if (p.stage == Stage::Optimize) ms += p.ms;
      if (p.stage == Stage::Compile) ms3 += p.ms;
    }
    times.push_back(ms);
    stage3.push_back(ms3);
    row.stage2Nodes = s.nodesAfter;
    row.compiled = summarizeCompile(*m, s);
  }
  std::sort(times.begin(), times.end());
  row.stage2Ms = times[1];
  std::sort(stage3.begin(), stage3.end());
  row.stage3Ms = stage3[1];
  return row;
}

std::string fusedText(const CompileSummary& c) {
  std::string s;
  for (const auto& [rule, n] : c.fused) {
    std::string shortName = rule;
    if (shortName.size() > 6 && shortName.ends_with("Fusion")) shortName.resize(shortName.size() - 6);
    s += (s.empty() ? "" : " ") + shortName + ":" + std::to_string(n);
  }
  return s.empty() ? "-" : s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/bench_stage2.json";
  const fs::path models = fs::path(KILN_SHARED_DIR) / "models";
  std::vector<Row> rows;
  for (const auto& f : benchCorpusModels(models))
    rows.push_back(measure(f.filename().string(), [f] { return std::move(loadModel(f.string()).model); }));
  auto sample = [](const std::string& name, int layers, bool weights) {
    return [=] { return buildSample(name, SampleOptions{.layers = layers, .weights = weights, .seed = 1}); };
  };
  rows.push_back(measure("resnet50 (generated)", sample("resnet50", 0, true)));
  rows.push_back(measure("mobilenetv2 (generated)", sample("mobilenetv2", 0, true)));
  rows.push_back(measure("bert-base (generated)", sample("bert-base", 0, false)));
  for (int layers : {8, 16, 32})
    rows.push_back(measure("llama --layers " + std::to_string(layers), sample("llama", layers, false)));

  std::printf("%-40s %7s %7s %9s %6s %7s %6s %8s  %s\n", "model", "stage1", "stage2", "ms", "trans", "streams",
              "events", "us/node", "fused (by rule)");
  Json out = Json::array();
  for (const Row& r : rows) {
    const double perNode = r.stage1Nodes > 0 ? 1000.0 * r.stage2Ms / double(r.stage1Nodes) : 0;
    if (r.status != "ok") {
      std::printf("%-40s %s\n", r.model.c_str(), r.status.c_str());
    } else {
      std::printf("%-40s %7lld %7lld %9.2f %6lld %7lld %6lld %8.2f  %s\n", r.model.c_str(),
                  static_cast<long long>(r.stage1Nodes), static_cast<long long>(r.stage2Nodes), r.stage2Ms,
                  static_cast<long long>(r.compiled.transdata), static_cast<long long>(r.compiled.streams),
                  static_cast<long long>(r.compiled.events), perNode, fusedText(r.compiled).c_str());
    }
    Json j = compileSummaryToJson(r.compiled);
    j.set("model", r.model);
    j.set("status", r.status);
    j.set("nodes_after_stage1", r.stage1Nodes);
    j.set("nodes_after_stage2", r.stage2Nodes);
    j.set("stage2_ms", r.stage2Ms);
    j.set("stage2_us_per_node", perNode);
    j.set("stage3_ms", r.stage3Ms);
    out.push(j);
  }
  std::printf("\ntarget: Stage 2 <= 200 ms for llama --layers 32; us/node flat from 8 to 32 layers = linear cost\n");

  // The models with symbolic sizes again, bound: their plan covers every tensor.
  std::vector<Row> memoryRows = rows;
  const std::map<std::string, int64_t> llamaDims{{"batch", 1}, {"sequence", 128}}, none;
  for (const auto& f : benchCorpusModels(models)) {
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.model == f.filename().string(); });
    if (it == rows.end() || it->compiled.unsizedTensors == 0) continue;
    memoryRows.push_back(measure(f.filename().string(), [f] { return std::move(loadModel(f.string()).model); }, &none));
  }
  for (int layers : {8, 16, 32})
    memoryRows.push_back(measure("llama --layers " + std::to_string(layers), sample("llama", layers, false), &llamaDims));

  std::printf("\n%-40s %12s %12s %12s %7s %8s %9s\n", "model (Stage 3 memory)", "arena", "lower bound", "no reuse",
              "saved", "unsized", "ms");
  for (const Row& r : memoryRows) {
    if (r.status != "ok" || !r.compiled.built) continue;
    const CompileSummary& c = r.compiled;
    const double saved = c.noReuseBytes > 0 ? 100.0 * (1.0 - double(c.arenaBytes) / double(c.noReuseBytes)) : 0;
    std::printf("%-40s %12lld %12lld %12lld %6.1f%% %8lld %9.2f\n", r.model.c_str(),
                static_cast<long long>(c.arenaBytes), static_cast<long long>(c.lowerBoundBytes),
                static_cast<long long>(c.noReuseBytes), saved, static_cast<long long>(c.unsizedTensors), r.stage3Ms);
  }
  for (size_t i = rows.size(); i < memoryRows.size(); ++i) {  // the bound re-plans, in the JSON too
    Json j = compileSummaryToJson(memoryRows[i].compiled);
    j.set("model", memoryRows[i].model);
    j.set("status", memoryRows[i].status);
    j.set("stage3_ms", memoryRows[i].stage3Ms);
    out.push(j);
  }
  return writeBenchJson(out, jsonPath);
}
