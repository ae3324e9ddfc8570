#!/usr/bin/python3
"""Reference fixtures for attn's Seq2Seq with Bahdanau attention (SPEC.md
§11, --arch bahdanau; src/nn/seq2seq/gru.c and src/nn/seq2seq/bahdanau.c), from PyTorch in
float64.

Run with Debian's python (apt-get install python3-torch python3-numpy):
    /usr/bin/python3 scripts/gen_bahdanau_ref.py tests/ref/bahdanau
    /usr/bin/python3 scripts/gen_bahdanau_ref.py --load tests/ref/bahdanau_model
    (and tests/ref/bahdanau_model_lstm, _dot: a model file with "rnn": "lstm"
    or "score": "dot", loaded into the modules with nn.LSTM or
    DotProductAttention)
The first writes the fixtures into the folder; the C test
(tests/test_bahdanau.c) reads them and never needs PyTorch. The second reads
FOLDER/model.json, a model file of --arch bahdanau in SPEC §11's form
written by attn's C code (test_bahdanau write-model FOLDER), loads its
state_dict into EncoderDecoder(Seq2SeqEncoder, Seq2SeqAttentionDecoder)
below with load_state_dict(strict=True), and writes to FOLDER/logits.json
the logits of a few teacher-forced pairs and the greedy translations of a
few sources, for the C test.

The modules are zh.d2l.ai's (the seed's edition), written here from their
behaviour (d2l is not imported), under d2l's names so that state_dict()
has d2l's keys:
  - Seq2SeqEncoder: embedding (vocab, embed_size), rnn = nn.GRU(embed_size,
    num_hiddens, num_layers); the input is permuted to (T, B, embed) and the
    GRU runs over every position, padding included, from zeros; returns
    (outputs (T, B, d), state (L, B, d)).
  - masked_softmax: keys at or beyond valid_len get -1e6.
  - AdditiveAttention(key_size, query_size, num_hiddens): W_k, W_q
    (bias=False), w_v (num_hiddens -> 1, bias=False); scores =
    w_v(tanh(W_q q + W_k k)), masked softmax over the keys, the weights
    times the values.
  - Seq2SeqAttentionDecoder: attention (AdditiveAttention(d, d, d)),
    embedding, rnn = nn.GRU(embed_size + num_hiddens, num_hiddens,
    num_layers), dense (d -> vocab); its state starts as (the encoder's
    outputs (B, T, d), the encoder's final state, the source valid_lens);
    each step's query is the last layer's hidden state, the GRU's input
    [context; embedding].
  - EncoderDecoder(encoder, decoder).
The embedding size is num_hiddens (SPEC §11). No dropout.

Where attn departs from zh.d2l.ai, on purpose, as SPEC §11 says: the loss
is the cross-entropy averaged over the target entries that are not <pad>
(d2l's MaskedSoftmaxCELoss averages over num_steps per sentence and sums
the batch).

Fixtures (float64 numbers; every parameter a float32 number, so that attn's
float32 parameters are exactly PyTorch's):
  gru.json: nn.GRU alone (GRU_CASES): 1 and 2 layers, with and without an
    initial state h0, input width != num_hiddens; a random input x
    (T, B, I), the loss sum(output * R_out) + sum(h_n * R_h) with random R;
    the outputs, the final states and the gradients of that loss with
    respect to x, h0 and every weight.
  NN_*.json (CASES): the whole model: its configuration, the initial
    state_dict, a batch (src, src_lens, dec_in, targets with -1 at <pad>,
    num_steps positions on both sides; every source and target valid
    length different, padding in most), the loss and every gradient at
    step 0, and for SGD and Adam (PyTorch's defaults, betas 0.9/0.999, eps
    1e-8) 20 steps on that batch, clipped as d2l's grad_clipping (global
    norm) or not: the loss and gradient norm before each step, every
    parameter after the last.
  lstm.json: nn.LSTM alone, the cases of gru.json: outputs, final h and c
    and the gradients of sum(output * R_out) + sum(h_n * R_h) + sum(c_n *
    R_c) with respect to x, h0, c0 and every weight (SPEC §15, --rnn lstm).
  05_… to 08_… (CASES_15): the whole model as NN_*.json, with nn.LSTM in
    the encoder and the decoder (the query the last layer's h, the
    decoder's start the encoder's final (h, c)), with the scaled
    dot-product score (DotProductAttention, no parameters), or both
    (SPEC §15's --rnn lstm and --score dot); drawn from their own
    generator (seed 2026) after the others.
  greedy.json: a model trained here on reversing a sentence (its
    parameters rounded to float32) and d2l's predict_seq2seq of a few
    sources: tokens, the attention row of every step (that of the step
    that chose <eos> included), and each step's margin between the two
    largest logits (checked > 1e-3, so that the argmax is no tie).

To keep the fixtures small, gradients and attention weights are written
with 9 significant digits and the parameters after 20 steps with 8 (attn's
are float32: 2^-24 ~ 6e-8 of their size), the initial parameters as the
shortest decimal that reads back as the same float32; losses, gradient
norms and everything in gru.json (compared double against double) in
full.
"""
import json
import math
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# d2l's masked_softmax, EncoderDecoder and grad_clipping, shared with the
# Transformer's generator
from gen_seq2seq_ref import EncoderDecoder, grad_clipping, masked_softmax  # noqa: E402

