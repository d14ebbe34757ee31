// Stage 2 precision and format passes: RefineRunningPrecision in every precision_mode (Casts at inputs, outputs and
// AI CPU boundaries, weights converted offline, the mix lists), CastRemoval, RefineRunningFormat (NC1HWC0 / FRACTAL_Z
// / FRACTAL_NZ, propagation through agnostic ops, TransData where layouts disagree, symbolic leading dims, padding
// bytes), the TransData cleanups (symmetry, breadth, TransData+Cast), the TransData kernel's element positions, and
// the whole pipeline on the generated ResNet-50 and MobileNetV2.
#include <QtTest>

#include <malloc.h>

#include <random>

#include "kernels/kernel.h"
#include "kernels/transdata.h"
#include "emulator/reference_executor.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/npu_format_ops.h"
#include "ir/opdefs/shape_inference.h"
#include "passes/optimize/op_traits.h"
#include "passes/optimize/optimize_passes.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "support/pass_test_support.h"
#include "support/transdata_checks.h"

using namespace kiln;
using kiln::testing::counter;
using kiln::testing::countOps;
using kiln::testing::inconsistentTransData;
using kiln::testing::problems;
using kiln::testing::runPass;

namespace {

using Dims = std::vector<int64_t>;

ValueType tensorOf(DType t, const Dims& dims) { return ValueType::tensor(t, Shape::ofStatic(dims)); }

// An empty model importing the default and Kiln domains.
std::unique_ptr<Model> npuModel() {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  m->opsets["kiln"] = 1;
  return m;
}

// A hand-made kiln:TransData (origin_shape only when given), typed by its own inference.
Value* addTransData(Graph& g, Value* v, const std::string& src, const std::string& dst, const Dims& origin,
                    const std::string& name) {
  Node* n = g.addNode("TransData", {v}, {name}, name, "kiln");
  n->setAttr("src_format", Attribute(src));
  n->setAttr("dst_format", Attribute(dst));
  if (!origin.empty()) n->setAttr("origin_shape", Attribute(origin));
  inferTransData(*n);
  return n->output(0);
}

Tensor randomFloats(const Dims& dims, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return Tensor::fromVector(DType::Float, dims, v);
}

Node* findOp(const Model& m, const std::string& qualified) {
  for (Node* n : m.graph->nodes())
    if (n->qualifiedType() == qualified) return n;
  return nullptr;
}

Value* findValue(const Model& m, const std::string& name) {
  for (Value* v : m.graph->values())
    if (v->name() == name) return v;
  return nullptr;
}

Options withPrecision(const std::string& mode) {
  Options o;
  o.set("precision_mode=" + mode);
  return o;
}

// x[1,3,8,8] -> Conv(W[4,3,3,3], B[4]) -> y1 -> Relu (on the AI CPU) -> y2 -> Add(y2, y1) -> out
struct ConvGraph {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  Node *conv = nullptr, *relu = nullptr, *add = nullptr;
  ConvGraph() {
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    Value* x = g.addInput("x", tensorOf(DType::Float, {1, 3, 8, 8}));
    conv = g.addNode("Conv", {x, g.addInitializer("W", randomFloats({4, 3, 3, 3}, 1)),
                              g.addInitializer("B", randomFloats({4}, 2))}, {"y1"}, "conv");
    conv->setAttr("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1}));
    relu = g.addNode("Relu", {conv->output(0)}, {"y2"}, "relu");
    add = g.addNode("Add", {relu->output(0), conv->output(0)}, {"out"}, "add");
    g.addOutput(add->output(0));
    inferShapes(*m);
    for (Node* n : g.nodes()) n->setAnnotation("engine", "aicore");
    relu->setAnnotation("engine", "aicpu");  // as ValidityCheck would tag an AI CPU op
  }
};

// A small CNN: x[1,3,8,8] -> Conv(20) -> Relu -> MaxPool -> Conv(20) -> Add(residual) -> GlobalAveragePool ->
// Flatten -> out
struct SmallCnn {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  SmallCnn(DType dtype = DType::Float16, std::vector<Dim> inputDims = {}) {
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    if (inputDims.empty()) inputDims = {Dim::fixed(1), Dim::fixed(3), Dim::fixed(8), Dim::fixed(8)};
    Value* x = g.addInput("x", ValueType::tensor(dtype, Shape(inputDims)));
    auto weight = [&](const std::string& name, const Dims& dims, uint32_t seed) {
      return g.addInitializer(name, convertTensor(randomFloats(dims, seed), dtype));
    };
    Node* c1 = g.addNode("Conv", {x, weight("W1", {20, 3, 3, 3}, 3)}, {"c1"}, "conv1");
    c1->setAttr("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1}));
    Node* r = g.addNode("Relu", {c1->output(0)}, {"r"}, "relu");
    Node* p = g.addNode("MaxPool", {r->output(0)}, {"p"}, "pool");
    p->setAttr("kernel_shape", Attribute(std::vector<int64_t>{2, 2}));
    p->setAttr("strides", Attribute(std::vector<int64_t>{2, 2}));
    Node* c2 = g.addNode("Conv", {p->output(0), weight("W2", {20, 20, 1, 1}, 4)}, {"c2"}, "conv2");
    Node* add = g.addNode("Add", {c2->output(0), p->output(0)}, {"sum"}, "residual");
    Node* gap = g.addNode("GlobalAveragePool", {add->output(0)}, {"gap"}, "gap");
    Node* flat = g.addNode("Flatten", {gap->output(0)}, {"out"}, "flatten");
    g.addOutput(flat->output(0));
    inferShapes(*m);
    for (Node* n : g.nodes()) n->setAnnotation("engine", "aicore");
  }
};

// A sample through the standard pipeline; `failure` says what went wrong (the run, the verifier, TransData types).
std::unique_ptr<Model> compileSample(const std::string& name, RunSummary* summary, QString* failure,
                                     const Options& options = {}) {
  auto m = buildSample(name);
  PassManager pm;
  addStandardPasses(pm, options);
  *summary = pm.run(*m, options);
  *failure = QString::fromStdString(summary->error) + problems(*m) + inconsistentTransData(*m);
  return m;
}

const PassRecord* record(const RunSummary& s, const std::string& pass) {
  for (const PassRecord& r : s.passes)
    if (r.name == pass) return &r;
  return nullptr;
}

int64_t recordCounter(const RunSummary& s, const std::string& pass, const std::string& name) {
  const PassRecord* r = record(s, pass);
  if (!r) return -1;
  auto it = r->counters.find(name);
  return it == r->counters.end() ? 0 : it->second;
}

// Convolutions after Stage 2: plain Conv and the FusedConv that ConvBatchNorm/ConvActivation fusion made of them.
int convCount(const Model& m) { return countOps(m, "Conv") + countOps(m, "kiln:FusedConv"); }

}  // namespace

class OptimizeFormatsTest : public QObject {
  Q_OBJECT
 private slots:
  // ------------------------------------------------------------------ layouts and the TransData kernel
  void physicalShapesKeepSymbolicDims() {
    const Shape x({Dim::symbolic("batch"), Dim::fixed(3), Dim::symbolic("h"), Dim::fixed(224)});
    QCOMPARE(QString::fromStdString(physicalShape(x, Format::NC1HWC0, 2)->toString()),
             QString("batch×1×h×224×16"));
    const Shape seq({Dim::symbolic("batch"), Dim::fixed(5), Dim::fixed(20)});
    QCOMPARE(QString::fromStdString(physicalShape(seq, Format::FRACTAL_NZ, 2)->toString()),
             QString("batch×2×1×16×16"));
    QCOMPARE(QString::fromStdString(logicalShape(*physicalShape(seq, Format::FRACTAL_NZ, 2), Format::FRACTAL_NZ,
                                                 {-1, 5, 20})->toString()),
             QString("batch×5×20"));
    // Blocked axes must be static; FRACTAL_Z needs every extent.
    const Shape symbolicC({Dim::fixed(1), Dim::symbolic("c"), Dim::fixed(4), Dim::fixed(4)});
    QVERIFY(!physicalShape(symbolicC, Format::NC1HWC0, 2));
    QVERIFY(!physicalShape(Shape({Dim::fixed(2), Dim::symbolic("seq")}), Format::FRACTAL_NZ, 2));
    const Shape symbolicN({Dim::symbolic("n"), Dim::fixed(3), Dim::fixed(3), Dim::fixed(3)});
    QVERIFY(!physicalShape(symbolicN, Format::FRACTAL_Z, 2));
    // int8 blocks 32 channels.
    QCOMPARE(*physicalShape(Shape::ofStatic({1, 33, 2, 2}), Format::NC1HWC0, 1), Shape::ofStatic({1, 2, 2, 2, 32}));
  }

