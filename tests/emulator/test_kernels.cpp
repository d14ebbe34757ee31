// Reference kernels: hand-computed cases per family (broadcasting, opset forms, rounding, wrap-around, the
// decline/throw contract, size limits). The ONNX backend suite runs through the emulator in
// tests/conformance/test_emulator_conformance.cpp.
#include <QDir>
#include <QFileInfo>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "support/kernel_op.h"
#include "kernels/kernel.h"
#include "io/onnx/onnx_reader.h"
#include "io/tensor_file.h"
#include "ir/graph.h"
#include "ir/model.h"

using namespace kiln;
using namespace kiln::testing;

namespace {




}  // namespace

class KernelTest : public QObject {
  Q_OBJECT
 private slots:
  void arithmeticBroadcasts() {
    Tensor r = Op("Add").one({f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
    QCOMPARE(r.dims(), (Dims{2, 3}));
    QCOMPARE(values<float>(r), (std::vector<float>{11, 22, 33, 14, 25, 36}));
    r = Op("Sub").one({f32({2, 1}, {1, 2}), f32({1, 3}, {1, 2, 3})});
    QCOMPARE(values<float>(r), (std::vector<float>{0, -1, -2, 1, 0, -1}));
    r = Op("Mul").one({f32({}, {2}), f32({0, 3}, {})});  // a zero extent wins over 1
    QCOMPARE(r.dims(), (Dims{0, 3}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Add").one({f32({2}, {1, 2}), f32({3}, {1, 2, 3})}));
  }

  void integersWrapAndDivisionByZeroFails() {
    QCOMPARE(values<int8_t>(Op("Add").one({i8({1}, {127}), i8({1}, {1})})), (std::vector<int8_t>{-128}));
    QCOMPARE(values<int8_t>(Op("Div").one({i8({1}, {-128}), i8({1}, {-1})})), (std::vector<int8_t>{-128}));
    QCOMPARE(values<int32_t>(Op("Div").one({i32({2}, {7, -7}), i32({1}, {2})})), (std::vector<int32_t>{3, -3}));
    // No defined result: the node fails saying why (not "no kernel"), so a run names it and folding leaves it.
    try {
      Op("Div").run({i32({2}, {7, 1}), i32({2}, {2, 0})});
      QFAIL("integer division by zero must fail");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("division or modulo by zero"), e.what());
    }
    QCOMPARE(values<int8_t>(Op("Neg").one({i8({2}, {-128, 5})})), (std::vector<int8_t>{-128, -5}));
  }

  void modSignRules() {
    // fmod=0: the sign of the divisor (Python); fmod=1: the sign of the dividend (C).
    QCOMPARE(values<int32_t>(Op("Mod").one({i32({4}, {-7, 7, -7, 7}), i32({4}, {3, -3, -3, 3})})),
             (std::vector<int32_t>{2, -2, -1, 1}));
    QCOMPARE(values<int32_t>(Op("Mod").attr("fmod", int64_t{1}).one({i32({2}, {-7, 7}), i32({2}, {3, -3})})),
             (std::vector<int32_t>{-1, 1}));
    QCOMPARE(values<float>(Op("Mod").attr("fmod", int64_t{1}).one({f32({2}, {-7.5f, 7.5f}), f32({1}, {2})})),
             (std::vector<float>{-1.5f, 1.5f}));
  }

  void powMixedTypes() {
    QCOMPARE(values<float>(Op("Pow").one({f32({3}, {2, 3, 4}), i64({3}, {3, 2, -1})})),
             (std::vector<float>{8, 9, 0.25f}));
    QCOMPARE(values<int64_t>(Op("Pow").one({i64({3}, {2, 3, -1}), i64({3}, {10, 3, -3})})),
             (std::vector<int64_t>{1024, 27, -1}));
    QCOMPARE(values<int32_t>(Op("Pow").one({i32({1}, {9}), f32({1}, {0.5f})})), (std::vector<int32_t>{3}));
  }

  void variadicMinMaxPropagateNan() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Tensor r = Op("Max").one({f32({3}, {1, nan, 5}), f32({1}, {3}), f32({3}, {0, 0, 7})});
    auto v = values<float>(r);
    QCOMPARE(v[0], 3.0f);
    QVERIFY(std::isnan(v[1]));
    QCOMPARE(v[2], 7.0f);
    QCOMPARE(values<float>(Op("Min").one({f32({2}, {4, -1})})), (std::vector<float>{4, -1}));
    QCOMPARE(values<float>(Op("Mean").one({f32({2}, {1, 2}), f32({2}, {3, 6})})), (std::vector<float>{2, 4}));
  }

  void unaryMath() {
    auto v = values<float>(Op("Sigmoid").one({f32({3}, {0, 100, -100})}));
    QCOMPARE(v[0], 0.5f);
    QCOMPARE(v[1], 1.0f);
    QVERIFY(v[2] >= 0 && v[2] < 1e-30f);
    QCOMPARE(values<float>(Op("Relu").one({f32({3}, {-1, 0, 2})})), (std::vector<float>{0, 0, 2}));
    QCOMPARE(values<float>(Op("Floor").one({f32({2}, {-1.5f, 1.5f})})), (std::vector<float>{-2, 1}));
    QCOMPARE(values<float>(Op("Erf").one({f32({1}, {0})})), (std::vector<float>{0}));
    QVERIFY(std::fabs(values<double>(Op("Erf").one({f64({1}, {1.0})}))[0] - 0.8427007929497149) < 1e-15);
    // fp16 computes in float and rounds once: sqrt(2) = 1.4142135 -> 0x3da8 (1.4140625).
    Tensor h = Tensor::fromVector<uint16_t>(DType::Float16, {1}, {floatToHalf(2.0f)});
    QCOMPARE(values<uint16_t>(Op("Sqrt").one({h})), (std::vector<uint16_t>{0x3da8}));
    QVERIFY(Op("Sqrt").run({i32({1}, {4})}).empty());  // float-only op: an int input is declined, not an error
    QVERIFY(Op("NoSuchOp").run({f32({1}, {1})}).empty());
  }

  void logicAndWhere() {
    QCOMPARE(values<uint8_t>(Op("Less").one({f32({3}, {1, 2, 3}), f32({}, {2})})), (std::vector<uint8_t>{1, 0, 0}));
    QCOMPARE(values<uint8_t>(Op("GreaterOrEqual").one({i64({3}, {1, 2, 3}), i64({1}, {2})})),
             (std::vector<uint8_t>{0, 1, 1}));
    QCOMPARE(values<uint8_t>(Op("Equal").one({boolean({2}, {1, 0}), boolean({2}, {1, 1})})),
             (std::vector<uint8_t>{1, 0}));
    QCOMPARE(values<uint8_t>(Op("Xor").one({boolean({2, 1}, {1, 0}), boolean({2}, {1, 0})})),
             (std::vector<uint8_t>{0, 1, 1, 0}));
    QCOMPARE(values<uint8_t>(Op("Not").one({boolean({2}, {1, 0})})), (std::vector<uint8_t>{0, 1}));
    Tensor w = Op("Where").one({boolean({2, 1}, {1, 0}), i64({3}, {1, 2, 3}), i64({}, {-1})});
    QCOMPARE(w.dims(), (Dims{2, 3}));
    QCOMPARE(values<int64_t>(w), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
    QVERIFY(Op("And").run({f32({1}, {1}), f32({1}, {1})}).empty());
  }

  void shapeAndSize() {
    Tensor x = f32({2, 3, 4, 5}, std::vector<float>(120, 0));
    QCOMPARE(values<int64_t>(Op("Shape").one({x})), (std::vector<int64_t>{2, 3, 4, 5}));
    QCOMPARE(values<int64_t>(Op("Shape").attr("start", int64_t{1}).attr("end", int64_t{-1}).one({x})),
             (std::vector<int64_t>{3, 4}));
    QCOMPARE(values<int64_t>(Op("Shape").attr("start", int64_t{-10}).attr("end", int64_t{10}).one({x})),
             (std::vector<int64_t>{2, 3, 4, 5}));
    QCOMPARE(Op("Shape").attr("start", int64_t{3}).attr("end", int64_t{1}).one({x}).numel(), int64_t{0});
    Tensor s = Op("Size").one({x});
    QVERIFY(s.dims().empty());
    QCOMPARE(values<int64_t>(s), (std::vector<int64_t>{120}));
  }

  void reshapeForms() {
    Tensor x = f32({2, 3, 4}, std::vector<float>(24, 1));
    QCOMPARE(Op("Reshape").one({x, i64({3}, {0, -1, 2})}).dims(), (Dims{2, 6, 2}));
    QCOMPARE(Op("Reshape").one({x, i64({2}, {4, -1})}).data(), x.data());  // a view of x's storage, no copy
    Tensor empty = f32({0, 3}, {});
    QCOMPARE(Op("Reshape").attr("allowzero", int64_t{1}).one({empty, i64({2}, {3, 0})}).dims(), (Dims{3, 0}));
    QCOMPARE(Op("Reshape").one({empty, i64({2}, {0, 3})}).dims(), (Dims{0, 3}));  // 0 copies the input's 0
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Reshape").one({x, i64({2}, {-1, -1})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Reshape").one({x, i64({2}, {5, 5})}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("Reshape").attr("allowzero", int64_t{1}).one({empty, i64({2}, {0, -1})}));
  }

  void squeezeUnsqueezeFlatten() {
    Tensor x = f32({3, 1, 2}, std::vector<float>(6, 1));
    QCOMPARE(Op("Unsqueeze").ints("axes", {0, -1}).one({x}).dims(), (Dims{1, 3, 1, 2, 1}));  // opset < 13
    QCOMPARE(Op("Unsqueeze").one({x, i64({2}, {3, 1})}).dims(), (Dims{3, 1, 1, 1, 2}));      // opset 13
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Unsqueeze").one({x, i64({2}, {1, 1})}));
    QCOMPARE(Op("Squeeze").one({x}).dims(), (Dims{3, 2}));
    QCOMPARE(Op("Squeeze").ints("axes", {-2}).one({x}).dims(), (Dims{3, 2}));
    QCOMPARE(Op("Squeeze").one({x, i64({1}, {1})}).dims(), (Dims{3, 2}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Squeeze").one({x, i64({1}, {0})}));
    QCOMPARE(Op("Flatten").one({x}).dims(), (Dims{3, 2}));
    QCOMPARE(Op("Flatten").attr("axis", int64_t{0}).one({x}).dims(), (Dims{1, 6}));
    QCOMPARE(Op("Flatten").attr("axis", int64_t{-1}).one({x}).dims(), (Dims{3, 2}));
  }

  void concatSplit() {
    Tensor c =
        Op("Concat").attr("axis", int64_t{-1}).one({i64({2, 1}, {1, 2}), i64({2, 2}, {3, 4, 5, 6}), i64({2, 0}, {})});
    QCOMPARE(c.dims(), (Dims{2, 3}));
    QCOMPARE(values<int64_t>(c), (std::vector<int64_t>{1, 3, 4, 2, 5, 6}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("Concat").attr("axis", int64_t{0}).one({i64({1}, {1}), i32({1}, {1})}));

    Tensor x = i64({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    auto parts = Op("Split", 2).attr("axis", int64_t{1}).run({x, i64({2}, {2, 3})});  // opset 13 input
    QCOMPARE(parts.size(), size_t{2});
    QCOMPARE(values<int64_t>(parts[0]), (std::vector<int64_t>{0, 1, 5, 6}));
    QCOMPARE(values<int64_t>(parts[1]), (std::vector<int64_t>{2, 3, 4, 7, 8, 9}));
    parts = Op("Split", 2).ints("split", {4, 1}).attr("axis", int64_t{1}).run({x});  // opset < 13 attribute
    QCOMPARE(parts[1].dims(), (Dims{2, 1}));
    parts = Op("Split", 3).attr("axis", int64_t{1}).attr("num_outputs", int64_t{3}).run({x});  // opset 18
    QCOMPARE(parts[0].dims(), (Dims{2, 2}));
    QCOMPARE(parts[2].dims(), (Dims{2, 1}));
    QCOMPARE(Op("Split", 2).run({x})[0].dims(), (Dims{1, 5}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Split", 2).attr("axis", int64_t{1}).run({x}));  // 5 into 2
  }

  void sliceAllForms() {
    Tensor x = i64({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    // opset 10+: inputs, negative step walks backwards, INT64_MIN/MAX mean "to the end".
    Tensor r =
        Op("Slice").one({x, i64({2}, {-1, 100}), i64({2}, {INT64_MIN, -5}), i64({2}, {0, 1}), i64({2}, {-2, -3})});
    QCOMPARE(r.dims(), (Dims{2, 2}));
    QCOMPARE(values<int64_t>(r), (std::vector<int64_t>{11, 8, 3, 0}));
    // opset < 10: attributes, no steps; axes default to 0..n-1.
    r = Op("Slice").ints("starts", {1, 1}).ints("ends", {3, 3}).one({x});
    QCOMPARE(values<int64_t>(r), (std::vector<int64_t>{5, 6, 9, 10}));
    r = Op("Slice").one({x, i64({1}, {2}), i64({1}, {1})});  // empty: start after end with step 1
    QCOMPARE(r.dims(), (Dims{0, 4}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             Op("Slice").one({x, i64({1}, {0}), i64({1}, {1}), i64({1}, {0}), i64({1}, {0})}));
  }

  void gatherTransposeExpandTile() {
    Tensor x = i64({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor g = Op("Gather").attr("axis", int64_t{1}).one({x, i64({2, 1}, {-1, 0})});
    QCOMPARE(g.dims(), (Dims{2, 2, 1}));
    QCOMPARE(values<int64_t>(g), (std::vector<int64_t>{3, 1, 6, 4}));
    QCOMPARE(Op("Gather").one({x, scalarI64(1)}).dims(), (Dims{3}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Gather").one({x, i64({1}, {2})}));
    Tensor ge = Op("GatherElements").attr("axis", int64_t{1}).one({x, i32({2, 2}, {2, 0, -1, 1})});
    QCOMPARE(values<int64_t>(ge), (std::vector<int64_t>{3, 1, 6, 5}));
    Tensor t = Op("Transpose").one({x});
    QCOMPARE(t.dims(), (Dims{3, 2}));
    QCOMPARE(values<int64_t>(t), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Transpose").ints("perm", {0, 0}).one({x}));
    Tensor e = Op("Expand").one({i64({3, 1}, {1, 2, 3}), i64({3}, {2, 1, 2})});
    QCOMPARE(e.dims(), (Dims{2, 3, 2}));
    QCOMPARE(values<int64_t>(e), (std::vector<int64_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
    Tensor tl = Op("Tile").one({i64({2}, {1, 2}), i64({1}, {3})});
    QCOMPARE(values<int64_t>(tl), (std::vector<int64_t>{1, 2, 1, 2, 1, 2}));
    tl = Op("Tile").one({x, i64({2}, {2, 1})});
    QCOMPARE(tl.dims(), (Dims{4, 3}));
    QCOMPARE(values<int64_t>(tl)[9], int64_t{4});
  }

  void generators() {
    QCOMPARE(values<int32_t>(Op("Range").one({i32({}, {10}), i32({}, {4}), i32({}, {-3})})),
             (std::vector<int32_t>{10, 7}));
    QCOMPARE(values<float>(Op("Range").one({f32({}, {1}), f32({}, {2}), f32({}, {0.25f})})),
             (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
    QCOMPARE(Op("Range").one({i64({}, {5}), i64({}, {1}), i64({}, {1})}).numel(), int64_t{0});
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Range").one({i64({}, {0}), i64({}, {1}), i64({}, {0})}));
    Tensor c = Op("ConstantOfShape").attr("value", i32({1}, {7})).one({i64({2}, {2, 3})});
    QCOMPARE(c.dtype(), DType::Int32);
    QCOMPARE(values<int32_t>(c), std::vector<int32_t>(6, 7));
    // A weight-sized fill (split across the cores, each piece filling its own elements): every element, odd count.
    c = Op("ConstantOfShape").attr("value", i64({1}, {-3})).one({i64({2}, {1001, 997})});
    QCOMPARE(values<int64_t>(c), std::vector<int64_t>(1001 * 997, -3));
    c = Op("ConstantOfShape").one({i64({0}, {})});  // empty shape: a scalar fp32 zero
    QVERIFY(c.dims().empty());
    QCOMPARE(c.dtype(), DType::Float);
    QCOMPARE(values<int64_t>(Op("Constant").attr("value_ints", std::vector<int64_t>{4, 5}).one({})),
             (std::vector<int64_t>{4, 5}));
    QCOMPARE(Op("Constant").attr("value_float", 2.5f).one({}).dims(), Dims{});
  }

  void castRounding() {
    const auto cast = [](DType to, const Tensor& x) {
      return Op("Cast").attr("to", int64_t{dtypeToOnnx(to)}).run({x});
    };
    // float -> fp16: ties to even; 1 + 2^-11 is a tie between 1 and 1 + 2^-10.
    Tensor h = cast(DType::Float16, f32({3}, {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 70000.0f}))[0];
    QCOMPARE(values<uint16_t>(h), (std::vector<uint16_t>{0x3c00, 0x3c02, 0x7c00}));
    // double -> fp16 must round once: 1 + 2^-11 + 2^-40 is above the tie (naive double->float->half gives 1.0).
    h = cast(DType::Float16, f64({1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}))[0];
    QCOMPARE(values<uint16_t>(h), (std::vector<uint16_t>{0x3c01}));
    Tensor b = cast(DType::BFloat16,
                    f64({2}, {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), 1.0 + std::ldexp(1.0, -8)}))[0];
    QCOMPARE(values<uint16_t>(b), (std::vector<uint16_t>{0x3f81, 0x3f80}));
    // float -> int truncates; NaN -> 0 and out-of-range saturate instead of undefined behaviour.
    Tensor i = cast(DType::Int32, f32({4}, {3.9f, -3.9f, std::numeric_limits<float>::quiet_NaN(), 1e20f}))[0];
    QCOMPARE(values<int32_t>(i), (std::vector<int32_t>{3, -3, 0, INT32_MAX}));
    QCOMPARE(values<int8_t>(cast(DType::Int8, i64({2}, {300, -129}))[0]), (std::vector<int8_t>{44, 127}));
    QCOMPARE(values<uint8_t>(cast(DType::Bool, f32({3}, {0, -0.5f, std::numeric_limits<float>::quiet_NaN()}))[0]),
             (std::vector<uint8_t>{0, 1, 1}));
    QCOMPARE(values<double>(cast(DType::Double, boolean({2}, {1, 0}))[0]), (std::vector<double>{1, 0}));
    QCOMPARE(values<float>(cast(DType::Float, Tensor::fromVector<uint16_t>(DType::BFloat16, {1}, {0x4049}))[0]),
             (std::vector<float>{3.140625f}));
    // To and from text: the shortest text that reads back the same value; NaN/INF spellings; bad text is an error.
    const auto text = cast(DType::String, f32({3}, {1, 0.1f, -2.5e-7f}));
    QCOMPARE(text.at(0).strings(), (std::vector<std::string>{"1", "0.1", "-2.5e-07"}));
    const Tensor back = Op("Cast").i("to", int64_t(dtypeToOnnx(DType::Float)))
                            .one({Tensor({4}, std::vector<std::string>{"0.1", "-INF", "nan", "12"})});
    QCOMPARE(back.toDouble()[0], double(0.1f));
    QVERIFY(std::isinf(back.toDouble()[1]) && back.toDouble()[1] < 0 && std::isnan(back.toDouble()[2]));
    QCOMPARE(Op("Cast").i("to", int64_t(dtypeToOnnx(DType::Int64))).one({Tensor({1}, std::vector<std::string>{"-9007199254740993"})}).toInt64()[0],
             int64_t{-9007199254740993});  // exact: not through double
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("Cast").i("to", int64_t(dtypeToOnnx(DType::Float)))
                                                     .one({Tensor({1}, std::vector<std::string>{"12abc"})}));
    Tensor like = Op("CastLike").one({f32({1}, {2.5f}), i64({0}, {})});
    QCOMPARE(like.dtype(), DType::Int64);
  }

  void reductions() {
    Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor r = Op("ReduceSum").ints("axes", {1}).attr("keepdims", int64_t{0}).one({x});  // attribute form
    QCOMPARE(r.dims(), (Dims{2}));
    QCOMPARE(values<float>(r), (std::vector<float>{6, 15}));
    r = Op("ReduceMean").one({x, i64({1}, {-2})});  // input form (opset 13 ReduceSum / 18 others)
    QCOMPARE(r.dims(), (Dims{1, 3}));
    QCOMPARE(values<float>(r), (std::vector<float>{2.5f, 3.5f, 4.5f}));
    QCOMPARE(Op("ReduceMax").one({x}).dims(), (Dims{1, 1}));  // no axes: everything
    QCOMPARE(Op("ReduceMin").attr("noop_with_empty_axes", int64_t{1}).one({x}).dims(), (Dims{2, 3}));
    QCOMPARE(values<int64_t>(Op("ReduceProd").attr("keepdims", int64_t{0}).one({i64({3}, {2, -3, 4})})),
             (std::vector<int64_t>{-24}));
    Tensor empty = Op("ReduceMax").ints("axes", {0}).one({f32({0, 2}, {})});
    QCOMPARE(values<float>(empty), (std::vector<float>(2, -std::numeric_limits<float>::infinity())));
    QCOMPARE(values<float>(Op("ReduceSum").ints("axes", {0}).one({f32({0, 2}, {})})), (std::vector<float>{0, 0}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, Op("ReduceSum").ints("axes", {2}).one({x}));

    Tensor cs = Op("CumSum").one({i64({4}, {1, 2, 3, 4}), scalarI64(0)});
    QCOMPARE(values<int64_t>(cs), (std::vector<int64_t>{1, 3, 6, 10}));
    cs = Op("CumSum")
             .attr("exclusive", int64_t{1})
             .attr("reverse", int64_t{1})
             .one({f32({2, 2}, {1, 2, 3, 4}), i32({1}, {-1})});
    QCOMPARE(values<float>(cs), (std::vector<float>{2, 0, 4, 0}));
  }

  void sizesAreCheckedBeforeAllocating() {
    const Tensor huge = i64({2}, {int64_t{1} << 20, int64_t{1} << 20});  // 4 TiB of fp32
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge, Op("ConstantOfShape").one({huge}));
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge,
                             Op("ConstantOfShape").one({i64({2}, {int64_t{1} << 40, int64_t{1} << 40})}));
    KernelLimits small{1000};
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge, Op("Expand").run({f32({1}, {1}), i64({1}, {1000})}, small));
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge, Op("Tile").run({f32({1}, {1}), i64({1}, {INT64_MAX})}, small));
    QVERIFY_THROWS_EXCEPTION(KernelOutputTooLarge,
                             Op("Range").run({i64({}, {INT64_MIN}), i64({}, {INT64_MAX}), i64({}, {1})}, small));
    QCOMPARE(Op("Expand").run({f32({1}, {1}), i64({1}, {250})}, small).size(), size_t{1});
  }
};

QTEST_GUILESS_MAIN(KernelTest)
#include "test_kernels.moc"
