#!/usr/bin/python3
"""Reference fixtures for `attn multihead --explain-shapes` (d2l 10.5's
transpose_qkv, transpose_output and repeat_interleave), from PyTorch.

Run with Debian's python (apt-get install python3-torch):
    /usr/bin/python3 scripts/gen_shapes_ref.py tests/ref/shapes

Writes one JSON file per case, tests/ref/shapes/NN_name.json. The C test
(tests/test_shapes.c) and the CLI test (tests/cli/shapes.py) read them;
neither needs PyTorch.

The layouts are taken on labelled tensors: X = arange(B·N·H).reshape(B,
N, H), so every entry of a result names the entry of X it came from. The
section's two functions, written here with plain torch ops:

    transpose_qkv(X, h):    X.reshape(B, N, h, H/h).permute(0, 2, 1, 3)
                             .reshape(B·h, N, H/h)
    transpose_output(X, h): X.reshape(B, h, N, p).permute(0, 2, 1, 3)
                             .reshape(B, N, h·p)

and beside them what a learner might write instead: the reshape without
the permute, valid_lens.repeat(h) (or .repeat(h, 1) for 2-D lengths)
instead of torch.repeat_interleave(valid_lens, h, dim=0). Then the heads
themselves: random float32 Q, K, V (B, N, H) through transpose_qkv,
DotProductAttention on the B·h slices with the interleaved lengths
(masked entries -1e6, as d2l's masked_softmax), transpose_output: the
concatenated heads (B, Nq, H) of d2l's MultiHeadAttention before W_o.
"""
import json
import math
import os
import sys

import torch


def transpose_qkv(X, h):
    B, N, H = X.shape
    return X.reshape(B, N, h, H // h).permute(0, 2, 1, 3).reshape(B * h, N, H // h)


def transpose_output(X, h):
    Bh, N, p = X.shape
    return X.reshape(Bh // h, h, N, p).permute(0, 2, 1, 3).reshape(Bh // h, N, h * p)


def reshape_only(X, h):
    B, N, H = X.shape
    return X.reshape(B * h, N, H // h)


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1]).clone()
    mask = torch.arange(shape[-1])[None, :] < valid_lens[:, None]
    X[~mask] = -1e6
    return torch.softmax(X.reshape(shape), dim=-1)


def heads(Q, K, V, h, valid_lens):
    q, k, v = (transpose_qkv(t, h) for t in (Q, K, V))
    lens = None
    if valid_lens is not None:
        lens = torch.repeat_interleave(valid_lens, repeats=h, dim=0)
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    return transpose_output(torch.bmm(masked_softmax(scores, lens), v), h)


CASES = [
    # name, B, Nq, Nk, H, h, valid_lens
    ("default", 2, 3, 3, 4, 2, [3, 2]),
    ("three_heads", 2, 4, 5, 12, 3, [5, 1]),
    ("one_head", 3, 2, 2, 4, 1, [2, 1, 0]),
    ("heads_equal_hiddens", 1, 3, 4, 4, 4, None),
    ("lens2d", 2, 3, 4, 6, 2, [[1, 2, 3], [4, 0, 2]]),
    ("wide", 3, 5, 2, 8, 4, [2, 1, 2]),
]


def case(name, B, Nq, Nk, H, h, lens, gen):
    X = torch.arange(B * Nq * H).reshape(B, Nq, H)
    p = H // h
    O = torch.arange(B * h * Nq * p).reshape(B * h, Nq, p)
    out = {"B": B, "Nq": Nq, "Nk": Nk, "H": H, "num_heads": h,
           "transpose_qkv": transpose_qkv(X, h).tolist(),
           "reshape_only": reshape_only(X, h).tolist(),
           "transpose_output": transpose_output(O, h).tolist(),
           "valid_lens": lens}
    if lens is not None:
        vl = torch.tensor(lens)
        out["repeat_interleave"] = torch.repeat_interleave(vl, repeats=h, dim=0).tolist()
        out["repeat"] = (vl.repeat(h) if vl.dim() == 1 else vl.repeat(h, 1)).tolist()
    Q = torch.randn(B, Nq, H, generator=gen)
    K = torch.randn(B, Nk, H, generator=gen)
    V = torch.randn(B, Nk, H, generator=gen)
    out.update(Q=Q.tolist(), K=K.tolist(), V=V.tolist())
    vl = None if lens is None else torch.tensor(lens)
    out["concat"] = heads(Q, K, V, h, vl).tolist()
    out["concat64"] = heads(Q.double(), K.double(), V.double(), h, vl).tolist()
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "tests/ref/shapes"
    os.makedirs(folder, exist_ok=True)
    gen = torch.Generator().manual_seed(7)
    for i, c in enumerate(CASES):
        path = os.path.join(folder, "%02d_%s.json" % (i + 1, c[0]))
        with open(path, "w") as f:
            json.dump(case(*c, gen), f)
            f.write("\n")
        print(path)


if __name__ == "__main__":
    main()
