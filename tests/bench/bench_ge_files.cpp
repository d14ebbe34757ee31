// Ascend's own files, measured: every file of ../shared/models/ascend/ opened (what it is, its ops, the time),
// the import of the 3.5 MB ResNet-50 Build dump into a fresh history (median of 5), GE's ResNet-50 beside Kiln's
// compile of the resnet50 sample (the rows `kiln history compare` prints), and Kiln's own .om of the resnet50 and
// mobilenetv2 samples (fp32) run on the emulator against their ONNX models. Prints tables and writes JSON; asserts
// nothing. Without ../shared the first three parts are skipped (said so).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "bench_json.h"
#include "emulator/ge_emulation.h"
#include "history/ge_dump_import.h"
#include "history/history_db.h"
#include "history/history_recorder.h"
#include "io/atc/fusion_result.h"
#include "io/model_loader.h"
#include "io/onnx/onnx_writer.h"
#include "io/om/om_reader.h"
#include "io/om/om_writer.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/run_charts.h"
#include "report/run_comparison.h"
#include "samples/sample_models.h"
#include "util/units.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<Tensor> sampleInputs(const Model& m) {
  std::vector<Tensor> out;
  uint32_t state = 7;
  for (const Value* v : m.graph->inputs()) {
    const std::vector<int64_t> dims = *v->type().shape.staticExtents();
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& f : x) f = float((state = state * 1664525u + 1013904223u) >> 8) / float(1u << 24) - 0.5f;
    out.push_back(Tensor::fromVector(DType::Float, dims, x));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : std::string(KILN_BENCH_OUT_DIR) + "/bench_ge_files.json";
  const fs::path ascend = fs::path(KILN_SHARED_DIR) / "models" / "ascend";
  const fs::path tmp = fs::temp_directory_path() / ("kiln_bench_ge_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  Json report = Json::object();
  std::error_code ec;
  const bool shared = fs::is_directory(ascend, ec);

  // 1. Every file opens.
  Json files = Json::array();
  if (shared) {
    std::printf("Every file of %s\n%-60s %-24s %8s %10s\n", ascend.c_str(), "file", "read as", "ops", "ms");
    std::vector<fs::path> paths;
    for (const auto& e : fs::recursive_directory_iterator(ascend))
      if (e.is_regular_file() && e.path().filename() != "README.txt") paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (const fs::path& p : paths) {
      const ModelFormat f = detectModelFormat(p.string());
      Json row = Json::object();
      row.set("file", fs::relative(p, ascend).string());
      std::string kind = modelFormatName(f), result;
      int64_t ops = -1;
      const auto t0 = std::chrono::steady_clock::now();
      try {
        if (f == ModelFormat::FusionResult) {
          ops = int64_t(atc::readFusionResult(p.string()).passes.size());
          result = "opened";
        } else if (isGeFormat(f)) {
          ops = int64_t(loadModel(p.string()).model->graph->numNodesRecursive());
          result = "opened";
        } else {
          result = "not a model (msprof: issue 43)";
        }
      } catch (const std::exception& e) {
        result = std::string("FAILED: ") + e.what();
      }
      const double ms = msSince(t0);
      std::printf("%-60s %-24s %8lld %10.1f  %s\n", fs::relative(p, ascend).c_str(), kind.substr(0, 24).c_str(),
                  static_cast<long long>(ops), ms, result.c_str());
      row.set("format", kind);
      row.set("ops_or_passes", ops);
      row.set("ms", ms);
      row.set("result", result);
      files.push(std::move(row));
    }
  } else {
    std::printf("%s absent: the shared files are not measured\n", ascend.c_str());
  }
  report.set("files", std::move(files));

  // 2. Import time of the ResNet-50 Build dump, and 3. GE's ResNet-50 beside Kiln's sample.
  const fs::path resnetDump = ascend / "ge_dumps" / "oam_tools_compile" / "ge_proto_00000062_Build.txt";
  if (shared && fs::is_regular_file(resnetDump, ec)) {
    std::vector<double> times;
    for (int i = 0; i < 5; ++i) {
      const fs::path db = tmp / ("import_" + std::to_string(i) + ".db");
      const auto t0 = std::chrono::steady_clock::now();
      HistoryDb h(db.string());
      gedump::importDumps({resnetDump.string()}, h);
      times.push_back(msSince(t0));
    }
    std::sort(times.begin(), times.end());
    std::printf("\nImport of %s (%s): median %.1f ms, best %.1f ms of 5\n", resnetDump.filename().c_str(),
                formatBytes(double(fs::file_size(resnetDump))).c_str(), times[2], times[0]);
    Json imp = Json::object();
    imp.set("file", resnetDump.filename().string());
    imp.set("bytes", int64_t(fs::file_size(resnetDump)));
    imp.set("median_ms", times[2]);
    imp.set("best_ms", times[0]);
    report.set("import", std::move(imp));

    const std::string db = (tmp / "compare.db").string();
    int64_t geRun = 0, kilnRun = 0;
    {
      HistoryDb h(db);
      geRun = gedump::importDumps({resnetDump.string()}, h).runs.at(0).runId;
    }
    {
      const std::string onnx = (tmp / "resnet50.onnx").string();
      writeOnnxFile(*buildSample("resnet50"), onnx);
      LoadedModel m = loadModel(onnx);
      Options o;
      PassManager pm;
      addStandardPasses(pm, o);
      HistoryDb h(db);
      HistoryRecorder rec(h, onnx);
      pm.addObserver(&rec);
      pm.run(*m.model, o);
      kilnRun = rec.runId();
    }
    const RunCharts a = loadRunCharts(db, geRun, nullptr), b = loadRunCharts(db, kilnRun, nullptr);
    if (a.hasMetrics && b.hasMetrics) {
      const auto rows = compareRunMetrics(a.metrics, b.metrics);
      std::printf("\nGE's ResNet-50 (Build dump) against Kiln's compile of the resnet50 sample\n%s",
                  comparisonText(rows, "GE: " + resnetDump.filename().string(), "Kiln: kiln sample resnet50").c_str());
      report.set("ge_vs_kiln_resnet50", comparisonJson(rows, "GE", "Kiln"));
    } else {
      std::printf("\nGE vs Kiln: no numbers (%s / %s)\n", a.memoryMessage.c_str(), b.memoryMessage.c_str());
    }
  }

  // 4. Kiln's .om of the samples against their ONNX at fp32.
  std::printf("\nKiln's .om against its ONNX (force_fp32, one random input)\n%-14s %10s %10s %12s %8s %8s %s\n", "sample",
              "source ms", ".om ms", "min cosine", "ops", "ops ok", "verdict");
  Json oms = Json::array();
  for (const char* name : {"resnet50", "mobilenetv2"}) {
    auto source = buildSample(name);
    auto compiled = buildSample(name);
    Options o;
    o.set("precision_mode=force_fp32");
    PassManager pm;
    addStandardPasses(pm, o);
    pm.run(*compiled, o);
    const om::OmImport om = om::readOmBytes(std::make_shared<OwnedStorage>(om::buildOmFile(*compiled, o)), name);
    const std::vector<Tensor> inputs = sampleInputs(*source);
    const SourceComparison r = compareGeWithSource(*om.model, *source, inputs, precisionGate(o, *om.model->graph));
    size_t ok = 0;
    for (const NodeComparison& c : r.nodes) ok += c.verdict.passed;
    bool passed = r.ge.ran && !r.outputs.empty() && r.firstDivergence.empty();
    for (const OutputVerdict& v : r.outputs) passed = passed && v.passed;
    const double cosine = r.ge.report.minCosine();
    std::printf("%-14s %10.1f %10.1f %12.7f %8zu %8zu %s\n", name, r.ge.report.referenceMs, r.ge.report.compiledMs,
                cosine, r.nodes.size(), ok, passed ? "passed" : "FAILED");
    Json row = Json::object();
    row.set("sample", name);
    row.set("source_ms", r.ge.report.referenceMs);
    row.set("om_ms", r.ge.report.compiledMs);
    row.set("min_cosine", cosine);
    row.set("ops_compared", int64_t(r.nodes.size()));
    row.set("ops_within_gate", int64_t(ok));
    row.set("passed", passed);
    oms.push(std::move(row));
  }
  report.set("om_against_source", std::move(oms));
  fs::remove_all(tmp, ec);
  return writeBenchJson(report, out);
}
