// The .om writer against the .om reader: a generated model compiled through Stage 3 and written as an Ascend
// offline model reads back with the same ops, edges, layouts, memory offsets, streams and task list; the weights'
// bytes survive; `kiln compile -o` writes a file `kiln inspect` opens; a model that was not compiled, or has
// symbolic shapes, is refused with a message.
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

#include "emulator/timing/model_soc.h"
#include "io/om/om_reader.h"
#include "io/om/om_writer.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "options/options.h"
#include "util/json.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/compile_summary.h"
#include "report/memory_chart.h"
#include "samples/sample_models.h"
#include "schedule/task_list.h"
#include "support/kiln_process.h"

using namespace kiln;

namespace {

std::unique_ptr<Model> compiled(const std::string& sample, const Options& o, bool weights = true) {
  auto m = buildSample(sample, SampleOptions{.weights = weights});
  PassManager pm;
  addStandardPasses(pm, o);
  const RunSummary s = pm.run(*m, o);
  if (s.status != RunStatus::Ok) qFatal("compile failed: %s", s.error.c_str());
  return m;
}

om::OmImport roundTrip(const Model& m, const Options& o) {
  return om::readOmBytes(std::make_shared<OwnedStorage>(om::buildOmFile(m, o)), "written.om");
}

const Node* named(const Graph& g, const std::string& name) {
  for (const Node* n : g.nodes())
    if (n->name() == name) return n;
  return nullptr;
}

}  // namespace

class OmWriterTest : public QObject {
  Q_OBJECT
 private slots:
  void compiledModelReadsBackTheSame() {
    const Options o;
    auto m = compiled("mobilenetv2", o);
    const om::OmImport back = roundTrip(*m, o);
    const Graph& g = *back.model->graph;
    // Every node came back under its name, with the same stream, output offsets and output layouts.
    int checked = 0, origins = 0;
    for (const Node* n : m->graph->nodes()) {
      const Node* r = named(g, n->name());
      QVERIFY2(r, n->name().c_str());
      QCOMPARE(r->annotation("om.stream_id"), n->annotation("stream"));
      QCOMPARE(r->numInputs(), n->numInputs());
      QCOMPARE(r->numOutputs(), n->numOutputs());
      QCOMPARE(r->attrString("_kiln.op_type", ""), n->qualifiedType());
      for (size_t i = 0; i < n->numOutputs(); ++i) {
        QCOMPARE(r->output(i)->type().format, n->output(i)->type().format);
        QCOMPARE(r->output(i)->type().originShape, n->output(i)->type().originShape);  // blocked layouts' logical
        if (n->output(i)->type().originShape.rankKnown()) {
          QCOMPARE(r->output(i)->type().originFormat, n->output(i)->type().originFormat);
          ++origins;
        }
        QCOMPARE(r->output(i)->type().dtype, n->output(i)->type().dtype);
        QCOMPARE(r->output(i)->type().shape, n->output(i)->type().shape);
      }
      // Arena offsets: the same numbers MemoryAssignment wrote ("input"/"output"/"weight" live elsewhere).
      const QStringList mine = QString::fromStdString(n->annotation("mem.out")).split(',');
      const QStringList theirs = QString::fromStdString(r->annotation("om.output_offsets")).split(',');
      QCOMPARE(theirs.size(), mine.size());
      for (qsizetype i = 0; i < mine.size(); ++i) {
        bool numeric = false;
        mine[i].toLongLong(&numeric);
        if (numeric) QCOMPARE(theirs[i], mine[i]);
      }
      // Edges: each input comes from the op that produced it.
      for (size_t i = 0; i < n->numInputs(); ++i) {
        const Value* in = n->input(i);
        if (!in || !in->producer()) continue;
        QVERIFY(r->input(i) && r->input(i)->producer());
        QCOMPARE(r->input(i)->producer()->name(), in->producer()->name());
      }
      ++checked;
    }
    QVERIFY(checked > 50);
    QVERIFY(origins > 10);
    // The task list: the same types on the same streams, kernels with their block_dim.
    const std::vector<Task> tasks = buildTaskList(*m->graph, aiCoreCount("Ascend910A"));
    QCOMPARE(back.info.tasks.size(), tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
      QCOMPARE(back.info.tasks[i].type, uint32_t(tasks[i].type));
      QCOMPARE(back.info.tasks[i].streamId, uint32_t(tasks[i].stream));
      if (tasks[i].type == TaskType::Kernel) {
        QCOMPARE(back.info.tasks[i].blockDim, uint32_t(tasks[i].blockDim));
        QCOMPARE(back.info.tasks[i].opName, tasks[i].node->name());
      }
    }
    QVERIFY(back.info.memorySize > 0);
    QCOMPARE(back.info.socVersion, std::string("Ascend910A"));
    QVERIFY(back.info.weightsBytes > 0);
    QVERIFY(back.info.inOut.has_value());
    QCOMPARE(back.info.inOut->inputs.size(), m->graph->inputs().size());
  }

