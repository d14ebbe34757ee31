// The pass view (layout/pass_view): for every pass of recorded compiles, the view "after pass k, compared with the
// pass before" holds exactly the nodes drawn at either pass, in the states the two graphs say (read back with
// graphAt, independently of the view's own diff), with every edge of both passes and its nodes in a topological
// order of that union. The view arranges the later graph while it reads the earlier one and arranges again only
// when ghosts or rewired inputs join; this checks both paths. Also: annotations another tool wrote (non-string
// values, text that is not JSON) are read as far as they can be, never as an error.
#include <QTemporaryDir>
#include <QtTest>

#include <set>

#include "history/annotation_changes.h"
#include "history/history_recorder.h"
#include "ir/model.h"
#include "layout/node_overlay.h"
#include "layout/pass_view.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "support/control_flow_model.h"
#include "support/recorded_compile.h"

using namespace kiln;
using namespace kiln::layout;

namespace {

// Op nodes drawn at a pass: the main graph's, and those in bodies of control-flow nodes drawn themselves.
std::set<int64_t> drawnOps(const GraphSnapshot& s) {
  std::set<int64_t> out;
  std::function<bool(int64_t, int)> drawn = [&](int64_t owner, int depth) {
    if (owner == 0) return true;
    const NodeRow* o = s.node(owner);
    return depth < 64 && o && isControlFlowOp(o->domain.empty() ? o->opType : o->domain + ":" + o->opType) &&
           drawn(o->graphOwner, depth + 1);
  };
  for (const NodeRow& n : s.nodes)
    if (drawn(n.graphOwner, 0)) out.insert(n.id);
  return out;
}

// Compiles `model` recording into `db` and checks the view of every pass against the graphs it compares.
void checkEveryPass(Model& model, const std::string& dbPath) {
  HistoryDb db(dbPath);
  const testing::RecordedCompile rec = testing::compileRecorded(model, db);
  QCOMPARE(rec.summary.status, RunStatus::Ok);
  HistoryReader reader(db);
  const std::vector<PassInfo> passes = reader.passes(rec.runId);
  QVERIFY(passes.size() > 10);
  int withGhosts = 0, annotatingOnly = 0;
  for (size_t p = 1; p < passes.size(); ++p) {
    const int from = passes[p - 1].seq, to = passes[p].seq;
    const PassView v = buildPassView(reader, rec.runId, to, from);
    const std::set<int64_t> before = drawnOps(reader.graphAt(rec.runId, from));
    const std::set<int64_t> after = drawnOps(reader.graphAt(rec.runId, to));
    const QString where = QString::fromStdString(passes[p].name);
    std::set<int64_t> added, removed, kept;
    for (const PassViewNode& n : v.nodes) {
      if (n.kind != PassViewNode::Kind::Op) continue;
      if (n.state == NodeState::Added) added.insert(n.id);
      else if (n.state == NodeState::Removed) removed.insert(n.id);
      else kept.insert(n.id);
    }
    std::set<int64_t> wantAdded, wantRemoved, wantKept;
    for (int64_t id : after) (before.count(id) ? wantKept : wantAdded).insert(id);
    for (int64_t id : before)
      if (!after.count(id)) wantRemoved.insert(id);
    QVERIFY2(added == wantAdded, qPrintable(where));
    QVERIFY2(removed == wantRemoved, qPrintable(where));
    QVERIFY2(kept == wantKept, qPrintable(where));
    QCOMPARE(v.added, static_cast<int64_t>(wantAdded.size()));
    QCOMPARE(v.removed, static_cast<int64_t>(wantRemoved.size()));
    // The index is true, and every edge runs forward in view order between drawn nodes.
    QCOMPARE(v.index.size(), v.nodes.size());
    for (size_t i = 0; i < v.nodes.size(); ++i) QCOMPARE(v.index.at(v.nodes[i].id), i);
    for (const NodeEdge& e : v.edges) {
      QVERIFY2(v.index.count(e.from) && v.index.count(e.to), qPrintable(where));
      if (e.to != e.from && v.node(e.to)->kind == PassViewNode::Kind::Op && v.node(e.to)->owner == 0 &&
          v.node(e.from)->owner == 0)
        QVERIFY2(v.index.at(e.from) < v.index.at(e.to), qPrintable(where + ": an edge runs backwards"));
    }
    // A ghost keeps its edges: a removed node that read anything is drawn with an edge into it.
    std::set<int64_t> fed;
    for (const NodeEdge& e : v.edges) fed.insert(e.to);
    const GraphSnapshot earlier = reader.graphAt(rec.runId, from);
    for (const EdgeRow& e : earlier.edges)
      if (wantRemoved.count(e.consumerNode) && earlier.value(e.valueId) &&
          (earlier.value(e.valueId)->producerNode || earlier.value(e.valueId)->isInput) &&
          !earlier.value(e.valueId)->isConstant)
        QVERIFY2(fed.count(e.consumerNode), qPrintable(where + ": a ghost lost its input edge"));
    // The groups cover the union.
    QVERIFY(v.scopes);
    if (!wantRemoved.empty()) ++withGhosts;
    if (wantAdded.empty() && wantRemoved.empty()) ++annotatingOnly;
  }
  QVERIFY2(withGhosts > 0, "no pass removed a node: the re-arranged path went unchecked");
  QVERIFY2(annotatingOnly > 0, "no pass kept every node: the arranged-once path went unchecked");
}

}  // namespace

