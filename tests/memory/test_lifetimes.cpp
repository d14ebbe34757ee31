// Stage 3 on small hand-scheduled graphs: tensor lifetimes (one stream, two streams with and without an event,
// aliasing Reshape, fixed inputs/outputs/weights, symbolic sizes), the task list built from the annotations, and
// both Stage 3 passes over generated models with every plan checked by the independent validator.
#include <QtTest>

#include "ir/graph.h"
#include "ir/model.h"
#include "memory/lifetimes.h"
#include "memory/memory_plan.h"
#include "memory/reuse_handoffs.h"
#include "memory/stretch_within_bound.h"
#include "passes/compile/compile_passes.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "schedule/happens_before.h"
#include "schedule/task_list.h"
#include "support/pass_test_support.h"

using namespace kiln;
using namespace kiln::memory;

namespace {

ValueType f32(std::vector<int64_t> dims) { return ValueType::tensor(DType::Float, Shape::ofStatic(dims)); }

// x -> a -> b -> c -> y on the streams given per node; the tests add annotations.
struct Chain {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  Graph& g = *m->graph;
  std::vector<Node*> nodes;
  Chain(int n, const std::vector<int>& streams) {
    m->opsets[""] = 17;
    Value* v = g.addInput("x", f32({4, 8}));
    for (int i = 0; i < n; ++i) {
      Node* node = g.addNode("Relu", {v}, 1, "n" + std::to_string(i));
      node->output(0)->setType(f32({4, 8}));
      node->setAnnotation("engine", "aicore");
      node->setAnnotation("unit", "vector");
      node->setAnnotation("stream", std::to_string(streams[size_t(i)]));
      nodes.push_back(node);
      v = node->output(0);
    }
    g.addOutput(v);
  }
};

const int64_t kBytes = geTensorBytes(4 * 8 * 4);

}  // namespace

class LifetimesTest : public QObject {
  Q_OBJECT
 private slots:
  void geSizeRule() {
    QCOMPARE(geTensorBytes(1), int64_t{64});
    QCOMPARE(geTensorBytes(32), int64_t{64});
    QCOMPARE(geTensorBytes(33), int64_t{96});
    QCOMPARE(kBytes, int64_t{160});
  }

  void oneStreamLivesFromProducerToLastReader() {
    Chain c(4, {0, 0, 0, 0});
    const Lifetimes life = computeLifetimes(c.g);
    QCOMPARE(life.blocks.size(), size_t(3));  // n0..n2 outputs; n3's is the graph output
    for (int i = 0; i < 3; ++i) {
      const TensorLifetime* t = life.find(c.nodes[size_t(i)]->output(0));
      QVERIFY(t);
      QCOMPARE(t->kind, TensorKind::Arena);
      QCOMPARE(t->first, int64_t(i));
      QCOMPARE(t->end, int64_t(i + 2));  // read by the next node
      QCOMPARE(t->bytes, kBytes);
    }
    QCOMPARE(life.find(c.g.inputs()[0])->kind, TensorKind::GraphInput);
    QCOMPARE(life.find(c.nodes[3]->output(0))->kind, TensorKind::GraphOutput);
    QCOMPARE(life.noReuseBytes, 3 * kBytes);
    QCOMPARE(lowerBound(life.blocks), 2 * kBytes);
  }

  // n0, n1 on stream 0; n2, n3 on stream 1. n0's output is read only by n1, yet stream 1 runs concurrently: its
  // tasks may reuse that block only once they know n1 finished (an event path).
  void crossStreamReuseNeedsAnEventPath() {
    {
      Chain c(4, {0, 0, 1, 1});
      // No event at all: nothing on stream 1 ever comes after n1.
      const Lifetimes life = computeLifetimes(c.g);
      const TensorLifetime* a = life.find(c.nodes[0]->output(0));
      QCOMPARE(a->end, int64_t(2));  // its last reader is n1
      HappensBefore hb(stepNodes(c.g, life));
      hb.runToEnd();
      QVERIFY(!hb.knows(2, 1));
      // Planned without new events, it stays taken past stream 1's last task.
      QCOMPARE(streamOrderedBlocks(life, hb)[size_t(a->block)].upper, int64_t(4));
    }
    {
      Chain c(4, {0, 0, 1, 1});
      c.nodes[1]->setAnnotation("event.record", "0");
      c.nodes[2]->setAnnotation("event.wait", "0");
      const Lifetimes life = computeLifetimes(c.g);
      HappensBefore hb(stepNodes(c.g, life));
      hb.runToEnd();
      QVERIFY(hb.knows(2, 1));
      QVERIFY(hb.knows(3, 0));  // through n1's event
      const std::vector<Buffer> ordered = streamOrderedBlocks(life, hb);
      QCOMPARE(ordered[size_t(life.find(c.nodes[0]->output(0))->block)].upper, int64_t(2));  // n2 waited for n1
      QCOMPARE(ordered[size_t(life.find(c.nodes[1]->output(0))->block)].upper, int64_t(3));
    }
  }

