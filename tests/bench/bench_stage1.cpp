// Stage 1 (prepare) benchmark: node reduction on every shared model beside ONNX Runtime's "basic" level (constant
// folding + redundant-node elimination; reference counts measured with onnxruntime 1.30 for three models), and
// pipeline time on gpt2_past, the generated bert-base and llama --layers 32, with and without history recording.
// Prints a table and writes JSON. Targets: gpt2_past Stage 1 <= 100 ms; recording adds <= 25%; a run's history
// <= 3x one full snapshot; at least as few nodes as ORT basic on each reference model.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench_corpus.h"
#include "history/history_db.h"
#include "history/history_recorder.h"
#include "io/model_loader.h"
#include "io/onnx/onnx_reader.h"
#include "io/onnx/onnx_writer.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "util/json.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

// ONNX Runtime 1.30, GraphOptimizationLevel ORT_ENABLE_BASIC, node counts after optimisation (issue #3).
const std::map<std::string, int> kOrtBasic = {
    {"gpt2_past.onnx", 1390}, {"bert_toy_optimized.onnx", 297}, {"light_resnet50.onnx", 123}};

struct Row {
  std::string model;
  int64_t before = 0, after = 0;
  double ms = 0;
  std::string status;
};

Row stage1(Model& m, const std::string& name) {
  PassManager pm;
  Options o;
  addStandardPasses(pm, o);
  pm.setUntil("prepare");
  const RunSummary s = pm.run(m, o);
  Row r{name, s.nodesBefore, s.nodesAfter, 0, s.status == RunStatus::Failed ? "failed: " + s.error : "ok"};
  for (const auto& p : s.passes) r.ms += p.ms;
  return r;
}

double lastRecordedMs = 0;  // time of the recorded run alone (opening the database included)

struct RecordingCost {
  int64_t historyBytes = 0, snapshotBytes = 0;
};

int64_t dbBytes(const fs::path& p) {
  int64_t total = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    const auto size = fs::file_size(p.string() + suffix, ec);
    if (!ec) total += static_cast<int64_t>(size);
  }
  return total;
}

// Runs `pm` with a history recorder, and separately records just the imported graph (one full snapshot) to
// compare sizes.
RecordingCost runRecorded(PassManager& pm, Model& m, const Options& o) {
  const fs::path dir = fs::temp_directory_path() / "kiln-bench-stage1";
  fs::create_directories(dir);
  RecordingCost cost;
  const fs::path snap = dir / "snapshot.db", full = dir / "history.db";
  for (const fs::path& p : {snap, full})
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
  {
    HistoryDb db(snap.string());
    HistoryRecorder rec(db, "bench");
    rec.startRun(m, o.toJson());
  }
  cost.snapshotBytes = dbBytes(snap);
  {
    const auto t0 = std::chrono::steady_clock::now();
    HistoryDb db(full.string());
    HistoryRecorder rec(db, "bench");
    pm.addObserver(&rec);
    pm.run(m, o);
    lastRecordedMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  cost.historyBytes = dbBytes(full);
  return cost;
}

double medianMs(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/bench_stage1.json";
  const fs::path models = fs::path(KILN_SHARED_DIR) / "models";
  Json out = Json::object();

  // 1. Node reduction on the shared corpus.
  std::vector<Row> rows;
  for (const auto& f : benchCorpusModels(models)) {
    try {
      LoadedModel lm = loadModel(f.string());
      rows.push_back(stage1(*lm.model, f.filename().string()));
    } catch (const std::exception& e) {
      rows.push_back({f.filename().string(), 0, 0, 0, std::string("load failed: ") + e.what()});
    }
  }
  std::printf("%-44s %8s %8s %9s %8s  %s\n", "model", "before", "after", "ORT basic", "ms", "status");
  Json reduction = Json::array();
  for (const Row& r : rows) {
    auto ort = kOrtBasic.find(r.model);
    std::printf("%-44s %8lld %8lld %9s %8.1f  %s\n", r.model.c_str(), static_cast<long long>(r.before),
                static_cast<long long>(r.after), ort == kOrtBasic.end() ? "" : std::to_string(ort->second).c_str(),
                r.ms, r.status.c_str());
    Json j = Json::object();
    j.set("model", r.model);
    j.set("nodes_before", r.before);
    j.set("nodes_after", r.after);
    if (ort != kOrtBasic.end()) j.set("ort_basic", ort->second);
    j.set("ms", r.ms);
    j.set("status", r.status);
    reduction.push(j);
  }
  out.set("reduction", reduction);

  // 2. Pipeline time with and without recording, and the history size.
  struct Case {
    std::string name;
    std::string bytes;
  };
  std::vector<Case> cases;
  if (fs::exists(models / "transformer/gpt2_past.onnx")) {
    std::ifstream f(models / "transformer/gpt2_past.onnx", std::ios::binary);
    cases.push_back({"gpt2_past.onnx", std::string(std::istreambuf_iterator<char>(f), {})});
  }
  SampleOptions noWeights;
  noWeights.weights = false;
  cases.push_back({"bert-base (generated)", writeOnnxBytes(*buildSample("bert-base", noWeights))});
  noWeights.layers = 32;
  cases.push_back({"llama --layers 32", writeOnnxBytes(*buildSample("llama", noWeights))});

  std::printf("\n%-24s %8s %12s %12s %9s %14s %14s %7s\n", "graph", "nodes", "plain ms", "recorded ms", "overhead",
              "history bytes", "snapshot bytes", "ratio");
  Json timing = Json::array();
  for (const Case& c : cases) {
    std::vector<double> plain, recorded;
    RecordingCost cost;
    int64_t nodes = 0;
    for (int rep = 0; rep < 5; ++rep) {
      for (bool record : {false, true}) {
        OnnxImport imp = readOnnxBytes(c.bytes, c.name, "", {.runChecker = false});
        inferShapes(*imp.model);
        nodes = static_cast<int64_t>(imp.model->graph->numNodesRecursive());
        PassManager pm;
        Options o;
        addStandardPasses(pm, o);
        pm.setUntil("prepare");
        Options quiet = o;
        quiet.set("verify_each_pass=false");  // measure the passes and the recorder, not the checker
        const auto t0 = std::chrono::steady_clock::now();
        if (record) {
          // The snapshot-only database written first is part of the size comparison, not of the run's cost.
          cost = runRecorded(pm, *imp.model, quiet);
          recorded.push_back(lastRecordedMs);
        } else {
          pm.run(*imp.model, quiet);
          plain.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
      }
    }
    const double p = medianMs(plain), r = medianMs(recorded);
    const double ratio = cost.snapshotBytes > 0 ? double(cost.historyBytes) / double(cost.snapshotBytes) : 0;
    std::printf("%-24s %8lld %12.1f %12.1f %8.0f%% %14lld %14lld %6.2fx\n", c.name.c_str(),
                static_cast<long long>(nodes), p, r, 100.0 * (r - p) / p, static_cast<long long>(cost.historyBytes),
                static_cast<long long>(cost.snapshotBytes), ratio);
    Json j = Json::object();
    j.set("graph", c.name);
    j.set("nodes", nodes);
    j.set("plain_ms", p);
    j.set("recorded_ms", r);
    j.set("recording_overhead", (r - p) / p);
    j.set("history_bytes", cost.historyBytes);
    j.set("snapshot_bytes", cost.snapshotBytes);
    timing.push(j);
  }
  out.set("pipeline", timing);
  std::ofstream(jsonPath) << out.dump(2) << "\n";
  std::printf("\nwrote %s\n", jsonPath.c_str());
  return 0;
}
