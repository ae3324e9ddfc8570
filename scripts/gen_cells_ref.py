#!/usr/bin/python3
"""Reference bytes for `attn cells` and its tensor printer, from PyTorch.

Run with Debian's python (apt-get install python3-torch):
    /usr/bin/python3 scripts/gen_cells_ref.py tests/ref/cells

Writes two files; the tests read them and never need PyTorch:

  format.json  {"cases": [{"name", "shape", "bits", "integer", "suffix",
               "str"}]}: tensors of many kinds (negative, whole, wide
               ranges that need scientific notation, tiny and huge, NaN
               and inf, 0-D to 4-D, wide rows that wrap, over 1000
               numbers summarised, grad_fn suffixes) and what str() gives
               for each; "bits" are the values' float32 bit patterns. tests/test_torch_str.c
               prints each with attn's printer and compares the bytes.

  cells.json   {"cells": {"SECTION NAME": "output"}}: what the book's
               cells whose output does not depend on random numbers print,
               computed here by PyTorch from the cells' sizes, written
               with small modules of the same shapes (d2l is not
               imported). tests/cli/cells.py compares `attn cells --json`
               with them byte for byte.
"""
import io
import json
import math
import os
import struct
import sys

import torch
from torch import nn


def bits(t):
    """Each value as the bits of a float32 (exact, NaN and -0.0 included)."""
    flat = t.detach().reshape(-1).to(torch.float32).tolist()
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in flat]


def case(name, t):
    return {"name": name, "shape": list(t.shape), "bits": bits(t),
            "integer": not t.dtype.is_floating_point, "suffix": None, "str": str(t)}


def grad_case(name, t):
    """A tensor with a grad_fn: str() of it, and the suffix attn is given."""
    return {"name": name, "shape": list(t.shape), "bits": bits(t), "integer": False,
            "suffix": "grad_fn=<%s>" % type(t.grad_fn).__name__, "str": str(t)}


def format_cases():
    g = torch.Generator().manual_seed(7)
    cases = [
        case("scalar", torch.tensor(3.25)),
        case("scalar_whole", torch.tensor(50.0)),
        case("vector_fixed", torch.tensor([0.5, -1.25, 3.0])),
        case("vector_whole", torch.tensor([1.0, -2.0, 30.0])),
        case("zeros", torch.zeros(3)),
        case("ones_2d", torch.ones(2, 3)),
        case("normal_2d", torch.randn(3, 5, generator=g)),
        case("normal_3d", torch.randn(2, 3, 4, generator=g)),
        case("normal_4d", torch.randn(2, 2, 2, 3, generator=g)),
        case("sci_small", torch.tensor([1e-5, 0.5, 2.0])),
        case("sci_just_small", torch.tensor([5e-5, 0.02])),
        case("fixed_range_999", torch.tensor([0.002, -1.998])),
        case("sci_range", torch.tensor([0.001, 1.5, 3000.0])),
        case("sci_huge", torch.tensor([1.5e9, -2.0])),
        case("whole_wide_range", torch.tensor([1.0, 5000.0])),
        case("whole_huge", torch.tensor([2.0e9, 1.0])),
        # an ulp from whole: decimals (attn prints [2, 12] so, torch_str.h)
        case("near_whole", torch.tensor([2.0, 12.000001])),
        case("nan_inf", torch.tensor([float("nan"), 1.5, float("-inf"), float("inf")])),
        case("negative_zero", torch.tensor([-0.0, 0.25])),
        case("wrap_row", torch.randn(30, generator=g) * 10),
        case("wrap_3d", torch.randn(2, 2, 17, generator=g)),
        case("summarised_1d", torch.arange(2000, dtype=torch.float32) / 7),
        case("summarised_2d", torch.randn(40, 40, generator=g)),
        case("summarised_3d", torch.randn(12, 10, 11, generator=g)),
        case("int64_1d", torch.tensor([3, -12, 7])),
        case("int64_2d", torch.arange(20).reshape(2, 10)),
        case("bmm_weights", torch.bmm((torch.ones(2, 10) * 0.1).unsqueeze(1),
                                      torch.arange(20.0).reshape(2, 10).unsqueeze(-1))),
        case("empty", torch.zeros(0)),
        case("empty_2d", torch.zeros(2, 0)),
    ]
    w = torch.randn(3, 8, generator=g, requires_grad=True)
    cases.append(grad_case("grad_select", (w * 2)[0]))
    w2 = torch.randn(2, 9, generator=g, requires_grad=True)
    cases.append(grad_case("grad_wide", w2 * 1000))
    w3 = torch.ones(8, requires_grad=True)
    # one full line (79 columns): the suffix goes on a line of its own
    cases.append(grad_case("grad_wraps", w3 * (torch.arange(8) * 1.5 + 10.25)))
    x = torch.tensor([[1.0, 2.0], [2.0, 3.0]])
    cases.append(grad_case("grad_layernorm", nn.LayerNorm(2)(x)))
    return cases


