// Reference kernels for recurrent and resampling ops (LSTM, GRU, RNN, Resize, Upsample, Pad) and
// kiln:FusedElementwise: small cases computed by hand, the decline/throw contract and size checks. The ONNX backend
// node tests of these ops run in test_kernels' conformanceSuite.

#include <QFile>
#include <QFileInfo>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <map>

#include "io/numpy/npz_reader.h"
#include "support/kernel_op.h"
#include "kernels/kernel.h"
#include "io/onnx/onnx_reader.h"
#include "ir/graph.h"
#include "ir/model.h"

using namespace kiln;
using namespace kiln::testing;

namespace {




bool near(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      qWarning("element %zu: got %.17g, expected %.17g", i, got[i], want[i]);
      return false;
    }
  return true;
}

// RNN with the identity activation (Affine 1, 0): H_t = x_t * W + H_{t-1} * R, easy to follow by hand.
std::vector<Tensor> linearRnn(const char* direction, const std::vector<Tensor>& in, int64_t layout = 0,
                              float clip = INFINITY) {
  const bool both = direction == std::string("bidirectional");
  Op op("RNN", 2);
  op.attr("direction", std::string(direction))
      .attr("layout", layout)
      .strings("activations", both ? std::vector<std::string>{"Affine", "Affine"} : std::vector<std::string>{"Affine"})
      .floats("activation_alpha", {1, 1})
      .floats("activation_beta", {0, 0});
  if (std::isfinite(clip)) op.attr("clip", clip);
  return op.run(in);
}

// ---- the shared corpus' bidirectional LSTM (byte_sb_bidi_lstm) against its recorded output ----

// MatMul of [..., M, K] by a 2-D [K, N] (the model's output projection; the NN kernels live in another family).
Tensor matMul2d(const Tensor& a, const Tensor& b) {
  const std::vector<double> av = a.toDouble(), bv = b.toDouble();
  const int64_t k = b.dims()[0], n = b.dims()[1], rows = a.numel() / k;
  std::vector<float> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t i = 0; i < k; ++i) s += av[size_t(r * k + i)] * bv[size_t(i * n + j)];
      out[size_t(r * n + j)] = float(s);
    }
  std::vector<int64_t> dims = a.dims();
  dims.back() = n;
  return f32(dims, out);
}

}  // namespace

class KernelRnnTest : public QObject {
  Q_OBJECT
 private slots:
  void lstmStepByHand() {
    // x = 1, H0 = 0.5, C0 = 1; W (gates i, o, f, c) = 0.5, 1, -1, 2; R = 0.1, 0.2, 0.3, 0.4; Wb_i = 0.1.
    //   i = σ(0.5 + 0.05 + 0.1), o = σ(1 + 0.1), f = σ(-1 + 0.15), c~ = tanh(2 + 0.2)
    //   C = f·C0 + i·c~ = 0.940506302838479,  H = o·tanh(C) = 0.5517823856178964
    const Tensor x = f64({1, 1, 1}, {1}), w = f64({1, 4, 1}, {0.5, 1, -1, 2}), r = f64({1, 4, 1}, {0.1, 0.2, 0.3, 0.4});
    const Tensor b = f64({1, 8}, {0.1, 0, 0, 0, 0, 0, 0, 0});
    const Tensor h0 = f64({1, 1, 1}, {0.5}), c0 = f64({1, 1, 1}, {1});
    auto out = Op("LSTM", 3).attr("hidden_size", int64_t{1}).run({x, w, r, b, none(), h0, c0});
    QCOMPARE(out.size(), size_t{3});
    QCOMPARE(out[0].dims(), (Dims{1, 1, 1, 1}));
    QCOMPARE(out[1].dims(), (Dims{1, 1, 1}));
    QVERIFY(near(values<double>(out[0]), {0.5517823856178964}));
    QVERIFY(near(values<double>(out[1]), {0.5517823856178964}));
    QVERIFY(near(values<double>(out[2]), {0.940506302838479}));
    // Peepholes P = (i, o, f) = 0.5, 0.25, -0.5: i and f see C0, o sees the new C.
    out = Op("LSTM", 3).run({x, w, r, b, none(), h0, c0, f64({1, 3}, {0.5, 0.25, -0.5})});
    QVERIFY(near(values<double>(out[1]), {0.5847804422981326}));
    QVERIFY(near(values<double>(out[2]), {0.9469579311979307}));
    // input_forget couples the gates: f = 1 - i, so C = (1 - i)·C0 + i·c~.
    out = Op("LSTM", 3).attr("input_forget", int64_t{1}).run({x, w, r, b, none(), h0, c0});
    QVERIFY(near(values<double>(out[1]), {0.5663108541011983}));
    QVERIFY(near(values<double>(out[2]), {0.9840629826389531}));
    // fp32 computes the same step to float precision.
    auto f = Op("LSTM", 2).run({f32({1, 1, 1}, {1}), f32({1, 4, 1}, {0.5, 1, -1, 2}),
                                f32({1, 4, 1}, {0.1f, 0.2f, 0.3f, 0.4f}), f32({1, 8}, {0.1f, 0, 0, 0, 0, 0, 0, 0}),
                                none(), f32({1, 1, 1}, {0.5}), f32({1, 1, 1}, {1})});
    QVERIFY(std::fabs(values<float>(f[1])[0] - 0.55178238f) < 1e-6f);
  }

