#!/usr/bin/python3
"""Kiln's conformance cases for ONNX opsets 18 to 26, checked against ONNX Runtime.

Step 1 (this script, `make OUT`): one small model per op version and attribute variant, written in the ONNX backend
test layout (OUT/<case>/model.onnx, test_data_set_0/input_<i>.pb) plus each input's raw bytes for step 2.
Step 2 (`node ort_reference.js OUT`, onnxruntime-node 1.30): runs every model, writes each output's raw bytes.
Step 3 (this script, `finish OUT`): turns them into test_data_set_0/output_<i>.pb and removes the raw files.
`regenerate.sh` runs the three. python3-onnx 1.12 writes any opset number; the models are never checked by it.
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT, INT64, INT32, UINT8, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.UINT8, TensorProto.BOOL
STRING = TensorProto.STRING
FP8E4M3FN, FP8E4M3FNUZ, FP8E5M2, FP8E5M2FNUZ, UINT4, INT4 = 17, 18, 19, 20, 21, 22
NP = {FLOAT: np.float32, INT64: np.int64, INT32: np.int32, UINT8: np.uint8, BOOL: np.bool_}

rng = np.random.default_rng(2026)
CASES = []


def case(name, opset, nodes, inputs, outputs, inits=()):
    """inputs: [(name, elem_type, array)]; outputs: [(name, elem_type)]; inits: TensorProtos."""
    CASES.append((name, opset, nodes, inputs, outputs, list(inits)))


def rand(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def const(name, array, elem=None):
    array = np.asarray(array)
    return numpy_helper.from_array(array, name)


def single(name, opset, op, xs, out_type=FLOAT, n_out=1, inits=(), **attrs):
    """One node over inputs xs = [(name, elem, array)]; initializers named in `inits` feed later inputs."""
    in_names = [x[0] for x in xs] + [i.name for i in inits]
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, in_names, outs, **attrs)
    case(name, opset, [node], xs, [(o, out_type) for o in outs], inits)


def build():
    x4 = rand(2, 4, 5, 6)
    # ---- opset 18 ----
    a, b = rng.integers(-100, 100, (3, 4)).astype(np.int32), rng.integers(-100, 100, (4,)).astype(np.int32)
    for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
        single(f"{op.lower()}_18_broadcast", 18, op, [("a", INT32, a), ("b", INT32, b)], INT32)
    single("bitwisenot_18", 18, "BitwiseNot", [("x", UINT8, rng.integers(0, 255, (3, 5)).astype(np.uint8))], UINT8)
    single("centercroppad_18_crop_pad", 18, "CenterCropPad", [("x", FLOAT, rand(5, 4, 3))], FLOAT,
           inits=[const("shape", np.array([3, 6], np.int64))], axes=[0, 1])
    single("centercroppad_18_all_axes", 18, "CenterCropPad", [("x", FLOAT, rand(4, 7))], FLOAT,
           inits=[const("shape", np.array([6, 3], np.int64))])
    single("col2im_18", 18, "Col2Im", [("x", FLOAT, rand(1, 2 * 4, 9))], FLOAT,
           inits=[const("image", np.array([4, 4], np.int64)), const("block", np.array([2, 2], np.int64))])
    single("col2im_18_strides_pads_dilations", 18, "Col2Im", [("x", FLOAT, rand(1, 3 * 4, 6))], FLOAT,
           inits=[const("image", np.array([5, 6], np.int64)), const("block", np.array([2, 2], np.int64))],
           strides=[2, 2], pads=[1, 0, 0, 1], dilations=[2, 1])
    single("groupnormalization_18", 18, "GroupNormalization", [("x", FLOAT, x4)], FLOAT,
           inits=[const("scale", rand(2)), const("bias", rand(2))], num_groups=2, epsilon=1e-4)
    single("mish_18", 18, "Mish", [("x", FLOAT, rand(3, 7, lo=-6, hi=6))])
    for op in ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
               "ReduceProd", "ReduceSumSquare"]:
        xs = rand(2, 3, 4, lo=0.5, hi=1.5) if op == "ReduceLogSum" else rand(2, 3, 4)
        single(f"{op.lower()}_18_axes_input", 18, op, [("x", FLOAT, xs)], inits=[const("axes", np.array([1, -1], np.int64))])
        single(f"{op.lower()}_18_keepdims0", 18, op, [("x", FLOAT, xs)], inits=[const("axes", np.array([0], np.int64))],
               keepdims=0)
    single("reducemean_18_no_axes", 18, "ReduceMean", [("x", FLOAT, rand(2, 3, 4))])
    single("reducemean_18_noop_empty_axes", 18, "ReduceMean", [("x", FLOAT, rand(2, 3))], noop_with_empty_axes=1)
    single("split_18_num_outputs_uneven", 18, "Split", [("x", FLOAT, rand(7, 3))], n_out=3, axis=0, num_outputs=3)
    single("split_18_sizes_input", 18, "Split", [("x", FLOAT, rand(2, 6))], n_out=2,
           inits=[const("split", np.array([2, 4], np.int64))], axis=1)
    single("pad_18_axes", 18, "Pad", [("x", FLOAT, rand(2, 3, 4))],
           inits=[const("pads", np.array([1, 2, 0, 1], np.int64)), const("value", np.array(0.5, np.float32)),
                  const("axes", np.array([0, 2], np.int64))], mode="constant")
    single("pad_18_reflect", 18, "Pad", [("x", FLOAT, rand(3, 5))],
           inits=[const("pads", np.array([1, 2, 1, 2], np.int64))], mode="reflect")
    single("resize_18_axes_sizes", 18, "Resize", [("x", FLOAT, rand(1, 2, 4, 6))],
           inits=[const("roi", np.array([], np.float32)), const("scales", np.array([], np.float32)),
                  const("sizes", np.array([7, 9], np.int64))], axes=[2, 3], mode="linear")
    single("resize_18_not_larger", 18, "Resize", [("x", FLOAT, rand(1, 1, 4, 8))],
           inits=[const("roi", np.array([], np.float32)), const("scales", np.array([], np.float32)),
                  const("sizes", np.array([6, 6], np.int64))], axes=[2, 3], keep_aspect_ratio_policy="not_larger",
           mode="nearest")
    single("resize_18_not_smaller", 18, "Resize", [("x", FLOAT, rand(1, 1, 4, 8))],
           inits=[const("roi", np.array([], np.float32)), const("scales", np.array([], np.float32)),
                  const("sizes", np.array([6, 6], np.int64))], axes=[2, 3], keep_aspect_ratio_policy="not_smaller",
           mode="linear")
    single("resize_18_antialias_linear", 18, "Resize", [("x", FLOAT, rand(1, 1, 8, 8))],
           inits=[const("roi", np.array([], np.float32)), const("scales", np.array([1, 1, 0.5, 0.5], np.float32))],
           mode="linear", antialias=1)
    idx = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    single("scatterelements_18_max", 18, "ScatterElements", [("x", FLOAT, rand(3, 3))], FLOAT,
           inits=[const("indices", idx), const("updates", rand(2, 3))], axis=0, reduction="max")
    single("scatterelements_18_min", 18, "ScatterElements", [("x", FLOAT, rand(3, 3))], FLOAT,
           inits=[const("indices", idx), const("updates", rand(2, 3))], axis=0, reduction="min")
    single("scatternd_18_max", 18, "ScatterND", [("x", FLOAT, rand(4, 3))], FLOAT,
           inits=[const("indices", np.array([[1], [3]], np.int64)), const("updates", rand(2, 3))], reduction="max")
    single("lppool_18_ceil", 18, "LpPool", [("x", FLOAT, rand(1, 2, 7, 7))], kernel_shape=[3, 3], strides=[2, 2],
           ceil_mode=1, p=2)
    single("lppool_18_dilations", 18, "LpPool", [("x", FLOAT, rand(1, 2, 7, 7))], kernel_shape=[2, 2],
           dilations=[2, 2], p=3)
    # ---- opset 19 ----
    single("averagepool_19_dilations", 19, "AveragePool", [("x", FLOAT, rand(1, 2, 8, 8))], kernel_shape=[3, 3],
           dilations=[2, 2], strides=[1, 1])
    single("averagepool_19_ceil_pads", 19, "AveragePool", [("x", FLOAT, rand(1, 2, 7, 7))], kernel_shape=[3, 3],
           strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0)
    vals = np.array([0.0, -0.0, 0.3, -1.7, 3.14159, 100.5, 500.0, -1e5, 1e-3, 2.0 ** -9], np.float32)
    for code, tname in [(FP8E4M3FN, "e4m3fn"), (FP8E4M3FNUZ, "e4m3fnuz"), (FP8E5M2, "e5m2"), (FP8E5M2FNUZ, "e5m2fnuz")]:
        for sat in (1, 0):
            if sat == 0 and code != FP8E5M2:
                continue
            nodes = [helper.make_node("Cast", ["x"], ["q"], to=code, saturate=sat),
                     helper.make_node("Cast", ["q"], ["y0"], to=FLOAT)]
            case(f"cast_19_float_to_{tname}_sat{sat}", 19, nodes, [("x", FLOAT, vals)], [("y0", FLOAT)])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y0"])]
    case("quantize_dequantize_19_e4m3fn", 19, nodes, [("x", FLOAT, rand(4, 5, lo=-50, hi=50))], [("y0", FLOAT)],
         [const("s", np.array(0.25, np.float32)), raw_tensor("z", FP8E4M3FN, [], b"\x00")])
    single("pad_19_wrap", 19, "Pad", [("x", FLOAT, rand(3, 4))], inits=[const("pads", np.array([1, 2, 2, 1], np.int64))],
           mode="wrap")
    single("resize_19_half_pixel_symmetric", 19, "Resize", [("x", FLOAT, rand(1, 1, 4, 4))],
           inits=[const("roi", np.array([], np.float32)), const("scales", np.array([1, 1, 1.5, 2.25], np.float32))],
           mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    single("deformconv_19", 19, "DeformConv", [("x", FLOAT, rand(1, 2, 5, 5))],
           inits=[const("w", rand(3, 2, 3, 3)), const("offset", rand(1, 18, 3, 3, lo=-1, hi=1))], kernel_shape=[3, 3])
    single("deformconv_19_mask_bias_groups", 19, "DeformConv", [("x", FLOAT, rand(2, 4, 6, 6))],
           inits=[const("w", rand(4, 2, 2, 2)), const("offset", rand(2, 2 * 2 * 4, 4, 4, lo=-1.5, hi=1.5)),
                  const("b", rand(4)), const("mask", rand(2, 2 * 4, 4, 4, lo=0, hi=1))],
           group=2, offset_group=2, strides=[2, 2], pads=[1, 1, 1, 1], kernel_shape=[2, 2])
    # ---- opset 20 ----
    theta2 = rand(2, 2, 3, lo=-1, hi=1)
    for align in (0, 1):
        single(f"affinegrid_20_2d_align{align}", 20, "AffineGrid", [("theta", FLOAT, theta2)],
               inits=[const("size", np.array([2, 3, 4, 5], np.int64))], align_corners=align)
    single("affinegrid_20_3d", 20, "AffineGrid", [("theta", FLOAT, rand(1, 3, 4, lo=-1, hi=1))],
           inits=[const("size", np.array([1, 1, 2, 3, 4], np.int64))])
    single("dft_20_axis_input", 20, "DFT", [("x", FLOAT, rand(2, 8, 2))], inits=[const("len", np.array(8, np.int64)),
                                                                              const("axis", np.array(1, np.int64))])
    # Within [-3, 3]: below, 1 + tanh(...) cancels in ONNX Runtime's float arithmetic (-9.422e-5 where double gives
    # -9.448e-5 at x = -3.8), beyond the suite's relative tolerance though far inside the fp32 gate.
    for approx in ("none", "tanh"):
        single(f"gelu_20_{approx}", 20, "Gelu", [("x", FLOAT, rand(3, 8, lo=-3, hi=3))], approximate=approx)
    grid = rand(1, 3, 4, 2, lo=-1.2, hi=1.2)
    for mode, pad, align in [("linear", "zeros", 0), ("linear", "border", 1), ("nearest", "zeros", 0),
                             ("linear", "reflection", 0), ("nearest", "reflection", 1), ("cubic", "zeros", 0),
                             ("cubic", "border", 1), ("cubic", "reflection", 0)]:
        single(f"gridsample_20_{mode}_{pad}_align{align}", 20, "GridSample", [("x", FLOAT, rand(1, 2, 4, 5)),
                                                                            ("grid", FLOAT, grid)],
               mode=mode, padding_mode=pad, align_corners=align)
    single("gridsample_20_3d_linear", 20, "GridSample", [("x", FLOAT, rand(1, 2, 3, 4, 5)),
                                                         ("grid", FLOAT, rand(1, 2, 3, 2, 3, lo=-1, hi=1))], mode="linear")
    special = np.array([1.0, np.inf, -np.inf, np.nan, 0.0, -3.5], np.float32)
    single("isinf_20", 20, "IsInf", [("x", FLOAT, special)], BOOL)
    single("isinf_20_negative_only", 20, "IsInf", [("x", FLOAT, special)], BOOL, detect_positive=0)
    single("isnan_20", 20, "IsNaN", [("x", FLOAT, special)], BOOL)
    single("reducemax_20_bool", 20, "ReduceMax", [("x", BOOL, rng.integers(0, 2, (3, 4)).astype(np.bool_))], BOOL,
           inits=[const("axes", np.array([1], np.int64))])
    words = np.array([["a b", "  lead trail  "], ["x,y,,z", ""]], dtype=object)
    single("stringconcat_20_broadcast", 20, "StringConcat", [("a", STRING, words),
                                                             ("b", STRING, np.array(["!", "?"], dtype=object))], STRING)
    case("stringsplit_20_whitespace", 20, [helper.make_node("StringSplit", ["x"], ["y0", "y1"])],
         [("x", STRING, words)], [("y0", STRING), ("y1", INT64)])
    split_out = [helper.make_node("StringSplit", ["x"], ["y0", "y1"], delimiter=",", maxsplit=2)]
    case("stringsplit_20_delimiter_maxsplit", 20, split_out, [("x", STRING, words)], [("y0", STRING), ("y1", INT64)])
    single("regexfullmatch_20", 20, "RegexFullMatch",
           [("x", STRING, np.array(["www.google.com", "www.facebook.com", "google.org"], dtype=object))], BOOL,
           pattern=r"www\.[\w.-]+\.\bcom\b")
    single("constantofshape_20", 20, "ConstantOfShape", [("s", INT64, np.array([2, 3], np.int64))], FLOAT,
           value=numpy_helper.from_array(np.array([1.5], np.float32), "v"))
    # ---- opset 21 ----
    for code, tname, lo, hi in [(INT4, "int4", -9, 9), (UINT4, "uint4", 0, 17)]:
        # No ties: ONNX says half to even, ONNX Runtime 1.30 rounds them away from zero (docs/onnx-opsets.md).
        ints = (np.array([0, 1.2, 2.7, 3, -5.4, 7, -1, -8, 6.6, 4], np.float32) if code == INT4
                else np.array([0, 1.2, 2.7, 3.9, 6.1, 8.4, 11.6, 14.2, 15, 9.7], np.float32))
        nodes = [helper.make_node("Cast", ["x"], ["q"], to=code), helper.make_node("Cast", ["q"], ["y0"], to=FLOAT)]
        case(f"cast_21_float_to_{tname}", 21, nodes, [("x", FLOAT, ints)], [("y0", FLOAT)])
    # Weight-only int4 MatMul, blocked along K as exporters write it: W [K, N] int4 with a scale per 4 rows.
    k, n_, block = 8, 6, 4
    wq = rng.integers(-8, 8, (k, n_)).astype(np.int8)
    packed = pack4(wq.flatten())
    nodes = [helper.make_node("DequantizeLinear", ["wq", "ws"], ["w"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "w"], ["y0"])]
    case("matmul_int4_weights_blocked_21", 21, nodes, [("x", FLOAT, rand(3, k))], [("y0", FLOAT)],
         [raw_tensor("wq", INT4, [k, n_], packed),
          const("ws", rng.uniform(0.01, 0.1, (k // block, n_)).astype(np.float32))])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, block_size=2),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y0"], axis=1, block_size=2)]
    zp = pack4(np.array([8, 3, 12, 7, 1, 9], np.int8))
    case("quantize_dequantize_21_uint4_blocked", 21, nodes, [("x", FLOAT, rand(2, 6, lo=-3, hi=3))], [("y0", FLOAT)],
         [const("s", rng.uniform(0.2, 0.5, (2, 3)).astype(np.float32)), raw_tensor("z", UINT4, [2, 3], zp)])
    single("groupnormalization_21_per_channel", 21, "GroupNormalization", [("x", FLOAT, x4)],
           inits=[const("scale", rand(4)), const("bias", rand(4))], num_groups=2)
    single("pad_21_edge", 21, "Pad", [("x", FLOAT, rand(2, 3))], inits=[const("pads", np.array([0, 1, 1, 2], np.int64))],
           mode="edge")
    # ---- opset 22 (bfloat16 was added; fp32 keeps its meaning) ----
    single("conv_22", 22, "Conv", [("x", FLOAT, rand(1, 3, 6, 6))], inits=[const("w", rand(4, 3, 3, 3))], pads=[1, 1, 1, 1])
    single("mish_22", 22, "Mish", [("x", FLOAT, rand(4, 5, lo=-5, hi=5))])
    single("hardswish_22", 22, "HardSwish", [("x", FLOAT, rand(4, 5, lo=-5, hi=5))])
    single("lpnormalization_22_p1", 22, "LpNormalization", [("x", FLOAT, rand(3, 5))], axis=0, p=1)
    single("lpnormalization_22_p2", 22, "LpNormalization", [("x", FLOAT, rand(2, 3, 4))], axis=-1, p=2)
    # MaxRoiPool at opset 21: ONNX Runtime 1.30 registers it up to there (22 only added bf16).
    rois = np.array([[0, 0, 0, 3, 3], [1, 1, 2, 6, 5], [0, 2.2, 1.6, 4.9, 6.1]], np.float32)
    single("maxroipool_21", 21, "MaxRoiPool", [("x", FLOAT, rand(2, 3, 8, 8)), ("r", FLOAT, rois)],
           pooled_shape=[2, 3], spatial_scale=1.0)
    single("maxroipool_21_scaled", 21, "MaxRoiPool", [("x", FLOAT, rand(2, 2, 8, 8)), ("r", FLOAT, rois * np.array([1, 2, 2, 2, 2], np.float32))],
           pooled_shape=[3, 3], spatial_scale=0.5)
    logp = np.log(rng.dirichlet(np.ones(4), size=(3, 5)).astype(np.float32)).transpose(0, 2, 1).copy()
    tgt = np.array([[0, 3, 1, 2, 1], [2, 2, 0, 3, 1], [1, 0, 3, 3, 2]], np.int64)
    for red in ("none", "sum", "mean"):
        single(f"nllloss_22_{red}_weight_ignore", 22, "NegativeLogLikelihoodLoss",
               [("x", FLOAT, logp), ("t", INT64, tgt)], inits=[const("w", rng.uniform(0.5, 2, 4).astype(np.float32))],
               reduction=red, ignore_index=3)
    single("averagepool_22", 22, "AveragePool", [("x", FLOAT, rand(1, 1, 6, 6))], kernel_shape=[2, 2], strides=[2, 2])
    # ---- opset 23 ----
    q4, k4, v4 = rand(1, 2, 3, 4), rand(1, 2, 5, 4), rand(1, 2, 5, 4)
    single("attention_23_4d", 23, "Attention", [("q", FLOAT, q4), ("k", FLOAT, k4), ("v", FLOAT, v4)])
    single("attention_23_4d_causal_scale", 23, "Attention", [("q", FLOAT, q4), ("k", FLOAT, k4), ("v", FLOAT, v4)],
           is_causal=1, scale=0.3)
    single("attention_23_3d_gqa", 23, "Attention", [("q", FLOAT, rand(2, 3, 4 * 4)), ("k", FLOAT, rand(2, 5, 2 * 4)),
                                                    ("v", FLOAT, rand(2, 5, 2 * 6))], q_num_heads=4, kv_num_heads=2)
    single("attention_23_bool_mask", 23, "Attention", [("q", FLOAT, q4), ("k", FLOAT, k4), ("v", FLOAT, v4),
                                                       ("m", BOOL, rng.integers(0, 2, (3, 5)).astype(np.bool_))])
    single("attention_23_float_mask_softcap", 23, "Attention", [("q", FLOAT, q4), ("k", FLOAT, k4), ("v", FLOAT, v4),
                                                                ("m", FLOAT, rand(1, 1, 3, 5))], softcap=2.0)
    nodes = [helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y0", "y1", "y2"], is_causal=1)]
    case("attention_23_kv_cache_causal", 23, nodes,
         [("q", FLOAT, rand(1, 2, 2, 4)), ("k", FLOAT, rand(1, 2, 2, 4)), ("v", FLOAT, rand(1, 2, 2, 4)),
          ("pk", FLOAT, rand(1, 2, 3, 4)), ("pv", FLOAT, rand(1, 2, 3, 4))], [("y0", FLOAT), ("y1", FLOAT), ("y2", FLOAT)])
    for axis in (-1, 1):
        single(f"rmsnormalization_23_axis{axis}", 23, "RMSNormalization", [("x", FLOAT, rand(2, 3, 4))],
               inits=[const("scale", rand(4) if axis == -1 else rand(3, 4))], axis=axis, epsilon=1e-3)
    cos = rand(1, 3, 2, lo=-1, hi=1)
    sin = rand(1, 3, 2, lo=-1, hi=1)
    single("rotaryembedding_23_4d", 23, "RotaryEmbedding", [("x", FLOAT, rand(1, 2, 3, 4)), ("c", FLOAT, cos),
                                                             ("s", FLOAT, sin)])
    single("rotaryembedding_23_4d_interleaved", 23, "RotaryEmbedding", [("x", FLOAT, rand(1, 2, 3, 4)), ("c", FLOAT, cos),
                                                                         ("s", FLOAT, sin)], interleaved=1)
    single("rotaryembedding_23_3d_position_ids_partial", 23, "RotaryEmbedding",
           [("x", FLOAT, rand(2, 3, 2 * 8)), ("c", FLOAT, rand(10, 2, lo=-1, hi=1)), ("s", FLOAT, rand(10, 2, lo=-1, hi=1)),
            ("p", INT64, np.array([[0, 4, 9], [1, 2, 3]], np.int64))], num_heads=2, rotary_embedding_dim=4)
    single("pad_23_constant", 23, "Pad", [("x", FLOAT, rand(2, 2))], inits=[const("pads", np.array([1, 0, 0, 1], np.int64))])
    # ---- opset 24 ----
    nodes = [helper.make_node("Attention", ["q", "k", "v", "", "", "", "n"], ["y0"], is_causal=1)]
    case("attention_24_nonpad_kv_seqlen_causal", 24, nodes,
         [("q", FLOAT, rand(2, 2, 2, 4)), ("k", FLOAT, rand(2, 2, 6, 4)), ("v", FLOAT, rand(2, 2, 6, 4)),
          ("n", INT64, np.array([4, 6], np.int64))], [("y0", FLOAT)])
    single("swish_24", 24, "Swish", [("x", FLOAT, rand(3, 6, lo=-5, hi=5))], alpha=1.5)
    for mode, where in [("linear", [1, 3]), ("circular", [4, 5])]:
        single(f"tensorscatter_24_{mode}", 24, "TensorScatter",
               [("past", FLOAT, rand(2, 3, 6, 4)), ("upd", FLOAT, rand(2, 3, 2, 4)),
                ("w", INT64, np.array(where, np.int64))], mode=mode)
    e8 = np.array([0.3, 3.0, 1.0, 0.75, 1e-3, 100.0, 6.0e37, 0.0], np.float32)
    for rmode in ("up", "down", "nearest"):
        nodes = [helper.make_node("Cast", ["x"], ["q"], to=24, round_mode=rmode),
                 helper.make_node("Cast", ["q"], ["y0"], to=FLOAT)]
        case(f"cast_24_float_to_e8m0_{rmode}", 24, nodes, [("x", FLOAT, e8)], [("y0", FLOAT)])
    nodes = [helper.make_node("TopK", ["x", "k"], ["y0", "y1"], axis=1)]
    case("topk_24", 24, nodes, [("x", FLOAT, rand(3, 7))], [("y0", FLOAT), ("y1", INT64)],
         [const("k", np.array([3], np.int64))])
    # ---- opset 25: int2 / uint2 ----
    for code, tname, vals2 in [(26, "int2", [0, 1.2, -1.7, -2, 1, -0.4]), (25, "uint2", [0, 1.2, 2.7, 3, 1.9, 0.4])]:
        nodes = [helper.make_node("Cast", ["x"], ["q"], to=code), helper.make_node("Cast", ["q"], ["y0"], to=FLOAT)]
        case(f"cast_25_float_to_{tname}", 25, nodes, [("x", FLOAT, np.array(vals2, np.float32))], [("y0", FLOAT)])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=26),
             helper.make_node("DequantizeLinear", ["q", "s"], ["y0"])]
    case("quantize_dequantize_25_int2", 25, nodes, [("x", FLOAT, rand(3, 5, lo=-1, hi=1))], [("y0", FLOAT)],
         [const("s", np.array(0.4, np.float32))])
    single("reshape_25", 25, "Reshape", [("x", FLOAT, rand(2, 6))], inits=[const("shape", np.array([3, 4], np.int64))])
    # ---- opset 26 ----
    single("bitcast_26_float_to_int32", 26, "BitCast", [("x", FLOAT, rand(2, 3))], INT32, to=INT32)
    for excl, rev in [(0, 0), (1, 0), (0, 1)]:
        single(f"cumprod_26_exclusive{excl}_reverse{rev}", 26, "CumProd", [("x", FLOAT, rand(3, 4, lo=0.5, hi=1.5))],
               inits=[const("axis", np.array(1, np.int64))], exclusive=excl, reverse=rev)


def raw_tensor(name, code, dims, data):
    """A TensorProto of a type python3-onnx 1.12 has no numpy mapping for (float8, int4): raw bytes as given."""
    t = TensorProto()
    t.name = name
    t.data_type = code
    t.dims.extend(dims)
    t.raw_data = data
    return t


def pack4(values):
    v = (np.asarray(values).astype(np.int64) & 0xF).astype(np.uint8)
    if len(v) % 2:
        v = np.append(v, np.uint8(0))
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8).tobytes()


def make(out):
    build()
    if os.path.isdir(out):
        shutil.rmtree(out)
    for name, opset, nodes, inputs, outputs, inits in CASES:
        d = os.path.join(out, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        graph = helper.make_graph(nodes, name,
                                  [helper.make_tensor_value_info(n, t, a.shape) for n, t, a in inputs],
                                  [helper.make_tensor_value_info(n, t, None) for n, t in outputs], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="kiln-conformance")
        model.ir_version = 10
        onnx.save(model, os.path.join(d, "model.onnx"))
        manifest = {"inputs": [], "outputs": [o[0] for o in outputs]}
        for i, (n, t, a) in enumerate(inputs):
            tp = numpy_helper.from_array(np.ascontiguousarray(a), n)
            with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
                f.write(tp.SerializeToString())
            if t == STRING:
                with open(os.path.join(d, f"input_{i}.json"), "w") as f:
                    json.dump([str(v) for v in a.flatten()], f)
                manifest["inputs"].append({"name": n, "type": "string", "dims": list(a.shape)})
            else:
                a.tofile(os.path.join(d, f"input_{i}.raw"))
                manifest["inputs"].append({"name": n, "type": str(a.dtype), "dims": list(a.shape)})
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(manifest, f)
    print(f"{len(CASES)} cases in {out}")


def finish(out):
    done = failed = 0
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        with open(os.path.join(d, "manifest.json")) as f:
            manifest = json.load(f)
        result = os.path.join(d, "ort.json")
        if not os.path.exists(result):
            failed += 1
            print(f"{name}: ONNX Runtime gave no outputs; case removed")
            shutil.rmtree(d)
            continue
        with open(result) as f:
            ort = json.load(f)
        if "error" in ort:
            failed += 1
            print(f"{name}: ONNX Runtime cannot run it ({ort['error'][:120]}); case removed")
            shutil.rmtree(d)
            continue
        for i, o in enumerate(ort["outputs"]):
            if o["type"] == "string":
                with open(os.path.join(d, f"output_{i}.json")) as f:
                    a = np.array([v.encode() for v in json.load(f)], dtype=object).reshape(o["dims"])
            else:
                a = np.fromfile(os.path.join(d, f"output_{i}.raw"), dtype=np.dtype(o["type"])).reshape(o["dims"])
            tp = numpy_helper.from_array(a, o["name"])
            with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
                f.write(tp.SerializeToString())
        for f in os.listdir(d):
            if f.endswith(".raw") or f.endswith(".json"):
                os.remove(os.path.join(d, f))
        done += 1
    print(f"{done} cases with ONNX Runtime's outputs, {failed} removed")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "finish"):
        sys.exit("usage: generate.py make|finish OUT_DIR")
    (make if sys.argv[1] == "make" else finish)(sys.argv[2])
