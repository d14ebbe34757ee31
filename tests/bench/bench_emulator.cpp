// Emulator benchmark: the timing simulation's answers in the directions the seed articles measured (sunk vs
// host-launched ResNet-50, fused vs unfused BERT, multi- vs single-stream Inception, fp16 vs fp32), the simulator's
// own speed (tasks per second on generated llama --layers 32 and on a synthetic million-task list), and the
// functional speed of the reference mode on the generated ResNet-50 (1x3x224x224 fp32). Prints tables and writes
// JSON; asserts nothing. ONNX Runtime is not on this machine's registries' reach in a form the benchmark can call,
// so the ratio against it is reported as not measured rather than guessed.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "bench_json.h"
#include "emulator/model_inputs.h"
#include "emulator/reference_executor.h"
#include "emulator/timing/timeline_sim.h"
#include "io/model_loader.h"
#include "emulator/function_expander.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Compiled {
  std::unique_ptr<Model> model;
  Options options;
};

// Compiles a model with option assignments ("k=v"), symbolic input dims bound from `dims` (else 1).
Compiled compile(std::unique_ptr<Model> model, const std::vector<std::string>& sets,
                 const std::map<std::string, int64_t>& dims = {}) {
  Compiled c;
  for (const std::string& s : sets) c.options.set(s);
  const std::string spec = inputShapeSpec(*model->graph, dims);
  if (!spec.empty()) c.options.setValue("input_shape", Json(spec), "bench");
  PassManager pm;
  addStandardPasses(pm, c.options, {});
  pm.run(*model, c.options);
  c.model = std::move(model);
  return c;
}

Timeline simulate(const Compiled& c) {
  const SocProfile soc = SocProfile::load(c.options.getString("soc_version"));
  return simulateTimeline(buildTaskList(*c.model->graph, soc.aiCores), soc, c.options.getBool("model_sink"));
}

