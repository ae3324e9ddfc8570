#!/usr/bin/python3
"""Reference fixtures for `attn multihead` and `attn selfattn`, from PyTorch.

Run with Debian's python (apt-get install python3-torch python3-numpy):
    /usr/bin/python3 scripts/gen_attention_ref.py tests/ref/attention

Writes one JSON file per case, tests/ref/attention/NN_name.json, plus a
README. The C tests read these files; they never need PyTorch.

The computation is d2l's MultiHeadAttention(key_size, query_size,
value_size, num_hiddens, num_heads, dropout, bias), written here from its
formulas with torch ops (d2l is not imported), float32, eval mode, no
dropout:

    Q = queries·W_qᵀ (+b_q)   K = keys·W_kᵀ (+b_k)   V = values·W_vᵀ (+b_v)
    head i takes columns i·p … i·p+p−1 of Q, K, V   (p = H / num_heads)
    dot:      scores = Q_i K_iᵀ / sqrt(p)
    additive: scores[q][k] = w_v · tanh(Q_i[q]·W_aqᵀ + K_i[k]·W_akᵀ)
              (d2l's AdditiveAttention(p, p, A), shared by the heads)
    masking:  d2l's masked_softmax: a score at key k >= valid_len is
              REPLACED by -1e6; valid_lens is (B,) or (B, Nq); "causal"
              also replaces scores at k > q; then softmax over the keys
    output  = concat(weights_i·V_i)·W_oᵀ (+b_o)

Self-attention fixtures use queries = keys = values = X.

Every number in a fixture comes from tensor.tolist() of a float32 tensor
(or is an int), so it is exactly a float32 value; parsing it as a double
and rounding to float gives back the very value PyTorch used.

Checks made here (assert), for every fixture:
  * an independent float64 reference (plain loops over batch, head, query
    and key with numpy) agrees with the float32 result within the tests'
    tolerance |a-b| <= 1e-5 + 1e-4*|ref| (and the margin is printed);
  * for dot scoring, torch.nn.MultiheadAttention with the same weights
    (and the same mask as a boolean attn_mask) gives the same output and
    per-head attention weights (rows where every key is masked excepted:
    there it gives NaN, d2l's -1e6 gives uniform weights);
  * every attention-weights row sums to 1 within 1e-5; masked keys get
    weight exactly 0 (rows with some unmasked key); all-masked rows are
    uniform 1/Nk; everything is finite;
  * the written file, read back, reproduces the tensors bit for bit.
"""
import json
import math
import os
import re
import sys

import numpy as np
import torch
from torch import nn

ATOL = 1e-5
RTOL = 1e-4
MASK_VALUE = -1e6


# ---------------------------------------------------------------------------
# The computation (float32, torch)

def linear(x, sd, name):
    y = torch.matmul(x, sd[name + ".weight"].T)
    if name + ".bias" in sd:
        y = y + sd[name + ".bias"]
    return y


