#!/usr/bin/python3
"""Reference fixtures for attn's Transformer encoder-decoder (SPEC.md §11,
--arch transformer; src/nn/seq2seq/transformer.c), from PyTorch in float64.

Run with Debian's python (apt-get install python3-torch python3-numpy):
    /usr/bin/python3 scripts/gen_seq2seq_ref.py tests/ref/seq2seq
    /usr/bin/python3 scripts/gen_seq2seq_ref.py --load tests/ref/seq2seq_model
The first writes one JSON file per case into the folder; the C test
(tests/test_seq2seq.c) reads them and never needs PyTorch. The second reads
FOLDER/model.json, a model file in SPEC §11's form written by attn's C code
(test_seq2seq write-model FOLDER), loads its state_dict into the
EncoderDecoder below with load_state_dict(strict=True), and writes the
logits of a few pairs to FOLDER/logits.json for the C test.

The modules are zh.d2l.ai's (the seed's edition), written here from their
behaviour (d2l is not imported): masked_softmax (keys at or beyond
valid_len get -1e6), DotProductAttention, MultiHeadAttention (W_q, W_k, W_v,
W_o, bias=False by default; heads split as transpose_qkv does, valid_lens
repeated per head), PositionalEncoding, AddNorm, PositionWiseFFN,
EncoderBlock, TransformerEncoder, DecoderBlock (with its state[2]
key_values: during training the keys are the whole decoder input and
dec_valid_lens = 1 ... num_steps, a causal mask; during prediction the
earlier steps' inputs are kept and concatenated), TransformerDecoder
(dense over the target vocabulary) and EncoderDecoder. Everything here
runs in float64 (main sets torch's default dtype). The modules build in
the default dtype and convert with .to(dtype), P included (a buffer kept
out of the state_dict): scripts/bench_translate_torch.py imports them and
runs them in float32.

Where attn departs from zh.d2l.ai, on purpose, as SPEC §9 and §11 say:
  - dropout only on the attention weights; the fixtures use dropout 0;
  - --bias puts biases on the decoder's attentions too (zh.d2l.ai's
    DecoderBlock has none): use_bias on both sides here;
  - the loss is the cross-entropy averaged over the target entries that
    are not <pad> (d2l's MaskedSoftmaxCELoss averages over num_steps per
    sentence and sums the batch);
  - P is computed as attn computes it (in double, rounded to float32)
    instead of in float32 as d2l does: the same numbers to 1e-7;
  - during prediction the token of step t gets P[t] (PositionalEncoding
    with an offset, the number of positions already in state[2]);
    zh.d2l.ai adds P[0] at every step, because its decoder's input is one
    position long each time. The greedy fixture records d2l's own tokens
    too ("tokens_d2l_p0"), for the record; the C test checks "tokens".

Cases (CASES below): 1 and 2 blocks a side, FFN sizes 4 ... 16, with and
without biases, source valid_lens and target padding differing per
example, Ts != Tt, clipping (d2l's grad_clipping, theta 1) on and off;
06 has SPEC §16's additive heads in all three attentions (AdditiveScore:
"score": "additive" in its configuration, the score's weights under
"....attention.score.W_q.weight", "score.W_k.weight", "score.w_v.weight"
right after each attention's W_o).
Each case holds its configuration, the initial state_dict (float32
numbers, so that attn's float32 parameters are exactly PyTorch's), the
batch (src, src_lens, dec_in, targets with -1 at <pad>), the loss and every
parameter's gradient at step 0, and for SGD and Adam (PyTorch's defaults,
betas 0.9/0.999, eps 1e-8) 20 steps on that batch: the loss before each
step, the gradient norm before clipping, and every parameter after the
last step. greedy.json holds a model trained here on reversing a
sentence (its parameters rounded to float32) and d2l's predict_seq2seq
of a few sources: tokens, and every step's cross-attention.
"""
import json
import math
import os
import sys

import torch
from torch import nn

UNK, PAD, BOS, EOS = 0, 1, 2, 3  # d2l's Vocab: <unk>, then reserved tokens


# ---- zh.d2l.ai's modules ------------------------------------------------------

def masked_softmax(X, valid_lens):
    """Softmax over the last axis; keys at or beyond valid_len get -1e6."""
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1])
    keep = torch.arange(shape[-1])[None, :] < valid_lens[:, None]
    X = X.masked_fill(~keep, -1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)


