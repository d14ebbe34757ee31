// Reference kernels of the activation, trigonometry, bit, indexing, scatter/gather, rearrangement and Unique families:
// small hand-computed cases per op with their edge cases (negative axes, ties, out-of-range indices that throw,
// element types an op does not take, which it declines).
#include <QtTest>
#include <cmath>
#include <cstring>
#include <limits>

#include "support/kernel_op.h"
#include "kernels/kernel.h"
#include "ir/graph.h"

using namespace kiln;
using namespace kiln::testing;

namespace {



using F = std::vector<float>;
using I = std::vector<int64_t>;

// Element-wise closeness for float results computed through libm.
bool near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-6f) {
  if (got.size() != want.size()) return false;
  for (size_t k = 0; k < got.size(); ++k)
    if (!(std::fabs(got[k] - want[k]) <= tol * std::max(1.0f, std::fabs(want[k])))) {
      qWarning("element %zu: got %.9g, expected %.9g", k, double(got[k]), double(want[k]));
      return false;
    }
  return true;
}

}  // namespace

class KernelOpsTest : public QObject {
  Q_OBJECT
 private slots:
  void activations() {
    const Tensor x = f32({4}, {-2, -0.5f, 0, 3});
    QCOMPARE(values<float>(Op("LeakyRelu").f("alpha", 0.1f).one({x})), (F{-0.2f, -0.05f, 0, 3}));
    QCOMPARE(values<float>(Op("LeakyRelu").one({x}))[0], -0.02f);  // default alpha 0.01
    QVERIFY(near(values<float>(Op("Elu").one({x})), F{std::expm1(-2.0f), std::expm1(-0.5f), 0, 3}));
    QVERIFY(near(values<float>(Op("Selu").f("alpha", 2).f("gamma", 3).one({x})),
                 F{3 * 2 * std::expm1(-2.0f), 3 * 2 * std::expm1(-0.5f), 0, 9}));
    QVERIFY(near(values<float>(Op("Celu").f("alpha", 2).one({x})),
                 F{2 * std::expm1(-1.0f), 2 * std::expm1(-0.25f), 0, 3}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Celu").f("alpha", 0).one({x}));
    QCOMPARE(values<float>(Op("HardSigmoid").one({f32({3}, {-10, 0, 1})})), (F{0, 0.5f, 0.7f}));
    QCOMPARE(values<float>(Op("HardSwish").one({f32({4}, {-4, 0, 3, 5})})), (F{0, 0, 3, 5}));
    QVERIFY(std::isnan(values<float>(Op("HardSigmoid").one({f32({1}, {std::numeric_limits<float>::quiet_NaN()})}))[0]));
    // Softplus must not overflow for large inputs: log(1 + e^100) = 100.
    QVERIFY(near(values<float>(Op("Softplus").one({f32({3}, {0, 100, -100})})), F{std::log(2.0f), 100, 0}));
    QCOMPARE(values<float>(Op("Softsign").one({f32({2}, {1, -3})})), (F{0.5f, -0.75f}));
    QVERIFY(near(values<float>(Op("Mish").one({f32({2}, {1, -1})})), F{0.86509836f, -0.30340144f}));
    QCOMPARE(values<float>(Op("ThresholdedRelu").f("alpha", 2).one({f32({3}, {1, 2, 3})})), (F{0, 0, 3}));
    QCOMPARE(values<float>(Op("Shrink").f("lambd", 1.5f).f("bias", 1).one({f32({5}, {-2, -1, 0, 1, 2})})),
             (F{-1, 0, 0, 0, 1}));
    QCOMPARE(values<int8_t>(Op("Shrink").f("lambd", 1).f("bias", 1).one({i8({3}, {-128, 1, 5})})),
             (std::vector<int8_t>{-127, 0, 4}));
    QVERIFY(Op("LeakyRelu").run({i32({1}, {1})}).empty());  // float-only: declined
    QVERIFY(Op("Elu").run({i64({1}, {1})}).empty());
  }

  void prelu() {
    // slope [2, 1] broadcasts to X [2, 3]: one slope per row.
    Tensor r = Op("PRelu").one({f32({2, 3}, {-1, 2, -3, -4, 5, -6}), f32({2, 1}, {0.5f, 2})});
    QCOMPARE(r.dims(), (Dims{2, 3}));
    QCOMPARE(values<float>(r), (F{-0.5f, 2, -1.5f, -8, 5, -12}));
    QCOMPARE(values<int32_t>(Op("PRelu").one({i32({2}, {-3, 3}), i32({1}, {2})})), (std::vector<int32_t>{-6, 3}));
    // The slope must broadcast to X's shape, not widen it.
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("PRelu").one({f32({2}, {1, 2}), f32({2, 2}, {1, 2, 3, 4})}));
    QVERIFY(Op("PRelu").run({boolean({1}, {1}), boolean({1}, {1})}).empty());
  }

  void clip() {
    const Tensor x = f32({4}, {-5, 0.5f, 2, 9});
    QCOMPARE(values<float>(Op("Clip").f("min", 0).f("max", 1).one({x})), (F{0, 0.5f, 1, 1}));  // opset 6
    QCOMPARE(values<float>(Op("Clip").one({x, f32({}, {0}), none()})), (F{0, 0.5f, 2, 9}));   // only min
    QCOMPARE(values<float>(Op("Clip").one({x, none(), f32({}, {1})})), (F{-5, 0.5f, 1, 1}));  // only max
    QCOMPARE(values<float>(Op("Clip").one({x})), (F{-5, 0.5f, 2, 9}));
    QCOMPARE(values<float>(Op("Clip").one({x, f32({}, {3}), f32({}, {1})})), (F{1, 1, 1, 1}));  // min > max: max
    QCOMPARE(values<int8_t>(Op("Clip").one({i8({3}, {-128, 0, 127}), i8({}, {-1}), i8({}, {100})})),
             (std::vector<int8_t>{-1, 0, 100}));
    QCOMPARE(values<int64_t>(Op("Clip").one({i64({2}, {INT64_MIN, INT64_MAX}), none(), i64({}, {7})})),
             (I{INT64_MIN, 7}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Clip").one({x, i64({}, {0})}));       // bound of another type
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Clip").one({x, f32({2}, {0, 1})}));   // not a scalar
    QVERIFY(Op("Clip").run({boolean({1}, {1})}).empty());
  }

  void dropout() {
    const Tensor x = f32({2}, {1, 2});
    QCOMPARE(values<float>(Op("Dropout").one({x})), (F{1, 2}));
    auto r = Op("Dropout", 2).run({x, f32({}, {0.3f})});
    QCOMPARE(r.size(), size_t{2});
    QCOMPARE(r[1].dtype(), DType::Bool);
    QCOMPARE(values<uint8_t>(r[1]), (std::vector<uint8_t>{1, 1}));
    // Training with ratio 0 is still the identity. With ratio > 0 the mask is NumPy's RandomState(seed) draw:
    // for seed 0 the first uniforms are 0.5488, 0.7152, 0.6028, 0.5449, 0.4237, so ratio 0.6 keeps the 2nd and 3rd
    // and scales them by 1 / 0.4.
    QCOMPARE(Op("Dropout").run({x, f32({}, {0}), boolean({}, {1})}).size(), size_t{1});
    const auto t = Op("Dropout", 2).i("seed", 0).run({f32({5}, {1, 2, 3, 4, 5}), f32({}, {0.6f}), boolean({}, {1})});
    QCOMPARE(t.size(), size_t{2});
    QCOMPARE(values<uint8_t>(t[1]), (std::vector<uint8_t>{0, 1, 1, 0, 0}));
    const float scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(0.6f)));  // the ratio is a float tensor
    QCOMPARE(values<float>(t[0]), (F{0, 2 * scale, 3 * scale, 0, 0}));
    // The same seed gives the same mask; the mask is independent of the values.
    QCOMPARE(values<uint8_t>(Op("Dropout", 2).i("seed", 0).run({f32({5}, {9, 9, 9, 9, 9}), f32({}, {0.6f}),
                                                                boolean({}, {1})})[1]),
             (std::vector<uint8_t>{0, 1, 1, 0, 0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Dropout").one({x, f32({}, {1.5f})}));
  }

  void trigonometry() {
    const float pi = 3.14159265358979f;
    QVERIFY(near(values<float>(Op("Sin").one({f32({2}, {0, pi / 2})})), F{0, 1}));
    QVERIFY(near(values<float>(Op("Cos").one({f32({2}, {0, pi})})), F{1, -1}));
    QVERIFY(near(values<float>(Op("Tan").one({f32({1}, {pi / 4})})), F{1}));
    QVERIFY(near(values<float>(Op("Asin").one({f32({1}, {1})})), F{pi / 2}));
    QVERIFY(near(values<float>(Op("Acos").one({f32({1}, {-1})})), F{pi}));
    QVERIFY(near(values<float>(Op("Atan").one({f32({1}, {1})})), F{pi / 4}));
    QVERIFY(near(values<float>(Op("Sinh").one({f32({1}, {1})})), F{1.17520119f}));
    QVERIFY(near(values<float>(Op("Cosh").one({f32({1}, {1})})), F{1.54308063f}));
    QVERIFY(near(values<float>(Op("Asinh").one({f32({1}, {1})})), F{0.88137359f}));
    QVERIFY(near(values<float>(Op("Acosh").one({f32({1}, {2})})), F{1.31695790f}));
    QVERIFY(near(values<float>(Op("Atanh").one({f32({1}, {0.5f})})), F{0.54930614f}));
    QVERIFY(std::isnan(values<float>(Op("Asin").one({f32({1}, {2})}))[0]));  // outside the domain: NaN
    QVERIFY(Op("Sin").run({i32({1}, {0})}).empty());
  }

  void signRoundClassify() {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    QCOMPARE(values<float>(Op("Sign").one({f32({3}, {-2, 0, 5})})), (F{-1, 0, 1}));
    QCOMPARE(values<int8_t>(Op("Sign").one({i8({3}, {-128, 0, 7})})), (std::vector<int8_t>{-1, 0, 1}));
    QCOMPARE(values<uint8_t>(Op("Sign").one({u8({2}, {0, 200})})), (std::vector<uint8_t>{0, 1}));
    // Round: halves go to the even neighbour, both signs.
    QCOMPARE(values<float>(Op("Round").one({f32({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, -2.6f})})),
             (F{0, 2, 2, -0, -2, -2, 2, -3}));
    QCOMPARE(values<double>(Op("Round").one({f64({2}, {4503599627370497.0, 1e300})})),
             (std::vector<double>{4503599627370497.0, 1e300}));
    QVERIFY(Op("Round").run({i32({1}, {1})}).empty());
    QCOMPARE(values<uint8_t>(Op("IsNaN").one({f32({3}, {nan, inf, 1})})), (std::vector<uint8_t>{1, 0, 0}));
    const Tensor x = f32({4}, {inf, -inf, nan, 1});
    QCOMPARE(values<uint8_t>(Op("IsInf").one({x})), (std::vector<uint8_t>{1, 1, 0, 0}));
    QCOMPARE(values<uint8_t>(Op("IsInf").i("detect_negative", 0).one({x})), (std::vector<uint8_t>{1, 0, 0, 0}));
    QCOMPARE(values<uint8_t>(Op("IsInf").i("detect_positive", 0).one({x})), (std::vector<uint8_t>{0, 1, 0, 0}));
    QVERIFY(Op("IsNaN").run({i32({1}, {1})}).empty());
  }

  void bits() {
    QCOMPARE(values<uint8_t>(Op("BitShift").s("direction", "LEFT").one({u8({3}, {1, 255, 3}), u8({3}, {7, 1, 8})})),
             (std::vector<uint8_t>{128, 254, 0}));  // a shift by the width gives 0
    QCOMPARE(values<uint8_t>(Op("BitShift").s("direction", "RIGHT").one({u8({2}, {128, 255}), u8({1}, {3})})),
             (std::vector<uint8_t>{16, 31}));
    // Wide types too (a plain C++ shift by >= the width would be undefined; on x86 it shifts modulo the width).
    const auto u64 = [](std::vector<uint64_t> v) { return Tensor::fromVector(DType::UInt64, {int64_t(v.size())}, v); };
    const auto u32 = [](std::vector<uint32_t> v) { return Tensor::fromVector(DType::UInt32, {int64_t(v.size())}, v); };
    QCOMPARE(values<uint64_t>(Op("BitShift").s("direction", "LEFT").one({u64({1, 1}), u64({63, 64})})),
             (std::vector<uint64_t>{uint64_t{1} << 63, 0}));
    QCOMPARE(values<uint32_t>(Op("BitShift").s("direction", "RIGHT").one({u32({5}), u32({32})})),
             (std::vector<uint32_t>{0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("BitShift").one({u8({1}, {1}), u8({1}, {1})}));
    QVERIFY(Op("BitShift").s("direction", "LEFT").run({i32({1}, {1}), i32({1}, {1})}).empty());  // unsigned only
    QCOMPARE(values<int8_t>(Op("BitwiseAnd").one({i8({2}, {12, -1}), i8({2}, {10, 5})})), (std::vector<int8_t>{8, 5}));
    QCOMPARE(values<int8_t>(Op("BitwiseOr").one({i8({2}, {12, -128}), i8({1}, {3})})),
             (std::vector<int8_t>{15, -125}));
    QCOMPARE(values<int8_t>(Op("BitwiseXor").one({i8({1}, {12}), i8({1}, {10})})), (std::vector<int8_t>{6}));
    QCOMPARE(values<uint8_t>(Op("BitwiseNot").one({u8({2}, {0, 15})})), (std::vector<uint8_t>{255, 240}));
    QVERIFY(Op("BitwiseNot").run({f32({1}, {1})}).empty());
  }

  void det() {
    QVERIFY(near(values<float>(Op("Det").one({f32({2, 2}, {1, 2, 3, 4})})), F{-2}));
    // Batched, with a row swap needed (zero pivot) and a singular matrix.
    Tensor r = Op("Det").one({f64({2, 3, 3}, {0, 1, 0, 1, 0, 0, 0, 0, 2, 1, 2, 3, 2, 4, 6, 0, 1, 1})});
    QCOMPARE(r.dims(), (Dims{2}));
    QCOMPARE(values<double>(r), (std::vector<double>{-2, 0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Det").one({f32({2, 3}, {1, 2, 3, 4, 5, 6})}));
    QVERIFY(Op("Det").run({i32({1, 1}, {1})}).empty());
  }

  void argMaxMin() {
    const Tensor x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
    QCOMPARE(values<int64_t>(Op("ArgMax").i("axis", 1).one({x})), (I{1, 0}));  // ties: first index
    QCOMPARE(values<int64_t>(Op("ArgMax").i("axis", -1).i("select_last_index", 1).one({x})), (I{2, 2}));
    Tensor r = Op("ArgMin").i("keepdims", 0).one({x});
    QCOMPARE(r.dims(), (Dims{3}));
    QCOMPARE(values<int64_t>(r), (I{0, 1, 0}));
    QCOMPARE(Op("ArgMin").i("axis", 1).one({x}).dims(), (Dims{2, 1}));
    QCOMPARE(values<int64_t>(Op("ArgMax").one({i32({3}, {-1, INT32_MAX, 0})})), (I{1}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ArgMax").i("axis", 2).one({x}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ArgMax").one({f32({0, 2}, {})}));
    QVERIFY(Op("ArgMax").run({boolean({2}, {0, 1})}).empty());
  }

  void topK() {
    const Tensor x = f32({2, 4}, {3, 1, 3, 2, 0, 9, -1, 9});
    auto r = Op("TopK", 2).run({x, i64({1}, {3})});
    QCOMPARE(r.size(), size_t{2});
    QCOMPARE(r[0].dims(), (Dims{2, 3}));
    QCOMPARE(values<float>(r[0]), (F{3, 3, 2, 9, 9, 0}));
    QCOMPARE(values<int64_t>(r[1]), (I{0, 2, 3, 1, 3, 0}));  // equal values keep index order
    r = Op("TopK", 2).i("largest", 0).i("axis", 0).run({x, i64({1}, {1})});
    QCOMPARE(values<float>(r[0]), (F{0, 1, -1, 2}));
    QCOMPARE(values<int64_t>(r[1]), (I{1, 0, 1, 0}));
    r = Op("TopK", 2).i("k", 2).run({i32({3}, {5, 7, 6})});  // opset 1: k attribute
    QCOMPARE(values<int32_t>(r[0]), (std::vector<int32_t>{7, 6}));
    QCOMPARE(Op("TopK", 2).run({x, i64({1}, {0})})[0].dims(), (Dims{2, 0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("TopK", 2).run({x, i64({1}, {5})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("TopK", 2).run({x, i64({1}, {-1})}));
    QVERIFY(Op("TopK", 2).run({boolean({2}, {0, 1}), i64({1}, {1})}).empty());
  }

  void nonZeroOneHot() {
    Tensor r = Op("NonZero").one({f32({2, 2}, {1, 0, 0, -2})});
    QCOMPARE(r.dims(), (Dims{2, 2}));
    QCOMPARE(values<int64_t>(r), (I{0, 1, 0, 1}));
    QCOMPARE(Op("NonZero").one({boolean({3}, {0, 0, 0})}).dims(), (Dims{1, 0}));

    // depth 3, on=5, off=0; -1 counts from the end, 3 is outside and gives an all-off row.
    r = Op("OneHot").one({i64({3}, {0, -1, 3}), i64({}, {3}), f32({2}, {0, 5})});
    QCOMPARE(r.dims(), (Dims{3, 3}));
    QCOMPARE(values<float>(r), (F{5, 0, 0, 0, 0, 5, 0, 0, 0}));
    r = Op("OneHot").i("axis", 0).one({f32({2}, {1.9f, 0}), f32({}, {2}), i32({2}, {-1, 1})});  // float indices
    QCOMPARE(r.dims(), (Dims{2, 2}));
    QCOMPARE(values<int32_t>(r), (std::vector<int32_t>{-1, 1, 1, -1}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("OneHot").one({i64({1}, {0}), i64({}, {0}), f32({2}, {0, 1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("OneHot").i("axis", 2).one({i64({1}, {0}), i64({}, {2}), f32({2}, {0, 1})}));
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge,
                             Op("OneHot").one({i64({4}, {0, 1, 2, 3}), i64({}, {INT64_MAX}), f32({2}, {0, 1})}));
  }

  void scatterElements() {
    const Tensor data = f32({2, 3}, {0, 0, 0, 0, 0, 0});
    Tensor r = Op("ScatterElements").i("axis", 1).one({data, i64({2, 2}, {2, -3, 1, 1}), f32({2, 2}, {1, 2, 3, 4})});
    QCOMPARE(values<float>(r), (F{2, 0, 1, 0, 4, 0}));  // duplicate index: the last write wins
    r = Op("ScatterElements").i("axis", 1).s("reduction", "add").one(
        {data, i64({2, 2}, {2, -3, 1, 1}), f32({2, 2}, {1, 2, 3, 4})});
    QCOMPARE(values<float>(r), (F{2, 0, 1, 0, 7, 0}));
    r = Op("ScatterElements").s("reduction", "mul").one({i32({2}, {3, 4}), i64({2}, {1, 1}), i32({2}, {2, 5})});
    QCOMPARE(values<int32_t>(r), (std::vector<int32_t>{3, 40}));
    r = Op("Scatter").one({boolean({3}, {0, 0, 0}), i32({1}, {2}), boolean({1}, {1})});  // deprecated alias, any type
    QCOMPARE(values<uint8_t>(r), (std::vector<uint8_t>{0, 0, 1}));
    QVERIFY(Op("ScatterElements").s("reduction", "add").run({boolean({1}, {0}), i32({1}, {0}), boolean({1}, {1})})
                .empty());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ScatterElements").one({data, i64({1, 1}, {2}), f32({1, 1}, {1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("ScatterElements").s("reduction", "avg").one(
                                 {data, i64({1, 1}, {0}), f32({1, 1}, {1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("ScatterElements").one({data, i64({1, 1}, {0}), f32({1, 2}, {1, 2})}));
  }

  void scatterGatherNd() {
    const Tensor data = i64({2, 2}, {1, 2, 3, 4});
    // k = 2 addresses elements, k = 1 rows.
    QCOMPARE(values<int64_t>(Op("ScatterND").one({data, i64({2, 2}, {0, 1, -1, 0}), i64({2}, {9, 8})})),
             (I{1, 9, 8, 4}));
    QCOMPARE(values<int64_t>(Op("ScatterND").s("reduction", "add").one(
                 {data, i64({2, 1}, {1, 1}), i64({2, 2}, {10, 20, 100, 200})})),
             (I{1, 2, 113, 224}));
    QCOMPARE(values<int64_t>(Op("ScatterND").s("reduction", "mul").one({data, i64({1, 1}, {0}), i64({1, 2}, {5, 6})})),
             (I{5, 12, 3, 4}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ScatterND").one({data, i64({1, 2}, {0, 2}), i64({1}, {9})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ScatterND").one({data, i64({1, 1}, {0}), i64({1}, {9})}));

    Tensor r = Op("GatherND").one({data, i64({2, 2}, {0, 0, 1, -1})});
    QCOMPARE(r.dims(), (Dims{2}));
    QCOMPARE(values<int64_t>(r), (I{1, 4}));
    r = Op("GatherND").one({data, i64({2, 1}, {1, 0})});
    QCOMPARE(r.dims(), (Dims{2, 2}));
    QCOMPARE(values<int64_t>(r), (I{3, 4, 1, 2}));
    // batch_dims 1: row b of indices reads from data[b].
    r = Op("GatherND").i("batch_dims", 1).one({data, i64({2, 1}, {1, 0})});
    QCOMPARE(values<int64_t>(r), (I{2, 3}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("GatherND").one({data, i64({1, 2}, {2, 0})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("GatherND").one({data, i64({1, 3}, {0, 0, 0})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("GatherND").i("batch_dims", 1).one({data, i64({3, 1}, {0, 0, 0})}));
  }

  void compressTrilu() {
    const Tensor x = i64({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor r = Op("Compress").i("axis", -1).one({x, boolean({2}, {0, 1})});  // shorter condition: rest dropped
    QCOMPARE(r.dims(), (Dims{2, 1}));
    QCOMPARE(values<int64_t>(r), (I{2, 5}));
    r = Op("Compress").one({x, boolean({6}, {1, 0, 0, 0, 0, 1})});  // no axis: flattened
    QCOMPARE(values<int64_t>(r), (I{1, 6}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Compress").i("axis", 0).one({x, boolean({3}, {0, 0, 1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Compress").one({x, i64({1}, {1})}));

    const Tensor m = i64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    QCOMPARE(values<int64_t>(Op("Trilu").one({m})), (I{1, 2, 3, 0, 5, 6, 0, 0, 9}));
    QCOMPARE(values<int64_t>(Op("Trilu").i("upper", 0).one({m, i64({}, {-1})})), (I{0, 0, 0, 4, 0, 0, 7, 8, 0}));
    QCOMPARE(values<int64_t>(Op("Trilu").one({m, i64({}, {INT64_MIN})})), (I{1, 2, 3, 4, 5, 6, 7, 8, 9}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Trilu").one({i64({2}, {1, 2})}));
  }

  void eyeLike() {
    Tensor r = Op("EyeLike").i("k", 1).one({f32({2, 3}, {9, 9, 9, 9, 9, 9})});
    QCOMPARE(values<float>(r), (F{0, 1, 0, 0, 0, 1}));
    r = Op("EyeLike").i("k", -1).i("dtype", int64_t{dtypeToOnnx(DType::Int32)}).one({f32({3, 2}, {0, 0, 0, 0, 0, 0})});
    QCOMPARE(r.dtype(), DType::Int32);
    QCOMPARE(values<int32_t>(r), (std::vector<int32_t>{0, 0, 1, 0, 0, 1}));
    QCOMPARE(values<float>(Op("EyeLike").i("k", INT64_MAX).one({f32({1, 1}, {5})})), (F{0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("EyeLike").one({f32({2}, {0, 0})}));
    QVERIFY(Op("EyeLike").i("dtype", int64_t{dtypeToOnnx(DType::String)}).run({f32({1, 1}, {0})}).empty());
  }

  void reverseSequence() {
    // time_axis 0, batch_axis 1: columns are sequences of lengths 3 and 1.
    const Tensor x = i64({3, 2}, {1, 2, 3, 4, 5, 6});
    QCOMPARE(values<int64_t>(Op("ReverseSequence").one({x, i64({2}, {3, 1})})), (I{5, 2, 3, 4, 1, 6}));
    Tensor r = Op("ReverseSequence").i("batch_axis", 0).i("time_axis", 1).one({x, i64({3}, {2, 0, 1})});
    QCOMPARE(values<int64_t>(r), (I{2, 1, 3, 4, 5, 6}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ReverseSequence").one({x, i64({2}, {4, 1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ReverseSequence").one({x, i64({3}, {1, 1, 1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ReverseSequence").i("batch_axis", 2).one({x, i64({2}, {1, 1})}));
  }

  void depthSpace() {
    // [1, 8, 1, 1]: channels 0..7 become 2 channels of a 2x2 image.
    std::vector<int64_t> ch(8);
    for (size_t k = 0; k < ch.size(); ++k) ch[k] = static_cast<int64_t>(k);
    const Tensor x = i64({1, 8, 1, 1}, ch);
    // DCR: channel = (bh * 2 + bw) * C' + c; CRD: channel = c * 4 + bh * 2 + bw.
    Tensor dcr = Op("DepthToSpace").i("blocksize", 2).one({x});
    QCOMPARE(dcr.dims(), (Dims{1, 2, 2, 2}));
    QCOMPARE(values<int64_t>(dcr), (I{0, 2, 4, 6, 1, 3, 5, 7}));
    Tensor crd = Op("DepthToSpace").i("blocksize", 2).s("mode", "CRD").one({x});
    QCOMPARE(values<int64_t>(crd), (I{0, 1, 2, 3, 4, 5, 6, 7}));
    // SpaceToDepth inverts DepthToSpace in DCR mode.
    Tensor back = Op("SpaceToDepth").i("blocksize", 2).one({dcr});
    QCOMPARE(back.dims(), (Dims{1, 8, 1, 1}));
    QCOMPARE(values<int64_t>(back), ch);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("DepthToSpace").i("blocksize", 3).one({x}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("DepthToSpace").i("blocksize", 2).s("mode", "XYZ").one({x}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("SpaceToDepth").i("blocksize", 2).one({x}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("SpaceToDepth").i("blocksize", 0).one({x}));
  }

  void unique() {
    const Tensor x = f32({6}, {2, 1, 1, 3, 4, 3});
    auto r = Op("Unique", 4).run({x});
    QCOMPARE(r.size(), size_t{4});
    QCOMPARE(values<float>(r[0]), (F{1, 2, 3, 4}));
    QCOMPARE(values<int64_t>(r[1]), (I{1, 0, 3, 4}));
    QCOMPARE(values<int64_t>(r[2]), (I{1, 0, 0, 2, 3, 2}));
    QCOMPARE(values<int64_t>(r[3]), (I{2, 1, 2, 1}));
    r = Op("Unique", 4).i("sorted", 0).run({x});
    QCOMPARE(values<float>(r[0]), (F{2, 1, 3, 4}));
    QCOMPARE(values<int64_t>(r[1]), (I{0, 1, 3, 4}));
    QCOMPARE(values<int64_t>(r[2]), (I{0, 1, 1, 2, 3, 2}));
    QCOMPARE(values<int64_t>(r[3]), (I{1, 2, 2, 1}));
    // Rows along axis 0 compared lexicographically; the negative axis -2 is the same.
    const Tensor m = i64({3, 2}, {1, 2, 0, 5, 1, 2});
    r = Op("Unique", 3).i("axis", -2).run({m});
    QCOMPARE(r.size(), size_t{3});
    QCOMPARE(r[0].dims(), (Dims{2, 2}));
    QCOMPARE(values<int64_t>(r[0]), (I{0, 5, 1, 2}));
    QCOMPARE(values<int64_t>(r[2]), (I{1, 0, 1}));
    // NaNs form one group at the end rather than breaking the sort.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    r = Op("Unique", 4).run({f32({3}, {nan, 1, nan})});
    QCOMPARE(r[0].numel(), int64_t{2});
    QCOMPARE(values<int64_t>(r[3]), (I{1, 2}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Unique").i("axis", 2).one({m}));
  }
  void einsum() {
    const Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor b = f32({3, 2}, {1, 0, 0, 1, 1, 1});
    Tensor r = Op("Einsum").s("equation", "ij,jk->ik").one({a, b});
    QCOMPARE(r.dims(), (Dims{2, 2}));
    QCOMPARE(values<float>(r), (F{4, 5, 10, 11}));
    // Implicit output: the letters used once, alphabetically ("ba" transposes, "ij,jk" is a matmul again).
    QCOMPARE(Op("Einsum").s("equation", "ba").one({a}).dims(), (Dims{3, 2}));
    QCOMPARE(values<float>(Op("Einsum").s("equation", "ba").one({a})), (F{1, 4, 2, 5, 3, 6}));
    QCOMPARE(values<float>(Op("Einsum").s("equation", "ij, jk").one({a, b})), (F{4, 5, 10, 11}));
    // Repeated letters: trace (implicit, nothing left) and diagonal (explicit).
    const Tensor m = i64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    r = Op("Einsum").s("equation", "ii").one({m});
    QVERIFY(r.dims().empty());
    QCOMPARE(values<int64_t>(r), (I{15}));
    QCOMPARE(values<int64_t>(Op("Einsum").s("equation", "ii->i").one({m})), (I{1, 5, 9}));
    QCOMPARE(values<int64_t>(Op("Einsum").s("equation", "ij->").one({m})), (I{45}));
    // Ellipsis: batch dims broadcast ([2, 1, 2] against [2]: the leading 2 of the first operand only).
    r = Op("Einsum").s("equation", "...i,...i->...").one({f32({2, 1, 2}, {1, 2, 3, 4}), f32({2}, {10, 1})});
    QCOMPARE(r.dims(), (Dims{2, 1}));
    QCOMPARE(values<float>(r), (F{12, 34}));
    r = Op("Einsum").s("equation", "bi...,bj...->bij...").one({f32({1, 2}, {1, 2}), f32({1, 2}, {3, 4})});
    QCOMPARE(values<float>(r), (F{3, 4, 6, 8}));  // outer product per batch, empty ellipsis
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Einsum").s("equation", "ij,jk->ik").one({a, a}));  // 3 vs 2
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Einsum").s("equation", "ij->iz").one({a}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Einsum").s("equation", "ij->ii").one({a}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Einsum").s("equation", "ijk").one({a}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Einsum").s("equation", "i.j").one({a}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Einsum").s("equation", "ij,jk").one({a}));
    QVERIFY(Op("Einsum").s("equation", "i->i").run({boolean({1}, {1})}).empty());
    // Too much work for a reference kernel: declined rather than run for hours.
    const Tensor big = f32({1024, 1024}, std::vector<float>(1024 * 1024, 1));
    QVERIFY(Op("Einsum").s("equation", "ij,kl->").run({big, big}).empty());
  }
  void maxUnpool() {
    // MaxPool 2x2 stride 2 over a 4x4 image picked flat positions 5, 7, 13, 15.
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor idx = i64({1, 1, 2, 2}, {5, 7, 13, 15});
    Tensor r = Op("MaxUnpool").ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).one({x, idx});
    QCOMPARE(r.dims(), (Dims{1, 1, 4, 4}));
    QCOMPARE(values<float>(r), (F{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
    // A larger output_shape pads at the end; the values keep their coordinates (3 at (3, 1), 4 at (3, 3)).
    r = Op("MaxUnpool").ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).one({x, idx, i64({4}, {1, 1, 5, 5})});
    QCOMPARE(r.dims(), (Dims{1, 1, 5, 5}));
    QCOMPARE(values<float>(r)[16], 3.0f);
    QCOMPARE(values<float>(r)[18], 4.0f);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("MaxUnpool").ints("kernel_shape", {2, 2}).ints("strides", {2, 2})
                                                     .one({x, idx, i64({4}, {1, 1, 3, 5})}));
    QCOMPARE(Op("MaxUnpool").ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).ints("pads", {1, 0, 1, 0})
                 .one({x, i64({1, 1, 2, 2}, {0, 1, 2, 3})}).dims(),
             (Dims{1, 1, 2, 4}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("MaxUnpool").ints("kernel_shape", {2, 2}).ints("strides", {2, 2})
                                                     .one({x, i64({1, 1, 2, 2}, {5, 7, 13, 16})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("MaxUnpool").ints("kernel_shape", {2}).one({x, idx}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("MaxUnpool").ints("kernel_shape", {1, 1}).ints("pads", {2, 0, 1, 0})
                                                     .one({x, idx}));
  }
  void hostileInputs() {
    // Extreme indices and attributes are refused or handled without overflow (run under ASan/UBSan too).
    QCOMPARE(values<float>(Op("OneHot").one({i64({1}, {INT64_MIN}), i64({}, {3}), f32({2}, {0, 1})})), (F{0, 0, 0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("GatherND").one({i64({2}, {1, 2}), i64({1}, {INT64_MIN})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("ScatterElements").one({i64({2}, {1, 2}), i64({1}, {INT64_MIN}), i64({1}, {0})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("DepthToSpace").i("blocksize", INT64_MAX).one({f32({1, 1, 1, 1}, {1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("MaxUnpool").ints("kernel_shape", {1}).ints("strides", {INT64_MAX}).one(
                                 {f32({1, 1, 3}, {1, 2, 3}), i64({1, 1, 3}, {0, 1, 2})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ReverseSequence").one({i64({2, 1}, {1, 2}), i64({1}, {-1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Einsum").one({f32({1}, {1})}));  // no equation
    QCOMPARE(values<float>(Op("Einsum").s("equation", ",->").one({f32({}, {3}), f32({}, {4})})), (F{12}));
    QCOMPARE(values<int64_t>(Op("Trilu").i("upper", 0).one({i64({1, 2}, {1, 2}), i64({}, {INT64_MAX})})), (I{1, 2}));
    // NaNs sort above every number (TopK largest puts them first) and do not break the ordering.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto r = Op("TopK", 2).run({f32({4}, {1, nan, 3, nan}), i64({1}, {3})});
    QCOMPARE(values<int64_t>(r[1]), (I{1, 3, 2}));
    QCOMPARE(values<int64_t>(Op("ArgMax").one({f32({3}, {1, nan, 2})})), (I{1}));
    r = Op("Unique", 4).run({i64({4}, {INT64_MAX, INT64_MIN, INT64_MAX, 0})});
    QCOMPARE(values<int64_t>(r[0]), (I{INT64_MIN, 0, INT64_MAX}));
    QCOMPARE(values<int64_t>(r[3]), (I{1, 1, 2}));
  }
};

QTEST_GUILESS_MAIN(KernelOpsTest)
#include "test_kernels_ops.moc"
