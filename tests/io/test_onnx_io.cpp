// ONNX import/export: round trips (the checker accepts what we write, shapes survive), external data, and every
// kind of bad file the importer must refuse with a clear one-line error instead of crashing.
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "util/load_error.h"
#include "io/onnx/initializer_bytes_in_file.h"
#include "io/model_loader.h"
#include "io/onnx/onnx_reader.h"
#include "io/onnx/onnx_writer.h"
#include "io/tensor_file.h"
#include "ir/opdefs/shape_inference.h"
#include "ir/verifier.h"
#include "support/onnx_proto_sample.h"

using namespace kiln;
using kiln::test::baseProto;

namespace {

// A small valid model: Conv(x, w, b) -> Relu -> If(cond){Neg}{Abs} with the branches capturing the Relu output.
std::unique_ptr<Model> smallModel() {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  Graph& g = *m->graph;
  Value* x = g.addInput("x", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::fixed(3),
                                                                   Dim::fixed(8), Dim::fixed(8)})));
  Value* cond = g.addInput("cond", ValueType::tensor(DType::Bool, Shape()));
  std::vector<float> wdata(4 * 3 * 3 * 3);
  for (size_t i = 0; i < wdata.size(); ++i) wdata[i] = static_cast<float>(i) * 0.01f;
  Value* w = g.addInitializer("w", Tensor::fromVector(DType::Float, {4, 3, 3, 3}, wdata));
  Value* b = g.addInitializer("b", Tensor::fromVector<float>(DType::Float, {4}, {0.1f, 0.2f, 0.3f, 0.4f}));
  Node* conv = g.addNode("Conv", {x, w, b}, {"conv_out"}, "conv");
  conv->setAttr("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1}));
  Node* relu = g.addNode("Relu", {conv->output(0)}, {"relu_out"}, "relu");
  Node* iff = g.addNode("If", {cond}, {"if_out"}, "if");
  auto thenG = g.makeSubgraph("then");
  thenG->addOutput(thenG->addNode("Neg", {relu->output(0)}, {"neg_out"}, "neg")->output(0));
  auto elseG = g.makeSubgraph("else");
  elseG->addOutput(elseG->addNode("Abs", {relu->output(0)}, {"abs_out"}, "abs")->output(0));
  iff->setAttr("then_branch", Attribute(thenG));
  iff->setAttr("else_branch", Attribute(elseG));
  g.addOutput(iff->output(0));
  return m;
}

// smallModel with weights large enough to stay in the file (OnnxReadOptions::weightsStayInFile): fp32 and fp16
// ones above the 1 KiB line, one just below it.
std::unique_ptr<Model> weightyModel() {
  auto m = smallModel();
  Graph& g = *m->graph;
  std::vector<float> big(64 * 64);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) - 100.5f;
  Value* w = g.addInitializer("big", Tensor::fromVector(DType::Float, {64, 64}, big));
  std::vector<uint16_t> half(600);
  for (size_t i = 0; i < half.size(); ++i) half[i] = static_cast<uint16_t>(0x3c00 + i);
  Value* h = g.addInitializer("half", Tensor::fromVector(DType::Float16, {600}, half));
  Value* small = g.addInitializer("under", Tensor::fromVector(DType::Float, {255}, std::vector<float>(255, 2.f)));
  Node* mm = g.addNode("MatMul", {w, w}, {"mm_out"}, "mm");
  g.addOutput(mm->output(0));
  g.addOutput(g.addNode("Neg", {h}, {"neg_half"}, "neg_half")->output(0));
  g.addOutput(g.addNode("Neg", {small}, {"neg_small"}, "neg_small")->output(0));
  return m;
}

void appendVarint(std::string& out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  out += static_cast<char>(v);
}

// Field `number` holding `body` (wire type 2).
std::string field(uint32_t number, const std::string& body) {
  std::string out;
  appendVarint(out, (uint64_t{number} << 3) | 2);
  appendVarint(out, body.size());
  return out + body;
}

