// Ascend .om container and reader: files built here with writeOmContainer and Kiln's own protos (v2 wide, v1 tiny,
// several models), round trips of the container and of MODEL_INOUT_INFO, and every kind of bad file the reader must
// refuse with a clear one-line error (each its own test). Ends with `kiln inspect` on a corrupt .om (exit 2).
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <array>
#include <cstring>
#include <fstream>

#include "batch/batch_case.h"
#include "io/model_loader.h"
#include "io/model_path.h"
#include "io/om/ge_ir.pb.h"
#include "io/om/om_container.h"
#include "io/om/om_reader.h"
#include "schedule/task_list.h"
#include "io/om/task.pb.h"
#include "support/om_sample.h"

using namespace kiln;
using namespace kiln::om;
using namespace kiln::om::test;

namespace {

OmImport load(std::string bytes) { return readOmBytes(std::make_shared<OwnedStorage>(std::move(bytes)), "test.om"); }

// The load must fail with a LoadError naming the file and containing `expected`.
QString failure(std::string bytes) {
  try {
    load(std::move(bytes));
  } catch (const LoadError& e) {
    if (e.file() != "test.om") return "wrong file in error: " + QString::fromStdString(e.file());
    return QString::fromStdString(e.what());
  }
  return "(loaded without error)";
}

#define EXPECT_REFUSED(bytes, expected)                                                                      \
  do {                                                                                                       \
    const QString msg = failure(bytes);                                                                      \
    qInfo("%s", qPrintable(msg));                                                                            \
    QVERIFY2(msg.contains(QStringLiteral(expected)), qPrintable("expected '" expected "' in: " + msg));     \
  } while (0)

const Node* nodeNamed(const Graph& g, const std::string& name) {
  for (const Node* n : g.nodes())
    if (n->name() == name) return n;
  return nullptr;
}

std::string meta(const Model& m, const std::string& key) {
  for (const auto& [k, v] : m.metadata)
    if (k == key) return v;
  return {};
}

struct KilnRun {
  int code = -1;
  QString out, err;
};

KilnRun kilnInspect(const QString& path) {
  QProcess p;
  p.start(QStringLiteral(KILN_BINARY), {"inspect", path});
  if (!p.waitForFinished(60000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace

class OmReaderTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

  void checkSampleGraph(const OmImport& imp) {
    const Graph& g = *imp.model->graph;
    QCOMPARE(g.numNodes(), size_t{4});
    QCOMPARE(g.name(), std::string("tiny_0"));
    // Topologically sorted although the file listed NetOutput first.
    QVERIFY((*g.nodes().begin())->opType() != "NetOutput");
    for (const Node* n : g.nodes()) QCOMPARE(n->domain(), std::string(kGeDomain));
    QCOMPARE(g.inputs().size(), size_t{1});
    QCOMPARE(g.inputs()[0]->name(), std::string("x"));
    QCOMPARE(g.inputs()[0]->type().toString(), std::string("fp32[1×3×4×4] NCHW"));

    const Node* conv = nodeNamed(g, "conv");
    QVERIFY(conv);
    QCOMPARE(conv->opType(), std::string("Conv2D"));
    QCOMPARE(conv->numInputs(), size_t{2});
    QCOMPARE(conv->input(0)->producer()->name(), std::string("x"));
    QCOMPARE(conv->input(1)->name(), std::string("w:0"));
    QCOMPARE(conv->output(0)->type().format, Format::NC1HWC0);
    QCOMPARE(conv->output(0)->type().dtype, DType::Float16);
    QCOMPARE(conv->annotation("om.stream_id"), std::string("1"));
    QCOMPARE(conv->annotation("om.input_offsets"), std::string("0,512"));
    QCOMPARE(conv->annotation("om.output_offsets"), std::string("1024"));
    QCOMPARE(conv->annotation("om.workspace_bytes"), std::string("64"));
    QCOMPARE(conv->annotation("om.block_dim"), std::string("8"));
    QCOMPARE(conv->annotation("om.kernel_name"), std::string("te_conv2d_kernel0"));
    QCOMPARE(conv->annotation("om.output0.origin_format"), std::string("NCHW"));
    QCOMPARE(conv->annotation("om.output0.origin_shape"), std::string("1,3,4,4"));
    QCOMPARE(conv->attrString("data_format", ""), std::string("NCHW"));
    QCOMPARE(conv->attrInts("strides"), std::vector<int64_t>{1});

    const Node* w = nodeNamed(g, "w");
    QVERIFY(w && w->attr("value"));
    const Tensor* t = w->attr("value")->get<Tensor>();
    QVERIFY(t);
    QCOMPARE(t->dims(), (std::vector<int64_t>{2, 2}));
    QCOMPARE(t->toDouble(), (std::vector<double>{1, 2, 3, 4}));
    QCOMPARE(w->output(0)->type().format, Format::FRACTAL_Z);

    const Node* out = nodeNamed(g, "out");
    QCOMPARE(out->annotation("om.control_inputs"), std::string("w"));
    QCOMPARE(out->numInputs(), size_t{1});
    QCOMPARE(g.outputs().size(), size_t{1});
    QCOMPARE(g.outputs()[0]->name(), std::string("out:0"));
    QCOMPARE(g.outputs()[0]->type().format, Format::NC1HWC0);

    QCOMPARE(meta(*imp.model, "om.memory_size"), std::string("4096"));
    QCOMPARE(meta(*imp.model, "om.stream_num"), std::string("2"));  // from TASK_INFO: the model attrs lack it
    QCOMPARE(imp.info.socVersion, std::string("Ascend310"));
    QCOMPARE(imp.info.memorySize, uint64_t{4096});
    QCOMPARE(imp.info.tasks.size(), size_t{2});
    QCOMPARE(imp.info.tasks[0].opName, std::string("conv"));
    QCOMPARE(imp.info.tasks[0].blockDim, 8u);
    QCOMPARE(taskTypeName(imp.info.tasks[1].type), std::string("END_GRAPH"));
    QCOMPARE(imp.info.weightsBytes, uint64_t{16});
  }

 private slots:
  void v2WideSingleModel() {
    const OmImport imp = load(fileOf(sample()));
    const OmContainer& c = imp.info.container;
    QVERIFY(!c.header.isV1());
    QCOMPARE(c.header.name, std::string("tiny"));
    QCOMPARE(c.header.platformVersion, std::string("Ascend310"));
    QCOMPARE(c.models.size(), size_t{1});
    QVERIFY(c.models[0].wideTable);
    QVERIFY(imp.warnings.empty());
    checkSampleGraph(imp);
  }

  void v1TinyTable() {
    const std::string bytes = fileOf(sample(), OmLayout::V1Tiny);
    const OmImport imp = load(bytes);
    QVERIFY(imp.info.container.header.isV1());
    QCOMPARE(imp.info.container.header.length, static_cast<uint32_t>(bytes.size() - 256));
    QVERIFY(!imp.info.container.models[0].wideTable);
    QCOMPARE(imp.info.container.header.platformVersion, std::string("Ascend310"));
    QVERIFY2(imp.warnings.empty(), imp.warnings.empty() ? "" : imp.warnings[0].c_str());
    checkSampleGraph(imp);
  }

  void multiModel() {
    Sample second = sample();
    second.md.mutable_graph(0)->set_name("second_0");
    const std::string bytes = writeOmContainer(header(), {partitions(sample()), partitions(second)});
    const OmImport imp = load(bytes);
    const OmContainer& c = imp.info.container;
    QCOMPARE(c.header.modelNum, 2u);
    QCOMPARE(c.models.size(), size_t{2});
    QVERIFY(c.models[1].tableOffset > c.models[0].tableOffset);
    const auto span = std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    const auto md2 = partitionBytes(span, *c.models[1].find(PartitionType::ModelDef));
    ge::proto::ModelDef parsed;
    QVERIFY(parsed.ParseFromArray(md2.data(), static_cast<int>(md2.size())));
    QCOMPARE(parsed.graph(0).name(), std::string("second_0"));
    QCOMPARE(imp.model->graph->name(), std::string("tiny_0"));  // the root model's graph
    QVERIFY(!imp.warnings.empty() && imp.warnings[0].find("2 models") != std::string::npos);
    QVERIFY2(imp.warnings[0].find("#0..#1") != std::string::npos, imp.warnings[0].c_str());

    // Any model of the file can be read: its own graph, metadata saying which it is.
    const OmImport other = readOmBytes(std::make_shared<OwnedStorage>(bytes), "test.om", 1);
    QCOMPARE(other.model->graph->name(), std::string("second_0"));
    QCOMPARE(meta(*other.model, "om.model_index"), std::string("1"));
    QCOMPARE(meta(*other.model, "om.model_count"), std::string("2"));
    try {
      readOmBytes(std::make_shared<OwnedStorage>(bytes), "test.om", 2);
      QFAIL("model #2 of a 2-model file was read");
    } catch (const LoadError& e) {
      QVERIFY2(QString(e.what()).contains("no model #2") && QString(e.what()).contains("#0..#1"), e.what());
    }

    // Through the loader, as every command and the workbench open it: "FILE.om#N".
    QTemporaryDir dir;
    const std::string path = dir.filePath("two.om").toStdString();
    {
      std::ofstream f(path, std::ios::binary);
      f.write(bytes.data(), std::streamsize(bytes.size()));
    }
    QVERIFY(modelPathExists(path + "#1") && !modelPathExists(path + "#x") && !modelPathExists(path + ".om#1"));
    QCOMPARE(loadModel(path + "#1").model->graph->name(), std::string("second_0"));
    QCOMPARE(loadModel(path).model->graph->name(), std::string("tiny_0"));
    try {
      loadModel(path + "#7");
      QFAIL("model #7 was read");
    } catch (const LoadError& e) {
      QCOMPARE(e.file(), path + "#7");
    }    // A batch over the folder runs every model of the file.
    QCOMPARE(findModels({dir.path().toStdString()}), (std::vector<std::string>{path + "#0", path + "#1"}));
  }

  void containerRoundTrip() {
    OmHeader h = header();
    h.modelType = 1;
    h.ops = 7;
    h.isUnknownModel = 1;
    const std::vector<OmPartitionPayload> parts = {{8, "abc"}, {0, "model-bytes"}, {1, std::string(100, 'w')}, {2, ""}};
    for (OmLayout layout : {OmLayout::V2Wide, OmLayout::V1Tiny}) {
      const std::string bytes = writeOmContainer(h, {parts}, layout);
      const auto span = std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      const OmContainer c = parseOmContainer(span, "rt.om");
      QVERIFY(c.warnings.empty());
      QCOMPARE(c.header.name, h.name);
      QCOMPARE(c.header.ops, 7u);
      QCOMPARE(c.header.modelType, uint8_t{1});
      QCOMPARE(c.header.isUnknownModel, static_cast<uint8_t>(layout == OmLayout::V2Wide ? 1 : 0));  // v1 has no such field
      QCOMPARE(c.models[0].partitions.size(), parts.size());
      for (size_t i = 0; i < parts.size(); ++i) {
        QCOMPARE(c.models[0].partitions[i].type, parts[i].type);
        const auto b = partitionBytes(span, c.models[0].partitions[i]);
        QCOMPARE(std::string(reinterpret_cast<const char*>(b.data()), b.size()), parts[i].bytes);
      }
      // Writing what was read gives the same bytes.
      std::vector<OmPartitionPayload> again;
      for (const auto& p : c.models[0].partitions) {
        const auto b = partitionBytes(span, p);
        again.push_back({p.type, std::string(reinterpret_cast<const char*>(b.data()), b.size())});
      }
      QCOMPARE(writeOmContainer(c.header, {again}, layout), bytes);
    }
  }

  void inOutInfoRoundTrip() {
    OmInOutInfo info;
    info.inputs.push_back({7056 * 4, 1, 0, "s", {1, 42, 42, 1}, {}, {{1, 1}, {42, 42}}});
    info.inputs.push_back({8, 2, 9, "ids", {-1}, {1}, {}});
    info.outputs.push_back({4, 2, 3, "out_a:0", {1}, {}, {}});
    info.others.push_back({2, std::string("\x01\x00\x00\x00", 4)});
    const std::string bytes = writeInOutInfo(info);
    const auto parsed = parseInOutInfo(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "io");
    QVERIFY(parsed == info);
    QCOMPARE(inOutDataTypeName(parsed.inputs[1].dataType), std::string("int64"));
    // And through a whole file: the reader exposes it.
    Sample s = sample();
    auto parts = partitions(s);
    parts.insert(parts.begin(), OmPartitionPayload{8, bytes});
    const OmImport imp = load(writeOmContainer(header(), {parts}));
    QVERIFY(imp.info.inOut && *imp.info.inOut == info);
  }

  void inOutInfoTruncatedIsRefused() {
    OmInOutInfo info;
    info.inputs.push_back({4, 0, 0, "x", {1, 2, 3}, {}, {}});
    std::string bytes = writeInOutInfo(info);
    put32(bytes, 8, 1000000000);  // tensor count
    try {
      parseInOutInfo(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "io.om");
      QFAIL("expected a refusal");
    } catch (const LoadError& e) {
      QVERIFY2(std::string(e.what()).find("1000000000 tensors") != std::string::npos, e.what());
    }
  }

  void loaderFindsOmByMagicWhateverTheExtension() {
    const QString path = tmp_.filePath("model.bin");
    std::ofstream(path.toStdString(), std::ios::binary) << fileOf(sample());
    QCOMPARE(detectModelFormat(path.toStdString()), ModelFormat::AscendOm);
    const LoadedModel lm = loadModel(path.toStdString());
    QCOMPARE(lm.model->graph->numNodes(), size_t{4});
    for (const auto& w : lm.warnings) qInfo("warning: %s", w.c_str());
  }

  // --- bad input, one test each ---------------------------------------------------------------------------------

  void wrongMagic() {
    std::string b = fileOf(sample());
    b[0] = 'X';
    EXPECT_REFUSED(b, "magic");
  }

  void truncatedHeader() { EXPECT_REFUSED(fileOf(sample()).substr(0, 100), "truncated .om header"); }

  void lengthDisagreesWithFileSize() {
    std::string b = fileOf(sample());
    b.pop_back();
    EXPECT_REFUSED(b, "bytes follow the header");
  }

  void partitionPastEndOfFile() {
    std::string b = fileOf(sample());
    put64(b, 256 + 8 + 24 * 1 + 16, 1u << 20);  // WEIGHTS_DATA size
    EXPECT_REFUSED(b, "lies past the end of the file");
  }

  void partitionCountInTheBillions() {
    std::string b = fileOf(sample());
    put32(b, 256, 3000000000u);
    EXPECT_REFUSED(b, "declares 3000000000 partitions");
  }

  void modelCountInTheBillions() {
    std::string b = fileOf(sample());
    put32(b, 156, 4000000000u);
    EXPECT_REFUSED(b, "declares 4000000000 models");
  }

  void overlappingPartitions() {
    std::string b = fileOf(sample());
    put64(b, 256 + 8 + 24 * 1 + 8, 0);  // WEIGHTS_DATA starts where MODEL_DEF does
    EXPECT_REFUSED(b, "overlap");
  }

  void overflowingOffset() {
    std::string b = fileOf(sample());
    put64(b, 256 + 8 + 24 * 2 + 8, UINT64_MAX - 4);  // offset + size wraps around
    EXPECT_REFUSED(b, "lies past the end of the file");
  }

  void encrypted() {
    OmHeader h = header();
    h.isEncrypt = 1;
    EXPECT_REFUSED(writeOmContainer(h, {partitions(sample())}), "encrypted");
  }

  void garbageModelDef() {
    auto parts = partitions(sample());
    parts[0].bytes = std::string("\xff\xff\xff\xff\x0f garbage", 13);
    EXPECT_REFUSED(writeOmContainer(header(), {parts}), "not a valid ge.proto.ModelDef");
  }

  void noModelDef() {
    auto parts = partitions(sample());
    parts.erase(parts.begin());
    EXPECT_REFUSED(writeOmContainer(header(), {parts}), "no MODEL_DEF");
  }

  void negativeDims() {
    Sample s = sample();
    s.op("conv")->mutable_output_desc(0)->mutable_shape()->set_dim(2, -5);
    EXPECT_REFUSED(fileOf(s), "invalid dimension -5");
  }

  void negativeConstDims() {
    Sample s = sample();
    auto* d = (*s.op("w")->mutable_attr())["value"].mutable_t()->mutable_desc();
    d->mutable_shape()->set_dim(0, -1);
    EXPECT_REFUSED(fileOf(s), "a constant's shape must be static");
  }

  void constDataOffsetPastTheWeights() {
    Sample s = sample();
    (*s.op("w")->mutable_attr())["value"].mutable_t()->mutable_desc()->set_data_offset(12);
    EXPECT_REFUSED(fileOf(s), "past the end of WEIGHTS_DATA");
  }

  void inputNamesMissingOp() {
    Sample s = sample();
    s.op("conv")->set_input(1, "nope:0");
    EXPECT_REFUSED(fileOf(s), "names 'nope', which is not an op of the graph");
  }

  void inputIndexOutOfRange() {
    Sample s = sample();
    s.op("conv")->set_input(0, "x:3");
    EXPECT_REFUSED(fileOf(s), "reads output 3 of 'x', which has 1 outputs");
  }

  void malformedInputReference() {
    Sample s = sample();
    s.op("conv")->set_input(0, "x:zero");
    EXPECT_REFUSED(fileOf(s), "no valid output index");
  }

  // Random byte flips, overwritten words and truncations of a valid file (v2 and v1): each either loads or is
  // refused with a LoadError — nothing else escapes, nothing crashes (the asan preset runs this too).
  void mutatedFilesLoadOrAreRefused() {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    auto next = [&] {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    int loaded = 0, refused = 0;
    for (OmLayout layout : {OmLayout::V2Wide, OmLayout::V1Tiny}) {
      const std::string good = fileOf(sample(), layout);
      for (int i = 0; i < 1500; ++i) {
        std::string b = good;
        switch (next() % 3) {
          case 0:
            for (int k = 0, n = 1 + static_cast<int>(next() % 4); k < n; ++k) b[next() % b.size()] = static_cast<char>(next());
            break;
          case 1: {  // a 32-bit word set to an extreme value, where counts, sizes and offsets live
            const uint32_t v = std::array<uint32_t, 4>{0, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu}[next() % 4];
            put32(b, next() % (b.size() - 4), v);
            break;
          }
          default: b.resize(next() % b.size()); break;
        }
        try {
          load(std::move(b));
          ++loaded;
        } catch (const LoadError&) {
          ++refused;
        } catch (const std::exception& e) {
          QFAIL(qPrintable(QString("mutation %1 escaped as %2").arg(i).arg(e.what())));
        }
      }
    }
    qInfo("%d mutated files loaded, %d refused with a LoadError", loaded, refused);
    QVERIFY(refused > 0);
  }

  void cliInspectCorruptOmExits2() {
    const QString path = tmp_.filePath("corrupt_model.om");
    std::string b = fileOf(sample());
    put64(b, 256 + 8 + 24 * 1 + 16, 1u << 20);
    std::ofstream(path.toStdString(), std::ios::binary) << b;
    const KilnRun bad = kilnInspect(path);
    qInfo("%s", qPrintable(bad.err.trimmed()));
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("corrupt_model.om") && bad.err.contains("past the end"), qPrintable(bad.err));

    // And a good one prints its ops and formats.
    const QString good = tmp_.filePath("good.om");
    std::ofstream(good.toStdString(), std::ios::binary) << fileOf(sample());
    const KilnRun ok = kilnInspect(good);
    const QString& out = ok.out;
    QCOMPARE(ok.code, 0);
    QVERIFY2(out.contains("ge:Conv2D") && out.contains("NC1HWC0") && out.contains("om.memory_size"), qPrintable(out));
  }
};

QTEST_GUILESS_MAIN(OmReaderTest)
#include "test_om_reader.moc"
