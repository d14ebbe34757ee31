// GE graphs on the emulator (kernels/ge, emulator/ge_emulation): a TensorFlow-style convolution GE keeps in NC1HWC0
// with an NHWC origin and a FRACTAL_Z filter from HWCN — the blocked data built here by hand from GE's layout rules,
// not by Kiln's own converters — computes what ONNX's Conv computes on the logical tensors, with its attributes or,
// for a buffer-fused kernel that kept none, with the geometry its shapes give; an ambiguous one is refused by name;
// Kiln's own .om runs against the ONNX model it came from, per output and per op; a dump without weights names why it
// cannot run; the shared ATC-built .om runs (when ../shared is there).
#include <QFileInfo>
#include <QtTest>

#include <random>

#include "emulator/ge_emulation.h"
#include "emulator/stored_layout.h"
#include "io/model_loader.h"
#include "io/om/om_reader.h"
#include "io/om/om_writer.h"
#include "kernels/ge/ge_lowering.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "support/kernel_op.h"

using namespace kiln;
using kiln::testing::Op;

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// x[N][H][W][C] stored as GE's NC1HWC0: y[n][c / 16][h][w][c % 16].
Tensor nhwcToNc1hwc0(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c) {
  const int64_t c1 = (c + 15) / 16;
  std::vector<float> y(size_t(n * c1 * h * w * 16), 0.0f);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ih = 0; ih < h; ++ih)
      for (int64_t iw = 0; iw < w; ++iw)
        for (int64_t ic = 0; ic < c; ++ic)
          y[size_t((((in * c1 + ic / 16) * h + ih) * w + iw) * 16 + ic % 16)] = x[size_t(((in * h + ih) * w + iw) * c + ic)];
  return Tensor::fromVector(DType::Float, {n, c1, h, w, 16}, y);
}

// A filter f[KH][KW][CI][CO] (HWCN) stored as GE's FRACTAL_Z: y[(ci / 16 · KH + kh) · KW + kw][co / 16][co % 16][ci % 16].
Tensor hwcnToFractalZ(const std::vector<float>& f, int64_t kh, int64_t kw, int64_t ci, int64_t co) {
  const int64_t c1 = (ci + 15) / 16, n1 = (co + 15) / 16;
  std::vector<float> y(size_t(c1 * kh * kw * n1 * 16 * 16), 0.0f);
  for (int64_t h = 0; h < kh; ++h)
    for (int64_t w = 0; w < kw; ++w)
      for (int64_t c = 0; c < ci; ++c)
        for (int64_t o = 0; o < co; ++o)
          y[size_t(((((c / 16) * kh + h) * kw + w) * n1 + o / 16) * 256 + (o % 16) * 16 + c % 16)] =
              f[size_t(((h * kw + w) * ci + c) * co + o)];
  return Tensor::fromVector(DType::Float, {c1 * kh * kw, n1, 16, 16}, y);
}

ValueType blocked(Format f, std::vector<int64_t> physical, std::vector<int64_t> origin, Format originFormat) {
  ValueType t = ValueType::tensor(DType::Float, Shape::ofStatic(physical), f);
  t.originShape = Shape::ofStatic(origin);
  t.originFormat = originFormat;
  return t;
}

struct ConvCase {
  int64_t h = 9, w = 9, ci = 3, co = 20, k = 3;
  int64_t oh = 4, ow = 4;
  std::vector<float> x, f, bias;
};

// GE's graph: x (NC1HWC0 of NHWC) -> Conv2D(x, filter FRACTAL_Z of HWCN, bias) -> y (NC1HWC0 of NHWC).
std::unique_ptr<Model> geConv(const ConvCase& c, bool withAttrs, const std::string& kernelName) {
  auto m = std::make_unique<Model>();
  Graph& g = *m->graph;
  Value* x = g.addInput("x", blocked(Format::NC1HWC0, {1, 1, c.h, c.w, 16}, {1, c.h, c.w, c.ci}, Format::NHWC));
  Node* w = g.addNode("Const", {}, {"w:0"}, "w", "ge");
  w->setAttr("value", Attribute(hwcnToFractalZ(c.f, c.k, c.k, c.ci, c.co)));
  w->output(0)->setType(blocked(Format::FRACTAL_Z, {c.k * c.k, (c.co + 15) / 16, 16, 16}, {c.k, c.k, c.ci, c.co}, Format::HWCN));
  Node* b = g.addNode("Const", {}, {"b:0"}, "b", "ge");
  b->setAttr("value", Attribute(Tensor::fromVector(DType::Float, {c.co}, c.bias)));
  b->output(0)->setType(ValueType::tensor(DType::Float, Shape::ofStatic({c.co}), Format::NHWC));
  Node* conv = g.addNode("Conv2D", {x, w->output(0), b->output(0)}, {"conv:0"}, "conv", "ge");
  conv->output(0)->setType(blocked(Format::NC1HWC0, {1, (c.co + 15) / 16, c.oh, c.ow, 16}, {1, c.oh, c.ow, c.co}, Format::NHWC));
  if (withAttrs) {
    conv->setAttr("strides", Attribute(std::vector<int64_t>{1, 2, 2, 1}));
    conv->setAttr("pads", Attribute(std::vector<int64_t>{0, 0, 0, 0}));
    conv->setAttr("dilations", Attribute(std::vector<int64_t>{1, 1, 1, 1}));
    conv->setAttr("data_format", Attribute(std::string("NHWC")));
  }
  if (!kernelName.empty()) conv->setAnnotation("om.kernel_name", kernelName);
  g.addOutput(conv->output(0));
  return m;
}

