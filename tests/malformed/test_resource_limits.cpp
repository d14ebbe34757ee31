// The resource limits of the option schema (README "Hardening"): max_model_bytes, constant_folding_max_bytes,
// emulator.max_arena_bytes, emulator.max_tensor_bytes and pass_time_budget_ms. Each is exceeded on purpose — through
// the real `kiln` binary under a 2 GiB address-space limit where a user would meet it, in-process for the pass
// budget — and must end with a message naming the option, never an OOM kill or a hang.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <thread>

#include "ir/model.h"
#include "passes/pass_manager.h"
#include "support/kiln_process.h"
#include "support/om_sample.h"
#include "support/onnx_proto_sample.h"

using namespace kiln;

namespace {

// A pass that takes longer than any budget the tests set.
class SlowPass final : public Pass {
 public:
  std::string name() const override { return "SlowPass"; }
  PassResult run(PassContext&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return {};
  }
};

// A node pass that sleeps on every visit and never finishes within a 1 ms budget over 1,000 nodes.
class CrawlingNodePass final : public NodePass {
 public:
  int visits = 0;
  std::string name() const override { return "CrawlingNodePass"; }

 protected:
  bool visit(Node&, PassContext&, NodeWorklist&, PassResult&) override {
    ++visits;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    return false;
  }
};

std::unique_ptr<Model> reluChain(int length) {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  Graph& g = *m->graph;
  Value* v = g.addInput("x", ValueType::tensor(DType::Float, Shape({Dim::fixed(2)})));
  for (int i = 0; i < length; ++i) v = g.addNode("Relu", {v}, {"r" + std::to_string(i)}, "relu" + std::to_string(i))->output(0);
  g.addOutput(v);
  return m;
}

QJsonObject passNamed(const QJsonObject& compile, const QString& name) {
  for (const auto& p : compile["passes"].toArray())
    if (p.toObject()["name"].toString() == name) return p.toObject();
  return {};
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class ResourceLimitsTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  QString write(const QString& name, const std::string& bytes) {
    const QString path = tmp_.filePath(name);
    std::ofstream(path.toStdString(), std::ios::binary) << bytes;
    return path;
  }

  // y = Neg(Relu(x)): the Relu output lives in the compiled run's arena.
  QString twoOpModel() {
    onnx::ModelProto m = kiln::test::baseProto();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_output(0, "r");
    auto* n = g->add_node();
    n->set_op_type("Neg");
    n->set_name("neg");
    n->add_input("r");
    n->add_output("y");
    return write("two_ops.onnx", m.SerializeAsString());
  }

 private slots:
  void defaultsAreInTheSchema() {
    const Options o;
    QCOMPARE(o.getInt(kMaxModelBytesKey), int64_t{4} << 30);
    QCOMPARE(o.getInt(kPassTimeBudgetKey), int64_t{600000});
    QCOMPARE(o.getInt(kEmulatorArenaKey), int64_t{4} << 30);
    QCOMPARE(o.getInt(kEmulatorTensorKey), int64_t{4} << 30);
    QCOMPARE(o.getInt(kEmulatorInputKey), int64_t{4} << 30);
    QCOMPARE(o.getInt("constant_folding_max_bytes"), int64_t{64} << 20);
  }

  void modelLargerThanMaxModelBytesIsRefused() {
    const QString onnx = write("model.onnx", kiln::test::baseProto().SerializeAsString());
    const QString om = write("model.om", kiln::om::test::fileOf(kiln::om::test::sample()));
    for (const QString& path : {onnx, om}) {
      const KilnRun r = runKilnLimited({"compile", path, "--set", "max_model_bytes=16"});
      qInfo("%s", qPrintable(r.err.trimmed()));
      QCOMPARE(r.code, 2);
      QVERIFY2(r.err.startsWith("kiln: " + path + ": file is ") && r.err.contains("max_model_bytes"), qPrintable(r.err));
      QCOMPARE(r.err.count('\n'), 1);
    }
    QCOMPARE(runKilnLimited({"compile", onnx, "--set", "max_model_bytes=100000"}).code, 0);
  }

  void constantFoldingAboveItsLimitIsSkipped() {
    // ConstantOfShape([512, 512]) -> 1 MiB of fp32: folded by default, left alone (and counted) under a 4 KiB cap.
    onnx::ModelProto m = kiln::test::baseProto();
    auto* g = m.mutable_graph();
    auto* shape = g->add_initializer();
    shape->set_name("shape");
    shape->set_data_type(7);
    shape->add_dims(2);
    shape->add_int64_data(512);
    shape->add_int64_data(512);
    auto* n = g->add_node();
    n->set_op_type("ConstantOfShape");
    n->set_name("big");
    n->add_input("shape");
    n->add_output("z");
    g->add_output()->set_name("z");
    const QString path = write("folding.onnx", m.SerializeAsString());
    const KilnRun capped =
        runKilnLimited({"compile", path, "--until", "ConstantFolding", "--set", "constant_folding_max_bytes=4096", "--json"});
    QCOMPARE(capped.code, 0);
    const QJsonObject c = passNamed(QJsonDocument::fromJson(capped.out.toUtf8()).object(), "ConstantFolding");
    QVERIFY2(c["counters"].toObject()["skipped_too_large"].toInt() == 1, qPrintable(capped.out.left(2000)));
    const KilnRun open = runKilnLimited({"compile", path, "--until", "ConstantFolding", "--json"});
    const QJsonObject o = passNamed(QJsonDocument::fromJson(open.out.toUtf8()).object(), "ConstantFolding");
    QCOMPARE(o["counters"].toObject()["folded"].toInt(), 1);
  }

  void emulatedTensorAboveItsLimitStopsTheRun() {
    const KilnRun r = runKilnLimited({"run", twoOpModel(), "--random", "1", "--set", "emulator.max_tensor_bytes=4"});
    qInfo("%s", qPrintable(r.err.trimmed()));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("emulator.max_tensor_bytes") && r.err.count('\n') == 1, qPrintable(r.err));
  }