def split_heads(X, nh):
    """(B, N, H) -> (B, NH, N, p); head i takes columns i*p .. i*p+p-1."""
    B, N, H = X.shape
    return X.reshape(B, N, nh, H // nh).permute(0, 2, 1, 3)


def keep_mask(B, Nq, Nk, valid_lens, causal):
    """Boolean (B, Nq, Nk): True where the score is kept."""
    k = torch.arange(Nk)
    keep = torch.ones((B, Nq, Nk), dtype=torch.bool)
    if valid_lens is not None:
        if valid_lens.dim() == 1:
            keep &= k[None, None, :] < valid_lens[:, None, None]
        else:
            keep &= k[None, None, :] < valid_lens[:, :, None]
    if causal:
        q = torch.arange(Nq)
        keep &= (k[None, :] <= q[:, None])[None]
    return keep


def multihead(queries, keys, values, sd, nh, score, causal, valid_lens):
    B, Nq, _ = queries.shape
    Nk = keys.shape[1]
    Q = split_heads(linear(queries, sd, "W_q"), nh)
    K = split_heads(linear(keys, sd, "W_k"), nh)
    V = split_heads(linear(values, sd, "W_v"), nh)
    p = Q.shape[-1]
    if score == "dot":
        scores = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(p)
    else:
        qf = torch.matmul(Q, sd["attention.W_q.weight"].T)   # (B,NH,Nq,A)
        kf = torch.matmul(K, sd["attention.W_k.weight"].T)   # (B,NH,Nk,A)
        feat = torch.tanh(qf.unsqueeze(3) + kf.unsqueeze(2))  # (B,NH,Nq,Nk,A)
        scores = torch.matmul(feat, sd["attention.w_v.weight"].T).squeeze(-1)
    keep = keep_mask(B, Nq, Nk, valid_lens, causal)
    scores = scores.masked_fill(~keep[:, None], MASK_VALUE)
    weights = torch.softmax(scores, dim=-1)
    heads = torch.matmul(weights, V)                          # (B,NH,Nq,p)
    concat = heads.permute(0, 2, 1, 3).reshape(B, Nq, nh * p)
    return linear(concat, sd, "W_o"), weights


# ---------------------------------------------------------------------------
# Independent float64 reference: plain loops, numpy

def reference64(queries, keys, values, sd, nh, score, causal, valid_lens):
    q_in = queries.double().numpy()
    k_in = keys.double().numpy()
    v_in = values.double().numpy()
    W = {n: t.double().numpy() for n, t in sd.items()}
    vl = None if valid_lens is None else valid_lens.numpy()
    B, Nq, _ = q_in.shape
    Nk = k_in.shape[1]
    H = W["W_q.weight"].shape[0]
    p = H // nh

    def lin(x, name):
        y = np.array([[W[name + ".weight"] @ row for row in x_b] for x_b in x])
        if name + ".bias" in W:
            y = y + W[name + ".bias"]
        return y

    Q, K, V = lin(q_in, "W_q"), lin(k_in, "W_k"), lin(v_in, "W_v")
    weights = np.zeros((B, nh, Nq, Nk))
    concat = np.zeros((B, Nq, H))
    for b in range(B):
        for h in range(nh):
            cols = slice(h * p, h * p + p)
            for qi in range(Nq):
                s = np.zeros(Nk)
                for ki in range(Nk):
                    qv, kv = Q[b, qi, cols], K[b, ki, cols]
                    if score == "dot":
                        s[ki] = sum(qv[j] * kv[j] for j in range(p)) / math.sqrt(p)
                    else:
                        f = np.tanh(W["attention.W_q.weight"] @ qv
                                    + W["attention.W_k.weight"] @ kv)
                        s[ki] = float(W["attention.w_v.weight"][0] @ f)
                    if vl is not None:
                        lim = vl[b] if vl.ndim == 1 else vl[b, qi]
                        if ki >= lim:
                            s[ki] = MASK_VALUE
                    if causal and ki > qi:
                        s[ki] = MASK_VALUE
                e = np.exp(s - s.max())
                w = e / e.sum()
                weights[b, h, qi] = w
                concat[b, qi, cols] = sum(w[ki] * V[b, ki, cols] for ki in range(Nk))
    out = lin(concat, "W_o")
    return out, weights


# ---------------------------------------------------------------------------
# Second check: torch.nn.MultiheadAttention with the same weights (dot only)

def torch_mha_check(queries, keys, values, sd, nh, causal, valid_lens):
    H = sd["W_q.weight"].shape[0]
    Dq, Dk, Dv = queries.shape[-1], keys.shape[-1], values.shape[-1]
    has_bias = "W_q.bias" in sd
    q_in, Wq, bq = queries, sd["W_q.weight"], sd.get("W_q.bias")
    if Dq != H:
        # nn.MultiheadAttention needs query dim == embed_dim: project the
        # queries here and give it an identity query projection.
        q_in = linear(queries, sd, "W_q")
        Wq = torch.eye(H)
        bq = torch.zeros(H) if has_bias else None
    m = nn.MultiheadAttention(H, nh, dropout=0.0, bias=has_bias, kdim=Dk,
                              vdim=Dv, batch_first=True)
    m.eval()
    with torch.no_grad():
        if m._qkv_same_embed_dim:
            m.in_proj_weight.copy_(torch.cat([Wq, sd["W_k.weight"], sd["W_v.weight"]]))
        else:
            m.q_proj_weight.copy_(Wq)
            m.k_proj_weight.copy_(sd["W_k.weight"])
            m.v_proj_weight.copy_(sd["W_v.weight"])
        if has_bias:
            m.in_proj_bias.copy_(torch.cat([bq, sd["W_k.bias"], sd["W_v.bias"]]))
            m.out_proj.bias.copy_(sd["W_o.bias"])
        m.out_proj.weight.copy_(sd["W_o.weight"])
        B, Nq, Nk = queries.shape[0], queries.shape[1], keys.shape[1]
        keep = keep_mask(B, Nq, Nk, valid_lens, causal)
        attn_mask = (~keep).repeat_interleave(nh, dim=0)      # (B*NH, Nq, Nk)
        out, w = m(q_in, keys, values, attn_mask=attn_mask, need_weights=True,
                   average_attn_weights=False)
    return out, w


# ---------------------------------------------------------------------------
# Cases

def lin_weight(out_f, in_f, bias):
    layer = nn.Linear(in_f, out_f, bias=bias)
    return layer.weight.detach().clone(), (layer.bias.detach().clone() if bias else None)


def make_state_dict(Dq, Dk, Dv, H, nh, bias, score, A, grid):
    sd = {}
    for name, d_in in (("W_q", Dq), ("W_k", Dk), ("W_v", Dv), ("W_o", H)):
        w, b = lin_weight(H, d_in, bias)
        sd[name + ".weight"] = w
        if bias:
            sd[name + ".bias"] = b
    if score == "additive":
        p = H // nh
        sd["attention.W_q.weight"], _ = lin_weight(A, p, False)
        sd["attention.W_k.weight"], _ = lin_weight(A, p, False)
        sd["attention.w_v.weight"], _ = lin_weight(1, A, False)
    if grid:
        # Round to multiples of 1/128 (exact in float32, short decimals):
        # keeps the H = 100 chapter cells small on disk.
        sd = {n: torch.round(t * grid) / grid for n, t in sd.items()}
    order = ["W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight",
             "W_q.bias", "W_k.bias", "W_v.bias", "W_o.bias",
             "attention.W_q.weight", "attention.W_k.weight", "attention.w_v.weight"]
    return {n: sd[n] for n in order if n in sd}


def C(idx, name, description, command="multihead", B=2, Nq=3, Nk=4, Dq=5,
      Dk=6, Dv=7, H=8, nh=2, bias=False, score="dot", A=None, causal=False,
      valid_lens=None, inputs="randn", scale=1.0, flat=False, grid=None):
    if command == "selfattn":
        Nk, Dk, Dv = Nq, Dq, Dq
    return dict(idx=idx, name=name, description=description, command=command,
                B=B, Nq=Nq, Nk=Nk, Dq=Dq, Dk=Dk, Dv=Dv, H=H, nh=nh, bias=bias,
                score=score, A=A, causal=causal, valid_lens=valid_lens,
                inputs=inputs, scale=scale, flat=flat, grid=grid)


CASES = [
    C(1, "chapter_multihead",
      "d2l's multi-head attention cell: B=2, Nq=4, Nk=6, query/key/value size 100, "
      "H=100, 5 heads, valid_lens [3, 2], all-ones inputs, no bias "
      "(weights rounded to multiples of 1/128 to keep the file small)",
      B=2, Nq=4, Nk=6, Dq=100, Dk=100, Dv=100, H=100, nh=5,
      valid_lens=[3, 2], inputs="ones", grid=128),
    C(2, "chapter_selfattn",
      "d2l's self-attention cell: B=2, N=4, H=100, 5 heads, valid_lens [3, 2], "
      "X all ones, no bias (weights rounded to multiples of 1/128 to keep the file small)",
      command="selfattn", B=2, Nq=4, Dq=100, H=100, nh=5,
      valid_lens=[3, 2], inputs="ones", grid=128),
    C(3, "nonsquare_nobias",
      "cross-attention, everything different: Nq=3, Nk=5, Dq=7, Dk=6, Dv=5, H=8, 2 heads, "
      "no bias, no valid_lens",
      B=2, Nq=3, Nk=5, Dq=7, Dk=6, Dv=5, H=8, nh=2),
    C(4, "nonsquare_bias",
      "cross-attention, everything different, biases on: Nq=4, Nk=7, Dq=5, Dk=9, Dv=3, "
      "H=12, 2 heads, no valid_lens",
      B=2, Nq=4, Nk=7, Dq=5, Dk=9, Dv=3, H=12, nh=2, bias=True),
    C(5, "batch1_heads1",
      "batch 1, a single head (p = H = 6), 1-D valid_lens [2]",
      B=1, Nq=3, Nk=4, Dq=5, Dk=6, Dv=7, H=6, nh=1, valid_lens=[2]),
    C(6, "batch3_valid_lens_1d",
      "batch 3, 2 heads, 1-D valid_lens [5, 0, 3] with Nk=5: exactly Nk, zero (uniform rows), "
      "partial",
      B=3, Nq=4, Nk=5, Dq=6, Dk=4, Dv=5, H=8, nh=2, valid_lens=[5, 0, 3]),
    C(7, "valid_lens_2d",
      "2-D valid_lens (one per query) with 0, partial, exactly Nk=6 and > Nk; 5 heads (p=2), "
      "biases on",
      B=2, Nq=4, Nk=6, Dq=3, Dk=5, Dv=4, H=10, nh=5, bias=True,
      valid_lens=[[1, 2, 6, 0], [3, 9, 4, 6]]),
    C(8, "valid_lens_ge_nk",
      "batch 3, 1-D valid_lens [7, 12, 6] all >= Nk=6: nothing is masked",
      B=3, Nq=2, Nk=6, Dq=4, Dk=4, Dv=4, H=10, nh=2, valid_lens=[7, 12, 6]),
    C(9, "heads8_p1",
      "H=8 with 8 heads: one column per head (p=1); 1-D valid_lens [4, 1]",
      B=2, Nq=3, Nk=4, Dq=5, Dk=3, Dv=6, H=8, nh=8, valid_lens=[4, 1]),
    C(10, "heads8_p3_bias",
      "8 heads of 3 columns (H=24), batch 1, biases on, no valid_lens",
      B=1, Nq=5, Nk=6, Dq=7, Dk=8, Dv=6, H=24, nh=8, bias=True),
    C(11, "heads5_valid_lens_2d",
      "5 heads of 3 columns (H=15), batch 3, 2-D valid_lens",
      B=3, Nq=2, Nk=4, Dq=6, Dk=5, Dv=3, H=15, nh=5,
      valid_lens=[[1, 4], [0, 2], [3, 5]]),
    C(12, "additive_nomask",
      "additive scoring (A=7, p=4), 2 heads, no valid_lens, no bias",
      B=2, Nq=3, Nk=5, Dq=4, Dk=6, Dv=5, H=8, nh=2, score="additive", A=7),
    C(13, "additive_valid_lens_1d",
      "additive scoring (A=5, p=2), 3 heads, batch 3, 1-D valid_lens [2, 0, 5] (0 and exactly "
      "Nk=5), biases on",
      B=3, Nq=4, Nk=5, Dq=3, Dk=4, Dv=5, H=6, nh=3, bias=True, score="additive", A=5,
      valid_lens=[2, 0, 5]),
    C(14, "additive_valid_lens_2d",
      "additive scoring (A=4, p=6), 2 heads, 2-D valid_lens with 0, exactly Nk=4 and > Nk",
      B=2, Nq=3, Nk=4, Dq=5, Dk=7, Dv=3, H=12, nh=2, score="additive", A=4,
      valid_lens=[[0, 2, 4], [6, 1, 3]]),
    C(15, "additive_causal_selfattn",
      "self-attention with additive scoring (A=3, p=4), causal, 1-D valid_lens [3, 5]",
      command="selfattn", B=2, Nq=5, Dq=6, H=8, nh=2, score="additive", A=3, causal=True,
      valid_lens=[3, 5]),
    C(16, "causal_selfattn",
      "causal self-attention, N=5, D=6, H=8, 2 heads, no valid_lens",
      command="selfattn", B=2, Nq=5, Dq=6, H=8, nh=2, causal=True),
    C(17, "causal_square_valid_lens_1d",
      "causal cross-attention with Nq=Nk=5, 1-D valid_lens [3, 5], biases on",
      B=2, Nq=5, Nk=5, Dq=4, Dk=6, Dv=3, H=8, nh=4, bias=True, causal=True,
      valid_lens=[3, 5]),
    C(18, "causal_wide",
      "causal cross-attention with Nq=3 < Nk=6 (key k > query q masked), no valid_lens",
      B=2, Nq=3, Nk=6, Dq=5, Dk=4, Dv=6, H=6, nh=2, causal=True),
    C(19, "causal_tall_valid_lens_2d",
      "causal cross-attention with Nq=6 > Nk=3 and 2-D valid_lens (0, partial, >= Nk)",
      B=2, Nq=6, Nk=3, Dq=4, Dk=5, Dv=3, H=8, nh=2, causal=True,
      valid_lens=[[0, 1, 3, 2, 5, 1], [3, 3, 0, 1, 2, 4]]),
    C(20, "selfattn_bias",
      "self-attention, batch 1, N=5, D=8, H=8, 2 heads, biases on, no valid_lens",
      command="selfattn", B=1, Nq=5, Dq=8, H=8, nh=2, bias=True),
    C(21, "selfattn_valid_lens_1d",
      "self-attention, batch 3, N=4, D=6, H=12, 3 heads, 1-D valid_lens [4, 1, 2]",
      command="selfattn", B=3, Nq=4, Dq=6, H=12, nh=3, valid_lens=[4, 1, 2]),
    C(22, "selfattn_valid_lens_2d",
      "self-attention, N=5, D=5, H=10, 5 heads, 2-D valid_lens with 0 and > N",
      command="selfattn", B=2, Nq=5, Dq=5, H=10, nh=5,
      valid_lens=[[2, 0, 5, 7, 1], [1, 2, 3, 4, 5]]),
    C(23, "single_query",
      "a single query row (Nq=1), Nk=6, batch 3, 1-D valid_lens [3, 0, 8]",
      B=3, Nq=1, Nk=6, Dq=5, Dk=4, Dv=3, H=8, nh=2, valid_lens=[3, 0, 8]),
    C(24, "single_key",
      "a single key (Nk=1): every weight is 1; Nq=4, biases on, no valid_lens",
      B=2, Nq=4, Nk=1, Dq=3, Dk=5, Dv=4, H=6, nh=3, bias=True),
    C(25, "single_key_valid_lens_2d",
      "a single key (Nk=1) with 2-D valid_lens 0/1/2 (0 gives the same weight 1)",
      B=2, Nq=3, Nk=1, Dq=4, Dk=3, Dv=5, H=4, nh=2,
      valid_lens=[[0, 1, 2], [1, 0, 1]]),
    C(26, "large_inputs_dot",
      "large inputs (uniform in [-50, 50]): scores in the hundreds, softmax saturates; "
      "1-D valid_lens [5, 3]",
      B=2, Nq=4, Nk=6, Dq=5, Dk=6, Dv=4, H=8, nh=2, valid_lens=[5, 3], inputs="uniform",
      scale=50.0),
    C(27, "large_inputs_additive",
      "large inputs (uniform in [-50, 50]) with additive scoring (A=6, p=4): tanh saturates",
      B=2, Nq=3, Nk=5, Dq=4, Dk=5, Dv=6, H=8, nh=2, score="additive", A=6,
      inputs="uniform", scale=50.0),
    C(28, "flat_inputs_multihead",
      "2-D queries/keys/values (Nq x Dq etc.) mean batch 1; expected is still 3-D/4-D with B=1; "
      "valid_lens [3] (one per example)",
      B=1, Nq=4, Nk=5, Dq=6, Dk=3, Dv=4, H=8, nh=4, valid_lens=[3], flat=True),
    C(29, "flat_inputs_selfattn_causal",
      "2-D X (N x D) means batch 1; expected is still 3-D/4-D with B=1; causal, biases on",
      command="selfattn", B=1, Nq=4, Dq=5, H=6, nh=2, bias=True, causal=True, flat=True),
    C(30, "bigger_heads8",
      "bigger: H=32, 8 heads of 4, Nq=5, Nk=6, Dq=9, Dk=7, Dv=6, biases on, 2-D valid_lens",
      B=2, Nq=5, Nk=6, Dq=9, Dk=7, Dv=6, H=32, nh=8, bias=True,
      valid_lens=[[6, 2, 0, 5, 9], [1, 3, 7, 6, 4]]),
    C(31, "valid_lens_all_zero",
      "1-D valid_lens [0, 0]: every row uniform, the output is W_o applied to the mean of the "
      "value heads",
      B=2, Nq=3, Nk=4, Dq=4, Dk=5, Dv=6, H=6, nh=2, bias=True, valid_lens=[0, 0]),
    C(32, "heads1_selfattn_causal_valid_lens_2d",
      "self-attention, one head, causal combined with 2-D valid_lens (both bounds bind)",
      command="selfattn", B=2, Nq=5, Dq=4, H=6, nh=1, causal=True,
      valid_lens=[[1, 1, 2, 5, 3], [0, 4, 1, 2, 2]]),
    C(33, "single_token_selfattn",
      "self-attention on a single token (N=1), causal, 1-D valid_lens [0, 1]",
      command="selfattn", B=2, Nq=1, Dq=5, H=10, nh=5, causal=True, valid_lens=[0, 1]),
]


# ---------------------------------------------------------------------------

def make_inputs(c, shape):
    if c["inputs"] == "ones":
        return torch.ones(shape)
    if c["inputs"] == "uniform":
        return (torch.rand(shape) * 2 - 1) * c["scale"]
    return torch.randn(shape) * c["scale"]


def build_case(c):
    torch.manual_seed(1000 + c["idx"])
    sd = make_state_dict(c["Dq"], c["Dk"], c["Dv"], c["H"], c["nh"], c["bias"],
                         c["score"], c["A"], c["grid"])
    B = c["B"]
    if c["command"] == "selfattn":
        X = make_inputs(c, (B, c["Nq"], c["Dq"]))
        queries = keys = values = X
    else:
        queries = make_inputs(c, (B, c["Nq"], c["Dq"]))
        keys = make_inputs(c, (B, c["Nk"], c["Dk"]))
        values = make_inputs(c, (B, c["Nk"], c["Dv"]))
    vl = None if c["valid_lens"] is None else torch.tensor(c["valid_lens"], dtype=torch.int64)
    return sd, queries, keys, values, vl


def check_case(c, sd, queries, keys, values, vl, out, w):
    """Assert the sanity checks; return (max err/tol vs float64, mha checked?)."""
    B, Nq, Nk, nh = c["B"], c["Nq"], c["Nk"], c["nh"]
    assert out.shape == (B, Nq, c["H"]) and w.shape == (B, nh, Nq, Nk)
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    # rows sum to 1
    assert (w.sum(-1) - 1).abs().max().item() <= 1e-5, c["name"]
    # masked keys get exactly 0, all-masked rows are uniform
    keep = keep_mask(B, Nq, Nk, vl, c["causal"])[:, None].expand_as(w)
    any_kept = keep.any(-1, keepdim=True).expand_as(w)
    assert (w[~keep & any_kept] == 0).all(), c["name"]
    assert ((w[~any_kept] - 1.0 / Nk).abs() <= 1e-7).all(), c["name"]
    if c["Nk"] == 1:
        assert (w == 1).all()
    # float64 loop reference
    out64, w64 = reference64(queries, keys, values, sd, nh, c["score"], c["causal"], vl)
    ratio = 0.0
    for a, ref in ((out.double().numpy(), out64), (w.double().numpy(), w64)):
        err = np.abs(a - ref)
        tol = ATOL + RTOL * np.abs(ref)
        assert (err <= tol).all(), (c["name"], float((err / tol).max()))
        ratio = max(ratio, float((err / tol).max()))
    # nn.MultiheadAttention (dot scoring, no all-masked row)
    # nn.MultiheadAttention (dot scoring). Its boolean mask uses -inf, so an
    # all-masked row comes out NaN there (d2l's -1e6 gives uniform weights):
    # compare the rows that keep some key, and the output rows of queries
    # that keep some key (the mask is the same for every head).
    mha = 0
    if c["score"] == "dot":
        out_t, w_t = torch_mha_check(queries, keys, values, sd, nh, c["causal"], vl)
        rows = keep.any(-1)                     # (B, NH, Nq)
        qrows = rows.all(1)                     # (B, Nq)
        assert torch.equal(qrows, rows.any(1))
        assert torch.isnan(w_t[~rows]).all() and torch.isfinite(w_t[rows]).all()
        assert torch.allclose(out_t[qrows], out[qrows], rtol=1e-5, atol=1e-6), c["name"]
        assert torch.allclose(w_t[rows], w[rows], rtol=1e-5, atol=1e-6), c["name"]
        mha = 2 if bool(rows.all()) else (1 if bool(rows.any()) else 0)
    return ratio, mha


def to_fixture(c, sd, queries, keys, values, vl, out, w):
    def arr(t):
        return (t[0] if c["flat"] else t).tolist()

    inp = {}
    if c["command"] == "selfattn":
        inp["X"] = arr(queries)
    else:
        inp["queries"] = arr(queries)
        inp["keys"] = arr(keys)
        inp["values"] = arr(values)
    if vl is not None:
        inp["valid_lens"] = vl.tolist()
    inp["num_heads"] = c["nh"]
    inp["state_dict"] = {n: t.tolist() for n, t in sd.items()}
    return {
        "name": "%02d_%s" % (c["idx"], c["name"]),
        "description": c["description"],
        "command": c["command"],
        "options": {"score": c["score"], "causal": c["causal"]},
        "input": inp,
        "expected": {"shape": list(out.shape), "output": out.tolist(),
                     "attention_weights": w.tolist()},
    }


def readback_check(path, c, sd, queries, keys, values, vl, out, w):
    with open(path) as f:
        d = json.load(f)
    f32 = lambda x: torch.tensor(x, dtype=torch.float32)

    def same(x, t, flat=False):
        x = f32(x)
        if flat:
            x = x.unsqueeze(0)
        return x.shape == t.shape and torch.equal(x, t)

    inp = d["input"]
    fl = c["flat"]
    if c["command"] == "selfattn":
        assert same(inp["X"], queries, fl)
    else:
        assert same(inp["queries"], queries, fl) and same(inp["keys"], keys, fl)
        assert same(inp["values"], values, fl)
    assert (vl is None) == ("valid_lens" not in inp)
    if vl is not None:
        assert inp["valid_lens"] == vl.tolist()
    for n, t in sd.items():
        assert same(inp["state_dict"][n], t), n
    assert same(d["expected"]["output"], out) and same(d["expected"]["attention_weights"], w)
    assert d["expected"]["shape"] == list(out.shape)


README = """\
PyTorch reference fixtures for `attn multihead` and `attn selfattn`.

Each NN_name.json is one case of d2l's MultiHeadAttention (dot or additive
scoring, optional valid_lens and causal mask, queries = keys = values = X
for "selfattn"): "input" is exactly attn's input format (inputs, valid_lens,
num_heads, state_dict in nn.Linear layout), "expected" holds the output
(B, Nq, H) and the attention weights (B, NH, Nq, Nk) PyTorch computed in
float32. Every number is exactly a float32 value. 2-D inputs mean batch 1.

Made by scripts/gen_attention_ref.py with torch {torch} (numpy {numpy}):
    /usr/bin/python3 scripts/gen_attention_ref.py tests/ref/attention
The script re-checks each case against a float64 loop implementation and,
for dot scoring, against torch.nn.MultiheadAttention. The output is
deterministic (seeded); rerunning it must not change these files.

Tests compare with |a - b| <= 1e-5 + 1e-4*|ref| element by element.
"""


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: /usr/bin/python3 scripts/gen_attention_ref.py OUTDIR")
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(1)
    idxs = [c["idx"] for c in CASES]
    assert idxs == list(range(1, len(CASES) + 1))
    written = set()
    total = 0
    n_mha = [0, 0]
    worst = 0.0
    with torch.no_grad():
        for c in CASES:
            assert c["H"] % c["nh"] == 0
            sd, queries, keys, values, vl = build_case(c)
            out, w = multihead(queries, keys, values, sd, c["nh"], c["score"],
                               c["causal"], vl)
            ratio, mha = check_case(c, sd, queries, keys, values, vl, out, w)
            fx = to_fixture(c, sd, queries, keys, values, vl, out, w)
            fname = fx["name"] + ".json"
            path = os.path.join(outdir, fname)
            with open(path, "w") as f:
                json.dump(fx, f, separators=(",", ":"))
                f.write("\n")
            readback_check(path, c, sd, queries, keys, values, vl, out, w)
            written.add(fname)
            size = os.path.getsize(path)
            total += size
            if mha:
                n_mha[mha - 1] += 1
            worst = max(worst, ratio)
            vl_desc = "none" if vl is None else "%d-D" % vl.dim()
            print("%-46s %-9s %-8s B=%d Nq=%d Nk=%d H=%d NH=%d bias=%d causal=%d "
                  "valid_lens=%-4s %6.1f KB  f64 err/tol %.3f%s"
                  % (fname, c["command"], c["score"], c["B"], c["Nq"], c["Nk"], c["H"],
                     c["nh"], c["bias"], c["causal"], vl_desc, size / 1024, ratio,
                     ["", "  MHA ok (kept rows)", "  MHA ok"][mha]), file=sys.stderr)
    # remove fixtures of cases that no longer exist
    for fname in os.listdir(outdir):
        if re.fullmatch(r"\d\d_.*\.json", fname) and fname not in written:
            os.remove(os.path.join(outdir, fname))
    with open(os.path.join(outdir, "README"), "w") as f:
        f.write(README.format(torch=torch.__version__, numpy=np.__version__))
    print("%d fixtures, %.1f KB; all rows sum to 1, float64 reference within "
          "tolerance (worst err/tol %.3f), nn.MultiheadAttention agrees on %d dot cases "
          "fully and on %d more outside their all-masked rows"
          % (len(CASES), total / 1024, worst, n_mha[1], n_mha[0]), file=sys.stderr)


if __name__ == "__main__":
    main()
