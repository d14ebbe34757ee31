// bench_shapes [OUT.json]: what the shape binding does for the models users bring. For every shared export with
// symbolic input dims and for generated samples of the same styles (HF/PyTorch names, a KV cache, int8 dynamic and
// QDQ), the default compile's binding, node count, arena against its lower bound and the tensors left unsized; then
// the share of shared exports planned with no unsized tensor (the goal is all of them), and gpt2_past bound at the
// extents its 8-position tables allow against ONNX Runtime's 609 nodes on the dynamic file (ORT 1.30, extended
// level, measured for issue 22; tests/bench/ort measures ORT here). A table, then JSON. No timings: counts only.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_corpus.h"
#include "bench_json.h"
#include "io/model_loader.h"
#include "io/onnx/onnx_writer.h"
#include "ir/shape_binding.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/compile_summary.h"
#include "samples/sample_models.h"

using namespace kiln;

namespace {

constexpr int64_t kOrtExtendedGpt2PastNodes = 609;

struct Row {
  std::string model, binding, status = "ok";
  int64_t nodesBefore = 0, nodesAfter = 0, arena = 0, lowerBound = 0, unsized = 0;
  bool symbolic = false, shared = false;
};

Row compile(const std::string& label, const std::string& path, const Options& options, bool shared) {
  Row r;
  r.model = label;
  r.shared = shared;
  try {
    LoadedModel loaded = loadModel(path, loadLimits(options));
    r.symbolic = !inputSymbols(*loaded.model->graph).empty();
    PassManager pm;
    addStandardPasses(pm, options);
    const RunSummary s = pm.run(*loaded.model, options);
    r.binding = loaded.model->binding.shortText();
    r.nodesBefore = s.nodesBefore;
    r.nodesAfter = s.nodesAfter;
    if (s.status != RunStatus::Ok) r.status = "failed: " + s.error;
    const CompileSummary c = summarizeCompile(*loaded.model, s);
    r.arena = c.arenaBytes;
    r.lowerBound = c.lowerBoundBytes;
    r.unsized = c.unsizedTensors;
  } catch (const std::exception& e) {
    r.status = std::string("failed: ") + e.what();
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/bench_shapes.json";
  std::vector<Row> rows;
  const Options defaults;
  for (const auto& p : benchCorpusModels(std::filesystem::path(KILN_SHARED_DIR) / "models")) {
    Row r = compile(std::filesystem::relative(p, std::filesystem::path(KILN_SHARED_DIR) / "models").string(),
                    p.string(), defaults, true);
    if (r.symbolic) rows.push_back(std::move(r));
  }
  // Generated exports in the styles users bring (written to a scratch folder next to the JSON).
  const std::filesystem::path scratch = std::filesystem::path(out).parent_path() / "bench_shapes_models";
  std::filesystem::create_directories(scratch);
  struct Sample {
    const char* label;
    const char* name;
    int layers;
    bool weights;
    const char* quantize;
  };
  for (const Sample& s : {Sample{"bert-base 2 layers (no weights)", "bert-base", 2, false, ""},
                          Sample{"llama 2 layers (no weights)", "llama", 2, false, ""},
                          Sample{"bert-base 2 layers int8 dynamic", "bert-base", 2, true, "dynamic"},
                          Sample{"bert-base 2 layers int8 QDQ", "bert-base", 2, true, "qdq"}}) {
    SampleOptions so;
    so.layers = s.layers;
    so.weights = s.weights;
    so.quantize = s.quantize;
    const std::string file = (scratch / (std::string(s.name) + "_" + s.quantize + std::to_string(s.layers) + ".onnx")).string();
    try {
      writeOnnxFile(*buildSample(s.name, so), file);
      rows.push_back(compile(s.label, file, defaults, false));
    } catch (const std::exception& e) {
      Row r;
      r.model = s.label;
      r.status = std::string("failed: ") + e.what();
      rows.push_back(r);
    }
  }
  // gpt2_past: its causal-mask and position tables hold 8 positions, so seq_len (its past) binds to at most 7.
  const std::filesystem::path gpt2 = std::filesystem::path(KILN_SHARED_DIR) / "models/transformer/gpt2_past.onnx";
  Row gpt2Bound;
  if (std::filesystem::exists(gpt2)) {
    Options o;
    o.set("dim_values=batch_size:1;seq_len:7");
    gpt2Bound = compile("gpt2_past bound batch_size=1, seq_len=7", gpt2.string(), o, false);
    rows.push_back(gpt2Bound);
  }

  std::printf("%-52s %-44s %13s %11s %11s %6s %8s  %s\n", "model", "binding", "nodes", "arena", "lower bound",
              "ratio", "unsized", "status");
  int sharedSymbolic = 0, sharedPlanned = 0;
  kiln::Json json = kiln::Json::array();
  for (const Row& r : rows) {
    const double ratio = r.lowerBound > 0 ? double(r.arena) / double(r.lowerBound) : 0;
    std::printf("%-52s %-44s %6lld→%-6lld %11lld %11lld %6.3f %8lld  %s\n", r.model.c_str(),
                r.binding.substr(0, 44).c_str(), static_cast<long long>(r.nodesBefore),
                static_cast<long long>(r.nodesAfter), static_cast<long long>(r.arena),
                static_cast<long long>(r.lowerBound), ratio, static_cast<long long>(r.unsized), r.status.c_str());
    if (r.shared) {
      ++sharedSymbolic;
      sharedPlanned += r.status == "ok" && r.unsized == 0;
    }
    kiln::Json j = kiln::Json::object();
    j.set("model", r.model);
    j.set("binding", r.binding);
    j.set("status", r.status);
    j.set("nodes_before", r.nodesBefore);
    j.set("nodes_after", r.nodesAfter);
    j.set("arena_bytes", r.arena);
    j.set("lower_bound_bytes", r.lowerBound);
    j.set("arena_over_lower_bound", ratio);
    j.set("unsized_tensors", r.unsized);
    j.set("shared", r.shared);
    json.push(std::move(j));
  }
  std::printf("\nshared exports with symbolic inputs planned with no unsized tensor: %d of %d (%.0f%%)\n", sharedPlanned,
              sharedSymbolic, sharedSymbolic ? 100.0 * sharedPlanned / sharedSymbolic : 0.0);
  if (gpt2Bound.nodesAfter)
    std::printf("gpt2_past bound: %lld nodes after compile vs %lld for ONNX Runtime extended on the dynamic file\n",
                static_cast<long long>(gpt2Bound.nodesAfter), static_cast<long long>(kOrtExtendedGpt2PastNodes));
  kiln::Json doc = kiln::Json::object();
  doc.set("rows", std::move(json));
  doc.set("shared_symbolic", sharedSymbolic);
  doc.set("shared_planned", sharedPlanned);
  doc.set("gpt2_past_bound_nodes", gpt2Bound.nodesAfter);
  doc.set("gpt2_past_ort_extended_nodes", kOrtExtendedGpt2PastNodes);
  return writeBenchJson(doc, out);
}