  void gruStepByHand() {
    // W (z, r, h) = 0.5, -0.5, 1; R = 0.2, 0.3, 0.4; Rb_h = 0.1; x = 1, H0 = 0.5.
    //   z = σ(0.6), r = σ(-0.35); H = (1 - z)·h~ + z·H0 with
    //   h~ = tanh(1 + 0.4·(r·0.5) + 0.1) (reset before the product), tanh(1 + r·(0.4·0.5 + 0.1)) (linear_before_reset)
    const Tensor x = f64({1, 1, 1}, {1}), w = f64({1, 3, 1}, {0.5, -0.5, 1}), r = f64({1, 3, 1}, {0.2, 0.3, 0.4});
    const Tensor b = f64({1, 6}, {0, 0, 0, 0, 0, 0.1}), h0 = f64({1, 1, 1}, {0.5});
    QVERIFY(near(values<double>(Op("GRU", 2).run({x, w, r, b, none(), h0})[1]), {0.6163288034723313}));
    QVERIFY(near(values<double>(Op("GRU", 2).attr("linear_before_reset", int64_t{1}).run({x, w, r, b, none(), h0})[1]),
                 {0.6094783282171536}));
  }

  void rnnDirections() {
    // x = 1, 2, 3; W = 1, R = 0.5. Forward: 1, 2.5, 4.25. Reverse (from t = 2 down): 2.75, 3.5, 3 at t = 0, 1, 2.
    const Tensor x = f64({3, 1, 1}, {1, 2, 3});
    const Tensor w1 = f64({1, 1, 1}, {1}), r1 = f64({1, 1, 1}, {0.5});
    auto fwd = linearRnn("forward", {x, w1, r1});
    QVERIFY(near(values<double>(fwd[0]), {1, 2.5, 4.25}));
    QVERIFY(near(values<double>(fwd[1]), {4.25}));
    auto rev = linearRnn("reverse", {x, w1, r1});
    QVERIFY(near(values<double>(rev[0]), {2.75, 3.5, 3}));
    QVERIFY(near(values<double>(rev[1]), {2.75}));
    const Tensor w2 = f64({2, 1, 1}, {1, 1}), r2 = f64({2, 1, 1}, {0.5, 0.5});
    auto bi = linearRnn("bidirectional", {x, w2, r2});
    QCOMPARE(bi[0].dims(), (Dims{3, 2, 1, 1}));
    QVERIFY(near(values<double>(bi[0]), {1, 2.75, 2.5, 3.5, 4.25, 3}));
    QVERIFY(near(values<double>(bi[1]), {4.25, 2.75}));
    // fp16 computes in wider precision and rounds on store (these values are exact in fp16).
    const auto half = [](std::vector<float> v) {
      std::vector<uint16_t> bits;
      for (float e : v) bits.push_back(floatToHalf(e));
      return bits;
    };
    const auto h = [&](Dims dims, std::vector<float> v) {
      return Tensor::fromVector(DType::Float16, std::move(dims), half(std::move(v)));
    };
    auto f16 = linearRnn("forward", {h({3, 1, 1}, {1, 2, 3}), h({1, 1, 1}, {1}), h({1, 1, 1}, {0.5f})});
    QCOMPARE(f16[0].dtype(), DType::Float16);
    QCOMPARE(values<uint16_t>(f16[0]), half({1, 2.5f, 4.25f}));
  }