  // The default options fuse resnet's elementwise chains into nodes holding their body as a subgraph: the body is
  // written as a GE subgraph (subgraph_name) and reads back under the same attribute, op for op.
  void fusedBodiesAreWrittenAsSubgraphs() {
    const Options o;
    auto m = compiled("resnet50", o, false);
    const om::OmImport back = roundTrip(*m, o);
    int bodies = 0;
    for (const Node* n : m->graph->nodes())
      for (const NamedAttribute& a : n->attributes()) {
        const auto* body = a.value.get<Attribute::GraphPtr>();
        if (!body || !*body) continue;
        const Node* r = named(*back.model->graph, n->name());
        QVERIFY2(r, n->name().c_str());
        const Attribute* ra = r->attr(a.name);
        QVERIFY2(ra && ra->get<Attribute::GraphPtr>(), (n->name() + " lost " + a.name).c_str());
        const Graph& rb = **ra->get<Attribute::GraphPtr>();
        std::vector<std::string> want, got;
        for (const Node* x : (*body)->nodes()) want.push_back(x->opType());
        for (const Node* x : rb.nodes())
          if (x->opType() != "Data" && x->opType() != "Const" && x->opType() != "NetOutput")
            got.push_back(x->attrString("_kiln.op_type", x->opType()));
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        QCOMPARE(got, want);
        QCOMPARE(rb.inputs().size(), size_t(std::count_if((*body)->inputs().begin(), (*body)->inputs().end(),
                                                          [](const Value* v) { return !v->constant(); })));
        QCOMPARE(rb.outputs().size(), (*body)->outputs().size());
        ++bodies;
      }
    qInfo("%d fused bodies round-tripped", bodies);
    QVERIFY(bodies > 0);
  }

