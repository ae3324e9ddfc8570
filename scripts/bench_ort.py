#!/usr/bin/env python3
"""bench_ort.py — ONNX Runtime's side of scripts/bench: attn's own weights
and input, written as an ONNX model, run by onnxruntime-node, checked
against attn's output, timed.

    bench_ort.py ATTN_JSON WORKDIR NODE_MODULES RUNS

ATTN_JSON is the output of `attn selfattn --json` (X, state_dict, output,
num_heads; no biases). The model is the chapter's multi-head attention in
ONNX Runtime's own fused form:

    Q = X·W_qᵀ, K = X·W_kᵀ, V = X·W_vᵀ        three MatMul (ai.onnx)
    heads = MultiHeadAttention(Q, K, V)        com.microsoft, num_heads, scale 1/√p
    Y = heads·W_oᵀ                             MatMul

The ONNX file is protobuf; the few messages it needs are encoded here by
hand (field numbers from onnx.proto), so nothing but onnxruntime-node is
installed. Prints one JSON object: ORT's version and options, the largest
difference from attn's output, the timed runs and their median.
"""
import json
import os
import struct
import subprocess
import sys

# ---- protobuf, the few wire types ONNX needs -------------------------------


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, n):
    return varint(num << 3 | 0) + varint(n)


def field_bytes(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


# onnx.proto field numbers
FLOAT = 1  # TensorProto.DataType
ATTR_INT = 2  # AttributeProto.AttributeType


def tensor(name, dims, values):
    """TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9."""
    return (b"".join(field_varint(1, d) for d in dims) + field_varint(2, FLOAT) +
            field_bytes(8, name) + field_bytes(9, struct.pack("<%df" % len(values), *values)))


def value_info(name, dims):
    """ValueInfoProto{name = 1, type = 2: TypeProto{tensor_type = 1:
    {elem_type = 1, shape = 2: TensorShapeProto{dim = 1: {dim_value = 1}}}}}."""
    shape = b"".join(field_bytes(1, field_varint(1, d)) for d in dims)
    ttype = field_varint(1, FLOAT) + field_bytes(2, shape)
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, ttype))


def node(op, inputs, outputs, name, domain="", ints=()):
    """NodeProto: input = 1, output = 2, name = 3, op_type = 4,
    attribute = 5 (AttributeProto: name = 1, i = 3, type = 20), domain = 7."""
    b = b"".join(field_bytes(1, i) for i in inputs) + b"".join(field_bytes(2, o) for o in outputs)
    b += field_bytes(3, name) + field_bytes(4, op)
    for key, val in ints:
        b += field_bytes(5, field_bytes(1, key) + field_varint(3, val) + field_varint(20, ATTR_INT))
    if domain:
        b += field_bytes(7, domain)
    return b


def transposed(w):
    """An nn.Linear weight (out, in) as the (in, out) matrix MatMul wants,
    flattened row-major."""
    rows, cols = len(w), len(w[0])
    return [w[r][c] for c in range(cols) for r in range(rows)], [cols, rows]


def model(state, B, N, D, heads):
    """ModelProto: ir_version = 1, producer_name = 2, graph = 7,
    opset_import = 8 (OperatorSetIdProto: domain = 1, version = 2).
    GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12."""
    g = b""
    g += field_bytes(1, node("MatMul", ["X", "W_qT"], ["Q"], "W_q"))
    g += field_bytes(1, node("MatMul", ["X", "W_kT"], ["K"], "W_k"))
    g += field_bytes(1, node("MatMul", ["X", "W_vT"], ["V"], "W_v"))
    g += field_bytes(1, node("MultiHeadAttention", ["Q", "K", "V"], ["heads"], "attention",
                             "com.microsoft", [("num_heads", heads)]))
    g += field_bytes(1, node("MatMul", ["heads", "W_oT"], ["Y"], "W_o"))
    g += field_bytes(2, "attn_bench")
    for key in ("W_q", "W_k", "W_v", "W_o"):
        if key + ".bias" in state:
            sys.exit("bench_ort.py: biases are not modelled")
        vals, dims = transposed(state[key + ".weight"])
        g += field_bytes(5, tensor(key + "T", dims, vals))
    g += field_bytes(11, value_info("X", [B, N, D]))
    g += field_bytes(12, value_info("Y", [B, N, D]))
    return (field_varint(1, 8) + field_bytes(2, "attn scripts/bench") + field_bytes(7, g) +
            field_bytes(8, field_bytes(1, "") + field_varint(2, 17)) +
            field_bytes(8, field_bytes(1, "com.microsoft") + field_varint(2, 1)))


def flat(x):
    return [v for a in x for row in a for v in row]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    attn_json, work, node_modules, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(attn_json) as f:
        j = json.load(f)
    X = j["X"]
    B, N, D = len(X), len(X[0]), len(X[0][0])
    onnx_path = os.path.join(work, "attn_%dx%d_d%d_h%d.onnx" % (B, N, D, j["num_heads"]))
    with open(onnx_path, "wb") as f:
        f.write(model(j["state_dict"], B, N, D, j["num_heads"]))
    x_path, y_path = onnx_path + ".x.f32", onnx_path + ".y.f32"
    xs = flat(X)
    with open(x_path, "wb") as f:
        f.write(struct.pack("<%df" % len(xs), *xs))
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_ort.js")
    r = subprocess.run(["node", runner, onnx_path, x_path, y_path, "%d,%d,%d" % (B, N, D),
                        str(runs)], env=dict(os.environ, NODE_PATH=node_modules),
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench_ort.js failed:\n" + r.stderr)
    res = json.loads(r.stdout)
    with open(y_path, "rb") as f:
        y = struct.unpack("<%df" % (B * N * D), f.read())
    ref = flat(j["output"])
    scale = max(1.0, max(abs(v) for v in ref))
    res["max_abs_diff"] = max(abs(a - b) for a, b in zip(y, ref))
    res["max_rel_diff"] = res["max_abs_diff"] / scale
    res["onnx_bytes"] = os.path.getsize(onnx_path)
    for p in (x_path, y_path):
        os.remove(p)
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