  void arenaAboveItsLimitFailsTheCompiledRun() {
    // The reference run needs no arena; the compiled one is refused before allocating it: a failed check (exit 1)
    // whose reason names the option.
    const QString model = tmp_.filePath("resnet.onnx");
    QCOMPARE(runKilnLimited({"sample", "resnet50", "--layers", "1", "--no-weights", "-o", model}).code, 0);
    const KilnRun r = runKilnLimited({"run", model, "--random", "1", "--set", "emulator.max_arena_bytes=4096"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("could not run") && r.out.contains("exceeds the arena limit of 4096 bytes") &&
                 r.out.contains("emulator.max_arena_bytes"),
             qPrintable(r.out));
    QCOMPARE(runKilnLimited({"run", model, "--random", "1"}).code, 0);
  }

  // A model exported without its weights has them as graph inputs: random data for all of them can pass memory
  // (a 7B llama: 27 GB). It is refused before any is made; `kiln run` still reports the timing and says why there
  // is no functional run (exit 1), and `kiln batch` notes it on the case, whose compile and timing pass.
  void randomInputsOverTheirLimitAreRefusedBeforeAllocation() {
    const QString model = tmp_.filePath("llama.onnx");
    QCOMPARE(runKilnLimited({"sample", "llama", "--layers", "2", "--no-weights", "-o", model}).code, 0);
    const KilnRun r = runKilnLimited({"run", model, "--set", "emulator.max_input_bytes=100000000"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("latency") && r.out.contains("functional  no input data: " + model) &&
                 r.out.contains("over emulator.max_input_bytes (95.4 MiB)"),
             qPrintable(r.out));
    QVERIFY(!r.out.contains("reference "));
    const QString options = write("small_inputs.json", R"({"emulator": {"max_input_bytes": 100000000}})");
    const QString dir = tmp_.filePath("models");
    QVERIFY(QDir().mkpath(dir));
    QVERIFY(QFile::copy(model, dir + "/llama.onnx"));
    const KilnRun b = runKilnLimited({"batch", "--models", dir, "--options", options, "--out", tmp_.filePath("out")});
    QCOMPARE(b.code, 0);
    const QJsonObject c =
        QJsonDocument::fromJson(readFile(tmp_.filePath("out/summary.json"))).object()["cases"].toArray()[0].toObject();
    QCOMPARE(c["status"].toString(), QString("ok"));
    QVERIFY2(c["reason"].toString().contains("emulator.max_input_bytes"), qPrintable(c["reason"].toString()));
    QVERIFY(c["latency_us"].toDouble() > 0);
  }

  // Past every limit, memory can still run out (here a 200 MiB address space, below the full ResNet-50's weights and
  // their compiled copy): one line naming the file, exit 2.
  void outOfMemoryNamesTheFile() {
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("AddressSanitizer reserves its shadow memory up front: no address-space limit in this build");
#endif
    const QString model = tmp_.filePath("resnet_oom.onnx");
    QCOMPARE(runKilnLimited({"sample", "resnet50", "-o", model}).code, 0);
    const KilnRun r = runProgram(KILN_BINARY, {"run", model}, QProcessEnvironment::systemEnvironment(), 60000,
                                 200ull << 20);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.startsWith("kiln run: " + model + ": out of memory") && r.err.count('\n') == 1, qPrintable(r.err));
  }

  void passOverItsTimeBudgetFailsTheRun() {
    auto m = reluChain(4);
    PassManager pm;
    pm.add(Stage::Prepare, std::make_unique<SlowPass>());
    Options o;
    o.set("pass_time_budget_ms=1");
    const RunSummary s = pm.run(*m, o);
    QCOMPARE(s.status, RunStatus::Failed);
    QVERIFY2(QString::fromStdString(s.error).startsWith("SlowPass: took ") &&
                 QString::fromStdString(s.error).contains("pass_time_budget_ms"),
             s.error.c_str());
    // 0: no budget.
    o.set("pass_time_budget_ms=0");
    QCOMPARE(pm.run(*reluChain(4), o).status, RunStatus::Ok);
  }

  void nodePassStopsWhenItsBudgetRunsOut() {
    auto m = reluChain(1000);
    PassManager pm;
    auto pass = std::make_unique<CrawlingNodePass>();
    CrawlingNodePass* crawl = pass.get();
    pm.add(Stage::Prepare, std::move(pass));
    Options o;
    o.set("pass_time_budget_ms=1");
    const RunSummary s = pm.run(*m, o);
    QCOMPARE(s.status, RunStatus::Failed);
    QVERIFY2(QString::fromStdString(s.error).contains("stopped after") &&
                 QString::fromStdString(s.error).contains("pass_time_budget_ms"),
             s.error.c_str());
    QVERIFY(crawl->visits < 1000);  // it stopped early, at the first check past the budget
  }
};

QTEST_GUILESS_MAIN(ResourceLimitsTest)
#include "test_resource_limits.moc"
