// Compiled mode and per-pass verification: a model compiled through Stage 3 runs inside its planned arena and
// matches the reference; a plan that overlaps two live tensors gives wrong numbers (the point of running in the
// arena) and the verifier names the pass; the commands `kiln run`, `kiln verify` and `kiln conformance` as a user
// runs them (exit codes, JSON keys, history rows).
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <set>

#include "emulator/arena_executor.h"
#include "emulator/emulation.h"
#include "emulator/model_inputs.h"
#include "emulator/pass_verifier.h"
#include "emulator/precision_gate.h"
#include "history/history_db.h"
#include "history/history_emulation.h"
#include "io/onnx/onnx_writer.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/graph_builder.h"
#include "support/kiln_process.h"
#include "util/json.h"

using namespace kiln;

namespace {

// x -> Relu -> a; x -> Neg -> b; c = a + b; out = c * c  (three arena tensors, a and b live together)
std::unique_ptr<Model> branchyModel() {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  Graph& g = *m->graph;
  Value* x = g.addInput("x", ValueType::tensor(DType::Float, Shape::ofStatic({4, 256})));
  Node* a = g.addNode("Relu", {x}, {"a"}, "relu");
  Node* b = g.addNode("Neg", {x}, {"b"}, "neg");
  Node* c = g.addNode("Add", {a->output(0), b->output(0)}, {"c"}, "add");
  Node* out = g.addNode("Mul", {c->output(0), c->output(0)}, {"out"}, "square");
  g.addOutput(out->output(0));
  return m;
}

// A small CNN the compiler lays out for the cube: Conv+BN+Relu and a residual block in NC1HWC0 with FRACTAL_Z
// weights (3 channels padded to C0 = 16), a pool that follows the layout, and a classifier MatMul in FRACTAL_NZ.
std::unique_ptr<Model> blockedCnn() {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  samples::GraphBuilder b(m.get(), SampleOptions{});
  Value* x = b.input("image", DType::Float, {Dim::fixed(2), Dim::fixed(3), Dim::fixed(12), Dim::fixed(12)});
  Value* y = b.relu(b.batchNorm(b.conv(x, "stem", 3, 24, 3, 1, 1), "bn", 24));
  y = b.op("MaxPool", {y}, {samples::intsAttr("kernel_shape", {2, 2}), samples::intsAttr("strides", {2, 2})});
  Value* r = b.relu(b.conv(y, "conv1", 24, 24, 3, 1, 1, 1, true));
  y = b.relu(b.add(b.conv(r, "conv2", 24, 24, 1, 1, 0, 1, true), y));
  // [2, 1, 24]: a matrix product the compiler keeps in FRACTAL_NZ (a 2-D one on a pooled [2, 24, 1, 1] would be a
  // 1x1 convolution, FlattenGemmFusion).
  y = b.reshape(b.op("GlobalAveragePool", {y}), {2, 1, 24});
  b.output(b.softmax(b.matMul(y, b.weight("fc.weight", {24, 20}, samples::Init::fanIn(24))), -1), "probs");
  return m;
}

Options fp32NoFusion() {
  Options o;
  o.set("precision_mode=force_fp32");
  o.set("oo_level=O1");  // no UB fusion: every intermediate is its own arena tensor
  return o;
}

void compile(Model& m, const Options& o, std::vector<PassObserver*> observers = {}) {
  PassManager pm;
  addStandardPasses(pm, o, {});
  for (PassObserver* obs : observers) pm.addObserver(obs);
  const RunSummary s = pm.run(m, o);
  QCOMPARE(s.status, RunStatus::Ok);
}

// Puts the output of node `moved` at the offset of node `onto`'s output.
void overlap(Graph& g, const std::string& moved, const std::string& onto) {
  std::string target;
  for (Node* n : g.nodes())
    if (n->name() == onto) target = n->annotation("mem.out");
  for (Node* n : g.nodes())
    if (n->name() == moved) n->setAnnotation("mem.out", target);
}

// A model `body` builds, run as it is and compiled at `precision` (oo_level O1: element-wise ops stay nodes). The
// compiled graph must hold a node `wanted` accepts (the case a test is about), and its run must match the reference
// (fp32 within 1e-5, fp16 within 1e-2). Empty when so, else what went wrong.
std::string compiledOnBlocksMatchesReference(const std::function<void(samples::GraphBuilder&)>& body,
                                             const std::string& precision,
                                             const std::function<bool(const Node&)>& wanted, uint32_t seed,
                                             const std::string& level = "O1") {
  const auto build = [&] {
    auto m = std::make_unique<Model>();
    m->opsets[""] = 17;
    samples::GraphBuilder b(m.get(), SampleOptions{});
    body(b);
    return m;
  };
  auto original = build();
  auto compiled = build();
  Options o;
  o.set("precision_mode=" + precision);
  o.set("oo_level=" + level);
  PassManager pm;
  addStandardPasses(pm, o, {});
  if (pm.run(*compiled, o).status != RunStatus::Ok) return precision + ": the compile failed";
  const auto& nodes = compiled->graph->nodes();
  if (std::none_of(nodes.begin(), nodes.end(), [&](const Node* n) { return wanted(*n); }))
    return precision + ": the compiled graph has no node of the kind under test";
  const EmulationReport r = emulateModel(*original, *compiled, randomInputs(*original->graph, seed));
  if (!r.compiledError.empty()) return precision + ": " + r.compiledError;
  const double tol = precision == "force_fp32" ? 1e-5 : 1e-2;
  const TensorDifference d = compareTensors(r.compiled[0], r.reference[0], Tolerance{tol, tol});
  return d.within() ? std::string() : precision + ": " + d.firstMismatch;
}

}  // namespace