// The same convolution by ONNX's Conv on the logical NCHW tensors (+ Relu), as NHWC.
std::vector<float> onnxConv(const ConvCase& c, bool relu) {
  std::vector<float> xn(size_t(c.ci * c.h * c.w)), wn(size_t(c.co * c.ci * c.k * c.k));
  for (int64_t h = 0; h < c.h; ++h)
    for (int64_t w = 0; w < c.w; ++w)
      for (int64_t i = 0; i < c.ci; ++i) xn[size_t((i * c.h + h) * c.w + w)] = c.x[size_t((h * c.w + w) * c.ci + i)];
  for (int64_t h = 0; h < c.k; ++h)
    for (int64_t w = 0; w < c.k; ++w)
      for (int64_t i = 0; i < c.ci; ++i)
        for (int64_t o = 0; o < c.co; ++o)
          wn[size_t(((o * c.ci + i) * c.k + h) * c.k + w)] = c.f[size_t(((h * c.k + w) * c.ci + i) * c.co + o)];
  Op conv("Conv");
  conv.ints("strides", {2, 2}).ints("pads", {0, 0, 0, 0});
  const Tensor y = conv.one({testing::f32({1, c.ci, c.h, c.w}, xn), testing::f32({c.co, c.ci, c.k, c.k}, wn),
                             testing::f32({c.co}, c.bias)});
  const std::vector<double> v = y.toDouble();
  std::vector<float> out(size_t(c.oh * c.ow * c.co));
  for (int64_t o = 0; o < c.co; ++o)
    for (int64_t h = 0; h < c.oh; ++h)
      for (int64_t w = 0; w < c.ow; ++w) {
        const float r = float(v[size_t((o * c.oh + h) * c.ow + w)]);
        out[size_t((h * c.ow + w) * c.co + o)] = relu ? std::max(r, 0.0f) : r;
      }
  return out;
}

ConvCase convCase() {
  ConvCase c;
  c.x = randomFloats(size_t(c.h * c.w * c.ci), 1);
  c.f = randomFloats(size_t(c.k * c.k * c.ci * c.co), 2);
  c.bias = randomFloats(size_t(c.co), 3);
  return c;
}

double maxDiff(const Tensor& got, const std::vector<float>& want) {
  const std::vector<double> g = got.toDouble();
  if (g.size() != want.size()) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - double(want[i])));
  return worst;
}

}  // namespace

class GeEmulationTest : public QObject {
  Q_OBJECT
 private slots:
  // GE's attributes as written: strides in NHWC order, the filter in HWCN, both blocked.
  void convolutionWithItsAttributes() {
    const ConvCase c = convCase();
    const auto ge = geConv(c, true, {});
    const GeEmulation r = emulateGeModel(*ge, {nhwcToNc1hwc0(c.x, 1, c.h, c.w, c.ci)});
    QVERIFY2(r.ran, r.notRunSummary().c_str());
    QVERIFY2(r.report.compiledError.empty(), r.report.compiledError.c_str());
    QCOMPARE(r.report.compiled[0].dims(), (std::vector<int64_t>{1, c.oh, c.ow, c.co}));  // logical NHWC
    QVERIFY(maxDiff(r.report.compiled[0], onnxConv(c, false)) < 1e-4);
    QVERIFY(maxDiff(r.report.reference[0], onnxConv(c, false)) < 1e-4);
  }

  // A buffer-fused kernel keeps no geometry: the kernel's name says conv2d then relu, the shapes say stride 2, VALID.
  void fusedConvolutionReadOffItsShapes() {
    const ConvCase c = convCase();
    const auto ge = geConv(c, false, "te_fused_op_conv2d_relu_80397ef05d128600__kernel0");
    const GeEmulation r = emulateGeModel(*ge, {nhwcToNc1hwc0(c.x, 1, c.h, c.w, c.ci)});
    QVERIFY2(r.ran, r.notRunSummary().c_str());
    QCOMPARE(r.inferred.size(), size_t(1));
    QVERIFY2(r.inferred[0].find("stride 2x2, padding [0,0,0,0]") != std::string::npos, r.inferred[0].c_str());
    QVERIFY(maxDiff(r.report.compiled[0], onnxConv(c, true)) < 1e-4);
  }