class PassViewTest : public QObject {
  Q_OBJECT

 private slots:
  void everyPassOfALlamaMatchesTheGraphsItCompares() {
    QTemporaryDir dir;
    SampleOptions so;
    so.layers = 2;
    so.weights = false;
    auto model = buildSample("llama", so);
    checkEveryPass(*model, dir.filePath("llama.db").toStdString());
  }

  void everyPassWithControlFlowBodiesMatches() {
    QTemporaryDir dir;
    auto cf = testing::makeControlFlowModel();
    checkEveryPass(cf->model, dir.filePath("cf.db").toStdString());
  }

  void noComparisonLeavesEveryNodeUnchanged() {
    QTemporaryDir dir;
    HistoryDb db(dir.filePath("h.db").toStdString());
    auto model = buildSample("mobilenetv2", {});
    const testing::RecordedCompile rec = testing::compileRecorded(*model, db);
    QCOMPARE(rec.summary.status, RunStatus::Ok);
    HistoryReader reader(db);
    const int last = reader.passes(rec.runId).back().seq;
    const PassView v = buildPassView(reader, rec.runId, last, -1);
    for (const PassViewNode& n : v.nodes) QCOMPARE(n.state, NodeState::Unchanged);
    QCOMPARE(v.ops, static_cast<int64_t>(drawnOps(reader.graphAt(rec.runId, last)).size()));
    // Compiled nodes carry their compute unit and offsets: the overlay menu offers them.
    QVERIFY(v.annotationKeys && v.annotationKeys->units && v.annotationKeys->planned);
    QCOMPARE(findAnnotationKeys(v).numeric, v.annotationKeys->numeric);
  }

  void annotationsOfAnyToolAreReadAsFarAsTheyCanBe() {
    std::deque<std::string> decoded;
    auto read = [&](const std::string& text) {
      std::map<std::string, std::string> out;
      for (const auto& [k, v] : readableAnnotations(text, decoded)) out[std::string(k)] = std::string(v);
      return out;
    };
    using M = std::map<std::string, std::string>;
    QCOMPARE(read("{\"unit\":\"cube\",\"mem.out\":\"1024\"}"), (M{{"mem.out", "1024"}, {"unit", "cube"}}));
    QCOMPARE(read("{\"a\\\"b\":\"x\\ny\"}"), (M{{"a\"b", "x\ny"}}));
    // Another tool's numbers and nested values: the strings are kept, the rest skipped.
    QCOMPARE(read("{\"unit\":\"vector\",\"cost\":12,\"nested\":{\"a\":\"b\"},\"ok\":\"yes\"}"),
             (M{{"ok", "yes"}, {"unit", "vector"}}));
    QCOMPARE(read(""), M{});
    QCOMPARE(read("not json"), M{});
    QCOMPARE(read("[\"unit\",\"cube\"]"), M{});
    QCOMPARE(read("{\"unit\":\"cube\""), M{});
    QCOMPARE(read(std::string(10000, '[')), M{});  // deep nesting is refused, not recursed into
  }
};

QTEST_GUILESS_MAIN(PassViewTest)
#include "test_pass_view.moc"
