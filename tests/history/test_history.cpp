// Tests of the SQLite history: the recorder driven through PassObserver calls over hand-made "passes", the reader's
// graphAt / diff checked against the live graph at every pass, refusals that must leave files untouched, crash
// safety (a SIGKILLed writer), WAL concurrency, and a measurement of size and cost on a 2,000-node graph.
#include <QtTest>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <tuple>

#include "history/history_db.h"
#include "history/history_reader.h"
#include "history/history_recorder.h"
#include "history/history_rows.h"
#include "history/history_writer.h"
#include "history/pass_rows.h"
#include "history/history_report.h"
#include "util/load_error.h"
#include "ir/model.h"
#include "options/options.h"
#include "samples/sample_models.h"
#include "support/older_history.h"


using namespace kiln;

namespace {

ValueType f32(std::vector<int64_t> dims) { return ValueType::tensor(DType::Float, Shape::ofStatic(dims)); }

std::string tmpFile(const std::string& name) {
  std::filesystem::create_directories(KILN_TEST_TMP);
  const std::string p = std::string(KILN_TEST_TMP) + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(p + suffix);
  return p;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void sqliteExec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  QVERIFY2(rc == SQLITE_OK, err ? err : "");
  sqlite3_close(db);
}

// "type name on table" of every table and index in a database file, sorted.
std::set<std::string> schemaObjects(const std::string& path) {
  sqlite3* db = nullptr;
  std::set<std::string> out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT type || ' ' || name || ' on ' || tbl_name FROM sqlite_schema", -1, &st, nullptr);
    while (st && sqlite3_step(st) == SQLITE_ROW) out.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

// What the history must reproduce: the rows of the live model, built by the same serialisation the recorder uses.
struct Expected {
  std::vector<NodeRow> nodes;
  std::vector<ValueRow> values;
  std::vector<EdgeRow> edges;
};

Expected expectedRows(const Model& m) {
  Expected e;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* n : g.nodes()) {
      e.nodes.push_back(nodeRowOf(*n));
      for (size_t i = 0; i < n->numInputs(); ++i)
        if (const Value* v = n->input(i)) e.edges.push_back(EdgeRow{v->id(), n->id(), static_cast<int64_t>(i), {}});
    }
    for (const Value* v : g.values()) e.values.push_back(valueRowOf(*v));
  });
  std::sort(e.nodes.begin(), e.nodes.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::sort(e.values.begin(), e.values.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::sort(e.edges.begin(), e.edges.end(), [](const auto& a, const auto& b) {
    return std::tie(a.consumerNode, a.consumerIndex) < std::tie(b.consumerNode, b.consumerIndex);
  });
  return e;
}

template <typename Row>
QString compareRows(const char* what, const std::vector<Row>& got, const std::vector<Row>& want) {
  if (got.size() != want.size())
    return QString("%1: %2 rows, expected %3").arg(what).arg(got.size()).arg(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!got[i].sameContent(want[i])) return QString("%1: row %2 differs").arg(what).arg(i);
  return {};
}

QString compareSnapshot(const GraphSnapshot& s, const Expected& e) {
  for (QString err : {compareRows("nodes", s.nodes, e.nodes), compareRows("values", s.values, e.values),
                      compareRows("edges", s.edges, e.edges)})
    if (!err.isEmpty()) return QString("pass %1: %2").arg(s.pass).arg(err);
  for (size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].id != e.nodes[i].id) return "node ids differ";
  return {};
}

// The diff an observer would compute by comparing two whole graphs; the reader must agree with it.
QString checkDiff(const GraphDiff& d, const Expected& a, const Expected& b) {
  using Ids = std::set<int64_t>;
  auto idsOf = [](const auto& rows) {
    Ids s;
    for (const auto& r : rows) s.insert(r.id);
    return s;
  };
  auto minus = [](const Ids& x, const Ids& y) {
    Ids out;
    std::set_difference(x.begin(), x.end(), y.begin(), y.end(), std::inserter(out, out.end()));
    return out;
  };
  auto find = [](const auto& rows, int64_t id) -> decltype(&rows.front()) {
    for (const auto& r : rows)
      if (r.id == id) return &r;
    return nullptr;
  };
  using Edge = std::tuple<int64_t, int64_t, int64_t>;
  auto edgeSet = [](const std::vector<EdgeRow>& rows) {
    std::set<Edge> s;
    for (const auto& e : rows) s.insert({e.consumerNode, e.consumerIndex, e.valueId});
    return s;
  };
  auto edgeMinus = [](const std::set<Edge>& x, const std::set<Edge>& y) {
    std::set<Edge> out;
    std::set_difference(x.begin(), x.end(), y.begin(), y.end(), std::inserter(out, out.end()));
    return out;
  };
  // Inputs of a node and the values it produces, per side.
  auto inputsOf = [](const Expected& e, int64_t id) {
    std::set<Edge> s;
    for (const auto& x : e.edges)
      if (x.consumerNode == id) s.insert({x.consumerNode, x.consumerIndex, x.valueId});
    return s;
  };
  auto outputsOf = [](const Expected& e, int64_t id) {
    std::set<std::pair<int64_t, int64_t>> s;
    for (const auto& v : e.values)
      if (v.producerNode == id) s.insert({v.id, *v.producerIndex});
    return s;
  };

  const Ids na = idsOf(a.nodes), nb = idsOf(b.nodes), va = idsOf(a.values), vb = idsOf(b.values);
  if (idsOf(d.addedNodes) != minus(nb, na)) return "added nodes differ";
  if (idsOf(d.removedNodes) != minus(na, nb)) return "removed nodes differ";
  Ids changedNodes;
  for (int64_t id : nb) {
    if (!na.count(id)) continue;
    if (!find(a.nodes, id)->sameContent(*find(b.nodes, id)) || inputsOf(a, id) != inputsOf(b, id) ||
        outputsOf(a, id) != outputsOf(b, id))
      changedNodes.insert(id);
  }
  Ids gotChanged;
  for (const auto& c : d.changedNodes) gotChanged.insert(c.after.id);
  if (gotChanged != changedNodes) return "changed nodes differ";
  if (idsOf(d.addedValues) != minus(vb, va)) return "added values differ";
  if (idsOf(d.removedValues) != minus(va, vb)) return "removed values differ";
  Ids changedValues, gotChangedValues;
  for (int64_t id : vb)
    if (va.count(id) && !find(a.values, id)->sameContent(*find(b.values, id))) changedValues.insert(id);
  for (const auto& c : d.changedValues) gotChangedValues.insert(c.after.id);
  if (gotChangedValues != changedValues) return "changed values differ";
  if (edgeSet(d.addedEdges) != edgeMinus(edgeSet(b.edges), edgeSet(a.edges))) return "added edges differ";
  if (edgeSet(d.removedEdges) != edgeMinus(edgeSet(a.edges), edgeSet(b.edges))) return "removed edges differ";
  return {};
}

// graphAt(k) is exactly the graph after pass k for every k; diff(k) and diff(a, b) agree with whole-graph
// comparison, forwards and backwards, also given the later graph; graphBefore rebuilds graphAt(a) from b. "" when
// all hold, else the first failure.
QString checkEveryPass(const HistoryReader& reader, int64_t run, const std::vector<Expected>& expected) {
  const int last = static_cast<int>(expected.size()) - 1;
  for (int k = 0; k <= last; ++k)
    if (QString err = compareSnapshot(reader.graphAt(run, k), expected[static_cast<size_t>(k)]); !err.isEmpty())
      return err;
  for (int k = 1; k <= last; ++k)
    if (QString err = checkDiff(reader.diff(run, k), expected[k - 1], expected[k]); !err.isEmpty())
      return QString("diff(%1): %2").arg(k).arg(err);
  for (int a = 0; a <= last; ++a)
    for (int b = 0; b <= last; ++b) {
      if (QString err = checkDiff(reader.diff(run, a, b), expected[a], expected[b]); !err.isEmpty())
        return QString("diff(%1, %2): %3").arg(a).arg(b).arg(err);
      // Given the graph at b, the diff reads only what b no longer has, and agrees.
      if (QString err = checkDiff(reader.diff(reader.graphAt(run, b), a), expected[a], expected[b]); !err.isEmpty())
        return QString("diff(graphAt(%2), %1): %3").arg(a).arg(b).arg(err);
      // The graph at a, rebuilt from the graph at b and the diff (what the pass view reads), is graphAt(a).
      const GraphSnapshot rebuilt = graphBefore(reader.graphAt(run, b), reader.diff(run, a, b));
      if (QString err = compareSnapshot(rebuilt, expected[a]); !err.isEmpty())
        return QString("graphBefore(%1 from %2): %3").arg(a).arg(b).arg(err);
    }
  return {};
}

// Feeds the recorder as a PassManager would, keeping the expected rows after every pass.
struct Driver {
  Driver(HistoryRecorder& r, Model& model) : rec(r), m(model) {}
  HistoryRecorder& rec;
  Model& m;
  int index = 0;
  std::vector<Expected> expected;

