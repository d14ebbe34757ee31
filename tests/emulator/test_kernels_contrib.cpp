// ONNX Runtime's contrib ops (com.microsoft) against independent paths: each checked against the standard or Kiln
// kernels it stands for (Attention = MatMul + bias + Kiln's Attention with the mask as an additive term, SkipLayerNorm
// = Add + AddLayerNorm, EmbedLayerNorm = Gather + Add + LayerNormalization), RotaryEmbedding against hand-computed
// rotations.
#include <QtTest>
#include <cmath>

#include "support/kernel_op.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * float(i % 7) - 0.03f * float(i);
  return v;
}

void compareClose(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  QCOMPARE(got.dims(), want.dims());
  const auto g = got.toDouble(), w = want.toDouble();
  for (size_t i = 0; i < g.size(); ++i)
    if (std::abs(g[i] - w[i]) > tol * (1 + std::abs(w[i])))
      QFAIL(qPrintable(QString("element %1: %2 vs %3").arg(i).arg(g[i]).arg(w[i])));
}

Tensor columns(const Tensor& x, int64_t from, int64_t to) {
  return Op("Slice").one({x, i64({1}, {from}), i64({1}, {to}), i64({1}, {2})});
}

}  // namespace

class ContribKernelsTest : public QObject {
  Q_OBJECT
 private slots:
  void attentionIsProjectionThenScaledDotProduct() {
    const int64_t B = 2, S = 3, in = 4, hidden = 4, N = 2;
    const Tensor x = f32({B, S, in}, ramp(B * S * in, -0.5f, 0.2f));
    const Tensor w = f32({in, 3 * hidden}, ramp(in * 3 * hidden, -0.4f, 0.11f));
    const Tensor bias = f32({3 * hidden}, ramp(3 * hidden, -0.1f, 0.05f));
    const Tensor maskEnds = i32({B}, {3, 2});  // batch 1 sees only its first two keys
    const auto got = Op("Attention", 2, "com.microsoft").i("num_heads", N).run({x, w, bias, maskEnds});
    QCOMPARE(got.size(), size_t{2});
    // The same through the general kernels: x·W + bias, split into Q, K, V; the mask as -10000 on hidden keys.
    const Tensor qkv = Op("Add").one({Op("MatMul").one({x, w}), bias});
    const Tensor q = columns(qkv, 0, hidden), k = columns(qkv, hidden, 2 * hidden), v = columns(qkv, 2 * hidden, 3 * hidden);
    std::vector<float> additive(B * S);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < S; ++j) additive[size_t(b * S + j)] = j >= (b == 0 ? 3 : 2) ? -10000.0f : 0.0f;
    const Tensor mask = f32({B, 1, 1, S}, additive);
    const Tensor want = Op("Attention", 1, "kiln").i("num_heads", N).f("scale", float(1 / std::sqrt(2.0))).one({q, k, v, mask});
    compareClose(got[0], want);
    // present = [K; V] split into heads: [2, B, N, S, H]
    QCOMPARE(got[1].dims(), (Dims{2, B, N, S, hidden / N}));
    const auto present = got[1].toDouble();
    const auto kv = k.toDouble();
    QCOMPARE(present[size_t(((0 * B + 1) * N + 1) * S * 2 + 2 * 2 + 1)], kv[size_t((1 * S + 2) * hidden + 1 * 2 + 1)]);
  }

  void attentionCausalWithPast() {
    // One head: the past [2, B, 1, P, H] is K/V rows in front of the new ones; unidirectional hides later keys.
    const int64_t B = 1, S = 2, P = 2, hidden = 2;
    const Tensor x = f32({B, S, hidden}, {0.3f, -0.2f, 0.5f, 0.1f});
    const Tensor w = f32({hidden, 3 * hidden}, ramp(hidden * 3 * hidden, -0.3f, 0.17f));
    const Tensor past = f32({2, B, 1, P, hidden}, ramp(2 * P * hidden, 0.2f, -0.09f));
    const auto got = Op("Attention", 2, "com.microsoft").i("num_heads", 1).i("unidirectional", 1)
                         .run({x, w, none(), none(), past});
    const Tensor qkv = Op("MatMul").one({x, w});
    const auto pastV = past.toDouble();
    std::vector<float> pk(pastV.begin(), pastV.begin() + P * hidden), pv(pastV.begin() + P * hidden, pastV.end());
    const Tensor k = Op("Concat").i("axis", 1).one({f32({B, P, hidden}, pk), columns(qkv, hidden, 2 * hidden)});
    const Tensor v = Op("Concat").i("axis", 1).one({f32({B, P, hidden}, pv), columns(qkv, 2 * hidden, 3 * hidden)});
    // query i sees keys 0 .. P + i
    const Tensor mask = f32({1, 1, S, P + S}, {0, 0, 0, -10000, 0, 0, 0, 0});
    const Tensor want = Op("Attention", 1, "kiln").i("num_heads", 1).f("scale", float(1 / std::sqrt(2.0)))
                            .one({columns(qkv, 0, hidden), k, v, mask});
    compareClose(got[0], want);
    QCOMPARE(got[1].dims(), (Dims{2, B, 1, P + S, hidden}));
  }

  void multiHeadAttentionWithPastAndBias() {
    const int64_t B = 1, S = 2, P = 1, D = 2;
    const Tensor q = f32({B, S, D}, {0.1f, 0.4f, -0.3f, 0.2f});
    const Tensor k = f32({B, S, D}, {0.5f, -0.1f, 0.2f, 0.3f});
    const Tensor v = f32({B, S, D}, {1.0f, 2.0f, -1.0f, 0.5f});
    const Tensor pastK = f32({B, 1, P, D}, {0.7f, 0.1f});
    const Tensor pastV = f32({B, 1, P, D}, {3.0f, -2.0f});
    const Tensor attnBias = f32({1, 1, S, P + S}, {0.0f, 0.1f, -10000.0f, 0.2f, 0.0f, 0.0f});
    const auto got = Op("MultiHeadAttention", 3, "com.microsoft").i("num_heads", 1).f("scale", 0.5f)
                         .run({q, k, v, none(), none(), attnBias, pastK, pastV});
    QCOMPARE(got.size(), size_t{3});
    const Tensor kAll = Op("Concat").i("axis", 1).one({f32({B, P, D}, {0.7f, 0.1f}), k});
    const Tensor vAll = Op("Concat").i("axis", 1).one({f32({B, P, D}, {3.0f, -2.0f}), v});
    const Tensor want = Op("Attention", 1, "kiln").i("num_heads", 1).f("scale", 0.5f).one({q, kAll, vAll, attnBias});
    compareClose(got[0], want);
    QCOMPARE(got[1].dims(), (Dims{B, 1, P + S, D}));
    QCOMPARE(got[2].toDouble()[0], 3.0);
  }

  void rotaryEmbeddingRotatesHalvesOrPairs() {
    // One head of 4: pairs (x0, x2), (x1, x3) rotate by the angles of position 1 (cache row 1).
    const Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
    const float c0 = 0.6f, s0 = 0.8f, c1 = 0.0f, s1 = 1.0f;
    const Tensor cosCache = f32({2, 2}, {1, 1, c0, c1});
    const Tensor sinCache = f32({2, 2}, {0, 0, s0, s1});
    const Tensor pos = i64({1, 1}, {1});
    Tensor y = Op("RotaryEmbedding", 1, "com.microsoft").one({x, pos, cosCache, sinCache});
    compareClose(y, f32({1, 1, 4}, {1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1}));
    y = Op("RotaryEmbedding", 1, "com.microsoft").i("interleaved", 1).one({x, pos, cosCache, sinCache});
    compareClose(y, f32({1, 1, 4}, {1 * c0 - 2 * s0, 2 * c0 + 1 * s0, 3 * c1 - 4 * s1, 4 * c1 + 3 * s1}));
    // A scalar position id is an offset: token t sits at offset + t (here row 0: identity).
    y = Op("RotaryEmbedding", 1, "com.microsoft").one({x, i64({1}, {0}), cosCache, sinCache});
    compareClose(y, x);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("RotaryEmbedding", 1, "com.microsoft").one({x, i64({1, 1}, {5}), cosCache, sinCache}));
  }

  void skipLayerNormIsAddThenLayerNorm() {
    const Tensor x = f32({2, 4}, ramp(8, -1.0f, 0.4f));
    const Tensor skip = f32({2, 4}, ramp(8, 0.5f, -0.2f));
    const Tensor gamma = f32({4}, {1.0f, 0.5f, 2.0f, -1.0f});
    const Tensor beta = f32({4}, {0.0f, 0.1f, 0.2f, 0.3f});
    const Tensor bias = f32({4}, {0.05f, -0.05f, 0.1f, 0.0f});
    const auto got = Op("SkipLayerNormalization", 4, "com.microsoft").f("epsilon", 1e-5f).run({x, skip, gamma, beta, bias});
    QCOMPARE(got.size(), size_t{4});
    const Tensor sum = Op("Add").one({Op("Add").one({x, bias}), skip});
    compareClose(got[0], Op("LayerNormalization").f("epsilon", 1e-5f).one({sum, gamma, beta}));
    compareClose(got[3], sum);
    QCOMPARE(got[1].dims(), (Dims{2, 1}));
    // The RMS form: no centring, no beta.
    const auto rms = Op("SkipSimplifiedLayerNormalization", 4, "com.microsoft").f("epsilon", 1e-5f).run({x, skip, gamma});
    compareClose(rms[0], Op("RmsNorm", 1, "kiln").f("epsilon", 1e-5f).one({Op("Add").one({x, skip}), gamma}));
    compareClose(Op("SimplifiedLayerNormalization").f("epsilon", 1e-5f).one({x, gamma}),
                 Op("RmsNorm", 1, "kiln").f("epsilon", 1e-5f).one({x, gamma}));
  }

  void normsRoundTheDoubleResultOnce() {
    // Kiln's norms compute in double and round once: fp32 and fp16 rows (a faster path for them) must give the bits
    // of the same norm run on fp64 operands and rounded to the type, whatever the addend's broadcast.
    for (const DType type : {DType::Float, DType::Float16}) {
      const auto narrow = [&](const Tensor& t) { return convertTensor(t, type); };
      const auto wide = [](const Tensor& t) { return t.valid() ? convertTensor(t, DType::Double) : t; };
      const auto same = [&](const Tensor& got, const Tensor& fromDouble) {
        const Tensor want = convertTensor(fromDouble, type);
        QCOMPARE(got.dtype(), type);
        QCOMPARE(got.dims(), want.dims());
        QVERIFY(std::equal(got.bytes().begin(), got.bytes().end(), want.bytes().begin(), want.bytes().end()));
      };
      const Tensor a = narrow(f32({2, 3, 8}, ramp(48, -1.5f, 0.37f)));
      const Tensor gamma = narrow(f32({8}, ramp(8, 0.5f, 0.21f)));
      const Tensor beta = narrow(f32({8}, ramp(8, -0.2f, 0.05f)));
      for (const Dims& addendDims : {Dims{2, 3, 8}, Dims{8}, Dims{1, 8}, Dims{3, 8}, Dims{2, 1, 8}}) {
        int64_t numel = 1;
        for (int64_t d : addendDims) numel *= d;
        const Tensor addend = narrow(f32(addendDims, ramp(size_t(numel), 0.3f, -0.11f)));
        for (const char* op : {"AddLayerNorm", "AddRmsNorm"}) {
          const bool centred = std::string(op) == "AddLayerNorm";
          std::vector<Tensor> in{a, addend, gamma}, fromDouble{wide(a), wide(addend), wide(gamma)};
          if (centred) {
            in.push_back(beta);
            fromDouble.push_back(wide(beta));
          }
          const auto got = Op(op, 2, "kiln").f("epsilon", 1e-5f).run(in);
          const auto want = Op(op, 2, "kiln").f("epsilon", 1e-5f).run(fromDouble);
          QCOMPARE(got.size(), size_t{2});
          same(got[0], want[0]);
          same(got[1], want[1]);  // the sum, rounded as stored
        }
      }
      // Rows over the last two axes, and no scale or bias at all.
      const Tensor g24 = narrow(f32({3, 8}, ramp(24, 0.9f, -0.03f)));
      same(Op("LayerNorm", 1, "kiln").i("axis", -2).f("epsilon", 1e-5f).one({a, g24, none()}),
           Op("LayerNorm", 1, "kiln").i("axis", -2).f("epsilon", 1e-5f).one({wide(a), wide(g24), none()}));
      same(Op("RmsNorm", 1, "kiln").f("epsilon", 1e-5f).one({a}),
           Op("RmsNorm", 1, "kiln").f("epsilon", 1e-5f).one({wide(a)}));
    }
  }

  void embedLayerNormIsGatherAddLayerNorm() {
    const Tensor ids = i32({1, 3}, {2, 0, 1});
    const Tensor segIds = i32({1, 3}, {0, 1, 1});
    const Tensor words = f32({3, 4}, ramp(12, -0.6f, 0.3f));
    const Tensor positions = f32({5, 4}, ramp(20, 0.2f, -0.1f));
    const Tensor segments = f32({2, 4}, ramp(8, 0.1f, 0.2f));
    const Tensor gamma = f32({4}, {1, 2, 1, 0.5f});
    const Tensor beta = f32({4}, {0, 0.1f, 0, -0.1f});
    const Tensor mask = i32({1, 3}, {1, 1, 0});
    const auto got = Op("EmbedLayerNormalization", 3, "com.microsoft").f("epsilon", 1e-5f)
                         .run({ids, segIds, words, positions, segments, gamma, beta, mask});
    QCOMPARE(got.size(), size_t{3});
    const Tensor pos = Op("Gather").one({positions, i64({1, 3}, {0, 1, 2})});
    const Tensor sum = Op("Add").one({Op("Add").one({Op("Gather").one({words, ids}), pos}),
                                      Op("Gather").one({segments, segIds})});
    compareClose(got[0], Op("LayerNormalization").f("epsilon", 1e-5f).one({sum, gamma, beta}));
    QCOMPARE(values<int32_t>(got[1]), std::vector<int32_t>{2});
    compareClose(got[2], sum);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("EmbedLayerNormalization", 2, "com.microsoft")
                                                     .one({i32({1, 1}, {9}), none(), words, positions, none(), gamma, beta}));
  }

  void geluForms() {
    const Tensor x = f32({3}, {-1.0f, 0.5f, 2.0f});
    const Tensor b = f32({3}, {0.1f, 0.2f, 0.3f});
    // erf form: 0.5·x·(1 + erf(x/√2)) at x = 2 is 1.9544997...
    QCOMPARE(std::round(Op("Gelu", 1, "com.microsoft").one({x}).toDouble()[2] * 1e6), 1954500.0);
    compareClose(Op("BiasGelu", 1, "com.microsoft").one({x, b}),
                 Op("Gelu", 1, "com.microsoft").one({Op("Add").one({x, b})}));
    compareClose(Op("FastGelu", 1, "com.microsoft").one({x, b}),
                 Op("Gelu", 1, "kiln").s("approximate", "tanh").one({Op("Add").one({x, b})}));
    QVERIFY(Op("FastGelu", 1, "com.microsoft").one({x}).toDouble()[0] != Op("Gelu", 1, "com.microsoft").one({x}).toDouble()[0]);
  }
};

QTEST_GUILESS_MAIN(ContribKernelsTest)
#include "test_kernels_contrib.moc"
