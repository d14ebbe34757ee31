#!/usr/bin/python3
"""Writes a ViT-B/16-shaped ONNX model (224x224 input, 16x16 patches, 12 layers, hidden 768, 12 heads, MLP 3072,
about 86 M parameters of seeded random weights) the way torch.onnx exports it at opset 17: LayerNormalization,
attention written out as MatMul/Reshape/Transpose/Softmax, GELU as Erf. For benchmarks only (compile speed against
ONNX Runtime's session creation); the numbers it computes mean nothing.
usage: make_vit.py OUT.onnx [LAYERS]"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
layers = int(sys.argv[2]) if len(sys.argv) > 2 else 12
H, HEADS, MLP, P, IMG = 768, 12, 3072, 16, 224
N = (IMG // P) ** 2 + 1
rng = np.random.default_rng(0)
inits, nodes = [], []


def w(name, *shape, scale=0.02):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def c(name, values, dtype=np.int64):
    inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
    return name


def op(kind, inputs, name, **attrs):
    nodes.append(helper.make_node(kind, inputs, [name + "_out"], name=name, **attrs))
    return name + "_out"


def layer_norm(x, prefix):
    return op("LayerNormalization", [x, w(prefix + ".weight", H, scale=1.0), w(prefix + ".bias", H)], prefix + "/LN",
              axis=-1, epsilon=1e-6)


def linear(x, prefix, n_in, n_out):
    return op("Add", [op("MatMul", [x, w(prefix + ".weight", n_in, n_out)], prefix + "/MatMul"),
                      w(prefix + ".bias", n_out)], prefix + "/Add")


c("heads_shape", [1, N, HEADS, H // HEADS])
c("merge_shape", [1, N, H])
inits.append(numpy_helper.from_array(np.array(1.0 / np.sqrt(H // HEADS), dtype=np.float32), "scale"))
inits.append(numpy_helper.from_array(np.array(np.sqrt(0.5), dtype=np.float32), "rsqrt2"))
inits.append(numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"))
inits.append(numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half"))

x = op("Conv", ["pixel_values", w("patch.weight", H, 3, P, P), w("patch.bias", H)], "/embeddings/patch/Conv",
       kernel_shape=[P, P], strides=[P, P])
x = op("Reshape", [x, c("flat_shape", [1, H, N - 1])], "/embeddings/Reshape")
x = op("Transpose", [x], "/embeddings/Transpose", perm=[0, 2, 1])
x = op("Concat", [w("cls_token", 1, 1, H), x], "/embeddings/Concat", axis=1)
x = op("Add", [x, w("position_embeddings", 1, N, H)], "/embeddings/Add")
for i in range(layers):
    p = "/encoder/layer.%d" % i
    h = layer_norm(x, p + "/layernorm_before")
    heads = []
    for part in ("query", "key", "value"):
        t = linear(h, p + "/attention/" + part, H, H)
        t = op("Reshape", [t, "heads_shape"], p + "/attention/" + part + "/Reshape")
        heads.append(op("Transpose", [t], p + "/attention/" + part + "/Transpose",
                        perm=[0, 2, 3, 1] if part == "key" else [0, 2, 1, 3]))
    s = op("Mul", [op("MatMul", [heads[0], heads[1]], p + "/attention/MatMul"), "scale"], p + "/attention/Mul")
    s = op("Softmax", [s], p + "/attention/Softmax", axis=-1)
    ctx = op("MatMul", [s, heads[2]], p + "/attention/MatMul_1")
    ctx = op("Transpose", [ctx], p + "/attention/Transpose", perm=[0, 2, 1, 3])
    ctx = op("Reshape", [ctx, "merge_shape"], p + "/attention/Reshape")
    x = op("Add", [x, linear(ctx, p + "/attention/output", H, H)], p + "/Add")
    h = layer_norm(x, p + "/layernorm_after")
    u = linear(h, p + "/intermediate", H, MLP)
    g = op("Erf", [op("Mul", [u, "rsqrt2"], p + "/gelu/Mul")], p + "/gelu/Erf")
    g = op("Mul", [op("Mul", [u, op("Add", [g, "one"], p + "/gelu/Add")], p + "/gelu/Mul_1"), "half"], p + "/gelu/Mul_2")
    x = op("Add", [x, linear(g, p + "/output", MLP, H)], p + "/Add_1")
x = layer_norm(x, "/layernorm")
cls = op("Gather", [x, c("zero", 0)], "/Gather", axis=1)
logits = linear(cls, "/classifier", H, 1000)
graph = helper.make_graph(nodes, "vit_b16", [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT,
                                                                          [1, 3, IMG, IMG])],
                          [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, 1000])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="kiln make_vit.py")
model.ir_version = 8
onnx.save(model, out)
print("wrote %s: %d nodes, %.1f M parameters" % (out, len(nodes), sum(np.prod(t.dims) for t in inits) / 1e6))