  void start() {
    Options options;
    rec.runStarted(m, options);
    expected.push_back(expectedRows(m));
  }
  PassRecord record(const std::string& name, Stage stage) {
    PassRecord r;
    r.index = ++index;
    r.stage = stage;
    r.name = name;
    r.ms = 0.25;
    r.nodesBefore = static_cast<int64_t>(m.graph->numNodesRecursive());
    return r;
  }
  void pass(const std::string& name, const std::function<void()>& mutate, Stage stage = Stage::Optimize) {
    PassRecord r = record(name, stage);
    mutate();
    r.changed = true;
    r.counters["touched"] = 1;
    r.nodesAfter = static_cast<int64_t>(m.graph->numNodesRecursive());
    rec.afterPass(r, m);
    expected.push_back(expectedRows(m));
  }
  void finish(RunStatus status = RunStatus::Ok, std::string error = {}) {
    RunSummary s;
    s.status = status;
    s.error = std::move(error);
    s.nodesBefore = static_cast<int64_t>(expected.front().nodes.size());
    s.nodesAfter = static_cast<int64_t>(m.graph->numNodesRecursive());
    s.ms = 12.5;
    rec.runFinished(s, m);
  }
};

// x -> Conv(w) -> Relu -> Mul(2) -> Add(+relu) -> If(cond){then: Identity(add) | else: Neg(add)}
struct SmallModel {
  std::unique_ptr<Model> model = std::make_unique<Model>();
  Graph* g = nullptr;
  Value *x = nullptr, *w = nullptr, *two = nullptr, *cond = nullptr;
  Node *conv = nullptr, *relu = nullptr, *mul = nullptr, *add = nullptr, *ifNode = nullptr;
  Node *thenId = nullptr, *elseNeg = nullptr;
  std::shared_ptr<Graph> thenG, elseG;

  SmallModel() {
    g = model->graph.get();
    g->setName("small");
    x = g->addInput("x", f32({1, 3, 6, 6}));
    w = g->addInitializer("w", Tensor::fromVector(DType::Float, {4, 3, 3, 3}, std::vector<float>(108, 0.5f)));
    conv = g->addNode("Conv", {x, w}, 1, "conv");
    conv->setAttr("pads", Attribute(std::vector<int64_t>{0, 0, 0, 0}));
    conv->setAttr("kernel_shape", Attribute(std::vector<int64_t>{3, 3}));
    conv->output(0)->setType(f32({1, 4, 4, 4}));
    relu = g->addNode("Relu", {conv->output(0)}, 1, "relu");
    relu->output(0)->setType(f32({1, 4, 4, 4}));
    two = g->addInitializer("two", Tensor::fromVector(DType::Float, {}, std::vector<float>{2.0f}));
    mul = g->addNode("Mul", {relu->output(0), two}, 1, "mul");
    add = g->addNode("Add", {mul->output(0), relu->output(0)}, 1, "add");
    add->output(0)->setType(f32({1, 4, 4, 4}));
    cond = g->addInput("cond", ValueType::tensor(DType::Bool, Shape()));
    ifNode = g->addNode("If", {cond}, 1, "if");
    thenG = g->makeSubgraph("then");
    thenId = thenG->addNode("Identity", {add->output(0)}, 1, "then_id");
    thenG->addOutput(thenId->output(0));
    elseG = g->makeSubgraph("else");
    elseNeg = elseG->addNode("Neg", {add->output(0)}, 1, "else_neg");
    elseG->addOutput(elseNeg->output(0));
    ifNode->setAttr("then_branch", Attribute(thenG));
    ifNode->setAttr("else_branch", Attribute(elseG));
    g->addOutput(ifNode->output(0));
  }
};

std::vector<std::string> fieldsOf(const GraphDiff& d, int64_t nodeId) {
  for (const auto& c : d.changedNodes)
    if (c.after.id == nodeId) return c.fields();
  return {"(not changed)"};
}

std::set<int64_t> ids(const std::vector<NodeRow>& rows) {
  std::set<int64_t> s;
  for (const auto& r : rows) s.insert(r.id);
  return s;
}
std::set<int64_t> ids(const std::vector<ValueRow>& rows) {
  std::set<int64_t> s;
  for (const auto& r : rows) s.insert(r.id);
  return s;
}

using Strings = std::vector<std::string>;

