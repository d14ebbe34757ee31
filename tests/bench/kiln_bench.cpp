// Benchmarks (not tests): import + type/shape inference time on a real model (gpt2_past.onnx, when ../shared is
// present) and on generated LLaMA graphs from ~1k to ~100k nodes. Prints a table and writes JSON.
// Targets (issue #2): gpt2_past <= 50 ms; time per node flat (within 2x) from 1k to 100k nodes. Ratios are measured
// in one run, so machine noise affects both sides alike.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "io/onnx/onnx_reader.h"
#include "io/onnx/onnx_writer.h"
#include "ir/opdefs/shape_inference.h"
#include "samples/sample_models.h"
#include "util/json.h"

using namespace kiln;

namespace {

struct Result {
  std::string name;
  size_t nodes = 0;
  double importMs = 0, inferMs = 0;
  double usPerNode() const { return (importMs + inferMs) * 1000.0 / static_cast<double>(std::max<size_t>(nodes, 1)); }
};

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Median of `reps` runs of import-from-bytes + inference.
Result measure(const std::string& name, const std::string& bytes, int reps) {
  std::vector<double> imp, inf;
  Result r;
  r.name = name;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    OnnxImport m = readOnnxBytes(bytes, name, "", {.runChecker = false});
    imp.push_back(msSince(t0));
    t0 = std::chrono::steady_clock::now();
    inferShapes(*m.model);
    inf.push_back(msSince(t0));
    r.nodes = m.model->graph->numNodesRecursive();
  }
  std::sort(imp.begin(), imp.end());
  std::sort(inf.begin(), inf.end());
  r.importMs = imp[imp.size() / 2];
  r.inferMs = inf[inf.size() / 2];
  return r;
}

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/kiln_bench.json";
  std::vector<Result> results;

  const std::string gpt2 = std::string(KILN_SHARED_DIR) + "/models/transformer/gpt2_past.onnx";
  const std::string gpt2Bytes = readFile(gpt2);
  if (!gpt2Bytes.empty()) results.push_back(measure("gpt2_past.onnx", gpt2Bytes, 7));
  else std::fprintf(stderr, "note: %s not found; skipping the real-model row\n", gpt2.c_str());

  for (int layers : {8, 32, 128, 1640}) {
    SampleOptions o;
    o.layers = layers;
    o.weights = false;
    const std::string bytes = writeOnnxBytes(*buildSample("llama", o));
    results.push_back(measure("llama --layers " + std::to_string(layers), bytes, layers >= 1000 ? 3 : 5));
  }

  std::printf("%-22s %9s %11s %11s %11s %10s\n", "graph", "nodes", "import ms", "infer ms", "total ms", "us/node");
  Json rows = Json::array();
  for (const Result& r : results) {
    std::printf("%-22s %9zu %11.2f %11.2f %11.2f %10.3f\n", r.name.c_str(), r.nodes, r.importMs, r.inferMs,
                r.importMs + r.inferMs, r.usPerNode());
    Json row = Json::object();
    row.set("graph", r.name);
    row.set("nodes", static_cast<int64_t>(r.nodes));
    row.set("import_ms", r.importMs);
    row.set("infer_ms", r.inferMs);
    row.set("us_per_node", r.usPerNode());
    rows.push(row);
  }
  // Flatness: per-node cost of the largest generated graph over the smallest with at least 1k nodes.
  const Result* small = nullptr;
  const Result* large = nullptr;
  for (const Result& r : results) {
    if (r.name.rfind("llama", 0) != 0 || r.nodes < 1000) continue;
    if (!small || r.nodes < small->nodes) small = &r;
    if (!large || r.nodes > large->nodes) large = &r;
  }
  Json out = Json::object();
  out.set("results", rows);
  if (small && large) {
    const double ratio = large->usPerNode() / small->usPerNode();
    std::printf("\nper-node time, %zu vs %zu nodes: %.2fx (target <= 2x)\n", large->nodes, small->nodes, ratio);
    out.set("per_node_ratio_largest_vs_smallest", ratio);
  }
  if (!results.empty() && results[0].name == "gpt2_past.onnx")
    std::printf("gpt2_past import+inference: %.1f ms (target <= 50 ms)\n", results[0].importMs + results[0].inferMs);
  std::ofstream(jsonPath) << out.dump(2) << "\n";
  std::printf("wrote %s\n", jsonPath.c_str());
  return 0;
}
