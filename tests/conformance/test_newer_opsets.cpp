// ONNX opsets 18 to 26 against ONNX Runtime 1.30: the cases tests/conformance/newer_opsets/generate.py wrote into
// tests/data/onnx_newer (one small model per op version and attribute variant, ONNX Runtime's outputs as the
// expected data; regenerate.sh remakes them). Each case must
//   1. load with every output's type and shape inferred (no "shapes are lost" warning),
//   2. pass in reference mode with the ONNX suite's tolerance (as `kiln conformance` runs it),
//   3. compile through the standard pipeline at force_fp32 and, run in the arena, match ONNX Runtime with a cosine
//      of at least 0.9999 and within the fp32 gate.
// The few cases Kiln cannot run yet are listed below with the reason; any other failure fails the suite, and a listed
// case that starts passing does too (so the list stays true).
#include <QtTest>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <QTemporaryDir>

#include "emulator/conformance.h"
#include "emulator/emulation.h"
#include "emulator/precision_gate.h"
#include "io/model_loader.h"
#include "io/onnx/onnx_writer.h"
#include "io/tensor_file.h"
#include "ir/low_bit_types.h"
#include "support/kiln_process.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

const std::string kCases = std::string(KILN_SOURCE_DIR) + "/tests/data/onnx_newer";

// Cases Kiln cannot run yet, with why (each is named as not runnable by `kiln run`). Empty at this commit.
const std::map<std::string, std::string> kKnownGaps = {};

std::vector<Tensor> readSet(const std::string& dir, const char* kind) {
  std::vector<Tensor> out;
  for (int i = 0;; ++i) {
    const fs::path p = fs::path(dir) / "test_data_set_0" / (std::string(kind) + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(readTensorFile(p.string()).tensor);
  }
  return out;
}

// "" when the compiled run matches ONNX Runtime; else why not.
std::string compiledProblem(const std::string& dir) {
  LoadedModel original = loadModel(dir + "/model.onnx");
  for (const std::string& w : original.warnings)
    if (w.find("shapes are lost") != std::string::npos || w.find("inference failed") != std::string::npos)
      return "load: " + w;
  LoadedModel compiled = loadModel(dir + "/model.onnx");
  Options o;
  o.set("precision_mode=force_fp32");
  PassManager pm;
  addStandardPasses(pm, o, {});
  const RunSummary s = pm.run(*compiled.model, o);
  if (s.status != RunStatus::Ok) return "compile failed";
  for (const std::string& w : s.warnings)
    if (w.find("shapes are lost") != std::string::npos || w.find("no engine supports") != std::string::npos)
      return "compile: " + w;
  const std::vector<Tensor> inputs = readSet(dir, "input"), expected = readSet(dir, "output");
  const EmulationReport r = emulateModel(*original.model, *compiled.model, inputs);
  if (!r.compiledError.empty()) return "compiled mode: " + r.compiledError;
  if (r.compiled.size() != expected.size()) return "compiled mode gave a different number of outputs";
  PrecisionGate gate = precisionGate(o, ComputePrecision::Fp32);
  gate.minCosine = 0.9999;
  for (size_t i = 0; i < expected.size(); ++i) {
    const OutputVerdict v = judgeOutput("output " + std::to_string(i), r.compiled[i], expected[i], gate);
    if (!v.passed) return v.name + ": " + v.reason;
  }
  return "";
}

// x [4, 8] -> op -> y, at `opset`; the op's extra inputs are initializers given by the caller.
std::unique_ptr<Model> oneOpModel(int64_t opset, const std::string& op, std::vector<std::pair<std::string, Tensor>> extra,
                                  std::vector<std::pair<std::string, Attribute>> attrs = {}) {
  auto m = std::make_unique<Model>();
  m->opsets[""] = opset;
  m->irVersion = 10;
  Graph& g = *m->graph;
  std::vector<Value*> in{g.addInput("x", ValueType::tensor(DType::Float, Shape::ofStatic({4, 8})))};
  for (auto& [name, t] : extra) in.push_back(g.addInitializer(name, std::move(t)));
  Node* n = g.addNode(op, in, {"y"}, "the_" + op);
  for (auto& [k, v] : attrs) n->setAttr(k, std::move(v));
  g.addOutput(n->output(0));
  return m;
}

}  // namespace