  void sequenceLensStopEachBatchRow() {
    // Batch row 1 has length 2 (its t = 2 input, 30, must be ignored): forward 10, 25; reverse from t = 1: 20, 20.
    const Tensor x = f64({3, 2, 1}, {1, 10, 2, 20, 3, 30});
    const Tensor w = f64({2, 1, 1}, {1, 1}), r = f64({2, 1, 1}, {0.5, 0.5}), lens = i32({2}, {3, 2});
    auto out = linearRnn("bidirectional", {x, w, r, none(), lens});
    QCOMPARE(out[0].dims(), (Dims{3, 2, 2, 1}));
    // (t, direction, batch): zeros past the end of row 1 in both directions.
    QVERIFY(near(values<double>(out[0]), {1, 10, 2.75, 20, 2.5, 25, 3.5, 20, 4.25, 0, 3, 0}));
    QVERIFY(near(values<double>(out[1]), {4.25, 25, 2.75, 20}));
    // layout 1: X [batch, seq, input], Y [batch, seq, directions, hidden], Y_h [batch, directions, hidden].
    const Tensor xb = f64({2, 3, 1}, {1, 2, 3, 10, 20, 30});
    out = linearRnn("bidirectional", {xb, w, r, none(), lens}, 1);
    QCOMPARE(out[0].dims(), (Dims{2, 3, 2, 1}));
    QCOMPARE(out[1].dims(), (Dims{2, 2, 1}));
    QVERIFY(near(values<double>(out[0]), {1, 2.75, 2.5, 3.5, 4.25, 3, 10, 20, 25, 20, 0, 0}));
    QVERIFY(near(values<double>(out[1]), {4.25, 2.75, 25, 20}));
    // The same through LSTM: a row of length 0 keeps its initial state and writes no Y.
    const Tensor lw = f64({1, 4, 1}, {1, 1, 1, 1}), lr = f64({1, 4, 1}, {0, 0, 0, 0});
    auto l = Op("LSTM", 3).run(
        {f64({2, 2, 1}, {1, 1, 1, 1}), lw, lr, none(), i32({2}, {2, 0}), f64({1, 2, 1}, {0, 7}), f64({1, 2, 1}, {0, 8})});
    QCOMPARE(values<double>(l[0])[1], 0.0);
    QCOMPARE(values<double>(l[0])[3], 0.0);
    QVERIFY(values<double>(l[0])[2] != 0.0);
    QCOMPARE(values<double>(l[1])[1], 7.0);
    QCOMPARE(values<double>(l[2])[1], 8.0);
  }

  void activationAttributes() {
    // alpha / beta are taken in order by the functions that have them: LeakyRelu takes alpha 0.1, HardSigmoid
    // alpha 0.25 and beta 0.6. x = -2, W = 1, R = 0: forward LeakyRelu(-2) = -0.2, reverse clamp(-0.5 + 0.6) = 0.1.
    auto out = Op("RNN", 2)
                   .attr("direction", std::string("bidirectional"))
                   .strings("activations", {"LeakyRelu", "HardSigmoid"})
                   .floats("activation_alpha", {0.1f, 0.25f})
                   .floats("activation_beta", {0.6f})
                   .run({f64({1, 1, 1}, {-2}), f64({2, 1, 1}, {1, 1}), f64({2, 1, 1}, {0, 0})});
    QVERIFY(near(values<double>(out[1]), {-0.2, 0.1}, 1e-7));
    // clip bounds the input of the activation.
    out = linearRnn("forward", {f64({1, 1, 1}, {3}), f64({1, 1, 1}, {1}), f64({1, 1, 1}, {0})}, 0, 1.5f);
    QVERIFY(near(values<double>(out[1]), {1.5}));
    // The default RNN activation is tanh.
    out = Op("RNN", 2).run({f64({1, 1, 1}, {1}), f64({1, 1, 1}, {1}), f64({1, 1, 1}, {0})});
    QVERIFY(near(values<double>(out[1]), {std::tanh(1.0)}));
  }