class EmulationTest : public QObject {
  Q_OBJECT
 private slots:
  // verify.error_stat: 1000 elements, 5 of them 10% off. The maximum (the default) fails the fp16 gate and says
  // which share is over; the 0.99 quantile, the median and the mean pass; every element 10% off fails the mean too;
  // a bad statistic is refused as an option.
  void precisionGateErrorStatistics() {
    std::vector<float> want(1000), got(1000);
    for (size_t i = 0; i < want.size(); ++i) want[i] = got[i] = 1.0f + 0.001f * static_cast<float>(i);
    for (size_t i = 0; i < 5; ++i) got[i * 100] *= 1.1f;
    const Tensor w = Tensor::fromVector(DType::Float, {1000}, want), g = Tensor::fromVector(DType::Float, {1000}, got);
    Options o;
    PrecisionGate gate = precisionGate(o, ComputePrecision::Fp16);
    OutputVerdict v = judgeOutput("y", g, w, gate);
    QVERIFY(!v.passed);
    QCOMPARE(v.overShare, 0.005);
    QVERIFY2(v.reason.find("5 of 1000 elements (0.5%) over rtol 0.02") != std::string::npos, v.reason.c_str());
    o.set("verify.error_stat=quantile:0.99");
    v = judgeOutput("y", g, w, precisionGate(o, ComputePrecision::Fp16));
    QVERIFY2(v.passed, v.reason.c_str());
    QCOMPARE(v.overShare, 0.005);
    QVERIFY(v.statValue < 1e-6);  // 99% of the elements are exact
    o.set("verify.error_stat=median");
    QVERIFY(judgeOutput("y", g, w, precisionGate(o, ComputePrecision::Fp16)).passed);
    o.set("verify.error_stat=mean");
    QVERIFY(judgeOutput("y", g, w, precisionGate(o, ComputePrecision::Fp16)).passed);
    for (size_t i = 0; i < want.size(); ++i) got[i] = want[i] * 1.1f;
    v = judgeOutput("y", Tensor::fromVector(DType::Float, {1000}, got), w, precisionGate(o, ComputePrecision::Fp16));
    QVERIFY2(!v.passed, v.reason.c_str());
    QVERIFY(v.statValue > 1);
    QVERIFY_THROWS_EXCEPTION(OptionError, o.set("verify.error_stat=quantile:1.5"));
  }

  void compiledRunMatchesReference() {
    auto original = branchyModel();
    auto compiled = branchyModel();
    compile(*compiled, fp32NoFusion());
    const std::vector<Tensor> inputs = randomInputs(*original->graph, 7);
    const EmulationReport r = emulateModel(*original, *compiled, inputs);
    QCOMPARE(r.errors.size(), size_t{1});
    QVERIFY2(r.errors[0].diff.within(), r.errors[0].diff.firstMismatch.c_str());
    QCOMPARE(r.maxAbsError(), 0.0);
    QVERIFY(r.arena.placedTensors >= 3);
    QVERIFY(r.arena.arenaBytes > 0);
  }

