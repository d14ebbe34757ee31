// Timing simulation: SoC profiles (the shipped ones load, bad ones are refused by field), task costs (16-aligned
// Cube work, memory-bound Vector ops, AI CPU and copies), and the discrete-event run of a task list: streams in
// parallel, events ordering streams, core contention, host launches unless sunk, a hanging list detected, the
// critical path, and the Chrome trace.
#include <QtTest>

#include "report/chrome_trace.h"
#include "emulator/timing/timeline_sim.h"
#include "ir/graph.h"
#include "util/json.h"

using namespace kiln;

namespace {

ValueType f16(std::vector<int64_t> dims) { return ValueType::tensor(DType::Float16, Shape::ofStatic(dims)); }

// A graph holding a few nodes the tasks point at.
struct Nodes {
  Graph g{std::make_shared<IdSource>()};
  Node* matmul(int64_t m, int64_t n, int64_t k, const char* name = "mm") {
    Value* a = g.addInput(std::string(name) + "_a", f16({m, k}));
    Value* b = g.addInput(std::string(name) + "_b", f16({k, n}));
    Node* node = g.addNode("MatMul", {a, b}, {std::string(name) + "_y"}, name);
    node->output(0)->setType(f16({m, n}));
    node->setAnnotation("unit", "cube");
    return node;
  }
  Node* relu(int64_t elements, const char* name = "relu") {
    Value* x = g.addInput(std::string(name) + "_x", f16({elements}));
    Node* node = g.addNode("Relu", {x}, {std::string(name) + "_y"}, name);
    node->output(0)->setType(f16({elements}));
    node->setAnnotation("unit", "vector");
    return node;
  }
};

Task kernel(const Node* n, int stream, int64_t blockDim) {
  Task t;
  t.type = TaskType::Kernel;
  t.node = n;
  t.stream = stream;
  t.blockDim = blockDim;
  return t;
}
Task syncTask(TaskType type, int stream, int id) {
  Task t;
  t.type = type;
  t.stream = stream;
  t.event = id;
  return t;
}
std::vector<Task> numbered(std::vector<Task> tasks) {
  for (size_t i = 0; i < tasks.size(); ++i) tasks[i].id = int(i);
  return tasks;
}

SocProfile simpleSoc() {
  SocProfile p = SocProfile::fromJsonText(R"({"name": "Test", "ai_cores": 4, "kernel_task_us": 1, "event_us": 0.5,
                                              "host_launch_us": 10, "hbm_gbps": 1000})",
                                          "test");
  return p;
}

}  // namespace

