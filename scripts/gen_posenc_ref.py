#!/usr/bin/python3
"""Reference values of the positional encoding from PyTorch, for tests.

Run with Debian's python (apt-get install python3-torch python3-numpy):
    /usr/bin/python3 scripts/gen_posenc_ref.py > tests/ref/posenc_ref.json

For each case it builds P with the formula of d2l's PositionalEncoding,
    X = arange(N) / base ** (arange(0, D, 2) / D)
    P[:, 0::2] = sin(X);  P[:, 1::2] = cos(X)
in float64 (the exact values attn rounds to float32 once), and stores the
rows listed in "rows" (all rows for small cases, a sample for N = 10000).
For odd D, d2l's code would fail to assign the cos columns (there is one
fewer); the natural extension is used: the last column is a sin column.

It also records how far PyTorch's own float32 computation (d2l's code as
written) lies from the float64 values: float32 rounds the angle i·ω_j, so
the error grows with the position.
"""
import json
import sys

import torch


def encoding(N, D, base, dtype):
    X = torch.arange(N, dtype=dtype).reshape(-1, 1) / torch.pow(
        torch.tensor(base, dtype=dtype), torch.arange(0, D, 2, dtype=dtype) / D)
    P = torch.zeros((N, D), dtype=dtype)
    P[:, 0::2] = torch.sin(X)
    P[:, 1::2] = torch.cos(X[:, : D // 2])
    return P


CASES = [
    # (D, N, base)
    (32, 60, 10000.0),      # the chapter's figure
    (7, 13, 10000.0),       # odd D
    (1, 5, 10000.0),        # a single sin column
    (3, 40, 10000.0),
    (64, 200, 100.0),       # another base
    (33, 1000, 10000.0),
    (512, 10000, 10000.0),  # long: a sample of rows
]


def main():
    torch.set_num_threads(1)
    out = {"generator": "scripts/gen_posenc_ref.py",
           "torch_version": torch.__version__,
           "cases": []}
    for D, N, base in CASES:
        P = encoding(N, D, base, torch.float64)
        if N * D <= 5000:
            rows = list(range(N))
        else:
            rows = sorted(set([0, 1, 2, 3, 10, 59, 100, 511, 999, N // 2, N - 2, N - 1]))
            rows = [r for r in rows if r < N]
        case = {"dim": D, "steps": N, "base": base, "rows": rows,
                "P": [[float(v) for v in P[r].tolist()] for r in rows]}
        if D % 2 == 0:
            P32 = encoding(N, D, base, torch.float32).double()
            case["torch_float32_max_abs_diff"] = float((P32 - P).abs().max())
        out["cases"].append(case)
    json.dump(out, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
