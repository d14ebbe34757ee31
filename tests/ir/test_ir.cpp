// Unit tests of the graph IR: types, shapes, formats, tensors, the mutation API, ids, topological order and the
// verifier.
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "kernels/kernel.h"
#include "ir/format.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "ir/shape.h"
#include "ir/tensor.h"
#include "ir/verifier.h"
#include "util/flat_ptr_map.h"
#include "util/json.h"
#include "util/parallel_for.h"
#include "util/units.h"

using namespace kiln;

namespace {
ValueType f32(std::vector<int64_t> dims) { return ValueType::tensor(DType::Float, Shape::ofStatic(dims)); }

// An If in g (placed before `before`, or last) whose bodies each hold one node capturing `x` from g: Neg in "then",
// Abs in "else".
struct CapturingIf {
  Node* iff;
  std::shared_ptr<Graph> thenG, elseG;
  Node* neg;
  Node* abs;
};
CapturingIf addCapturingIf(Graph& g, Value* cond, Value* x, Node* before = nullptr) {
  CapturingIf c;
  c.iff = g.addNode("If", {cond}, 1, "if", "", before);
  c.thenG = g.makeSubgraph("then");
  c.neg = c.thenG->addNode("Neg", {x}, 1, "neg");
  c.thenG->addOutput(c.neg->output(0));
  c.elseG = g.makeSubgraph("else");
  c.abs = c.elseG->addNode("Abs", {x}, 1, "abs");
  c.elseG->addOutput(c.abs->output(0));
  c.iff->setAttr("then_branch", Attribute(c.thenG));
  c.iff->setAttr("else_branch", Attribute(c.elseG));
  return c;
}
}  // namespace

class IrTest : public QObject {
  Q_OBJECT
 private slots:
  void dtypes() {
    QCOMPARE(dtypeSize(DType::Float16), 2);
    QCOMPARE(dtypeSize(DType::BFloat16), 2);
    QCOMPARE(dtypeSize(DType::Complex128), 16);
    QCOMPARE(std::string(dtypeName(DType::BFloat16)), std::string("bf16"));
    QVERIFY(dtypeFromName("float16") == DType::Float16);
    QVERIFY(dtypeFromName("fp32") == DType::Float);
    QVERIFY(!dtypeFromOnnx(0));
    QVERIFY(dtypeFromOnnx(17) == DType::Float8E4M3FN);
    QVERIFY(!dtypeFromOnnx(27));
    QVERIFY(dtypeFromOnnx(16) == DType::BFloat16);
  }

  void shapes() {
    Shape s({Dim::symbolic("batch"), Dim::fixed(128)});
    QVERIFY(!s.isStatic());
    QVERIFY(!s.numel());
    QCOMPARE(QString::fromStdString(s.toString()), QString("batch×128"));
    QCOMPARE(Shape::ofStatic({2, 3, 4}).numel().value(), int64_t(24));
    QVERIFY(!Shape::ofStatic({int64_t(1) << 40, int64_t(1) << 40}).numel());  // overflow detected
    QVERIFY(!checkedProduct({-1, 2}));
    QCOMPARE(QString::fromStdString(Shape().toString()), QString("scalar"));
    QVERIFY(!Shape::unknownRank().rankKnown());
  }

  void formats() {
    // Conv activations 1×3×224×224 fp16 -> NC1HWC0 1×1×224×224×16 (C padded to C0).
    auto p = physicalExtents({1, 3, 224, 224}, Format::NC1HWC0, 2);
    QVERIFY(p);
    QCOMPARE(*p, (std::vector<int64_t>{1, 1, 224, 224, 16}));
    // Weights 64×3×7×7 -> FRACTAL_Z (1·7·7, 4, 16, 16).
    p = physicalExtents({64, 3, 7, 7}, Format::FRACTAL_Z, 2);
    QCOMPARE(*p, (std::vector<int64_t>{49, 4, 16, 16}));
    // Matrix 1×128×768 -> FRACTAL_NZ (1, 48, 8, 16, 16).
    p = physicalExtents({1, 128, 768}, Format::FRACTAL_NZ, 2);
    QCOMPARE(*p, (std::vector<int64_t>{1, 48, 8, 16, 16}));
    QCOMPARE(blockC0(1), int64_t(32));
    QVERIFY(!physicalExtents({3, 4}, Format::NC1HWC0, 2));
    QVERIFY(formatFromName("FRACTAL_NZ") == Format::FRACTAL_NZ);
  }