  void blockedLayoutsRunCompiled() {
    // The kernels compute on logical tensors; the compiled graph stores NC1HWC0 / FRACTAL_Z / FRACTAL_NZ. Each node
    // reads its blocked inputs back at their recorded origin and stores its results blocked, so the arena run
    // matches the reference to float rounding.
    auto original = blockedCnn();
    auto compiled = blockedCnn();
    Options o;
    o.set("precision_mode=force_fp32");
    compile(*compiled, o);
    std::set<Format> formats;
    for (const Value* v : compiled->graph->values())
      if (isBlockedFormat(v->type().format)) {
        formats.insert(v->type().format);
        QVERIFY2(v->type().originShape.rankKnown(), v->name().c_str());  // every blocked value records its origin
      }
    QVERIFY(formats.count(Format::NC1HWC0) && formats.count(Format::FRACTAL_Z) && formats.count(Format::FRACTAL_NZ));
    const EmulationReport r = emulateModel(*original, *compiled, randomInputs(*original->graph, 5));
    QVERIFY2(r.compiledError.empty(), r.compiledError.c_str());
    QCOMPARE(r.errors.size(), size_t{1});
    const TensorDifference d = compareTensors(r.compiled[0], r.reference[0], Tolerance{1e-4, 1e-7});
    QVERIFY2(d.within(), d.firstMismatch.c_str());
  }

  void elementwiseOpsComputeOnTheStoredBlocks() {
    // Mul and Add by per-channel constants after a Relu in NC1HWC0 (24 channels: the second block half padding),
    // then a Sigmoid, which does not map 0 to 0 and so converts. The zero-preserving ones run on the blocks, the
    // constants broadcasting as [1, C1, 1, 1, C0]; at fp32 and fp16 the numbers match the reference.
    const auto body = [](samples::GraphBuilder& b) {
      Value* x = b.input("image", DType::Float, {Dim::fixed(2), Dim::fixed(3), Dim::fixed(9), Dim::fixed(9)});
      Value* y = b.relu(b.conv(x, "stem", 3, 24, 3, 1, 1, 1, true));
      y = b.mul(y, b.weight("scale", {1, 24, 1, 1}, samples::Init::fanIn(1)));
      y = b.add(y, b.weight("shift", {1, 24, 1, 1}, samples::Init::fanIn(1)));
      b.output(b.op("Sigmoid", {b.relu(y)}), "out");
    };
    const auto broadcastOnBlocks = [](const Node& n) {  // the case this test is about
      return (n.opType() == "Mul" || n.opType() == "Add") && n.numInputs() == 2 && n.input(1) &&
             n.input(0)->type().format == Format::NC1HWC0 && n.input(1)->type().format == Format::NC1HWC0 &&
             n.input(0)->type().shape != n.input(1)->type().shape;
    };
    for (const char* precision : {"force_fp32", "force_fp16"}) {
      const std::string problem = compiledOnBlocksMatchesReference(body, precision, broadcastOnBlocks, 3);
      QVERIFY2(problem.empty(), problem.c_str());
    }
  }

  void perChannelBodiesRunInOnePassOnTheBlocks() {
    // DenseNet's pre-activation: whole C0 blocks of channels joined, then BatchNorm, a per-channel Mul and Add and a
    // Relu before the next convolution. The compiler (its UB fusion, on by default) makes the Mul, Add and Relu one
    // element-wise op whose body the compiled run applies in one pass over the blocks; the numbers match.
    const auto body = [](samples::GraphBuilder& b) {
      Value* x = b.input("image", DType::Float, {Dim::fixed(2), Dim::fixed(3), Dim::fixed(9), Dim::fixed(9)});
      Value* a = b.relu(b.conv(x, "a", 3, 16, 3, 1, 1, 1, true));
      Value* c = b.relu(b.conv(x, "c", 3, 32, 1, 1, 0, 1, true));
      Value* y = b.batchNorm(b.concat({a, c}, 1), "norm", 48);
      y = b.mul(y, b.weight("scale", {1, 48, 1, 1}, samples::Init::fanIn(1)));
      y = b.add(y, b.weight("shift", {1, 48, 1, 1}, samples::Init::fanIn(1)));
      b.output(b.conv(b.relu(y), "next", 48, 8, 3, 1, 1, 1, true), "out");
    };
    const auto channelBody = [](const Node& n) {  // the case this test is about
      const Graph* g = definingBody(n);
      return g && g->numNodes() >= 2 && n.output(0)->type().format == Format::NC1HWC0 &&
             std::all_of(g->nodes().begin(), g->nodes().end(), [](const Node* m) {
               return m->opType() == "Mul" || m->opType() == "Add" || m->opType() == "Relu";
             });
    };
    for (const char* precision : {"force_fp32", "force_fp16"}) {
      const std::string problem = compiledOnBlocksMatchesReference(body, precision, channelBody, 6, "O3");
      QVERIFY2(problem.empty(), problem.c_str());
    }
  }