  // Reading our own .om gives back the compile's plan in the annotations the views read: the same arena offsets and
  // streams, and the same task list — events included (an event recorded after an op without a task of its own
  // is read back on the kernel before it, the same point in the stream).
  void readBackPlanIsTheCompiledPlan() {
    const Options o;
    auto m = compiled("resnet50", o, false);  // residual branches: several streams and events
    const om::OmImport back = roundTrip(*m, o);
    QVERIFY(back.model->precompiled);
    int events = 0;
    for (const Node* n : m->graph->nodes()) {
      const Node* r = named(*back.model->graph, n->name());
      QVERIFY2(r, n->name().c_str());
      QCOMPARE(r->annotation("stream"), n->annotation("stream"));
      events += !n->annotation("event.record").empty();
      const QStringList mine = QString::fromStdString(n->annotation("mem.out")).split(',');
      const QStringList theirs = QString::fromStdString(r->annotation("mem.out")).split(',');
      QCOMPARE(theirs.size(), mine.size());
      for (qsizetype i = 0; i < mine.size(); ++i) {
        bool numeric = false;
        mine[i].toLongLong(&numeric);
        if (numeric) QCOMPARE(theirs[i], mine[i]);
      }
      QCOMPARE(r->annotation("engine") == "aicore", n->annotation("engine") == "aicore");
    }
    QVERIFY(events > 0);
    const MemoryChart before = buildMemoryChart(*m->graph), after = buildMemoryChart(*back.model->graph);
    QCOMPARE(after.arenaBytes, before.arenaBytes);
    QCOMPARE(after.unplaced, 0);
    const std::vector<Task> want = buildTaskList(*m->graph, 32), got = buildTaskList(*back.model->graph, 32);
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      QCOMPARE(got[i].type, want[i].type);
      QCOMPARE(got[i].stream, want[i].stream);
      QCOMPARE(got[i].event, want[i].event);
    }
  }

  // A batch case of the .om reports what the compile that wrote it reported: the arena (the file's memory_size), the
  // lower bound, the no-reuse sum and the task count, though no pass runs over the file.
  void summaryOfTheOmIsTheCompilesSummary() {
    const Options o;
    PassManager pm;
    addStandardPasses(pm, o);
    auto fresh = buildSample("mobilenetv2", SampleOptions{.weights = true});
    const RunSummary run = pm.run(*fresh, o);
    const CompileSummary want = summarizeCompile(*fresh, run);
    QVERIFY(want.built);
    const om::OmImport back = roundTrip(*fresh, o);
    const CompileSummary got = summarizeCompile(*back.model, RunSummary{});
    QVERIFY(got.built);
    QCOMPARE(got.arenaBytes, want.arenaBytes);
    QCOMPARE(got.lowerBoundBytes, want.lowerBoundBytes);
    QCOMPARE(got.noReuseBytes, want.noReuseBytes);
    QCOMPARE(got.tasks, want.tasks);
    QCOMPARE(got.streams, want.streams);
    QCOMPARE(got.events, want.events);
  }

  // An .om is timed on the SoC it was built for, whatever the options say; only a known profile name counts.
  void anOmIsTimedOnItsOwnSoc() {
    Options built;
    built.set("soc_version=Ascend310");
    auto m = compiled("mobilenetv2", built);
    const om::OmImport back = roundTrip(*m, built);
    const Options defaults;
    QCOMPARE(defaults.getString("soc_version"), std::string("Ascend910A"));
    QCOMPARE(QString::fromStdString(socVersionFor(*back.model, defaults)).toLower(), QString("ascend310"));
    QCOMPARE(socVersionFor(*m, defaults), std::string("Ascend910A"));  // compiled by Kiln: the options decide
    for (auto& [k, v] : back.model->metadata)
      if (k == "om.soc_version") v = "../../somewhere/else.json";
    QCOMPARE(socVersionFor(*back.model, defaults), std::string("Ascend910A"));
  }

  void oneModelWritesTheSameBytes() {
    // Op attributes are protobuf maps; written in hash order, two compiles of one model gave different files.
    const Options o;
    const std::string first = om::buildOmFile(*compiled("mobilenetv2", o), o);
    const std::string second = om::buildOmFile(*compiled("mobilenetv2", o), o);
    QCOMPARE(first.size(), second.size());
    QVERIFY(first == second);
  }

  void weightsKeepTheirBytes() {
    const Options o;
    auto m = compiled("mobilenetv2", o);
    const om::OmImport back = roundTrip(*m, o);
    int compared = 0;
    for (const Value* w : m->graph->initializers()) {
      const Node* r = named(*back.model->graph, w->name());
      if (!r || !r->attr("value")) continue;
      const Tensor* t = r->attr("value")->get<Tensor>();
      QVERIFY(t);
      QCOMPARE(t->byteSize(), w->constant()->byteSize());
      QVERIFY(std::equal(t->bytes().begin(), t->bytes().end(), w->constant()->bytes().begin()));
      ++compared;
    }
    QVERIFY(compared > 10);
  }

  // ONNX If bodies read values of the graphs around them; GE passes those in explicitly. Every such value becomes
  // one more input of the owning op and a Data op in the body with `_parent_node_index` naming that input, through
  // every level of nesting, and the file reads back that way.
  void bodiesGetWhatTheyReadOfEnclosingGraphsAsInputs() {
    auto m = std::make_unique<Model>();
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    const ValueType t23 = ValueType::tensor(DType::Float, Shape::ofStatic({2, 3}));
    const ValueType flag = ValueType::tensor(DType::Bool, Shape());
    Value* x = g.addInput("x", t23);
    Value* c = g.addInput("c", flag);
    Value* r = g.addNode("Relu", {x}, {"r"}, "relu")->output(0);
    // then: If(c){ r + r }{ r * x } nested inside; else: x itself.
    auto inner = [&](Graph& parent) {
      auto thenG = parent.makeSubgraph("inner_then");
      thenG->addOutput(thenG->addNode("Add", {r, r}, {"twice"}, "twice")->output(0));
      auto elseG = parent.makeSubgraph("inner_else");
      elseG->addOutput(elseG->addNode("Mul", {r, x}, {"scaled"}, "scaled")->output(0));
      return std::make_pair(thenG, elseG);
    };
    auto outerThen = g.makeSubgraph("outer_then");
    Node* nested = outerThen->addNode("If", {c}, {"nested_out"}, "nested");
    auto [it, ie] = inner(*outerThen);
    nested->setAttr("then_branch", Attribute(it));
    nested->setAttr("else_branch", Attribute(ie));
    outerThen->addOutput(nested->output(0));
    auto outerElse = g.makeSubgraph("outer_else");
    outerElse->addOutput(x);
    Node* iff = g.addNode("If", {c}, {"y"}, "outer");
    iff->setAttr("then_branch", Attribute(outerThen));
    iff->setAttr("else_branch", Attribute(outerElse));
    g.addOutput(g.addNode("Sigmoid", {iff->output(0)}, {"out"}, "out")->output(0));

    const Options o;
    PassManager pm;
    addStandardPasses(pm, o);
    const RunSummary s = pm.run(*m, o);
    QVERIFY2(s.status == RunStatus::Ok, s.error.c_str());
    const om::OmImport back = roundTrip(*m, o);

    // Each Data with a parent index stands for that input of the op owning its graph, of the same type.
    int captured = 0;
    std::function<void(const Graph&)> check = [&](const Graph& graph) {
      for (const Node* n : graph.nodes()) {
        if (n->opType() == "Data" && n->attr("_parent_node_index")) {
          const Node* owner = graph.owner();
          QVERIFY2(owner, n->name().c_str());
          const int64_t p = n->attrInt("_parent_node_index", -1);
          QVERIFY2(p >= 0 && size_t(p) < owner->numInputs() && owner->input(size_t(p)), n->name().c_str());
          QCOMPARE(owner->input(size_t(p))->type().shape, n->output(0)->type().shape);
          ++captured;
        }
        for (const NamedAttribute& a : n->attributes())
          if (const auto* body = a.value.get<Attribute::GraphPtr>(); body && *body) check(**body);
      }
    };
    check(*back.model->graph);
    const Node* outer = named(*back.model->graph, "outer");
    QVERIFY(outer);
    QCOMPARE(outer->numInputs(), size_t(3));  // c, then what its bodies read: r (as computed there) and x
    // outer_then passes c (the outer If's own input 0), r and x on to the nested If; inner_then reads r, inner_else
    // r and x; outer_else x.
    QCOMPARE(captured, 3 + 1 + 2 + 1);
  }

  void refusesWhatItCannotWrite() {
    const Options o;
    auto m = buildSample("mobilenetv2");
    try {
      om::buildOmFile(*m, o);
      QFAIL("an uncompiled model was written");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("Stage 3"), e.what());
    }
  }

  void compileWritesAnOmThatInspectOpens() {
    QTemporaryDir dir;
    const QString onnx = dir.filePath("m.onnx"), omFile = dir.filePath("m.om");
    QCOMPARE(runKiln({"sample", "mobilenetv2", "-o", onnx}).code, 0);
    const KilnRun c = runKiln({"compile", onnx, "-o", omFile});
    QVERIFY2(c.code == 0, qPrintable(c.err));
    QVERIFY(c.out.contains("wrote " + omFile));
    const KilnRun i = runKiln({"inspect", omFile});
    QVERIFY2(i.code == 0, qPrintable(i.err));
    QVERIFY(i.out.contains("Conv2D"));
    QVERIFY(i.out.contains("NC1HWC0"));
    // `kiln run` on it runs the .om through GE's op semantics (kernels/ge) at its own offsets against its graph in
    // fp32, and with --reference against the model it came from, op by op.
    const KilnRun r = runKiln({"run", omFile, "--random", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("latency") && r.out.contains("at GE's offsets") && r.out.contains("passed:") &&
                 r.out.trimmed().endsWith("ok"),
             qPrintable(r.out));
    const KilnRun s = runKiln({"run", omFile, "--random", "1", "--reference", onnx, "--json"});
    QVERIFY2(s.code == 0, qPrintable(s.out + s.err));
    const Json j = Json::parse(s.out.toStdString());
    QCOMPARE(j.find("numerics")->asString(), std::string("passed"));
    QVERIFY(j.find("ge")->find("source")->find("nodes")->asArray().size() > 30);
    const KilnRun notGe = runKiln({"run", onnx, "--random", "1", "--reference", onnx});
    QCOMPARE(notGe.code, 2);
    QVERIFY2(notGe.err.contains("--reference compares a compiled GE file"), qPrintable(notGe.err));
    // A symbolic export is written at its bound shapes (the policy's batch 1, sequence 128)...
    const QString bert = dir.filePath("bert.onnx");
    QCOMPARE(runKiln({"sample", "bert-base", "--layers", "1", "--no-weights", "-o", bert}).code, 0);
    const KilnRun bound = runKiln({"compile", bert, "-o", dir.filePath("bert.om")});
    QVERIFY2(bound.code == 0, qPrintable(bound.err));
    QVERIFY2(bound.out.contains("sequence=128 (dim_policy: sequence)"), qPrintable(bound.out));
    // ...while symbolic sizes kept open (dim_values=keep) cannot be laid out in device memory: exit 2, the reason.
    const KilnRun b = runKiln({"compile", bert, "--set", "dim_values=keep", "-o", dir.filePath("bert.om")});
    QCOMPARE(b.code, 2);
    QVERIFY2(b.err.contains("no static size"), qPrintable(b.err));
  }
};

QTEST_GUILESS_MAIN(OmWriterTest)
#include "test_om_writer.moc"
