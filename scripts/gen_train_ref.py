#!/usr/bin/python3
"""Reference fixtures for attn train's model, gradients and Adam, from PyTorch.

Run with Debian's python (apt-get install python3-torch python3-numpy):
    /usr/bin/python3 scripts/gen_train_ref.py tests/ref/train
    /usr/bin/python3 scripts/gen_train_ref.py --encoder tests/ref/train_encoder
    /usr/bin/python3 scripts/gen_train_ref.py --learned tests/ref/train_learned
(the second: a stack saved by attn train, model.json, loaded into a
module shaped as d2l's TransformerEncoder; writes logits.json; the third:
a one-layer model with a learned P saved by attn train (attn train --task
reverse --pos-embedding learned --hiddens 16 --heads 2 --addnorm --steps
100 --save model.json), loaded into the Model below with
load_state_dict(strict=True); writes logits.json)

Writes one JSON file per case into the folder; the C test (tests/test_train.c)
reads them and never needs PyTorch.

The model (SPEC.md §9), written here from its formulas with torch ops in
float32 (d2l is not imported), in d2l's names:

    X      = embedding(tokens)·sqrt(d) (+ P[:T], d2l's PositionalEncoding:
             P[t, 2j] = sin(t / 10000^(2j/d)), P[t, 2j+1] = cos(…))
    Q, K, V = X·W_qᵀ (+b), X·W_kᵀ (+b), X·W_vᵀ (+b); head i: columns i·p …
    scores = Q_i K_iᵀ / sqrt(p); keys k >= valid_len (and k > q, causal)
             REPLACED by -1e6 (d2l's masked_softmax); softmax over keys
    Y      = concat(weights_i·V_i)·W_oᵀ (+b_o)
    N      = LayerNorm(X + Y) (eps 1e-5) with addnorm, else Y
    logits = N·head.weightᵀ + head.bias
    loss   = cross_entropy(logits, targets, ignore_index=-1) (mean over
             the positions with a target)

A sequence label is a target at one position and -1 elsewhere, which is
how the C code stores it too.

Each fixture holds the configuration, the initial state_dict (nn.Linear /
nn.Embedding / LayerNorm initialisations from torch's seeded generator),
a batch (tokens, valid_lens or null, targets), torch's loss, and the
gradient of every parameter. The case "adam" also holds 50 steps of
torch.optim.Adam (defaults, lr 1e-2) on that same batch: the loss before
each update and the final state_dict. No bias there: a bias of W_k has an
exactly-zero gradient in theory (softmax ignores a shift shared by every
key), so PyTorch's and attn's rounding noise would drive Adam apart.

Stacks (cases 15 on, SPEC §9 "Stacks"): d2l's TransformerEncoder, written
here from its structure (post-LN blocks), under its state_dict names:

    X = embedding(tokens)·sqrt(d) (+ P)
    for each block blks.block{i}:
        X = addnorm1.ln(X + attention(X, X, X, valid_lens))
        with an FFN:  X = addnorm2.ln(X + ffn.dense2(relu(ffn.dense1(X))))
    logits = head(X)

The case "22_layers2_ffn_adam" holds 50 Adam steps of a two-layer model
with FFN. --encoder checks, with d2l's TransformerEncoder rebuilt here as
modules named as d2l names them (embedding, pos_encoding, blks.block{i}.
attention.W_q …, addnorm1.ln, ffn.dense1, ffn.dense2, addnorm2.ln), that
a stack saved by attn train loads with load_state_dict(strict=False):
nothing missing, only the head unexpected, kept aside as an nn.Linear;
the logits of a few sequences go into logits.json for the C test.

Learned positional embeddings (cases 24 on, SPEC §15, d2l.ai 11.8's
pos_embedding): a parameter (1, max_len, d) drawn normal(0, 1), registered
on the model itself (so first in its state_dict), added where P is:

    X = embedding(tokens)·sqrt(d) + pos_embedding[:, :T, :]

max_len may exceed T (case 25): the rows past T get no gradient. These
cases are computed in float64 (the float32 start converted, so that the
weights are float32 numbers attn reads exactly): the loss, every gradient,
and, for the "adam" and "sgd" entries, 10 steps of torch.optim.Adam (lr
1e-2) or of torch.optim.SGD (lr 0.5) on the batch, the loss before each
and the final state_dict. The config says "float64": true; the C test
holds them to 1e-5.

Numbers come from float32 tensors' tolist(): parsed as double and rounded
to float, they give back exactly the values PyTorch used.
"""
import json
import math
import os
import sys

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, V, C, d, heads, posenc, addnorm, bias, causal, max_len=0):
        super().__init__()
        self.d, self.heads, self.posenc, self.causal = d, heads, posenc, causal
        self.max_len = max_len
        if max_len:  # d2l.ai 11.8: nn.Parameter(torch.randn(1, max_len, d))
            self.pos_embedding = nn.Parameter(torch.randn(1, max_len, d))
        self.embedding = nn.Embedding(V, d)
        # SPEC §9: N(0, 1/d), so that embedding·sqrt(d) has unit variance
        nn.init.normal_(self.embedding.weight, 0.0, 1.0 / math.sqrt(d))
        self.W_q = nn.Linear(d, d, bias=bias)
        self.W_k = nn.Linear(d, d, bias=bias)
        self.W_v = nn.Linear(d, d, bias=bias)
        self.W_o = nn.Linear(d, d, bias=bias)
        if addnorm:
            self.addnorm = nn.Module()
            self.addnorm.ln = nn.LayerNorm(d, eps=1e-5)
        else:
            self.addnorm = None
        self.head = nn.Linear(d, C)

    def P(self, T):
        d = self.d
        X = torch.arange(T, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, d, 2, dtype=torch.float32) / d)
        P = torch.zeros(T, d)
        P[:, 0::2] = torch.sin(X)
        P[:, 1::2] = torch.cos(X)[:, : d // 2]
        return P

    def forward(self, tokens, valid_lens):
        B, T = tokens.shape
        d, NH = self.d, self.heads
        p = d // NH
        X = self.embedding(tokens) * math.sqrt(d)
        if self.posenc:
            X = X + self.P(T)
        if self.max_len:
            X = X + self.pos_embedding[:, :T, :]
        def split(Z):  # (B, T, d) -> (B, NH, T, p)
            return Z.reshape(B, T, NH, p).permute(0, 2, 1, 3)
        Q, K, V = split(self.W_q(X)), split(self.W_k(X)), split(self.W_v(X))
        S = Q @ K.transpose(-1, -2) / math.sqrt(p)  # (B, NH, T, T)
        mask = torch.zeros(B, 1, T, T, dtype=torch.bool)
        if valid_lens is not None:
            mask = mask | (torch.arange(T).reshape(1, 1, 1, T) >= valid_lens.reshape(B, 1, 1, 1))
        if self.causal:
            mask = mask | (torch.arange(T).reshape(1, T) > torch.arange(T).reshape(T, 1))
        S = S.masked_fill(mask, -1e6)
        A = torch.softmax(S, dim=-1)
        O = (A @ V).permute(0, 2, 1, 3).reshape(B, T, d)
        Y = self.W_o(O)
        if self.addnorm is not None:
            Y = self.addnorm.ln(X + Y)
        return self.head(Y), A


def P_of(T, d):
    X = torch.arange(T, dtype=torch.float32).reshape(-1, 1) / torch.pow(
        10000, torch.arange(0, d, 2, dtype=torch.float32) / d)
    P = torch.zeros(T, d)
    P[:, 0::2] = torch.sin(X)
    P[:, 1::2] = torch.cos(X)[:, : d // 2]
    return P


class Attention(nn.Module):
    """d2l's MultiHeadAttention with dot-product scoring: W_q, W_k, W_v, W_o."""

    def __init__(self, d, heads, bias):
        super().__init__()
        self.heads = heads
        self.W_q = nn.Linear(d, d, bias=bias)
        self.W_k = nn.Linear(d, d, bias=bias)
        self.W_v = nn.Linear(d, d, bias=bias)
        self.W_o = nn.Linear(d, d, bias=bias)

    def forward(self, X, valid_lens, causal):
        B, T, d = X.shape
        NH = self.heads
        p = d // NH
        def split(Z):  # (B, T, d) -> (B, NH, T, p)
            return Z.reshape(B, T, NH, p).permute(0, 2, 1, 3)
        Q, K, V = split(self.W_q(X)), split(self.W_k(X)), split(self.W_v(X))
        S = Q @ K.transpose(-1, -2) / math.sqrt(p)
        mask = torch.zeros(B, 1, T, T, dtype=torch.bool)
        if valid_lens is not None:
            mask = mask | (torch.arange(T).reshape(1, 1, 1, T) >= valid_lens.reshape(B, 1, 1, 1))
        if causal:
            mask = mask | (torch.arange(T).reshape(1, T) > torch.arange(T).reshape(T, 1))
        A = torch.softmax(S.masked_fill(mask, -1e6), dim=-1)
        return self.W_o((A @ V).permute(0, 2, 1, 3).reshape(B, T, d)), A


class AddNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d, eps=1e-5)

    def forward(self, X, Y):
        return self.ln(X + Y)


class FFN(nn.Module):
    def __init__(self, d, H):
        super().__init__()
        self.dense1 = nn.Linear(d, H)
        self.dense2 = nn.Linear(H, d)

    def forward(self, X):
        return self.dense2(torch.relu(self.dense1(X)))


class Block(nn.Module):
    """d2l's TransformerEncoderBlock (post-LN), the FFN optional."""

    def __init__(self, d, heads, H, bias):
        super().__init__()
        self.attention = Attention(d, heads, bias)
        self.addnorm1 = AddNorm(d)
        if H:
            self.ffn = FFN(d, H)
            self.addnorm2 = AddNorm(d)
        self.H = H

    def forward(self, X, valid_lens, causal):
        Y, A = self.attention(X, valid_lens, causal)
        X = self.addnorm1(X, Y)
        if self.H:
            X = self.addnorm2(X, self.ffn(X))
        return X, A


class Stack(nn.Module):
    """d2l's TransformerEncoder's names (embedding, blks.block{i}) + a head."""

    def __init__(self, V, C, d, heads, layers, H, posenc, bias, causal, max_len=0):
        super().__init__()
        self.d, self.posenc, self.causal = d, posenc, causal
        self.max_len = max_len
        if max_len:
            self.pos_embedding = nn.Parameter(torch.randn(1, max_len, d))
        self.embedding = nn.Embedding(V, d)
        nn.init.normal_(self.embedding.weight, 0.0, 1.0 / math.sqrt(d))
        self.blks = nn.Sequential()
        for i in range(layers):
            self.blks.add_module("block" + str(i), Block(d, heads, H, bias))
        self.head = nn.Linear(d, C)

    def forward(self, tokens, valid_lens):
        T = tokens.shape[1]
        X = self.embedding(tokens) * math.sqrt(self.d)
        if self.posenc:
            X = X + P_of(T, self.d)
        if self.max_len:
            X = X + self.pos_embedding[:, :T, :]
        A = None
        for blk in self.blks:
            X, A = blk(X, valid_lens, self.causal)
        return self.head(X), A


def loss_of(model, batch):
    logits, _ = model(batch["tokens"], batch["valid_lens"])
    C = logits.shape[-1]
    return nn.functional.cross_entropy(logits.reshape(-1, C), batch["targets"].reshape(-1),
                                       ignore_index=-1)


def state(model):
    return {k: v.detach().tolist() for k, v in model.state_dict().items()}


def make_batch(g, B, T, V, C, lens, labels, ignore):
    """Random tokens 1 … V-1 (0 is <pad>), padded after lens; targets."""
    tokens = torch.randint(1, V, (B, T), generator=g)
    targets = torch.full((B, T), -1, dtype=torch.long)
    for b in range(B):
        n = lens[b] if lens else T
        tokens[b, n:] = 0
        if labels:
            # the label at the first occurrence of token 1 (label_at)
            at = int(torch.randint(0, n, (1,), generator=g))
            tokens[b, :n][tokens[b, :n] == 1] = 2
            tokens[b, at] = 1
            targets[b, at] = int(torch.randint(0, C, (1,), generator=g))
        else:
            targets[b, :n] = torch.randint(1, C, (n,), generator=g)
            if ignore:
                targets[b, 0] = -1  # as the previous task: nothing at 0
                if n > 2:
                    targets[b, n // 2] = -1
    return {"tokens": tokens, "targets": targets,
            "valid_lens": torch.tensor(lens) if lens else None}


CASES = [
    # name, heads, posenc, addnorm, bias, causal, B, T, lens, labels, ignore
    ("01_heads1", 1, True, False, False, False, 2, 5, None, False, False),
    ("02_heads2_posenc", 2, True, False, False, False, 3, 6, None, False, False),
    ("03_heads4_addnorm", 4, True, True, False, False, 2, 5, None, False, False),
    ("04_heads2_no_posenc", 2, False, False, False, False, 2, 5, None, False, False),
    ("05_heads2_bias", 2, True, False, True, False, 2, 5, None, False, False),
    ("06_heads4_bias_addnorm", 4, True, True, True, False, 3, 4, None, False, False),
    ("07_valid_lens", 2, True, False, False, False, 3, 6, [6, 3, 4], False, False),
    ("08_causal", 2, True, False, False, True, 2, 5, None, False, False),
    ("09_causal_valid_lens_addnorm", 4, True, True, True, True, 3, 5, [5, 2, 4], False, False),
    ("10_labels", 2, True, False, False, False, 4, 5, None, True, False),
    ("11_labels_valid_lens_bias", 4, True, True, True, False, 3, 6, [6, 4, 3], True, False),
    ("12_ignored_positions", 1, False, True, False, False, 2, 6, None, False, True),
    ("13_batch1", 2, True, True, False, False, 1, 7, None, False, True),
    ("14_adam", 2, True, True, False, False, 4, 6, [6, 5, 6, 4], False, False),
]

STACKS = [
    # name, heads, layers, ffn, posenc, bias, causal, B, T, lens, labels, ignore
    ("15_layers2", 2, 2, 0, True, False, False, 2, 5, None, False, False),
    ("16_layers2_ffn", 2, 2, 16, True, False, False, 2, 5, None, False, False),
    ("17_layers3_ffn_causal", 4, 3, 12, True, False, True, 2, 6, None, False, True),
    ("18_layers2_ffn_bias_valid_lens", 2, 2, 16, True, True, False, 3, 6, [6, 3, 4], False,
     False),
    ("19_layers3_labels_valid_lens", 2, 3, 0, True, False, False, 4, 5, [5, 3, 4, 2], True,
     False),
    ("20_layers1_ffn", 4, 1, 8, True, False, False, 2, 5, None, False, False),
    ("21_layers2_ffn_causal_valid_lens", 2, 2, 8, False, False, True, 3, 6, [6, 4, 5], False,
     True),
    ("22_layers2_ffn_adam", 2, 2, 16, True, False, True, 4, 6, [6, 5, 6, 4], False, False),
    ("23_layers3_ffn_bias_causal_labels", 2, 3, 16, True, True, True, 3, 6, [6, 4, 6], True,
     False),
]

LEARNED = [
    # name, heads, layers, ffn, addnorm, bias, causal, B, T, max_len, lens, labels, ignore,
    # steps ("adam", "sgd" or None)
    ("24_learned_heads2", 2, 1, 0, False, False, False, 2, 5, 5, None, False, False, None),
    ("25_learned_addnorm_valid_lens_max_len9", 2, 1, 0, True, False, False, 3, 6, 9, [6, 3, 4],
     False, False, "sgd"),
    ("26_learned_layers2_ffn_causal", 2, 2, 16, True, False, True, 3, 6, 6, [6, 4, 5], False,
     True, None),
    ("27_learned_labels_bias", 4, 1, 0, True, True, False, 3, 5, 5, None, True, False, None),
    ("28_learned_adam", 2, 1, 0, True, False, False, 4, 6, 6, [6, 5, 6, 4], False, False, "adam"),
    ("29_learned_layers2_ffn_adam", 2, 2, 16, True, False, False, 4, 6, 6, [6, 5, 6, 4], False,
     False, "adam"),
]


def learned_case(g, V, d, case):
    """One learned-P case in float64: the loss, every gradient, and steps."""
    (name, heads, layers, H, addnorm, bias, causal, B, T, max_len, lens, labels, ignore,
     steps) = case
    C = 3 if labels else V
    stack = layers > 1 or H > 0
    if stack:
        model = Stack(V, C, d, heads, layers, H, False, bias, causal, max_len)
    else:
        model = Model(V, C, d, heads, False, addnorm, bias, causal, max_len)
    with torch.no_grad():  # LayerNorms that are not the identity at the start
        for k, v in model.named_parameters():
            if "ln.weight" in k:
                v.uniform_(0.5, 1.5, generator=g)
            elif "ln.bias" in k:
                v.uniform_(-0.5, 0.5, generator=g)
    batch = make_batch(g, B, T, V, C, lens, labels, ignore)
    config = {"vocab": V, "classes": C, "hiddens": d, "heads": heads, "posenc": False,
              "pos_embedding": "learned", "max_len": max_len, "addnorm": addnorm or stack,
              "bias": bias, "causal": causal, "float64": True}
    if stack:
        config.update({"layers": layers, "ffn": H})
    doc = {"config": config, "state_dict": state(model), "tokens": batch["tokens"].tolist(),
           "valid_lens": batch["valid_lens"].tolist() if lens else None,
           "targets": batch["targets"].tolist()}
    m64 = model.double()
    loss = loss_of(m64, batch)
    loss.backward()
    doc["loss"] = loss.item()
    doc["grads"] = {k: v.grad.tolist() for k, v in m64.named_parameters()}
    assert list(doc["state_dict"])[0] == "pos_embedding"
    if max_len > T:  # the rows past T are not used
        assert torch.all(m64.pos_embedding.grad[:, T:, :] == 0)
    if steps:
        opt = (torch.optim.Adam(m64.parameters(), lr=1e-2) if steps == "adam" else
               torch.optim.SGD(m64.parameters(), lr=0.5))
        losses = []
        for _ in range(10):
            opt.zero_grad()
            l = loss_of(m64, batch)
            losses.append(l.item())
            l.backward()
            opt.step()
        doc[steps] = {"lr": opt.param_groups[0]["lr"], "steps": 10, "losses": losses,
                      "state_dict": state(m64)}
    return doc


class D2LMultiHeadAttention(nn.Module):
    """d2l's MultiHeadAttention's parameters and computation (dot product,
    masked_softmax's -1e6 fill for valid_lens, eval mode)."""

    def __init__(self, num_hiddens, num_heads, bias=False):
        super().__init__()
        self.num_heads = self.heads = num_heads
        self.attention = nn.Dropout(0.0)  # DotProductAttention: no parameters
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, X, valid_lens):
        Y, _ = Attention.forward(self, X, valid_lens, False)
        return Y


class D2LAddNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dropout = nn.Dropout(0.0)
        self.ln = nn.LayerNorm(d)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class D2LPositionWiseFFN(nn.Module):
    def __init__(self, d, H):
        super().__init__()
        self.dense1 = nn.Linear(d, H)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(H, d)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class D2LTransformerEncoderBlock(nn.Module):
    def __init__(self, d, H, heads, bias=False):
        super().__init__()
        self.attention = D2LMultiHeadAttention(d, heads, bias)
        self.addnorm1 = D2LAddNorm(d)
        self.ffn = D2LPositionWiseFFN(d, H)
        self.addnorm2 = D2LAddNorm(d)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class D2LTransformerEncoder(nn.Module):
    """d2l.TransformerEncoder(vocab_size, num_hiddens, ffn_num_hiddens,
    num_heads, num_blks, dropout): its names, its forward in eval mode."""

    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = nn.Dropout(0.0)  # d2l keeps P as a plain tensor, no parameter
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module("block" + str(i), D2LTransformerEncoderBlock(
                num_hiddens, ffn_num_hiddens, num_heads))

    def forward(self, X, valid_lens):
        T = X.shape[1]
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens) +
                              P_of(T, self.num_hiddens))
        for blk in self.blks:
            X = blk(X, valid_lens)
        return X


