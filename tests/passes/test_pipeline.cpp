// Options, the PassManager (order, --until, failures, verification, observers, node-pass fixpoint) and the
// Stage 1 passes written in passes/prepare/ (each on a small graph built for it).
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "util/load_error.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "passes/prepare/prepare_passes.h"

using namespace kiln;

namespace {

ValueType f32(std::vector<int64_t> dims) { return ValueType::tensor(DType::Float, Shape::ofStatic(dims)); }

PassResult runPass(Pass& p, Model& m, const Options& o = {}) {
  std::vector<std::string> warnings;
  PassContext ctx{m, o, warnings};
  PassResult r = p.run(ctx);
  auto problems = verifyModel(m);
  if (!problems.empty()) qWarning("%s", problems[0].c_str());
  return r;
}

int count(const Model& m, const std::string& op) {
  int n = 0;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* x : g.nodes()) n += x->opType() == op;
  });
  return n;
}

Value* scalarInit(Graph& g, const std::string& name, float v) {
  return g.addInitializer(name, Tensor::fromVector<float>(DType::Float, {}, {v}));
}

// A pass that records the order it ran in, optionally throws or breaks the graph.
class ProbePass final : public Pass {
 public:
  enum class Mode { Fine, Throw, Break };
  ProbePass(std::string n, std::vector<std::string>& log, Mode mode = Mode::Fine)
      : name_(std::move(n)), log_(log), mode_(mode) {}
  std::string name() const override { return name_; }
  PassResult run(PassContext& ctx) override {
    log_.push_back(name_);
    if (mode_ == Mode::Throw) throw std::runtime_error("deliberate failure");
    if (mode_ == Mode::Break) {  // a node using a value from a graph it cannot see
      auto other = std::make_shared<Graph>(ctx.model.ids);
      Value* foreign = other->addInput("foreign", f32({1}));
      keep_ = other;
      ctx.model.graph->addNode("Relu", {foreign}, 1, "broken");
    }
    PassResult r;
    r.add("ran");
    return r;
  }

 private:
  std::string name_;
  std::vector<std::string>& log_;
  Mode mode_;
  std::shared_ptr<Graph> keep_;
};

class RecordingObserver final : public PassObserver {
 public:
  std::vector<std::string> events;
  void runStarted(const Model&, const Options&) override { events.push_back("start"); }
  void beforePass(const PassRecord& r, const Model&) override { events.push_back("before " + r.name); }
  void afterPass(const PassRecord& r, const Model&) override { events.push_back("after " + r.name); }
  void passFailed(const PassRecord& r, const Model&) override { events.push_back("failed " + r.name); }
  void runFinished(const RunSummary&, const Model&) override { events.push_back("finish"); }
};

std::unique_ptr<Model> reluModel() {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  Value* x = m->graph->addInput("x", f32({2}));
  Node* r = m->graph->addNode("Relu", {x}, {"y"}, "relu");
  m->graph->addOutput(r->output(0));
  inferShapes(*m);
  return m;
}

}  // namespace

class PipelineTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

  QString writeFile(const QString& name, const std::string& text) {
    const QString path = tmp_.filePath(name);
    std::ofstream(path.toStdString()) << text;
    return path;
  }

 private slots:
  // ------------------------------------------------------------------ options
  void optionDefaultsAndFiles() {
    Options o;
    QCOMPARE(QString::fromStdString(o.getString("precision_mode")), QString("force_fp16"));
    QVERIFY(o.getBool("oo_constant_folding"));
    Options f = Options::fromFile(
        writeFile("a.json", R"({"precision_mode": "force_fp32", "memory": {}, "oo_level": "O1"})").toStdString());
    QCOMPARE(QString::fromStdString(f.getString("precision_mode")), QString("force_fp32"));
    QVERIFY(!f.fusionEnabled("ConvBatchNormFusion"));  // O1 = no fusion
    QVERIFY(f.toJson().find("soc_version"));
  }

  void optionErrorsNameKeyAndFile() {
    auto expectLoadError = [&](const std::string& text, const QString& needle) {
      const QString path = writeFile("bad.json", text);
      try {
        Options::fromFile(path.toStdString());
        QFAIL(qPrintable("accepted: " + QString::fromStdString(text)));
      } catch (const LoadError& e) {
        const QString msg = QString::fromStdString(e.describe());
        QVERIFY2(msg.contains(path) && msg.contains(needle), qPrintable(msg));
      }
    };
    expectLoadError(R"({"precison_mode": "force_fp16"})", "unknown option 'precison_mode'");
    expectLoadError(R"({"precision_mode": "fp8"})", "must be one of");
    expectLoadError(R"({"topo_sorting_mode": 9})", "between 0 and 3");
    expectLoadError(R"({"oo_constant_folding": "yes"})", "true or false");
    expectLoadError(R"({"input_shape": "x:1,a,3"})", "bad dimension");
    expectLoadError(R"([1, 2])", "JSON object");
    expectLoadError(R"({"a": )", "not valid JSON");
    expectLoadError(R"({"multi_stream_parallel_mode": "fast"})", "LoadBalance");
  }

  void setAndFusionSwitch() {
    Options o;
    o.set("precision_mode=allow_mix_precision");
    o.set("oo_constant_folding=off");
    o.set("topo_sorting_mode=2");
    QVERIFY(!o.getBool("oo_constant_folding"));
    QCOMPARE(o.getInt("topo_sorting_mode"), int64_t(2));
    QVERIFY_THROWS_EXCEPTION(OptionError, o.set("topo_sorting_mode=two"));
    QVERIFY_THROWS_EXCEPTION(OptionError, o.set("nonsense=1"));
    QVERIFY_THROWS_EXCEPTION(OptionError, o.set("no_equals_sign"));
    // ATC's fusion_switch_file lines.
    o.set("fusion_switch=ConvBatchNormFusion:off;MatMulBiasAddFusion:on");
    QVERIFY(!o.fusionEnabled("ConvBatchNormFusion"));
    QVERIFY(o.fusionEnabled("MatMulBiasAddFusion"));
    QVERIFY(o.fusionEnabled("AttentionFusion"));
    // ATC's JSON form with ALL.
    Options j;
    j.merge(Json::parse(R"({"fusion_switch": {"Switch": {"GraphFusion": {"ALL": "off", "AttentionFusion": "on"}}}})"),
            "test");
    QVERIFY(!j.fusionEnabled("ConvBatchNormFusion"));
    QVERIFY(j.fusionEnabled("AttentionFusion"));
    auto shapes = Options().inputShapes();
    QVERIFY(shapes.empty());
    o.set("input_shape=input:0:1,3,224,224;mask:1,-1");
    shapes = o.inputShapes();
    QCOMPARE(shapes["input:0"].size(), size_t(4));
    QVERIFY(!shapes["mask"][1].isStatic());
  }

  // ------------------------------------------------------------------ pass manager
  void orderObserversAndUntil() {
    std::vector<std::string> log;
    PassManager pm;
    pm.add(Stage::Optimize, std::make_unique<ProbePass>("B", log));
    pm.add(Stage::Prepare, std::make_unique<ProbePass>("A", log));
    pm.add(Stage::Compile, std::make_unique<ProbePass>("C", log));
    pm.sortByStage();
    RecordingObserver obs;
    pm.addObserver(&obs);
    auto m = reluModel();
    RunSummary s = pm.run(*m, Options());
    QCOMPARE(s.status, RunStatus::Ok);
    QCOMPARE(log, (std::vector<std::string>{"A", "B", "C"}));
    QCOMPARE(obs.events, (std::vector<std::string>{"start", "before A", "after A", "before B", "after B", "before C",
                                                    "after C", "finish"}));
    QCOMPARE(s.passes[1].counters.at("ran"), int64_t(1));
    QCOMPARE(s.passes[1].index, 2);

    log.clear();
    pm.setUntil("optimize");
    s = pm.run(*m, Options());
    QCOMPARE(s.status, RunStatus::Stopped);
    QCOMPARE(log, (std::vector<std::string>{"A", "B"}));
    pm.setUntil("a");  // pass names are case-insensitive
    log.clear();
    pm.run(*m, Options());
    QCOMPARE(log.size(), size_t(1));
    pm.setUntil("nosuchpass");
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, pm.run(*m, Options()));
  }

  void failingPassesEndTheRun() {
    for (auto mode : {ProbePass::Mode::Throw, ProbePass::Mode::Break}) {
      std::vector<std::string> log;
      PassManager pm;
      pm.add(Stage::Prepare, std::make_unique<ProbePass>("First", log));
      pm.add(Stage::Prepare, std::make_unique<ProbePass>("Bad", log, mode));
      pm.add(Stage::Prepare, std::make_unique<ProbePass>("Never", log));
      RecordingObserver obs;
      pm.addObserver(&obs);
      auto m = reluModel();
      RunSummary s = pm.run(*m, Options());
      QCOMPARE(s.status, RunStatus::Failed);
      QVERIFY2(QString::fromStdString(s.error).startsWith("Bad: "), s.error.c_str());
      if (mode == ProbePass::Mode::Break) QVERIFY(QString::fromStdString(s.error).contains("invalid graph"));
      QCOMPARE(log, (std::vector<std::string>{"First", "Bad"}));
      QCOMPARE(obs.events.back(), std::string("finish"));
      QVERIFY(std::find(obs.events.begin(), obs.events.end(), "failed Bad") != obs.events.end());
    }
  }

  void dumpsAreNumberedLikeGe() {
    PassManager pm;
    addStandardPasses(pm, Options());
    DumpObserver dump(tmp_.filePath("dumps").toStdString());
    pm.addObserver(&dump);
    auto m = reluModel();
    pm.run(*m, Options());
    QVERIFY(QFileInfo::exists(tmp_.filePath("dumps/ge_onnx_00000000_graph_0_Import.onnx")));
    QVERIFY(QFileInfo::exists(tmp_.filePath("dumps/ge_onnx_00000002_graph_0_InferShape.onnx")));
  }

  // ------------------------------------------------------------------ passes
  void inputShapeBinding() {
    Model m;
    m.opsets[""] = 17;
    Value* x = m.graph->addInput("x", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::fixed(4)})));
    Value* y = m.graph->addInput("y", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::fixed(4)})));
    m.graph->addOutput(m.graph->addNode("Add", {x, y}, 1, "add")->output(0));
    Options o;
    o.set("input_shape=x:8,4");
    auto pass = makeInputShapeBindingPass();
    PassResult r = runPass(*pass, m, o);
    QVERIFY(r.changed);
    QCOMPARE(QString::fromStdString(y->type().toString()), QString::fromUtf8("fp32[8×4]"));  // same symbol
    o.set("input_shape=x:8,5");
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, runPass(*pass, m, o));
    o.set("input_shape=z:1");
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, runPass(*pass, m, o));
  }

  // dim_values binds symbols by name (inputs and everything inside), leaves other symbols alone, ignores names the
  // model does not use, refuses malformed lists before storing them and a conflict with input_shape at compile time.
  void dimValuesBindSymbolsByName() {
    Model m;
    m.opsets[""] = 17;
    Value* x = m.graph->addInput(
        "x", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::symbolic("seq"), Dim::fixed(4)})));
    Value* y = m.graph->addInput("y", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::fixed(4)})));
    Node* add = m.graph->addNode("Relu", {x}, 1, "relu");
    add->output(0)->setType(x->type());
    m.graph->addOutput(add->output(0));
    m.graph->addOutput(m.graph->addNode("Relu", {y}, 1, "relu2")->output(0));
    Options o;
    o.set("dim_values=batch:2;unused:7;keep");  // keep: seq stays symbolic (no dim_policy)
    auto pass = makeInputShapeBindingPass();
    QVERIFY(runPass(*pass, m, o).changed);
    QCOMPARE(QString::fromStdString(m.binding.text()),
             QString("batch=2 (dim_values), seq kept symbolic (dim_values=keep)"));
    QCOMPARE(QString::fromStdString(x->type().toString()), QString::fromUtf8("fp32[2×seq×4]"));
    QCOMPARE(QString::fromStdString(y->type().toString()), QString::fromUtf8("fp32[2×4]"));
    QCOMPARE(QString::fromStdString(add->output(0)->type().toString()), QString::fromUtf8("fp32[2×seq×4]"));
    const std::string before = o.getString("dim_values");
    for (const char* bad : {"dim_values=batch", "dim_values=batch:-1", "dim_values=kept", "dim_values=batch:x", "dim_values=:3",
                            "dim_values=batch:1;batch:2", "dim_values=batch:99999999999999999999"}) {
      QVERIFY_THROWS_EXCEPTION(OptionError, o.set(bad));
      QCOMPARE(o.getString("dim_values"), before);  // a refused value is not stored
    }
    Model m2;
    m2.opsets[""] = 17;
    Value* z = m2.graph->addInput("z", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch")})));
    m2.graph->addOutput(m2.graph->addNode("Relu", {z}, 1, "r")->output(0));
    Options both;
    both.set("dim_values=batch:2");
    both.set("input_shape=z:3");
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, runPass(*pass, m2, both));
  }

  void noOpRemovalKeepsOutputNames() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2, 3}));
    Node* relu = g.addNode("Relu", {x}, {"r"}, "relu");
    Node* id = g.addNode("Identity", {relu->output(0)}, {"i"}, "id");
    Node* drop = g.addNode("Dropout", {id->output(0)}, {"d"}, "drop");
    Node* cast = g.addNode("Cast", {drop->output(0)}, {"c"}, "cast");
    cast->setAttr("to", Attribute(int64_t(1)));
    Node* tr = g.addNode("Transpose", {cast->output(0)}, {"out"}, "tr");
    tr->setAttr("perm", Attribute(std::vector<int64_t>{0, 1}));
    g.addOutput(tr->output(0));
    inferShapes(m);
    auto pass = makeNoOpRemovalPass();
    PassResult r = runPass(*pass, m);
    QCOMPARE(g.numNodes(), size_t(1));
    QCOMPARE(r.counters["identity"] + r.counters["dropout"] + r.counters["cast"] + r.counters["transpose"], int64_t(4));
    QCOMPARE(g.outputs()[0]->name(), std::string("out"));  // the model's output name survives
    QCOMPARE(g.outputs()[0]->producer(), relu);
    // An Identity straight from an input to an output changes nothing about the interface: it stays.
    Model m2;
    m2.opsets[""] = 17;
    Value* in = m2.graph->addInput("in", f32({1}));
    m2.graph->addOutput(m2.graph->addNode("Identity", {in}, {"o"})->output(0));
    QVERIFY(!runPass(*pass, m2).changed);
  }

  void cseMergesDuplicates() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2, 3}));
    Value* c1 = g.addInitializer("c1", Tensor::fromVector<int64_t>(DType::Int64, {2}, {3, 2}));
    Value* c2 = g.addInitializer("c2", Tensor::fromVector<int64_t>(DType::Int64, {2}, {3, 2}));
    Node* s1 = g.addNode("Shape", {x}, 1, "s1");
    Node* s2 = g.addNode("Shape", {x}, 1, "s2");
    Node* r1 = g.addNode("Reshape", {x, c1}, 1, "r1");
    Node* r2 = g.addNode("Reshape", {x, c2}, 1, "r2");  // same after c2 merges into c1
    g.addOutput(g.addNode("Add", {r1->output(0), r2->output(0)}, {"sum"})->output(0));
    g.addOutput(g.addNode("Concat", {s1->output(0), s2->output(0)}, {"shapes"})->output(0));
    auto pass = makeCommonSubexpressionEliminationPass();
    PassResult r = runPass(*pass, m);
    QCOMPARE(r.counters["initializers_merged"], int64_t(1));
    QCOMPARE(r.counters["nodes_merged"], int64_t(2));
    QCOMPARE(count(m, "Shape"), 1);
    QCOMPARE(count(m, "Reshape"), 1);
  }

  void algebraicSimplification() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2, 3, 4}));
    Node* mul = g.addNode("Mul", {scalarInit(g, "one", 1.0f), x}, 1, "mul");
    Node* add = g.addNode("Add", {mul->output(0), scalarInit(g, "zero", 0.0f)}, 1, "add");
    Node* t1 = g.addNode("Transpose", {add->output(0)}, 1, "t1");
    t1->setAttr("perm", Attribute(std::vector<int64_t>{1, 0, 2}));
    Node* t2 = g.addNode("Transpose", {t1->output(0)}, 1, "t2");
    t2->setAttr("perm", Attribute(std::vector<int64_t>{1, 0, 2}));
    Node* r1 = g.addNode("Reshape", {t2->output(0), g.addInitializer("s1", Tensor::fromVector<int64_t>(
                                                                                DType::Int64, {2}, {6, 4}))},
                         1, "r1");
    Node* r2 = g.addNode("Reshape", {r1->output(0), g.addInitializer("s2", Tensor::fromVector<int64_t>(
                                                                                DType::Int64, {1}, {24}))},
                         {"y"}, "r2");
    g.addOutput(r2->output(0));
    inferShapes(m);
    auto pass = makeAlgebraicSimplificationPass();
    PassResult r = runPass(*pass, m);
    QVERIFY(r.changed);
    QCOMPARE(g.numNodes(), size_t(1));  // only the last Reshape, reading x directly
    QCOMPARE(g.outputs()[0]->producer()->input(0), x);
    QCOMPARE(g.outputs()[0]->name(), std::string("y"));
  }

  void deadCodeAndCapturedValues() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2}));
    Value* cond = g.addInput("cond", ValueType::tensor(DType::Bool, Shape()));
    g.addInitializer("unused", Tensor::fromVector<float>(DType::Float, {1}, {1.0f}));
    Node* dead = g.addNode("Neg", {x}, 1, "dead");
    g.addNode("Abs", {dead->output(0)}, 1, "dead2");
    Node* captured = g.addNode("Exp", {x}, 1, "captured");  // used only inside the If
    Node* iff = g.addNode("If", {cond}, {"y"}, "if");
    auto br = g.makeSubgraph("then");
    br->addOutput(br->addNode("Neg", {captured->output(0)}, 1, "n")->output(0));
    auto el = g.makeSubgraph("else");
    el->addOutput(el->addNode("Abs", {x}, 1, "a")->output(0));
    iff->setAttr("then_branch", Attribute(br));
    iff->setAttr("else_branch", Attribute(el));
    g.addOutput(iff->output(0));
    auto pass = makeDeadCodeEliminationPass();
    PassResult r = runPass(*pass, m);
    QCOMPARE(r.counters["nodes_removed"], int64_t(2));
    QCOMPARE(r.counters["initializers_removed"], int64_t(1));
    QVERIFY(g.findNode(captured->id()));
    Options off;
    off.set("oo_dead_code_elimination=false");
    g.addNode("Neg", {x}, 1, "dead3");
    QVERIFY(!runPass(*pass, m, off).changed);
  }

  void constantIfIsInlined() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2}));
    Value* cond = g.addInitializer("cond", Tensor::fromVector<uint8_t>(DType::Bool, {}, {1}));
    Node* iff = g.addNode("If", {cond}, {"y"}, "if");
    auto br = g.makeSubgraph("then");
    Node* neg = br->addNode("Neg", {x}, {"neg"}, "neg");
    br->addOutput(br->addNode("Exp", {neg->output(0)}, {"exp"}, "exp")->output(0));
    auto el = g.makeSubgraph("else");
    el->addOutput(el->addNode("Abs", {x}, 1, "abs")->output(0));
    iff->setAttr("then_branch", Attribute(br));
    iff->setAttr("else_branch", Attribute(el));
    g.addOutput(iff->output(0));
    inferShapes(m);
    auto pass = makeSwitchDeadBranchEliminationPass();
    PassResult r = runPass(*pass, m);
    QCOMPARE(r.counters["ifs_removed"], int64_t(1));
    QCOMPARE(count(m, "If"), 0);
    QCOMPARE(count(m, "Neg"), 1);
    QCOMPARE(count(m, "Abs"), 0);
    QCOMPARE(g.outputs()[0]->name(), std::string("y"));
    QCOMPARE(QString::fromStdString(g.outputs()[0]->type().toString()), QString::fromUtf8("fp32[2]"));
  }

  void validityCheckTagsEngines() {
    Model m;
    m.opsets[""] = 17;
    m.opsets["com.microsoft"] = 1;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({1, 3, 8, 8}));
    Node* conv = g.addNode("Conv", {x, g.addInitializer("w", Tensor::fromVector(DType::Float, {4, 3, 1, 1},
                                                                               std::vector<float>(12, 0.5f)))},
                           1, "conv");
    Node* shape = g.addNode("Shape", {conv->output(0)}, 1, "shape");
    Node* nz = g.addNode("NonZero", {conv->output(0)}, 1, "nz");
    Node* contrib = g.addNode("FastGelu", {conv->output(0)}, 1, "fg", "com.microsoft");
    for (Node* n : {shape, nz, contrib}) g.addOutput(n->output(0));
    std::vector<std::string> warnings;
    Options o;
    PassContext ctx{m, o, warnings};
    auto pass = makeValidityCheckPass();
    PassResult r = pass->run(ctx);
    QCOMPARE(conv->annotation("engine"), std::string("aicore"));
    QCOMPARE(conv->annotation("unit"), std::string("cube"));
    QCOMPARE(shape->annotation("engine"), std::string("host"));
    QCOMPARE(nz->annotation("engine"), std::string("aicpu"));
    QCOMPARE(contrib->annotation("engine"), std::string("unsupported"));
    QCOMPARE(r.counters["unsupported"], int64_t(1));
    QCOMPARE(warnings.size(), size_t(1));
    QVERIFY(QString::fromStdString(warnings[0]).contains("com.microsoft:FastGelu"));
    QVERIFY(!pass->run(ctx).changed);  // a second run finds nothing new
  }

  // An ONNX Runtime training export (BLOOM's ATen ops): the exporter typed the outputs of Reshape, Transpose and
  // Identity (value_info) but nothing can type their input, an ATen op's. Skipping the typed op would leave an
  // untyped input beside typed ones; the passes keep the graph valid and simplify where types are known.
  void simplificationsKeepKnownElementTypes() {
    Model m;
    m.opsets[""] = 17;
    m.opsets["org.pytorch.aten"] = 1;
    Graph& g = *m.graph;
    const ValueType f16 = ValueType::tensor(DType::Float16, Shape::ofStatic({2, 3, 4}));
    Value* x = g.addInput("x", f16);
    Node* aten = g.addNode("ATen", {x}, {"a"}, "gelu", "org.pytorch.aten");
    auto init = [&](const std::string& name, std::vector<int64_t> v) {
      return g.addInitializer(name, Tensor::fromVector<int64_t>(DType::Int64, {int64_t(v.size())}, v));
    };
    Node* r1 = g.addNode("Reshape", {aten->output(0), init("s1", {6, 4})}, {"r1"}, "reshape");
    r1->output(0)->setType(ValueType::tensor(DType::Float16, Shape::ofStatic({6, 4})));
    Node* r2 = g.addNode("Reshape", {r1->output(0), init("s2", {2, 3, 4})}, {"r2"}, "reshape_1");
    r2->output(0)->setType(f16);
    Node* t1 = g.addNode("Transpose", {aten->output(0)}, {"t1"}, "t1");
    t1->setAttr("perm", Attribute(std::vector<int64_t>{1, 0, 2}));
    t1->output(0)->setType(ValueType::tensor(DType::Float16, Shape::ofStatic({3, 2, 4})));
    Node* t2 = g.addNode("Transpose", {t1->output(0)}, {"t2"}, "t2");
    t2->setAttr("perm", Attribute(std::vector<int64_t>{1, 0, 2}));
    t2->output(0)->setType(f16);
    Node* id = g.addNode("Identity", {aten->output(0)}, {"i"}, "identity");
    id->output(0)->setType(f16);
    Node* add = g.addNode("Add", {r2->output(0), t2->output(0)}, {"s"}, "add");
    add->output(0)->setType(f16);
    Node* add2 = g.addNode("Add", {add->output(0), id->output(0)}, {"y"}, "add_2");
    g.addOutput(add2->output(0));
    // The verifier already doubts the export's typed Reshape (its input cannot be shown to be fp16); the passes
    // must add no doubt of their own, which is what the PassManager checks after each pass.
    PassManager pm;
    pm.add(Stage::Prepare, makeAlgebraicSimplificationPass());
    pm.add(Stage::Prepare, makeNoOpRemovalPass());
    Options verifying;
    verifying.set("verify_each_pass=true");
    const RunSummary s = pm.run(m, verifying);
    QVERIFY2(s.status == RunStatus::Ok, s.error.c_str());
    QCOMPARE(count(m, "Reshape"), 2);
    QCOMPARE(count(m, "Transpose"), 2);
    QCOMPARE(count(m, "Identity"), 1);
    // With the ATen output typed, the same graph simplifies: the Reshape chain and the Transpose pair go.
    aten->output(0)->setType(f16);
    PassResult r = runPass(*makeAlgebraicSimplificationPass(), m);
    QCOMPARE(r.counters["reshape_chains"], int64_t(1));
    QCOMPARE(r.counters["transpose_pairs_removed"], int64_t(1));
    const auto after = verifyModel(m);
    QVERIFY2(after.empty(), after.empty() ? "" : after.front().c_str());
  }

  // Invalid ONNX control flow fails ValidityCheck as bad input, naming the node and what is wrong; well-formed If
  // and Loop pass.
  void validityCheckRefusesInvalidControlFlow() {
    auto build = [](bool withElse, int loopBodyInputs) {
      auto m = std::make_unique<Model>();
      m->opsets[""] = 17;
      Graph& g = *m->graph;
      Value* x = g.addInput("x", f32({2}));
      Value* c = g.addInput("c", ValueType::tensor(DType::Bool, Shape::ofStatic({})));
      Node* iff = g.addNode("If", {c}, {"y"}, "branch");
      auto then = g.makeSubgraph("then");
      then->addOutput(then->addNode("Neg", {x}, 1, "neg")->output(0));
      iff->setAttr("then_branch", Attribute(then));
      if (withElse) {
        auto el = g.makeSubgraph("else");
        el->addOutput(el->addNode("Abs", {x}, 1, "abs")->output(0));
        iff->setAttr("else_branch", Attribute(el));
      }
      Value* trip = g.addInitializer("trip", Tensor::fromVector<int64_t>(DType::Int64, {}, {3}));
      Node* loop = g.addNode("Loop", {trip, nullptr, iff->output(0)}, {"z"}, "steps");
      auto body = g.makeSubgraph("body");
      std::vector<Value*> in;
      for (int i = 0; i < loopBodyInputs; ++i)
        in.push_back(body->addInput("b" + std::to_string(i), i == 1 ? ValueType::tensor(DType::Bool, Shape::ofStatic({}))
                                                                    : f32({2})));
      body->addOutput(in[1]);
      body->addOutput(body->addNode("Neg", {in.back()}, 1, "step")->output(0));
      loop->setAttr("body", Attribute(body));
      g.addOutput(loop->output(0));
      return m;
    };
    auto check = [](Model& m) {
      PassManager pm;
      pm.add(Stage::Prepare, makeValidityCheckPass());
      return pm.run(m, Options());
    };
    auto valid = build(true, 3);
    QVERIFY2(check(*valid).status == RunStatus::Ok, check(*valid).error.c_str());
    auto noElse = build(false, 3);
    RunSummary s = check(*noElse);
    QCOMPARE(s.status, RunStatus::Failed);
    QVERIFY(s.invalidModel);
    QVERIFY2(QString::fromStdString(s.error).contains("node 'branch' (If) has no else_branch"), s.error.c_str());
    auto badLoop = build(true, 2);
    s = check(*badLoop);
    QCOMPARE(s.status, RunStatus::Failed);
    QVERIFY(s.invalidModel);
    QVERIFY2(QString::fromStdString(s.error).contains("node 'steps' (Loop) body takes 2 inputs but the node carries 1"),
             s.error.c_str());
  }
};

QTEST_GUILESS_MAIN(PipelineTest)
#include "test_pipeline.moc"