class AdditiveScore(nn.Module):
    """SPEC §16's additive heads: zh.d2l.ai's AdditiveAttention scoring with
    num_hiddens A = p, no biases, one module shared by the heads (it sees
    the (B * NH, N, p) slices): w_v . tanh(W_q q + W_k k), unscaled."""

    def __init__(self, p):
        super().__init__()
        self.W_q = nn.Linear(p, p, bias=False)
        self.W_k = nn.Linear(p, p, bias=False)
        self.w_v = nn.Linear(p, 1, bias=False)

    def forward(self, queries, keys):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        return self.w_v(features).squeeze(-1)


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None, score=None):
        d = queries.shape[-1]
        if score is not None:  # the additive heads (AdditiveScore)
            scores = score(queries, keys)
        else:
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def transpose_qkv(X, num_heads):
    """(B, N, d) -> (B * num_heads, N, d / num_heads), head i = columns i*p ..."""
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout,
                 bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens, getattr(self, "score", None))
        return self.W_o(transpose_output(output, self.num_heads))


def attn_P(max_len, d):
    """The chapter's P as attn computes it (posenc.c): in double, then float32."""
    P = torch.zeros(max_len, d)
    for j in range(0, d, 2):
        omega = 1.0 / math.pow(10000.0, j / d)
        for i in range(max_len):
            P[i, j] = math.sin(i * omega)
            if j + 1 < d:
                P[i, j + 1] = math.cos(i * omega)
    return P.float().double().unsqueeze(0)


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # a buffer outside the state_dict: .to(dtype) converts it with the rest
        self.register_buffer("P", attn_P(max_len, num_hiddens), persistent=False)

    def forward(self, X, offset=0):
        X = X + self.P[:, offset:offset + X.shape[1], :]
        return self.dropout(X)


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class EncoderBlock(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                            num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(norm_shape, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoder(nn.Module):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout,
                 use_bias=False):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), EncoderBlock(
                key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                ffn_num_hiddens, num_heads, dropout, use_bias))

    def forward(self, X, valid_lens):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights
        return X


class DecoderBlock(nn.Module):
    """The i-th block of the decoder."""

    def __init__(self, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, dropout, i, use_bias=False):
        super().__init__()
        self.i = i
        self.attention1 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                             num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(norm_shape, dropout)
        self.attention2 = MultiHeadAttention(key_size, query_size, value_size, num_hiddens,
                                             num_heads, dropout, use_bias)
        self.addnorm2 = AddNorm(norm_shape, dropout)
        self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(norm_shape, dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        # training: the whole decoder input at once, state[2][i] is None;
        # prediction: the earlier steps' inputs of this block, and this one's
        if state[2][self.i] is None:
            key_values = X
        else:
            key_values = torch.cat((state[2][self.i], X), dim=1)
        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = X.shape
            # every row [1, 2, ..., num_steps]: query t sees keys 0 ... t
            dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch_size, 1)
        else:
            dec_valid_lens = None
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
                 ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout,
                 use_bias=False, d2l_p0=False):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.d2l_p0 = d2l_p0
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i), DecoderBlock(
                key_size, query_size, value_size, num_hiddens, norm_shape, ffn_num_input,
                ffn_num_hiddens, num_heads, dropout, i, use_bias))
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        # attn: the positions already decoded (state[2]) shift P; d2l: none
        offset = 0 if state[2][0] is None or self.d2l_p0 else state[2][0].shape[1]
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens), offset)
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights
        return self.dense(X), state


class EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X, dec_X, *args):
        enc_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_outputs, *args)
        return self.decoder(dec_X, dec_state)


def transformer(Vs, Vt, d, heads, layers, ffn, bias, dropout=0.0, d2l_p0=False):
    """d2l's Transformer as its chapter builds it: key = query = value size d."""
    enc = TransformerEncoder(Vs, d, d, d, d, [d], d, ffn, heads, layers, dropout, bias)
    dec = TransformerDecoder(Vt, d, d, d, d, [d], d, ffn, heads, layers, dropout, bias, d2l_p0)
    return EncoderDecoder(enc, dec)


