// The shape binding every command shares (ir/shape_binding.h): roles from the names real exporters write and, for
// unnamed symbols, from where they sit; the policy's extents; input_shape and dim_values first; contradictions
// refused naming the option; sums of symbols evaluated; the gear lists refused when malformed.
#include <QtTest>

#include "ir/model.h"
#include "ir/shape_binding.h"
#include "options/options.h"
#include "passes/prepare/binding_fit.h"
#include "samples/graph_builder.h"

using namespace kiln;

namespace {

Shape shapeOf(std::initializer_list<const char*> dims) {
  std::vector<Dim> out;
  for (const char* d : dims) {
    const std::string s(d);
    out.push_back(!s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) ? Dim::fixed(std::stoll(s))
                                                                               : Dim::symbolic(s));
  }
  return Shape(out);
}

std::string roleOf(const std::string& symbol, std::initializer_list<const char*> shape, size_t axis, bool isFloat = true) {
  return dimRoleName(classifySymbol(symbol, shapeOf(shape), axis, isFloat));
}

}  // namespace

class ShapeBindingTest : public QObject {
  Q_OBJECT

 private slots:
  void rolesFromNames() {
    // PyTorch / Hugging Face
    QCOMPARE(roleOf("batch_size", {"batch_size", "seq_len"}, 0), std::string("batch"));
    QCOMPARE(roleOf("seq_len", {"batch_size", "seq_len"}, 1, false), std::string("sequence"));
    QCOMPARE(roleOf("sequence_length", {"batch_size", "sequence_length"}, 1, false), std::string("sequence"));
    QCOMPARE(roleOf("max_seq_len_in_batch", {"batch", "max_seq_len_in_batch"}, 1, false), std::string("sequence"));
    // A "sequence" of floats without a feature axis is a waveform (Silero VAD's input [batch, sequence]).
    QCOMPARE(roleOf("sequence", {"batch", "sequence"}, 1, true), std::string("audio"));
    QCOMPARE(roleOf("sequence", {"batch", "sequence", "80"}, 1, true), std::string("sequence"));
    QCOMPARE(roleOf("past_sequence_length", {"2", "batch", "12", "past_sequence_length", "64"}, 3),
             std::string("past_sequence"));
    QCOMPARE(roleOf("past_decoder_sequence_length", {"1", "past_decoder_sequence_length"}, 1), std::string("past_sequence"));
    QCOMPARE(roleOf("total_sequence_length", {"batch_size", "total_sequence_length"}, 1), std::string("total_sequence"));
    QCOMPARE(roleOf("encoder_sequence_length", {"batch", "encoder_sequence_length"}, 1, false), std::string("sequence"));
    QCOMPARE(roleOf("height", {"batch", "3", "height", "width"}, 2), std::string("image"));
    QCOMPARE(roleOf("N", {"N", "3", "224", "224"}, 0), std::string("batch"));
    QCOMPARE(roleOf("samples", {"batch_size", "samples"}, 1), std::string("audio"));  // an STFT needs more than 128
    QCOMPARE(roleOf("audio_length", {"batch", "audio_length"}, 1), std::string("audio"));
    // A batch symbol away from axis 0 (an LSTM state [2, batch, 64]) is still the batch.
    QCOMPARE(roleOf("batch", {"2", "batch", "64"}, 1), std::string("batch"));
  }