  void halfPrecision() {
    QCOMPARE(halfToFloat(floatToHalf(1.0f)), 1.0f);
    QCOMPARE(halfToFloat(floatToHalf(-2.5f)), -2.5f);
    QCOMPARE(floatToHalf(65504.0f), uint16_t(0x7bff));
    QCOMPARE(floatToHalf(1e6f), uint16_t(0x7c00));        // overflow -> inf
    QCOMPARE(floatToHalf(5.960464e-8f), uint16_t(0x0001));  // smallest subnormal
    QCOMPARE(halfToFloat(0x0001), 5.9604645e-8f);
    // Round to nearest even: 1 + 2^-11 is halfway between 1 and the next half -> 1.
    QCOMPARE(floatToHalf(1.0f + 1.0f / 2048.0f), uint16_t(0x3c00));
    QCOMPARE(bfloat16ToFloat(floatToBfloat16(3.140625f)), 3.140625f);
    QVERIFY(std::isnan(halfToFloat(floatToHalf(NAN))));
    // The bulk conversion (F16C where the CPU has it) agrees bit for bit with floatToHalf: every exponent, both
    // signs, halfway cases, subnormals, infinities and NaNs with payloads, at an unaligned start.
    std::vector<uint32_t> bits;
    uint32_t state = 12345;
    for (uint32_t e = 0; e < 256; ++e)
      for (int k = 0; k < 64; ++k) {
        state = state * 1664525u + 1013904223u;
        const uint32_t mantissa = k < 4 ? (k == 0 ? 0u : k == 1 ? 0x1000u : k == 2 ? 0x3000u : 0x7fffffu) : state >> 9;
        bits.push_back((state & 0x80000000u) | e << 23 | mantissa);
      }
    std::vector<char> raw(bits.size() * 4 + 1);
    std::memcpy(raw.data() + 1, bits.data(), bits.size() * 4);
    std::vector<uint16_t> bulk(bits.size());
    floatsToHalves(reinterpret_cast<const float*>(raw.data() + 1), bulk.data(), bits.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      float f;
      std::memcpy(&f, &bits[i], 4);
      if (bulk[i] != floatToHalf(f)) QFAIL(qPrintable(QString("bits %1: bulk %2, scalar %3").arg(bits[i], 8, 16).arg(bulk[i], 4, 16).arg(floatToHalf(f), 4, 16)));
    }
    // And the way back: every one of the 65536 halves (signalling NaNs included) as halfToFloat widens it.
    std::vector<uint16_t> halves(65536 + 5);
    for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
    std::vector<float> wide(halves.size());
    halvesToFloats(halves.data(), wide.data(), halves.size());
    for (size_t i = 0; i < halves.size(); ++i) {
      const float f = halfToFloat(halves[i]);
      if (std::memcmp(&wide[i], &f, 4) != 0) QFAIL(qPrintable(QString("half %1 widened differently").arg(halves[i], 4, 16)));
    }
  }

  void bulkScalingRoundsLikeTheScalarLoop() {
    // scaleFloats (AVX where the CPU has it) gives what float(double(x) * s) gives, bit for bit: every exponent,
    // both signs, subnormals, infinities and NaNs, products that overflow or underflow, at an unaligned start and
    // with a tail shorter than a vector.
    std::vector<uint32_t> bits;
    uint32_t state = 777;
    for (uint32_t e = 0; e < 256; ++e)
      for (int k = 0; k < 33; ++k) {
        state = state * 1664525u + 1013904223u;
        bits.push_back((state & 0x80000000u) | e << 23 | (k == 0 ? 0u : state >> 9));
      }
    std::vector<char> raw(bits.size() * 4 + 3);
    std::memcpy(raw.data() + 3, bits.data(), bits.size() * 4);
    const auto* in = reinterpret_cast<const float*>(raw.data() + 3);
    for (const double s : {0.7316, -3.5e-3, 1e30, 1e-30, 1.0}) {
      std::vector<float> bulk(bits.size());
      scaleFloats(in, bulk.data(), bits.size(), s);
      for (size_t i = 0; i < bits.size(); ++i) {
        float x;
        std::memcpy(&x, &bits[i], 4);
        const float scalar = static_cast<float>(double(x) * s);
        uint32_t a, b;
        std::memcpy(&a, &bulk[i], 4);
        std::memcpy(&b, &scalar, 4);
        if (a != b && !(std::isnan(bulk[i]) && std::isnan(scalar)))
          QFAIL(qPrintable(QString("x bits %1 scale %2: bulk %3, scalar %4")
                               .arg(bits[i], 8, 16)
                               .arg(s)
                               .arg(a, 8, 16)
                               .arg(b, 8, 16)));
      }
    }
  }