UNK, PAD, BOS, EOS = 0, 1, 2, 3  # d2l's Vocab: <unk>, then reserved tokens


# ---- zh.d2l.ai's modules ------------------------------------------------------

class AdditiveAttention(nn.Module):
    """scores(q, k) = w_v · tanh(W_q q + W_k k), masked softmax over keys."""

    def __init__(self, key_size, query_size, num_hiddens, dropout=0.0):
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        # queries (B, Nq, d), keys and values (B, Nk, d)
        q, k = self.W_q(queries), self.W_k(keys)
        feats = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, Nq, Nk, h)
        scores = self.w_v(feats).squeeze(-1)                      # (B, Nq, Nk)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """scores(q, k) = q . k / sqrt(d), masked softmax over keys (no
    parameters): --score dot."""

    def __init__(self, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


RNNS = {"gru": nn.GRU, "lstm": nn.LSTM}


class Seq2SeqEncoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0.0, rnn="gru"):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = RNNS[rnn](embed_size, num_hiddens, num_layers, dropout=dropout)

    def forward(self, X, *args):
        X = self.embedding(X).permute(1, 0, 2)  # (T, B, embed): time first
        output, state = self.rnn(X)             # from zeros
        return output, state                    # (T, B, d), (L, B, d) or LSTM's (h, c)


class Seq2SeqAttentionDecoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0.0, rnn="gru",
                 score="additive"):
        super().__init__()
        self.attention = (AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
                          if score == "additive" else DotProductAttention(dropout))
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = RNNS[rnn](embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state  # (B, Ts, d), (L, B, d)
        X = self.embedding(X).permute(1, 0, 2)              # (Tt, B, embed)
        outputs, self._attention_weights = [], []
        for x in X:
            # the last layer's h (an LSTM's state is (h, c): its h)
            h = hidden_state[0] if isinstance(hidden_state, tuple) else hidden_state
            query = h[-1][:, None, :]                       # (B, 1, d)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, x[:, None, :]), dim=-1)  # (B, 1, d + embed)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))     # (Tt, B, V)
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights


def bahdanau(Vs, Vt, d, layers, rnn="gru", score="additive"):
    """SPEC §11's --arch bahdanau: the embedding size is num_hiddens; §15's
    --rnn and --score."""
    return EncoderDecoder(Seq2SeqEncoder(Vs, d, d, layers, rnn=rnn),
                          Seq2SeqAttentionDecoder(Vt, d, d, layers, rnn=rnn, score=score))


def predict_seq2seq(net, src, src_len, max_len):
    """d2l's predict_seq2seq on one source of ids (already padded to
    num_steps): greedy, from <bos>, the argmax fed back, stop at <eos> or
    max_len tokens. Returns the ids, every step's attention row (Ts,) and
    the margin of each step's largest logit over the second."""
    net.eval()
    enc_valid_len = torch.tensor([src_len])
    with torch.no_grad():
        enc_outputs = net.encoder(torch.tensor([src]), enc_valid_len)
        state = net.decoder.init_state(enc_outputs, enc_valid_len)
        dec_X = torch.tensor([[BOS]])
        out, rows, margins = [], [], []
        for _ in range(max_len):
            Y, state = net.decoder(dec_X, state)
            top = torch.topk(Y[0, 0], 2).values
            margins.append((top[0] - top[1]).item())
            dec_X = Y.argmax(dim=2)
            pred = int(dec_X[0, 0])
            rows.append(net.decoder.attention_weights[0][0, 0].tolist())
            if pred == EOS:
                break
            out.append(pred)
    return out, rows, margins