  void rolesFromPositionForUnnamedSymbols() {
    // tf2onnx's unk__N, Keras' None, Paddle's p2o.DynamicDimension.N
    QCOMPARE(roleOf("unk__2333", {"unk__2333", "36", "36", "528"}, 0), std::string("batch"));
    QCOMPARE(roleOf("None", {"None", "3", "720", "720"}, 0), std::string("batch"));
    QCOMPARE(roleOf("p2o.DynamicDimension.1", {"p2o.DynamicDimension.0", "3", "p2o.DynamicDimension.1",
                                               "p2o.DynamicDimension.2"}, 2),
             std::string("image"));
    // NHWC: the spatial axes are 1 and 2 when only the last axis is a small channel count.
    QCOMPARE(roleOf("unk__7", {"unk__6", "unk__7", "unk__8", "3"}, 1), std::string("image"));
    QCOMPARE(roleOf("unk__9", {"unk__6", "unk__9", "128"}, 1), std::string("sequence"));
    QCOMPARE(roleOf("unk__3", {"unk__2", "unk__3"}, 1), std::string("audio"));          // float [batch, N]: a waveform
    QCOMPARE(roleOf("unk__3", {"unk__2", "unk__3"}, 1, false), std::string("sequence"));  // int [batch, N]: token ids
    QCOMPARE(roleOf("dynamic_prediction_count", {"batch", "dynamic_prediction_count", "1"}, 1), std::string("sequence"));
    QCOMPARE(roleOf("k", {"4", "8", "k"}, 2), std::string("other"));
  }

  void policyBindsWhatOptionsLeaveOpen() {
    Model m;
    Graph& g = *m.graph;
    g.addInput("input_ids", ValueType::tensor(DType::Int64, shapeOf({"batch_size", "sequence_length"})));
    g.addInput("attention_mask", ValueType::tensor(DType::Int64, shapeOf({"batch_size", "total_sequence_length"})));
    g.addInput("past", ValueType::tensor(DType::Float, shapeOf({"batch_size", "8", "past_sequence_length", "64"})));
    BindingRequest request;
    ShapeBinding b = resolveShapeBinding(g, request);
    QCOMPARE(b.valueOf("batch_size"), std::optional<int64_t>(1));
    // A KV-cache model is bound as one decode step: one new token over a 128-token past.
    QCOMPARE(b.valueOf("sequence_length"), std::optional<int64_t>(1));
    QCOMPARE(b.valueOf("past_sequence_length"), std::optional<int64_t>(128));
    QCOMPARE(b.valueOf("total_sequence_length"), std::optional<int64_t>(129));  // past + sequence
    QCOMPARE(b.find("batch_size")->source, std::string("dim_policy: batch"));
    QVERIFY(b.find("sequence_length")->source.find("decode") != std::string::npos);
    // The total follows the extents the user chose for past and sequence.
    request.dimValues = {{"sequence_length", 1}, {"past_sequence_length", 511}};
    b = resolveShapeBinding(g, request);
    QCOMPARE(b.valueOf("total_sequence_length"), std::optional<int64_t>(512));
    QCOMPARE(b.find("sequence_length")->source, std::string("dim_values"));
    // The policy is the user's to change.
    request.policy = DimPolicy::parse("batch:4;sequence:2048");
    request.dimValues.clear();
    b = resolveShapeBinding(g, request);
    QCOMPARE(b.valueOf("batch_size"), std::optional<int64_t>(4));
    QCOMPARE(b.valueOf("total_sequence_length"), std::optional<int64_t>(128 + 1));
    request.policy = DimPolicy::parse("past_sequence:8191;decode_sequence:1");
    b = resolveShapeBinding(g, request);
    QCOMPARE(b.valueOf("total_sequence_length"), std::optional<int64_t>(8192));
    // keep: what input_shape and dim_values leave open stays symbolic.
    request.keep = true;
    request.dimValues = {{"batch_size", 2}};
    b = resolveShapeBinding(g, request);
    QCOMPARE(b.bound.size(), size_t(1));
    QCOMPARE(b.kept.size(), size_t(3));
    QVERIFY(b.text().find("kept symbolic") != std::string::npos);
    // The JSON the CLI, the batch report and the history carry reads back.
    const ShapeBinding back = ShapeBinding::fromJson(Json::parse(b.toJson().dump()));
    QCOMPARE(back.text(), b.text());
  }

