// The reference executor: control flow (If with captures, Loop with carried values and scan outputs, Scan with
// axes and directions), model-local function bodies, freeing of dead tensors, input checks and the errors for
// unsupported ops, runaway loops and bad inputs; and the conformance runner on hand-made test folders.
#include <onnx/onnx_pb.h>

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "emulator/conformance.h"
#include "emulator/reference_executor.h"
#include "emulator/tensor_compare.h"
#include "emulator/function_expander.h"
#include "emulator/input_influence.h"
#include "io/onnx/onnx_writer.h"
#include "ir/opdefs/proto_convert.h"
#include "ir/model.h"

using namespace kiln;

namespace {

Tensor f32(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::fromVector(DType::Float, std::move(dims), v); }
Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromVector(DType::Int64, std::move(dims), v);
}
Tensor boolean(bool b) { return Tensor::fromBytes(DType::Bool, {}, std::string(1, b ? '\1' : '\0')); }
std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.data(), t.byteSize());
  return v;
}
ValueType f32Type(std::vector<Dim> dims) { return ValueType::tensor(DType::Float, Shape(std::move(dims))); }

// x -> If(cond){ x*2 }{ -x }: both branches read x from the enclosing graph.
struct IfModel {
  Model m;
  IfModel() {
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32Type({Dim::symbolic("n")}));
    Value* cond = g.addInput("cond", ValueType::tensor(DType::Bool, Shape()));
    Node* iff = g.addNode("If", {cond}, {"y"}, "if");
    auto thenG = g.makeSubgraph("then");
    Value* two = thenG->addInitializer("two", f32({}, {2}));
    thenG->addOutput(thenG->addNode("Mul", {x, two}, {"twice"})->output(0));
    auto elseG = g.makeSubgraph("else");
    elseG->addOutput(elseG->addNode("Neg", {x}, {"neg"})->output(0));
    iff->setAttr("then_branch", Attribute(thenG));
    iff->setAttr("else_branch", Attribute(elseG));
    g.addOutput(iff->output(0));
  }
};

// Loop(M, cond, acc): body adds x (captured) to acc and emits acc as a scan output; stops when iter reaches `stop`.
struct LoopModel {
  Model m;
  explicit LoopModel(int64_t stop) {
    Graph& g = *m.graph;
    Value* trips = g.addInput("M", ValueType::tensor(DType::Int64, Shape()));
    Value* x = g.addInput("x", f32Type({Dim::fixed(2)}));
    Value* acc0 = g.addInitializer("acc0", f32({2}, {0, 0}));
    Value* cond0 = g.addInitializer("cond0", boolean(true));
    Node* loop = g.addNode("Loop", {trips, cond0, acc0}, {"acc", "history"}, "loop");
    auto body = g.makeSubgraph("body");
    Value* iter = body->addInput("iter", ValueType::tensor(DType::Int64, Shape()));
    body->addInput("cond_in", ValueType::tensor(DType::Bool, Shape()));
    Value* acc = body->addInput("acc_in", f32Type({Dim::fixed(2)}));
    Value* limit = body->addInitializer("limit", i64({}, {stop - 1}));
    Node* keepGoing = body->addNode("Less", {iter, limit}, {"cond_out"});
    Node* sum = body->addNode("Add", {acc, x}, {"acc_out"});
    Node* copy = body->addNode("Identity", {sum->output(0)}, {"scan_out"});
    copy->output(0)->setType(f32Type({Dim::fixed(2)}));  // as inference would record it
    body->setOutputs({keepGoing->output(0), sum->output(0), copy->output(0)});
    loop->setAttr("body", Attribute(body));
    g.setOutputs({loop->output(0), loop->output(1)});
  }
};

// Scan over the rows of X (axis 1 of a 2x3 input, reversed): running sum state, emits the state per step.
struct ScanModel {
  Model m;
  ScanModel() {
    Graph& g = *m.graph;
    Value* init = g.addInput("init", f32Type({Dim::fixed(2)}));
    Value* xs = g.addInput("xs", f32Type({Dim::fixed(2), Dim::fixed(3)}));
    Node* scan = g.addNode("Scan", {init, xs}, {"final", "steps"}, "scan");
    auto body = g.makeSubgraph("body");
    Value* s = body->addInput("s", f32Type({Dim::fixed(2)}));
    Value* col = body->addInput("col", f32Type({Dim::fixed(2)}));
    Node* add = body->addNode("Add", {s, col}, {"s_out"});
    Node* echo = body->addNode("Identity", {add->output(0)}, {"echo"});
    body->setOutputs({add->output(0), echo->output(0)});
    scan->setAttr("body", Attribute(body));
    scan->setAttr("num_scan_inputs", Attribute(int64_t{1}));
    scan->setAttr("scan_input_axes", Attribute(std::vector<int64_t>{1}));
    scan->setAttr("scan_input_directions", Attribute(std::vector<int64_t>{1}));
    g.setOutputs({scan->output(0), scan->output(1)});
  }
};

