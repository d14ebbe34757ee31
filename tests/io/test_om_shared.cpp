// The real ATC-built model of the shared corpus (../shared/models/om/a3c_pong_model.om): it loads through the one
// model loader, and the facts read from the file by hand (protoc --decode with Kiln's schema) are what the reader
// reports. Skips when ../shared is absent.
#include <QFileInfo>
#include <QtTest>

#include <fstream>
#include <iterator>
#include <map>

#include "io/model_loader.h"
#include "io/om/om_reader.h"
#include "schedule/task_list.h"
#include "report/model_summary.h"
#include "report/memory_chart.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"

using namespace kiln;
using namespace kiln::om;

namespace {

QString modelPath() { return QStringLiteral(KILN_SHARED_DIR) + "/models/om/a3c_pong_model.om"; }

const Node* nodeNamed(const Graph& g, const std::string& name) {
  for (const Node* n : g.nodes())
    if (n->name() == name) return n;
  return nullptr;
}

}  // namespace

class OmSharedTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!QFileInfo(modelPath()).isFile())
      QSKIP(qPrintable("shared .om model not found at " + modelPath() + " (tests that need ../shared skip)"));
  }

  // ATC's own plan is what the views show: every feature-map tensor at the offset ATC gave it, inside the model's
  // memory_size; the ops its KERNEL tasks run become AI Core kernels of the simulated timeline; no pass of ours runs.
  void theAtcPlanIsWhatTheViewsShow() {
    const LoadedModel lm = loadModel(modelPath().toStdString());
    const Graph& g = *lm.model->graph;
    QVERIFY(lm.model->precompiled);
    const MemoryChart chart = buildMemoryChart(g);
    QVERIFY(chart.planned);
    QCOMPARE(chart.unplaced, 0);
    QVERIFY(chart.blocks.size() >= 10);
    int64_t memorySize = 0;
    for (const auto& [k, v] : lm.model->metadata)
      if (k == "om.memory_size") memorySize = std::stoll(v);
    QCOMPARE(memorySize, int64_t{90624});
    QVERIFY2(chart.arenaBytes <= memorySize && chart.arenaBytes > memorySize / 2,
             qPrintable(QString::number(chart.arenaBytes)));
    QVERIFY(chart.lowerBound > 0 && chart.lowerBound <= chart.arenaBytes);
    for (const MemoryChartBlock& b : chart.blocks) {
      const Node* producer = nullptr;
      for (const Node* x : g.nodes())
        if (x->id() == b.producerId) producer = x;
      QVERIFY(producer);
      const QStringList offsets = QString::fromStdString(producer->annotation("om.output_offsets")).split(',');
      QVERIFY(offsets.contains(QString::number(b.offset)));
    }
    const om::OmImport imp = om::readOmFile(modelPath().toStdString());
    size_t kernelTasks = 0;
    for (const OmTask& t : imp.info.tasks) kernelTasks += t.type == uint32_t(TaskType::Kernel);
    size_t kernels = 0;
    for (const Task& t : buildTaskList(g, 2)) kernels += t.type == TaskType::Kernel;
    qInfo("ATC plan: %zu blocks, arena %lld of memory_size %lld, lower bound %lld; %zu kernels (%zu KERNEL tasks)",
          chart.blocks.size(), static_cast<long long>(chart.arenaBytes), static_cast<long long>(memorySize),
          static_cast<long long>(chart.lowerBound), kernels, kernelTasks);
    QVERIFY(kernels > 0 && kernels <= kernelTasks);
    PassManager pm;
    addStandardPasses(pm, Options());
    Model& m = *lm.model;
    const RunSummary r = pm.run(m, Options());
    QCOMPARE(r.status, RunStatus::Ok);
    QVERIFY(r.passes.empty());
    QCOMPARE(buildMemoryChart(g).arenaBytes, chart.arenaBytes);  // the plan is still ATC's
  }

  void loadsThroughTheModelLoader() {
    const LoadedModel lm = loadModel(modelPath().toStdString());
    const Graph& g = *lm.model->graph;
    std::map<std::string, int> ops;
    for (const Node* n : g.nodes()) ++ops[n->qualifiedType()];
    QCOMPARE(g.numNodes(), size_t{25});
    QCOMPARE(ops["ge:Const"], 11);
    QCOMPARE(ops["ge:TransData"], 4);
    QCOMPARE(ops["ge:Conv2D"], 3);
    QCOMPARE(ops["ge:MatMulV2"], 2);
    QCOMPARE(ops["ge:NetOutput"], 1);
    QCOMPARE(g.inputs().size(), size_t{1});
    QCOMPARE(g.inputs()[0]->name(), std::string("s"));
    QCOMPARE(g.inputs()[0]->type().toString(), std::string("fp32[1×42×42×1] NHWC"));
    QCOMPARE(g.outputs().size(), size_t{1});
    QCOMPARE(g.outputs()[0]->type().toString(), std::string("int32[1] NHWC"));
    for (const auto& w : lm.warnings) qInfo("warning: %s", w.c_str());

    const ModelSummary s = summarizeModel(*lm.model, lm.inference, lm.warnings);
    QCOMPARE(s.parameterTensors, int64_t{11});
    QVERIFY(s.formats.count("NC1HWC0") && s.formats.count("FRACTAL_Z") && s.formats.count("FRACTAL_NZ"));
    qInfo("%s", s.toText().c_str());
  }

  void formatsWeightsAndTasks() {
    const OmImport imp = readOmFile(modelPath().toStdString());
    const Graph& g = *imp.model->graph;
    const OmModelInfo& info = imp.info;

    // Container: an old v1 header with a tiny table, MODEL_DEF, WEIGHTS_DATA, TBE_KERNELS, TASK_INFO.
    QVERIFY(info.container.header.isV1());
    QCOMPARE(info.container.header.name, std::string("a3c_pong_model"));
    QCOMPARE(info.container.models.size(), size_t{1});
    QVERIFY(!info.container.models[0].wideTable);
    std::vector<uint32_t> types;
    for (const auto& p : info.container.models[0].partitions) types.push_back(p.type);
    QCOMPARE(types, (std::vector<uint32_t>{0, 1, 3, 2}));
    QCOMPARE(info.weightsBytes, uint64_t{320000});
    QCOMPARE(info.memorySize, uint64_t{90624});
    QCOMPARE(info.weightSize, uint64_t{320000});
    QCOMPARE(info.streamNum, 1u);
    QCOMPARE(info.kernels.size(), size_t{12});

    // Formats as ATC laid them out.
    const Node* conv1 = nodeNamed(g, "W_0/conv1/Conv2DW_0/conv1/Relu");
    QVERIFY(conv1);
    QCOMPARE(conv1->opType(), std::string("Conv2D"));
    QCOMPARE(conv1->output(0)->type().toString(), std::string("fp16[1×2×20×20×16] NC1HWC0"));
    QCOMPARE(conv1->input(0)->producer()->opType(), std::string("TransData"));
    QCOMPARE(conv1->annotation("om.block_dim"), std::string("2"));
    QVERIFY(!conv1->annotation("om.kernel_name").empty());

    // A Const's weights: FRACTAL_Z fp16, 9216 bytes at data_offset 512 of WEIGHTS_DATA, not copied.
    const Node* w = nodeNamed(g, "dynamic_const_20661_27");
    QVERIFY(w && w->attr("value"));
    const Tensor* t = w->attr("value")->get<Tensor>();
    QVERIFY(t);
    QCOMPARE(t->dims(), (std::vector<int64_t>{9, 2, 16, 16}));
    QCOMPARE(t->byteSize(), size_t{9216});
    QCOMPARE(w->output(0)->type().format, Format::FRACTAL_Z);
    QCOMPARE(w->annotation("om.output0.origin_format"), std::string("HWCN"));
    QCOMPARE(w->annotation("om.output0.origin_shape"), std::string("3,3,1,32"));
    std::ifstream f(modelPath().toStdString(), std::ios::binary);
    const std::string file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto* weights = info.container.models[0].find(PartitionType::WeightsData);
    QVERIFY(weights);
    QVERIFY(std::equal(t->bytes().begin(), t->bytes().end(),
                       reinterpret_cast<const uint8_t*>(file.data()) + weights->offset + 512));
    QCOMPARE(nodeNamed(g, "dynamic_const_20661_24")->output(0)->type().format, Format::FRACTAL_NZ);

    // The Reshape shape constant reaches the flattening TransData only by a control edge.
    QCOMPARE(nodeNamed(g, "trans_TransData_13")->annotation("om.control_inputs"), std::string("W_0/flat/Reshape/shape"));

    // Tasks: 15, of which 12 kernels, each linked to an op of the graph.
    QCOMPARE(info.tasks.size(), size_t{15});
    int kernels = 0;
    for (const OmTask& task : info.tasks) {
      qInfo("task %2zu %-12s stream %u block_dim %u op %s", task.index, taskTypeName(task.type).c_str(), task.streamId,
            task.blockDim, task.opName.c_str());
      if (task.type != 0) continue;
      ++kernels;
      QVERIFY2(nodeNamed(g, task.opName), task.kernelName.c_str());
    }
    QCOMPARE(kernels, 12);
  }
};

QTEST_GUILESS_MAIN(OmSharedTest)
#include "test_om_shared.moc"