  void sequencesWithoutACache() {
    // An encoder (no KV cache): the sequence gets the policy's 128; gpt2-style past_N inputs name their
    // sequence-like axis seq_len, which is the past.
    Model enc;
    enc.graph->addInput("input_ids", ValueType::tensor(DType::Int64, shapeOf({"batch", "sequence"})));
    QCOMPARE(resolveShapeBinding(*enc.graph, {}).valueOf("sequence"), std::optional<int64_t>(128));
    Model gpt2;
    gpt2.graph->addInput("input_ids", ValueType::tensor(DType::Int64, shapeOf({"batch_size", "1"})));
    gpt2.graph->addInput("past_0", ValueType::tensor(DType::Float, shapeOf({"2", "batch_size", "2", "seq_len", "2"})));
    const ShapeBinding b = resolveShapeBinding(*gpt2.graph, {});
    QCOMPARE(b.valueOf("seq_len"), std::optional<int64_t>(128));
    QVERIFY(b.find("seq_len")->source.find("past_sequence") != std::string::npos);
  }

  // A position table shorter than the policy's sequence (BERT's position_ids buffer, CLIP's 77 positions): the
  // policy's extent is lowered to the longest the table takes, the source says why, the graph is left as it was;
  // an extent the user gave is kept. Read at the sequence + 1 (as a decode step reads past + 1), a table of 2^k rows
  // takes 2^k - 1: the extent just below the failure the halving stopped at.
  void policyExtentsAreFittedToTheModel_data() {
    QTest::addColumn<int64_t>("rows");
    QTest::addColumn<int64_t>("readBeyond");
    QTest::addColumn<int64_t>("fitted");
    QTest::newRow("40 rows") << int64_t{40} << int64_t{0} << int64_t{40};
    QTest::newRow("77 rows (CLIP)") << int64_t{77} << int64_t{0} << int64_t{77};
    QTest::newRow("64 rows") << int64_t{64} << int64_t{0} << int64_t{64};
    QTest::newRow("64 rows read at sequence + 1") << int64_t{64} << int64_t{1} << int64_t{63};
    QTest::newRow("40 rows read at sequence + 1") << int64_t{40} << int64_t{1} << int64_t{39};
  }
  void policyExtentsAreFittedToTheModel() {
    QFETCH(int64_t, rows);
    QFETCH(int64_t, readBeyond);
    QFETCH(int64_t, fitted);
    Model m;
    m.opsets[""] = 17;
    {
      SampleOptions so;
      samples::GraphBuilder b(&m, so);
      Value* ids = b.input("input_ids", DType::Int64, {Dim::symbolic("batch"), Dim::symbolic("sequence")});
      Value* tokens = b.gather(b.buffer("word_embeddings", {50, 4}, [](size_t, std::span<float> c) {
        std::fill(c.begin(), c.end(), 0.5f);
      }), ids);
      Value* length = b.slice(b.op("Shape", {ids}), {1}, {2}, {0});
      Value* table = b.buffer("position_embeddings", {1, rows, 4}, [](size_t, std::span<float> c) {
        std::fill(c.begin(), c.end(), 0.25f);
      });
      Value* positions = b.op("Slice", {table, b.ints({0}), length, b.ints({1})});
      if (readBeyond) {  // the row after the sequence must exist too
        Value* end = b.op("Add", {length, b.ints({readBeyond})});
        Value* last = b.op("Slice", {table, b.op("Sub", {end, b.ints({1})}), end, b.ints({1})});
        positions = b.add(positions, last);
      }
      b.output(b.add(tokens, positions), "hidden");
    }
    const auto typesOf = [&] {
      std::vector<std::string> out;
      for (const Value* v : m.graph->values()) out.push_back(v->type().toString());
      return out;
    };
    const std::vector<std::string> before = typesOf();
    const ShapeBinding b = resolveFittedBinding(m, {});
    QCOMPARE(b.valueOf("sequence"), std::optional<int64_t>(fitted));
    QVERIFY2(b.find("sequence")->source.find("fitted to the model: 128 fails") != std::string::npos,
             b.find("sequence")->source.c_str());
    QCOMPARE(b.valueOf("batch"), std::optional<int64_t>(1));
    QVERIFY(typesOf() == before);
    BindingRequest user;
    user.dimValues = {{"sequence", 64}};
    QCOMPARE(resolveFittedBinding(m, user).valueOf("sequence"), std::optional<int64_t>(64));
    // A model whose tables take the policy's extent is bound as before.
    Model enc;
    enc.graph->addInput("input_ids", ValueType::tensor(DType::Int64, shapeOf({"batch", "sequence"})));
    QCOMPARE(resolveFittedBinding(enc, {}).valueOf("sequence"), std::optional<int64_t>(128));
  }