def encoder_check(folder):
    m = json.load(open(os.path.join(folder, "model.json"), encoding="utf-8"))
    sd = {k: torch.tensor(v) for k, v in m["state_dict"].items()}
    enc = D2LTransformerEncoder(len(m["vocab"]), m["num_hiddens"], m["ffn_num_hiddens"],
                                m["num_heads"], m["num_layers"])
    res = enc.load_state_dict(sd, strict=False)
    assert res.missing_keys == [], res.missing_keys
    assert sorted(res.unexpected_keys) == ["head.bias", "head.weight"], res.unexpected_keys
    head = nn.Linear(m["num_hiddens"], len(m["classes"]))
    head.load_state_dict({"weight": sd["head.weight"], "bias": sd["head.bias"]})
    enc.eval()
    g = torch.Generator().manual_seed(7)
    B, T, V = 3, 12, len(m["vocab"])
    tokens = torch.randint(1, V, (B, T), generator=g)
    lens = torch.tensor([12, 9, 5])
    for b in range(B):
        tokens[b, lens[b]:] = 0
    with torch.no_grad():
        logits = head(enc(tokens, lens))
    doc = {"tokens": tokens.tolist(), "valid_lens": lens.tolist(), "logits": logits.tolist(),
           "missing_keys": res.missing_keys, "unexpected_keys": sorted(res.unexpected_keys)}
    with open(os.path.join(folder, "logits.json"), "w") as f:
        json.dump(doc, f)
        f.write("\n")
    print("encoder: loaded with strict=False, unexpected", doc["unexpected_keys"])