  void transDataRoundTripsAndPadsWithZeros_data() {
    QTest::addColumn<QList<qlonglong>>("dims");
    QTest::addColumn<int>("format");
    QTest::addColumn<QList<qlonglong>>("physical");
    QTest::newRow("NC1HWC0, C=3") << QList<qlonglong>{2, 3, 2, 5} << int(Format::NC1HWC0)
                                  << QList<qlonglong>{2, 1, 2, 5, 16};
    QTest::newRow("NC1HWC0, C=35") << QList<qlonglong>{1, 35, 3, 1} << int(Format::NC1HWC0)
                                   << QList<qlonglong>{1, 3, 3, 1, 16};
    QTest::newRow("FRACTAL_NZ, batch 2") << QList<qlonglong>{2, 5, 20} << int(Format::FRACTAL_NZ)
                                         << QList<qlonglong>{2, 2, 1, 16, 16};
    QTest::newRow("FRACTAL_Z") << QList<qlonglong>{20, 18, 3, 3} << int(Format::FRACTAL_Z)
                               << QList<qlonglong>{18, 2, 16, 16};
  }
  void transDataRoundTripsAndPadsWithZeros() {
    QFETCH(QList<qlonglong>, dims);
    QFETCH(int, format);
    QFETCH(QList<qlonglong>, physical);
    const Dims logical(dims.begin(), dims.end());
    const Tensor x = convertTensor(randomFloats(logical, 7), DType::Float16);
    const Tensor y = transDataTensor(x, Format::ND, static_cast<Format>(format));
    QVERIFY(y.valid());
    QCOMPARE(y.dims(), Dims(physical.begin(), physical.end()));
    // Every logical element is somewhere; the rest is zero padding.
    int64_t zeros = 0;
    for (double v : y.toDouble()) zeros += v == 0.0;
    int64_t xZeros = 0;
    for (double v : x.toDouble()) xZeros += v == 0.0;
    QCOMPARE(zeros - xZeros, y.numel() - x.numel());
    const Tensor back = transDataTensor(y, static_cast<Format>(format), Format::ND, logical);
    QVERIFY(back == x);
    // The kernel behind kiln:TransData gives the same tensor.
    Model m;
    Value* in = m.graph->addInput("x", tensorOf(DType::Float16, logical));
    Node* t = m.graph->addNode("TransData", {in}, 1, "t", "kiln");
    t->setAttr("src_format", Attribute(std::string("ND")));
    t->setAttr("dst_format", Attribute(std::string(formatName(static_cast<Format>(format)))));
    const auto out = evaluateNode(*t, {&x});
    QCOMPARE(out.size(), size_t(1));
    QVERIFY(out[0] == y);
  }

  void fractalZHasTheDocumentedElementPositions() {
    // W[n][c][h][w] -> y[(c/16 · H + h) · W + w][n/16][n%16][c%16]
    const Dims w{20, 18, 3, 3};
    std::vector<float> values(20 * 18 * 3 * 3);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i + 1);
    const Tensor y = transDataTensor(Tensor::fromVector(DType::Float, w, values), Format::ND, Format::FRACTAL_Z);
    QCOMPARE(y.dims(), (Dims{18, 2, 16, 16}));
    const auto at = [&](int64_t n, int64_t c, int64_t h, int64_t x) { return ((n * 18 + c) * 3 + h) * 3 + x + 1; };
    const auto phys = [&](int64_t n, int64_t c, int64_t h, int64_t x) {
      return (((c / 16 * 3 + h) * 3 + x) * 2 + n / 16) * 16 * 16 + (n % 16) * 16 + c % 16;
    };
    const std::vector<double> v = y.toDouble();
    QCOMPARE(v[static_cast<size_t>(phys(17, 17, 1, 2))], double(at(17, 17, 1, 2)));
    QCOMPARE(v[static_cast<size_t>(phys(0, 0, 0, 0))], 1.0);
    QCOMPARE(v[static_cast<size_t>(phys(3, 16, 2, 0))], double(at(3, 16, 2, 0)));
    QCOMPARE(v[static_cast<size_t>(phys(19, 2, 0, 1))], double(at(19, 2, 0, 1)));
    // n = 20..31 and c = 18..31 are padding.
    QCOMPARE(v[static_cast<size_t>(phys(25, 1, 0, 0))], 0.0);
    QCOMPARE(v[static_cast<size_t>(phys(1, 20, 0, 0))], 0.0);
    // FRACTAL_NZ: x[h][w] -> y[w/16][h/16][h%16][w%16]
    std::vector<float> m(5 * 20);
    for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i + 1);
    const Tensor nz = transDataTensor(Tensor::fromVector(DType::Float, {5, 20}, m), Format::ND, Format::FRACTAL_NZ);
    QCOMPARE(nz.dims(), (Dims{2, 1, 16, 16}));
    QCOMPARE(nz.toDouble()[static_cast<size_t>(1 * 256 + 0 * 256 + 4 * 16 + 3)], double(4 * 20 + 19 + 1));
  }

