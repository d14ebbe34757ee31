// Where and in which order nodes run: the four topological orders, stream assignment (dependency, limits, single
// stream, cube/vector split, user labels, AI CPU on its own), events and the removal of redundant ones (checked
// against an independent happens-before search), engine partition without cycles, and the whole Stage 2 schedule
// on the generated BERT.
#include <QtTest>

#include <deque>
#include <set>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "passes/optimize/schedule_passes.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "schedule/stream_assigner.h"
#include "schedule/sync_events.h"
#include "schedule/topo_order.h"
#include "support/pass_test_support.h"

using namespace kiln;
using kiln::testing::counter;

namespace {

ValueType f32() { return ValueType::tensor(DType::Float, Shape::ofStatic({4})); }

// x -> a=Relu -> b=Relu ─┐
// x -> c=Sigmoid -> d=Sigmoid ─> e=Add(b, d) -> output; node list order a, c, b, d, e.
struct Diamond {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  Node *a, *b, *c, *d, *e;
  Diamond() {
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32());
    a = g.addNode("Relu", {x}, {"a"}, "a");
    c = g.addNode("Sigmoid", {x}, {"c"}, "c");
    b = g.addNode("Relu", {a->output(0)}, {"b"}, "b");
    d = g.addNode("Sigmoid", {c->output(0)}, {"d"}, "d");
    e = g.addNode("Add", {b->output(0), d->output(0)}, {"e"}, "e");
    g.addOutput(e->output(0));
    inferShapes(*m);
    for (Node* n : g.nodes()) {
      n->setAnnotation("engine", "aicore");
      n->setAnnotation("unit", "vector");
    }
  }
  std::vector<Node*> order() const { return {m->graph->nodes().begin(), m->graph->nodes().end()}; }
};

QString names(const std::vector<Node*>& nodes) {
  QString s;
  for (const Node* n : nodes) s += QString::fromStdString(n->name());
  return s;
}

std::map<std::string, int> streamsByName(const StreamPlan& p) {
  std::map<std::string, int> out;
  for (const auto& [n, s] : p.streamOf) out[n->name()] = s;
  return out;
}

// Independent check: every producer -> consumer edge across streams is ordered by the happens-before graph made of
// stream order (consecutive nodes of one stream) and the events. Plain search, no vector clocks.
QString unsynchronisedEdges(const std::vector<Node*>& order, const FlatPtrMap<const Node*, int>& streamOf,
                            const std::vector<SyncEvent>& events) {
  std::unordered_map<const Node*, std::vector<const Node*>> next;
  std::map<int, const Node*> lastOnStream;
  for (const Node* n : order) {
    const int s = streamOf.at(n);
    if (auto it = lastOnStream.find(s); it != lastOnStream.end()) next[it->second].push_back(n);
    lastOnStream[s] = n;
  }
  for (const SyncEvent& e : events) next[e.producer].push_back(e.consumer);
  QString bad;
  for (const Node* c : order)
    for (const Node* p : c->graph()->predecessorsOf(*c)) {
      if (streamOf.at(p) == streamOf.at(c)) continue;
      std::set<const Node*> seen{p};
      std::deque<const Node*> q{p};
      bool reached = false;
      while (!q.empty() && !reached) {
        const Node* x = q.front();
        q.pop_front();
        for (const Node* y : next[x]) {
          reached = reached || y == c;
          if (seen.insert(y).second) q.push_back(y);
        }
      }
      if (!reached) bad += QString::fromStdString(p->name() + "->" + c->name() + " ");
    }
  return bad;
}

}  // namespace

class ScheduleTest : public QObject {
  Q_OBJECT
 private slots:
  void topologicalOrdersFollowTheirMode() {
    Diamond t;
    QCOMPARE(names(*topoOrder(*t.m->graph, TopoMode::BFS)), QString("acbde"));
    QCOMPARE(names(*topoOrder(*t.m->graph, TopoMode::DFS)), QString("abcde"));
    QCOMPARE(names(*topoOrder(*t.m->graph, TopoMode::RDFS)), QString("cdabe"));
    QCOMPARE(names(*topoOrder(*t.m->graph, TopoMode::StableRDFS)), QString("abcde"));
  }