class Heads(nn.Module):
    """d2l's MultiHeadAttention's attributes, for its print: a dot-product
    attention holding a dropout, and four linear maps without bias."""

    def __init__(self, d, dropout):
        super().__init__()
        self.attention = DotProduct(dropout)
        self.W_q = nn.Linear(d, d, bias=False)
        self.W_k = nn.Linear(d, d, bias=False)
        self.W_v = nn.Linear(d, d, bias=False)
        self.W_o = nn.Linear(d, d, bias=False)


class DotProduct(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)


def module_print(module):
    """repr(module) with the class names d2l gives them."""
    text = repr(module)
    return text.replace("Heads(", "MultiHeadAttention(").replace(
        "DotProduct(", "DotProductAttention(")


def bahdanau_shapes():
    """10.4: a GRU encoder (vocab 10, embed 8, hiddens 16, 2 layers) and an
    attention decoder on zeros (4, 7): the decoder's output, its state's
    length, the encoder outputs' and the hidden state's shapes."""
    V, E, H, L, B, T = 10, 8, 16, 2, 4, 7
    X = torch.zeros((B, T), dtype=torch.long)
    emb, rnn = nn.Embedding(V, E), nn.GRU(E, H, L)
    enc_out, hidden = rnn(emb(X).permute(1, 0, 2))
    enc_out = enc_out.permute(1, 0, 2)                    # (B, T, H)
    demb, drnn, dense = nn.Embedding(V, E), nn.GRU(E + H, H, L), nn.Linear(H, V)
    outs = []
    for x in demb(X).permute(1, 0, 2):                    # each step (B, E)
        q = hidden[-1].unsqueeze(1)                       # (B, 1, H)
        w = torch.softmax(torch.bmm(q, enc_out.transpose(1, 2)), dim=-1)
        context = torch.bmm(w, enc_out)                   # (B, 1, H)
        inp = torch.cat((context, x.unsqueeze(1)), dim=-1).permute(1, 0, 2)
        out, hidden = drnn(inp, hidden)
        outs.append(out)
    output = dense(torch.cat(outs, dim=0)).permute(1, 0, 2)
    state = [enc_out, hidden, None]
    return repr((output.shape, len(state), state[0].shape, len(state[1]), state[1][0].shape))


def block(d, heads, ffn, norm_shape):
    att = nn.MultiheadAttention(d, heads, bias=False, batch_first=True)
    return att, nn.LayerNorm(norm_shape), nn.Sequential(
        nn.Linear(d, ffn), nn.ReLU(), nn.Linear(ffn, d)), nn.LayerNorm(norm_shape)


def encoder_block(X, d=24, heads=8, ffn=48, norm_shape=(100, 24)):
    att, ln1, f, ln2 = block(d, heads, ffn, list(norm_shape))
    Y = ln1(X + att(X, X, X, need_weights=False)[0])
    return ln2(Y + f(Y))