def predict_seq2seq(net, src, src_len, num_steps, max_len):
    """d2l's predict_seq2seq on one source of ids (already padded to
    num_steps): greedy, from <bos>, stop at <eos> or max_len tokens. Returns
    the ids, every step's cross-attention (L, NH, Ts) and the margin of each
    step's largest logit over the second."""
    net.eval()
    enc_valid_len = torch.tensor([src_len])
    enc_X = torch.tensor([src])
    with torch.no_grad():
        enc_outputs = net.encoder(enc_X, enc_valid_len)
        state = net.decoder.init_state(enc_outputs, enc_valid_len)
        dec_X = torch.tensor([[BOS]])
        out, cross, margins = [], [], []
        for _ in range(max_len):
            Y, state = net.decoder(dec_X, state)
            top = torch.topk(Y[0, 0], 2).values
            margins.append((top[0] - top[1]).item())
            dec_X = Y.argmax(dim=2)
            pred = int(dec_X[0, 0])
            # (B * NH, 1, Ts) per block -> (L, NH, Ts)
            cross.append([w[:, 0, :].tolist() for w in net.decoder._attention_weights[1]])
            if pred == EOS:
                break
            out.append(pred)
    return out, cross, margins


# ---- fixtures ------------------------------------------------------------------

def init_params(net, d, g):
    """SPEC §9's distributions, drawn from torch's generator in float32:
    embeddings N(0, 1/d), nn.Linear weights and biases uniform +-1/sqrt(in),
    LayerNorms away from the identity (weight U(0.5, 1.5), bias U(-0.5, 0.5))
    so that their gradients are tested as after training."""
    with torch.no_grad():
        mods = dict(net.named_modules())
        for name, p in net.named_parameters():
            mod = mods[name.rsplit(".", 1)[0]]
            if isinstance(mod, nn.Embedding):
                v = torch.randn(p.shape, generator=g, dtype=torch.float32) / math.sqrt(d)
            elif isinstance(mod, nn.Linear):
                bound = 1.0 / math.sqrt(mod.in_features)
                v = (torch.rand(p.shape, generator=g, dtype=torch.float32) * 2 - 1) * bound
            elif name.endswith(".ln.weight"):
                v = torch.rand(p.shape, generator=g, dtype=torch.float32) + 0.5
            else:
                v = torch.rand(p.shape, generator=g, dtype=torch.float32) - 0.5
            p.copy_(v.double())


def make_batch(g, Vs, Vt, Ts, Tt, src_words, tgt_words):
    """Sources: words (ids 4 ... Vs-1) + <eos>, padded with <pad> to Ts (or
    cut to Ts, as d2l's truncate_pad, when too long); targets likewise; the
    decoder input <bos> + target[:-1]; targets with -1 at <pad>."""
    src, lens, dec_in, targets = [], [], [], []
    for n, m in zip(src_words, tgt_words):
        s = torch.randint(4, Vs, (n,), generator=g).tolist() + [EOS]
        s = (s + [PAD] * Ts)[:Ts]
        t = torch.randint(4, Vt, (m,), generator=g).tolist() + [EOS]
        t = (t + [PAD] * Tt)[:Tt]
        src.append(s)
        lens.append(sum(1 for x in s if x != PAD))
        dec_in.append([BOS] + t[:-1])
        targets.append([x if x != PAD else -1 for x in t])
    return {"src": src, "src_lens": lens, "dec_in": dec_in, "targets": targets}


def loss_of(net, batch):
    net.train()  # dropout 0: training mode only for the decoder's causal mask
    logits, _ = net(torch.tensor(batch["src"]), torch.tensor(batch["dec_in"]),
                    torch.tensor(batch["src_lens"]))
    Vt = logits.shape[-1]
    return nn.functional.cross_entropy(logits.reshape(-1, Vt),
                                       torch.tensor(batch["targets"]).reshape(-1),
                                       ignore_index=-1)


def grad_clipping(net, theta):
    """d2l's grad_clipping; returns the norm before clipping."""
    params = [p for p in net.parameters() if p.requires_grad]
    norm = torch.sqrt(sum(torch.sum(p.grad ** 2) for p in params))
    if theta and norm > theta:
        for p in params:
            p.grad[:] *= theta / norm
    return norm.item()


def state(net):
    return {k: v.detach().tolist() for k, v in net.state_dict().items()}


def train_steps(net, init, batch, kind, lr, clip, steps):
    net.load_state_dict(init)
    opt = (torch.optim.SGD(net.parameters(), lr=lr) if kind == "sgd"
           else torch.optim.Adam(net.parameters(), lr=lr))
    losses, norms = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(net, batch)
        losses.append(loss.item())
        loss.backward()
        norms.append(grad_clipping(net, clip))
        # the C code must take the same branch of the clipping
        assert not clip or abs(norms[-1] - clip) > 1e-3, (kind, norms[-1])
        opt.step()
    return {"optimizer": kind, "lr": lr, "steps": steps, "losses": losses, "grad_norms": norms,
            "state_dict": state(net)}