  void topologicalSortPassReordersTheNodeList() {
    Diamond t;
    Options o;
    o.set("topo_sorting_mode=1");
    const PassResult r = testing::runPass(*makeTopologicalSortPass(), *t.m, o);
    QCOMPARE(names(t.order()), QString("abcde"));
    QCOMPARE(counter(r, "moved"), 2);  // c and b swapped places
  }

  void independentBranchesGetTheirOwnStream() {
    Diamond t;
    t.m->graph->moveBefore(t.b, t.c);  // DFS order a b c d e
    const StreamPlan p = assignStreams(t.order(), StreamPolicy{});
    const std::map<std::string, int> want{{"a", 0}, {"b", 0}, {"c", 1}, {"d", 1}, {"e", 0}};
    QCOMPARE(streamsByName(p), want);
    QCOMPARE(p.streams.size(), size_t(2));
    QCOMPARE(p.reason.at(t.b), std::string("continues its producer's stream"));
    const auto events = crossStreamEvents(t.order(), p.streamOf);
    QCOMPARE(events.size(), size_t(1));
    QCOMPARE(events[0].producer, t.d);
    QCOMPARE(events[0].consumer, t.e);
  }

  void streamPoliciesFromOptions() {
    Diamond t;
    t.m->graph->moveBefore(t.b, t.c);
    Options single;
    single.set("enable_single_stream=true");
    QCOMPARE(assignStreams(t.order(), StreamPolicy::fromOptions(single)).streams.size(), size_t(1));
    Options limited;
    limited.set("stream_max_parallel_num=AIcoreEngine:1");
    QCOMPARE(assignStreams(t.order(), StreamPolicy::fromOptions(limited)).streams.size(), size_t(1));
    Options balanced;
    balanced.set("multi_stream_parallel_mode=LoadBalance:1");
    QCOMPARE(assignStreams(t.order(), StreamPolicy::fromOptions(balanced)).streams.size(), size_t(1));
    // cv: the cube chain and the vector chain each get a stream; e (vector) continues the vector one.
    t.a->setAnnotation("unit", "cube");
    t.b->setAnnotation("unit", "cube");
    Options cv;
    cv.set("multi_stream_parallel_mode=cv");
    const StreamPlan p = assignStreams(t.order(), StreamPolicy::fromOptions(cv));
    QCOMPARE(p.streams.size(), size_t(2));
    QCOMPARE(p.streams[0].engineClass, std::string("aicore.cube"));
    QCOMPARE(p.streamOf.at(t.e), p.streamOf.at(t.d));
    for (const char* bad : {"stream_max_parallel_num=AIcoreEngine:0", "stream_max_parallel_num=GpuEngine:2",
                            "stream_max_parallel_num=AIcoreEngine", "multi_stream_parallel_mode=LoadBalance:0",
                            "multi_stream_parallel_mode=LoadBalance:99999999999"}) {
      Options o;
      QVERIFY_THROWS_EXCEPTION(OptionError, o.set(bad));
    }
  }

  void labelsAndAiCpuGetStreamsOfTheirOwn() {
    Diamond t;
    t.m->graph->moveBefore(t.b, t.c);
    t.a->setAttr("_user_stream_label", Attribute(std::string("side")));
    t.e->setAttr("_user_stream_label", Attribute(std::string("side")));
    t.c->setAnnotation("engine", "aicpu");
    const StreamPlan p = assignStreams(t.order(), StreamPolicy{});
    QCOMPARE(p.streamOf.at(t.a), p.streamOf.at(t.e));
    QCOMPARE(p.streams[static_cast<size_t>(p.streamOf.at(t.a))].engineClass, std::string("label:side"));
    QCOMPARE(p.streams[static_cast<size_t>(p.streamOf.at(t.c))].engineClass, std::string("aicpu"));
    QVERIFY(p.streamOf.at(t.d) != p.streamOf.at(t.c));  // d is AI Core work after an AI CPU node
  }