def cells():
    out = {}
    x_test = torch.arange(0, 5, 0.1)
    out["10.2 n_test"] = repr(len(x_test))
    out["10.2 torch.bmm(X, Y).shape"] = repr(torch.bmm(torch.ones((2, 1, 4)),
                                                       torch.ones((2, 4, 6))).shape)
    weights = torch.ones((2, 10)) * 0.1
    values = torch.arange(20.0).reshape((2, 10))
    out["10.2 torch.bmm(weights, values)"] = repr(torch.bmm(weights.unsqueeze(1),
                                                            values.unsqueeze(-1)))
    # 10.3: every key is ones, so the weights are equal over the valid keys
    queries, keys = torch.normal(0, 1, (2, 1, 20)), torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    lens = torch.tensor([2, 6])
    W_q, W_k, w_v = nn.Linear(20, 8, bias=False), nn.Linear(2, 8, bias=False), nn.Linear(8, 1, bias=False)
    scores = w_v(torch.tanh(W_q(queries).unsqueeze(2) + W_k(keys).unsqueeze(1))).squeeze(-1)
    mask = torch.arange(10)[None, None, :] >= lens[:, None, None]
    w = torch.softmax(scores.masked_fill(mask, -1e6), dim=-1)
    out["10.3 AdditiveAttention"] = repr(torch.bmm(w, values))
    q2 = torch.normal(0, 1, (2, 1, 2))
    s2 = torch.bmm(q2, keys.transpose(1, 2)) / math.sqrt(2)
    w2 = torch.softmax(s2.masked_fill(mask, -1e6), dim=-1)
    out["10.3 DotProductAttention"] = repr(torch.bmm(w2, values))
    out["10.4 decoder shapes"] = bahdanau_shapes()
    heads = Heads(100, 0.5).eval()
    out["10.5 MultiHeadAttention"] = module_print(heads)
    att = nn.MultiheadAttention(100, 5, bias=False, batch_first=True)
    out["10.5 attention(X, Y, Y, valid_lens).shape"] = repr(
        att(torch.ones(2, 4, 100), torch.ones(2, 6, 100), torch.ones(2, 6, 100))[0].shape)
    out["10.6 MultiHeadAttention"] = out["10.5 MultiHeadAttention"]
    out["10.6 attention(X, X, X, valid_lens).shape"] = repr(
        att(torch.ones(2, 4, 100), torch.ones(2, 4, 100), torch.ones(2, 4, 100))[0].shape)
    buf = io.StringIO()
    for i in range(8):
        print(f'{i}的二进制是：{i:>03b}', file=buf)
    out["10.6 binary"] = buf.getvalue().rstrip("\n")
    buf = io.StringIO()
    for i in range(8):
        print(f'{i} in binary is {i:>03b}', file=buf)
    out["11.6 binary"] = buf.getvalue().rstrip("\n")
    # 10.7
    X = torch.tensor([[1, 2], [2, 3]], dtype=torch.float32)
    buf = io.StringIO()
    print('layer norm:', nn.LayerNorm(2)(X), '\nbatch norm:', nn.BatchNorm1d(2)(X), file=buf)
    out["10.7 layer norm vs batch norm"] = buf.getvalue().rstrip("\n")
    ln = nn.LayerNorm([3, 4]).eval()
    out["10.7 add_norm(...).shape"] = repr(ln(torch.ones((2, 3, 4)) + torch.ones((2, 3, 4))).shape)
    X = torch.ones((2, 100, 24))
    enc = encoder_block(X)
    out["10.7 encoder_blk(X, valid_lens).shape"] = repr(enc.shape)
    E = nn.Embedding(200, 24)(torch.ones((2, 100), dtype=torch.long)) * math.sqrt(24)
    out["10.7 encoder(...).shape"] = repr(encoder_block(encoder_block(E)).shape)
    att1, ln1, f, ln3 = block(24, 8, 48, [100, 24])
    att2, ln2 = nn.MultiheadAttention(24, 8, bias=False, batch_first=True), nn.LayerNorm([100, 24])
    Y = ln1(X + att1(X, X, X)[0])
    Z = ln2(Y + att2(Y, enc, enc)[0])
    out["10.7 decoder_blk(X, state)[0].shape"] = repr(ln3(Z + f(Z)).shape)
    # the trained model's encoder: 2 layers × 4 heads of 10 × 10 weights
    # (num_steps 10), concatenated and reshaped as the cell does
    layers, heads, steps = 2, 4, 10
    weights = [torch.softmax(torch.randn(heads, steps, steps), dim=-1) for _ in range(layers)]
    out["10.7 enc_attention_weights.shape"] = repr(
        torch.cat(weights, 0).reshape((layers, heads, -1, steps)).shape)
    # en 11.8: d2l's PatchEmbedding and ViTBlock (gen_vit_ref.py's modules)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gen_vit_ref import PatchEmbedding, ViTBlock
    patch_emb = PatchEmbedding(96, 16, 512, 3)
    out["11.8 patch_emb(X).shape"] = repr(patch_emb(torch.zeros(4, 3, 96, 96)).shape)
    vit_blk = ViTBlock(24, 24, 48, 8, 0.5).eval()
    out["11.8 encoder_blk(X).shape"] = repr(vit_blk(torch.ones((2, 100, 24))).shape)
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "tests/ref/cells"
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    with open(os.path.join(folder, "format.json"), "w", encoding="utf-8") as f:
        json.dump({"torch": torch.__version__, "cases": format_cases()}, f, indent=1,
                  ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(folder, "cells.json"), "w", encoding="utf-8") as f:
        json.dump({"torch": torch.__version__, "cells": cells()}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