  void channelConcatOfWholeBlocksJoinsTheStoredBlocks() {
    // 16 and 32 channels joined along C (whole C0 blocks: the compiled run joins the stored blocks), then 48 and 8
    // (half a block: the compiler joins those in NCHW between TransData nodes). The numbers match the reference.
    const auto body = [](samples::GraphBuilder& b) {
      Value* x = b.input("image", DType::Float, {Dim::fixed(1), Dim::fixed(3), Dim::fixed(8), Dim::fixed(8)});
      Value* a = b.relu(b.conv(x, "a", 3, 16, 3, 1, 1, 1, true));
      Value* c = b.relu(b.conv(x, "c", 3, 32, 1, 1, 0, 1, true));
      Value* joined = b.concat({a, c}, 1);
      Value* d = b.relu(b.conv(x, "d", 3, 8, 1, 1, 0, 1, true));
      Value* uneven = b.concat({joined, d}, 1);
      b.output(b.conv(uneven, "head", 56, 4, 3, 1, 1, 1, true), "out");
    };
    const auto concatOnBlocks = [](const Node& n) {
      return n.opType() == "Concat" && n.output(0)->type().format == Format::NC1HWC0;
    };
    for (const char* precision : {"force_fp32", "force_fp16"}) {
      const std::string problem = compiledOnBlocksMatchesReference(body, precision, concatOnBlocks, 4);
      QVERIFY2(problem.empty(), problem.c_str());
    }
  }

