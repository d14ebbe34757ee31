// GE graph dump import: our own ge_proto dumps of a compile (DumpObserver, GeProto) imported back become one run
// whose passes carry the same names in the same order, whose final graph is the compiled one (plus GE's Data,
// Const and NetOutput ops), and whose diffs show what each stage changed: ops matched by name keep their ids.
// Broken folders are refused naming the file.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "history/history_db.h"
#include "history/history_reader.h"
#include "history/ge_dump_import.h"
#include "util/load_error.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"

using namespace kiln;

class GeDumpImportTest : public QObject {
  Q_OBJECT
 private slots:
  void ourOwnDumpsReproduceTheRun() {
    QTemporaryDir dir;
    const std::string dumps = dir.filePath("dumps").toStdString();
    auto m = buildSample("mobilenetv2");
    const Options o;
    PassManager pm;
    addStandardPasses(pm, o);
    DumpObserver dump(dumps, DumpFormat::GeProto);
    pm.addObserver(&dump);
    const RunSummary s = pm.run(*m, o);
    QVERIFY2(s.status == RunStatus::Ok, s.error.c_str());

    HistoryDb db(dir.filePath("h.db").toStdString());
    const gedump::ImportResult imported = gedump::importDumps({dumps}, db);
    QCOMPARE(imported.runs.size(), size_t(1));
    const gedump::ImportedRun& r = imported.runs[0];
    QCOMPARE(r.stages, int(s.passes.size()) + 1);
    HistoryReader reader(db);
    const auto passes = reader.passes(r.runId);
    QCOMPARE(passes.size(), s.passes.size() + 1);
    for (size_t i = 0; i < s.passes.size(); ++i) QCOMPARE(passes[i + 1].name, s.passes[i].name);
    // GE's graph has a Data op per input, a Const per weight an op reads and a NetOutput around the compiled nodes.
    int64_t extra = int64_t(m->graph->inputs().size()) + 1;
    for (const Value* w : m->graph->initializers()) extra += w->hasUses();
    QCOMPARE(passes.back().nodesAfter.value_or(-1), s.nodesAfter + extra);
    // GraphFusion replaced Conv/BatchNorm/Clip groups by fused convolutions: removed and added in its diff.
    int fusion = -1;
    for (const auto& p : passes)
      if (p.name == "GraphFusion") fusion = p.seq;
    QVERIFY(fusion > 0);
    const GraphDiff d = reader.diff(r.runId, fusion);
    QVERIFY(!d.removedNodes.empty());
    QVERIFY(!d.addedNodes.empty());
    // An op no pass touches (the classifier's Gemm) kept its id from the first dump to the last.
    const GraphDiff whole = reader.diff(r.runId, 0, passes.back().seq);
    for (const auto& n : whole.removedNodes) QVERIFY2(n.opType != "Gemm", "the Gemm lost its identity");
  }

  void brokenFoldersAreRefusedNamingTheFile() {
    QTemporaryDir dir;
    HistoryDb db(dir.filePath("h.db").toStdString());
    const std::string empty = dir.filePath("empty").toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(empty)));
    QVERIFY_THROWS_EXCEPTION(LoadError, gedump::importDumps({empty}, db));
    const std::string bad = dir.filePath("bad").toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(bad)));
    std::ofstream(bad + "/ge_proto_00000000_graph_0_PreRunBegin.txt") << "graph { op { name: \"x\" type: ";
    try {
      gedump::importDumps({bad}, db);
      QFAIL("a truncated dump was imported");
    } catch (const LoadError& e) {
      QVERIFY2(QString::fromStdString(e.describe()).contains("ge_proto_00000000_graph_0_PreRunBegin.txt"),
               e.describe().c_str());
    }
    // Nothing half-imported is left as a finished run.
    HistoryReader reader(db);
    for (const auto& run : reader.listRuns()) QVERIFY(run.status != "ok");
  }
};

QTEST_GUILESS_MAIN(GeDumpImportTest)
#include "test_ge_dump_import.moc"