  void parallelLoopsCoverEveryIndexOnce() {
    // Pieces are contiguous, never overlap, start at multiples of `align` and are at least minPiece long (but the
    // last); every index is visited once, on however many threads the machine gives.
    for (const auto& [n, minPiece, align] : std::vector<std::tuple<size_t, size_t, size_t>>{
             {0, 1, 1}, {1, 1, 1}, {63, 8, 64}, {200, 10, 64}, {1000003, 4096, 64}, {1 << 20, 1, 1}, {17, 100, 1}}) {
      std::vector<std::atomic<int>> seen(n);
      std::mutex m;
      std::vector<std::pair<size_t, size_t>> pieces;
      parallelFor(n, minPiece, align, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) seen[i].fetch_add(1);
        std::lock_guard lock(m);
        pieces.emplace_back(begin, end);
      });
      for (size_t i = 0; i < n; ++i) QCOMPARE(seen[i].load(), 1);
      std::sort(pieces.begin(), pieces.end());
      for (size_t k = 0; k < pieces.size(); ++k) {
        QCOMPARE(pieces[k].first % align, size_t(0));
        if (k + 1 < pieces.size()) {
          QVERIFY(pieces[k].second - pieces[k].first >= std::max(minPiece, align));
          QCOMPARE(pieces[k].second, pieces[k + 1].first);
        }
      }
      QCOMPARE(pieces.empty() ? size_t(0) : pieces.back().second, n);
    }
    QVERIFY(parallelThreads() >= 1);
  }

  void parallelLoopsRethrowNestAndShare() {
    // A piece's exception reaches the caller once every piece has finished.
    std::atomic<size_t> done{0};
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, parallelFor(1 << 16, 1, 1, [&](size_t begin, size_t end) {
                               done += end - begin;
                               if (begin == 0) throw std::runtime_error("piece 0");
                             }));
    QCOMPARE(done.load(), size_t(1) << 16);
    // A loop inside a piece, and loops started from two threads at once, run to the end (alone when the pool is
    // taken) instead of waiting for each other.
    std::atomic<size_t> inner{0};
    parallelFor(64, 1, 1, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) parallelFor(1000, 10, 1, [&](size_t b, size_t e) { inner += e - b; });
    });
    QCOMPARE(inner.load(), size_t(64 * 1000));
    std::atomic<size_t> total{0};
    auto many = [&] {
      for (int k = 0; k < 200; ++k) parallelFor(5000, 100, 1, [&](size_t b, size_t e) { total += e - b; });
    };
    std::thread other(many);
    many();
    other.join();
    QCOMPARE(total.load(), size_t(2 * 200 * 5000));
  }

  void bulkConversionMatchesOneThread() {
    // convertTensor splits a weight-sized fp32 -> fp16 conversion across the cores; each half is what converting the
    // whole array on one thread gives, bit for bit (an odd length: the vector loop's tail falls in the last piece).
    const size_t n = (size_t{1} << 20) + 13;
    std::vector<float> values(n);
    uint32_t state = 99;
    for (float& v : values) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<float>(static_cast<int32_t>(state)) * 1e-6f;
    }
    const Tensor x = Tensor::fromVector(DType::Float, {static_cast<int64_t>(n)}, values);
    const Tensor y = convertTensor(x, DType::Float16);
    std::vector<uint16_t> expected(n);
    floatsToHalves(values.data(), expected.data(), n);
    QCOMPARE(y.byteSize(), n * 2);
    QVERIFY(std::memcmp(y.data(), expected.data(), n * 2) == 0);
  }

  void tensorsShareStorage() {
    Tensor t = Tensor::fromVector<float>(DType::Float, {2, 2}, {1, 2, 3, 4});
    Tensor copy = t;
    QVERIFY(copy.sharesStorageWith(t));
    QCOMPARE(copy.data(), t.data());
    QCOMPARE(t.toDouble()[3], 4.0);
    QVERIFY(t == copy);
    Tensor other = Tensor::fromVector<float>(DType::Float, {2, 2}, {1, 2, 3, 5});
    QVERIFY(!(t == other));
  }

  void buildAndMutate() {
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({1, 4}));
    Value* w = g.addInitializer("w", Tensor::fromVector<float>(DType::Float, {4}, {1, 1, 1, 1}));
    Node* add = g.addNode("Add", {x, w}, 1, "add");
    Node* relu = g.addNode("Relu", {add->output(0)}, 1, "relu");
    g.addOutput(relu->output(0));
    QCOMPARE(x->uses().size(), size_t(1));
    QCOMPARE(add->output(0)->producer(), add);
    QVERIFY(verifyModel(m).empty());

    // Insert an Identity between add and relu, then remove it again: ids stay, nothing dangles.
    const NodeId reluId = relu->id();
    Node* id = g.addNode("Identity", {add->output(0)}, 1, "id", "", relu);
    g.setNodeInput(relu, 0, id->output(0));
    QCOMPARE(add->output(0)->uses().size(), size_t(1));
    QVERIFY(verifyModel(m).empty());
    g.replaceAllUsesWith(id->output(0), add->output(0));
    g.eraseNode(id);
    QVERIFY(verifyModel(m).empty());
    QCOMPARE(g.findNode(reluId), relu);
    // Ids are never reused: the erased Identity's id stays unused.
    Node* later = g.addNode("Neg", {relu->output(0)}, 1, "neg");
    QVERIFY(later->id() > reluId + 1);
    // Appending a node after relu: every use (incl. the graph output) moves to it, then it takes relu as input.
    g.replaceAllUsesWith(relu->output(0), later->output(0));
    g.setNodeInput(later, 0, relu->output(0));
    QVERIFY(g.outputs()[0] == later->output(0));
    QCOMPARE(relu->output(0)->uses().size(), size_t(1));
    QVERIFY(!relu->output(0)->isGraphOutput());
    QVERIFY(verifyModel(m).empty());
  }

  void eraseRefusesUsedOutputs() {
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2}));
    Node* a = g.addNode("Relu", {x}, 1, "a");
    g.addOutput(a->output(0));
    bool threw = false;
    try {
      g.eraseNode(a);
    } catch (const std::logic_error&) {
      threw = true;
    }
    QVERIFY(threw);
  }

  void topologicalOrderIsStableAndDetectsCycles() {
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2}));
    // Created out of order: b uses a's output but a is placed after b.
    Node* b = g.addNode("Relu", {}, 1, "b");
    Node* a = g.addNode("Neg", {x}, 1, "a");
    g.setNodeInput(b, 0, a->output(0));
    Node* c = g.addNode("Abs", {x}, 1, "c");
    g.addOutput(b->output(0));
    g.addOutput(c->output(0));
    auto order = g.topologicalOrder();
    QVERIFY(order);
    QCOMPARE(order->front(), a);
    QVERIFY(g.sortTopologically());
    QCOMPARE(*g.nodes().begin(), a);
    // Make a cycle a <- b.
    g.setNodeInput(a, 0, b->output(0));
    QVERIFY(!g.topologicalOrder());
    auto problems = verifyModel(m);
    QVERIFY(!problems.empty());
    QVERIFY(QString::fromStdString(problems[0]).contains("cycle"));
  }

  void subgraphCaptures() {
    Model m;
    Graph& g = *m.graph;
    Value* cond = g.addInput("cond", ValueType::tensor(DType::Bool, Shape()));
    Value* x = g.addInput("x", f32({3}));
    auto [iff, thenG, elseG, neg, abs] = addCapturingIf(g, cond, x);  // both bodies capture x
    g.addOutput(iff->output(0));
    QCOMPARE(x->uses().size(), size_t(2));
    QCOMPARE(thenG->owner(), iff);
    QCOMPARE(g.numNodesRecursive(), size_t(3));
    QVERIFY2(verifyModel(m).empty(), verifyModel(m).empty() ? "" : verifyModel(m)[0].c_str());
    // A capture of a value that is not visible is reported.
    Graph other(m.ids);
    Value* foreign = other.addInput("foreign", f32({3}));
    elseG->setNodeInput(abs, 0, foreign);
    auto problems = verifyModel(m);
    QVERIFY(!problems.empty());
    elseG->setNodeInput(abs, 0, x);
    // Any node of the model is found from the main graph in O(1), while its subgraph is attached.
    QCOMPARE(g.findNodeInTree(neg->id()), neg);
    QCOMPARE(g.findNodeInTree(iff->id()), iff);
    QCOMPARE(thenG->findNodeInTree(iff->id()), static_cast<Node*>(nullptr));  // not below `then`
    const NodeId negId = neg->id(), iffId = iff->id();
    // Erasing the If drops the captures' uses too; its bodies (still held here) are no longer in the model.
    g.setOutputs({});
    g.eraseNode(iff);
    QCOMPARE(x->uses().size(), size_t(0));
    QCOMPARE(g.findNodeInTree(iffId), static_cast<Node*>(nullptr));
    QCOMPARE(g.findNodeInTree(negId), static_cast<Node*>(nullptr));
    QCOMPARE(thenG->findNodeInTree(negId), neg);
  }

  // The node list's order keys: comesBefore agrees with the list through inserts at one spot (gaps run out and
  // the keys are renumbered), moves and a topological sort.
  void orderKeysFollowTheList() {
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2}));
    Node* first = g.addNode("Neg", {x}, 1, "first");
    Node* last = g.addNode("Abs", {first->output(0)}, 1, "last");
    for (int i = 0; i < 100; ++i) g.addNode("Relu", {first->output(0)}, 1, "r" + std::to_string(i), "", last);
    g.moveBefore(last, first);
    QVERIFY(g.sortTopologically());
    std::vector<Node*> list(g.nodes().begin(), g.nodes().end());
    for (size_t i = 0; i + 1 < list.size(); ++i) {
      QVERIFY(g.comesBefore(list[i], list[i + 1]));
      QVERIFY(!g.comesBefore(list[i + 1], list[i]));
    }
    Node* mid = list[50];
    Node* inserted = g.addNode("Relu", {x}, 1, "inserted", "", mid);
    QVERIFY(g.comesBefore(list[49], inserted) && g.comesBefore(inserted, mid));
  }

  // The pass manager's incremental verifier finds what the whole-graph verifier finds among changed nodes: a cycle
  // closed by one new edge (in a list that was a topological order, after a move, in a list that was never one,
  // and through a subgraph's capture), a type error after an annotation-only change, and nothing after no change.
  void annotationJournalLogsRealChanges() {
    Model m;
    Graph& g = *m.graph;
    Node* n = g.addNode("Relu", {g.addInput("x", f32({2}))}, 1, "relu");
    n->setAnnotation("engine", "aicore");  // no journal attached: nothing logged, nothing kept
    AnnotationJournal journal;
    g.ids().annotationJournal = &journal;
    n->setAnnotation("engine", "aicore");  // the same value: not a change
    n->setAnnotation("engine", "aicpu");
    n->setAnnotation("stream", "1");
    n->eraseAnnotation("stream");
    n->eraseAnnotation("absent");  // nothing to erase
    g.ids().annotationJournal = nullptr;
    n->setAnnotation("stream", "2");
    QCOMPARE(journal.size(), size_t(3));
    QCOMPARE(journal[0].node, n->id());
    QCOMPARE(journal[0].key, std::string("engine"));
    QCOMPARE(journal[0].before, std::optional<std::string>("aicore"));
    QCOMPARE(journal[0].after, std::optional<std::string>("aicpu"));
    QVERIFY(!journal[1].before && journal[1].after == std::optional<std::string>("1"));
    QVERIFY(journal[2].before == std::optional<std::string>("1") && !journal[2].after);
    QCOMPARE(n->annotation("engine"), std::string("aicpu"));
    QCOMPARE(n->annotation("stream"), std::string("2"));
  }

  void flatPtrMapAgreesWithUnorderedMap() {
    // Random inserts, overwrites, erases and lookups, against std::unordered_map, over keys that collide in their
    // low bits (array elements a few bytes apart) and across several growths.
    std::vector<int64_t> objects(5000);
    FlatPtrMap<const int64_t*, int> flat;
    std::unordered_map<const int64_t*, int> ref;
    uint64_t seed = 42;
    auto next = [&seed] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull; };
    for (int step = 0; step < 200000; ++step) {
      const int64_t* key = &objects[(next() >> 33) % objects.size()];
      switch ((next() >> 40) % 4) {
        case 0:
        case 1:
          flat[key] = step;
          ref[key] = step;
          break;
        case 2:
          QCOMPARE(flat.erase(key), ref.erase(key));
          break;
        default: {
          auto it = flat.find(key);
          auto r = ref.find(key);
          QCOMPARE(it == flat.end(), r == ref.end());
          if (r != ref.end()) QCOMPARE(it->second, r->second);
        }
      }
      QCOMPARE(flat.size(), ref.size());
    }
    size_t seen = 0;
    for (const auto& [k, v] : flat) {
      QCOMPARE(ref.at(k), v);
      ++seen;
    }
    QCOMPARE(seen, ref.size());
    QVERIFY(flat.try_emplace(&objects[0], -1).first->first == &objects[0]);
    QVERIFY(!flat.contains(nullptr));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, flat.at(&objects[0] + objects.size()));
  }

  void definitionRevisionIgnoresAnnotations() {
    // Observers skip a pass that only annotated (the verifier, the recorder's graph walk) by this one number.
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2}));
    Node* n = g.addNode("Relu", {x}, 1, "relu");
    const uint64_t defined = g.ids().definitionRevision;
    QCOMPARE(defined, g.ids().revision);
    n->setAnnotation("stream", "1");
    n->eraseAnnotation("stream");
    QCOMPARE(g.ids().definitionRevision, defined);
    QVERIFY(g.ids().revision > defined);
    n->setName("renamed");
    QCOMPARE(g.ids().definitionRevision, g.ids().revision);
    const uint64_t renamed = g.ids().definitionRevision;
    Node* dead = g.addNode("Abs", {x}, 1, "dead");
    QVERIFY(g.ids().definitionRevision > renamed);
    const uint64_t added = g.ids().definitionRevision;
    g.eraseNode(dead);
    QVERIFY(g.ids().definitionRevision > added);
  }

  void passVerifierFindsNewProblems() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({2}));
    Node* a = g.addNode("Neg", {x}, 1, "a");
    Node* b = g.addNode("Abs", {a->output(0)}, 1, "b");
    Node* c = g.addNode("Relu", {b->output(0)}, 1, "c");
    g.addOutput(c->output(0));
    IncrementalVerifier v;
    QVERIFY(v.check(m).empty());
    QVERIFY(v.check(m).empty());  // nothing changed
    auto hasCycle = [](const std::vector<std::string>& problems) {
      return std::any_of(problems.begin(), problems.end(),
                         [](const std::string& p) { return p.find("cycle") != std::string::npos; });
    };
    // Forward list, no move: the back edge c -> a is found from the changed node alone.
    g.setNodeInput(a, 0, c->output(0));
    QVERIFY(hasCycle(v.check(m)));
    g.setNodeInput(a, 0, x);
    QVERIFY(v.check(m).empty());
    // A move makes the next check sort the whole graph.
    g.moveBefore(c, a);
    QVERIFY(v.check(m).empty());  // acyclic, though no longer in list order
    g.setNodeInput(a, 0, c->output(0));
    QVERIFY(hasCycle(v.check(m)));
    g.setNodeInput(a, 0, x);
    QVERIFY(g.sortTopologically());
    QVERIFY(v.check(m).empty());
    // An annotation alone is not re-checked; a changed signature is.
    c->setAnnotation("engine", "aicore");
    QVERIFY(v.check(m).empty());
    Value* i64 = g.addInput("i", ValueType::tensor(DType::Int64, Shape::ofStatic({2})));
    c->output(0)->setType(f32({2}));
    QVERIFY(v.check(m).empty());
    Node* add = g.addNode("Add", {c->output(0), i64}, 1, "add");
    g.setOutputs({add->output(0)});
    QVERIFY(!v.check(m).empty());
    g.setNodeInput(add, 1, c->output(0));
    QVERIFY(v.check(m).empty());
    // A subgraph whose node captures the output of a node placed after the subgraph's owner.
    Value* cond = g.addInput("cond", ValueType::tensor(DType::Bool, Shape()));
    CapturingIf capturing = addCapturingIf(g, cond, x, a);
    QVERIFY(v.check(m).empty());
    // Legal: b does not depend on the If, it is only placed after it.
    capturing.elseG->setNodeInput(capturing.abs, 0, b->output(0));
    QVERIFY(v.check(m).empty());
    g.setNodeInput(a, 0, capturing.iff->output(0));  // now b depends on the If, which captures b: a cycle
    QVERIFY(hasCycle(v.check(m)));
    QVERIFY(hasCycle(verifyModel(m)));
    // A pass that replaces the graph (a fresh id source whose revisions are all low) gets it checked whole.
    auto fresh = std::make_unique<Graph>(std::make_shared<IdSource>());
    Value* f = fresh->addInput("f", f32({2}));
    Value* n64 = fresh->addInput("n", ValueType::tensor(DType::Int64, Shape::ofStatic({2})));
    fresh->addOutput(fresh->addNode("Add", {f, n64}, 1, "bad_add")->output(0));
    // The bodies go with their If (a body outliving the graph it captures from would dangle).
    capturing.thenG.reset();
    capturing.elseG.reset();
    m.graph = std::move(fresh);
    QVERIFY(!v.check(m).empty());
  }

  void verifierChecksTypeConstraints() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* a = g.addInput("a", f32({2}));
    Value* b = g.addInput("b", ValueType::tensor(DType::Int64, Shape::ofStatic({2})));
    Node* add = g.addNode("Add", {a, b}, 1, "add");
    g.addOutput(add->output(0));
    auto problems = verifyModel(m);
    QVERIFY(!problems.empty());
    QVERIFY(QString::fromStdString(problems[0]).contains("Add"));
    // Arity is checked too.
    g.setNodeInputs(add, {a});
    problems = verifyModel(m);
    QVERIFY(!problems.empty());
    QVERIFY(QString::fromStdString(problems[0]).contains("inputs"));
  }

  // An operand whose element type inference could not establish passes next to the file's fp32, but not next to an
  // fp16 operand of the same type variable: a precision change narrowed what it saw and left that one in fp32.
  void verifierRefusesUnknownNextToFp16() {
    Model m;
    m.opsets[""] = 17;
    Graph& g = *m.graph;
    Value* a = g.addInput("a", f32({2, 8}));
    Node* mystery = g.addNode("Mystery", {a}, 1, "mystery", "com.example");  // no inference: output type unknown
    Value* w = g.addInitializer("w", Tensor::fromVector(DType::Float, {8, 4}, std::vector<float>(32, 0.5f)));
    Node* mm = g.addNode("MatMul", {mystery->output(0), w}, 1, "mm");
    mm->output(0)->setType(f32({2, 4}));
    g.addOutput(mm->output(0));
    QVERIFY(verifyModel(m).empty());  // unknown next to fp32: as imported models often are
    Value* w16 = g.addInitializer("w16", convertTensor(Tensor::fromVector(DType::Float, {8, 4}, std::vector<float>(32, 0.5f)),
                                                    DType::Float16));
    g.setNodeInput(mm, 1, w16);
    auto problems = verifyModel(m);
    QCOMPARE(problems.size(), size_t(1));
    QVERIFY2(QString::fromStdString(problems[0]).contains("input 0 has an unknown element type but input 1 has "
                                                          "tensor(float16)"),
             problems[0].c_str());
    // The same with the unknown operand after the fp16 one.
    g.setNodeInputs(mm, {w16, mystery->output(0)});
    problems = verifyModel(m);
    QCOMPARE(problems.size(), size_t(1));
    QVERIFY2(QString::fromStdString(problems[0]).contains("input 1 has an unknown element type but input 0 has"),
             problems[0].c_str());
    g.setNodeInputs(mm, {mystery->output(0), w});
    QVERIFY(verifyModel(m).empty());
    // An fp16 output over an input of unknown type (Gather's data and output are both T).
    Node* gather = g.addNode("Gather", {mystery->output(0), g.addInitializer("i", Tensor::fromVector(
                                                                  DType::Int64, {1}, std::vector<int64_t>{0}))},
                             1, "gather");
    gather->output(0)->setType(ValueType::tensor(DType::Float16, Shape::ofStatic({1, 8})));
    g.addOutput(gather->output(0));
    problems = verifyModel(m);
    QCOMPARE(problems.size(), size_t(1));
    QVERIFY2(QString::fromStdString(problems[0]).contains("input 0 has an unknown element type but output 0 has"),
             problems[0].c_str());
  }

  void opRegistry() {
    const OpDef* conv = OpRegistry::global().find("", "Conv", 17);
    QVERIFY(conv);
    QCOMPARE(conv->unit, ComputeUnit::Cube);
    QCOMPARE(conv->inputNames, (std::vector<std::string>{"X", "W", "B"}));
    QCOMPARE(conv->sinceVersion, 11);
    QVERIFY(OpRegistry::global().find("", "Reshape", 17)->unit == ComputeUnit::Host);
    QVERIFY(OpRegistry::global().find("", "NonZero", 17)->unit == ComputeUnit::AiCpu);
    QVERIFY(!OpRegistry::global().find("com.microsoft", "Attention", 1));
    QVERIFY(OpRegistry::global().find("kiln", "TransData", 1));
    // An own op may not shadow a standard one.
    OpDef fake;
    fake.type = "Relu";
    QVERIFY(!OpRegistry::global().add(fake));

    // Cost: Conv 1×3×8×8 -> 1×4×8×8 with a 4×3×3×3 kernel = 2·256·27 FLOPs.
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", f32({1, 3, 8, 8}));
    Value* w = g.addInput("w", f32({4, 3, 3, 3}));
    Node* c = g.addNode("Conv", {x, w}, 1, "c");
    c->output(0)->setType(f32({1, 4, 8, 8}));
    const OpCost cost = OpRegistry::global().cost(*c, 17);
    QCOMPARE(cost.flops, 2.0 * 256 * 27);
    QCOMPARE(cost.bytesWritten, 256.0 * 4);

    // TransData infers the blocked physical shape.
    Node* td = g.addNode("TransData", {x}, 1, "td", "kiln");
    td->setAttr("dst_format", Attribute(std::string("NC1HWC0")));
    OpRegistry::global().find("kiln", "TransData", 1)->infer(*td);
    QCOMPARE(QString::fromStdString(td->output(0)->type().toString()), QString::fromUtf8("fp32[1×1×8×8×16] NC1HWC0"));
  }

  void json() {
    Json j = Json::parse(R"({"a": [1, 2.5, "x\u00e9", true, null], "b": {"c": -3}})");
    QCOMPARE(j.find("a")->asArray().size(), size_t(5));
    QCOMPARE(j.find("a")->asArray()[1].asDouble(), 2.5);
    QCOMPARE(QString::fromStdString(j.find("a")->asArray()[2].asString()), QString::fromUtf8("xé"));
    QCOMPARE(j.find("b")->find("c")->asInt(), int64_t(-3));
    QCOMPARE(Json::parse(j.dump()), j);
    QCOMPARE(Json::parse(j.dump(2)), j);
    for (const char* bad : {"{", "[1,]", "{\"a\":1,\"a\":2}", "tru", "\"abc", "[1] x", "{\"a\" 1}"}) {
      bool threw = false;
      try {
        Json::parse(bad);
      } catch (const JsonError&) {
        threw = true;
      }
      QVERIFY2(threw, bad);
    }
    // Depth is bounded.
    bool threw = false;
    try {
      Json::parse(std::string(100000, '['));
    } catch (const JsonError&) {
      threw = true;
    }
    QVERIFY(threw);
  }

  void units() {
    QCOMPARE(QString::fromStdString(withThousands(1234567)), QString("1,234,567"));
    QCOMPARE(QString::fromStdString(withThousands(-1000)), QString("-1,000"));
    QCOMPARE(QString::fromStdString(formatBytes(12.4 * 1024 * 1024)), QString("12.4 MiB"));
    QCOMPARE(QString::fromStdString(formatDuration(18.2e-6)), QString::fromUtf8("18.2 µs"));
  }
};

QTEST_GUILESS_MAIN(IrTest)
#include "test_ir.moc"