# ---- writing --------------------------------------------------------------------

def rounded(x, digits):
    """x (nested lists of floats) with each number rounded to digits
    significant digits (written as the shortest decimal of the result)."""
    if isinstance(x, list):
        return [rounded(v, digits) for v in x]
    if isinstance(x, float):
        return float("%.*g" % (digits, x))
    return x


def _f32(x):
    """x (nested lists of float32 numbers) as the shortest decimals that
    read back as the same float32 (numpy's repr of each)."""
    if isinstance(x, list):
        return [_f32(v) for v in x]
    return float(repr(np.float32(x)))


def write(folder, name, doc):
    with open(os.path.join(folder, name), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


GRAD_DIGITS = 9    # gradients and attention: attn's, within ~1e-7, are compared
PARAM_DIGITS = 8   # parameters after 20 steps: attn's are float32 (2^-24 ~ 6e-8)


def tensors(named, digits):
    return {k: rounded(v.detach().tolist(), digits) for k, v in named}


# ---- the GRU alone --------------------------------------------------------------

# name, input width I, num_hiddens d, layers L, steps T, rows B, with h0
GRU_CASES = [
    ("l1_h0", 5, 4, 1, 6, 3, True),
    ("l1_zeros", 3, 6, 1, 4, 2, False),
    ("l2_h0", 7, 5, 2, 5, 3, True),
    ("l2_zeros", 4, 4, 2, 3, 4, False),
]


def make_gru(g):
    cases = []
    for name, I, d, L, T, B, with_h0 in GRU_CASES:
        rnn = nn.GRU(I, d, L)
        with torch.no_grad():  # uniform in +-0.9: the gates well away from 1/2
            for p in rnn.parameters():
                p.copy_(((torch.rand(p.shape, generator=g) * 2 - 1) * 0.9).float().double())
        x = torch.randn(T, B, I, generator=g).requires_grad_()
        h0 = torch.randn(L, B, d, generator=g).requires_grad_() if with_h0 else None
        R_out = torch.randn(T, B, d, generator=g)
        R_h = torch.randn(L, B, d, generator=g)
        rnn.zero_grad()
        output, h_n = rnn(x, h0) if with_h0 else rnn(x)
        loss = (output * R_out).sum() + (h_n * R_h).sum()
        loss.backward()
        grads = {"x": x.grad.tolist()}
        if with_h0:
            grads["h0"] = h0.grad.tolist()
        grads.update({k: p.grad.tolist() for k, p in rnn.named_parameters()})
        case = {"name": name, "input_size": I, "hidden_size": d, "num_layers": L, "T": T, "B": B,
                "state_dict": {k: _f32(v.tolist()) for k, v in rnn.state_dict().items()},
                "x": x.tolist(), "h0": h0.tolist() if with_h0 else None,
                "R_out": R_out.tolist(), "R_h": R_h.tolist(), "loss": loss.item(),
                "output": output.tolist(), "h_n": h_n.tolist(), "grads": grads}
        cases.append(case)
        print("gru", name, "loss", loss.item())
    return {"cases": cases}


# ---- the LSTM alone -------------------------------------------------------------

def make_lstm(g):
    """nn.LSTM as make_gru does nn.GRU: the loss sum(output * R_out) +
    sum(h_n * R_h) + sum(c_n * R_c), from (h0, c0) or zeros."""
    cases = []
    for name, I, d, L, T, B, with_h0 in GRU_CASES:
        rnn = nn.LSTM(I, d, L)
        with torch.no_grad():
            for p in rnn.parameters():
                p.copy_(((torch.rand(p.shape, generator=g) * 2 - 1) * 0.9).float().double())
        x = torch.randn(T, B, I, generator=g).requires_grad_()
        h0 = torch.randn(L, B, d, generator=g).requires_grad_() if with_h0 else None
        c0 = torch.randn(L, B, d, generator=g).requires_grad_() if with_h0 else None
        R_out = torch.randn(T, B, d, generator=g)
        R_h = torch.randn(L, B, d, generator=g)
        R_c = torch.randn(L, B, d, generator=g)
        output, (h_n, c_n) = rnn(x, (h0, c0)) if with_h0 else rnn(x)
        loss = (output * R_out).sum() + (h_n * R_h).sum() + (c_n * R_c).sum()
        loss.backward()
        grads = {"x": x.grad.tolist()}
        if with_h0:
            grads["h0"] = h0.grad.tolist()
            grads["c0"] = c0.grad.tolist()
        grads.update({k: p.grad.tolist() for k, p in rnn.named_parameters()})
        cases.append({"name": name, "input_size": I, "hidden_size": d, "num_layers": L, "T": T,
                      "B": B,
                      "state_dict": {k: _f32(v.tolist()) for k, v in rnn.state_dict().items()},
                      "x": x.tolist(), "h0": h0.tolist() if with_h0 else None,
                      "c0": c0.tolist() if with_h0 else None, "R_out": R_out.tolist(),
                      "R_h": R_h.tolist(), "R_c": R_c.tolist(), "loss": loss.item(),
                      "output": output.tolist(), "h_n": h_n.tolist(), "c_n": c_n.tolist(),
                      "grads": grads})
        print("lstm", name, "loss", loss.item())
    return {"cases": cases}


# ---- the whole model ------------------------------------------------------------

def init_params(net, g):
    """PyTorch's defaults (bahdanau.h's start), drawn from g in float32:
    embeddings N(0, 1); the GRUs' tensors uniform in +-1/sqrt(d); nn.Linear
    uniform in +-1/sqrt(in)."""
    with torch.no_grad():
        mods = dict(net.named_modules())
        for name, p in net.named_parameters():
            mod = mods[name.rsplit(".", 1)[0]]
            if isinstance(mod, nn.Embedding):
                v = torch.randn(p.shape, generator=g, dtype=torch.float32)
            elif isinstance(mod, (nn.GRU, nn.LSTM)):
                bound = 1.0 / math.sqrt(mod.hidden_size)
                v = (torch.rand(p.shape, generator=g, dtype=torch.float32) * 2 - 1) * bound
            else:
                bound = 1.0 / math.sqrt(mod.in_features)
                v = (torch.rand(p.shape, generator=g, dtype=torch.float32) * 2 - 1) * bound
            p.copy_(v.double())


def make_batch(g, Vs, Vt, T, src_words, tgt_words):
    """Sources: words (ids 4 ... Vs-1) + <eos>, padded with <pad> to T (or
    cut to T, as d2l's truncate_pad); targets likewise; the decoder input
    <bos> + target[:-1]; targets with -1 at <pad>."""
    src, lens, dec_in, targets = [], [], [], []
    for n, m in zip(src_words, tgt_words):
        s = torch.randint(4, Vs, (n,), generator=g).tolist() + [EOS]
        s = (s + [PAD] * T)[:T]
        t = torch.randint(4, Vt, (m,), generator=g).tolist() + [EOS]
        t = (t + [PAD] * T)[:T]
        src.append(s)
        lens.append(sum(1 for x in s if x != PAD))
        dec_in.append([BOS] + t[:-1])
        targets.append([x if x != PAD else -1 for x in t])
    return {"src": src, "src_lens": lens, "dec_in": dec_in, "targets": targets}


def logits_of(net, batch):
    logits, _ = net(torch.tensor(batch["src"]), torch.tensor(batch["dec_in"]),
                    torch.tensor(batch["src_lens"]))
    return logits


def loss_of(net, batch):
    net.train()
    logits = logits_of(net, batch)
    Vt = logits.shape[-1]
    return nn.functional.cross_entropy(logits.reshape(-1, Vt),
                                       torch.tensor(batch["targets"]).reshape(-1),
                                       ignore_index=-1)


def train_steps(net, init, batch, kind, lr, clip, steps):
    net.load_state_dict(init)
    opt = (torch.optim.SGD(net.parameters(), lr=lr) if kind == "sgd"
           else torch.optim.Adam(net.parameters(), lr=lr))
    losses, norms, clipped = [], [], 0
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(net, batch)
        losses.append(loss.item())
        loss.backward()
        norms.append(grad_clipping(net, clip))
        # the C code must take the same branch of the clipping
        assert not clip or abs(norms[-1] - clip) > 1e-3 * clip, (kind, norms[-1])
        clipped += bool(clip) and norms[-1] > clip
        opt.step()
    return {"optimizer": kind, "lr": lr, "steps": steps, "losses": losses,
            "grad_norms": norms, "clipped": clipped,
            "state_dict": tensors(net.state_dict().items(), PARAM_DIGITS)}


CASES = [
    # name, Vs, Vt, d, layers, clip, num_steps, source words, target words
    ("01_l1_d8_noclip", 9, 11, 8, 1, 0.0, 5, [4, 2, 0], [3, 1, 5]),
    ("02_l2_d8_clip", 10, 9, 8, 2, 0.3, 6, [5, 3, 1, 6], [2, 4, 0, 3]),
    ("03_l1_d16_clip", 12, 10, 16, 1, 0.4, 7, [6, 1, 3, 4], [5, 2, 7, 0]),
    ("04_l2_d6_noclip", 8, 12, 6, 2, 0.0, 7, [2, 5, 3], [4, 6, 1]),
]
# SPEC §15's --rnn lstm and --score dot: the same cases' shapes, drawn from
# their own generator (so that the four above stay as they were)
CASES_15 = [
    # name, Vs, Vt, d, layers, clip, num_steps, source words, target words, rnn, score
    ("05_lstm_l1_d8_noclip", 9, 11, 8, 1, 0.0, 5, [4, 2, 0], [3, 1, 5], "lstm", "additive"),
    ("06_lstm_l2_d8_clip", 10, 9, 8, 2, 0.3, 6, [5, 3, 1, 6], [2, 4, 0, 3], "lstm", "additive"),
    ("07_dot_l2_d8_clip", 10, 9, 8, 2, 0.3, 6, [5, 3, 1, 6], [2, 4, 0, 3], "gru", "dot"),
    ("08_lstm_dot_l1_d6_noclip", 8, 12, 6, 1, 0.0, 7, [2, 5, 3], [4, 6, 1], "lstm", "dot"),
]
SGD_LR, ADAM_LR, STEPS = 0.5, 0.01, 20


def make_case(folder, case, g):
    (name, Vs, Vt, d, layers, clip, T, sw, tw) = case[:9]
    rnn, score = case[9:] if len(case) > 9 else ("gru", "additive")
    net = bahdanau(Vs, Vt, d, layers, rnn, score)
    init_params(net, g)
    init = {k: v.clone() for k, v in net.state_dict().items()}
    batch = make_batch(g, Vs, Vt, T, sw, tw)
    doc = {"config": {"arch": "bahdanau", "src_vocab": Vs, "tgt_vocab": Vt, "hiddens": d,
                      "heads": 1, "layers": layers, "clip": clip, "num_steps": T},
           "state_dict": {k: _f32(v.tolist()) for k, v in net.state_dict().items()}}
    if len(case) > 9:
        doc["config"].update({"rnn": rnn, "score": score})
    doc.update(batch)
    net.zero_grad()
    loss = loss_of(net, batch)
    loss.backward()
    doc["loss"] = loss.item()
    doc["grads"] = tensors(((k, p.grad) for k, p in net.named_parameters()), GRAD_DIGITS)
    doc["sgd"] = train_steps(net, init, batch, "sgd", SGD_LR, clip, STEPS)
    doc["adam"] = train_steps(net, init, batch, "adam", ADAM_LR, clip, STEPS)
    write(folder, name + ".json", doc)
    print(name, "loss", doc["loss"], "-> sgd", doc["sgd"]["losses"][-1], "adam",
          doc["adam"]["losses"][-1], "norms %.3g ... %.3g" % (
              min(doc["sgd"]["grad_norms"] + doc["adam"]["grad_norms"]),
              max(doc["sgd"]["grad_norms"] + doc["adam"]["grad_norms"])),
          "clipped steps", doc["sgd"]["clipped"], doc["adam"]["clipped"])


def reverse_batch(g, B, T, Vs):
    """Sources of 2 ... T-2 words; the target is the source reversed, each
    word w written as target word w + 1 (so that the two vocabularies differ)."""
    src, lens, dec_in, targets = [], [], [], []
    for _ in range(B):
        n = int(torch.randint(2, T - 1, (1,), generator=g))
        w = torch.randint(4, Vs, (n,), generator=g).tolist()
        s = (w + [EOS] + [PAD] * T)[:T]
        t = ([x + 1 for x in reversed(w)] + [EOS] + [PAD] * T)[:T]
        src.append(s)
        lens.append(n + 1)
        dec_in.append([BOS] + t[:-1])
        targets.append([x if x != PAD else -1 for x in t])
    return {"src": src, "src_lens": lens, "dec_in": dec_in, "targets": targets}


def make_greedy(folder, g):
    Vs, Vt, d, layers, T = 10, 11, 12, 2, 7
    net = bahdanau(Vs, Vt, d, layers)
    init_params(net, g)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for step in range(300):
        batch = reverse_batch(g, 32, T, Vs)
        opt.zero_grad()
        loss = loss_of(net, batch)
        loss.backward()
        grad_clipping(net, 1.0)
        opt.step()
    print("greedy model: loss after 300 Adam steps", loss.item())
    with torch.no_grad():  # attn's parameters are float32: round them
        for p in net.parameters():
            p.copy_(p.float().double())
    sources = [[5, 7, 4, EOS, PAD, PAD, PAD], [9, 6, EOS, PAD, PAD, PAD, PAD],
               [4, 8, 8, 6, 5, EOS, PAD], [7, 9, 5, 6, EOS, PAD, PAD],
               [6, 4, 9, 7, 8, EOS, PAD], [EOS, PAD, PAD, PAD, PAD, PAD, PAD]]
    cases = []
    for i, src in enumerate(sources):
        n = sum(1 for x in src if x != PAD)
        max_len = 3 if i == 4 else T  # the fifth stops at max_len, before its <eos>
        out, rows, margins = predict_seq2seq(net, src, n, max_len)
        assert min(margins) > 1e-3, margins
        cases.append({"src": src, "src_len": n, "max_len": max_len, "tokens": out,
                      "attention": rounded(rows, GRAD_DIGITS), "margins": rounded(margins, 6)})
        print("greedy", src[:n], "->", out, "min margin %.3g" % min(margins))
    doc = {"config": {"arch": "bahdanau", "src_vocab": Vs, "tgt_vocab": Vt, "hiddens": d,
                      "heads": 1, "layers": layers, "num_steps": T},
           "bos": BOS, "eos": EOS,
           "state_dict": {k: _f32(v.tolist()) for k, v in net.state_dict().items()},
           "cases": cases}
    write(folder, "greedy.json", doc)


# ---- a model file written by attn ---------------------------------------------------

def load_check(folder):
    """A model file of --arch bahdanau written by attn, loaded strictly into
    d2l's modules; the logits of a batch and a few greedy translations."""
    m = json.load(open(os.path.join(folder, "model.json"), encoding="utf-8"))
    assert m["command"] == "train" and m["task"] == "translate" and m["arch"] == "bahdanau"
    sd = {k: torch.tensor(v) for k, v in m["state_dict"].items()}
    Vs, Vt, T = len(m["src_vocab"]), len(m["tgt_vocab"]), m["num_steps"]
    net = bahdanau(Vs, Vt, m["num_hiddens"], m["num_layers"], m.get("rnn", "gru"),
                   m.get("score", "additive"))
    res = net.load_state_dict(sd, strict=True)
    assert not res.missing_keys and not res.unexpected_keys, res
    assert list(sd) == list(net.state_dict()), "the file's keys are not in state_dict order"
    g = torch.Generator().manual_seed(11)
    batch = make_batch(g, Vs, Vt, T, [T - 1, 2, 0], [T, 3, 1])
    net.train()
    with torch.no_grad():
        logits = logits_of(net, batch)
    doc = dict(batch)
    doc["logits"] = logits.tolist()
    doc["strict"] = True
    doc["keys"] = list(net.state_dict())
    translations = []
    for src, n in zip(batch["src"], batch["src_lens"]):
        out, rows, margins = predict_seq2seq(net, src, n, T)
        assert min(margins) > 1e-3, margins  # no tie for the argmax
        translations.append({"src": src, "src_len": n, "tokens": out, "attention": rows,
                             "margins": margins})
    doc["translations"] = translations
    write(folder, "logits.json", doc)
    print("loaded %s with strict=True: %d tensors; translations %s, smallest margin %.3g" % (
        os.path.join(folder, "model.json"), len(sd), [t["tokens"] for t in translations],
        min(min(t["margins"]) for t in translations)))


def main():
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    if len(sys.argv) > 2 and sys.argv[1] == "--load":
        load_check(sys.argv[2])
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/ref/bahdanau"
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(2025)
    write(out, "gru.json", make_gru(g))
    for case in CASES:
        make_case(out, case, g)
    make_greedy(out, g)
    g15 = torch.Generator().manual_seed(2026)
    write(out, "lstm.json", make_lstm(g15))
    for case in CASES_15:
        make_case(out, case, g15)
    # every state_dict written loads strictly into d2l's modules
    for name in sorted(os.listdir(out)):
        if name in ("gru.json", "lstm.json"):
            continue
        doc = json.load(open(os.path.join(out, name)))
        c = doc["config"]
        net = bahdanau(c["src_vocab"], c["tgt_vocab"], c["hiddens"], c["layers"],
                       c.get("rnn", "gru"), c.get("score", "additive"))
        dicts = [doc["state_dict"]] + [doc[k]["state_dict"] for k in ("sgd", "adam") if k in doc]
        for sd in dicts:
            res = net.load_state_dict({k: torch.tensor(v) for k, v in sd.items()}, strict=True)
            assert not res.missing_keys and not res.unexpected_keys, (name, res)
            assert list(sd) == list(net.state_dict()), name
        print("strict load:", name, len(dicts), "state_dicts")


if __name__ == "__main__":
    main()