class TimingTest : public QObject {
  Q_OBJECT
 private slots:
  void shippedProfilesLoad() {
    for (const char* name : {"Ascend910A", "ascend910b1", "Ascend310P3", "Ascend310"}) {
      const SocProfile p = SocProfile::load(name);
      QVERIFY(p.aiCores >= 1);
      QVERIFY(!p.notes.empty());
    }
    QCOMPARE(SocProfile::load("Ascend910A").aiCores, 32);
    QCOMPARE(SocProfile::load("Ascend910B1").vectorCores, 48);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, SocProfile::load("Ascend9999"));
  }

  void badProfilesAreRefusedByField() {
    auto why = [](const char* text) {
      try {
        SocProfile::fromJsonText(text, "p.json");
      } catch (const std::runtime_error& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    QVERIFY(why(R"({"name": "X", "ai_cores": 0})").find("ai_cores") != std::string::npos);
    QVERIFY(why(R"({"name": "X", "clock_ghz": "fast"})").find("clock_ghz") != std::string::npos);
    QVERIFY(why(R"({"name": "X", "cores": 4})").find("unknown field 'cores'") != std::string::npos);
    QVERIFY(why(R"({"ai_cores": 4})").find("name") != std::string::npos);
    QVERIFY(why(R"({"name": "X", "ai_cores": 2.5})").find("whole") != std::string::npos);
    QVERIFY(why("[1, 2").find("p.json") == 0);
  }

  void cubeWorkIsSixteenAligned() {
    Nodes nodes;
    SocProfile p = simpleSoc();
    p.hbmGBps = 1e6;  // make compute dominate
    const TaskCost tiny = taskCost(kernel(nodes.matmul(1, 1, 1, "a"), 0, 1), p);
    const TaskCost tile = taskCost(kernel(nodes.matmul(16, 16, 16, "b"), 0, 1), p);
    const TaskCost bigger = taskCost(kernel(nodes.matmul(17, 16, 16, "c"), 0, 1), p);
    QCOMPARE(tiny.unit, SimUnit::Cube);
    QCOMPARE(tiny.computeUs, tile.computeUs);       // one 16x16x16 block either way
    QCOMPARE(bigger.computeUs, 2 * tile.computeUs);  // 17 rows need a second block
    // spread over four cores it takes a quarter of the time
    const TaskCost wide = taskCost(kernel(nodes.matmul(64, 64, 64, "d"), 0, 4), p);
    const TaskCost narrow = taskCost(kernel(nodes.matmul(64, 64, 64, "e"), 0, 1), p);
    QCOMPARE(wide.computeUs * 4, narrow.computeUs);
  }

  void vectorOpsAreMemoryBound() {
    Nodes nodes;
    const SocProfile p = simpleSoc();
    const TaskCost c = taskCost(kernel(nodes.relu(1 << 20), 0, 4), p);
    QCOMPARE(c.unit, SimUnit::Vector);
    QVERIFY(c.memoryBound);
    QCOMPARE(c.bytes, double(2 * 2 * (1 << 20)));  // read and write fp16
    QCOMPARE(c.durationUs, c.fixedUs + c.memoryUs);
  }

  void streamsRunInParallelAndEventsOrderThem() {
    Nodes nodes;
    const SocProfile p = simpleSoc();
    const Node* a = nodes.relu(1 << 16, "a");
    const Node* b = nodes.relu(1 << 16, "b");
    // one stream: a then b
    const Timeline serial = simulateTimeline(numbered({kernel(a, 0, 2), kernel(b, 0, 2)}), p, true);
    // two streams, two cores each: side by side
    const Timeline parallel = simulateTimeline(numbered({kernel(a, 0, 2), kernel(b, 1, 2)}), p, true);
    QVERIFY(parallel.latencyUs < serial.latencyUs * 0.6);
    // b waits for an event recorded after a: serial again, plus the event costs
    const Timeline ordered = simulateTimeline(
        numbered({kernel(a, 0, 2), syncTask(TaskType::EventRecord, 0, 7), syncTask(TaskType::EventWait, 1, 7),
                  kernel(b, 1, 2)}),
        p, true);
    QVERIFY(ordered.entries[3].startUs >= ordered.entries[1].endUs);
    QVERIFY(ordered.latencyUs > serial.latencyUs);
    // the critical path runs a -> record -> wait -> b
    QCOMPARE(ordered.criticalPath, (std::vector<int>{0, 1, 2, 3}));
  }

  void coreContentionSerialises() {
    Nodes nodes;
    const SocProfile p = simpleSoc();  // 4 cores
    const Node* a = nodes.relu(1 << 16, "a");
    const Node* b = nodes.relu(1 << 16, "b");
    const Timeline t = simulateTimeline(numbered({kernel(a, 0, 4), kernel(b, 1, 4)}), p, true);
    // Both want every core: one computes after the other (an entry spans its compute; the second's dispatch, its
    // fixed cost, ran on its stream while the first computed).
    const double dispatch = p.kernelTaskUs;
    QVERIFY(t.entries[1].startUs >= t.entries[0].endUs || t.entries[0].startUs >= t.entries[1].endUs);
    QCOMPARE(t.units[1].unit, SimUnit::Vector);
    // Every core computes all along except during the first dispatch: compute / (compute + one dispatch).
    const double compute = 2 * (t.entries[0].endUs - t.entries[0].startUs);
    QVERIFY(std::abs(t.units[1].utilisation - compute / (compute + dispatch)) < 1e-9);
    // One stream pays both dispatches in series; two streams hide one behind the other's compute.
    const Timeline single = simulateTimeline(numbered({kernel(a, 0, 4), kernel(b, 0, 4)}), p, true);
    QCOMPARE(single.latencyUs - t.latencyUs, dispatch);
  }

  void hostLaunchesCostUnlessSunk() {
    Nodes nodes;
    const SocProfile p = simpleSoc();
    std::vector<Task> tasks;
    for (int i = 0; i < 10; ++i) tasks.push_back(kernel(nodes.relu(1024, ("r" + std::to_string(i)).c_str()), 0, 1));
    tasks = numbered(tasks);
    const Timeline sunk = simulateTimeline(tasks, p, true);
    const Timeline host = simulateTimeline(tasks, p, false);
    QCOMPARE(sunk.hostLaunches, int64_t{0});
    QCOMPARE(host.hostLaunches, int64_t{10});
    QVERIFY(host.latencyUs >= 10 * p.hostLaunchUs);
    QVERIFY(sunk.latencyUs < host.latencyUs / 5);
  }

  void hangingListIsDetected() {
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             simulateTimeline(numbered({syncTask(TaskType::EventWait, 1, 3)}), simpleSoc(), true));
  }

  void chromeTraceHasTracksTasksAndFlows() {
    Nodes nodes;
    const Node* a = nodes.relu(1 << 10, "a");
    const Node* b = nodes.relu(1 << 10, "b");
    const Timeline t = simulateTimeline(
        numbered({kernel(a, 0, 1), syncTask(TaskType::EventRecord, 0, 1), syncTask(TaskType::EventWait, 1, 1),
                  kernel(b, 1, 1)}),
        simpleSoc(), true);
    const Json j = Json::parse(chromeTraceJson(timelineChartFromSimulation(t, simpleSoc()), "m"));
    int complete = 0, flows = 0, names = 0;
    for (const Json& e : j.find("traceEvents")->asArray()) {
      const std::string ph = e.find("ph")->asString();
      complete += ph == "X";
      flows += ph == "s" || ph == "f";
      names += ph == "M";
    }
    QCOMPARE(complete, 4 + 2);  // every task on its stream track, the two kernels on the vector track too
    QCOMPARE(flows, 2);
    QVERIFY(names >= 4);  // two processes, two streams, the vector unit
  }
};

QTEST_GUILESS_MAIN(TimingTest)
#include "test_timing.moc"
