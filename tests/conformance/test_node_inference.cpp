// Conformance of type/shape inference: for every ONNX backend node test (Debian's libonnx-testdata), import
// model.onnx, forget the declared output types, infer, and compare dtype and dims with test_data_set_0/output_*.pb.
#include <QDir>
#include <QFileInfo>
#include <QtTest>

#include <map>

#include "io/onnx/onnx_reader.h"
#include "io/tensor_file.h"
#include "ir/opdefs/op_registry.h"
#include "ir/opdefs/shape_inference.h"

using namespace kiln;

namespace {
const char* kNodeDir = "/usr/share/libonnx-testdata/data/node";

enum class Outcome { Pass, Fail, UnknownOp, NonTensor };

// Binds the test's input values as constants, as a compiler does once input data (e.g. shape tensors) is fixed:
// ops whose output shape depends on an input's value (Reshape, Unsqueeze axes, TopK's k...) become inferable.
void bindInputs(Model& m, const QString& dir) {
  const auto inputs = m.graph->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const QString pb = dir + "/test_data_set_0/input_" + QString::number(i) + ".pb";
    if (!QFileInfo::exists(pb) || !inputs[i]->type().isTensor()) continue;
    try {
      NamedTensor t = readTensorFile(pb.toStdString());
      if (t.tensor.numel() > (1 << 16)) continue;
      m.graph->removeInput(inputs[i]);
      inputs[i]->setConstant(std::move(t.tensor));
    } catch (const std::exception&) {
      // Not a TensorProto (sequence/optional input): leave it an input.
    }
  }
}

Outcome runOne(const QString& dir, bool bind, QString* reason) {
  OnnxImport imp;
  try {
    imp = readOnnxFile((dir + "/model.onnx").toStdString(), {.runChecker = false});
  } catch (const std::exception& e) {
    *reason = QString("import: ") + e.what();
    return Outcome::Fail;
  }
  Model& m = *imp.model;
  for (const Node* n : m.graph->nodes())
    if (!OpRegistry::global().find(n->domain(), n->opType(), m.opsetFor(n->domain()))) return Outcome::UnknownOp;
  if (bind) bindInputs(m, dir);
  std::vector<ValueType> declared;
  for (Value* v : m.graph->outputs()) {
    declared.push_back(v->type());
    if (!v->type().isTensor()) return Outcome::NonTensor;
    if (v->producer()) v->setType({});
  }
  inferShapes(m);
  for (size_t i = 0; i < m.graph->outputs().size(); ++i) {
    const QString pb = dir + "/test_data_set_0/output_" + QString::number(i) + ".pb";
    if (!QFileInfo::exists(pb)) continue;
    NamedTensor expected;
    try {
      expected = readTensorFile(pb.toStdString());
    } catch (const std::exception& e) {
      *reason = QString("expected output unreadable: ") + e.what();
      return Outcome::Fail;
    }
    const ValueType& got = m.graph->outputs()[i]->type();
    ValueType want = ValueType::tensor(expected.tensor.dtype(), Shape::ofStatic(expected.tensor.dims()));
    // The suite stores bfloat16 expectations as uint16 bit patterns (TensorProto has no bf16 typed field).
    if (want.dtype == DType::UInt16 && got.dtype == DType::BFloat16) want.dtype = DType::BFloat16;
    if (!(got.dtype == want.dtype && got.shape == want.shape)) {
      *reason = QString("output %1: inferred %2, expected %3")
                    .arg(i)
                    .arg(QString::fromStdString(got.toString()), QString::fromStdString(want.toString()));
      return Outcome::Fail;
    }
  }
  return Outcome::Pass;
}
}  // namespace

class NodeInferenceConformance : public QObject {
  Q_OBJECT
 private slots:
  void staticInference() { run(false, 0.0); }
  void inferenceWithBoundInputs() { run(true, 0.95); }

 private:
  void run(bool bind, double target) {
    QDir root(kNodeDir);
    if (!root.exists()) QSKIP("libonnx-testdata is not installed (apt-get install libonnx-testdata)");
    std::map<Outcome, int> counts;
    QStringList failures;
    for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
      QString reason;
      const Outcome o = runOne(root.filePath(name), bind, &reason);
      ++counts[o];
      if (o == Outcome::Fail) failures << name + ": " + reason;
    }
    const int known = counts[Outcome::Pass] + counts[Outcome::Fail];
    const double rate = known ? double(counts[Outcome::Pass]) / known : 0.0;
    qInfo("%s: %d passed, %d failed, %d with ops libonnx 1.12 does not know, %d with non-tensor outputs; "
          "pass rate %.1f%% of known-op tests",
          bind ? "with input values bound" : "static", counts[Outcome::Pass], counts[Outcome::Fail], counts[Outcome::UnknownOp], counts[Outcome::NonTensor],
          100.0 * rate);
    if (target > 0)
      for (const QString& f : failures) qInfo("  FAIL %s", qPrintable(f));
    QVERIFY2(known > 500, "expected the full node suite");
    QVERIFY2(rate >= target, qPrintable(QString("pass rate %1% is below %2%").arg(100.0 * rate, 0, 'f', 1).arg(100 * target)));
  }
};

QTEST_GUILESS_MAIN(NodeInferenceConformance)
#include "test_node_inference.moc"