  void recurrentContract() {
    const Tensor x = f64({1, 1, 1}, {1}), w = f64({1, 1, 1}, {1}), r = f64({1, 1, 1}, {0});
    QVERIFY(Op("RNN", 2).run({i32({1, 1, 1}, {1}), i32({1, 1, 1}, {1}), i32({1, 1, 1}, {0})}).empty());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RNN").run({x, f64({1, 2, 1}, {1, 1}), r}));  // R mismatch
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RNN").attr("direction", std::string("up")).run({x, w, r}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RNN").attr("hidden_size", int64_t{2}).run({x, w, r}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RNN").run({x, w, r, none(), i32({1}, {2})}));  // len > seq
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RNN").strings("activations", {"Swish"}).run({x, w, r}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("RNN").run({x, w, f32({1, 1, 1}, {0})}));         // mixed types
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("LSTM").run({x, f64({1, 3, 1}, {1, 1, 1}), r}));  // 3 not 4·H
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("GRU", 3).run({x, f64({1, 3, 1}, {1, 1, 1}), f64({1, 3, 1}, {0, 0, 0})}));
    // A sequence long enough to need a huge Y is refused before allocating.
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge,
                             Op("RNN").run({f64({100, 1, 1}, std::vector<double>(100, 1)), w, r}, KernelLimits{400}));
  }

  void resizeNearestModes() {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor up = f32({4}, {1, 1, 2, 2});
    // half_pixel (default), round_prefer_floor: source = o/2 - 0.25 -> 0, 0, 1, 1.
    Tensor r = Op("Resize").one({x, none(), up});
    QCOMPARE(r.dims(), (Dims{1, 1, 4, 4}));
    QCOMPARE(values<float>(r), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
    // asymmetric: source = o/2 = 0, 0.5, 1, 1.5; the ties decide.
    const auto row = [&](const char* nearestMode) {
      Tensor t = Op("Resize")
                     .attr("coordinate_transformation_mode", std::string("asymmetric"))
                     .attr("nearest_mode", std::string(nearestMode))
                     .one({x, none(), none(), i64({4}, {1, 1, 1, 4})});
      return values<float>(t);
    };
    QCOMPARE(row("round_prefer_floor"), (std::vector<float>{1, 1, 2, 2}));
    QCOMPARE(row("round_prefer_ceil"), (std::vector<float>{1, 2, 2, 2}));
    QCOMPARE(row("floor"), (std::vector<float>{1, 1, 2, 2}));
    QCOMPARE(row("ceil"), (std::vector<float>{1, 2, 2, 2}));
    // Nearest copies any element type, int64 exactly. Sources (o + 0.5)/1.5 - 0.5 = -1/6, 0.5 (tie: floor), 7/6.
    Tensor big = Op("Resize").one({i64({2}, {int64_t{1} << 60, 3}), none(), f32({1}, {1.5f})});
    QCOMPARE(values<int64_t>(big), (std::vector<int64_t>{int64_t{1} << 60, int64_t{1} << 60, 3}));
  }

  void resizeLinearAndCubic() {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    Tensor r = Op("Resize").attr("mode", std::string("linear")).one({x, none(), f32({4}, {1, 1, 2, 2})});
    QCOMPARE(values<float>(r), (std::vector<float>{1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f,
                                                   3.5f, 3, 3.25f, 3.75f, 4}));
    r = Op("Resize")
            .attr("mode", std::string("linear"))
            .attr("coordinate_transformation_mode", std::string("align_corners"))
            .one({x, none(), none(), i64({4}, {1, 1, 3, 3})});
    QCOMPARE(values<float>(r), (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
    // Cubic, A = -0.75, asymmetric, source 0.5 of [0, 1, 4, 9]: taps -1..2 (edge 0, 0, 1, 4) with weights
    // -0.09375, 0.59375, 0.59375, -0.09375 -> 0.21875; exclude_outside drops tap -1 and renormalises -> 0.2.
    const Tensor q = f64({4}, {0, 1, 4, 9});
    Op cubic("Resize");
    cubic.attr("mode", std::string("cubic")).attr("coordinate_transformation_mode", std::string("asymmetric"));
    QVERIFY(near({values<double>(cubic.one({q, none(), f32({1}, {2})}))[1]}, {0.21875}));
    cubic.attr("exclude_outside", int64_t{1});
    QVERIFY(near({values<double>(cubic.one({q, none(), f32({1}, {2})}))[1]}, {0.2}));
    // tf_crop_and_resize: roi [0.5, 1.5] of [1, 2, 3, 4] at 3 points -> sources 1.5, 3, 4.5 (outside: extrapolated).
    r = Op("Resize")
            .attr("mode", std::string("linear"))
            .attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
            .attr("extrapolation_value", 10.0f)
            .one({f32({4}, {1, 2, 3, 4}), f32({2}, {0.5f, 1.5f}), none(), i64({1}, {3})});
    QCOMPARE(values<float>(r), (std::vector<float>{2.5f, 4, 10}));
    // Opset 18: sizes for some axes, keeping the aspect ratio (not_larger: min(3/2, 5/2) = 1.5 on both).
    r = Op("Resize")
            .ints("axes", {2, 3})
            .attr("keep_aspect_ratio_policy", std::string("not_larger"))
            .one({x, none(), none(), i64({2}, {3, 5})});
    QCOMPARE(r.dims(), (Dims{1, 1, 3, 3}));
    // Integers have no linear form here: declined.
    QVERIFY(Op("Resize").attr("mode", std::string("linear")).run({i32({2}, {1, 2}), none(), f32({1}, {2})}).empty());
  }

  void upsampleForms() {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    Tensor u = Op("Upsample").floats("scales", {1, 1, 2, 2}).one({x});  // opset 7 attribute
    QCOMPARE(values<float>(u), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
    u = Op("Upsample").attr("mode", std::string("linear")).one({x, f32({4}, {1, 1, 1, 2})});  // opset 9 input
    QCOMPARE(values<float>(u), (std::vector<float>{1, 1.5f, 2, 2, 3, 3.5f, 4, 4}));
    // Resize-10 (X, scales): nearest rounds down when upscaling, up when downscaling (the opset 10 backend tests:
    // sources o/3 for x3, o/0.6 = 0, 1.67 for x0.6).
    Tensor r10 = Op("Resize").one({x, f32({4}, {1, 1, 1, 3})});
    QCOMPARE(values<float>(r10), (std::vector<float>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
    r10 = Op("Resize").one({f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({4}, {1, 1, 0.6f, 0.6f})});
    QCOMPARE(r10.dims(), (Dims{1, 1, 1, 2}));
    QCOMPARE(values<float>(r10), (std::vector<float>{1, 3}));
    // Linear Resize-10 interpolates like Upsample.
    QCOMPARE(values<float>(Op("Resize").attr("mode", std::string("linear")).one({x, f32({4}, {1, 1, 1, 2})})),
             values<float>(u));
  }

  void resizeContract() {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("Resize").one({x, none(), f32({4}, {1, 1, 2, 2}), i64({4}, {1, 1, 4, 4})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Resize").one({x, none(), f32({4}, {1, 1, -2, 2})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Resize").one({x, none(), f32({2}, {2, 2})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("Resize").attr("mode", std::string("area")).one({x, none(), f32({4}, {1, 1, 2, 2})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Resize")
                                                     .attr("coordinate_transformation_mode", std::string("diagonal"))
                                                     .one({x, none(), f32({4}, {1, 1, 2, 2})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Resize").one({x}));  // neither scales nor sizes
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge, Op("Resize").one({x, none(), f32({4}, {1, 1, 1e20f, 1e20f})}));
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge,
                             Op("Resize").run({x, none(), none(), i64({4}, {1, 1, 1000, 1000})}, KernelLimits{4000}));
    // Antialiased linear 4 -> 2 of [0, 1, 2, 3]: the triangle stretched to 2 elements each side. Output 0 has source
    // 0.5, taps -1..2 (edge: 0, 0, 1, 2) weighted 0.25, 0.75, 0.75, 0.25 / 2 -> 0.625; output 1 (source 2.5) 2.375.
    // exclude_outside drops the taps past the edges: 1.25 / 1.75 and 4 / 1.75.
    Op aa("Resize");
    aa.attr("mode", std::string("linear")).attr("antialias", int64_t{1});
    const Tensor ramp = f64({4}, {0, 1, 2, 3}), half = f32({1}, {0.5f});
    QVERIFY(near(values<double>(aa.one({ramp, none(), half})), {0.625, 2.375}));
    aa.attr("exclude_outside", int64_t{1});
    QVERIFY(near(values<double>(aa.one({ramp, none(), half})), {1.25 / 1.75, 4 / 1.75}));
    // Upscaling is unaffected.
    QCOMPARE(values<float>(Op("Resize")
                               .attr("mode", std::string("linear"))
                               .attr("antialias", int64_t{1})
                               .one({x, none(), f32({4}, {1, 1, 1, 2})})),
             (std::vector<float>{1, 1.25f, 1.75f, 2, 3, 3.25f, 3.75f, 4}));
  }

  void padModes() {
    const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    // pads = [begin axis 0, begin axis 1, end axis 0, end axis 1].
    Tensor p = Op("Pad").one({x, i64({4}, {0, 1, 1, 1}), f32({}, {9})});
    QCOMPARE(p.dims(), (Dims{3, 5}));
    QCOMPARE(values<float>(p), (std::vector<float>{9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9, 9, 9, 9, 9}));
    const Tensor v = i32({3}, {1, 2, 3});
    const auto mode = [&](const char* m, std::vector<int64_t> pads) {
      return values<int32_t>(Op("Pad").attr("mode", std::string(m)).one({v, i64({2}, std::move(pads))}));
    };
    QCOMPARE(mode("constant", {1, 2}), (std::vector<int32_t>{0, 1, 2, 3, 0, 0}));
    QCOMPARE(mode("reflect", {2, 2}), (std::vector<int32_t>{3, 2, 1, 2, 3, 2, 1}));
    QCOMPARE(mode("reflect", {5, 0}), (std::vector<int32_t>{2, 1, 2, 3, 2, 1, 2, 3}));  // reflects repeatedly
    QCOMPARE(mode("edge", {2, 2}), (std::vector<int32_t>{1, 1, 1, 2, 3, 3, 3}));
    QCOMPARE(mode("wrap", {2, 2}), (std::vector<int32_t>{2, 3, 1, 2, 3, 1, 2}));
    QCOMPARE(mode("edge", {-1, 1}), (std::vector<int32_t>{2, 3, 3}));  // a negative pad crops
    QCOMPARE(mode("constant", {-3, 0}).size(), size_t{0});
    // Opset 2: attributes; the float value is converted to the data's type.
    QCOMPARE(values<int32_t>(Op("Pad").ints("pads", {1, 0}).attr("value", 7.9f).one({v})),
             (std::vector<int32_t>{7, 1, 2, 3}));
    // Opset 18: pads for the listed axes only.
    p = Op("Pad").attr("mode", std::string("edge")).one({x, i64({2}, {1, 0}), none(), i64({1}, {-1})});
    QCOMPARE(p.dims(), (Dims{2, 4}));
    QCOMPARE(values<float>(p), (std::vector<float>{1, 1, 2, 3, 4, 4, 5, 6}));
  }

  void padContract() {
    const Tensor v = i32({3}, {1, 2, 3});
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Pad").one({v, i64({1}, {1})}));       // one entry per side
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Pad").one({v, i64({2}, {-2, -2})}));  // crops below zero
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Pad").one({v, i64({2}, {1, 1}), f32({}, {1})}));  // value type
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("Pad").attr("mode", std::string("mirror")).one({v, i64({2}, {1, 1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Pad").one({v, f32({2}, {1, 1})}));  // pads must be integers
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("Pad").attr("mode", std::string("reflect")).one({i32({0}, {}), i64({2}, {1, 1})}));
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge, Op("Pad").one({v, i64({2}, {INT64_MAX, 1})}));
    // A crop near INT64_MIN balanced by a huge pad leaves 4 elements; o - begin overflows from o = 2 on.
    QCOMPARE(
        values<int32_t>(Op("Pad").attr("mode", std::string("wrap")).one({v, i64({2}, {INT64_MIN + 2, INT64_MAX})})),
        (std::vector<int32_t>{1, 2, 3, 1}));
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge, Op("Pad").run({v, i64({2}, {1000, 0})}, KernelLimits{400}));
  }

  void fusedElementwiseRunsItsBody() {
    // Relu(Add(a, b)) * 2 recorded as the fusion rule records it: a body graph over the node's inputs.
    Op fused("FusedElementwise", 1, "kiln");
    auto body = fused.graph().makeSubgraph("body");
    Value* a = body->addInput("a", ValueType::tensor(DType::Float, Shape::ofStatic({2, 2})));
    Value* b = body->addInput("b", ValueType::tensor(DType::Float, Shape::ofStatic({2})));
    Value* sum = body->addNode("Add", {a, b}, {"sum"}, "add")->output(0);
    Value* relu = body->addNode("Relu", {sum}, {"relu"}, "relu")->output(0);
    Value* two = body->addInitializer("two", f32({}, {2}));
    body->addOutput(body->addNode("Mul", {relu, two}, {"y"}, "mul")->output(0));
    fused.attr("body", Attribute::GraphPtr(body));
    const Tensor x = f32({2, 2}, {1, -5, 3, -1}), bias = f32({2}, {1, 2});
    QCOMPARE(values<float>(fused.one({x, bias})), (std::vector<float>{4, 0, 8, 2}));
    // A wrong input count is a malformed node; a body op that throws makes the node throw as the chain would.
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, fused.run({x}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, fused.run({x, f32({3}, {1, 2, 3})}));         // does not broadcast
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("FusedElementwise", 1, "kiln").run({x}));  // no body

    Op rooted("FusedElementwise", 1, "kiln");
    auto body2 = rooted.graph().makeSubgraph("body");
    Value* in = body2->addInput("in", ValueType::tensor(DType::Int32, Shape::ofStatic({1})));
    body2->addOutput(body2->addNode("Sqrt", {in}, {"s"}, "sqrt")->output(0));
    rooted.attr("body", Attribute::GraphPtr(body2));
    QVERIFY(rooted.run({i32({1}, {4})}).empty());  // Sqrt declines integers, so the fused node does too
    QCOMPARE(values<float>(rooted.one({f32({1}, {4})})), (std::vector<float>{2}));
  }

  void corpusBidirectionalLstm() {
    // byte_sb_bidi_lstm (sonos/tract): Gather embedding, a bidirectional LSTM, a projection; io.npz holds an input
    // and the output tract recorded for it.
    const QString dir = QStringLiteral(KILN_SHARED_DIR) + "/models/speech/";
    if (!QFileInfo::exists(dir + "byte_sb_bidi_lstm.onnx")) QSKIP("the shared corpus (../shared/models) is absent");
    std::map<std::string, Tensor> io;
    for (auto& [name, t] : readNpz((dir + "byte_sb_bidi_lstm_io.npz").toStdString())) io[name] = t;
    QVERIFY(io.count("input") && io.count("Add_26"));
    auto model = readOnnxFile((dir + "byte_sb_bidi_lstm.onnx").toStdString(), {.runChecker = false}).model;
    const Graph& g = *model->graph;
    QCOMPARE(g.inputs().size(), size_t{1});
    std::map<const Value*, Tensor> env;
    for (Value* v : g.values())
      if (v->constant()) env[v] = *v->constant();
    env[g.inputs()[0]] = io.at("input");
    const auto order = g.topologicalOrder();
    QVERIFY(order);
    bool ranLstm = false;
    for (const Node* n : *order) {
      std::vector<const Tensor*> in;
      for (const Value* v : n->inputs()) {
        const auto it = v ? env.find(v) : env.end();
        QVERIFY2(!v || it != env.end(), n->name().c_str());
        in.push_back(v ? &it->second : nullptr);
      }
      const bool projection = n->opType() == "MatMul" && in.size() == 2 && in[1]->dims().size() == 2;
      const std::vector<Tensor> out = projection ? std::vector<Tensor>{matMul2d(*in[0], *in[1])} : evaluateNode(*n, in);
      QVERIFY2(out.size() == n->numOutputs(), qPrintable(QString::fromStdString(n->opType() + " gave no result")));
      ranLstm = ranLstm || n->opType() == "LSTM";
      for (size_t i = 0; i < out.size(); ++i)
        if (n->output(i)) env[n->output(i)] = out[i];
    }
    QVERIFY(ranLstm);
    const Tensor& got = env.at(g.outputs()[0]);
    const Tensor& want = io.at("Add_26");
    QCOMPARE(got.dims(), want.dims());
    const std::vector<double> gv = got.toDouble(), wv = want.toDouble();
    for (size_t i = 0; i < wv.size(); ++i)
      QVERIFY2(std::fabs(gv[i] - wv[i]) <= 1e-4 + 1e-4 * std::fabs(wv[i]),
               qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(gv[i]).arg(wv[i])));
  }
};

QTEST_GUILESS_MAIN(KernelRnnTest)
#include "test_kernels_rnn.moc"