CASES = [
    # name, Vs, Vt, d, heads, layers, ffn, bias, clip, Ts, Tt, source words, target words
    ("01_l1_ffn8_noclip", 9, 11, 8, 2, 1, 8, False, 0.0, 5, 6, [4, 2, 1], [5, 3, 1]),
    ("02_l2_ffn16_bias_clip", 10, 9, 8, 2, 2, 16, True, 1.0, 6, 4, [5, 3, 2, 6], [2, 3, 1, 0]),
    ("03_l2_ffn4_heads4_clip", 12, 10, 8, 4, 2, 4, False, 1.0, 5, 5, [3, 4, 1], [4, 1, 2]),
    ("04_l1_ffn12_bias_noclip", 8, 12, 12, 3, 1, 12, True, 0.0, 4, 7, [3, 1, 2, 0], [6, 2, 4, 3]),
    ("05_l2_ffn6_heads1_noclip", 7, 8, 6, 1, 2, 6, False, 0.0, 7, 5, [6, 2, 4], [3, 4, 1]),
]
SGD_LR, ADAM_LR, STEPS = 0.1, 0.01, 20
# SPEC §16: every head of the three attentions scored additively (made
# last, from its own generator, so that the files above stay as they were)
ADDITIVE_CASE = ("06_l2_ffn8_bias_additive_clip", 9, 10, 8, 2, 2, 8, True, 1.0, 5, 6,
                 [4, 2, 1], [5, 3, 1])


def write(folder, name, doc):
    with open(os.path.join(folder, name), "w") as f:
        json.dump(doc, f)
        f.write("\n")