  void redundantEventsAreThoseOthersImply() {
    // s0: p1 -> p2; s1: c1(p2) -> c2(p1, c1). c2's wait for p1 is implied by c1's wait for p2 (p2 runs after p1).
    // s2: t(p1, c2): its wait for p1 is implied through s1 (c2 waited for ... p2 after p1), only c2 -> t is needed.
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32());
    Node* p1 = g.addNode("Relu", {x}, {"p1"}, "p1");
    Node* p2 = g.addNode("Relu", {p1->output(0)}, {"p2"}, "p2");
    Node* c1 = g.addNode("Relu", {p2->output(0)}, {"c1"}, "c1");
    Node* c2 = g.addNode("Add", {p1->output(0), c1->output(0)}, {"c2"}, "c2");
    Node* t3 = g.addNode("Add", {p1->output(0), c2->output(0)}, {"t"}, "t");
    g.addOutput(t3->output(0));
    const std::vector<Node*> order{p1, p2, c1, c2, t3};
    const FlatPtrMap<const Node*, int> streamOf{{p1, 0}, {p2, 0}, {c1, 1}, {c2, 1}, {t3, 2}};
    const auto all = crossStreamEvents(order, streamOf);
    QCOMPARE(all.size(), size_t(4));  // p2->c1, p1->c2, p1->t, c2->t
    const auto kept = withoutRedundantEvents(order, streamOf, all);
    QCOMPARE(kept.size(), size_t(2));
    QCOMPARE(kept[0].producer, p2);
    QCOMPARE(kept[1].producer, c2);
    QCOMPARE(unsynchronisedEdges(order, streamOf, kept), QString());
    // Dropping one more leaves an edge unordered, which the independent check sees.
    QVERIFY(!unsynchronisedEdges(order, streamOf, {kept[0]}).isEmpty());
  }

  void partitionNeverClosesACycle() {
    // a (aicore) -> b (aicpu) -> c (aicore), and a -> c: c may not join a's group, or the groups would form a
    // cycle a -> b -> a. A Reshape-like host node between aicore nodes stays in their group.
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32());
    Node* a = g.addNode("Relu", {x}, {"a"}, "a");
    Node* b = g.addNode("Relu", {a->output(0)}, {"b"}, "b");
    Node* c = g.addNode("Add", {a->output(0), b->output(0)}, {"c"}, "c");
    Node* h = g.addNode("Identity", {c->output(0)}, {"h"}, "h");
    Node* d = g.addNode("Relu", {h->output(0)}, {"d"}, "d");
    g.addOutput(d->output(0));
    for (Node* n : {a, c, d}) n->setAnnotation("engine", "aicore");
    b->setAnnotation("engine", "aicpu");
    h->setAnnotation("engine", "host");
    const PassResult r = testing::runPass(*makeEnginePartitionPass(), m);
    QCOMPARE(a->annotation("partition"), std::string("aicore#0"));
    QCOMPARE(b->annotation("partition"), std::string("aicpu#0"));
    QCOMPARE(c->annotation("partition"), std::string("aicore#1"));
    QCOMPARE(h->annotation("partition"), std::string("aicore#1"));
    QCOMPARE(d->annotation("partition"), std::string("aicore#1"));
    QCOMPARE(counter(r, "partitions"), 3);
  }

  void bertScheduleIsSynchronisedEverywhere() {
    for (const bool single : {false, true}) {
      auto model = buildSample("bert-base", SampleOptions{.layers = 2, .weights = false, .seed = 1});
      Options o;
      if (single) o.set("enable_single_stream=true");
      PassManager pm;
      addStandardPasses(pm, o);
      const RunSummary s = pm.run(*model, o);
      QCOMPARE(int(s.status), int(RunStatus::Ok));
      const std::vector<Node*> order(model->graph->nodes().begin(), model->graph->nodes().end());
      const auto streamOf = streamsFromAnnotations(order);
      QCOMPARE(streamOf.size(), order.size());  // every node has a stream
      const auto events = eventsFromAnnotations(order);
      QCOMPARE(unsynchronisedEdges(order, streamOf, events), QString());
      std::set<int> streams;
      for (const auto& [n, st] : streamOf) streams.insert(st);
      if (single) {
        QCOMPARE(streams.size(), size_t(1));
        QVERIFY(events.empty());
      } else {
        QVERIFY(streams.size() > 1);  // Q, K and V projections are independent branches
        QVERIFY(!events.empty());
        for (const SyncEvent& e : events) QVERIFY(streamOf.at(e.producer) != streamOf.at(e.consumer));
      }
      for (const Node* n : order) QVERIFY2(!n->annotation("partition").empty(), n->name().c_str());
    }
  }
};

QTEST_GUILESS_MAIN(ScheduleTest)
#include "test_schedule.moc"
