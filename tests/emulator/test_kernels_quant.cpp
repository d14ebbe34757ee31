// Reference kernels of the quantization family (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear) and the
// integer products (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv): hand-computed cases for rounding ties
// (half to even), saturation, per-axis scales, zero points, malformed nodes that throw and types that are declined.
#include <QtTest>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel.h"
#include "support/kernel_op.h"
#include "ir/graph.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

using F = std::vector<float>;
using I = std::vector<int64_t>;

}  // namespace

using U8 = std::vector<uint8_t>;
using S8 = std::vector<int8_t>;
using I32 = std::vector<int32_t>;

class KernelQuantTest : public QObject {
  Q_OBJECT
 private slots:
  void quantizeTiesAndSaturation() {
    // x / 1 with ties: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2; zero point 10; 300 and -300 saturate.
    const Tensor x = f32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300, -300});
    QCOMPARE(values<uint8_t>(Op("QuantizeLinear").one({x, f32({}, {1}), u8({}, {10})})),
             (U8{10, 12, 12, 10, 8, 255, 0}));
    QCOMPARE(values<int8_t>(Op("QuantizeLinear").one({x, f32({}, {1}), i8({}, {-1})})),
             (S8{-1, 1, 1, -1, -3, 127, -128}));
    // No zero point: uint8 with zero point 0; scale 2 makes 3 -> 1.5 -> 2 and 5 -> 2.5 -> 2.
    Tensor r = Op("QuantizeLinear").one({f32({2, 2}, {3, 5, -4, 511}), f32({}, {2})});
    QCOMPARE(r.dtype(), DType::UInt8);
    QCOMPARE(values<uint8_t>(r), (U8{2, 2, 0, 255}));
  }

  void quantizePerAxis() {
    // X [2, 3], axis 1: scales {1, 2, 4}, zero points {0, 10, 20}.
    const Tensor x = f32({2, 3}, {1, 2, 4, -1, 6, 10});
    const Tensor s = f32({3}, {1, 2, 4});
    QCOMPARE(values<uint8_t>(Op("QuantizeLinear").one({x, s, u8({3}, {0, 10, 20})})), (U8{1, 11, 21, 0, 13, 22}));
    // axis 0 (scales per row), negative axis -2 means the same.
    const Tensor s0 = f32({2}, {1, 10});
    QCOMPARE(values<int8_t>(Op("QuantizeLinear").i("axis", -2).one({x, s0, i8({2}, {0, 0})})), (S8{1, 2, 4, 0, 1, 1}));
    // Blocked: block_size 2 along axis 1 of [1, 4]: scales [1, 2] apply to columns {0,1} and {2,3}.
    QCOMPARE(values<uint8_t>(Op("QuantizeLinear").i("axis", 1).i("block_size", 2).one(
                 {f32({1, 4}, {3, 3, 3, 5}), f32({1, 2}, {1, 2}), u8({1, 2}, {0, 0})})),
             (U8{3, 3, 2, 2}));
    // Scale of the wrong extent, axis out of range, zero point of another shape: malformed.
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("QuantizeLinear").one({x, f32({2}, {1, 1}), u8({2}, {0, 0})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("QuantizeLinear").i("axis", 2).one({x, s, u8({3}, {0, 0, 0})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("QuantizeLinear").one({x, s, u8({}, {0})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("QuantizeLinear").i("block_size", -1).one({x, s}));
    // Scale of another type than X: malformed; an int64 zero point (output type) is not implemented: declined.
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("QuantizeLinear").one({x, f64({}, {1})}));
    QVERIFY(Op("QuantizeLinear").run({x, f32({}, {1}), i64({}, {0})}).empty());
  }

  void dequantize() {
    // (x - zp) * scale, per tensor.
    QCOMPARE(values<float>(Op("DequantizeLinear").one({u8({4}, {0, 3, 128, 255}), f32({}, {0.5f}), u8({}, {128})})),
             (F{-64, -62.5f, 0, 63.5f}));
    // Per axis 1 with int8 and zero points.
    QCOMPARE(values<float>(Op("DequantizeLinear").one({i8({2, 2}, {-128, 127, 1, 2}), f32({2}, {1, 0.25f}),
                                                        i8({2}, {-128, 3})})),
             (F{0, 31, 129, -0.25f}));
    // int32 input, zero point absent; a non-zero int32 zero point is malformed.
    QCOMPARE(values<float>(Op("DequantizeLinear").one({i32({2}, {-2000000000, 7}), f32({}, {0.5f})})),
             (F{-1000000000, 3.5f}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("DequantizeLinear").one({i32({1}, {1}), f32({}, {1}), i32({}, {1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("DequantizeLinear").one({u8({1}, {1}), f32({}, {1}), i8({}, {1})}));
    // A float input is not quantized data: declined.
    QVERIFY(Op("DequantizeLinear").run({f32({1}, {1}), f32({}, {1})}).empty());
    // Round trip through QuantizeLinear.
    const Tensor q = Op("QuantizeLinear").one({f32({3}, {-1, 0, 2.5f}), f32({}, {0.5f}), i8({}, {0})});
    QCOMPARE(values<float>(Op("DequantizeLinear").one({q, f32({}, {0.5f}), i8({}, {0})})), (F{-1, 0, 2.5f}));
  }

  void dynamicQuantize() {
    // min -1, max 2.5 (0 inside): scale 3.5/255, zero point round(1/scale) = round(72.857) = 73.
    auto out = Op("DynamicQuantizeLinear", 3).run({f32({3}, {-1, 0, 2.5f})});
    QCOMPARE(out.size(), size_t{3});
    const float scale = 3.5f / 255.0f;
    QCOMPARE(values<float>(out[1])[0], scale);
    QCOMPARE(values<uint8_t>(out[2])[0], uint8_t{73});
    QCOMPARE(values<uint8_t>(out[0]), (U8{0, 73, 255}));
    // Only positive values: range [0, max], zero point 0.
    out = Op("DynamicQuantizeLinear", 3).run({f32({2}, {0.5f, 2})});
    QCOMPARE(values<uint8_t>(out[2])[0], uint8_t{0});
    QCOMPARE(values<uint8_t>(out[0]), (U8{64, 255}));  // 0.5 / (2/255) = 63.75
    // All zeros: no division by zero.
    out = Op("DynamicQuantizeLinear", 3).run({f32({2}, {0, 0})});
    QCOMPARE(values<uint8_t>(out[0]), (U8{0, 0}));
    QVERIFY(Op("DynamicQuantizeLinear", 3).run({f64({1}, {1})}).empty());
  }

  void matMulInteger() {
    // A [2, 2] uint8 with per-row zero points {1, 2}; B [2, 2] uint8 with scalar zero point 3.
    const Tensor a = u8({2, 2}, {1, 2, 3, 4});  // centered: {0, 1, 1, 2}
    const Tensor b = u8({2, 2}, {3, 4, 5, 6});  // centered: {0, 1, 2, 3}
    Tensor r = Op("MatMulInteger").one({a, b, u8({2}, {1, 2}), u8({}, {3})});
    QCOMPARE(r.dtype(), DType::Int32);
    QCOMPARE(values<int32_t>(r), (I32{2, 3, 4, 7}));
    // No zero points, int8 x uint8 with extremes: -128 * 255 * 2.
    QCOMPARE(values<int32_t>(Op("MatMulInteger").one({i8({1, 2}, {-128, -128}), u8({2, 1}, {255, 255})})),
             (I32{-65280}));
    // Per-column zero point of B {0, 1}.
    QCOMPARE(values<int32_t>(Op("MatMulInteger").one({u8({1, 2}, {1, 1}), u8({2, 2}, {1, 1, 1, 1}), none(),
                                                       u8({2}, {0, 1})})),
             (I32{2, 0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("MatMulInteger").one({a, b, u8({3}, {1, 2, 3}), none()}));  // 3 rows? A has 2
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("MatMulInteger").one({a, b, i8({}, {0})}));  // zp type differs
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("MatMulInteger").one({a, u8({3, 1}, {1, 2, 3})}));
    QVERIFY(Op("MatMulInteger").run({i32({1, 1}, {1}), i32({1, 1}, {1})}).empty());
  }

  void qLinearMatMul() {
    // acc = [1 2] . [3 4]^T = 11; multiplier 0.5 * 1 / 1 -> 5.5 -> 6 (tie to even), + zp 1 = 7.
    const Tensor a = u8({1, 2}, {1, 2});
    const Tensor b = u8({2, 1}, {3, 4});
    const Tensor one = f32({}, {1});
    QCOMPARE(values<uint8_t>(Op("QLinearMatMul").one({a, f32({}, {0.5f}), u8({}, {0}), b, one, u8({}, {0}), one,
                                                       u8({}, {1})})),
             (U8{7}));
    // acc 13 (a zero point 0, b = {3, 5}): 6.5 -> 6.
    QCOMPARE(values<uint8_t>(Op("QLinearMatMul").one({a, f32({}, {0.5f}), u8({}, {0}), u8({2, 1}, {3, 5}), one,
                                                       u8({}, {0}), one, u8({}, {0})})),
             (U8{6}));
    // Saturation to int8 and per-column B scales {1, 100}.
    QCOMPARE(values<int8_t>(Op("QLinearMatMul").one({a, one, u8({}, {0}), u8({2, 2}, {1, 1, 1, 1}),
                                                      f32({2}, {1, 100}), u8({}, {0}), one, i8({}, {-5})})),
             (S8{-2, 127}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("QLinearMatMul").one({a, one, u8({}, {0}), b, one, u8({}, {0}), f32({2}, {1, 1}),
                                                      u8({}, {0})}));
    QVERIFY(Op("QLinearMatMul").run({a, f64({}, {1}), u8({}, {0}), b, one, u8({}, {0}), one, u8({}, {0})}).empty());
  }

  void convInteger() {
    // X [1, 1, 2, 2] uint8 zp 1, W [2, 1, 1, 1] zp per channel {0, 2}: channel 0 = (x - 1) * 3, channel 1 = (x-1)*1.
    const Tensor x = u8({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor w = u8({2, 1, 1, 1}, {3, 3});
    Tensor r = Op("ConvInteger").one({x, w, u8({}, {1}), u8({2}, {0, 2})});
    QCOMPARE(r.dims(), (Dims{1, 2, 2, 2}));
    QCOMPARE(values<int32_t>(r), (I32{0, 3, 6, 9, 0, 1, 2, 3}));
    // 2x2 kernel with padding: padded positions contribute zero after the zero point.
    Tensor p = Op("ConvInteger").ints("pads", {1, 1, 0, 0}).one({x, u8({1, 1, 2, 2}, {1, 1, 1, 1}), u8({}, {1})});
    QCOMPARE(p.dims(), (Dims{1, 1, 2, 2}));
    QCOMPARE(values<int32_t>(p), (I32{0, 1, 2, 6}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ConvInteger").one({x, w, u8({2}, {1, 1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ConvInteger").one({x, w, none(), u8({3}, {0, 0, 0})}));
    QVERIFY(Op("ConvInteger").run({f32({1, 1, 1, 1}, {1}), f32({1, 1, 1, 1}, {1})}).empty());
  }

  void qLinearConv() {
    // 1x1 conv, x scale 0.5, per-channel w scales {1, 2}, y scale 1, bias {1, 0}: acc * 0.5 * ws.
    const Tensor x = u8({1, 1, 1, 3}, {1, 2, 3});
    const Tensor w = i8({2, 1, 1, 1}, {1, 1});
    Tensor r = Op("QLinearConv").one({x, f32({}, {0.5f}), u8({}, {0}), w, f32({2}, {1, 2}), i8({}, {0}),
                                      f32({}, {1}), u8({}, {0}), i32({2}, {0, 1})});
    // channel 0: {0.5, 1, 1.5} -> {0, 1, 2}; channel 1: (x + 1) * 1 = {2, 3, 4}.
    QCOMPARE(values<uint8_t>(r), (U8{0, 1, 2, 2, 3, 4}));
    // Saturation at both ends to int8.
    QCOMPARE(values<int8_t>(Op("QLinearConv").one({u8({1, 1, 1, 2}, {0, 255}), f32({}, {1}), u8({}, {100}),
                                                    i8({1, 1, 1, 1}, {-128}), f32({}, {1}), i8({}, {0}), f32({}, {1}),
                                                    i8({}, {0})})),
             (S8{127, -128}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("QLinearConv").one({x, f32({2}, {1, 1}), u8({}, {0}), w, f32({}, {1}), i8({}, {0}),
                                                    f32({}, {1}), u8({}, {0})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("QLinearConv").one({x, f32({}, {1}), u8({}, {0}), w, f32({}, {1}), i8({}, {0}),
                                                    f32({}, {1}), u8({}, {0}), i64({2}, {0, 0})}));
  }
  void nonMaxSuppression() {
    // Boxes [1, 4, 4] as [y1, x1, y2, x2]: box 1 overlaps box 0 (IoU 0.81 > 0.5), box 2 is apart, box 3 has the
    // corners swapped and equals box 2 (suppressed by it). Scores per class.
    const Tensor boxes = f32({1, 4, 4}, {0, 0, 10, 10, 0, 0, 9, 9, 20, 20, 30, 30, 30, 30, 20, 20});
    const Tensor scores = f32({1, 2, 4}, {0.9f, 0.95f, 0.5f, 0.4f, 0.1f, 0.2f, 0.3f, 0.05f});
    const Tensor iou = f32({}, {0.5f});
    Tensor r = Op("NonMaxSuppression").one({boxes, scores, i64({}, {10}), iou, f32({}, {0.15f})});
    QCOMPARE(r.dims(), (Dims{4, 3}));
    // class 0: 1 (0.95) keeps, 0 suppressed, 2 keeps, 3 suppressed by 2; class 1: above 0.15 only 2 then 1.
    QCOMPARE(values<int64_t>(r), (I{0, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 1}));
    // max 1 per class, no score threshold.
    QCOMPARE(values<int64_t>(Op("NonMaxSuppression").one({boxes, scores, i64({}, {1}), iou})), (I{0, 0, 1, 0, 1, 2}));
    // No max given: nothing is selected.
    QCOMPARE(Op("NonMaxSuppression").one({boxes, scores}).dims(), (Dims{0, 3}));
    // center_point_box 1: [xc, yc, w, h]; two identical boxes, threshold 0.5 keeps the higher score only.
    QCOMPARE(values<int64_t>(Op("NonMaxSuppression").i("center_point_box", 1).one(
                 {f32({1, 2, 4}, {5, 5, 10, 10, 5, 5, 10, 10}), f32({1, 1, 2}, {0.1f, 0.2f}), i64({}, {5}), iou})),
             (I{0, 0, 1}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("NonMaxSuppression").one({f32({1, 4, 3}, F(12, 0)), scores}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("NonMaxSuppression").i("center_point_box", 2).one({boxes, scores}));
    QVERIFY(Op("NonMaxSuppression").run({f64({1, 1, 4}, {0, 0, 1, 1}), f64({1, 1, 1}, {1})}).empty());
  }
  void roiAlign() {
    // X [1, 1, 2, 2] = {1, 2, 3, 4}, roi [0, 0, 1, 1], one sample per bin.
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor roi = f32({1, 4}, {0, 0, 1, 1});
    const Tensor idx = i64({1}, {0});
    // output_half_pixel: sample at (0.5, 0.5) -> bilinear 2.5; max mode: largest weighted corner 0.25 * 4 = 1.
    QCOMPARE(values<float>(Op("RoiAlign").s("coordinate_transformation_mode", "output_half_pixel")
                               .i("sampling_ratio", 1)
                               .one({x, roi, idx})),
             (F{2.5f}));
    QCOMPARE(values<float>(Op("RoiAlign").s("coordinate_transformation_mode", "output_half_pixel")
                               .s("mode", "max")
                               .i("sampling_ratio", 1)
                               .one({x, roi, idx})),
             (F{1.0f}));
    // half_pixel shifts by -0.5: the sample lands on (0, 0).
    QCOMPARE(values<float>(Op("RoiAlign").i("sampling_ratio", 1).one({x, roi, idx})), (F{1.0f}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RoiAlign").one({x, roi, i64({1}, {1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RoiAlign").s("mode", "median").one({x, roi, idx}));
    QVERIFY(Op("RoiAlign").run({f64({1, 1, 1, 1}, {1}), f64({1, 4}, {0, 0, 1, 1}), idx}).empty());
    // A NaN or huge roi neither crashes nor walks an enormous grid.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    QVERIFY(Op("RoiAlign").run({x, f32({1, 4}, {nan, 0, 1, 1}), idx}).empty());
    QVERIFY(Op("RoiAlign").run({x, f32({1, 4}, {0, 0, 1e30f, 1e30f}), idx}).empty());
  }
};

QTEST_GUILESS_MAIN(KernelQuantTest)
#include "test_kernels_quant.moc"
