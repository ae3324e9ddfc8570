#!/usr/bin/python3
"""Reference fixtures for `attn selfattn --depth` (d2l 10.6's exercise:
what stacking self-attention does), from PyTorch.

Run with Debian's python (apt-get install python3-torch):
    /usr/bin/python3 scripts/gen_collapse_ref.py tests/ref/collapse

Writes one JSON file per case, tests/ref/collapse/NN_name.json. The C test
(tests/test_collapse.c) reads them; it never needs PyTorch.

d2l's MultiHeadAttention (bias=False, eval mode, no valid_lens), written
here with plain torch ops: W_q, W_k, W_v, W_o as nn.Linear; the heads by
transpose_qkv; DotProductAttention; transpose_output; W_o. The same module
(the same weights) applied three times, three ways:

    attention   X <- mha(X)
    residual    X <- X + mha(X)
    addnorm     X <- LayerNorm(X + mha(X))   (nn.LayerNorm(H): weight 1, bias 0)

and at depths 0 ... 3, averaged over the examples, the spread
(1/N) sum_i |x_i - mean| and the rank-1 residual |X - 1 mean^T|_F / |X|_F.
Inputs and weights are float32 numbers (so attn reads the very values);
the computation runs in float64.
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


def mha(X, sd, h):
    q, k, v = (transpose_qkv(X @ sd[n].T, h) for n in ("W_q.weight", "W_k.weight", "W_v.weight"))
    w = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1]), dim=-1)
    return transpose_output(torch.bmm(w, v), h) @ sd["W_o.weight"].T


def measures(X):
    mean = X.mean(dim=1, keepdim=True)
    spread = (X - mean).norm(dim=2).mean(dim=1)
    res = (X - mean).flatten(1).norm(dim=1) / X.flatten(1).norm(dim=1)
    return spread.mean().item(), res.mean().item()


CASES = [("default", 2, 4, 8, 2), ("one_head", 1, 5, 6, 1), ("three_heads", 3, 3, 12, 3)]


def case(B, N, H, h, gen):
    X = torch.randn(B, N, H, generator=gen)
    bound = 1 / math.sqrt(H)
    sd = {n: (torch.rand(H, H, generator=gen) * 2 - 1) * bound
          for n in ("W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight")}
    out = {"X": X.tolist(), "num_heads": h, "state_dict": {n: t.tolist() for n, t in sd.items()}}
    sd64 = {n: t.double() for n, t in sd.items()}
    ln = torch.nn.LayerNorm(H).double()
    for kind in ("attention", "residual", "addnorm"):
        Y, rows = X.double(), []
        for _ in range(4):
            rows.append(measures(Y))
            A = mha(Y, sd64, h)
            Y = A if kind == "attention" else Y + A if kind == "residual" else ln(Y + A)
        out[kind] = {"spread": [r[0] for r in rows], "rank1_residual": [r[1] for r in rows]}
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "tests/ref/collapse"
    os.makedirs(folder, exist_ok=True)
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for i, (name, B, N, H, h) in enumerate(CASES):
            path = os.path.join(folder, "%02d_%s.json" % (i + 1, name))
            with open(path, "w") as f:
                json.dump(case(B, N, H, h, gen), f)
                f.write("\n")
            print(path)


if __name__ == "__main__":
    main()