// Records the small model through eight passes covering each kind of change; returns the expected rows per pass.
std::vector<Expected> recordSmallRun(HistoryDb& db, SmallModel& sm, const std::string& modelPath) {
  HistoryRecorder rec(db, modelPath);
  Driver d(rec, *sm.model);
  Graph& g = *sm.g;
  d.start();
  d.pass("InferShapes", [&] {  // 1: two shapes change
    sm.conv->output(0)->setType(f32({1, 4, 6, 6}));
    sm.relu->output(0)->setType(f32({1, 4, 6, 6}));
  }, Stage::Prepare);
  d.pass("PadConv", [&] { sm.conv->setAttr("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1})); });  // 2
  d.pass("Rewire", [&] { g.setNodeInput(sm.add, 1, sm.conv->output(0)); });                          // 3
  d.pass("FuseMul", [&] {  // 4: Mul(relu, 2) becomes kiln:Scale(relu)
    Node* scale = g.addNode("Scale", {sm.relu->output(0)}, 1, "scale", "kiln", sm.mul);
    scale->setAttr("scale", Attribute(2.0f));
    g.replaceAllUsesWith(sm.mul->output(0), scale->output(0));
    g.eraseNode(sm.mul);
    g.eraseValue(sm.two);
    sm.mul = scale;
  });
  d.pass("Nothing", [] {});  // 5
  d.pass("AssignEngine", [&] {  // 6
    sm.conv->setAnnotation("engine", "aicore");
    sm.relu->setName("relu_1");
  });
  d.pass("EditBranches", [&] {  // 7: inside the subgraphs
    sm.thenId->setOpType("Copy");
    Node* abs = sm.elseG->addNode("Abs", {sm.elseNeg->output(0)}, 1, "else_abs");
    sm.elseG->setOutputs({abs->output(0)});
  });
  d.pass("CastFp16", [&] {  // 8: dtype and format changes
    sm.add->output(0)->setType(ValueType::tensor(DType::Float16, Shape::ofStatic({1, 4, 4, 4})));
    sm.conv->output(0)->setType(ValueType::tensor(DType::Float, Shape::ofStatic({1, 1, 6, 6, 16}), Format::NC1HWC0));
  });
  d.finish();
  if (!rec.error().empty()) qWarning("recorder: %s", rec.error().c_str());
  return d.expected;
}

}  // namespace

class HistoryTest : public QObject {
  Q_OBJECT
 private slots:
  void recordsEveryPassExactly() {
    const std::string path = tmpFile("small.kiln");
    SmallModel sm;
    std::vector<Expected> expected;
    int64_t run = 0;
    {
      HistoryDb db(path);
      HistoryRecorder probe(db, "unused");  // never started: its destructor must not touch anything
      expected = recordSmallRun(db, sm, "small.onnx");
      run = HistoryReader(db).listRuns().back().id;
    }
    HistoryDb db(path, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    const RunInfo info = reader.run(run);
    QCOMPARE(info.status, std::string("ok"));
    QCOMPARE(info.passCount, 9);
    QCOMPARE(info.lastPass, 8);
    QCOMPARE(info.modelName, std::string("small.onnx"));
    QCOMPARE(info.kilnVersion, std::string("0.1.0"));
    QVERIFY(info.totalMs && *info.totalMs == 12.5);

    const QString everyPass = checkEveryPass(reader, run, expected);
    QVERIFY2(everyPass.isEmpty(), qPrintable(everyPass));

    // Pass 0: everything is new.
    GraphDiff d0 = reader.diff(run, 0);
    QCOMPARE(d0.fromPass, -1);
    QCOMPARE(d0.addedNodes.size(), expected[0].nodes.size());
    QVERIFY(d0.removedNodes.empty() && d0.changedNodes.empty());

    // 1: two values changed shape, nothing else.
    GraphDiff d = reader.diff(run, 1);
    QCOMPARE(d.changedValues.size(), size_t(2));
    for (const auto& c : d.changedValues) {
      QCOMPARE(c.fields(), (Strings{"shape", "bytes"}));
      QCOMPARE(*c.before.shape, std::string("1×4×4×4"));
      QCOMPARE(*c.after.shape, std::string("1×4×6×6"));
      QVERIFY(c.typeChanged());
    }
    QVERIFY(d.changedNodes.empty() && d.addedEdges.empty() && d.addedNodes.empty());

    // 2: an attribute.
    d = reader.diff(run, 2);
    QCOMPARE(d.changedNodes.size(), size_t(1));
    QCOMPARE(fieldsOf(d, sm.conv->id()), (Strings{"attr:pads"}));
    const std::string text = formatDiff(d);
    QVERIFY2(text.find("attr pads: [0,0,0,0] -> [1,1,1,1]") != std::string::npos, text.c_str());

    // 3: a rewired input is one edge removed and one added; the node's row is not re-versioned.
    d = reader.diff(run, 3);
    QCOMPARE(d.removedEdges.size(), size_t(1));
    QCOMPARE(d.addedEdges.size(), size_t(1));
    QCOMPARE(d.removedEdges[0].valueId, sm.relu->output(0)->id());
    QCOMPARE(d.addedEdges[0].valueId, sm.conv->output(0)->id());
    QCOMPARE(d.addedEdges[0].consumerNode, sm.add->id());
    QCOMPARE(d.addedEdges[0].consumerIndex, int64_t(1));
    QCOMPARE(fieldsOf(d, sm.add->id()), (Strings{"inputs"}));
    QCOMPARE(d.changedNodes[0].before.span.firstPass, 0);

    // 4: a fusion: Mul and its constant go, Scale comes; Add's input 0 is rewired.
    d = reader.diff(run, 4);
    QCOMPARE(ids(d.addedNodes), std::set<int64_t>{sm.mul->id()});
    QCOMPARE(d.addedNodes[0].domain, std::string("kiln"));
    QCOMPARE(d.addedNodes[0].attrsJson, std::string(R"({"scale":2})"));
    QCOMPARE(d.removedNodes.size(), size_t(1));
    QCOMPARE(d.removedNodes[0].opType, std::string("Mul"));
    QCOMPARE(d.removedValues.size(), size_t(2));  // mul's output and the constant 2
    QCOMPARE(ids(d.addedValues), std::set<int64_t>{sm.mul->output(0)->id()});
    QCOMPARE(d.removedEdges.size(), size_t(3));  // relu->mul, two->mul, mul->add
    QCOMPARE(d.addedEdges.size(), size_t(2));    // relu->scale, scale->add
    QCOMPARE(fieldsOf(d, sm.add->id()), (Strings{"inputs"}));

    // 5: nothing.
    QVERIFY(reader.diff(run, 5).empty());
    QVERIFY(formatDiff(reader.diff(run, 5)).find("no change") != std::string::npos);

    // 6: an annotation and a rename.
    d = reader.diff(run, 6);
    QCOMPARE(fieldsOf(d, sm.conv->id()), (Strings{"annotation:engine"}));
    QCOMPARE(fieldsOf(d, sm.relu->id()), (Strings{"name"}));

    // 7: subgraph nodes carry their owner and attribute.
    d = reader.diff(run, 7);
    QCOMPARE(fieldsOf(d, sm.thenId->id()), (Strings{"op_type"}));
    QCOMPARE(d.addedNodes.size(), size_t(1));
    QCOMPARE(d.addedNodes[0].graphOwner, sm.ifNode->id());
    QCOMPARE(d.addedNodes[0].graphAttr, std::string("else_branch"));
    QCOMPARE(d.changedValues.size(), size_t(1));  // Neg's output is no longer the branch output
    QCOMPARE(d.changedValues[0].fields(), (Strings{"is_output"}));
    const GraphSnapshot s7 = reader.graphAt(run, 7);
    QCOMPARE(s7.node(sm.thenId->id())->graphAttr, std::string("then_branch"));
    QCOMPARE(s7.node(sm.thenId->id())->graphOwner, sm.ifNode->id());
    QVERIFY(s7.node(sm.conv->id())->graphOwner == 0);

    // 8: dtype and format.
    d = reader.diff(run, 8);
    QCOMPARE(d.changedValues.size(), size_t(2));
    for (const auto& c : d.changedValues) {
      if (c.after.id == sm.add->output(0)->id()) {
        QCOMPARE(c.fields(), (Strings{"dtype", "bytes"}));
        QCOMPARE(c.before.dtype + ">" + c.after.dtype, std::string("fp32>fp16"));
      } else {
        QCOMPARE(c.fields(), (Strings{"shape", "format", "bytes"}));
        QCOMPARE(c.after.format, std::string("NC1HWC0"));
      }
    }

    // Across several passes: 1 -> 4 sees the pads change, the rewiring and the fusion at once.
    d = reader.diff(run, 1, 4);
    QCOMPARE(fieldsOf(d, sm.conv->id()), (Strings{"attr:pads"}));
    QCOMPARE(fieldsOf(d, sm.add->id()), (Strings{"inputs"}));
    QCOMPARE(d.addedNodes.size(), size_t(1));
    // And backwards is the inverse.
    GraphDiff back = reader.diff(run, 4, 1);
    QCOMPARE(ids(back.removedNodes), ids(d.addedNodes));
    QCOMPARE(back.addedEdges.size(), d.removedEdges.size());

    // Pass table and reports.
    const auto passes = reader.passes(run);
    QCOMPARE(passes.size(), size_t(9));
    QCOMPARE(passes[0].stage, std::string("import"));
    QCOMPARE(passes[1].stage, std::string("prepare"));
    QCOMPARE(passes[4].name, std::string("FuseMul"));
    QCOMPARE(passes[4].counters.at("touched"), int64_t(1));
    QCOMPARE(passes[5].nodeRowsStarted + passes[5].nodeRowsEnded, int64_t(0));
    const std::string table = formatRunDetails(info, passes);
    QVERIFY2(table.find("FuseMul") != std::string::npos, table.c_str());
    const Json j = Json::parse(runDetailsToJson(info, passes).dump());
    QCOMPARE(j.find("passes")->asArray().size(), size_t(9));
    QVERIFY(Json::parse(diffToJson(reader.diff(run, 4)).dump()).find("added_nodes")->asArray().size() == 1);
    QVERIFY(formatSnapshot(reader.graphAt(run, 4)).find("kiln:Scale") != std::string::npos);
    QVERIFY(snapshotToJson(reader.graphAt(run, 4)).find("nodes")->asArray().size() == expected[4].nodes.size());
    QVERIFY(formatRuns(reader.listRuns()).find("small.onnx") != std::string::npos);
    QVERIFY(runsToJson(reader.listRuns()).asArray().size() == 1);

    // Passes the run did not record are errors, not empty graphs.
    QVERIFY_THROWS_EXCEPTION(HistoryError, reader.graphAt(run, 9));
    QVERIFY_THROWS_EXCEPTION(HistoryError, reader.graphAt(run + 1, 0));
  }

  void storageGrowsWithChange() {
    // Untouched objects cost no rows: after the import, the eight passes above write only what they changed.
    const std::string path = tmpFile("rows.kiln");
    SmallModel sm;
    HistoryDb db(path);
    HistoryRecorder rec(db, "small.onnx");
    Driver d(rec, *sm.model);
    d.start();
    const auto afterImport = rec.stats();
    d.pass("Nothing", [] {});
    d.pass("OneAttr", [&] { sm.conv->setAttr("group", Attribute(int64_t(1))); });
    d.pass("SameAgain", [&] { sm.conv->setAttr("group", Attribute(int64_t(1))); });  // touched, same content
    d.finish();
    QVERIFY(rec.error().empty());
    QCOMPARE(rec.stats().nodeRows - afterImport.nodeRows, int64_t(1));
    QCOMPARE(rec.stats().valueRows - afterImport.valueRows, int64_t(0));
    QCOMPARE(rec.stats().edgeRows - afterImport.edgeRows, int64_t(0));
    QCOMPARE(rec.stats().rowsClosed, int64_t(1));
    QVERIFY(HistoryReader(db).diff(rec.runId(), 3).empty());
  }

  void annotationChangesReadBackExactly() {
    // Annotation-only changes are packed per pass (annotation_changes.h); every way a node's annotations can move
    // must read back as the live graph had them, at every pass and between any two.
    const std::string path = tmpFile("annotations.kiln");
    SmallModel sm;
    int64_t run = 0;
    std::vector<Expected> expected;
    {
      HistoryDb db(path);
      HistoryRecorder rec(db, "small.onnx");
      Driver d(rec, *sm.model);
      Graph& g = *sm.g;
      d.start();
      d.pass("Engines", [&] {  // 1: every node, subgraph nodes included
        sm.g->forEachGraph([](Graph& sub) {
          for (Node* n : sub.nodes()) n->setAnnotation("engine", "aicore");
        });
      });
      d.pass("Streams", [&] {  // 2: add, change and remove keys
        sm.conv->setAnnotation("stream", "1");
        sm.relu->setAnnotation("stream", "2");
        sm.add->eraseAnnotation("engine");
        sm.thenId->setAnnotation("engine", "aicpu");
      });
      d.pass("RenameAndAnnotate", [&] {  // 3: a structural change and an annotation on the same node
        sm.relu->setName("relu_renamed");
        sm.relu->setAnnotation("stream", "5");
        sm.conv->setAnnotation("stream", "3");
      });
      d.pass("ChangeBack", [&] { sm.conv->setAnnotation("stream", "1"); });  // 4: pass 2's value again
      d.pass("RemoveAnnotated", [&] {  // 5: a node with packed changes goes
        g.replaceAllUsesWith(sm.mul->output(0), sm.relu->output(0));
        g.eraseNode(sm.mul);
        g.eraseValue(sm.two);
      });
      Node* neg = nullptr;
      d.pass("NewNode", [&] {  // 6: a node appears with annotations of its own
        neg = g.addNode("Neg", {sm.add->output(0)}, 1, "neg");
        neg->setAnnotation("engine", "aicore");
        g.addOutput(neg->output(0));
      });
      d.pass("Escapes", [&] {  // 7: values JSON must escape, on a node created in the pass before
        neg->setAnnotation("note", "a \"quoted\"\nline, 100% \\ ünï");
        neg->setAnnotation("stream", "");
        sm.conv->eraseAnnotation("stream");
      });
      d.pass("Nothing", [] {});  // 8
      d.pass("WithinOnePass", [&] {  // 9: changed and changed back, added and erased, changed twice
        sm.relu->setAnnotation("engine", "aicpu");
        sm.relu->setAnnotation("engine", "aicore");
        sm.conv->setAnnotation("stream", "9");
        sm.conv->eraseAnnotation("stream");
        sm.thenId->setAnnotation("engine", "host");
        sm.thenId->setAnnotation("engine", "aicore");
        Node* transient = g.addNode("Neg", {sm.add->output(0)}, 1, "made_and_erased");  // no row, no changes
        transient->setAnnotation("engine", "aicore");
        transient->setAnnotation("engine", "aicpu");
        g.eraseNode(transient);
      });
      d.finish();
      QVERIFY2(rec.error().empty(), rec.error().c_str());
      QCOMPARE(rec.stats().annotatedNodes, int64_t(7 + 4 + 1 + 1 + 2 + 1));
      expected = d.expected;
      run = rec.runId();
    }
    HistoryDb db(path, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    const QString everyPass = checkEveryPass(reader, run, expected);
    QVERIFY2(everyPass.isEmpty(), qPrintable(everyPass));

    // Annotation-only passes write no node rows; the pass table says how many nodes they annotated.
    const auto passes = reader.passes(run);
    QCOMPARE(passes[1].nodeRowsStarted, int64_t(0));
    QCOMPARE(passes[1].nodesAnnotated, int64_t(7));
    QCOMPARE(passes[2].nodesAnnotated, int64_t(4));
    QCOMPARE(passes[3].nodesAnnotated, int64_t(1));  // conv; relu's row was re-versioned with its annotation
    QCOMPARE(passes[3].nodeRowsStarted, int64_t(1));
    QCOMPARE(passes[8].nodesAnnotated, int64_t(0));
    QCOMPARE(passes[9].nodesAnnotated, int64_t(1));  // only thenId ends the pass other than it began
    QCOMPARE(fieldsOf(reader.diff(run, 9), sm.thenId->id()), (Strings{"annotation:engine"}));
    QCOMPARE(fieldsOf(reader.diff(run, 9), sm.relu->id()), (Strings{"(not changed)"}));
    QCOMPARE(fieldsOf(reader.diff(run, 9), sm.conv->id()), (Strings{"(not changed)"}));
    // What changed, by key.
    QCOMPARE(fieldsOf(reader.diff(run, 2), sm.add->id()), (Strings{"annotation:engine"}));
    QCOMPARE(fieldsOf(reader.diff(run, 3), sm.relu->id()), (Strings{"name", "annotation:stream"}));
    QCOMPARE(fieldsOf(reader.diff(run, 2, 4), sm.conv->id()), (Strings{"(not changed)"}));  // and back
    QCOMPARE(fieldsOf(reader.diff(run, 4, 2), sm.thenId->id()), (Strings{"(not changed)"}));
    QCOMPARE(fieldsOf(reader.diff(run, 1, 2), sm.thenId->id()), (Strings{"annotation:engine"}));
    const GraphSnapshot s7 = reader.graphAt(run, 7);
    QVERIFY(s7.node(sm.conv->id())->annotationsJson == R"({"engine":"aicore"})");

    // The packed changes read as rows in plain SQL.
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(raw,
                       "SELECT old_value, new_value FROM node_annotation_changes WHERE run_id = ?1 AND seq = 3 "
                       "AND node_id = ?2 AND key = 'stream'",
                       -1, &st, nullptr);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int64(st, 2, sm.conv->id());
    QCOMPARE(sqlite3_step(st), SQLITE_ROW);
    QCOMPARE(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), std::string("1"));
    QCOMPARE(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 1))), std::string("3"));
    sqlite3_finalize(st);
    sqlite3_close(raw);
  }

  void graphReplacedByAPassReadsBack() {
    // A pass may swap the model's graph for one with a fresh id source (a plugin that rebuilds it). Its ids start
    // again, so nodes are matched by id and compared whole, and the annotation journal moves to the new source.
    const std::string path = tmpFile("replaced.kiln");
    auto m = std::make_unique<Model>();
    auto build = [](Graph& g, const std::string& reluName) {
      Value* x = g.addInput("x", f32({4}));
      Node* a = g.addNode("Abs", {x}, 1, "abs");
      Node* r = g.addNode("Relu", {a->output(0)}, 1, reluName);
      g.addOutput(r->output(0));
      a->setAnnotation("engine", "aicore");
      return std::pair<Node*, Node*>{a, r};
    };
    Node* relu = build(*m->graph, "relu").second;
    int64_t run = 0;
    std::vector<Expected> expected;
    NodeId absId = 0, reluId = 0;
    {
      HistoryDb db(path);
      HistoryRecorder rec(db, "replaced.onnx");
      Driver d(rec, *m);
      d.start();
      d.pass("Annotate", [&] { relu->setAnnotation("engine", "aicore"); });  // 1
      Node* abs = nullptr;
      d.pass("Replace", [&] {  // 2: the same abs, relu renamed and on another engine
        auto fresh = std::make_unique<Graph>(std::make_shared<IdSource>());
        std::tie(abs, relu) = build(*fresh, "relu_renamed");
        relu->setAnnotation("engine", "aicpu");
        m->graph = std::move(fresh);
      });
      d.pass("AnnotateTheNewGraph", [&] { abs->setAnnotation("stream", "1"); });  // 3
      d.finish();
      QVERIFY2(rec.error().empty(), rec.error().c_str());
      QCOMPARE(rec.stats().annotatedNodes, int64_t(2));  // pass 1's relu, pass 3's abs
      expected = d.expected;
      run = rec.runId();
      absId = abs->id();
      reluId = relu->id();
    }
    HistoryDb db(path, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    const QString everyPass = checkEveryPass(reader, run, expected);
    QVERIFY2(everyPass.isEmpty(), qPrintable(everyPass));
    QCOMPARE(fieldsOf(reader.diff(run, 2), absId), (Strings{"(not changed)"}));
    QCOMPARE(fieldsOf(reader.diff(run, 2), reluId), (Strings{"name", "annotation:engine"}));
    QCOMPARE(fieldsOf(reader.diff(run, 3), absId), (Strings{"annotation:stream"}));
    QCOMPARE(reader.passes(run)[3].nodesAnnotated, int64_t(1));
  }

  void closesBeyondThePackedKeys() {
    // pass_rows lists a pass's keys packed into integers; keys past the packing (ids from 2^43, edge consumers from
    // 2^27, inputs from 2^16) are listed as arrays, and the writer closes both kinds in the same statement. The
    // recorder's ids are dense and never get there, so the writer is driven directly.
    const std::string path = tmpFile("big_ids.kiln");
    HistoryDb db(path);
    db.exec("INSERT INTO models(id, path, name, added_at) VALUES (1, 'm.onnx', 'm.onnx', 'now');"
            "INSERT INTO runs(id, model_id, options_json, kiln_version, started_at, status) "
            "VALUES (1, 1, '{}', 'test', 'now', 'ok')");
    const int64_t big = int64_t{1} << 43, bigNode = int64_t{1} << 27;
    const std::vector<int64_t> keyIds = {1, 7, big - 1, big, big + 5};
    auto passRow = [](const char* name) {
      PassRows::PassRow p;
      p.stage = "prepare";
      p.name = name;
      p.countersJson = "{}";
      return p;
    };
    PassRows import;
    import.runId = 1;
    import.pass = passRow("import");
    PassRows opened;
    opened.runId = 1;
    opened.seq = 1;
    opened.pass = passRow("Open");
    for (int64_t id : keyIds) {
      auto n = std::make_shared<NodeRow>();
      n->id = id;
      n->opType = "Relu";
      opened.nodes.push_back(n);
      auto v = std::make_shared<ValueRow>();
      v->id = id;
      v->name = "v" + std::to_string(id);
      opened.values.push_back(v);
    }
    const std::vector<std::pair<int64_t, int64_t>> edges = {{1, 0}, {bigNode - 1, 3}, {bigNode, 0}, {7, 1 << 16}};
    for (const auto& [node, index] : edges) opened.edges.push_back({node, index, 1});
    PassRows closing;
    closing.runId = 1;
    closing.seq = 3;
    closing.pass = passRow("Close");
    for (int64_t id : keyIds) {
      closing.closedNodes.push_back({id, 1});
      closing.closedValues.push_back({id, 1});
    }
    for (const auto& [node, index] : edges) closing.closedEdges.push_back({node, index, 1});
    {
      HistoryWriter writer(db);
      writer.submit(std::move(import));
      writer.submit(std::move(opened));
      writer.submit(std::move(closing));
      QCOMPARE(QString::fromStdString(writer.flush()), QString());
    }
    // Every row ended at pass 3, as the views for people who query the file show it.
    for (const char* count : {"SELECT (SELECT count(*) FROM nodes), (SELECT count(*) FROM nodes n JOIN node_ends e "
                              "USING (run_id, node_id, first_pass) WHERE e.last_pass = 3)",
                              "SELECT (SELECT count(*) FROM \"values\"), (SELECT count(*) FROM \"values\" v JOIN "
                              "value_ends e USING (run_id, value_id, first_pass) WHERE e.last_pass = 3)",
                              "SELECT (SELECT count(*) FROM edges), (SELECT count(*) FROM edges g JOIN edge_ends e "
                              "USING (run_id, consumer_node, consumer_index, first_pass) WHERE e.last_pass = 3)"}) {
      SqlStatement q = db.prepare(count);
      QVERIFY(q.step());
      QVERIFY2(q.getInt(0) > 0 && q.getInt(0) == q.getInt(1), count);
    }

    // Diffs find every row through the lists, whichever form its key took.
    HistoryReader reader(db);
    const std::set<int64_t> idSet(keyIds.begin(), keyIds.end());
    using Slot = std::pair<int64_t, int64_t>;
    const std::set<Slot> edgeSlots(edges.begin(), edges.end());
    auto slotsOf = [](const std::vector<EdgeRow>& rows) {
      std::set<Slot> out;
      for (const EdgeRow& e : rows) out.insert({e.consumerNode, e.consumerIndex});
      return out;
    };
    GraphDiff d = reader.diff(1, 0, 1);
    QCOMPARE(ids(d.addedNodes), idSet);
    QCOMPARE(ids(d.addedValues), idSet);
    QCOMPARE(slotsOf(d.addedEdges), edgeSlots);
    d = reader.diff(1, 1, 3);
    QCOMPARE(ids(d.removedNodes), idSet);
    QCOMPARE(ids(d.removedValues), idSet);
    QCOMPARE(slotsOf(d.removedEdges), edgeSlots);
    QVERIFY(reader.diff(1, 0, 3).empty());
    QVERIFY(reader.graphAt(1, 3).nodes.empty());
    {
      // The lists are JSON: spaced out by hand, they read the same.
      db.exec("BEGIN");
      db.exec("UPDATE pass_rows SET ended = ' ' || replace(replace(ended, ',', ' ,\n '), '[', '[ ') || ' '");
      const GraphSnapshot spaced = reader.graphAt(1, 3);
      const GraphDiff spacedDiff = reader.diff(1, 0, 3);  // the rows of pass 1 are known to end by 3
      db.exec("ROLLBACK");
      QVERIFY(spaced.nodes.empty());
      QVERIFY(spacedDiff.empty());
    }
    QCOMPARE(reader.passes(1).at(1).nodeRowsStarted, int64_t(keyIds.size()));
    QCOMPARE(reader.passes(1).at(2).nodeRowsEnded, int64_t(keyIds.size()));

    // What a file migrated from schema 5 gets (pass_rows rebuilt from first_pass and last_pass) lists the same keys.
    auto listed = [&db] {
      std::set<std::tuple<int, std::string, std::string, int64_t, int64_t, int64_t>> out;
      for (auto t : {pass_rows::Table::Nodes, pass_rows::Table::Values, pass_rows::Table::Edges})
        for (const char* list : {"started", "ended"})
          for (int seq = 0; seq <= 3; ++seq) {
            SqlStatement q = db.prepare(pass_rows::decodeKeys(t, std::string("(SELECT ") + list +
                                                                     " FROM pass_rows WHERE seq = ?1 AND "
                                                                     "graph_table = ?2)"));
            q.bind(1, seq).bind(2, pass_rows::tableName(t));
            while (q.step())
              out.insert({seq, pass_rows::tableName(t), list, q.getInt(0), q.getInt(1),
                          t == pass_rows::Table::Edges ? q.getInt(2) : -1});
          }
      return out;
    };
    const auto written = listed();
    QCOMPARE(written.size(), 2 * (2 * keyIds.size() + edges.size()));
    db.exec("BEGIN");
    db.exec(older_history::kBackToSchema6);
    pass_rows::rebuild(db.handle());
    const auto rebuilt = listed();
    db.exec("ROLLBACK");
    QVERIFY(rebuilt == written);
  }

  void twoRecordersCannotFollowOneModel() {
    // The annotation journal has one reader: a second recorder on the same model stops with a clear error, and the
    // first records on.
    SmallModel sm;
    HistoryDb db(tmpFile("two_recorders.kiln"));
    HistoryRecorder first(db, "small.onnx"), second(db, "small.onnx");
    Options options;
    first.runStarted(*sm.model, options);
    second.runStarted(*sm.model, options);
    QVERIFY(first.error().empty());
    QVERIFY2(second.error().find("another recorder") != std::string::npos, second.error().c_str());
    sm.conv->setAnnotation("stream", "1");
    PassRecord r;
    r.index = 1;
    r.name = "Streams";
    first.afterPass(r, *sm.model);
    RunSummary s;
    first.runFinished(s, *sm.model);
    QVERIFY2(first.error().empty(), first.error().c_str());
    QCOMPARE(first.stats().annotatedNodes, int64_t(1));
  }

  void unreadableAnnotationChangesAreAnError() {
    const std::string path = tmpFile("bad_annotations.kiln");
    SmallModel sm;
    int64_t run = 0;
    {
      HistoryDb db(path);
      recordSmallRun(db, sm, "small.onnx");
      run = HistoryReader(db).listRuns().back().id;
    }
    sqliteExec(path, "UPDATE annotation_changes SET changes_json = '{\"7\":{\"engine\":[null,' WHERE seq = 6");
    HistoryDb db(path, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    QVERIFY(reader.graphAt(run, 5).nodes.size() > 0);  // passes before the damage still read
    try {
      reader.graphAt(run, 6);
      QFAIL("a damaged annotation_changes row was read as if it were whole");
    } catch (const HistoryError& e) {
      const std::string what = e.what();
      QVERIFY2(what.find(path) != std::string::npos && what.find("pass 6") != std::string::npos, e.what());
    }
  }

  void unreadablePassRowsAreAnError() {
    const std::string path = tmpFile("bad_pass_rows.kiln");
    SmallModel sm;
    int64_t run = 0;
    int last = 0;
    {
      HistoryDb db(path);
      recordSmallRun(db, sm, "small.onnx");
      run = HistoryReader(db).listRuns().back().id;
      last = HistoryReader(db).passes(run).back().seq;
    }
    sqliteExec(path, "UPDATE pass_rows SET ended = '[1,'");
    HistoryDb db(path, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    // The ended lists are the only record of when rows ended: neither a graph nor a diff can be read without them.
    for (const std::function<void()>& read : std::vector<std::function<void()>>{
             [&] { reader.graphAt(run, 0); }, [&] { reader.graphAt(run, last); },
             [&] { reader.diff(run, 0, last); }}) {
      try {
        read();
        QFAIL("a damaged pass_rows list was read as if it were whole");
      } catch (const HistoryError& e) {
        QVERIFY2(std::string(e.what()).find(path) != std::string::npos, e.what());
      }
    }
    QVERIFY_THROWS_EXCEPTION(HistoryError, reader.passes(run));
  }

  void attributesTextIsTheJsonOfEachAttribute() {
    // nodeRowOf writes the common attribute kinds straight into attrs_json: it must be the text the Json writer
    // gives each attribute (attributeJson), in name order.
    Model model;
    Graph* g = model.graph.get();
    Node* n = g->addNode("Custom", {g->addInput("x", f32({2}))}, 1, "custom");
    const std::vector<std::pair<std::string, Attribute>> attrs = {
        {"z_ints", Attribute(std::vector<int64_t>{1, -2, 3, INT64_MIN})},
        {"a_str", Attribute(std::string("q\"uote\\ \xc3\xa9\n\x01"))},
        {"m_strs", Attribute(std::vector<std::string>{"a", "b\"c", ""})},
        {"f", Attribute(0.1f)},
        {"i", Attribute(int64_t{-5})},
        {"e_ints", Attribute(std::vector<int64_t>{})},
        {"e_strs", Attribute(std::vector<std::string>{})},
        {"floats", Attribute(std::vector<float>{1.5f, -0.25f})}};
    for (const auto& [name, value] : attrs) n->setAttr(name, value);
    std::vector<std::pair<std::string, Attribute>> sorted = attrs;
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::string expected = "{";
    for (const auto& [name, value] : sorted)
      expected += (expected.size() > 1 ? "," : "") + Json(name).dump() + ":" + attributeJson(value);
    expected += "}";
    QCOMPARE(QString::fromStdString(nodeRowOf(*n).attrsJson), QString::fromStdString(expected));
    QVERIFY(Json::parse(nodeRowOf(*n).attrsJson).isObject());
  }

  void failedPassIsRecorded() {
    const std::string path = tmpFile("failed.kiln");
    SmallModel sm;
    HistoryDb db(path);
    HistoryRecorder rec(db, "small.onnx");
    Driver d(rec, *sm.model);
    d.start();
    d.pass("Fine", [&] { sm.relu->setName("r"); });
    PassRecord r = d.record("Broken", Stage::Optimize);
    sm.conv->setAttr("pads", Attribute(std::vector<int64_t>{9, 9, 9, 9}));  // what it did before throwing
    r.error = "shape mismatch at conv";
    rec.passFailed(r, *sm.model);
    d.finish(RunStatus::Failed, "Broken: shape mismatch at conv");
    QVERIFY(rec.error().empty());

    HistoryReader reader(db);
    const RunInfo info = reader.run(rec.runId());
    QCOMPARE(info.status, std::string("failed"));
    QCOMPARE(info.error, std::string("Broken: shape mismatch at conv"));
    const auto passes = reader.passes(rec.runId());
    QCOMPARE(passes.size(), size_t(3));
    QCOMPARE(passes[2].name, std::string("Broken"));
    QCOMPARE(passes[2].error, std::string("shape mismatch at conv"));
    QVERIFY(passes[1].error.empty());
    QCOMPARE(fieldsOf(reader.diff(rec.runId(), 2), sm.conv->id()), (Strings{"attr:pads"}));
    QVERIFY(formatRunDetails(info, passes).find("FAILED: shape mismatch") != std::string::npos);
  }

  void reopenAndSecondRun() {
    const std::string path = tmpFile("two_runs.kiln");
    {
      SmallModel sm;
      HistoryDb db(path);
      recordSmallRun(db, sm, "small.onnx");
    }
    std::vector<Expected> second;
    {
      // Reopened for writing: a second run of the same model (same ids 1..n, separated by run id).
      SmallModel sm;
      HistoryDb db(path);
      QCOMPARE(HistoryReader(db).listRuns().size(), size_t(1));
      second = recordSmallRun(db, sm, "small.onnx");
    }
    HistoryDb db(path, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    const auto runs = reader.listRuns();
    QCOMPARE(runs.size(), size_t(2));
    QCOMPARE(runs[0].modelId, runs[1].modelId);  // the model row is shared (same path and size)
    QCOMPARE(runs[1].status, std::string("ok"));
    for (int k = 0; k <= 8; ++k) {
      QVERIFY(compareSnapshot(reader.graphAt(runs[0].id, k), second[k]).isEmpty());
      QVERIFY(compareSnapshot(reader.graphAt(runs[1].id, k), second[k]).isEmpty());
    }
    // A read-only handle refuses to record.
    SmallModel sm;
    HistoryRecorder rec(db, "small.onnx");
    rec.startRun(*sm.model, Json::object());
    QVERIFY(rec.error().find("read-only") != std::string::npos);
  }

  void refusesForeignFilesUntouched() {
    auto refused = [](const std::string& path, HistoryDb::Mode mode) -> std::string {
      try {
        HistoryDb db(path, mode);
      } catch (const LoadError& e) {
        if (e.file() != path) return "wrong file in error";
        return e.what();
      }
      return "(opened)";
    };
    auto noSidecars = [](const std::string& path) {
      return !std::filesystem::exists(path + "-wal") && !std::filesystem::exists(path + "-shm") &&
             !std::filesystem::exists(path + "-journal");
    };

    // A text file.
    const std::string text = tmpFile("notes.txt");
    writeBytes(text, "these are not the droids\nyou are looking for\n");
    std::string before = readBytes(text);
    for (auto mode : {HistoryDb::Mode::ReadWrite, HistoryDb::Mode::ReadOnly})
      QCOMPARE(refused(text, mode), std::string("not an SQLite database"));
    QCOMPARE(readBytes(text), before);
    QVERIFY(noSidecars(text));

    // Someone else's SQLite database.
    const std::string foreign = tmpFile("foreign.db");
    sqliteExec(foreign, "CREATE TABLE contacts(name TEXT, phone TEXT); INSERT INTO contacts VALUES ('a', '1');");
    before = readBytes(foreign);
    for (auto mode : {HistoryDb::Mode::ReadWrite, HistoryDb::Mode::ReadOnly})
      QCOMPARE(refused(foreign, mode), std::string("an SQLite database that is not a Kiln history"));
    QCOMPARE(readBytes(foreign), before);
    QVERIFY(noSidecars(foreign));

    // A Kiln history from a newer Kiln.
    const std::string newer = tmpFile("newer.kiln");
    { HistoryDb db(newer); }
    sqliteExec(newer, "PRAGMA user_version = 99");
    before = readBytes(newer);
    for (auto mode : {HistoryDb::Mode::ReadWrite, HistoryDb::Mode::ReadOnly})
      QCOMPARE(refused(newer, mode), "schema version 99 is newer than this Kiln (" +
                                         std::to_string(HistoryDb::kSchemaVersion) + ")");
    QCOMPARE(readBytes(newer), before);
    QVERIFY(noSidecars(newer));

    // A damaged history: garbage over the b-tree pages of a recorded run.
    const std::string corrupt = tmpFile("corrupt.kiln");
    {
      SmallModel sm;
      HistoryDb db(corrupt);
      recordSmallRun(db, sm, "small.onnx");
    }
    std::string bytes = readBytes(corrupt);
    QVERIFY(bytes.size() > 8 * 4096);
    for (size_t i = 3 * 4096; i < 6 * 4096; ++i) bytes[i] = static_cast<char>(0xA5 ^ (i & 0xff));
    writeBytes(corrupt, bytes);
    for (auto mode : {HistoryDb::Mode::ReadWrite, HistoryDb::Mode::ReadOnly}) {
      const std::string why = refused(corrupt, mode);
      QVERIFY2(why.rfind("corrupt database", 0) == 0, why.c_str());
    }
    QCOMPARE(readBytes(corrupt), bytes);
    QVERIFY(noSidecars(corrupt));

    // Missing: created for writing, refused for reading; an empty file is initialised.
    const std::string missing = tmpFile("missing.kiln");
    QCOMPARE(refused(missing, HistoryDb::Mode::ReadOnly), std::string("no such file"));
    QVERIFY(!std::filesystem::exists(missing));
    const std::string empty = tmpFile("empty.kiln");
    writeBytes(empty, "");
    QCOMPARE(refused(empty, HistoryDb::Mode::ReadOnly), std::string("empty file, not a Kiln history"));
    { HistoryDb db(empty); }
    { HistoryDb db(empty, HistoryDb::Mode::ReadOnly); }
    QCOMPARE(refused(KILN_TEST_TMP, HistoryDb::Mode::ReadWrite), std::string("is a directory, not a history database"));
    // An SQLite file without tables (whatever its user_version) is a blank to initialise.
    const std::string bare = tmpFile("bare.db");
    sqliteExec(bare, "PRAGMA user_version = 1");
    {
      HistoryDb db(bare);
      QVERIFY(HistoryReader(db).listRuns().empty());
    }
    QVERIFY(HistoryReader(HistoryDb(bare, HistoryDb::Mode::ReadOnly)).listRuns().empty());
  }

  // An open for appending runs does not read every page (HistoryDb::Check): damage off an append's path does not
  // stop a recording, and an open that checks the whole file still reports it. A file with free pages, which an
  // append could hand out again, is checked whole either way.
  void appendingOpensCheckWhatAnAppendTouches() {
    auto refusal = [](const std::string& path, HistoryDb::Check check) -> std::string {
      try {
        HistoryDb db(path, HistoryDb::Mode::ReadWrite, check);
      } catch (const LoadError& e) {
        return e.file() == path ? e.what() : "wrong file in error";
      }
      return "(opened)";
    };
    auto damaged = [](const std::string& name) {
      const std::string path = tmpFile(name);
      {
        SmallModel sm;
        HistoryDb db(path);
        recordSmallRun(db, sm, "small.onnx");
      }
      // A 40 KB error text on the run: it lives in a chain of overflow pages that no later append reads.
      sqliteExec(path, "UPDATE runs SET error = hex(zeroblob(20000)) WHERE id = 1");
      std::string bytes = readBytes(path);
      size_t page = 0;
      for (size_t at = 4096; at + 4096 <= bytes.size() && !page; at += 4096)
        if (bytes.compare(at + 4, 4092, std::string(4092, '0')) == 0) page = at;
      if (page) bytes.replace(page, 4, "\xff\xff\xff\xff");  // the chain's next-page number, out of range
      writeBytes(path, bytes);
      return page ? path : std::string();
    };
    auto freePages = [](const std::string& path) {
      sqlite3* db = nullptr;
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
      sqlite3_stmt* st = nullptr;
      sqlite3_prepare_v2(db, "PRAGMA freelist_count", -1, &st, nullptr);
      const int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
      sqlite3_finalize(st);
      sqlite3_close(db);
      return n;
    };

    const std::string path = damaged("append.kiln");
    QVERIFY2(!path.empty(), "no overflow page found to damage");
    QCOMPARE(freePages(path), int64_t{0});
    QVERIFY(refusal(path, HistoryDb::Check::Whole).rfind("corrupt database", 0) == 0);
    {
      SmallModel sm;
      auto db = HistoryDb::forAppending(path);
      const auto expected = recordSmallRun(*db, sm, "small.onnx");
      // (Listing the runs would read the damaged text of run 1.)
      const QString err = checkEveryPass(HistoryReader(*db), 2, expected);
      QVERIFY2(err.isEmpty(), qPrintable(err));
    }
    QVERIFY(refusal(path, HistoryDb::Check::Whole).rfind("corrupt database", 0) == 0);  // still reported

    // The same damage in a file with a free page.
    const std::string withFree = damaged("append_free.kiln");
    QVERIFY(!withFree.empty());
    sqliteExec(withFree, "CREATE TABLE scratch(x); INSERT INTO scratch VALUES (zeroblob(9000)); DROP TABLE scratch;");
    QVERIFY(freePages(withFree) > 0);
    const std::string before = readBytes(withFree);
    QVERIFY(refusal(withFree, HistoryDb::Check::ForAppending).rfind("corrupt database", 0) == 0);
    QCOMPARE(readBytes(withFree), before);
  }

  void migratesVersion1Files() {
    // A history written by schema version 1 (full first/last indexes, one edge row per input slot with its own
    // interval), built by hand: node 12 changes an attribute at pass 1 and has input 0 rewired at pass 2 without a
    // new node row; node 11 goes at pass 2.
    const std::string path = tmpFile("v1.kiln");
    sqliteExec(path, R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE models(id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL, size_bytes INTEGER,
  added_at TEXT NOT NULL);
CREATE INDEX models_by_path ON models(path, size_bytes);
CREATE TABLE runs(id INTEGER PRIMARY KEY, model_id INTEGER NOT NULL REFERENCES models(id), options_json TEXT NOT NULL,
  kiln_version TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT,
  status TEXT NOT NULL CHECK(status IN ('running', 'ok', 'failed', 'stopped', 'incomplete')), error TEXT,
  total_ms REAL, nodes_before INTEGER, nodes_after INTEGER, writer_pid INTEGER, writer_host TEXT);
CREATE INDEX runs_by_status ON runs(status);
CREATE TABLE passes(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
  stage TEXT NOT NULL, name TEXT NOT NULL, ms REAL NOT NULL, changed INTEGER NOT NULL, counters_json TEXT NOT NULL,
  nodes_before INTEGER, nodes_after INTEGER, error TEXT, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE TABLE nodes(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, node_id INTEGER NOT NULL,
  first_pass INTEGER NOT NULL, last_pass INTEGER, graph_owner INTEGER NOT NULL, graph_attr TEXT NOT NULL,
  op_type TEXT NOT NULL, domain TEXT NOT NULL, name TEXT NOT NULL, attrs_json TEXT NOT NULL,
  annotations_json TEXT NOT NULL, PRIMARY KEY(run_id, node_id, first_pass)) WITHOUT ROWID;
CREATE INDEX nodes_by_first ON nodes(run_id, first_pass);
CREATE INDEX nodes_by_last ON nodes(run_id, last_pass);
CREATE TABLE "values"(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, value_id INTEGER NOT NULL,
  first_pass INTEGER NOT NULL, last_pass INTEGER, graph_owner INTEGER NOT NULL, graph_attr TEXT NOT NULL,
  name TEXT NOT NULL, dtype TEXT NOT NULL, shape TEXT, format TEXT NOT NULL, bytes INTEGER, producer_node INTEGER,
  producer_index INTEGER, is_input INTEGER NOT NULL, is_output INTEGER NOT NULL, is_constant INTEGER NOT NULL,
  PRIMARY KEY(run_id, value_id, first_pass)) WITHOUT ROWID;
CREATE INDEX values_by_first ON "values"(run_id, first_pass);
CREATE INDEX values_by_last ON "values"(run_id, last_pass);
CREATE TABLE edges(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, consumer_node INTEGER NOT NULL,
  consumer_index INTEGER NOT NULL, first_pass INTEGER NOT NULL, last_pass INTEGER, value_id INTEGER NOT NULL,
  PRIMARY KEY(run_id, consumer_node, consumer_index, first_pass)) WITHOUT ROWID;
CREATE INDEX edges_by_first ON edges(run_id, first_pass);
CREATE INDEX edges_by_last ON edges(run_id, last_pass);
INSERT INTO meta VALUES ('application', 'kiln');
INSERT INTO models VALUES (1, '/m/small.onnx', 'small.onnx', 100, '2024-01-01T00:00:00.000Z');
INSERT INTO runs VALUES (1, 1, '{}', '0.1.0', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:01.000Z', 'ok', NULL,
  3.0, 3, 2, 1, 'h');
INSERT INTO passes VALUES (1, 0, 'import', 'import', 0, 0, '{}', 3, 3, NULL), (1, 1, 'prepare', 'A', 1, 1, '{}', 3, 3,
  NULL), (1, 2, 'prepare', 'B', 1, 1, '{}', 3, 2, NULL);
INSERT INTO nodes VALUES (1, 10, 0, NULL, 0, '', 'Conv', '', 'conv', '{}', '{}'),
  (1, 11, 0, 2, 0, '', 'Relu', '', 'relu', '{}', '{}'),
  (1, 12, 0, 1, 0, '', 'Add', '', 'add', '{"alpha":1}', '{}'),
  (1, 12, 1, NULL, 0, '', 'Add', '', 'add', '{"alpha":2}', '{}');
INSERT INTO "values" VALUES (1, 20, 0, NULL, 0, '', 'x', 'fp32', '4', 'ND', 16, NULL, NULL, 1, 0, 0),
  (1, 21, 0, NULL, 0, '', 'c', 'fp32', '4', 'ND', 16, 10, 0, 0, 0, 0),
  (1, 22, 0, 2, 0, '', 'r', 'fp32', '4', 'ND', 16, 11, 0, 0, 0, 0),
  (1, 23, 0, NULL, 0, '', 'y', 'fp32', '4', 'ND', 16, 12, 0, 0, 1, 0);
INSERT INTO edges VALUES (1, 10, 0, 0, NULL, 20), (1, 11, 0, 0, 2, 21), (1, 12, 0, 0, 2, 22), (1, 12, 0, 2, NULL, 21),
  (1, 12, 1, 0, NULL, 21);
PRAGMA user_version = 1;
)sql");
    // Viewers do not upgrade files; the first writable open does.
    try {
      HistoryDb db(path, HistoryDb::Mode::ReadOnly);
      QFAIL("a version 1 file opened read-only");
    } catch (const LoadError& e) {
      QCOMPARE(std::string(e.what()),
               std::string("schema version 1 needs an upgrade: open it once for writing (kiln history upgrade)"));
    }
    QCOMPARE(HistoryDb::olderSchemaOf(path), 1);
    { HistoryDb db(path); }
    QCOMPARE(HistoryDb::olderSchemaOf(path), 0);
    // The upgraded file has the tables and indexes of a history created by this Kiln.
    const std::string fresh = tmpFile("fresh.kiln");
    { HistoryDb db(fresh); }
    QCOMPARE(schemaObjects(path), schemaObjects(fresh));
    HistoryDb db(path, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    QCOMPARE(reader.run(1).passCount, 3);

    using Slot = std::tuple<int64_t, int64_t, int64_t>;  // consumer, index, value
    auto slotSet = [](const std::vector<EdgeRow>& edges) {
      std::set<Slot> s;
      for (const EdgeRow& e : edges) s.insert({e.consumerNode, e.consumerIndex, e.valueId});
      return s;
    };
    const GraphSnapshot s1 = reader.graphAt(1, 1);
    QCOMPARE(s1.nodes.size(), size_t(3));
    QCOMPARE(s1.node(12)->attrsJson, std::string(R"({"alpha":2})"));
    QCOMPARE(slotSet(s1.edges), (std::set<Slot>{{10, 0, 20}, {11, 0, 21}, {12, 0, 22}, {12, 1, 21}}));
    const GraphSnapshot s2 = reader.graphAt(1, 2);
    QCOMPARE(s2.nodes.size(), size_t(2));
    QCOMPARE(slotSet(s2.edges), (std::set<Slot>{{10, 0, 20}, {12, 0, 21}, {12, 1, 21}}));

    GraphDiff d = reader.diff(1, 1);
    QCOMPARE(d.changedNodes.size(), size_t(1));
    QCOMPARE(d.changedNodes[0].fields(), (Strings{"attr:alpha"}));
    QVERIFY(d.addedEdges.empty() && d.removedEdges.empty());
    d = reader.diff(1, 2);
    QCOMPARE(ids(d.removedNodes), std::set<int64_t>{11});
    QCOMPARE(slotSet(d.removedEdges), (std::set<Slot>{{11, 0, 21}, {12, 0, 22}}));
    QCOMPARE(slotSet(d.addedEdges), (std::set<Slot>{{12, 0, 21}}));
    QCOMPARE(d.changedNodes.size(), size_t(1));
    QCOMPARE(d.changedNodes[0].fields(), (Strings{"inputs"}));
    QCOMPARE(ids(d.removedValues), std::set<int64_t>{22});
    d = reader.diff(1, 0, 2);
    QCOMPARE(d.changedNodes[0].fields(), (Strings{"attr:alpha", "inputs"}));
  }

  void killedWriterLeavesReadableRun() {
    const std::string path = tmpFile("killed.kiln");
    std::vector<Expected> expected;
    {
      SmallModel sm;
      HistoryDb db(path);
      expected = recordSmallRun(db, sm, "small.onnx");  // run 1 completes
    }
    // Run 2 is written by a child process that records two passes, starts a third transaction and is SIGKILLed.
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      try {
        SmallModel sm;
        HistoryDb db(path);
        HistoryRecorder rec(db, "small.onnx");
        Driver d(rec, *sm.model);
        d.start();
        d.pass("InferShapes", [&] { sm.conv->output(0)->setType(f32({1, 4, 6, 6})); });
        d.pass("PadConv", [&] { sm.conv->setAttr("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1})); });
        rec.flush();  // the two passes are committed (the writer thread has written them); then the kill
        if (!rec.error().empty()) _exit(3);
        db.exec("BEGIN IMMEDIATE");
        db.exec("INSERT INTO passes(run_id, seq, stage, name, ms, changed, counters_json) "
                "VALUES (2, 3, 'optimize', 'NeverCommitted', 0, 1, '{}')");
        // ... which ends every node of the run (never committed either).
        db.exec("INSERT INTO pass_rows(run_id, seq, graph_table, started, ended) SELECT 2, 3, 'nodes', '[]', "
                "json_group_array(node_id << 20 | first_pass) FROM nodes WHERE run_id = 2");
        ::kill(getpid(), SIGKILL);
      } catch (...) {
      }
      _exit(4);
    }
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, qPrintable(QString::number(status)));

    SmallModel replay;  // the same two passes in this process, for the expected rows
    replay.conv->output(0)->setType(f32({1, 4, 6, 6}));
    replay.conv->setAttr("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1}));
    const Expected afterTwo = expectedRows(*replay.model);
    {
      // A viewer sees the run as its writer left it: still 'running', readable up to the last committed pass.
      HistoryDb db(path, HistoryDb::Mode::ReadOnly);
      HistoryReader reader(db);
      QCOMPARE(reader.run(2).status, std::string("running"));
      QCOMPARE(reader.passes(2).size(), size_t(3));
      const QString err = compareSnapshot(reader.graphAt(2, 2), afterTwo);
      QVERIFY2(err.isEmpty(), qPrintable(err));
    }
    // The next writable open marks it incomplete; the earlier run is intact.
    HistoryDb db(path);
    QCOMPARE(db.abandonedRunsMarked(), 1);
    HistoryReader reader(db);
    const RunInfo r2 = reader.run(2);
    QCOMPARE(r2.status, std::string("incomplete"));
    QVERIFY(r2.error.find("pid " + std::to_string(child)) != std::string::npos);
    QCOMPARE(reader.run(1).status, std::string("ok"));
    for (int k = 0; k <= 8; ++k) QVERIFY(compareSnapshot(reader.graphAt(1, k), expected[k]).isEmpty());
    QVERIFY(compareSnapshot(reader.graphAt(2, 2), afterTwo).isEmpty());
    // Once marked, it stays marked and is not counted again.
    HistoryDb again(path);
    QCOMPARE(again.abandonedRunsMarked(), 0);
  }

  void readerRunsBesideAnOpenWriteTransaction() {
    const std::string path = tmpFile("wal.kiln");
    SmallModel sm;
    HistoryDb writer(path);
    const auto expected = recordSmallRun(writer, sm, "small.onnx");

    // The writer is in the middle of a pass: write lock held, rows not yet committed.
    writer.exec("BEGIN IMMEDIATE");
    writer.exec("INSERT INTO models(path, name, added_at) VALUES ('/uncommitted', 'x', 'now')");
    writer.exec("UPDATE runs SET status = 'running' WHERE id = 1");

    const auto t0 = std::chrono::steady_clock::now();
    {
      HistoryDb viewer(path, HistoryDb::Mode::ReadOnly);
      HistoryReader reader(viewer);
      const auto runs = reader.listRuns();
      QCOMPARE(runs.size(), size_t(1));
      QCOMPARE(runs[0].status, std::string("ok"));  // the committed state
      QVERIFY(compareSnapshot(reader.graphAt(1, 8), expected[8]).isEmpty());
      // A second writable handle opens without waiting for the lock (nothing to migrate or mark).
      HistoryDb other(path);
      QCOMPARE(HistoryReader(other).listRuns().size(), size_t(1));
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    QVERIFY2(waited < 2.0, qPrintable(QString("blocked for %1 s").arg(waited)));
    writer.exec("ROLLBACK");
  }

  void sampleModelsRoundTrip() {
    // The generated sample models (real op mixes, Constant tensors, symbolic shapes) come back row for row.
    for (const SampleInfo& info : sampleCatalog()) {
      SampleOptions options;
      options.weights = false;
      auto model = buildSample(info.name, options);
      const std::string path = tmpFile("sample_" + info.name + ".kiln");
      HistoryDb db(path);
      HistoryRecorder rec(db, info.name + ".onnx");
      Driver d(rec, *model);
      d.start();
      d.pass("AssignEngine", [&] {
        int i = 0;
        model->graph->forEachGraph([&](Graph& g) {
          for (Node* n : g.nodes())
            if (i++ % 10 == 0) n->setAnnotation("engine", "aicore");
        });
      });
      d.finish();
      QVERIFY2(rec.error().empty(), rec.error().c_str());
      HistoryReader reader(db);
      for (int k = 0; k <= 1; ++k) {
        const QString err = compareSnapshot(reader.graphAt(rec.runId(), k), d.expected[static_cast<size_t>(k)]);
        QVERIFY2(err.isEmpty(), qPrintable(info.name.c_str() + (": " + err)));
      }
      const GraphDiff diff = reader.diff(rec.runId(), 1);
      QCOMPARE(diff.changedNodes.size(), (d.expected[1].nodes.size() + 9) / 10);
      qInfo("%s: %zu nodes, %zu values recorded in %.1f ms", info.name.c_str(), d.expected[0].nodes.size(),
            d.expected[0].values.size(), rec.stats().ms);
    }
  }

  void recorderCostAndSizeOn2000Nodes() {
    // A chain of 2,000 nodes (each with a small weight and a few attributes), then ten passes that each change a
    // handful of nodes, the way most real passes do. Measured, not asserted.
    auto build = [] {
      auto m = std::make_unique<Model>();
      Graph& g = *m->graph;
      Value* cur = g.addInput("x", f32({1, 64}));
      const char* ops[] = {"MatMul", "Add", "Relu", "Mul"};
      for (int i = 0; i < 2000; ++i) {
        Value* w = g.addInitializer("w" + std::to_string(i),
                                    Tensor::fromVector(DType::Float, {64}, std::vector<float>(64, 0.01f * i)));
        Node* n = g.addNode(ops[i % 4], {cur, w}, 1, "n" + std::to_string(i));
        n->setAttr("alpha", Attribute(0.5f));
        n->setAttr("axes", Attribute(std::vector<int64_t>{0, 1}));
        n->setAttr("mode", Attribute(std::string("constant")));
        n->output(0)->setType(f32({1, 64}));
        cur = n->output(0);
      }
      g.addOutput(cur);
      return m;
    };
    auto nodesInOrder = [](const Model& m) {
      std::vector<Node*> v;
      for (Node* n : m.graph->nodes()) v.push_back(n);
      return v;
    };
    auto smallPass = [&](Model& m, int p) {
      Graph& g = *m.graph;
      std::vector<Node*> nodes = nodesInOrder(m);
      for (int i = 0; i < 20; ++i) nodes[static_cast<size_t>((p * 97 + i * 53) % 1500)]->setAttr("alpha", Attribute(1.0f * p));
      for (int i = 0; i < 5; ++i) {  // bypass (remove) a node
        Node* n = nodes[static_cast<size_t>(1500 + p * 40 + i * 7)];
        if (!n->output(0)->isGraphOutput()) {
          g.replaceAllUsesWith(n->output(0), n->input(0));
          g.eraseNode(n);
        }
      }
      for (int i = 0; i < 3; ++i) {  // insert a Cast in front of a node
        Node* c = nodes[static_cast<size_t>(100 + p * 30 + i * 11)];
        Node* cast = g.addNode("Cast", {c->input(0)}, 1, "cast", {}, c);
        cast->setAttr("to", Attribute(int64_t(10)));
        g.setNodeInput(c, 0, cast->output(0));
      }
      for (int i = 0; i < 10; ++i) nodes[static_cast<size_t>(p * 13 + i)]->output(0)->setType(f32({1, 64 + p}));
    };

    // One full snapshot: a history holding only the imported graph.
    const std::string snapPath = tmpFile("snapshot2000.kiln");
    {
      auto m = build();
      HistoryDb db(snapPath);
      HistoryRecorder rec(db, "chain2000.onnx");
      rec.startRun(*m, Json::object());
      RunSummary s;
      rec.runFinished(s, *m);
    }
    const auto snapshotBytes = std::filesystem::file_size(snapPath);

    const std::string runPath = tmpFile("run2000.kiln");
    double passMs = 0, sortMs = 0, recordMs = 0, importMs = 0, idleMs = 0;
    HistoryRecorder::Stats stats;
    {
      auto m = build();
      HistoryDb db(runPath);
      HistoryRecorder rec(db, "chain2000.onnx");
      rec.startRun(*m, Json::object());
      importMs = rec.stats().ms;
      for (int p = 1; p <= 10; ++p) {
        PassRecord r;
        r.index = p;
        r.name = "Small" + std::to_string(p);
        auto t0 = std::chrono::steady_clock::now();
        smallPass(*m, p);
        auto t1 = std::chrono::steady_clock::now();
        (void)m->graph->topologicalOrder();  // what an ordinary pass costs at least: one walk in dependency order
        auto t2 = std::chrono::steady_clock::now();
        rec.afterPass(r, *m);
        passMs += std::chrono::duration<double, std::milli>(t1 - t0).count();
        sortMs += std::chrono::duration<double, std::milli>(t2 - t1).count();
      }
      recordMs = rec.stats().ms - importMs;
      // Passes that change nothing cost only the walk over revisions and an almost empty transaction.
      for (int p = 11; p <= 20; ++p) {
        PassRecord r;
        r.index = p;
        r.name = "Unchanged" + std::to_string(p);
        rec.afterPass(r, *m);
      }
      idleMs = rec.stats().ms - importMs - recordMs;
      RunSummary s;
      rec.runFinished(s, *m);
      QVERIFY2(rec.error().empty(), rec.error().c_str());
      stats = rec.stats();

      HistoryReader reader(db);
      const GraphSnapshot last = reader.graphAt(rec.runId(), 10);
      QCOMPARE(last.nodes.size(), static_cast<size_t>(m->graph->numNodes()));
    }
    const auto runBytes = std::filesystem::file_size(runPath);
    qInfo("recorder: 10 passes that change nothing %.2f ms (%.3f ms per pass)", idleMs, idleMs / 10);
    qInfo("history size, 2,000 nodes + 10 small passes: %llu bytes vs one full snapshot %llu bytes: ratio %.2f",
          static_cast<unsigned long long>(runBytes), static_cast<unsigned long long>(snapshotBytes),
          static_cast<double>(runBytes) / static_cast<double>(snapshotBytes));
    qInfo("rows written: %lld node, %lld value, %lld edge rows; %lld closed",
          static_cast<long long>(stats.nodeRows), static_cast<long long>(stats.valueRows),
          static_cast<long long>(stats.edgeRows), static_cast<long long>(stats.rowsClosed));
    qInfo("recorder: import %.2f ms; 10 passes %.2f ms (%.3f ms per pass). The passes' own edits %.2f ms, one "
          "topological sort per pass %.2f ms",
          importMs, recordMs, recordMs / 10, passMs, sortMs);
  }
};

QTEST_GUILESS_MAIN(HistoryTest)
#include "test_history.moc"
