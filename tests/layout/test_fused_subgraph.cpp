// Fusions read back from the history: every fused node the compiler made has a record (rule, pass, replaced
// nodes, HBM saved), every replaced node leads to the fusion that absorbed it, and the replaced nodes are drawn as
// the subgraph they were just before the fusion, with terminals where values cross its boundary.
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "history/history_recorder.h"
#include "layout/fused_subgraph.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/compile_summary.h"
#include "samples/sample_models.h"
#include "support/recorded_compile.h"

using namespace kiln;
using namespace kiln::layout;

class FusedSubgraphTest : public QObject {
  Q_OBJECT

 private slots:
  void everyFusionIsReadBackAndDrawn() {
    QTemporaryDir tmp;
    const std::string dbPath = tmp.filePath("h.db").toStdString();
    std::unique_ptr<Model> model = buildSample("mobilenetv2");
    HistoryDb db(dbPath);
    const testing::RecordedCompile rec = testing::compileRecorded(*model, db, "mobilenetv2.onnx");
    const RunSummary& s = rec.summary;
    QCOMPARE(int(s.status), int(RunStatus::Ok));
    const CompileSummary summary = summarizeCompile(*model, s);
    QVERIFY(!summary.fused.empty());

    HistoryReader reader(db);
    const FusionIndex index = readFusions(reader, rec.runId);
    const int last = reader.passes(rec.runId).back().seq;
    const GraphSnapshot final = reader.graphAt(rec.runId, last);
    // Every fused node of the compiled graph has its record.
    int fusedInFinal = 0;
    for (const NodeRow& n : final.nodes)
      if (n.annotationsJson.find("\"fusion.rule\"") != std::string::npos) {
        ++fusedInFinal;
        const FusionRecord* f = index.fusion(n.id);
        QVERIFY(f);
        QVERIFY(!f->rule.empty() && !f->replaced.empty());
        QVERIFY(index.absorberChain(n.id).empty());  // nothing absorbed it
      }
    QVERIFY(fusedInFinal > 0);
    QVERIFY(int(index.records().size()) >= fusedInFinal);

    for (const FusionRecord& f : index.records()) {
      QVERIFY2(!f.replaced.empty(), f.rule.c_str());
      QVERIFY(f.pass > 0);
      for (int64_t id : f.replaced) {
        QVERIFY(!final.node(id));  // replaced nodes are gone from the compiled graph
        const auto chain = index.absorberChain(id);
        QVERIFY(std::find(chain.begin(), chain.end(), &f) != chain.end());
        for (size_t i = 1; i < chain.size(); ++i) QVERIFY(chain[i - 1]->pass < chain[i]->pass);
        QVERIFY(final.node(chain.back()->fusedNode));  // the chain ends at a node of the compiled graph
      }
      const PassView v = buildFusedSubgraphView(reader, rec.runId, index, f);
      QVERIFY(v.toPass < f.pass);
      QVERIFY2(v.ops > 0, f.rule.c_str());
      int inputs = 0, outputs = 0;
      for (const PassViewNode& n : v.nodes) {
        if (n.kind == PassViewNode::Kind::Input) ++inputs;
        if (n.kind == PassViewNode::Kind::Output) ++outputs;
        if (n.kind == PassViewNode::Kind::Op) {
          QVERIFY(v.after.node(n.id));  // present in the pass before the fusion
          // Drawn nodes are replaced originals, or fused nodes standing for some of them, that f absorbed.
          const auto chain = index.absorberChain(n.id);
          QVERIFY2(std::find(chain.begin(), chain.end(), &f) != chain.end(), qPrintable(QString::fromStdString(n.name)));
        }
      }
      QVERIFY2(inputs > 0 && outputs > 0, f.rule.c_str());
      for (const NodeEdge& e : v.edges) QVERIFY(v.node(e.from) && v.node(e.to));
    }
    QCOMPARE(index.absorber(-1), nullptr);
    QCOMPARE(index.fusion(-1), nullptr);
  }
};

QTEST_GUILESS_MAIN(FusedSubgraphTest)
#include "test_fused_subgraph.moc"
