#!/usr/bin/python3
"""Reference fixtures for `attn score` (d2l 10.3), from PyTorch.

Run with Debian's python (apt-get install python3-torch):
    /usr/bin/python3 scripts/gen_score_ref.py tests/ref/score

Writes one JSON file per case, tests/ref/score/NN_name.json. The C test
(tests/test_score.c) reads them; it never needs PyTorch.

The section's code, written here with plain torch ops (d2l is not
imported):

    masked_softmax(X, valid_lens): valid_lens None, (B,) repeated over the
        queries, or (B, Nq); X[k >= valid_len] = -1e6; softmax(X, dim=-1)
    AdditiveAttention: features = tanh(W_q(queries).unsqueeze(2)
        + W_k(keys).unsqueeze(1)); scores = w_v(features).squeeze(-1)
    DotProductAttention: scores = bmm(queries, keys^T) / sqrt(d)
    general (the section's exercise): scores = bmm(W(queries), keys^T),
        W = nn.Linear(query_size, key_size, bias=False): q^T W k
    sum (the other exercise): scores = (queries.unsqueeze(2)
        + keys.unsqueeze(1)).sum(-1), sum_i (q_i + k_i)
    output = bmm(masked_softmax(scores, valid_lens), values)

The first eight files were written by an earlier torch; run again
with today's, they come out with the same inputs and float32 results that
differ in the last bit or two, so they were kept as they were.

Each case is computed twice, in float64 and in float32, from the same
inputs and weights: float32 tensors drawn from torch's generator, written
with tolist(), so that every number in the file is exactly a float32 value
and attn reads the very numbers PyTorch used. "scores" is before the mask
(dot: after the 1/sqrt(d) scaling), as attn's --json writes it.
"""
import json
import math
import os
import sys

import torch


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1]).clone()
    mask = torch.arange(shape[-1], dtype=torch.float32)[None, :] < valid_lens[:, None]
    X[~mask] = -1e6
    return torch.softmax(X.reshape(shape), dim=-1)


def additive_scores(q, k, sd):
    qh = q @ sd["W_q.weight"].T
    kh = k @ sd["W_k.weight"].T
    features = torch.tanh(qh.unsqueeze(2) + kh.unsqueeze(1))
    return (features @ sd["w_v.weight"].T).squeeze(-1)


def general_scores(q, k, sd):
    return torch.bmm(q @ sd["W.weight"].T, k.transpose(1, 2))


def dot_scores(q, k):
    return torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])


def forward(case, dtype):
    q, k, v = (torch.tensor(case[n], dtype=dtype) for n in ("queries", "keys", "values"))
    lens = case.get("valid_lens")
    lens = None if lens is None else torch.tensor(lens)
    if case["score"] == "additive":
        sd = {n: torch.tensor(w, dtype=dtype) for n, w in case["state_dict"].items()}
        scores = additive_scores(q, k, sd)
    elif case["score"] == "general":
        sd = {n: torch.tensor(w, dtype=dtype) for n, w in case["state_dict"].items()}
        scores = general_scores(q, k, sd)
    elif case["score"] == "sum":
        scores = (q.unsqueeze(2) + k.unsqueeze(1)).sum(-1)
    else:
        scores = dot_scores(q, k)
    weights = masked_softmax(scores, lens)
    return {"scores": scores.tolist(), "attention_weights": weights.tolist(),
            "output": torch.bmm(weights, v).tolist()}


def linear(out, inp):
    bound = 1 / math.sqrt(inp)
    return (torch.rand(out, inp) * 2 - 1) * bound


def make(score, B, Nq, Nk, Dq, Dk, Dv, h=0, lens=None, scale=1.0, keys=None, values=None):
    case = {"score": score,
            "queries": (torch.randn(B, Nq, Dq) * scale).tolist(),
            "keys": (torch.randn(B, Nk, Dk) * scale if keys is None else keys).tolist(),
            "values": (torch.randn(B, Nk, Dv) if values is None else values).tolist(),
            "valid_lens": lens}
    if score == "additive":
        case["state_dict"] = {"W_q.weight": linear(h, Dq).tolist(),
                              "W_k.weight": linear(h, Dk).tolist(),
                              "w_v.weight": linear(1, h).tolist()}
    elif score == "general":
        case["state_dict"] = {"W.weight": linear(Dk, Dq).tolist()}
    return case


def book(score, Dq, keys="ones"):
    """The section's cell: queries (2, 1, Dq), keys (2, 10, 2) ones (or
    normal, the first exercise), values arange(40) as (10, 4) repeated over
    the batch, valid_lens [2, 6]."""
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    k = torch.ones(2, 10, 2) if keys == "ones" else None
    return make(score, 2, 1, 10, Dq, 2, 4, lens=[2, 6], keys=k, values=values)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/ref/score"
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(10_3)
    cases = {
        "additive_section": make("additive", 2, 1, 10, 20, 2, 4, 8, [2, 6]),
        "dot_section": make("dot", 2, 1, 10, 2, 2, 4, lens=[2, 6]),
        "additive_nonsquare_nolens": make("additive", 1, 3, 7, 5, 4, 2, 6),
        "dot_nonsquare_lens2d": make("dot", 3, 4, 5, 6, 6, 3,
                                     lens=[[1, 2, 3, 4], [5, 4, 3, 2], [0, 1, 6, 5]]),
        "additive_lens2d_zero": make("additive", 2, 3, 4, 3, 5, 2, 7,
                                     [[0, 4, 2], [1, 9, 3]]),
        "dot_lens_zero_and_over": make("dot", 3, 2, 6, 4, 4, 5, lens=[0, 9, 3]),
        "dot_wide_scores": make("dot", 1, 4, 8, 16, 16, 3, lens=[5], scale=2.0),
        "additive_h1_one_key": make("additive", 2, 2, 1, 3, 2, 3, 1, [1, 0]),
        # the exercises: the general score qᵀ W k on the book's inputs and random ones
        "general_section": book("general", 20),
        "general_section_random_keys": book("general", 20, keys="random"),
        "general_nonsquare_lens2d": make("general", 3, 4, 6, 5, 3, 2,
                                         lens=[[1, 2, 0, 7], [6, 5, 4, 3], [2, 2, 2, 1]]),
        "general_square_nolens": make("general", 1, 3, 5, 4, 4, 3, scale=2.0),
        # the sum score Σ (q_i + k_i): the book's inputs, random keys, several queries
        "sum_section": book("sum", 2),
        "sum_section_random_keys": book("sum", 2, keys="random"),
        "sum_queries_lens2d": make("sum", 2, 4, 6, 3, 3, 2,
                                   lens=[[3, 3, 0, 6], [2, 5, 5, 9]], scale=1.5),
    }
    for i, (name, case) in enumerate(cases.items(), 1):
        case["float64"] = forward(case, torch.float64)
        case["float32"] = forward(case, torch.float32)
        with open(os.path.join(out_dir, f"{i:02d}_{name}.json"), "w") as f:
            json.dump(case, f)
            f.write("\n")
    print(f"wrote {len(cases)} fixtures to {out_dir}")


if __name__ == "__main__":
    main()