  // Where the shapes fit more than one geometry, or the kernel name an op whose parameters are gone: not run, said.
  void whatTheFileDoesNotSayIsNotGuessed() {
    ConvCase c = convCase();
    c.h = c.w = 6;  // 6 -> 2 with a 3x3 window: stride 2 or 3 (VALID) both fit
    c.oh = c.ow = 2;
    c.x = randomFloats(size_t(c.h * c.w * c.ci), 4);
    GeEmulation r = emulateGeModel(*geConv(c, false, "te_fused_op_conv2d_relu_abc__kernel0"), {nhwcToNc1hwc0(c.x, 1, 6, 6, 3)});
    QVERIFY(!r.ran);
    QVERIFY2(r.notRunSummary().find("fit more than one") != std::string::npos, r.notRunSummary().c_str());
    r = emulateGeModel(*geConv(convCase(), false, "te_fused_op_conv2d_leaky_relu_abc__kernel0"), {nhwcToNc1hwc0(c.x, 1, 6, 6, 3)});
    QVERIFY(!r.ran);
    QVERIFY2(r.notRunSummary().find("'leaky_relu'") != std::string::npos, r.notRunSummary().c_str());
    // A constant without data (a dump written without weights).
    auto ge = geConv(convCase(), true, {});
    for (Node* n : ge->graph->nodes())
      if (n->name() == "w") n->removeAttr("value");
    const geops::LoweredModel l = geops::lowerGeModel(*ge);
    QVERIFY(!l.model);
    QVERIFY2(l.issues.at(0).why.find("carries no data") != std::string::npos, l.issues.at(0).why.c_str());
  }

  // Kiln's own .om of a sample model against the ONNX model it was compiled from: every output, every op.
  void kilnsOmMatchesItsSource() {
    auto source = buildSample("mobilenetv2");
    auto compiled = buildSample("mobilenetv2");
    Options o;
    o.set("precision_mode=force_fp32");
    PassManager pm;
    addStandardPasses(pm, o);
    QVERIFY(pm.run(*compiled, o).status == RunStatus::Ok);
    const om::OmImport om = om::readOmBytes(std::make_shared<OwnedStorage>(om::buildOmFile(*compiled, o)), "k.om");
    QVERIFY(om.model->precompiled);
    std::vector<Tensor> inputs;
    for (const Value* v : source->graph->inputs()) {
      const auto dims = v->type().shape.staticExtents();
      QVERIFY(dims);
      int64_t n = 1;
      for (int64_t d : *dims) n *= d;
      inputs.push_back(Tensor::fromVector(DType::Float, *dims, randomFloats(size_t(n), 5)));
    }
    const PrecisionGate gate = precisionGate(o, *om.model->graph);
    const SourceComparison r = compareGeWithSource(*om.model, *source, inputs, gate);
    QVERIFY2(r.ge.ran, (r.ge.notRunSummary() + r.ge.report.compiledError).c_str());
    QCOMPARE(r.inputMatching, std::string("by name"));
    QCOMPARE(r.outputs.size(), size_t(1));
    QVERIFY2(r.outputs[0].passed, r.outputs[0].reason.c_str());
    QVERIFY(r.outputs[0].diff.cosine >= 0.999);
    QVERIFY2(r.nodes.size() >= 30, qPrintable(QString::number(r.nodes.size())));
    QVERIFY2(r.firstDivergence.empty(), r.firstDivergence.c_str());
    QCOMPARE(source->graph->outputs().size(), size_t(1));  // the extra outputs are gone again
  }

  // The real ATC-built .om of the shared corpus runs, its fp16 graph within the fp16 gate of its fp32 twin.
  void theSharedAtcModelRuns() {
    const QString path = QStringLiteral(KILN_SHARED_DIR) + "/models/om/a3c_pong_model.om";
    if (!QFileInfo(path).isFile()) QSKIP(qPrintable(path + " not found (tests that need ../shared skip)"));
    const LoadedModel m = loadModel(path.toStdString());
    std::vector<Tensor> inputs = {Tensor::fromVector(DType::Float, {1, 42, 42, 1}, randomFloats(42 * 42, 6))};
    const GeEmulation r = emulateGeModel(*m.model, inputs);
    QVERIFY2(r.ran, r.notRunSummary().c_str());
    QVERIFY2(r.report.compiledError.empty(), r.report.compiledError.c_str());
    QCOMPARE(r.inferred.size(), size_t(4));  // three fused convolutions and a fused MatMul
    Options o;
    const std::vector<OutputVerdict> v = judgeOutputs(r.report, precisionGate(o, *m.model->graph));
    QCOMPARE(v.size(), size_t(1));
    QVERIFY2(v[0].passed, v[0].reason.c_str());
  }
};

QTEST_GUILESS_MAIN(GeEmulationTest)
#include "test_ge_emulation.moc"