struct Comparison {
  std::string what, a, b;
  std::function<std::unique_ptr<Model>()> model;
  std::vector<std::string> setsA, setsB;
  std::map<std::string, int64_t> dims;
  std::string seed;  // what the seed articles measured, for the reader
};

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/bench_emulator.json";
  Json rows = Json::array();
  auto sample = [](const char* name) { return [name] { return buildSample(name); }; };
  std::vector<Comparison> comparisons = {
      {"ResNet-50: model sinking", "sunk", "host-launched", sample("resnet50"), {}, {"model_sink=false"}, {},
       "18 ms eager per-op -> 3.2 ms compiled graph"},
      {"BERT-base (seq 128): fusion", "O3 (fused)", "O1 (unfused)", sample("bert-base"), {}, {"oo_level=O1"},
       {{"sequence", 128}}, "fusion: 36.9% lower latency (LLaMA-7B)"},
      {"ResNet-50: precision", "fp16", "fp32", sample("resnet50"), {}, {"precision_mode=force_fp32"}, {},
       "fp16 on the Cube; fp32 at a lower rate"},
  };
  const fs::path inception = fs::path(KILN_SHARED_DIR) / "models/cnn/light_inception_v1.onnx";
  std::error_code ec;
  if (fs::exists(inception, ec))
    comparisons.push_back({"Inception v1: streams", "multi-stream", "single stream",
                           [inception] { return std::move(loadModel(inception.string()).model); }, {},
                           {"enable_single_stream=true"}, {}, "parallel branches on parallel streams"});
  else
    std::fprintf(stderr, "note: %s not found; the stream comparison is skipped\n", inception.c_str());

  std::printf("%-32s %-16s %12s %-16s %12s %8s  %s\n", "comparison", "A", "latency A", "B", "latency B", "B / A",
              "seed articles");
  for (const Comparison& c : comparisons) {
    const Compiled a = compile(c.model(), c.setsA, c.dims);
    const Compiled b = compile(c.model(), c.setsB, c.dims);
    const Timeline ta = simulate(a), tb = simulate(b);
    std::printf("%-32s %-16s %9.1f us %-16s %9.1f us %7.2fx  %s\n", c.what.c_str(), c.a.c_str(), ta.latencyUs,
                c.b.c_str(), tb.latencyUs, tb.latencyUs / ta.latencyUs, c.seed.c_str());
    Json r = Json::object();
    r.set("comparison", c.what);
    r.set("a", c.a);
    r.set("b", c.b);
    r.set("latency_a_us", ta.latencyUs);
    r.set("latency_b_us", tb.latencyUs);
    r.set("tasks_a", static_cast<int64_t>(ta.entries.size()));
    r.set("tasks_b", static_cast<int64_t>(tb.entries.size()));
    r.set("ratio", tb.latencyUs / ta.latencyUs);
    rows.push(std::move(r));
  }

  // Simulator speed: a real task list (llama, 32 layers) and a synthetic million tasks over 4 streams with events.
  std::printf("\n%-40s %10s %10s %14s\n", "timing simulation", "tasks", "ms", "tasks / s");
  {
    SampleOptions so;
    so.layers = 32;
    so.weights = false;
    const Compiled llama = compile(buildSample("llama", so), {}, {});
    const SocProfile soc = SocProfile::load("Ascend910A");
    const std::vector<Task> tasks = buildTaskList(*llama.model->graph, soc.aiCores);
    std::vector<Task> synthetic;
    const Node* anyKernel = nullptr;
    for (const Task& t : tasks)
      if (t.type == TaskType::Kernel && t.node) anyKernel = t.node;
    // Groups of ten: two kernels on each of four streams, then stream 0 records an event stream 1 waits for.
    auto push = [&](TaskType type, int stream, int event, int64_t blockDim) {
      Task t;
      t.id = static_cast<int>(synthetic.size());
      t.type = type;
      t.stream = stream;
      t.event = event;
      t.blockDim = blockDim;
      if (type == TaskType::Kernel) t.node = anyKernel;
      synthetic.push_back(t);
    };
    for (int g = 0; g < 100'000; ++g) {
      for (int k = 0; k < 8; ++k) push(TaskType::Kernel, k % 4, -1, 1 + (g + k) % 8);
      push(TaskType::EventRecord, 0, g, 0);
      push(TaskType::EventWait, 1, g, 0);
    }
    for (const auto& [name, list] : {std::pair<std::string, const std::vector<Task>*>{"llama --layers 32", &tasks},
                                     {"synthetic (4 streams, events)", &synthetic}}) {
      simulateTimeline(*list, soc, true);  // warm-up: the op registry builds its caches on first use
      const auto t0 = std::chrono::steady_clock::now();
      const Timeline tl = simulateTimeline(*list, soc, true);
      const double ms = msSince(t0);
      std::printf("%-40s %10zu %10.1f %14.0f\n", name.c_str(), list->size(), ms, double(list->size()) / (ms / 1000));
      Json r = Json::object();
      r.set("simulation", name);
      r.set("tasks", static_cast<int64_t>(list->size()));
      r.set("ms", ms);
      r.set("tasks_per_second", double(list->size()) / (ms / 1000));
      r.set("latency_us", tl.latencyUs);
      rows.push(std::move(r));
    }
  }

  // Functional speed: the reference mode on ResNet-50 (the weights are real tensors, the input random).
  {
    auto model = buildSample("resnet50");
    ExecutionOptions options;
    options.opset = model->opsetFor("");
    options.functions = makeFunctionExpander(*model);
    const std::vector<Tensor> inputs = randomInputs(*model->graph, 1, {{"batch", 1}});
    ReferenceExecutor ex(options);
    ex.run(*model->graph, inputs);  // warm-up: BLAS threads, page faults
    const auto t0 = std::chrono::steady_clock::now();
    const int reps = 3;
    for (int i = 0; i < reps; ++i) ex.run(*model->graph, inputs);
    const double ms = msSince(t0) / reps;
    std::printf("\n%-40s %10.1f ms per inference (fp32, 1x3x224x224); vs ONNX Runtime: tests/bench/ort/run.sh\n",
                "reference mode, generated ResNet-50", ms);
    Json r = Json::object();
    r.set("functional", "resnet50 fp32 1x3x224x224");
    r.set("ms", ms);
    rows.push(std::move(r));
  }
  return writeBenchJson(rows, jsonPath);
}