  void contradictionsAreRefusedNamingTheOption() {
    Model m;
    Graph& g = *m.graph;
    g.addInput("x", ValueType::tensor(DType::Float, shapeOf({"batch", "3", "224", "224"})));
    const auto refuses = [&](BindingRequest r, const char* words) {
      try {
        resolveShapeBinding(g, r);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what()).find(words) != std::string::npos;
      }
      return false;
    };
    BindingRequest r;
    r.inputShapes = {{"x", {Dim::fixed(1), Dim::fixed(4), Dim::fixed(224), Dim::fixed(224)}}};
    QVERIFY(refuses(r, "input_shape gives 'x' dimension 1 = 4 but the model fixes it to 3"));
    r.inputShapes = {{"x", {Dim::fixed(1), Dim::fixed(3)}}};
    QVERIFY(refuses(r, "input_shape gives 'x' rank 2"));
    r.inputShapes = {{"y", {Dim::fixed(1)}}};
    QVERIFY(refuses(r, "input_shape names 'y', which is not a graph input"));
    r.inputShapes = {{"x", {Dim::fixed(2), Dim::fixed(3), Dim::fixed(224), Dim::fixed(224)}}};
    r.dimValues = {{"batch", 8}};
    QVERIFY(refuses(r, "binds 'batch'"));
  }

  void sumsOfSymbols() {
    const std::map<std::string, int64_t> v{{"past_sequence_length", 7}, {"sequence_length", 1}};
    QCOMPARE(evaluateSymbol("past_sequence_length + 1", v), std::optional<int64_t>(8));
    QCOMPARE(evaluateSymbol("past_sequence_length+sequence_length", v), std::optional<int64_t>(8));
    QCOMPARE(evaluateSymbol("sequence_length", v), std::optional<int64_t>(1));
    QCOMPARE(evaluateSymbol("past_sequence_length - 8", v), std::optional<int64_t>());  // negative: not a size
    QCOMPARE(evaluateSymbol("unknown + 1", v), std::optional<int64_t>());
    QCOMPARE(evaluateSymbol("unk__12", v), std::optional<int64_t>());
  }

  void optionsAreCheckedWhenSet() {
    Options o;
    for (const char* bad : {"dim_policy=batch:0", "dim_policy=seq:128", "dim_policy=total_sequence:5",
                            "dim_policy=batch", "dynamic_batch_size=1,2,0", "dynamic_batch_size=1,2.5",
                            "dynamic_batch_size=4", "dynamic_batch_size=1,1", "dynamic_image_size=224,224;448",
                            "dynamic_dims=1,2;3", "dynamic_dims=-1,2;3,4", "verify.min_cosine=1.5",
                            "verify.rtol_fp16=x"}) {
      bool refused = false;
      try {
        o.set(bad);
      } catch (const OptionError& e) {
        refused = std::string(e.what()).find(std::string(bad).substr(0, std::string(bad).find('='))) !=
                  std::string::npos;
      }
      QVERIFY2(refused, bad);
    }
    o.set("dynamic_batch_size=1,2,4,8");
    QCOMPARE(o.gears("dynamic_batch_size").size(), size_t(4));
    o.set("dynamic_image_size=224,224;448,448");
    QCOMPARE(o.gears("dynamic_image_size")[1], (std::vector<int64_t>{448, 448}));
    o.set("verify.min_cosine=0.999");
    QCOMPARE(o.getNumber("verify.min_cosine"), 0.999);
    o.set("dim_values=batch:2;keep");
    QVERIFY(o.keepSymbolicDims());
    QCOMPARE(o.dimValues().size(), size_t(1));
  }
};

QTEST_APPLESS_MAIN(ShapeBindingTest)
#include "test_shape_binding.moc"