  void weightSizedLayoutsHaveTheDocumentedPositions() {
    // Big enough to be split across the cores (by the first axis), with and without padding (a layout without
    // padding writes into unzeroed memory): every element where the layout puts it, every padded one zero.
    struct Case {
      Dims dims;
      Format format;
    };
    // As in kiln (app/main.cpp), such blocks come from the heap; it is dirtied first, so a padded byte left unset
    // shows, not the zeros of fresh pages.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    {
      std::vector<char*> dirty;
      for (int k = 0; k < 8; ++k) {
        dirty.push_back(static_cast<char*>(std::malloc(3 << 20)));
        std::memset(dirty.back(), 0x5a, 3 << 20);
      }
      for (char* d : dirty) std::free(d);
    }
    // fp16 and fp32 (both C0 = 16), and the way back to the plain layout.
    for (const DType type : {DType::Float16, DType::Float})
      for (const Case& c : {Case{{512, 250, 3, 3}, Format::FRACTAL_Z}, Case{{512, 256, 3, 3}, Format::FRACTAL_Z},
                            Case{{20, 36, 1, 1}, Format::FRACTAL_Z}, Case{{8, 100, 28, 28}, Format::NC1HWC0},
                            Case{{8, 96, 28, 28}, Format::NC1HWC0}, Case{{2, 32, 5, 7}, Format::NC1HWC0},
                            Case{{3, 37, 70, 100}, Format::FRACTAL_NZ}}) {
        const int64_t N = c.dims[0], C = c.dims[1], H = c.dims[2], W = c.dims[3];
        const Tensor x = convertTensor(randomFloats(c.dims, 11), type);
        const Tensor y = transDataTensor(x, Format::ND, c.format);
        QVERIFY(y.valid());
        const int64_t c0 = 16;
        const int64_t C1 = (C + c0 - 1) / c0, N1 = (N + 15) / 16, H1 = (H + 15) / 16, W1 = (W + 15) / 16;
        std::vector<char> written(static_cast<size_t>(y.numel()), 0);
        const auto check = [&](auto* in, auto* out) {
          for (int64_t n = 0; n < N; ++n)
            for (int64_t ch = 0; ch < C; ++ch)
              for (int64_t h = 0; h < H; ++h)
                for (int64_t w = 0; w < W; ++w) {
                  const int64_t at = ((n * C + ch) * H + h) * W + w;
                  int64_t phys = 0;
                  if (c.format == Format::FRACTAL_Z)
                    phys = (((ch / c0 * H + h) * W + w) * N1 + n / 16) * 16 * c0 + n % 16 * c0 + ch % c0;
                  else if (c.format == Format::NC1HWC0)
                    phys = (((n * C1 + ch / c0) * H + h) * W + w) * c0 + ch % c0;
                  else  // FRACTAL_NZ over the last two axes, the first two as batch
                    phys = (((n * C + ch) * W1 + w / 16) * H1 * 16 + h) * 16 + w % 16;
                  if (out[phys] != in[at]) return QString("element %1 misplaced").arg(at);
                  written[static_cast<size_t>(phys)] = 1;
                }
          for (size_t i = 0; i < written.size(); ++i)
            if (!written[i] && out[i] != 0) return QString("padding at %1 is not zero").arg(i);
          return QString();
        };
        const QString problem =
            type == DType::Float16
                ? check(reinterpret_cast<const uint16_t*>(x.data()), reinterpret_cast<const uint16_t*>(y.data()))
                : check(reinterpret_cast<const uint32_t*>(x.data()), reinterpret_cast<const uint32_t*>(y.data()));
        if (!problem.isEmpty())
          QFAIL(qPrintable(QString::fromStdString(std::string(dtypeName(type)) + " " +
                                                  std::string(formatName(c.format)) + ": ") + problem));
        QVERIFY(transDataTensor(y, c.format, Format::ND, c.dims) == x);
      }
  }

  void transDataInferenceKeepsSymbolicBatch() {
    Model m;
    const Shape batch({Dim::symbolic("batch"), Dim::fixed(3), Dim::fixed(4), Dim::fixed(4)});
    Value* x = m.graph->addInput("x", ValueType::tensor(DType::Float16, batch));
    Node* in = m.graph->addNode("TransData", {x}, 1, "in", "kiln");
    in->setAttr("src_format", Attribute(std::string("ND")));
    in->setAttr("dst_format", Attribute(std::string("NC1HWC0")));
    inferTransData(*in);
    QCOMPARE(QString::fromStdString(in->output(0)->type().shape.toString()), QString("batch×1×4×4×16"));
    Node* out = m.graph->addNode("TransData", {in->output(0)}, 1, "out", "kiln");
    out->setAttr("src_format", Attribute(std::string("NC1HWC0")));
    out->setAttr("dst_format", Attribute(std::string("ND")));
    out->setAttr("origin_shape", Attribute(std::vector<int64_t>{-1, 3, 4, 4}));
    inferTransData(*out);
    QCOMPARE(out->output(0)->type(), x->type());
    // Without the origin C the padding cannot be undone: an error, not a crash or a guess.
    out->setAttr("origin_shape", Attribute(std::vector<int64_t>{-1, -1, 4, 4}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, inferTransData(*out));
  }

  void opTablesKnowFusedOps() {
    Model m;
    Value* x = m.graph->addInput("x", tensorOf(DType::Float, {1, 4}));
    auto node = [&](const std::string& op, const std::string& domain) {
      return m.graph->addNode(op, {x}, 1, op, domain);
    };
    QCOMPARE(formatRole(*node("FusedConv", "kiln")), FormatRole::Conv5HD);
    QCOMPARE(formatRole(*node("FusedMatMul", "kiln")), FormatRole::MatMulNZ);
    QCOMPARE(formatRole(*node("Gelu", "kiln")), FormatRole::Elementwise);
    QCOMPARE(formatRole(*node("Reshape", "")), FormatRole::Logical);
    QCOMPARE(formatRole(*node("Conv", "com.example")), FormatRole::Logical);  // by qualified type, not bare name
    QCOMPARE(precisionList(*node("Attention", "kiln")), PrecisionList::White);
    QCOMPARE(precisionList(*node("AddLayerNorm", "kiln")), PrecisionList::Black);
    QCOMPARE(precisionList(*node("Softmax", "")), PrecisionList::Black);
    QCOMPARE(precisionList(*node("Relu", "")), PrecisionList::Grey);
  }

  // ------------------------------------------------------------------ precision
  void forceFp16CastsAtInputsOutputsAndAiCpu() {
    ConvGraph t;
    const PassResult r = runPass(*makeRefineRunningPrecisionPass(), *t.m);
    QCOMPARE(problems(*t.m), QString());
    // x -> fp16 (1), y1 back to fp32 for the AI CPU Relu (1), y2 to fp16 for Add (1), out back to fp32 (1).
    QCOMPARE(counter(r, "casts_inserted"), 4);
    QCOMPARE(countOps(*t.m, "Cast"), 4);
    QCOMPARE(counter(r, "nodes_fp16"), 2);
    QCOMPARE(counter(r, "weights_converted"), 2);
    QCOMPARE(t.conv->annotation("precision"), std::string("fp16 (force_fp16)"));
    QCOMPARE(t.relu->annotation("precision"), std::string("fp32 (aicpu)"));
    QCOMPARE(t.conv->input(0)->producer()->opType(), std::string("Cast"));
    QCOMPARE(t.conv->output(0)->type().dtype, DType::Float16);
    QCOMPARE(t.relu->output(0)->type().dtype, DType::Float);
    // Weights converted offline: the initializer itself, under its own name, no Cast.
    QCOMPARE(t.conv->input(1)->name(), std::string("W"));
    QVERIFY(t.conv->input(1)->constant());
    QCOMPARE(t.conv->input(1)->constant()->dtype(), DType::Float16);
    QCOMPARE(t.conv->input(2)->type().dtype, DType::Float16);
    QCOMPARE(t.m->graph->initializers().size(), size_t(2));
    // The graph keeps its interface: input and output fp32, output under its name.
    QCOMPARE(t.m->graph->inputs()[0]->type().dtype, DType::Float);
    Value* out = t.m->graph->outputs()[0];
    QCOMPARE(out->name(), std::string("out"));
    QCOMPARE(out->type().dtype, DType::Float);
    QCOMPARE(out->producer()->opType(), std::string("Cast"));
    QCOMPARE(t.add->output(0)->type().dtype, DType::Float16);
  }

  void precisionModesThatKeepFp32() {
    for (const char* mode : {"force_fp32", "must_keep_origin_dtype"}) {
      ConvGraph t;
      const PassResult r = runPass(*makeRefineRunningPrecisionPass(), *t.m, withPrecision(mode));
      QVERIFY2(!r.changed, mode);
      QCOMPARE(countOps(*t.m, "Cast"), 0);
      QCOMPARE(t.conv->output(0)->type().dtype, DType::Float);
    }
    // allow_fp32_to_fp16: only the cube op narrows; its result is cast back once for both fp32 readers.
    ConvGraph t;
    const PassResult r = runPass(*makeRefineRunningPrecisionPass(), *t.m, withPrecision("allow_fp32_to_fp16"));
    QCOMPARE(problems(*t.m), QString());
    QCOMPARE(counter(r, "nodes_fp16"), 1);
    QCOMPARE(counter(r, "casts_inserted"), 2);
    QCOMPARE(t.add->output(0)->type().dtype, DType::Float);
    QCOMPARE(t.add->input(1), t.relu->input(0));
    QCOMPARE(t.add->annotation("precision"), std::string("fp32 (allow_fp32_to_fp16)"));
  }

  void mixPrecisionFollowsTheLists() {
    // x[2,8] -> MatMul(W) -> Add(b) -> Softmax -> Mul(2) -> out;  x -> Relu -> out2
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float, {2, 8}));
    Node* mm = g.addNode("MatMul", {x, g.addInitializer("W", randomFloats({8, 4}, 5))}, {"mm"}, "matmul");
    Node* add = g.addNode("Add", {mm->output(0), g.addInitializer("b", randomFloats({4}, 6))}, {"a"}, "bias");
    Node* sm = g.addNode("Softmax", {add->output(0)}, {"s"}, "softmax");
    Node* mul = g.addNode("Mul", {sm->output(0), g.addInitializer("two", randomFloats({}, 8))}, {"out"}, "scale");
    Node* relu = g.addNode("Relu", {x}, {"out2"}, "relu");
    g.addOutput(mul->output(0));
    g.addOutput(relu->output(0));
    inferShapes(m);
    const PassResult r = runPass(*makeRefineRunningPrecisionPass(), m, withPrecision("allow_mix_precision"));
    QCOMPARE(problems(m), QString());
    QCOMPARE(mm->annotation("precision"), std::string("fp16 (white list)"));
    QCOMPARE(add->annotation("precision"), std::string("fp16 (grey, follows its producer)"));
    QCOMPARE(sm->annotation("precision"), std::string("fp32 (black list)"));
    QCOMPARE(add->input(1)->type().dtype, DType::Float16);  // the bias constant converted offline
    QCOMPARE(mul->output(0)->type().dtype, DType::Float);    // grey after a black op stays fp32
    QCOMPARE(relu->output(0)->type().dtype, DType::Float);   // grey after an fp32 graph input too
    QCOMPARE(mul->annotation("precision"), std::string());
    QCOMPARE(counter(r, "nodes_fp16"), 2);
    QCOMPARE(counter(r, "casts_inserted"), 2);  // x into MatMul, Add's result back for Softmax
  }

  // Real exports hold ops inference cannot type (contrib ops, experimental ops, ops of a later opset): their results
  // have an unknown element type, fp32 at run time. force_fp16 must not narrow a node reading or writing such a value:
  // it would cast its known operands (a weight) and leave that one fp32 — MatMul/Gemm/Conv "A and B types differ" —
  // or make fp16 data that its readers take for the file's fp32. Those nodes stay fp32 and the graph still runs.
  //   x[2,8] -> com.microsoft:Gelu -> u (?) -> MatMul(u, W) -> y (fp32 declared, output)
  //                                   u     -> Gather(u, [0]) -> g (fp32 declared, output)
  //   x -> Relu -> rs (?) -> Add(rs, s) -> z (fp32 declared, output);  x -> Sigmoid -> s
  // Relu must stay fp32 too: narrowed, it would hand fp16 data to an Add that casts s back to fp32 for it.
  void forceFp16LeavesNodesWithUnknownElementTypesFp32() {
    Model m;
    m.opsets[""] = 17;
    m.opsets["com.microsoft"] = 1;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float, {2, 8}));
    Node* gelu = g.addNode("Gelu", {x}, {"u"}, "gelu", "com.microsoft");
    Node* mm = g.addNode("MatMul", {gelu->output(0), g.addInitializer("W", randomFloats({8, 4}, 5))}, {"y"}, "matmul");
    Node* gather = g.addNode("Gather", {gelu->output(0), g.addInitializer("i", Tensor::fromVector(DType::Int64, {1},
                                                                                  std::vector<int64_t>{0}))},
                             {"g"}, "gather");
    Node* relu = g.addNode("Relu", {x}, {"rs"}, "relu");  // an op whose own inference failed
    Node* sig = g.addNode("Sigmoid", {x}, {"s"}, "sigmoid");
    Node* add = g.addNode("Add", {relu->output(0), sig->output(0)}, {"z"}, "add");
    for (Node* n : {mm, gather, add}) g.addOutput(n->output(0));
    // The types as inference left them: known up to the ops it could not type, the file's declared outputs.
    sig->output(0)->setType(tensorOf(DType::Float, {2, 8}));
    mm->output(0)->setType(tensorOf(DType::Float, {2, 4}));
    gather->output(0)->setType(tensorOf(DType::Float, {1, 8}));
    add->output(0)->setType(tensorOf(DType::Float, {2, 8}));
    for (Node* n : g.nodes()) n->setAnnotation("engine", "aicore");
    gelu->setAnnotation("engine", "unsupported");
    QCOMPARE(problems(m), QString());
    const std::vector<Tensor> inputs = {randomFloats({2, 8}, 7)};
    const std::vector<Tensor> before = ReferenceExecutor().run(g, inputs);

    const PassResult r = runPass(*makeRefineRunningPrecisionPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(mm->annotation("precision"), std::string("fp32 (element type of 'u' unknown)"));
    QCOMPARE(gather->annotation("precision"), std::string("fp32 (element type of 'u' unknown)"));
    QCOMPARE(add->annotation("precision"), std::string("fp32 (element type of 'rs' unknown)"));
    QCOMPARE(relu->annotation("precision"), std::string("fp32 (element type of 'rs' unknown)"));
    QCOMPARE(sig->annotation("precision"), std::string("fp16 (force_fp16)"));
    QCOMPARE(mm->input(1)->type().dtype, DType::Float);  // the weight is not converted for a node staying fp32
    QCOMPARE(gather->output(0)->type().dtype, DType::Float);
    QCOMPARE(relu->input(0), x);
    QCOMPARE(relu->output(0)->type().dtype, DType::Undefined);
    QCOMPARE(add->input(1)->producer()->opType(), std::string("Cast"));  // Sigmoid's fp16 result cast back
    QCOMPARE(add->input(1)->type().dtype, DType::Float);
    QCOMPARE(counter(r, "nodes_fp16"), 1);
    QCOMPARE(counter(r, "nodes_unknown_type"), 4);
    QCOMPARE(counter(r, "weights_converted"), 0);
    QCOMPARE(counter(r, "casts_inserted"), 2);  // x into Sigmoid, its result back for Add
    // The rewritten graph runs, and only Sigmoid's rounding to fp16 separates it from the original.
    std::vector<Tensor> after;
    try {
      after = ReferenceExecutor().run(g, inputs);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QCOMPARE(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      QCOMPARE(after[i].dtype(), DType::Float);
      const std::vector<double> a = after[i].toDouble(), b = before[i].toDouble();
      QCOMPARE(a.size(), b.size());
      for (size_t k = 0; k < a.size(); ++k) QVERIFY(std::abs(a[k] - b[k]) <= 1e-3 * (1 + std::abs(b[k])));
    }
  }

  // Training-mode Dropout in fp16 drops the same elements as in fp32: its ratio is a probability (type T1), kept
  // fp32 while the data narrows (0.8 in fp16 is 0.7998, which keeps elements the model drops).
  void dropoutRatioStaysFp32() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float, {4, 4096}));
    Value* ratio = g.addInitializer("ratio", Tensor::fromVector(DType::Float, {}, std::vector<float>{0.8f}));
    Value* training = g.addInitializer("training", Tensor::fromBytes(DType::Bool, {}, std::string(1, '\1')));
    Node* drop = g.addNode("Dropout", {x, ratio, training}, {"y"}, "dropout");
    drop->output(0)->setType(tensorOf(DType::Float, {4, 4096}));
    g.addOutput(drop->output(0));
    drop->setAnnotation("engine", "aicore");
    const std::vector<Tensor> inputs = {randomFloats({4, 4096}, 3)};
    const std::vector<Tensor> before = ReferenceExecutor().run(g, inputs);
    runPass(*makeRefineRunningPrecisionPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(drop->input(0)->type().dtype, DType::Float16);
    QCOMPARE(drop->input(1)->type().dtype, DType::Float);
    const std::vector<double> a = ReferenceExecutor().run(g, inputs)[0].toDouble(), b = before[0].toDouble();
    for (size_t k = 0; k < a.size(); ++k) QCOMPARE(a[k] == 0, b[k] == 0);  // the same elements dropped
  }

  void castRemovalKeepsOnlyLossyCasts() {
    // a(fp16) -> Cast(fp32) -> Cast(fp16) -> Relu -> o1 ; b(fp32) -> Cast(fp16) -> Cast(fp32) -> Relu -> o2 ;
    // b -> Cast(fp32) -> Relu -> o3
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* a = g.addInput("a", tensorOf(DType::Float16, {4}));
    Value* b = g.addInput("b", tensorOf(DType::Float, {4}));
    auto cast = [&](Value* v, DType to, const std::string& name) {
      Node* c = g.addNode("Cast", {v}, {name}, name);
      c->setAttr("to", Attribute(int64_t{dtypeToOnnx(to)}));
      return c->output(0);
    };
    Node* r1 = g.addNode("Relu", {cast(cast(a, DType::Float, "a32"), DType::Float16, "a16")}, {"o1"}, "r1");
    Node* r2 = g.addNode("Relu", {cast(cast(b, DType::Float16, "b16"), DType::Float, "b32")}, {"o2"}, "r2");
    Node* r3 = g.addNode("Relu", {cast(b, DType::Float, "same")}, {"o3"}, "r3");
    for (Node* n : {r1, r2, r3}) g.addOutput(n->output(0));
    inferShapes(m);
    const PassResult r = runPass(*makeCastRemovalPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(counter(r, "casts_removed"), 3);  // the fp16 round trip (2) and the cast to fp32 of fp32 (1)
    QCOMPARE(r1->input(0), a);
    QCOMPARE(r3->input(0), b);
    QCOMPARE(countOps(m, "Cast"), 2);  // fp32 -> fp16 -> fp32 rounds: it stays
    QCOMPARE(r2->input(0)->producer()->opType(), std::string("Cast"));
  }

  // ------------------------------------------------------------------ formats
  void convNetworkStaysIn5hd() {
    SmallCnn t;
    const PassResult r = runPass(*makeRefineRunningFormatPass(), *t.m);
    QCOMPARE(problems(*t.m), QString());
    QCOMPARE(inconsistentTransData(*t.m), QString());
    // One TransData into 5HD after x, one back before Flatten: Relu, MaxPool, the residual Add and the pool follow.
    QCOMPARE(counter(r, "transdata_inserted"), 2);
    QCOMPARE(countTransData(*t.m), 2);
    QCOMPARE(counter(r, "nodes_5hd"), 2);
    QCOMPARE(counter(r, "nodes_following"), 4);
    QCOMPARE(counter(r, "weights_relaid"), 2);
    Value* w1 = findValue(*t.m, "W1");
    QVERIFY(w1 && w1->constant());
    QCOMPARE(w1->type().format, Format::FRACTAL_Z);
    QCOMPARE(w1->type().shape, Shape::ofStatic({9, 2, 16, 16}));  // C1·H·W = 1·3·3, ceil(20/16) = 2
    QCOMPARE(w1->constant()->dims(), (Dims{9, 2, 16, 16}));
    // C = 3 in fp16 pads to C0 = 16: 1×1×8×8×16×2 bytes instead of 1×3×8×8×2.
    Node* in = t.m->graph->inputs()[0]->uses()[0].node;
    QCOMPARE(in->qualifiedType(), std::string("kiln:TransData"));
    QCOMPARE(in->output(0)->type().byteSize().value_or(0), int64_t{2048});
    QCOMPARE(t.m->graph->inputs()[0]->type().byteSize().value_or(0), int64_t{384});
    Value* sum = findValue(*t.m, "sum");
    QCOMPARE(sum->type().format, Format::NC1HWC0);
    QCOMPARE(sum->type().shape, Shape::ofStatic({1, 2, 4, 4, 16}));
    Node* flatten = findOp(*t.m, "Flatten");
    QCOMPARE(flatten->input(0)->producer()->qualifiedType(), std::string("kiln:TransData"));
    QCOMPARE(flatten->input(0)->type().format, Format::ND);
    QCOMPARE(flatten->input(0)->type().shape, Shape::ofStatic({1, 20, 1, 1}));
    QCOMPARE(t.m->graph->outputs()[0]->type().format, Format::ND);
  }

  void perChannelOpsAndConcatStayIn5hd_data() {
    QTest::addColumn<int64_t>("channels");
    QTest::addColumn<int>("transData");
    QTest::newRow("C=16: concat along C in whole blocks") << int64_t{16} << 2;
    // C=3: the concat along C would put padding inside the result: back to NCHW for the Concat and into 5HD again.
    QTest::newRow("C=3: concat along C needs NCHW") << int64_t{3} << 5;
  }
  void perChannelOpsAndConcatStayIn5hd() {
    QFETCH(int64_t, channels);
    QFETCH(int, transData);
    // x[1,C,4,4] -> Conv(C) -> Sum and Mul ([C,1,1] const) -> BatchNormalization([C] consts) -> Concat(axis -3,
    // with the Conv) -> Conv(4) -> out
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    const int64_t c = channels;
    auto f16 = [&](const std::string& name, const Dims& dims, uint32_t seed) {
      return g.addInitializer(name, convertTensor(randomFloats(dims, seed), DType::Float16));
    };
    Value* x = g.addInput("x", tensorOf(DType::Float16, {1, c, 4, 4}));
    Node* c1 = g.addNode("Conv", {x, f16("W1", {c, c, 1, 1}, 20)}, {"c1"}, "conv1");
    Value* scale = f16("scale", {c, 1, 1}, 21);
    // One node reading a constant twice, then a second reader: all three reads take one re-laid-out copy.
    Node* sum = g.addNode("Sum", {c1->output(0), scale, scale}, {"summed"}, "sum");
    Node* mul = g.addNode("Mul", {sum->output(0), scale}, {"scaled"}, "mul");
    Node* bn = g.addNode("BatchNormalization", {mul->output(0), f16("gamma", {c}, 22), f16("beta", {c}, 23),
                                                f16("mean", {c}, 24), f16("var", {c}, 25)}, {"bn"}, "bn");
    Node* cat = g.addNode("Concat", {bn->output(0), c1->output(0)}, {"cat"}, "concat");
    cat->setAttr("axis", Attribute(int64_t{-3}));
    Node* c2 = g.addNode("Conv", {cat->output(0), f16("W2", {4, 2 * c, 1, 1}, 26)}, {"out"}, "conv2");
    g.addOutput(c2->output(0));
    inferShapes(m);
    const PassResult r = runPass(*makeRefineRunningFormatPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(inconsistentTransData(m), QString());
    QCOMPARE(countTransData(m), transData);
    QCOMPARE(bn->output(0)->type().format, Format::NC1HWC0);
    // The per-channel constants broadcast as [1, C1, 1, 1, C0], zero padded, C at the C0 lanes.
    for (Value* p : {mul->input(1), bn->input(1), bn->input(4)}) {
      QCOMPARE(p->type().format, Format::NC1HWC0);
      QCOMPARE(p->constant()->dims(), (Dims{1, (c + 15) / 16, 1, 1, 16}));
    }
    const std::vector<double> gamma = bn->input(1)->constant()->toDouble();
    const std::vector<double> want = convertTensor(randomFloats({c}, 22), DType::Float16).toDouble();
    for (int64_t i = 0; i < 16; ++i)
      QCOMPARE(gamma[static_cast<size_t>(i)], i < c ? want[static_cast<size_t>(i)] : 0.0);
    QCOMPARE(mul->input(1)->name(), std::string("scale"));  // the copy took the original's name
    QCOMPARE(sum->input(1), mul->input(1));
    QCOMPARE(sum->input(2), mul->input(1));
    const auto initializers = g.initializers();
    QCOMPARE(std::count_if(initializers.begin(), initializers.end(),
                           [](const Value* v) { return v->name().rfind("scale", 0) == 0; }),
             std::ptrdiff_t{1});
    if (c % 16 == 0) {
      QCOMPARE(cat->output(0)->type().shape, Shape::ofStatic({1, 2 * c / 16, 4, 4, 16}));
      QCOMPARE(cat->attrInt("axis", 0), int64_t{1});  // normalised: -3 would name another axis in 5HD
      QCOMPARE(counter(r, "nodes_following"), 4);
    } else {
      QCOMPARE(cat->output(0)->type().format, Format::ND);
      QCOMPARE(counter(r, "nodes_following"), 3);
    }
  }

  void symbolicBatchConvAndNonStaticChannels() {
    SmallCnn batch(DType::Float16, {Dim::symbolic("n"), Dim::fixed(3), Dim::fixed(8), Dim::fixed(8)});
    const PassResult r = runPass(*makeRefineRunningFormatPass(), *batch.m);
    QCOMPARE(problems(*batch.m), QString());
    QCOMPARE(inconsistentTransData(*batch.m), QString());
    QCOMPARE(counter(r, "transdata_inserted"), 2);
    QCOMPARE(QString::fromStdString(findValue(*batch.m, "sum")->type().shape.toString()), QString("n×2×4×4×16"));
    // Unknown input shape: nothing is blocked, nothing breaks.
    Model m;
    m.opsets[""] = 17;
    Value* x = m.graph->addInput("x", ValueType::tensor(DType::Float16, Shape::unknownRank()));
    Node* c = m.graph->addNode("Conv", {x, m.graph->addInitializer("W", convertTensor(randomFloats({4, 3, 1, 1}, 9),
                                                                                      DType::Float16))}, {"y"}, "conv");
    m.graph->addOutput(c->output(0));
    const PassResult none = runPass(*makeRefineRunningFormatPass(), m);
    QCOMPARE(counter(none, "transdata_inserted"), 0);
    QCOMPARE(problems(m), QString());
  }

  void matMulUsesFractalNz_data() {
    QTest::addColumn<bool>("symbolicBatch");
    QTest::newRow("static") << false;
    QTest::newRow("symbolic batch") << true;
  }
  void matMulUsesFractalNz() {
    QFETCH(bool, symbolicBatch);
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    const Dim batch = symbolicBatch ? Dim::symbolic("batch") : Dim::fixed(2);
    Value* x = g.addInput("x", ValueType::tensor(DType::Float16, Shape({batch, Dim::fixed(5), Dim::fixed(20)})));
    Node* mm = g.addNode("MatMul", {x, g.addInitializer("W", convertTensor(randomFloats({20, 7}, 10), DType::Float16))},
                         {"mm"}, "matmul");
    Node* relu = g.addNode("Relu", {mm->output(0)}, {"y"}, "relu");
    g.addOutput(relu->output(0));
    inferShapes(m);
    const PassResult r = runPass(*makeRefineRunningFormatPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(inconsistentTransData(m), QString());
    QCOMPARE(counter(r, "transdata_inserted"), 2);  // x into NZ, y back to ND at the output
    QCOMPARE(counter(r, "nodes_nz"), 1);
    QCOMPARE(mm->input(1)->type().format, Format::FRACTAL_NZ);
    QCOMPARE(mm->input(1)->type().shape, Shape::ofStatic({1, 2, 16, 16}));
    QCOMPARE(QString::fromStdString(relu->output(0)->type().shape.toString()),
             QString(symbolicBatch ? "batch×1×1×16×16" : "2×1×1×16×16"));
    Value* out = g.outputs()[0];
    QCOMPARE(out->name(), std::string("y"));
    QCOMPARE(QString::fromStdString(out->type().shape.toString()), QString(symbolicBatch ? "batch×5×7" : "2×5×7"));
    QCOMPARE(out->producer()->attrInts("origin_shape"), (Dims{symbolicBatch ? -1 : 2, 5, 7}));
  }

  void matMulWithSymbolicInnerDimsStaysNd() {
    Model m;
    m.opsets[""] = 17;
    Value* x = m.graph->addInput("x", ValueType::tensor(DType::Float16, Shape({Dim::fixed(2), Dim::symbolic("seq"),
                                                                               Dim::fixed(20)})));
    Node* mm = m.graph->addNode("MatMul", {x, m.graph->addInitializer("W", convertTensor(randomFloats({20, 7}, 11),
                                                                                       DType::Float16))}, {"y"}, "mm");
    m.graph->addOutput(mm->output(0));
    inferShapes(m);
    const PassResult r = runPass(*makeRefineRunningFormatPass(), m);
    QVERIFY(!r.changed);
    QCOMPARE(mm->output(0)->type().format, Format::ND);
  }

  void fusedConvIsTreatedLikeConv() {
    // kiln:FusedConv is created by the fusion rules (not in this branch's registry): the table decides by op type.
    Model m;
    m.opsets[""] = 17;
    m.opsets["kiln"] = 1;
    Value* x = m.graph->addInput("x", tensorOf(DType::Float16, {1, 3, 4, 4}));
    Value* w = m.graph->addInitializer("W", convertTensor(randomFloats({8, 3, 1, 1}, 12), DType::Float16));
    Node* fc = m.graph->addNode("FusedConv", {x, w}, {"y"}, "fused", "kiln");
    fc->output(0)->setType(tensorOf(DType::Float16, {1, 8, 4, 4}));
    fc->setAnnotation("engine", "aicore");
    m.graph->addOutput(fc->output(0));
    const PassResult r = runPass(*makeRefineRunningFormatPass(), m);
    QCOMPARE(counter(r, "nodes_5hd"), 1);
    QCOMPARE(fc->input(1)->type().format, Format::FRACTAL_Z);
    QCOMPARE(fc->output(0)->type().shape, Shape::ofStatic({1, 1, 4, 4, 16}));
    QCOMPARE(countTransData(m), 2);
  }

  void oddGraphsPassUntouched() {
    // Every Stage 2 precision/format pass over graphs an untrusted file can hold: an int64 "weight", a rank-3 Conv
    // weight, a 1-D MatMul operand, a non-constant BatchNorm parameter, a rank-5 constant broadcast, a string
    // constant, unknown shapes. No crash, a clean verifier, and nothing blocked that cannot be.
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float, {1, 16, 4, 4}));
    Value* v = g.addInput("v", tensorOf(DType::Float, {16}));
    Value* u = g.addInput("u", ValueType::tensor(DType::Float, Shape::unknownRank()));
    Node* c1 = g.addNode("Conv", {x, g.addInitializer("Wi", Tensor::fromVector<int64_t>(DType::Int64, {16, 16, 1, 1},
                                                                                      std::vector<int64_t>(256, 1)))},
                         {"c1"}, "int_weight");
    c1->output(0)->setType(tensorOf(DType::Float, {1, 16, 4, 4}));
    Node* c2 = g.addNode("Conv", {x, g.addInitializer("W3", randomFloats({16, 16, 1}, 30))}, {"c2"}, "rank3_weight");
    c2->output(0)->setType(tensorOf(DType::Float, {1, 16, 4, 4}));
    Node* mm = g.addNode("MatMul", {v, g.addInitializer("M", randomFloats({16, 8}, 31))}, {"mm"}, "vector_matmul");
    mm->output(0)->setType(tensorOf(DType::Float, {8}));
    Node* good = g.addNode("Conv", {x, g.addInitializer("W", randomFloats({16, 16, 1, 1}, 32))}, {"c3"}, "conv");
    good->output(0)->setType(tensorOf(DType::Float, {1, 16, 4, 4}));
    Node* bn = g.addNode("BatchNormalization", {good->output(0), v, v, v, v}, {"bn"}, "bn_runtime_params");
    bn->output(0)->setType(tensorOf(DType::Float, {1, 16, 4, 4}));
    Node* mul = g.addNode("Mul", {good->output(0), g.addInitializer("R5", randomFloats({1, 1, 16, 1, 1}, 33))}, {"r5"},
                          "rank5_constant");
    mul->output(0)->setType(tensorOf(DType::Float, {1, 1, 16, 4, 4}));
    Node* add = g.addNode("Add", {good->output(0), u}, {"unknown"}, "unknown_operand");
    add->output(0)->setType(ValueType::tensor(DType::Float, Shape::unknownRank()));
    Node* str = g.addNode("Identity", {g.addInitializer("S", Tensor({1}, {"text"}))}, {"s"}, "string");
    str->output(0)->setType(ValueType::tensor(DType::String, Shape::ofStatic({1})));
    for (Node* n : {c1, c2, mm, bn, mul, add, str}) g.addOutput(n->output(0));
    for (Node* n : g.nodes()) n->setAnnotation("engine", "aicore");
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(makeRefineRunningPrecisionPass());
    passes.push_back(makeCastRemovalPass());
    passes.push_back(makeRefineRunningFormatPass());
    passes.push_back(makeTransDataSymmetryEliminationPass());
    passes.push_back(makeSameTransDataBreadthFusionPass());
    passes.push_back(makeTransDataCastFusionPass());
    const QString asBuilt = problems(m);  // the int64 weight breaks Conv's type rule from the start
    QVERIFY(asBuilt.contains("int_weight"));
    for (auto& p : passes) {
      runPass(*p, m);
      QVERIFY2(problems(m) == asBuilt, qPrintable(QString::fromStdString(p->name()) + ": " + problems(m)));
    }
    QCOMPARE(inconsistentTransData(m), QString());
    QCOMPARE(c1->output(0)->type().format, Format::ND);   // int64 weights with fp32 data: not a valid Conv
    QCOMPARE(c2->output(0)->type().format, Format::ND);   // FRACTAL_Z needs a rank-4 weight
    QCOMPARE(mm->output(0)->type().format, Format::ND);   // FRACTAL_NZ needs matrices
    QCOMPARE(good->output(0)->type().format, Format::NC1HWC0);
    QCOMPARE(bn->output(0)->type().format, Format::ND);   // its parameters are not constants
    QCOMPARE(mul->output(0)->type().format, Format::ND);  // a rank-5 broadcast does not line up with the blocks
    QCOMPARE(add->output(0)->type().format, Format::ND);
    for (Value* out : g.outputs()) QVERIFY(!isBlockedFormat(out->type().format));
  }

  void subgraphCapturesGetTheWrittenForm() {
    // x -> Conv -> y ; If(c) { then: Relu(y) } { else: Neg(y) } -> out. The passes rewrite the main graph only: the
    // branches must still read y as fp32 in its logical layout.
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float, {1, 16, 4, 4}));
    Value* c = g.addInput("c", tensorOf(DType::Bool, {}));
    Node* conv = g.addNode("Conv", {x, g.addInitializer("W", randomFloats({16, 16, 1, 1}, 40))}, {"y"}, "conv");
    Value* y = conv->output(0);
    Node* branch = g.addNode("If", {c}, {"out"}, "if");
    std::vector<Node*> inner;
    for (const char* arm : {"then_branch", "else_branch"}) {
      auto body = g.makeSubgraph(arm);
      const std::string op = std::string(arm) == "then_branch" ? "Relu" : "Neg";
      inner.push_back(body->addNode(op, {y}, {std::string(arm) + "_y"}));
      body->addOutput(inner.back()->output(0));
      branch->setAttr(arm, Attribute(Attribute::GraphPtr(body)));
    }
    g.addOutput(branch->output(0));
    inferShapes(m);
    for (Node* n : g.nodes()) n->setAnnotation("engine", "aicore");
    runPass(*makeRefineRunningPrecisionPass(), m);
    runPass(*makeRefineRunningFormatPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(inconsistentTransData(m), QString());
    QCOMPARE(y->type().dtype, DType::Float16);
    QCOMPARE(y->type().format, Format::NC1HWC0);
    for (Node* n : inner) {
      QCOMPARE(n->input(0)->type(), tensorOf(DType::Float, {1, 16, 4, 4}));
      QCOMPARE(n->input(0)->graph(), &g);  // converted once in the outer graph, before the If
    }
    QCOMPARE(inner[0]->input(0), inner[1]->input(0));
  }

  // ------------------------------------------------------------------ TransData cleanups
  void symmetricTransDataPairsCancel() {
    // x -> TD(ND->5HD) "there" -> TD(5HD->ND) "back" -> Relu -> o1 ;  "there" -> TD(5HD->ND, C=2) -> Relu -> o2
    auto owned = npuModel();
    Model& m = *owned;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float16, {1, 3, 4, 4}));
    Value* there = addTransData(g, x, "ND", "NC1HWC0", {}, "there");
    Node* relu = g.addNode("Relu", {addTransData(g, there, "NC1HWC0", "ND", {1, 3, 4, 4}, "back")}, {"o1"}, "relu");
    // Back with another origin (C=2 of the same padded block) is not the input again: it stays.
    Node* other =
        g.addNode("Relu", {addTransData(g, there, "NC1HWC0", "ND", {1, 2, 4, 4}, "cropped")}, {"o2"}, "relu2");
    g.addOutput(relu->output(0));
    g.addOutput(other->output(0));
    const PassResult r = runPass(*makeTransDataSymmetryEliminationPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(counter(r, "transdata_removed"), 1);  // "back"; "there" still feeds "cropped"
    QCOMPARE(relu->input(0), x);
    QCOMPARE(countTransData(m), 2);
  }

  void sameTransDataFromOneProducerMerge() {
    auto owned = npuModel();
    Model& m = *owned;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float16, {1, 3, 4, 4}));
    std::vector<Node*> relus;
    for (int i = 0; i < 4; ++i) {
      Value* t = addTransData(g, x, "ND", i == 3 ? "FRACTAL_NZ" : "NC1HWC0", {}, "td" + std::to_string(i));
      relus.push_back(g.addNode("Relu", {t}, 1, "relu" + std::to_string(i)));
      g.addOutput(relus.back()->output(0));
    }
    const PassResult r = runPass(*makeSameTransDataBreadthFusionPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(counter(r, "transdata_removed"), 2);
    QCOMPARE(countTransData(m), 2);  // one NC1HWC0 for three readers, the FRACTAL_NZ one apart
    QCOMPARE(relus[0]->input(0), relus[1]->input(0));
    QCOMPARE(relus[0]->input(0), relus[2]->input(0));
    QVERIFY(relus[3]->input(0) != relus[0]->input(0));
  }

  void transDataAndCastFuse() {
    // x(fp32) -> Cast(fp16) -> TD(ND->5HD) -> Relu -> TD(5HD->ND) -> Cast(fp32) -> out
    auto owned = npuModel();
    Model& m = *owned;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorOf(DType::Float, {1, 3, 2, 2}));
    auto cast = [&](Value* v, DType to, const std::string& name) {
      Node* c = g.addNode("Cast", {v}, {name}, name);
      c->setAttr("to", Attribute(int64_t{dtypeToOnnx(to)}));
      ValueType t = v->type();
      t.dtype = to;
      c->output(0)->setType(t);
      return c->output(0);
    };
    auto td = [&](Value* v, const char* src, const char* dst, const std::string& name) {
      return addTransData(g, v, src, dst, {1, 3, 2, 2}, name);
    };
    Value* in = td(cast(x, DType::Float16, "x16"), "ND", "NC1HWC0", "x5hd");
    Node* relu = g.addNode("Relu", {in}, {"r"}, "relu");
    relu->output(0)->setType(in->type());
    g.addOutput(cast(td(relu->output(0), "NC1HWC0", "ND", "rnd"), DType::Float, "out"));
    // What the unfused graph computes, node by node.
    const Tensor xv = randomFloats({1, 3, 2, 2}, 13);
    const PassResult r = runPass(*makeTransDataCastFusionPass(), m);
    QCOMPARE(problems(m), QString());
    QCOMPARE(counter(r, "TransDataCastFusion"), 2);
    QCOMPARE(countOps(m, "kiln:TransDataCast"), 2);
    QCOMPARE(countOps(m, "Cast"), 0);
    QCOMPARE(countTransData(m), 2);
    QCOMPARE(inconsistentTransData(m), QString());
    Node* first = relu->input(0)->producer();
    QCOMPARE(first->qualifiedType(), std::string("kiln:TransDataCast"));
    QCOMPARE(first->annotation("fusion.rule"), std::string("TransDataCastFusion"));
    QCOMPARE(first->attrInt("cast_first", -1), int64_t{1});
    // The 5HD result records the logical [1, 3, 2, 2] its padded blocks hide.
    QCOMPARE(first->output(0)->type(), ValueType::tensor(DType::Float16, Shape::ofStatic({1, 3, 2, 2}))
                                           .storedAs(Format::NC1HWC0, Shape::ofStatic({1, 1, 2, 2, 16})));
    Value* out = g.outputs()[0];
    QCOMPARE(out->name(), std::string("out"));
    QCOMPARE(out->type(), x->type());
    // The fused kernels round trip: fp32 -> fp16 5HD -> fp32 ND equals the fp16 rounding of x.
    const auto mid = evaluateNode(*first, {&xv});
    QCOMPARE(mid.size(), size_t(1));
    const auto back = evaluateNode(*out->producer(), {&mid[0]});
    QCOMPARE(back.size(), size_t(1));
    QVERIFY(back[0] == convertTensor(convertTensor(xv, DType::Float16), DType::Float));
  }

  // ------------------------------------------------------------------ the whole pipeline
  void resnet50NeedsTwoTransData() {
    RunSummary s;
    QString failure;
    auto m = compileSample("resnet50", &s, &failure);
    QCOMPARE(failure, QString());
    // In: Cast+TransData fused; out of 5HD before the classifier's final Reshape, with the Cast back to fp32. The
    // classifier on the pooled [1, 2048, 1, 1] is a 1x1 convolution (FlattenGemmFusion) and stays in 5HD, as GE's
    // FullyConnection does: no conversion to ND and FRACTAL_NZ and back around it.
    QCOMPARE(countTransData(*m), 2);
    QCOMPARE(countOps(*m, "kiln:TransDataCast"), 2);
    QCOMPARE(recordCounter(s, "RefineRunningFormat", "nodes_5hd"), convCount(*m));
    QCOMPARE(recordCounter(s, "RefineRunningFormat", "weights_relaid"), convCount(*m));
    QCOMPARE(recordCounter(s, "RefineRunningPrecision", "casts_inserted"), 2);
    int fractalZ = 0, fp16Weights = 0, weights = 0;
    for (Value* v : m->graph->initializers()) {
      fractalZ += v->type().format == Format::FRACTAL_Z;
      fp16Weights += v->constant()->dtype() == DType::Float16;
      weights += isFloating(v->constant()->dtype());  // not the classifier's Reshape shape (int64)
    }
    QCOMPARE(fractalZ, convCount(*m));
    QCOMPARE(fp16Weights, weights);
    QCOMPARE(m->graph->outputs()[0]->type(), ValueType::tensor(DType::Float, Shape::ofStatic({1, 1000})));
    QCOMPARE(m->graph->inputs()[0]->type().dtype, DType::Float);
  }

  void resnet50UnderForceFp32() {
    RunSummary s;
    QString failure;
    auto m = compileSample("resnet50", &s, &failure, withPrecision("force_fp32"));
    QCOMPARE(failure, QString());
    QCOMPARE(countOps(*m, "Cast"), 0);
    QCOMPARE(countOps(*m, "kiln:TransDataCast"), 0);  // nothing to fuse with: the two are plain TransData
    QCOMPARE(countOps(*m, "kiln:TransData"), 2);
    for (Value* v : m->graph->initializers())
      if (v->constant()->dtype() != DType::Int64) QCOMPARE(v->constant()->dtype(), DType::Float);  // int64: a shape
  }

  void mobileNetV2StaysIn5hd() {
    RunSummary s;
    QString failure;
    auto m = compileSample("mobilenetv2", &s, &failure);
    QCOMPARE(failure, QString());
    QCOMPARE(countTransData(*m), 2);  // in and out: the classifier is a 1x1 convolution in 5HD (FlattenGemmFusion)
    QCOMPARE(recordCounter(s, "RefineRunningFormat", "nodes_5hd"), convCount(*m));
  }
};

QTEST_GUILESS_MAIN(OptimizeFormatsTest)
#include "test_optimize_formats.moc"