  // n0 -> n1 on stream 0, n2 -> n3 on stream 1 with n2 reading x: n2's output may take n0's bytes only after n1 (the
  // last reader of n0's output) is known to have finished. The checker sees the missing event; MemoryReuseEvents
  // adds it at the reusing step, and only there.
  void aReuseAcrossStreamsIsOrderedByAnEvent() {
    auto m = std::make_unique<Model>();
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32({4, 8}));
    auto relu = [&](Value* in, const char* name, int stream) {
      Node* n = g.addNode("Relu", {in}, 1, name);
      n->output(0)->setType(f32({4, 8}));
      n->setAnnotation("engine", "aicore");
      n->setAnnotation("stream", std::to_string(stream));
      return n;
    };
    Node* n0 = relu(x, "n0", 0);
    Node* n1 = relu(n0->output(0), "n1", 0);
    Node* n2 = relu(x, "n2", 1);
    Node* n3 = relu(n2->output(0), "n3", 1);
    g.addOutput(n1->output(0));
    g.addOutput(n3->output(0));
    n0->setAnnotation("mem.out", "0");
    n2->setAnnotation("mem.out", "0");  // the same bytes: n0's output is dead after n1 (step 1), n2 writes at step 2
    const Lifetimes life = computeLifetimes(g);
    const std::vector<UnorderedReuse> missing = unorderedReuses(g);
    QCOMPARE(missing.size(), size_t(1));
    QCOMPARE(missing[0].step, int64_t(2));
    QCOMPARE(missing[0].reader, int64_t(1));
    QCOMPARE(missing[0].previous, life.find(n0->output(0))->block);