def make_case(folder, case, g, score="dot"):
    (name, Vs, Vt, d, heads, layers, ffn, bias, clip, Ts, Tt, sw, tw) = case
    net = transformer(Vs, Vt, d, heads, layers, ffn, bias)
    if score == "additive":
        # every attention's score module, registered after its W_o: the
        # state_dict order attn lists ("....attention.score.W_q.weight")
        for mod in net.modules():
            if isinstance(mod, MultiHeadAttention):
                mod.score = AdditiveScore(d // heads)
    init_params(net, d, g)
    init = {k: v.clone() for k, v in net.state_dict().items()}
    batch = make_batch(g, Vs, Vt, Ts, Tt, sw, tw)
    doc = {"config": {"src_vocab": Vs, "tgt_vocab": Vt, "hiddens": d, "heads": heads,
                      "layers": layers, "ffn": ffn, "bias": bias, "clip": clip},
           "state_dict": state(net)}
    if score != "dot":
        doc["config"]["score"] = score
    doc.update(batch)
    net.zero_grad()
    loss = loss_of(net, batch)
    loss.backward()
    doc["loss"] = loss.item()
    doc["grads"] = {k: p.grad.tolist() for k, p in net.named_parameters()}
    doc["sgd"] = train_steps(net, init, batch, "sgd", SGD_LR, clip, STEPS)
    doc["adam"] = train_steps(net, init, batch, "adam", ADAM_LR, clip, STEPS)
    write(folder, name + ".json", doc)
    print(name, "loss", doc["loss"], "-> sgd", doc["sgd"]["losses"][-1], "adam",
          doc["adam"]["losses"][-1], "norms", min(doc["sgd"]["grad_norms"]),
          max(doc["adam"]["grad_norms"]))


def reverse_batch(g, B, Ts, Vs, Vt):
    """Sources of 2 ... Ts-3 words; the target is the source reversed, each
    word w written as target word w + 1 (so that the two vocabularies differ)."""
    src, lens, dec_in, targets = [], [], [], []
    for _ in range(B):
        n = int(torch.randint(2, Ts - 2, (1,), generator=g))
        w = torch.randint(4, Vs, (n,), generator=g).tolist()
        s = (w + [EOS] + [PAD] * Ts)[:Ts]
        t = ([x + 1 for x in reversed(w)] + [EOS] + [PAD] * Ts)[:Ts]
        src.append(s)
        lens.append(n + 1)
        dec_in.append([BOS] + t[:-1])
        targets.append([x if x != PAD else -1 for x in t])
    return {"src": src, "src_lens": lens, "dec_in": dec_in, "targets": targets}


def make_greedy(folder, g):
    Vs, Vt, d, heads, layers, ffn, Ts = 10, 11, 16, 2, 2, 32, 8
    net = transformer(Vs, Vt, d, heads, layers, ffn, False)
    init_params(net, d, g)
    with torch.no_grad():  # LayerNorms as PyTorch starts them, for training
        for k, p in net.named_parameters():
            if k.endswith(".ln.weight"):
                p.fill_(1.0)
            elif k.endswith(".ln.bias"):
                p.fill_(0.0)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for step in range(400):
        batch = reverse_batch(g, 32, Ts, Vs, Vt)
        opt.zero_grad()
        loss = loss_of(net, batch)
        loss.backward()
        grad_clipping(net, 1.0)
        opt.step()
    print("greedy model: loss after 400 Adam steps", loss.item())
    with torch.no_grad():  # attn's parameters are float32: round them
        for p in net.parameters():
            p.copy_(p.float().double())
    p0 = transformer(Vs, Vt, d, heads, layers, ffn, False, d2l_p0=True)
    p0.load_state_dict(net.state_dict())
    sources = [[5, 7, 4, EOS, PAD, PAD, PAD, PAD], [9, 6, EOS, PAD, PAD, PAD, PAD, PAD],
               [4, 8, 8, 6, 5, EOS, PAD, PAD], [7, 9, 5, 6, EOS, PAD, PAD, PAD],
               [6, 4, 9, 7, 8, EOS, PAD, PAD]]
    cases = []
    for i, src in enumerate(sources):
        n = sum(1 for x in src if x != PAD)
        max_len = 3 if i == 4 else Ts  # the last stops at max_len, before its <eos>
        out, cross, margins = predict_seq2seq(net, src, n, Ts, max_len)
        assert min(margins) > 1e-3, margins
        d2l_out, _, _ = predict_seq2seq(p0, src, n, Ts, max_len)
        cases.append({"src": src, "src_len": n, "max_len": max_len, "tokens": out,
                      "cross": cross, "margins": margins, "tokens_d2l_p0": d2l_out})
        print("greedy", src[:n], "->", out, "min margin %.3g" % min(margins),
              "(d2l's P[0] decoder:", d2l_out, ")")
    doc = {"config": {"src_vocab": Vs, "tgt_vocab": Vt, "hiddens": d, "heads": heads,
                      "layers": layers, "ffn": ffn, "bias": False, "num_steps": Ts},
           "bos": BOS, "eos": EOS, "state_dict": state(net), "cases": cases}
    write(folder, "greedy.json", doc)


def load_check(folder):
    """A model file written by attn, loaded strictly into d2l's modules."""
    m = json.load(open(os.path.join(folder, "model.json"), encoding="utf-8"))
    assert m["command"] == "train" and m["task"] == "translate" and m["arch"] == "transformer"
    sd = {k: torch.tensor(v) for k, v in m["state_dict"].items()}
    bias = "encoder.blks.block0.attention.W_q.bias" in sd
    net = transformer(len(m["src_vocab"]), len(m["tgt_vocab"]), m["num_hiddens"],
                      m["num_heads"], m["num_layers"], m["ffn_num_hiddens"], bias)
    res = net.load_state_dict(sd, strict=True)
    assert not res.missing_keys and not res.unexpected_keys, res
    assert list(sd) == list(net.state_dict()), "the file's keys are not in state_dict order"
    g = torch.Generator().manual_seed(11)
    Ts = Tt = m["num_steps"]
    batch = make_batch(g, len(m["src_vocab"]), len(m["tgt_vocab"]), Ts, Tt, [Ts - 1, 2, 0],
                       [Tt, 3, 1])
    net.train()
    with torch.no_grad():
        logits, _ = net(torch.tensor(batch["src"]), torch.tensor(batch["dec_in"]),
                        torch.tensor(batch["src_lens"]))
    doc = dict(batch)
    doc["logits"] = logits.tolist()
    doc["strict"] = True
    doc["keys"] = list(net.state_dict())
    write(folder, "logits.json", doc)
    print("loaded %s with strict=True: %d tensors" % (os.path.join(folder, "model.json"),
                                                     len(sd)))


def main():
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    if len(sys.argv) > 2 and sys.argv[1] == "--load":
        load_check(sys.argv[2])
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/ref/seq2seq"
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(2024)
    for case in CASES:
        make_case(out, case, g)
    make_greedy(out, g)
    make_case(out, ADDITIVE_CASE, torch.Generator().manual_seed(2025), "additive")


if __name__ == "__main__":
    main()