  void sharedModelsRunAsUsersRunThem() {
    // Real exports: a CNN compiled to NC1HWC0/FRACTAL_Z, a bidirectional LSTM checked against the io.npz tract
    // recorded (found beside the model, its symbolic dims taken from the data), an ONNX Runtime-optimized GPT-2
    // (contrib Attention, SkipLayerNorm, FastGelu) and a Llama export (RotaryEmbedding, MultiHeadAttention): fp32
    // compiled runs match the reference.
    const QString models = QStringLiteral(KILN_SHARED_DIR) + "/models/";
    if (!QFileInfo::exists(models + "MANIFEST.md")) QSKIP("the shared corpus (../shared/models) is absent");
    const QStringList fp32{"--set", "precision_mode=force_fp32"};
    KilnRun r = runKiln(QStringList{"run", models + "cnn/cnn_mnist_pytorch.onnx"} + fp32);
    QVERIFY2(r.code == 0 && r.out.contains("compiled vs reference"), qPrintable(r.err + r.out));
    r = runKiln({"run", models + "speech/byte_sb_bidi_lstm.onnx"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("byte_sb_bidi_lstm_io.npz:Add_26: match"), qPrintable(r.out));
    QVERIFY2(r.out.contains("batch=2 (input data), length=58 (input data)"), qPrintable(r.out));
    r = runKiln(QStringList{"run", models + "transformer/tiny-random-gpt2-fp32_past.onnx", "--dim", "batch_size=2", "--dim",
                            "seq_len=3", "--dim", "past_seq_len=4", "--dim", "total_seq_len=7"} + fp32);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    r = runKiln(QStringList{"run", models + "transformer/tiny_llama_fp16/model.onnx"} + fp32);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    // Silero VAD: If bodies with LSTM and Conv inside run as one step of the compiled arena.
    r = runKiln({"run", models + "speech/silero_vad_v4.onnx"});
    QVERIFY2(r.code == 0 && r.out.contains("hn: compiled vs reference"), qPrintable(r.err + r.out));
  }

  void lightModelsMatchTheirExpectedOutputs() {
    // Every light_* model of the corpus ships the output ONNX Runtime computed (<stem>_output_0.pb, found beside
    // the model): the reference must reproduce it, and the fp32 compile the reference.
    const QString models = QStringLiteral(KILN_SHARED_DIR) + "/models/";
    if (!QFileInfo::exists(models + "MANIFEST.md")) QSKIP("the shared corpus (../shared/models) is absent");
    QDirIterator it(models, {"light_*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    int checked = 0;
    while (it.hasNext()) {
      const QString model = it.next();
      // vgg19 is two fp32 runs of 20 GFLOPs each: the hang guard allows for a busy machine.
      const KilnRun r = runProgram(QStringLiteral(KILN_BINARY), {"run", model, "--set", "precision_mode=force_fp32"},
                                   QProcessEnvironment::systemEnvironment(), 600000);
      QVERIFY2(r.code == 0 && r.out.contains("_output_0.pb: match"), qPrintable(model + "\n" + r.err + r.out));
      ++checked;
    }
    if (checked == 0) QSKIP("no light_* models in the shared corpus");
  }

  void overlappingPlanGivesWrongNumbers() {
    auto original = branchyModel();
    auto compiled = branchyModel();
    compile(*compiled, fp32NoFusion());
    overlap(*compiled->graph, "neg", "relu");  // b overwrites a while a is still needed
    const std::vector<Tensor> inputs = randomInputs(*original->graph, 7);
    const EmulationReport r = emulateModel(*original, *compiled, inputs);
    QVERIFY(!r.errors[0].diff.within());
    QVERIFY(r.maxAbsError() > 0.1);
  }

  void unplannedGraphIsRefused() {
    auto m = branchyModel();
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, runInArena(*m->graph, randomInputs(*m->graph, 1)));
  }

  void verifierNamesThePassThatChangedTheNumbers() {
    // A pass that breaks the plan right after MemoryAssignment: the verifier must blame it, not anything before.
    class BreakPlan final : public Pass {
     public:
      std::string name() const override { return "BreakPlan"; }
      PassResult run(PassContext& ctx) override {
        overlap(*ctx.model.graph, "neg", "relu");
        PassResult r;
        r.changed = true;
        return r;
      }
    };
    auto m = branchyModel();
    const std::vector<Tensor> inputs = randomInputs(*m->graph, 3);
    std::vector<PassAccuracyRow> sunk;
    PassVerifier verifier(inputs, 1e-4, [&](const PassAccuracyRow& r) { sunk.push_back(r); });
    const Options o = fp32NoFusion();
    PassManager pm;
    addStandardPasses(pm, o, {});
    pm.add(Stage::Compile, std::make_unique<BreakPlan>());
    pm.addObserver(&verifier);
    QCOMPARE(pm.run(*m, o).status, RunStatus::Ok);
    const int first = verifier.firstExceeding();
    QVERIFY(first > 0);
    QCOMPARE(verifier.results()[size_t(first)].pass, std::string("BreakPlan"));
    for (int i = 0; i < first; ++i) QCOMPARE(verifier.results()[size_t(i)].row.status, std::string("ok"));
    QCOMPARE(sunk.size(), verifier.results().size());  // every row reached the sink as it was computed
  }

  // kiln verify re-runs only what a pass changed: a pass that only annotates (ValidityCheck, stream and event
  // passes) takes every node's outputs from the run before; the numbers are the same as a full run's; each pass
  // that ran reports its time. The BreakPlan test above shows a change in the arena is still caught.
  void verifyRerunsOnlyWhatChanged() {
    auto m = blockedCnn();
    PassVerifier verifier(randomInputs(*m->graph, 5));
    compile(*m, fp32NoFusion(), {&verifier});
    const auto& rows = verifier.results();
    QVERIFY(rows.front().ms > 0 && rows.front().nodesRun > 0 && rows.front().nodesReused == 0);
    bool reusedAll = false;
    for (size_t i = 1; i < rows.size(); ++i) {
      if (rows[i].pass == "ValidityCheck") {
        QCOMPARE(rows[i].nodesRun, int64_t{0});  // annotations only
        QVERIFY(rows[i].nodesReused > 0);
        QCOMPARE(rows[i].row.maxAbs, rows[i - 1].row.maxAbs);
        reusedAll = true;
      }
    }
    QVERIFY(reusedAll);
    QCOMPARE(verifier.firstExceeding(), -1);
  }

  void fp16PrecisionIsMeasuredNotHidden() {
    auto m = branchyModel();
    PassVerifier verifier(randomInputs(*m->graph, 3), 1e-6);
    Options o;
    o.set("precision_mode=force_fp16");
    compile(*m, o, {&verifier});
    double worst = 0;
    for (const PassAccuracy& a : verifier.results()) worst = std::max(worst, a.row.maxAbs.value_or(0));
    QVERIFY2(worst > 1e-5, "fp16 compute must show its rounding error");
    QVERIFY(verifier.firstExceeding() > 0);
  }

  // The dim_values option sizes a run's symbolic dims (random data and compile alike), --dim overrides it, and
  // the verifier (as the workbench's Verify Numerics) binds the same way.
  void dimValuesSizeTheRun() {
    QTemporaryDir tmp;
    const QString model = tmp.filePath("symbolic.onnx");
    Model m;
    m.opsets[""] = 17;
    Value* x = m.graph->addInput(
        "x", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::symbolic("sequence"), Dim::fixed(4)})));
    Node* relu = m.graph->addNode("Relu", {x}, 1, "relu");
    m.graph->addOutput(m.graph->addNode("Sigmoid", {relu->output(0)}, 1, "sigmoid")->output(0));
    writeOnnxFile(m, model.toStdString());
    KilnRun r = runKiln({"run", model, "--set", "dim_values=batch:1;sequence:6"});
    QVERIFY2(r.out.contains("batch=1 (dim_values), sequence=6 (dim_values)"), qPrintable(r.err + r.out));
    QVERIFY2(!r.err.contains("input_shape"), qPrintable(r.err));
    r = runKiln({"run", model, "--set", "dim_values=batch:1;sequence:6", "--dim", "sequence=3"});
    QVERIFY2(r.out.contains("batch=1 (dim_values), sequence=3 (--dim)"), qPrintable(r.err + r.out));
    QVERIFY2(!r.err.contains("input_shape"), qPrintable(r.err));
    r = runKiln({"verify", model, "--set", "dim_values=batch:1;sequence:5"});
    QVERIFY2(r.out.contains("sequence=5"), qPrintable(r.err + r.out));
    QVERIFY2(!r.err.contains("input_shape"), qPrintable(r.err));
    // Nothing given: the policy binds both (batch 1, sequence 128), and the run says so.
    r = runKiln({"run", model});
    QVERIFY2(r.code == 0 && r.out.contains("batch=1 (dim_policy: batch), sequence=128 (dim_policy: sequence)"),
             qPrintable(r.err + r.out));
    // dim_values=keep leaves the compile symbolic; the run still needs data, made at the policy's extents.
    r = runKiln({"run", model, "--set", "dim_values=keep", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("\"value\": 128"), qPrintable(r.out));
  }