    Options o;
    std::vector<std::string> warnings;
    PassContext ctx{*m, o, warnings};
    const PassResult r = makeMemoryReuseEventsPass()->run(ctx);
    QCOMPARE(r.counters.at("reuse_events"), int64_t(1));
    QVERIFY(!n1->annotation("event.record").empty());
    QCOMPARE(n2->annotation("event.wait"), n1->annotation("event.record"));
    QVERIFY(unorderedReuses(g).empty());
    QCOMPARE(makeMemoryReuseEventsPass()->run(ctx).counters.at("reuse_events"), int64_t(0));  // nothing left to add
  }

  // The events plan takes each stretch that keeps the peak at the unstretched bound, smallest blocks first.
  void stretchingStaysWithinTheBound() {
    //        steps: 0 1 2 3 4 5
    // a (10)        [-)              stretched to 6: would sit on b and c at step 1 (30 > 20)
    // b (10)          [-----)        stretched to 5: fits (nothing else lives at step 4)
    // c (10)          [---)
    const std::vector<Buffer> blocks = {{0, 0, 1, 10}, {1, 1, 4, 10}, {2, 1, 3, 10}};
    std::vector<Buffer> stretched = blocks;
    stretched[0].upper = 6;
    stretched[1].upper = 5;
    const std::vector<Buffer> got = stretchedWithinBound(blocks, stretched);
    QCOMPARE(lowerBound(blocks), int64_t(20));
    QCOMPARE(got[0].upper, int64_t(1));
    QCOMPARE(got[1].upper, int64_t(5));
    QCOMPARE(got[2].upper, int64_t(3));
    // Random instances: the bound never moves, every block ends where one of the two said.
    uint64_t seed = 7;
    auto next = [&](int64_t n) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      return int64_t((seed >> 33) % uint64_t(n));
    };
    for (int round = 0; round < 200; ++round) {
      std::vector<Buffer> bs, st;
      for (int i = 0; i < 30; ++i) {
        const int64_t lo = next(40), up = lo + 1 + next(8);
        bs.push_back({i, lo, up, 1 + next(100)});
        st.push_back(bs.back());
        st.back().upper = up + next(20);
      }
      const std::vector<Buffer> r = stretchedWithinBound(bs, st);
      QCOMPARE(lowerBound(r), lowerBound(bs));
      for (size_t i = 0; i < r.size(); ++i) QVERIFY(r[i].upper == bs[i].upper || r[i].upper == st[i].upper);
    }
  }

  void reshapeSharesItsInputsBlock() {
    Chain c(3, {0, 0, 0});
    Graph& g = c.g;
    // n0 -> Reshape -> n1 (reads the reshaped tensor), n2 as before
    Value* shape = g.addInitializer("shape", Tensor::fromVector(DType::Int64, {2}, std::vector<int64_t>{8, 4}));
    Node* r = g.addNode("Reshape", {c.nodes[0]->output(0), shape}, 1, "reshape");
    r->output(0)->setType(f32({8, 4}));
    g.moveBefore(r, c.nodes[1]);
    g.setNodeInput(c.nodes[1], 0, r->output(0));
    const Lifetimes life = computeLifetimes(g);
    const TensorLifetime* in = life.find(c.nodes[0]->output(0));
    const TensorLifetime* out = life.find(r->output(0));
    QCOMPARE(in->block, out->block);
    QCOMPARE(life.blocks[size_t(in->block)].upper, int64_t(3));  // n1 at step 2 reads the alias
    QCOMPARE(life.find(shape)->kind, TensorKind::Weight);
    QVERIFY(aliasesInput(*r));
  }

  void symbolicTensorsAreCountedNotPlanned() {
    Chain c(3, {0, 0, 0});
    c.nodes[0]->output(0)->setType(
        ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::fixed(8)})));
    const Lifetimes life = computeLifetimes(c.g);
    QCOMPARE(life.unsized, 1);
    QCOMPARE(life.unsizedSymbols, std::vector<std::string>{"batch"});
    QCOMPARE(life.find(c.nodes[0]->output(0))->kind, TensorKind::Unsized);
    QCOMPARE(life.blocks.size(), size_t(1));
  }

  void taskListFollowsTheAnnotations() {
    Chain c(4, {0, 0, 1, 1});
    c.nodes[1]->setAnnotation("event.record", "0");
    c.nodes[2]->setAnnotation("event.wait", "0");
    c.nodes[3]->setAnnotation("engine", "aicpu");
    const std::vector<Task> tasks = buildTaskList(c.g, 32);
    QStringList got;
    for (const Task& t : tasks)
      got << QString("%1@%2%3")
                 .arg(QString::fromLatin1(taskTypeName(t.type).data(), int(taskTypeName(t.type).size())))
                 .arg(t.stream)
                 .arg(t.event >= 0 ? QString("#%1").arg(t.event) : QString());
    const QStringList want{"KERNEL@0",       "KERNEL@0",        "EVENT_RECORD@0#0", "EVENT_WAIT@1#0", "KERNEL@1",
                           "KERNEL_EX@1",    "EVENT_RECORD@1#1", "EVENT_WAIT@0#1",  "END_GRAPH@0"};
    QCOMPARE(got, want);
    QCOMPARE(tasks[0].blockDim, int64_t{1});  // 128 bytes: one 8 KiB vector block
  }

  void blockDimGrowsWithTheOutputUpToTheCores() {
    Chain c(1, {0});
    c.nodes[0]->output(0)->setType(f32({1024, 1024}));
    QCOMPARE(blockDimOf(*c.nodes[0], 32), int64_t{32});
    QCOMPARE(blockDimOf(*c.nodes[0], 2), int64_t{2});
    QCOMPARE(aiCoreCount("Ascend310"), 2);
  }

  // The whole pipeline: both Stage 3 passes run, every node has its slots' offsets, the arena holds the plan's
  // blocks and no two live blocks overlap (the validator is independent of the planners).
  void stage3OverGeneratedModels_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("planner");
    QTest::addColumn<bool>("weights");
    QTest::addColumn<QString>("across");
    for (const char* s : {"resnet50", "mobilenetv2"})
      for (const char* p : {"auto", "none", "greedy_size"})
        QTest::newRow(qPrintable(QString("%1 %2").arg(s, p))) << s << p << true << "auto";
    // Weights as graph inputs: their casts run on side streams that never wait for the main one.
    for (const char* a : {"auto", "events", "ordered"})
      QTest::newRow(qPrintable(QString("resnet50 no weights, across streams %1").arg(a)))
          << "resnet50" << "auto" << false << a;
  }
  void stage3OverGeneratedModels() {
    QFETCH(QString, sample);
    QFETCH(QString, planner);
    QFETCH(bool, weights);
    QFETCH(QString, across);
    SampleOptions so;
    so.weights = weights;
    so.layers = weights ? 0 : 8;
    auto m = buildSample(sample.toStdString(), so);
    Options o;
    o.set("memory.planner=" + planner.toStdString());
    o.set("memory.reuse_across_streams=" + across.toStdString());
    PassManager pm;
    addStandardPasses(pm, o);
    const RunSummary s = pm.run(*m, o);
    QVERIFY2(s.status == RunStatus::Ok, s.error.c_str());
    const PassRecord* mem = nullptr;
    const PassRecord* tasks = nullptr;
    for (const PassRecord& r : s.passes) {
      if (r.name == "MemoryAssignment") mem = &r;
      if (r.name == "TaskGeneration") tasks = &r;
    }
    QVERIFY(mem && tasks);
    const Lifetimes life = computeLifetimes(*m->graph);
    Plan plan;
    plan.planner = planner.toStdString();
    plan.alignment = kArenaAlignment;
    // Read the offsets back from the annotations: what the .om writer and the emulator will see.
    plan.offset.assign(life.blocks.size(), -1);
    for (Node* n : m->graph->nodes()) {
      const QStringList outs = QString::fromStdString(n->annotation("mem.out")).split(',');
      QCOMPARE(qsizetype(n->numOutputs()), outs.size());
      for (size_t i = 0; i < n->numOutputs(); ++i) {
        const TensorLifetime* t = life.find(n->output(i));
        if (!t || t->kind != TensorKind::Arena) continue;
        bool ok = false;
        const int64_t off = outs[qsizetype(i)].toLongLong(&ok);
        QVERIFY(ok);
        plan.offset[size_t(t->block)] = off;
      }
    }
    for (const Buffer& b : life.blocks) plan.arenaBytes = std::max(plan.arenaBytes, plan.offset[size_t(b.id)] + b.size);
    QCOMPARE(validatePlan(life.blocks, plan), std::string());
    QCOMPARE(unorderedReuses(*m->graph).size(), size_t(0));  // every reuse across streams waits for its last reader
    const PassRecord* reuseEvents = nullptr;
    for (const PassRecord& r : s.passes)
      if (r.name == "MemoryReuseEvents") reuseEvents = &r;
    QVERIFY(reuseEvents);
    const bool byEvents = mem->counters.count("reuse_by_events") > 0;
    QCOMPARE(byEvents, mem->counters.count("reuse_where_ordered") == 0);
    if (across == "ordered" || !byEvents) QCOMPARE(reuseEvents->counters.at("reuse_events"), int64_t(0));
    if (across == "events") QVERIFY(byEvents);
    if (!weights && across != "ordered") {
      // Without the events, activations stay taken until the weight streams end: no reuse worth the name.
      QVERIFY(byEvents);
      QVERIFY(reuseEvents->counters.at("reuse_events") > 0);
      QVERIFY(mem->counters.at("memory_size") * 4 < mem->counters.at("no_reuse_bytes"));
    }
    // The pass plans blocks rounded up to the 512-byte alignment: its arena ends at most one round-up later.
    QVERIFY(mem->counters.at("memory_size") >= plan.arenaBytes);
    QVERIFY(mem->counters.at("memory_size") - plan.arenaBytes < kArenaAlignment);
    QVERIFY(mem->counters.at("lower_bound") <= mem->counters.at("memory_size"));
    if (planner == "none") QCOMPARE(mem->counters.at("memory_size"), mem->counters.at("no_reuse_bytes"));
    else QVERIFY(mem->counters.at("memory_size") < mem->counters.at("no_reuse_bytes"));
    QVERIFY(tasks->counters.at("kernel") > 0);
    QCOMPARE(tasks->counters.at("end_graph"), int64_t{1});
    qInfo("%s %s%s across %s: arena %lld, lower bound %lld, no reuse %lld, %lld tasks", qPrintable(sample),
          qPrintable(planner), weights ? "" : " (no weights)", qPrintable(across), static_cast<long long>(plan.arenaBytes),
          static_cast<long long>(mem->counters.at("lower_bound")),
          static_cast<long long>(mem->counters.at("no_reuse_bytes")),
          static_cast<long long>(tasks->counters.at("tasks")));
  }
};

QTEST_GUILESS_MAIN(LifetimesTest)
#include "test_lifetimes.moc"
