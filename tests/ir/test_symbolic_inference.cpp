// Inference over the shape arithmetic exports write: symbolic dims survive Shape -> Gather -> Concat -> Reshape,
// -1 is solved over symbols, sliced axes keep their symbol, a KV-cache Concat gives "seq+1", Range over one
// symbol has a static length, and duplicate-free static chains fold to exact shapes.
#include <QtTest>

#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"

using namespace kiln;

namespace {

struct Builder {
  Model m;
  Graph& g = *m.graph;
  Builder() { m.opsets[""] = 13; }
  Value* ints(const std::string& name, std::vector<int64_t> v, bool scalar = false) {
    return g.addInitializer(name, Tensor::fromVector(DType::Int64, scalar ? std::vector<int64_t>{}
                                                                          : std::vector<int64_t>{int64_t(v.size())},
                                                     v));
  }
  Value* op(const std::string& type, const std::vector<Value*>& in, std::vector<NamedAttribute> attrs = {}) {
    Node* n = g.addNode(type, in, 1, type + std::to_string(g.numNodes()));
    for (auto& a : attrs) n->setAttr(a.name, a.value);
    return n->output(0);
  }
  std::string infer(Value* v) {
    inferShapes(m);
    return v->type().toString();
  }
};

ValueType tensor(DType t, std::vector<Dim> d) { return ValueType::tensor(t, Shape(std::move(d))); }

}  // namespace

class SymbolicInferenceTest : public QObject {
  Q_OBJECT
 private slots:
  void reshapeFromShapeKeepsSymbols() {
    // x: [batch, seq, 8] -> Reshape(x, Concat(Gather(Shape(x), 0), Gather(Shape(x), 1), [2, 4]))
    Builder b;
    Value* x = b.g.addInput("x", tensor(DType::Float, {Dim::symbolic("batch"), Dim::symbolic("seq"), Dim::fixed(8)}));
    Value* shape = b.op("Shape", {x});
    Value* d0 = b.op("Unsqueeze", {b.op("Gather", {shape, b.ints("i0", {0}, true)}), b.ints("ax", {0})});
    Value* d1 = b.op("Unsqueeze", {b.op("Gather", {shape, b.ints("i1", {1}, true)}), b.ints("ax2", {0})});
    Value* target = b.op("Concat", {d0, d1, b.ints("heads", {2, 4})}, {{"axis", Attribute(int64_t(0))}});
    Value* y = b.op("Reshape", {x, target});
    b.g.addOutput(y);
    QCOMPARE(QString::fromStdString(b.infer(y)), QString::fromUtf8("fp32[batch×seq×2×4]"));
  }

  void minusOneIsSolvedOverSymbols() {
    Builder b;
    Value* x = b.g.addInput("x", tensor(DType::Float, {Dim::symbolic("batch"), Dim::fixed(3), Dim::fixed(4)}));
    Value* shape = b.op("Shape", {x});
    Value* batch = b.op("Unsqueeze", {b.op("Gather", {shape, b.ints("i0", {0}, true)}), b.ints("ax", {0})});
    // [-1, 12] over [batch, 3, 4] -> [batch, 12]; [batch, -1] -> [batch, 12].
    Value* a = b.op("Reshape", {x, b.ints("t", {-1, 12})});
    Value* c = b.op("Reshape", {x, b.op("Concat", {batch, b.ints("m1", {-1})}, {{"axis", Attribute(int64_t(0))}})});
    b.g.addOutput(a);
    b.g.addOutput(c);
    inferShapes(b.m);
    QCOMPARE(QString::fromStdString(a->type().toString()), QString::fromUtf8("fp32[batch×12]"));
    QCOMPARE(QString::fromStdString(c->type().toString()), QString::fromUtf8("fp32[batch×12]"));
  }

  void kvCacheConcatAndRangeOverOneSymbol() {
    // past: [batch, past, 4], new: [batch, 1, 4] -> Concat axis 1 = past+1;
    // Range(past, past + 1, 1) has length 1.
    Builder b;
    Value* past = b.g.addInput("past", tensor(DType::Float, {Dim::symbolic("batch"), Dim::symbolic("past"),
                                                             Dim::fixed(4)}));
    Value* cur = b.g.addInput("cur", tensor(DType::Float, {Dim::symbolic("batch"), Dim::fixed(1), Dim::fixed(4)}));
    Value* kv = b.op("Concat", {past, cur}, {{"axis", Attribute(int64_t(1))}});
    Value* start = b.op("Gather", {b.op("Shape", {past}), b.ints("i1", {1}, true)});
    Value* limit = b.op("Add", {start, b.ints("one", {1}, true)});
    Value* pos = b.op("Range", {start, limit, b.ints("step", {1}, true)});
    b.g.addOutput(kv);
    b.g.addOutput(pos);
    inferShapes(b.m);
    QCOMPARE(QString::fromStdString(kv->type().toString()), QString::fromUtf8("fp32[batch×past+1×4]"));
    QCOMPARE(QString::fromStdString(pos->type().toString()), QString::fromUtf8("int64[1]"));
  }

  void sliceWithComputedBounds() {
    // mask[:, :, key-1:key, :key] with key = past + 1 taken from a Shape.
    Builder b;
    Value* mask = b.g.addInput("mask", tensor(DType::Float, {Dim::fixed(1), Dim::fixed(1), Dim::fixed(64), Dim::fixed(64)}));
    Value* kv = b.g.addInput("kv", tensor(DType::Float, {Dim::symbolic("batch"), Dim::symbolic("key"), Dim::fixed(4)}));
    Value* key = b.op("Unsqueeze", {b.op("Gather", {b.op("Shape", {kv}), b.ints("i1", {1}, true)}), b.ints("ax", {0})});
    Value* keyMinus1 = b.op("Sub", {key, b.ints("one", {1})});
    Value* rows = b.op("Slice", {mask, keyMinus1, key, b.ints("axis2", {2}), b.ints("st", {1})});
    // Whole-axis slices keep their symbols.
    Value* whole = b.op("Slice", {kv, b.ints("z", {0}), b.ints("big", {INT64_MAX}), b.ints("axis0", {0})});
    b.g.addOutput(rows);
    b.g.addOutput(whole);
    inferShapes(b.m);
    QCOMPARE(QString::fromStdString(rows->type().toString()), QString::fromUtf8("fp32[1×1×1×64]"));
    QCOMPARE(QString::fromStdString(whole->type().toString()), QString::fromUtf8("fp32[batch×key×4]"));
  }
};

QTEST_GUILESS_MAIN(SymbolicInferenceTest)
#include "test_symbolic_inference.moc"