  void commandsAsAUserRunsThem() {
    QTemporaryDir tmp;
    const QString model = tmp.filePath("branchy.onnx");
    writeOnnxFile(*branchyModel(), model.toStdString());
    // run: fp32 compile matches; JSON has the documented keys
    KilnRun r = runKiln({"run", model, "--set", "precision_mode=force_fp32", "--json", "--trace", tmp.filePath("t.json")});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    const Json j = Json::parse(r.out.toStdString());
    for (const char* key : {"max_abs_error", "max_rel_error", "min_cosine", "latency_us", "utilisation", "outputs"})
      QVERIFY2(j.find(key), key);
    QVERIFY(j.find("latency_us")->asDouble() > 0);
    QVERIFY(QFileInfo(tmp.filePath("t.json")).size() > 100);
    // verify with history: one accuracy row per pass, all ok
    const QString db = tmp.filePath("h.db");
    r = runKiln({"verify", model, "--set", "precision_mode=force_fp32", "--history", db, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    const Json v = Json::parse(r.out.toStdString());
    HistoryDb h(db.toStdString(), HistoryDb::Mode::ReadOnly);
    const auto rows = readPassAccuracy(h, v.find("run")->asInt());
    QCOMPARE(rows.size(), v.find("passes")->asArray().size());
    for (const PassAccuracyRow& row : rows) QCOMPARE(row.status, std::string("ok"));
    // bad arguments and bad files: exit 2 with a message
    QCOMPARE(runKiln({"run", model, "--dim", "batch"}).code, 2);
    QCOMPARE(runKiln({"verify", model, "--rtol", "7"}).code, 2);
    r = runKiln({"run", tmp.filePath("missing.onnx")});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("missing.onnx"));
    r = runKiln({"run", model, "--soc", "Ascend9999"});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("Ascend9999"));
    r = runKiln({"run", model, "--inputs", tmp.filePath("nowhere")});
    QCOMPARE(r.code, 2);
    QCOMPARE(runKiln({"conformance", tmp.filePath("nowhere")}).code, 2);
  }
};

QTEST_GUILESS_MAIN(EmulationTest)
#include "test_emulation.moc"