class NewerOpsetsTest : public QObject {
  Q_OBJECT
 private slots:
  void referenceModeMatchesOnnxRuntime() {
    const std::vector<std::string> cases = findConformanceTests(kCases);
    QVERIFY2(cases.size() >= 100, "the generated cases are missing: run tests/conformance/newer_opsets/regenerate.sh");
    int passed = 0;
    QStringList unexpected;
    for (const std::string& dir : cases) {
      const ConformanceResult r = runConformanceTest(dir);
      const bool gap = kKnownGaps.count(r.name) > 0;
      if (r.status == ConformanceStatus::Passed) ++passed;
      if ((r.status == ConformanceStatus::Passed) == gap)
        unexpected << QString::fromStdString(r.name + ": " + (gap ? "passes, remove it from kKnownGaps" : r.reason));
    }
    qInfo("reference mode: %d of %zu cases match ONNX Runtime (%zu known gaps)", passed, cases.size(), kKnownGaps.size());
    QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join("\n")));
  }

  // Float8 and int4 as ONNX defines them: exact decoding, round-to-nearest-even encoding, saturation.
  void lowBitTypesRoundTrip() {
    QCOMPARE(lowBitFloatMax(DType::Float8E4M3FN), 448.0f);
    QCOMPARE(lowBitFloatMax(DType::Float8E4M3FNUZ), 240.0f);
    QCOMPARE(lowBitFloatMax(DType::Float8E5M2), 57344.0f);
    QCOMPARE(lowBitFloatMax(DType::Float4E2M1), 6.0f);
    for (DType t : {DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ})
      for (int code = 0; code < 256; ++code) {
        const float v = lowBitFloatToFloat(t, static_cast<uint8_t>(code));
        if (!std::isfinite(v) || (v == 0 && code != 0)) continue;  // NaNs, infinities and negative zero
        QCOMPARE(int(floatToLowBitFloat(t, v, true)), code);     // every finite value encodes back to itself
      }
    QCOMPARE(int(floatToLowBitFloat(DType::Float8E4M3FN, 1000.0f, true)), 0x7E);  // saturates to 448
    QVERIFY(std::isnan(lowBitFloatToFloat(DType::Float8E4M3FN, floatToLowBitFloat(DType::Float8E4M3FN, 1000.0f, false))));
    QVERIFY(std::isinf(lowBitFloatToFloat(DType::Float8E5M2, floatToLowBitFloat(DType::Float8E5M2, 1e6f, false))));
    // 1.0625 lies halfway between 1 and 1.125 in e4m3: the even mantissa (1.0) wins.
    QCOMPARE(lowBitFloatToFloat(DType::Float8E4M3FN, floatToLowBitFloat(DType::Float8E4M3FN, 1.0625f, true)), 1.0f);
    const Tensor ints = Tensor::fromVector<float>(DType::Float, {5}, {-8.6f, 7.4f, 2.5f, -1.0f, 9.0f});
    const Tensor q = narrowToLowBit(ints, DType::Int4, true);
    QCOMPARE(q.byteSize(), size_t{3});  // five int4s in three bytes
    QCOMPARE(q.toInt64(), (std::vector<int64_t>{-8, 7, 2, -1, 7}));
    QCOMPARE(storageBytes(DType::UInt4, 7), int64_t{4});
  }

  // Bad input: an opset that does not exist, an int4 tensor with the wrong byte count, a
  // block_size that does not fit the scale: each a message naming the file or node, exit 2.
  void badInputIsRefused() {
    QTemporaryDir dir;
    const QString d = dir.path();
    auto expectRefused = [&](const Model& m, const QString& file, const QString& needle) {
      writeOnnxFile(m, (d + "/" + file).toStdString());
      const KilnRun r = runKiln({"compile", d + "/" + file});
      QVERIFY2(r.code == 2, qPrintable(file + ": exit " + QString::number(r.code) + "\n" + r.err));
      QVERIFY2(r.err.contains(needle), qPrintable(file + ": " + r.err));
    };
    expectRefused(*oneOpModel(30, "Relu", {}), "opset30.onnx", "ai.onnx opset 30");
    {  // an op before its opset is read as its first version, as ONNX Runtime reads LayerNormalization at opset 11
      writeOnnxFile(*oneOpModel(17, "Gelu", {}), (d + "/gelu17.onnx").toStdString());
      const KilnRun r = runKiln({"compile", d + "/gelu17.onnx"});
      QCOMPARE(r.code, 0);
      QVERIFY2((r.out + r.err).contains("Gelu is not in ai.onnx opset 17 (it was added in opset 20); read as Gelu-20"),
               qPrintable(r.out + r.err));
    }
    {  // an int4 [4, 8] initializer needs 16 bytes: written as 15 uint8s, then retyped in the file
      writeOnnxFile(*oneOpModel(21, "Add", {{"w", Tensor::fromBytes(DType::UInt8, {15}, std::string(15, '\1'))}}),
                    (d + "/int4_bytes.onnx").toStdString());
      onnx::ModelProto proto;
      {
        std::ifstream in((d + "/int4_bytes.onnx").toStdString(), std::ios::binary);
        QVERIFY(proto.ParseFromIstream(&in));
      }
      onnx::TensorProto* w = proto.mutable_graph()->mutable_initializer(0);
      w->set_data_type(22);
      w->clear_dims();
      w->add_dims(4);
      w->add_dims(8);
      std::ofstream out((d + "/int4_bytes.onnx").toStdString(), std::ios::binary | std::ios::trunc);
      QVERIFY(proto.SerializeToOstream(&out));
      // A float8 tensor in int32_data whose second entry is no byte: it cannot be the bit pattern it claims.
      w->set_data_type(17);
      w->clear_dims();
      w->add_dims(2);
      w->clear_raw_data();
      w->add_int32_data(1);
      w->add_int32_data(300);
      std::ofstream fp8((d + "/fp8_pattern.onnx").toStdString(), std::ios::binary | std::ios::trunc);
      QVERIFY(proto.SerializeToOstream(&fp8));
    }
    const KilnRun fp8 = runKiln({"compile", d + "/fp8_pattern.onnx"});
    QCOMPARE(fp8.code, 2);
    QVERIFY2(fp8.err.contains("fp8_pattern.onnx") && fp8.err.contains("is 300, not a byte"), qPrintable(fp8.err));
    const KilnRun int4 = runKiln({"compile", d + "/int4_bytes.onnx"});
    QCOMPARE(int4.code, 2);
    QVERIFY2(int4.err.contains("int4_bytes.onnx") && int4.err.contains("bytes of data but its shape needs 16"),
             qPrintable(int4.err));
    auto blocked = oneOpModel(21, "DequantizeLinear",
                              {{"s", Tensor::fromVector<float>(DType::Float, {4, 3}, std::vector<float>(12, 0.5f))}},
                              {{"axis", Attribute(int64_t{1})}, {"block_size", Attribute(int64_t{2})}});
    // ceil(8 / 2) = 4 scales along axis 1 are needed; the scale has 3
    expectRefused(*blocked, "blocked.onnx", "block_size 2 over an axis of 8 needs 4 scales along axis 1");
  }

  void compiledModeMatchesOnnxRuntime() {
    int passed = 0, total = 0;
    QStringList unexpected;
    for (const std::string& dir : findConformanceTests(kCases)) {
      const std::string name = fs::path(dir).filename().string();
      ++total;
      std::string problem;
      try {
        problem = compiledProblem(dir);
      } catch (const std::exception& e) {
        problem = e.what();
      }
      const bool gap = kKnownGaps.count(name) > 0;
      if (problem.empty()) ++passed;
      if (problem.empty() == gap)
        unexpected << QString::fromStdString(name + ": " + (gap ? "passes, remove it from kKnownGaps" : problem));
    }
    qInfo("compiled mode (force_fp32, cosine >= 0.9999 and the fp32 gate): %d of %d cases match ONNX Runtime", passed,
          total);
    QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join("\n")));
  }
};

QTEST_GUILESS_MAIN(NewerOpsetsTest)
#include "test_newer_opsets.moc"
