// Real shapes through the real binary, as a user runs it: symbolic exports are compiled at the binding the policy
// gives (printed, in --json and in the history), ATC's gears compile one graph each and write one .om, a sweep prints
// arena and latency against a symbol and draws them, batch --sweep adds the chart to its reports; int8 samples of
// both kinds pass the precision gate under the default force_fp16, a gate set out of reach fails kiln run (exit 1)
// and kiln verify names the pass; bad bindings, gears and sweeps exit 2 naming the option.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "io/onnx/onnx_writer.h"
#include "ir/model.h"
#include "samples/sample_models.h"
#include "support/kiln_process.h"

using namespace kiln;

namespace {

QJsonObject jsonOf(const KilnRun& r) { return QJsonDocument::fromJson(r.out.toUtf8()).object(); }

}  // namespace

class ShapesCliTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString bert_, resnet_;

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    bert_ = tmp_.filePath("bert.onnx");
    QCOMPARE(runKiln({"sample", "bert-base", "--layers", "1", "--no-weights", "-o", bert_}).code, 0);
    // A ResNet whose batch axis is symbolic, as exporters write it.
    SampleOptions so;
    so.layers = 4;
    auto m = buildSample("resnet50", so);
    ValueType t = m->graph->inputs()[0]->type();
    t.shape.dims()[0] = Dim::symbolic("batch");
    m->graph->inputs()[0]->setType(t);
    resnet_ = tmp_.filePath("resnet_dyn.onnx");
    writeOnnxFile(*m, resnet_.toStdString());
  }

  void compilePrintsAndRecordsTheBinding() {
    const QString db = tmp_.filePath("h.db");
    KilnRun r = runKiln({"compile", bert_, "--history", db});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("shapes    batch=1 (dim_policy: batch), sequence=128 (dim_policy: sequence)"),
             qPrintable(r.out));
    QVERIFY2(!r.out.contains("not planned"), qPrintable(r.out));  // every tensor sized
    r = runKiln({"compile", bert_, "--set", "dim_values=sequence:384", "--json"});
    const QJsonArray symbols = jsonOf(r)["shape_binding"].toObject()["symbols"].toArray();
    QCOMPARE(symbols.size(), 2);
    QCOMPARE(symbols[1].toObject()["value"].toInt(), 384);
    QCOMPARE(symbols[1].toObject()["source"].toString(), QString("dim_values"));
    r = runKiln({"history", "show", db, "1"});
    QVERIFY2(r.out.contains("shapes:   batch=1 (dim_policy: batch)"), qPrintable(r.out));
    // keep: the old symbolic compile, with the warning that says which tensors are left out of the plan and why.
    r = runKiln({"compile", bert_, "--set", "dim_values=keep"});
    QVERIFY2(r.code == 0 && r.out.contains("not planned (dim_values=keep left symbols open)"), qPrintable(r.out));
  }

  void contradictingBindingsExit2() {
    KilnRun r = runKiln({"compile", resnet_, "--set", "input_shape=input:1,4,224,224"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("input_shape gives 'input' dimension 1 = 4 but the model fixes it to 3"), qPrintable(r.err));
    r = runKiln({"run", resnet_, "--set", "input_shape=input:2,3,224,224", "--dim", "batch=4"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("binds 'batch'"), qPrintable(r.err));
    r = runKiln({"compile", bert_, "--set", "dim_policy=sequence:0"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("dim_policy"), qPrintable(r.err));
  }

  void gearsCompileOneGraphEachAndOneOm() {
    const QString om = tmp_.filePath("gears.om");
    KilnRun r = runKiln({"compile", resnet_, "--set", "dynamic_batch_size=1,2,4", "-o", om, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = jsonOf(r);
    const QJsonArray gears = j["gears"].toArray();
    QCOMPARE(gears.size(), 3);
    qint64 largest = 0, sum = 0;
    for (const QJsonValue& g : gears) {
      const qint64 arena = g.toObject()["arena_bytes"].toInteger();
      QVERIFY(arena > 0);
      largest = std::max(largest, arena);
      sum += arena;
      QVERIFY(g.toObject()["latency_us"].toDouble() > 0);
    }
    QVERIFY(gears[0].toObject()["latency_us"].toDouble() < gears[2].toObject()["latency_us"].toDouble());
    QCOMPARE(j["arena_bytes"].toInteger(), largest);  // GE: every gear laid out from one base
    QCOMPARE(j["arena_bytes_unshared"].toInteger(), sum);
    r = runKiln({"inspect", om});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("om.dynamic_batch      1,2,4"), qPrintable(r.out));
    QVERIFY(r.out.contains("ge:Case") && r.out.contains("ge:MapIndex"));
    QVERIFY(r.out.contains("3 subgraphs"));
    // ATC's rules, each refused naming the option.
    const QList<QPair<QStringList, QString>> bad = {
        {{"--set", "dynamic_batch_size=1,-2"}, "dynamic_batch_size"},
        {{"--set", "dynamic_batch_size=1,two"}, "dynamic_batch_size"},
        {{"--set", "dynamic_batch_size=4"}, "ATC takes 2 to 100"},
        {{"--set", "dynamic_dims=1;2"}, "input_format=ND"},
        {{"--set", "dynamic_batch_size=1,2", "--set", "dynamic_image_size=224,224;448,448"}, "one kind of gear"},
        {{"--set", "dynamic_batch_size=1,2", "--set", "input_shape=input:1,3,-1,224"}, "only the batch axis"},
    };
    for (const auto& [args, words] : bad) {
      r = runKiln(QStringList{"compile", resnet_} + args);
      QVERIFY2(r.code == 2 && r.err.contains(words), qPrintable(args.join(' ') + ": " + r.err));
    }
  }

  void sweepPrintsArenaAndLatencyAgainstTheExtent() {
    const QString svg = tmp_.filePath("sweep.svg");
    KilnRun r = runKiln({"compile", bert_, "--sweep", "sequence=64,256", "--chart", svg});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("sweep of sequence over 2 extents") && r.out.contains("batch=1, sequence=256"),
             qPrintable(r.out));
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("arena and latency against sequence"));
    r = runKiln({"compile", bert_, "--sweep", "sequence=64,256", "--json"});
    const QJsonArray points = jsonOf(r)["sweep"].toObject()["points"].toArray();
    QCOMPARE(points.size(), 2);
    QVERIFY(points[0].toObject()["arena_bytes"].toInteger() < points[1].toObject()["arena_bytes"].toInteger());
    QVERIFY(points[0].toObject()["latency_us"].toDouble() < points[1].toObject()["latency_us"].toDouble());
    r = runKiln({"compile", resnet_, "--sweep", "sequence=1,2"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no symbol or role 'sequence'") && r.err.contains("batch (batch)"), qPrintable(r.err));
    r = runKiln({"compile", bert_, "--sweep", "sequence=64,0"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--sweep sequence: '0'"), qPrintable(r.err));
    // Past the sample's 512 positions the model cannot run: that point fails with the reason, it has no numbers.
    r = runKiln({"compile", bert_, "--sweep", "sequence=256,1024", "--json"});
    const QJsonArray beyond = jsonOf(r)["sweep"].toObject()["points"].toArray();
    QCOMPARE(beyond.size(), 2);
    QVERIFY(beyond[0].toObject()["ok"].toBool());
    QVERIFY(!beyond[1].toObject()["ok"].toBool());
    QVERIFY2(beyond[1].toObject()["error"].toString().contains("the model cannot take batch=1, sequence=1024"),
             qPrintable(r.out));
  }

  // dim_values names a model does not have are warned about (an option file serves many models); --dim is given
  // for one model, so there it is an error; a role name binds the symbols of that role.
  void bindingNamesTheModelLacks() {
    KilnRun r = runKiln({"compile", bert_, "--set", "dim_values=nosuch:3"});
    QCOMPARE(r.code, 0);
    const QString said = r.out + r.err;
    QVERIFY2(said.contains("dim_values names 'nosuch', which is neither a symbol nor a role of this model") &&
                 said.contains("its symbols: batch, sequence"),
             qPrintable(said));
    r = runKiln({"run", bert_, "--dim", "nosuch=2"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--dim nosuch: the model has no such symbol or role"), qPrintable(r.err));
    r = runKiln({"compile", resnet_, "--set", "dim_values=nosuch:3;batch:2"});
    QVERIFY2(r.code == 0 && r.out.contains("batch=2 (dim_values)"), qPrintable(r.out));
    r = runKiln({"compile", bert_, "--set", "dim_values=sequence:0"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("(1 .. 2^40)"), qPrintable(r.err));
  }

  void batchSweepAddsTheChart() {
    const QString out = tmp_.filePath("batch");
    const KilnRun r = runKiln({"batch", "--models", bert_, "--options", QStringLiteral(KILN_SOURCE_DIR) +
                               "/resources/options/default.json", "--out", out, "--timing-only", "--sweep",
                               "sequence=64,128", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile f(out + "/summary.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject c = QJsonDocument::fromJson(f.readAll()).object()["cases"].toArray()[0].toObject();
    QCOMPARE(c["sweep"].toObject()["points"].toArray().size(), 2);
    QFile page(out + "/" + c["page"].toString());
    QVERIFY(page.open(QIODevice::ReadOnly));
    QVERIFY(page.readAll().contains("arena and latency against sequence"));
  }

  void quantizedSamplesPassTheGateUnderTheDefaultPrecision() {
    for (const char* kind : {"dynamic", "qdq"}) {
      const QString model = tmp_.filePath(QString("mobilenet_%1.onnx").arg(kind));
      QCOMPARE(runKiln({"sample", "mobilenetv2", "--layers", "3", "--quantize", kind, "-o", model}).code, 0);
      const KilnRun r = runKiln({"run", model, "--json"});
      QVERIFY2(r.code == 0, qPrintable(QString(kind) + ": " + r.out + r.err));
      const QJsonObject j = jsonOf(r);
      QCOMPARE(j["compute_precision"].toString(), QString("fp16"));
      QVERIFY(j["gate"].toString().contains("cosine >= 0.99"));
      QVERIFY(j["outputs"].toArray()[0].toObject()["passed"].toBool());
      QVERIFY(j["min_cosine"].toDouble() > 0.999);
      QVERIFY(j["utilisation"].toObject()["cube"].toDouble() > 0);  // ConvInteger / int8 conv on the cube
    }
  }

  void runReportsWeightPreparationAndMemoryApart() {
    // A MobileNetV2 compiled at fp32: its convolution weights are FRACTAL_Z, re-laid out once before the compiled
    // nodes run; the time is reported beside the run's, and the memory each run added at its peak.
    const QString model = tmp_.filePath("mobilenet_mem.onnx");
    QCOMPARE(runKiln({"sample", "mobilenetv2", "--layers", "3", "-o", model}).code, 0);
    const KilnRun r = runKiln({"run", model, "--set", "precision_mode=force_fp32", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    const QJsonObject j = jsonOf(r);
    QVERIFY(j["compiled_prepare_ms"].toDouble() > 0);
    QVERIFY(j["compiled_ms"].toDouble() > 0);
    QVERIFY(j["min_cosine"].toDouble() > 0.9999);  // the prepared weights are the same numbers
    const QJsonObject m = j["memory"].toObject();
    QVERIFY(m["weights_bytes"].toInteger() > 100000);
    QCOMPARE(m["arena_bytes"].toInteger(), j["arena_bytes"].toInteger());
    for (const char* key : {"reference_peak_bytes", "compiled_peak_bytes"}) {
      QVERIFY2(m.contains(key), key);
      // Measured (a number) on Linux with a writable /proc/self/clear_refs, else null: never a made-up zero.
      QVERIFY2(m[key].isNull() || m[key].toInteger() > 0, key);
    }
    const KilnRun text = runKiln({"run", model, "--set", "precision_mode=force_fp32"});
    QVERIFY(text.out.contains("weights re-laid out for the kernels before it in"));
    QVERIFY(text.out.contains("memory      runs added at their peak"));
    QCOMPARE(j["timed_runs"].toInt(), 1);  // one run: its first is its time
    QCOMPARE(j["reference_first_ms"].toDouble(), j["reference_ms"].toDouble());
  }

  void repeatTimesTheFastestRunAndKeepsTheFirst() {
    // --repeat N: each mode runs N times; the time is the fastest run's, the first's beside it, and the results
    // (and so the verdict) are the first run's.
    const QString model = tmp_.filePath("mobilenet_repeat.onnx");
    QCOMPARE(runKiln({"sample", "mobilenetv2", "--layers", "2", "-o", model}).code, 0);
    const KilnRun r = runKiln({"run", model, "--set", "precision_mode=force_fp32", "--random", "3", "--repeat", "3", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    const QJsonObject j = jsonOf(r);
    QCOMPARE(j["timed_runs"].toInt(), 3);
    for (const char* mode : {"reference", "compiled"}) {
      const double best = j[QString(mode) + "_ms"].toDouble(), first = j[QString(mode) + "_first_ms"].toDouble();
      QVERIFY2(best > 0 && first >= best, mode);
    }
    QVERIFY(j["min_cosine"].toDouble() > 0.9999);
    const KilnRun text = runKiln({"run", model, "--set", "precision_mode=force_fp32", "--random", "3", "--repeat", "2"});
    QVERIFY2(text.code == 0 && text.out.contains("best of 2 runs (first "), qPrintable(text.out));
    for (const char* bad : {"0", "1001", "two"}) {
      const KilnRun refused = runKiln({"run", model, "--repeat", bad});
      QVERIFY2(refused.code == 2 && refused.err.contains("--repeat"), qPrintable(QString(bad) + ": " + refused.err));
    }
  }

  void aGateOutOfReachFailsRunAndVerifyNamesThePass() {
    const QString model = tmp_.filePath("mobilenet_gate.onnx");
    QCOMPARE(runKiln({"sample", "mobilenetv2", "--layers", "2", "-o", model}).code, 0);
    // fp16 compute within 1e-7 of the scale: no fp16 compile makes it, and a "passed" would be a lie.
    KilnRun r = runKiln({"run", model, "--set", "verify.rtol_fp16=1e-7"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("FAILED: max error") && r.out.contains("over rtol 1e-07"), qPrintable(r.out));
    r = runKiln({"run", model, "--set", "precision_mode=force_fp32"});
    QVERIFY2(r.code == 0 && r.out.contains("fp32 gate"), qPrintable(r.out));
    r = runKiln({"verify", model, "--set", "verify.rtol_fp16=1e-7"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("first pass below the gate: RefineRunningPrecision"), qPrintable(r.out));
  }

  // Silero VAD's pattern: a scalar input (the sample rate) picks the branch of an If, and the branch a made-up rate
  // picks cannot take the audio. The failure names the input, its made-up value and how to give another (--value);
  // with a real rate the compiled run (control flow in the arena) matches the reference. An If without its
  // else_branch is invalid ONNX: exit 2 naming the node.
  void madeUpInputsThatPickABranchAreNamed() {
    auto m = std::make_unique<Model>();
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    Value* audio = g.addInput("audio", ValueType::tensor(DType::Float, Shape({Dim::fixed(1), Dim::symbolic("samples")})));
    Value* rate = g.addInput("sr", ValueType::tensor(DType::Int64, Shape::ofStatic({})));
    Value* known = g.addInitializer("k16000", Tensor::fromVector<int64_t>(DType::Int64, {}, {16000}));
    Value* axes = g.addInitializer("axes", Tensor::fromVector<int64_t>(DType::Int64, {1}, {1}));
    Node* is16k = g.addNode("Equal", {rate, known}, {"is16k"}, "rate_check");
    auto branch = [&](const std::string& name, int64_t kernel) {
      auto b = g.makeSubgraph(name);
      Value* w = b->addInitializer(name + "_w", Tensor::fromVector(DType::Float, {1, 1, kernel},
                                                                    std::vector<float>(size_t(kernel), 0.01f)));
      Node* u = b->addNode("Unsqueeze", {audio, axes}, {name + "_u"}, name + "/unsqueeze");
      Node* conv = b->addNode("Conv", {u->output(0), w}, {name + "_c"}, name + "/stft/Conv");
      conv->setAttr("strides", Attribute(std::vector<int64_t>{kernel / 2}));
      Node* mean = b->addNode("ReduceMean", {conv->output(0)}, {name + "_o"}, name + "/mean");
      mean->setAttr("keepdims", Attribute(int64_t{0}));
      b->addOutput(mean->output(0));
      return b;
    };
    Node* iff = g.addNode("If", {is16k->output(0)}, {"out"}, "pick_rate");
    iff->setAttr("then_branch", Attribute(branch("rate16k", 256)));
    iff->setAttr("else_branch", Attribute(branch("rate8k", 40000)));  // longer than the bound 16000 samples
    g.addOutput(iff->output(0));
    const QString model = tmp_.filePath("vad_like.onnx");
    writeOnnxFile(*m, model.toStdString());
    KilnRun r = runKiln({"run", model});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("rate8k/stft/Conv") && r.err.contains("'sr' (int64 scalar = ") &&
                 r.err.contains("decides whether it runs") && !r.err.contains("'audio'") &&
                 r.err.contains("--value sr=V") && r.err.contains("--dim samples=N"),
             qPrintable(r.err));
    r = runKiln({"run", model, "--value", "sr=16000", "--set", "precision_mode=force_fp32"});
    QVERIFY2(r.code == 0 && r.out.contains("compiled vs reference") && r.out.contains("given sr=16000"),
             qPrintable(r.err + r.out));
    r = runKiln({"run", model, "--value", "sr=1,2"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--value sr: the input is int64[scalar], 1 values here, not 2"), qPrintable(r.err));
    r = runKiln({"run", model, "--value", "rate=3"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no input 'rate' (inputs: audio, sr)"), qPrintable(r.err));
    iff->removeAttr("else_branch");
    writeOnnxFile(*m, model.toStdString());
    r = runKiln({"compile", model});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("ValidityCheck: node 'pick_rate' (If) has no else_branch"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(ShapesCliTest)
#include "test_shapes_cli.moc"
