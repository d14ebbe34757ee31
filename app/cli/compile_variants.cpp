// kiln compile in variant mode: ATC's gears (dynamic_batch_size / dynamic_image_size / dynamic_dims) compile one
// graph per gear and report each gear's memory and latency and the model's shared arena; --sweep SYMBOL=V1,V2,...
// compiles at each extent and prints arena, lower bound, memory without reuse and simulated latency against it
// (--chart FILE.svg draws them). Every variant is a run of its own in --history. Bad gears or sweeps: exit 2, the
// option named, nothing compiled.
#include <fstream>
#include <iostream>

#include "cli/args.h"
#include "cli/compile_variants.h"
#include "cli/emulation_args.h"
#include "history/history_db.h"
#include "io/model_loader.h"
#include "io/om/om_writer.h"
#include "report/chart_svg.h"
#include "util/units.h"
#include "variants/variant_compile.h"

namespace kiln::cli {
namespace {

Json variantJson(const VariantResult& r) {
  Json j = runMetricsToJson(r.metrics);
  j.set("label", r.variant.label);
  Json values = Json::array();
  for (int64_t v : r.variant.values) values.push(v);
  j.set("values", std::move(values));
  j.set("shape_binding", r.binding.toJson());
  if (r.runId) j.set("run", r.runId);
  return j;
}

std::string gearTable(const std::vector<VariantResult>& gears) {
  char line[320];
  std::snprintf(line, sizeof line, "%-12s %9s %12s %12s %12s %12s %6s  %s\n", "gear", "nodes", "arena", "lower bound",
                "no reuse", "latency", "run", "shapes");
  std::string out = line;
  for (const VariantResult& g : gears) {
    const RunMetrics& m = g.metrics;
    if (!m.ok()) {
      std::snprintf(line, sizeof line, "%-12s failed: %s\n", g.variant.label.c_str(), m.reason.c_str());
      out += line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-12s %9s %12s %12s %12s %12s %6s  %s\n", g.variant.label.c_str(),
                  withThousands(m.nodesAfter).c_str(), formatBytes(double(m.compile.arenaBytes)).c_str(),
                  formatBytes(double(m.compile.lowerBoundBytes)).c_str(),
                  formatBytes(double(m.compile.noReuseBytes)).c_str(), formatDuration(m.latencyUs / 1e6).c_str(),
                  g.runId ? std::to_string(g.runId).c_str() : "-", g.binding.shortText().c_str());
    out += line;
  }
  return out;
}

}  // namespace

bool wantsVariants(const Args& args, const Options& options) {
  return args.value("--sweep").has_value() || !gearOption(options).empty();
}

int runCompileVariants(const Args& args, const Options& options) {
  const std::string path = args.positional[0];
  if (args.value("--until") || args.value("--dump-dir"))
    throw UsageError("--until and --dump-dir take one compile, not gears or a --sweep");
  if (args.value("--sweep") && !gearOption(options).empty())
    throw UsageError("--sweep and " + gearOption(options) + " together: sweep one thing at a time");
  if (args.value("--chart") && !args.value("--sweep")) throw UsageError("--chart draws a --sweep");
  const LoadedModel loaded = loadModel(path, loadLimits(options, true));
  std::vector<ShapeVariant> variants;
  std::string symbol;
  try {
    if (auto sweep = args.value("--sweep")) {
      const SweepSpec spec = parseSweep(*sweep);
      symbol = spec.symbol;
      variants = sweepVariants(*loaded.model->graph, options, spec);
    } else {
      variants = gearVariants(*loaded.model->graph, options);
    }
  } catch (const OptionError& e) {
    throw UsageError(path + ": " + e.what());
  }
  for (const ShapeVariant& v : variants) checkedBinding(path, *loaded.model, v.options);  // all before any compile

  std::unique_ptr<HistoryDb> db;
  if (auto h = args.value("--history")) db = HistoryDb::forAppending(*h);
  const bool json = args.has("--json");
  VariantCompileOptions vc;
  vc.history = db.get();
  vc.keepModels = args.value("-o").has_value();
  if (!json)
    vc.progress = [&](size_t done, size_t total, const VariantResult& r) {
      std::cerr << "[" << done << "/" << total << "] " << r.variant.label << ": "
                << (r.metrics.ok() ? "compiled" : "failed: " + r.metrics.reason) << "\n";
    };
  const std::vector<VariantResult> results = compileVariants(path, variants, vc);
  bool failed = false;
  for (const VariantResult& r : results) failed = failed || !r.metrics.ok();

  Json out = Json::object();
  out.set("model", path);
  if (!symbol.empty()) {
    const SweepChart chart = sweepChart(path, symbol, results);
    if (auto file = args.value("--chart")) {
      std::ofstream f(*file, std::ios::binary | std::ios::trunc);
      if (!f || !(f << sweepChartSvg(chart)) || !f.flush()) throw std::runtime_error("cannot write " + *file);
    }
    if (json) {
      out.set("sweep", sweepChartToJson(chart));
    } else {
      std::cout << "sweep of " << symbol << " over " << results.size() << " extents\n" << sweepTable(chart);
      if (auto file = args.value("--chart")) std::cout << "wrote " << *file << "\n";
    }
  } else {
    const std::string key = gearOption(options);
    const int64_t shared = sharedGearArena(results);
    int64_t sum = 0;
    for (const VariantResult& r : results) sum += r.metrics.compile.arenaBytes;
    if (json) {
      Json gears = Json::array();
      for (const VariantResult& r : results) gears.push(variantJson(r));
      out.set("gear_option", key);
      out.set("gears", std::move(gears));
      out.set("arena_bytes", shared);
      out.set("arena_bytes_unshared", sum);
    } else {
      std::cout << key << ": " << results.size() << " gears, one graph each\n" << gearTable(results)
                << "model arena " << formatBytes(double(shared))
                << ": the largest gear's, as GE lays every gear's memory out from one base (" << formatBytes(double(sum))
                << " if each gear had its own)\n";
    }
    if (auto om = args.value("-o"); om && !failed) {
      std::vector<om::GearModel> gearModels;
      for (const VariantResult& r : results) gearModels.push_back({r.compiled.get(), r.variant.values});
      try {
        om::writeGearOmFile(gearModels, key, options, *om);
      } catch (const std::exception& e) {
        std::cerr << "kiln compile: cannot write " << *om << ": " << e.what() << "\n";
        return 2;
      }
      if (!json) std::cout << "wrote " << *om << " (" << results.size() << " gears)\n";
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return failed ? 1 : 0;
}

}  // namespace kiln::cli