def learned_check(folder):
    """A model with a learned P that attn saved: every key matched, no more
    (strict=True), and the logits of a few sequences in float64."""
    m = json.load(open(os.path.join(folder, "model.json"), encoding="utf-8"))
    assert m["pos_embedding"] == "learned" and list(m["state_dict"])[0] == "pos_embedding"
    sd = {k: torch.tensor(v, dtype=torch.float64) for k, v in m["state_dict"].items()}
    max_len = sd["pos_embedding"].shape[1]
    model = Model(len(m["vocab"]), len(m["classes"]), m["num_hiddens"], m["num_heads"], False,
                  m["addnorm"], "W_q.bias" in sd, False, max_len).double()
    res = model.load_state_dict(sd, strict=True)
    g = torch.Generator().manual_seed(11)
    B, T, V = 3, max_len, len(m["vocab"])
    tokens = torch.randint(1, V, (B, T), generator=g)
    lens = torch.tensor([T, T - 3, 2])
    for b in range(B):
        tokens[b, lens[b]:] = 0
    with torch.no_grad():
        logits, _ = model(tokens, lens)
    doc = {"tokens": tokens.tolist(), "valid_lens": lens.tolist(), "logits": logits.tolist(),
           "missing_keys": res.missing_keys, "unexpected_keys": res.unexpected_keys}
    with open(os.path.join(folder, "logits.json"), "w") as f:
        json.dump(doc, f)
        f.write("\n")
    print("learned: loaded with strict=True, max_len", max_len)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--encoder":
        encoder_check(sys.argv[2])
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--learned":
        learned_check(sys.argv[2])
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/ref/train"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1234)
    d, V = 8, 7
    for (name, heads, posenc, addnorm, bias, causal, B, T, lens, labels, ignore) in CASES:
        C = 3 if labels else V
        model = Model(V, C, d, heads, posenc, addnorm, bias, causal)
        if addnorm:  # a LayerNorm that is not the identity at the start
            with torch.no_grad():
                model.addnorm.ln.weight.uniform_(0.5, 1.5, generator=g)
                model.addnorm.ln.bias.uniform_(-0.5, 0.5, generator=g)
        batch = make_batch(g, B, T, V, C, lens, labels, ignore)
        doc = {"config": {"vocab": V, "classes": C, "hiddens": d, "heads": heads,
                          "posenc": posenc, "addnorm": addnorm, "bias": bias, "causal": causal},
               "state_dict": state(model),
               "tokens": batch["tokens"].tolist(),
               "valid_lens": batch["valid_lens"].tolist() if lens else None,
               "targets": batch["targets"].tolist()}
        loss = loss_of(model, batch)
        model.zero_grad()
        loss.backward()
        doc["loss"] = loss.item()
        doc["grads"] = {k: v.grad.tolist() for k, v in model.named_parameters()}
        # an independent check of torch's gradients: float64 autograd
        m64 = Model(V, C, d, heads, posenc, addnorm, bias, causal).double()
        m64.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
        l64 = loss_of(m64, batch)
        l64.backward()
        for k, v in m64.named_parameters():
            g32 = dict(model.named_parameters())[k].grad.double()
            assert torch.all((g32 - v.grad).abs() <= 1e-6 + 1e-4 * v.grad.abs()), name + k
        if name == "14_adam":
            opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            losses = []
            for _ in range(50):
                opt.zero_grad()
                l = loss_of(model, batch)
                losses.append(l.item())
                l.backward()
                opt.step()
            doc["adam"] = {"lr": 1e-2, "steps": 50, "losses": losses,
                           "state_dict": state(model)}
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(doc, f)
            f.write("\n")
        print(name, "loss", doc["loss"])
    for (name, heads, layers, H, posenc, bias, causal, B, T, lens, labels, ignore) in STACKS:
        C = 3 if labels else V
        model = Stack(V, C, d, heads, layers, H, posenc, bias, causal)
        with torch.no_grad():  # LayerNorms that are not the identity at the start
            for k, v in model.named_parameters():
                if ".ln.weight" in k:
                    v.uniform_(0.5, 1.5, generator=g)
                elif ".ln.bias" in k:
                    v.uniform_(-0.5, 0.5, generator=g)
        batch = make_batch(g, B, T, V, C, lens, labels, ignore)
        doc = {"config": {"vocab": V, "classes": C, "hiddens": d, "heads": heads,
                          "layers": layers, "ffn": H, "posenc": posenc, "addnorm": True,
                          "bias": bias, "causal": causal},
               "state_dict": state(model),
               "tokens": batch["tokens"].tolist(),
               "valid_lens": batch["valid_lens"].tolist() if lens else None,
               "targets": batch["targets"].tolist()}
        logits, _ = model(batch["tokens"], batch["valid_lens"])
        doc["logits"] = logits.detach().tolist()
        loss = loss_of(model, batch)
        model.zero_grad()
        loss.backward()
        doc["loss"] = loss.item()
        doc["grads"] = {k: v.grad.tolist() for k, v in model.named_parameters()}
        m64 = Stack(V, C, d, heads, layers, H, posenc, bias, causal).double()
        m64.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
        l64 = loss_of(m64, batch)
        l64.backward()
        for k, v in m64.named_parameters():
            g32 = dict(model.named_parameters())[k].grad.double()
            assert torch.all((g32 - v.grad).abs() <= 1e-6 + 1e-4 * v.grad.abs()), name + k
        if name == "22_layers2_ffn_adam":
            opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            losses = []
            for _ in range(50):
                opt.zero_grad()
                l = loss_of(model, batch)
                losses.append(l.item())
                l.backward()
                opt.step()
            doc["adam"] = {"lr": 1e-2, "steps": 50, "losses": losses,
                           "state_dict": state(model)}
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(doc, f)
            f.write("\n")
        print(name, "loss", doc["loss"])
    for case in LEARNED:
        doc = learned_case(g, V, d, case)
        with open(os.path.join(out, case[0] + ".json"), "w") as f:
            json.dump(doc, f)
            f.write("\n")
        print(case[0], "loss", doc["loss"])


if __name__ == "__main__":
    main()