void writeTensor(const std::string& path, const Tensor& t) {
  onnx::TensorProto tp;
  onnxio::toTensorProto(t, "", &tp);
  std::ofstream(path, std::ios::binary) << tp.SerializeAsString();
}

}  // namespace

class ReferenceExecutorTest : public QObject {
  Q_OBJECT
 private slots:
  void ifPicksBranchAndReadsCaptures() {
    IfModel model;
    ReferenceExecutor ex;
    auto out = ex.run(*model.m.graph, {f32({3}, {1, -2, 3}), boolean(true)});
    QCOMPARE(floats(out[0]), (std::vector<float>{2, -4, 6}));
    out = ex.run(*model.m.graph, {f32({3}, {1, -2, 3}), boolean(false)});
    QCOMPARE(floats(out[0]), (std::vector<float>{-1, 2, -3}));
  }

  // A Gather in a branch fails on made-up ids: NodeFailed runs from the Gather out to the If, and the hint names
  // the condition's input (deciding) and the integer ids (feeding), with their values, but not the float table.
  void failureInsideABranchNamesTheInputsBehindIt() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* table = g.addInput("table", f32Type({Dim::fixed(2), Dim::fixed(3)}));
    Value* ids = g.addInput("ids", ValueType::tensor(DType::Int64, Shape::ofStatic({2})));
    Value* flag = g.addInput("flag", ValueType::tensor(DType::Bool, Shape()));
    Node* iff = g.addNode("If", {flag}, {"y"}, "choose");
    auto lookup = g.makeSubgraph("lookup");
    Node* gather = lookup->addNode("Gather", {table, ids}, {"rows"}, "embed");
    lookup->addOutput(gather->output(0));
    auto zeros = g.makeSubgraph("zeros");
    zeros->addOutput(zeros->addNode("Identity", {table}, {"same"})->output(0));
    iff->setAttr("then_branch", Attribute(lookup));
    iff->setAttr("else_branch", Attribute(zeros));
    g.addOutput(iff->output(0));
    const std::vector<Tensor> in{f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {0, 7}), boolean(true)};
    try {
      ReferenceExecutor().run(g, in);
      QFAIL("an id past the table must fail");
    } catch (const NodeFailed& e) {
      QCOMPARE(e.nodes().size(), size_t(2));
      QCOMPARE(e.nodes()[0], static_cast<const Node*>(gather));
      QCOMPARE(e.nodes()[1], static_cast<const Node*>(iff));
      const InputInfluence inf = inputsBehind(m, e.nodes());
      QCOMPARE(inf.failed, static_cast<const Node*>(gather));
      QCOMPARE(inf.deciding, (std::vector<const Value*>{flag}));
      QCOMPARE(inf.feeding.size(), size_t(2));  // table and ids, in no promised order
      const QString hint = QString::fromStdString(madeUpInputsHint(m, e.nodes(), in, {true, true, true}));
      QVERIFY2(hint.contains("'flag' (bool scalar = 1) decides whether it runs") &&
                   hint.contains("'ids' (int64 = [0, 7]) feeds it") && !hint.contains("'table'") &&
                   hint.contains("--value flag=V"),
               qPrintable(hint));
      // Given values are not blamed as made up.
      QVERIFY(madeUpInputsHint(m, e.nodes(), in, {true, false, false}).empty());
    }
    // The other branch does not read the ids: nothing fails.
    QCOMPARE(ReferenceExecutor().run(g, {in[0], in[1], boolean(false)}).size(), size_t(1));
  }

  // Nodes no output depends on do not run (a failing one cannot fail the run); runNode runs one control-flow node
  // with its captures given from outside, as the compiled mode does.
  void onlyWhatTheOutputsNeedRuns() {
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32Type({Dim::fixed(2)}));
    Value* bad = g.addInitializer("bad_shape", i64({1}, {5}));
    g.addNode("Reshape", {x, bad}, {"leftover"}, "leftover");  // would fail: 2 elements into 5
    g.addOutput(g.addNode("Neg", {x}, {"y"})->output(0));
    QCOMPARE(floats(ReferenceExecutor().run(g, {f32({2}, {1, 2})})[0]), (std::vector<float>{-1, -2}));
    IfModel model;
    const Graph& ig = *model.m.graph;
    const Node* iff = *ig.nodes().begin();
    const Tensor x3 = f32({3}, {1, -2, 3}), yes = boolean(true);
    auto out = ReferenceExecutor().runNode(*iff, {&yes}, [&](const Value* v) {
      return v == ig.inputs()[0] ? &x3 : nullptr;
    });
    QCOMPARE(floats(out[0]), (std::vector<float>{2, -4, 6}));
  }

  void loopCarriesAndStacks() {
    LoopModel model(3);  // the body's condition stops it after 3 iterations although M allows 10
    ReferenceExecutor ex;
    auto out = ex.run(*model.m.graph, {i64({}, {10}), f32({2}, {1, 10})});
    QCOMPARE(floats(out[0]), (std::vector<float>{3, 30}));
    QCOMPARE(out[1].dims(), (std::vector<int64_t>{3, 2}));
    QCOMPARE(floats(out[1]), (std::vector<float>{1, 10, 2, 20, 3, 30}));
    out = ex.run(*model.m.graph, {i64({}, {2}), f32({2}, {1, 10})});  // now M stops it first
    QCOMPARE(floats(out[0]), (std::vector<float>{2, 20}));
    out = ex.run(*model.m.graph, {i64({}, {0}), f32({2}, {1, 10})});  // zero trips: empty scan output, typed
    QCOMPARE(out[1].dims(), (std::vector<int64_t>{0, 2}));
    QCOMPARE(floats(out[0]), (std::vector<float>{0, 0}));
  }

  void runawayLoopIsStopped() {
    LoopModel model(1'000'000'000);
    ExecutionOptions options;
    options.maxLoopIterations = 50;
    ReferenceExecutor ex(options);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, ex.run(*model.m.graph, {i64({}, {INT64_MAX}), f32({2}, {1, 1})}));
  }

  void scanSlicesAlongAxisInReverse() {
    ScanModel model;
    ReferenceExecutor ex;
    // columns of xs, last first: (3,6), (2,5), (1,4)
    auto out = ex.run(*model.m.graph, {f32({2}, {0, 0}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    QCOMPARE(floats(out[0]), (std::vector<float>{6, 15}));
    QCOMPARE(out[1].dims(), (std::vector<int64_t>{3, 2}));
    QCOMPARE(floats(out[1]), (std::vector<float>{3, 6, 5, 11, 6, 15}));
  }

  void inputsAreChecked() {
    IfModel model;
    ReferenceExecutor ex;
    // wrong element type, wrong rank
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, ex.run(*model.m.graph, {i64({3}, {1, 2, 3}), boolean(true)}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, ex.run(*model.m.graph, {f32({1, 3}, {1, 2, 3}), boolean(true)}));
    // a missing input is reported by name
    try {
      ex.run(*model.m.graph, {f32({3}, {1, 2, 3})});
      QFAIL("expected an error");
    } catch (const std::runtime_error& e) {
      QVERIFY2(std::string(e.what()).find("cond") != std::string::npos, e.what());
    }
  }

  void unsupportedOpIsNamed() {
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32Type({Dim::fixed(1)}));
    g.addOutput(g.addNode("NoSuchOp", {x}, {"y"}, "n", "com.example")->output(0));
    QCOMPARE(firstUnsupportedOp(g), std::string("com.example:NoSuchOp"));
    try {
      ReferenceExecutor().run(g, {f32({1}, {1})});
      QFAIL("expected NotEmulatable");
    } catch (const NotEmulatable& e) {
      QCOMPARE(std::string(e.what()), std::string("not emulatable: op com.example:NoSuchOp"));
    }
  }

  void localFunctionRunsThroughItsBody() {
    // com.example:Scale(x) = x * alpha, alpha an attribute reference bound at the call.
    Model m;
    m.opsets[""] = 17;
    m.opsets["com.example"] = 1;
    onnx::FunctionProto f;
    f.set_name("Scale");
    f.set_domain("com.example");
    f.add_input("X");
    f.add_output("Y");
    f.add_attribute("alpha");
    auto* op = f.add_opset_import();
    op->set_domain("");
    op->set_version(17);
    auto* c = f.add_node();
    c->set_op_type("Constant");
    c->add_output("A");
    auto* ref = c->add_attribute();
    ref->set_name("value_float");
    ref->set_type(onnx::AttributeProto::FLOAT);
    ref->set_ref_attr_name("alpha");
    auto* mul = f.add_node();
    mul->set_op_type("Mul");
    mul->add_input("X");
    mul->add_input("A");
    mul->add_output("Y");
    m.functionProtos.push_back(f.SerializeAsString());
    m.localFunctionNames.push_back("com.example:Scale");
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32Type({Dim::fixed(2)}));
    Node* n = g.addNode("Scale", {x}, {"y"}, "scale", "com.example");
    n->setAttr("alpha", Attribute(2.5f));
    g.addOutput(n->output(0));
    ExecutionOptions options;
    options.functions = makeFunctionExpander(m);
    QVERIFY(firstUnsupportedOp(g, options.functions).empty());
    QVERIFY(options.functions(*n, {}) != nullptr);
    auto out = ReferenceExecutor(options).run(g, {f32({2}, {1, -2})});
    QCOMPARE(floats(out[0]), (std::vector<float>{2.5f, -5.0f}));
  }

  void comparisonMeasuresError() {
    const TensorDifference same = compareTensors(f32({2}, {1, 2}), f32({2}, {1, 2}));
    QVERIFY(same.within());
    QCOMPARE(same.cosine, 1.0);
    const TensorDifference off = compareTensors(f32({2}, {1, 2.5f}), f32({2}, {1, 2}));
    QVERIFY(!off.within());
    QCOMPARE(off.maxAbs, 0.5);
    QCOMPARE(off.maxRel, 0.25);
    QVERIFY(off.cosine < 1.0 && off.cosine > 0.99);
    QVERIFY(!compareTensors(f32({1, 2}, {1, 2}), f32({2}, {1, 2})).comparable);
    QVERIFY(!compareTensors(i64({1}, {INT64_MAX}), i64({1}, {INT64_MAX - 1})).within());  // exact for int64
  }

  void conformanceFolder() {
    QTemporaryDir tmp;
    const std::string root = tmp.path().toStdString() + "/suite";
    const std::string good = root + "/test_if_good", bad = root + "/test_if_bad", empty = root + "/test_no_data";
    IfModel model;
    model.m.opsets[""] = 17;
    for (const std::string& d : {good, bad, empty}) {
      QVERIFY(QDir().mkpath(QString::fromStdString(d)));
      writeOnnxFile(model.m, d + "/model.onnx");
    }
    for (const std::string& d : {good, bad}) {
      QVERIFY(QDir().mkpath(QString::fromStdString(d + "/test_data_set_0")));
      writeTensor(d + "/test_data_set_0/input_0.pb", f32({2}, {1, 2}));
      writeTensor(d + "/test_data_set_0/input_1.pb", boolean(true));
    }
    writeTensor(good + "/test_data_set_0/output_0.pb", f32({2}, {2, 4}));
    writeTensor(bad + "/test_data_set_0/output_0.pb", f32({2}, {2, 5}));
    const auto found = findConformanceTests(root);
    QCOMPARE(found.size(), size_t{3});
    const ConformanceResult r0 = runConformanceTest(bad);
    QCOMPARE(r0.status, ConformanceStatus::Failed);
    QVERIFY2(r0.reason.find("element 1") != std::string::npos, r0.reason.c_str());
    const ConformanceResult r1 = runConformanceTest(good);
    QCOMPARE(r1.status, ConformanceStatus::Passed);
    QCOMPARE(r1.dataSets, 1);
    const ConformanceResult r2 = runConformanceTest(empty);
    QCOMPARE(r2.status, ConformanceStatus::Failed);
    QVERIFY2(r2.reason.find("test_data_set") != std::string::npos, r2.reason.c_str());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, findConformanceTests(root + "/missing"));
  }
};

QTEST_GUILESS_MAIN(ReferenceExecutorTest)
#include "test_reference_executor.moc"