std::string writeBytes(const QString& path, const std::string& bytes) {
  std::ofstream f(path.toStdString(), std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path.toStdString();
}

}  // namespace

class OnnxIoTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

  // Expects a LoadError naming the file whose message contains `needle`.
  // Whether the weights are copied or stay in the file, the same refusal.
  void expectError(const std::string& path, const QString& needle) {
    for (const bool stay : {false, true}) {
      try {
        readOnnxFile(path, {.weightsStayInFile = stay});
      } catch (const LoadError& e) {
        const QString msg = QString::fromStdString(e.describe());
        QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable("message does not name the file: " + msg));
        QVERIFY2(msg.contains(needle, Qt::CaseInsensitive), qPrintable("expected '" + needle + "' in: " + msg));
        QVERIFY2(!msg.contains('\n'), "message should be one line");
        continue;
      }
      QFAIL(qPrintable("no error for " + QString::fromStdString(path) + (stay ? " (weights left in the file)" : "")));
    }
  }
  std::string writeProto(const QString& name, const onnx::ModelProto& m) {
    return writeBytes(tmp_.filePath(name), m.SerializeAsString());
  }

 private slots:
  void roundTrip() {
    auto m = smallModel();
    inferShapes(*m);
    QCOMPARE(QString::fromStdString(m->graph->outputs()[0]->type().toString()), QString("fp32[batch×4×8×8]"));
    const std::string path = tmp_.filePath("small.onnx").toStdString();
    writeOnnxFile(*m, path);
    QVERIFY_THROWS_NO_EXCEPTION(onnx::checker::check_model(path));
    OnnxImport back = readOnnxFile(path);
    QVERIFY(back.warnings.empty());
    QCOMPARE(back.model->graph->numNodesRecursive(), size_t(5));
    QVERIFY(verifyModel(*back.model).empty());
    QCOMPARE(back.model->graph->outputs()[0]->type(), m->graph->outputs()[0]->type());
    // The captured value in the branches resolves to the outer Relu output.
    Node* iff = nullptr;
    for (Node* n : back.model->graph->nodes())
      if (n->opType() == "If") iff = n;
    QVERIFY(iff);
    Value* captured = iff->subgraphs()[0]->nodes().begin().operator*()->input(0);
    QCOMPARE(captured->graph(), back.model->graph.get());
    QCOMPARE(captured->producer()->opType(), std::string("Relu"));
    // Weights survive bit for bit.
    const Tensor* w = back.model->graph->initializers()[0]->constant();
    QCOMPARE(w->byteSize(), size_t(4 * 27 * 4));
    QCOMPARE(w->toDouble()[10], double(10 * 0.01f));
  }

  void externalDataRoundTrip() {
    auto m = smallModel();
    const QString dir = tmp_.filePath("ext");
    QDir().mkpath(dir);
    const std::string path = (dir + "/model.onnx").toStdString();
    writeOnnxFile(*m, path, {.externalDataThreshold = 64});
    QVERIFY(QFileInfo::exists(dir + "/model.onnx.data"));
    OnnxImport back = readOnnxFile(path);
    const Tensor* w = nullptr;
    for (Value* v : back.model->graph->initializers())
      if (v->name() == "w") w = v->constant();
    QVERIFY(w);
    QCOMPARE(w->numel(), int64_t(108));
    QCOMPARE(w->toDouble()[107], double(107 * 0.01f));
  }

  void formatsTravelInDenotation() {
    Model m;
    m.opsets[""] = 17;
    Value* x = m.graph->addInput("x", ValueType::tensor(DType::Float16, Shape::ofStatic({1, 1, 4, 4, 16}),
                                                          Format::NC1HWC0));
    m.graph->addOutput(m.graph->addNode("Relu", {x}, {"y"})->output(0));
    OnnxImport back = readOnnxBytes(writeOnnxBytes(m), "mem", "");
    QCOMPARE(back.model->graph->inputs()[0]->type().format, Format::NC1HWC0);
  }

  void duplicateNamesTakeTheLastDefinition() {
    // Two Constant nodes write "c": every use reads the last one, as ONNX Runtime resolves such files.
    onnx::ModelProto m = baseProto();
    auto* g = m.mutable_graph();
    g->clear_node();
    g->clear_output();
    auto constant = [&](float v) {
      auto* n = g->add_node();
      n->set_op_type("Constant");
      n->add_output("c");
      auto* a = n->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      a->mutable_t()->set_data_type(1);
      a->mutable_t()->add_float_data(v);
    };
    auto add = [&](const char* out) {
      auto* n = g->add_node();
      n->set_op_type("Add");
      n->add_input("x");
      n->add_input("c");
      n->add_output(out);
      g->add_output()->set_name(out);
    };
    constant(1.0f);
    add("y1");
    constant(2.0f);
    add("y2");
    OnnxImport imp = readOnnxFile(writeProto("dup.onnx", m));
    QVERIFY(!imp.warnings.empty());
    auto outs = imp.model->graph->outputs();
    auto constOf = [](Value* v) {
      return v->producer()->input(1)->producer()->attr("value")->get<Tensor>()->toDouble()[0];
    };
    QCOMPARE(constOf(outs[0]), 2.0);
    QCOMPARE(constOf(outs[1]), 2.0);
  }

  void refusesEmptyAndGarbage() {
    expectError(writeBytes(tmp_.filePath("empty.onnx"), ""), "empty");
    std::string garbage;
    for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919) % 251);
    expectError(writeBytes(tmp_.filePath("garbage.onnx"), garbage), "not a valid ONNX");
    expectError(tmp_.filePath("does-not-exist.onnx").toStdString(), "no such file");
    expectError(tmp_.path().toStdString(), "directory");
  }

  void refusesTruncation() {
    const std::string bytes = writeOnnxBytes(*weightyModel());
    // Cut at many points; each must fail cleanly (a few prefixes may parse as a valid smaller message: then the
    // importer must still not crash, and the result must be a coherent model or a clear error), whether the
    // weights are copied or left in the file.
    for (size_t cut = 1; cut < bytes.size(); cut += std::max<size_t>(1, bytes.size() / 193)) {
      const std::string path = writeBytes(tmp_.filePath("trunc.onnx"), bytes.substr(0, cut));
      for (const bool stay : {false, true}) {
        try {
          OnnxImport imp = readOnnxFile(path, {.weightsStayInFile = stay});
          QVERIFY(imp.model);
        } catch (const LoadError& e) {
          QVERIFY(QString::fromStdString(e.describe()).contains("trunc.onnx"));
        }
      }
    }
  }

  // raw_data sits wherever protobuf put it: with LoadLimits::alignWeights an fp32 weight at an odd offset of the
  // file is copied out, aligned, and reads the same (the names' lengths move the offsets; one of them leaves it
  // misaligned).
  void weightsAtOddOffsetsAreCopiedOutAligned() {
    bool sawMisaligned = false, sawTableMisaligned = false;
    for (int pad = 0; pad < 4; ++pad) {
      auto m = weightyModel();
      m->graph->setName(std::string(static_cast<size_t>(pad), 'g'));
      // An embedding table only Gather reads stays in the file, aligned or not (a run reads a few of its rows).
      Graph& g = *m->graph;
      Value* table = g.addInitializer("table", Tensor::fromVector(DType::Float, {300, 3}, std::vector<float>(900, 1.5f)));
      Value* ids = g.addInitializer("ids", Tensor::fromVector(DType::Int64, {2}, std::vector<int64_t>{0, 7}));
      g.addOutput(g.addNode("Gather", {table, ids}, {"rows"}, "gather")->output(0));
      Value* big = nullptr;
      for (Value* v : m->graph->initializers())
        if (v->name() == "big") big = v;
      QVERIFY(big);
      big->setName("big" + std::string(static_cast<size_t>(pad), 'x'));
      const std::string path = tmp_.filePath("odd.onnx").toStdString();
      writeOnnxFile(*m, path);
      const LoadedModel mapped = loadModel(path, {.weightsStayInFile = true});
      const LoadedModel aligned = loadModel(path, {.weightsStayInFile = true, .alignWeights = true});
      for (size_t i = 0; i < mapped.model->graph->initializers().size(); ++i) {
        const Tensor& a = *mapped.model->graph->initializers()[i]->constant();
        const Tensor& b = *aligned.model->graph->initializers()[i]->constant();
        QVERIFY(a == b);
        if (a.dtype() != DType::Float) continue;
        const bool misaligned = reinterpret_cast<uintptr_t>(a.data()) % 4 != 0;
        if (mapped.model->graph->initializers()[i]->name() == "table") {
          sawTableMisaligned = sawTableMisaligned || misaligned;
          QCOMPARE(reinterpret_cast<uintptr_t>(b.data()) % 4, reinterpret_cast<uintptr_t>(a.data()) % 4);
          continue;
        }
        sawMisaligned = sawMisaligned || misaligned;
        QCOMPARE(reinterpret_cast<uintptr_t>(b.data()) % 4, uintptr_t(0));
      }
    }
    QVERIFY2(sawMisaligned && sawTableMisaligned, "no layout left a weight misaligned: the test checked nothing");
  }

  // Weights left in the mapped file read back exactly as copied ones, with the same checker verdict.
  void weightsLeftInTheFileReadTheSame() {
    const std::string path = tmp_.filePath("weighty.onnx").toStdString();
    writeOnnxFile(*weightyModel(), path);
    const OnnxImport copied = readOnnxFile(path);
    const OnnxImport mapped = readOnnxFile(path, {.weightsStayInFile = true});
    QCOMPARE(mapped.warnings, copied.warnings);
    QCOMPARE(mapped.model->graph->numNodesRecursive(), copied.model->graph->numNodesRecursive());
    const auto& a = copied.model->graph->initializers();
    const auto& b = mapped.model->graph->initializers();
    QCOMPARE(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(b[i]->name(), a[i]->name());
      QVERIFY2(*b[i]->constant() == *a[i]->constant(), a[i]->name().c_str());
    }

    // What stays in the file: the raw_data of the two initializers of 1 KiB and more, found where it is.
    const std::string bytes = writeOnnxBytes(*weightyModel());
    onnx::ModelProto proto;
    QVERIFY(proto.ParseFromString(bytes));
    auto left = onnxio::leaveInitializerBytesInFile(bytes, 1024);
    QVERIFY(left);
    QCOMPARE(left->initializers.size(), size_t(proto.graph().initializer_size()));
    onnx::ModelProto rest;
    QVERIFY(rest.ParseFromString(left->proto));
    size_t stayed = 0;
    for (int i = 0; i < proto.graph().initializer_size(); ++i) {
      const auto& at = left->initializers[static_cast<size_t>(i)];
      const std::string& raw = proto.graph().initializer(i).raw_data();
      QCOMPARE(bool(at), raw.size() >= 1024);
      QVERIFY(rest.graph().initializer(i).has_raw_data());
      if (!at) {
        QCOMPARE(rest.graph().initializer(i).raw_data(), raw);
        continue;
      }
      ++stayed;
      QCOMPARE(bytes.substr(at->offset, at->size), raw);
      QVERIFY(rest.graph().initializer(i).raw_data().empty());
    }
    QCOMPARE(stayed, size_t(2));
    QCOMPARE(left->bytesLeftInFile, size_t(64 * 64 * 4 + 600 * 2));
    QVERIFY(!onnxio::leaveInitializerBytesInFile(bytes, 1 << 20));  // nothing that large: parse as is

    // Wire data protobuf would merge or override is left to protobuf: a second graph field, a second raw_data.
    const std::string twoGraphs = bytes + field(7, proto.graph().SerializeAsString());
    QVERIFY(!onnxio::leaveInitializerBytesInFile(twoGraphs, 1024));
    const std::string path2 = writeBytes(tmp_.filePath("two_graphs.onnx"), twoGraphs);
    auto outcome = [&](bool stay) {
      try {
        return std::to_string(readOnnxFile(path2, {.weightsStayInFile = stay}).model->graph->numNodesRecursive());
      } catch (const LoadError& e) {
        return e.describe();
      }
    };
    QCOMPARE(outcome(true), outcome(false));  // merged by protobuf: the initializers are then defined twice
    const std::string tensor = proto.graph().initializer(3).SerializeAsString() + field(9, std::string(4096, 'x'));
    QVERIFY(!onnxio::leaveInitializerBytesInFile(field(7, field(5, tensor)), 1024));
  }

  void refusesCycle() {
    onnx::ModelProto m = baseProto();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_input(0, "z");  // relu(z) -> y
    auto* n = g->add_node();                 // neg(y) -> z
    n->set_op_type("Neg");
    n->add_input("y");
    n->add_output("z");
    expectError(writeProto("cycle.onnx", m), "cycle");
  }

  void refusesUndefinedInput() {
    onnx::ModelProto m = baseProto();
    m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
    expectError(writeProto("undefined.onnx", m), "'nowhere', which is not defined");
  }

  void refusesOverflowingDims() {
    onnx::ModelProto m = baseProto();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("huge");
    t->set_data_type(1);
    t->add_dims(int64_t(1) << 40);
    t->add_dims(int64_t(1) << 40);
    expectError(writeProto("overflow.onnx", m), "overflow");

    onnx::ModelProto m2 = baseProto();
    auto* shape = m2.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->add_dim()->set_dim_value(int64_t(1) << 62);
    shape->add_dim()->set_dim_value(int64_t(1) << 62);
    expectError(writeProto("overflow_type.onnx", m2), "overflow");
  }

  void refusesNegativeDims() {
    onnx::ModelProto m = baseProto();
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
        ->set_dim_value(-3);
    expectError(writeProto("negdim.onnx", m), "negative dimension");
  }

  void refusesLyingSizes() {
    // raw_data shorter than the shape needs: copied (16 bytes) or, from 1 KiB, left in the file (expectError reads
    // both ways).
    for (const size_t have : {size_t(16), size_t(2048)}) {
      onnx::ModelProto m = baseProto();
      auto* t = m.mutable_graph()->add_initializer();
      t->set_name("w");
      t->set_data_type(1);
      t->add_dims(1000);
      t->set_raw_data(std::string(have, '\0'));
      expectError(writeProto("rawsize.onnx", m), "needs 4000");
    }

    onnx::ModelProto m2 = baseProto();
    auto* t2 = m2.mutable_graph()->add_initializer();
    t2->set_name("w");
    t2->set_data_type(1);
    t2->add_dims(1000000000);  // a billion floats declared, none present: no 4 GB allocation
    expectError(writeProto("nodata.onnx", m2), "holds 0");
  }

  void refusesBadStructure() {
    onnx::ModelProto m = baseProto();
    m.mutable_graph()->mutable_node(0)->clear_op_type();
    expectError(writeProto("noop.onnx", m), "no op_type");
    onnx::ModelProto m2 = baseProto();
    m2.clear_graph();
    expectError(writeProto("nograph.onnx", m2), "no graph");
    onnx::ModelProto m3 = baseProto();
    auto* a = m3.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("weird");
    a->set_type(static_cast<onnx::AttributeProto::AttributeType>(99));
    expectError(writeProto("badattr.onnx", m3), "attribute 'weird'");  // unknown enum: parsed as no value
    onnx::ModelProto m4 = baseProto();
    m4.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(77);
    expectError(writeProto("baddtype.onnx", m4), "unknown element type");
  }

  void refusesEscapingExternalData() {
    const QString dir = tmp_.filePath("escape");
    QDir().mkpath(dir);
    writeBytes(tmp_.filePath("outside.bin"), std::string(64, 'x'));
    QFile::link(tmp_.filePath("outside.bin"), dir + "/link.bin");
    auto withLocation = [&](const std::string& location, const QString& name, int64_t offset = 0) {
      return writeBytes(dir + "/" + name, kiln::test::withExternalData(location, offset).SerializeAsString());
    };
    expectError(withLocation("../outside.bin", "dotdot.onnx"), "leaves the model's directory");
    expectError(withLocation("/etc/hostname", "absolute.onnx"), "absolute");
    expectError(withLocation("link.bin", "symlink.onnx"), "outside the model's directory");
    expectError(withLocation("missing.bin", "missing.onnx"), "not found");
    writeBytes(dir + "/inside.bin", std::string(64, 'x'));
    expectError(withLocation("inside.bin", "pastend.onnx", 60), "runs past the end");
    // In-bounds data inside the directory is accepted.
    OnnxImport ok = readOnnxFile(withLocation("inside.bin", "ok.onnx", 16));
    QCOMPARE(ok.model->graph->initializers()[0]->constant()->numel(), int64_t(4));
  }

  void sparseInitializersBecomeDense() {
    auto sparse = [](onnx::ModelProto& m, int64_t denseLen, std::vector<int64_t> idx) {
      auto* sp = m.mutable_graph()->add_sparse_initializer();
      sp->add_dims(denseLen);
      auto* v = sp->mutable_values();
      v->set_name("s");
      v->set_data_type(1);
      v->add_dims(static_cast<int64_t>(idx.size()));
      for (size_t i = 0; i < idx.size(); ++i) v->add_float_data(float(i + 1));
      auto* ix = sp->mutable_indices();
      ix->set_data_type(7);
      ix->add_dims(static_cast<int64_t>(idx.size()));
      for (int64_t i : idx) ix->add_int64_data(i);
    };
    onnx::ModelProto m = baseProto();
    sparse(m, 6, {1, 4});
    OnnxImport imp = readOnnxFile(writeProto("sparse.onnx", m));
    const Tensor* t = imp.model->graph->initializers()[0]->constant();
    QCOMPARE(t->toDouble(), (std::vector<double>{0, 1, 0, 0, 2, 0}));
    onnx::ModelProto bad = baseProto();
    sparse(bad, 6, {1, 9});
    expectError(writeProto("sparse_range.onnx", bad), "out of range");
    onnx::ModelProto huge = baseProto();
    sparse(huge, int64_t(1) << 40, {1});
    expectError(writeProto("sparse_huge.onnx", huge), "made dense");
  }

  void tensorFiles() {
    onnx::TensorProto t;
    t.set_name("out");
    t.set_data_type(7);
    t.add_dims(3);
    for (int64_t v : {5, 6, 7}) t.add_int64_data(v);
    const std::string path = writeBytes(tmp_.filePath("t.pb"), t.SerializeAsString());
    NamedTensor nt = readTensorFile(path);
    QCOMPARE(nt.tensor.toInt64(), (std::vector<int64_t>{5, 6, 7}));
    bool threw = false;
    try {
      readTensorFile(writeBytes(tmp_.filePath("bad.pb"), "\xff\xff\xff"));
    } catch (const LoadError& e) {
      threw = QString::fromStdString(e.describe()).contains("bad.pb");
    }
    QVERIFY(threw);
  }
};

QTEST_GUILESS_MAIN(OnnxIoTest)
#include "test_onnx_io.moc"
