"""Group translate_explain: attn translate --explain --json (SPEC §11,
§14's hover), the "explain" member that holds every cell's path of the
attentions a translation's page shows. A tiny Transformer (2 blocks a
side, d 8, 2 heads of p 4, FFN 16) is trained for a few steps; its model
file's state_dict drives a forward pass written here in plain Python (d2l's
TransformerEncoder and TransformerDecoder: embedding·√d + P, multi-head
attention without biases, AddNorm with LayerNorm's ε 1e-5, the FFN), on
the source row attn read and <bos> + the translation it wrote. Every cell
of the cross-attention, the encoder's and the decoder's (causal)
self-attention is checked against it: q, k, v, q·k, ÷√p, the mask (the
source's <pad> keys, the decoder's later keys), the masked score, the
row's max and Σexp, the head's output; and the weight e^(s − m) / Σ
against --json's own weights. Then Bahdanau models (d 8), additive and
dot: every cell recomputed from the vectors shown and the model's W_q,
W_k, w_v (W_q q, W_k k, tanh, w_vᵀ tanh or q·k/√d, the mask, the row's
max and Σexp, the weight against --json's, the context Σ w_j H_j)."""
import json
import math
import os

from .common import check, expect, run

TOL = 1e-4
SENTENCE = "the dog sees a zebra ."  # "zebra": read as <unk>


def near(a, b, what):
    return check(abs(a - b) <= TOL * max(1.0, abs(b)), "%s: %r, want %r" % (what, a, b))


def linear(W, x, b=None):
    """W (out, in) times x (in,), plus b."""
    y = [sum(w * xi for w, xi in zip(row, x)) for row in W]
    return y if b is None else [a + c for a, c in zip(y, b)]


def layer_norm(x, g, b):
    mu = sum(x) / len(x)
    var = sum((a - mu) ** 2 for a in x) / len(x)
    return [(a - mu) / math.sqrt(var + 1e-5) * w + c for a, w, c in zip(x, g, b)]


def embed(E, ids, d):
    """d2l: embedding(X)·√d + P, P the sinusoid."""
    out = []
    for i, t in enumerate(ids):
        row = []
        for j in range(d):
            angle = i / 10000 ** ((j - j % 2) / d)
            row.append(E[t][j] * math.sqrt(d) + (math.sin(angle) if j % 2 == 0 else math.cos(angle)))
        out.append(row)
    return out


def mha(sd, pre, xq, xkv, nh, valid, causal, cells):
    """d2l's MultiHeadAttention; each cell's path into cells[(h, i, j)]."""
    Q = [linear(sd[pre + "W_q.weight"], x) for x in xq]
    K = [linear(sd[pre + "W_k.weight"], x) for x in xkv]
    V = [linear(sd[pre + "W_v.weight"], x) for x in xkv]
    d = len(Q[0])
    p = d // nh
    concat = [[0.0] * d for _ in Q]
    for h in range(nh):
        sl = slice(h * p, h * p + p)
        for i, q in enumerate(Q):
            row = []
            for j, k in enumerate(K):
                s = sum(a * b for a, b in zip(q[sl], k[sl]))
                masked = j >= valid or (causal and j > i)
                row.append((s, s / math.sqrt(p), masked, -1e6 if masked else s / math.sqrt(p)))
            mx = max(r[3] for r in row)
            se = sum(math.exp(r[3] - mx) for r in row)
            w = [math.exp(r[3] - mx) / se for r in row]
            out = [sum(w[j] * V[j][sl][c] for j in range(len(K))) for c in range(p)]
            concat[i][sl] = out
            for j, r in enumerate(row):
                cells[(h, i, j)] = dict(q=q[sl], k=K[j][sl], v=V[j][sl], score=r[0], scaled=r[1],
                                        masked=r[2], masked_score=r[3], row_max=mx,
                                        row_sum_exp=se, weight=w[j], out=out)
    return [linear(sd[pre + "W_o.weight"], c) for c in concat]


def addnorm(sd, pre, x, y):
    return [layer_norm([a + b for a, b in zip(xr, yr)], sd[pre + ".ln.weight"], sd[pre + ".ln.bias"])
            for xr, yr in zip(x, y)]


def ffn(sd, pre, x):
    return [linear(sd[pre + "dense2.weight"],
                   [max(0.0, a) for a in linear(sd[pre + "dense1.weight"], r, sd[pre + "dense1.bias"])],
                   sd[pre + "dense2.bias"]) for r in x]


def forward(model, src, S, dec_in):
    """The encoder on src (T ids, S valid), the decoder on dec_in: every
    attention's cells, {"encoder"|"decoder"|"cross": [per block {(h, i, j): …}]}."""
    sd, d, nh, L = model["state_dict"], model["num_hiddens"], model["num_heads"], model["num_layers"]
    cells = {"encoder": [], "decoder": [], "cross": []}
    x = embed(sd["encoder.embedding.weight"], src, d)
    for l in range(L):
        pre = "encoder.blks.block%d." % l
        c = {}
        y = addnorm(sd, pre + "addnorm1", x, mha(sd, pre + "attention.", x, x, nh, S, False, c))
        x = addnorm(sd, pre + "addnorm2", y, ffn(sd, pre + "ffn.", y))
        cells["encoder"].append(c)
    enc = x
    x = embed(sd["decoder.embedding.weight"], dec_in, d)
    for l in range(L):
        pre = "decoder.blks.block%d." % l
        c1, c2 = {}, {}
        y = addnorm(sd, pre + "addnorm1", x,
                    mha(sd, pre + "attention1.", x, x, nh, len(dec_in), True, c1))
        z = addnorm(sd, pre + "addnorm2", y, mha(sd, pre + "attention2.", y, enc, nh, S, False, c2))
        x = addnorm(sd, pre + "addnorm3", z, ffn(sd, pre + "ffn.", z))
        cells["decoder"].append(c1)
        cells["cross"].append(c2)
    return cells


def check_attention(e, doc, name, weights, cells, nq, nk, shown):
    """Every cell (l, h, i, j) of e[name] against the recomputation; the
    weight of each shown key (j < shown) against --json's weights.
    Returns (cells masked, of which causal, of which <pad>)."""
    a, F, seen = e[name], e["first"], [0, 0, 0]
    check(a["queries"] == nq and a["keys"] == nk, "%s: %d queries × %d keys, want %d × %d"
          % (name, a["queries"], a["keys"], nq, nk))
    for l, block in enumerate(cells):
        for (h, i, j), c in sorted(block.items()):
            if i >= nq:
                continue  # the encoder's <pad> queries: not shown
            at = "%s block %d head %d cell (%d, %d)" % (name, l + 1, h + 1, i, j)
            for part, got, want in (("q", a["q"][l][h][i], c["q"]), ("k", a["k"][l][h][j], c["k"]),
                                    ("v", a["v"][l][h][j], c["v"]),
                                    ("head_output", a["head_output"][l][h][i], c["out"])):
                check(len(got) == min(F, len(want)), "%s: %s has %d entries" % (at, part, len(got)))
                for x, y in zip(got, want):
                    near(x, y, "%s: %s" % (at, part))
            score = a["scores"][l][h][i][j]
            near(score, c["score"], at + ": q·k")
            # q·k from the vectors shown (p = F: they are whole)
            near(score, sum(x * y for x, y in zip(a["q"][l][h][i], a["k"][l][h][j])),
                 at + ": q·k of the shown q and k")
            near(a["scaled"][l][h][i][j], score / e["scale"], at + ": q·k / √p")
            flag = a["masked"][l][h][i][j]
            check(flag == (1 if c["masked"] else 0), "%s: masked %r" % (at, flag))
            if flag:
                seen[0] += 1
                seen[1] += j > i and name == "decoder"
                seen[2] += j >= shown
            ms = a["masked_scores"][l][h][i][j]
            near(ms, c["masked_score"], at + ": masked score")
            mx, se = a["row_max"][l][h][i], a["row_sum_exp"][l][h][i]
            near(mx, c["row_max"], at + ": row max")
            near(se, c["row_sum_exp"], at + ": Σexp")
            w = math.exp(ms - mx) / se  # the weight from the member's own numbers
            near(w, c["weight"], at + ": e^(s − m) / Σ")
            if j < shown:
                near(w, weights[l][h][i][j], at + ": the weight against --json's")
                if flag:
                    check(weights[l][h][i][j] == 0, at + ": masked, --json's weight 0")
            else:
                check(w < 1e-30, at + ": a <pad> key's weight is 0")
    return seen


def group_translate_explain(tmp):
    model = os.path.join(tmp, "m.json")
    expect(["train", "--task", "translate", "--steps", "40", "--layers", "2", "--hiddens", "8",
            "--heads", "2", "--ffn", "16", "--save", model], 0)
    with open(model, encoding="utf-8") as f:
        m = json.load(f)
    T = m["num_steps"]
    base = ["translate", "--input", model, "--all", "--json", "-", SENTENCE]
    rc, plain, err = run(base)
    check(rc == 0, "--all --json -: exit %d (%r)" % (rc, err))
    rc, out, err = run(base[:-1] + ["--explain", SENTENCE])
    check(rc == 0, "--all --explain --json -: exit %d (%r)" % (rc, err))
    # without --explain the JSON is as before: the member is appended last
    head = plain.rstrip()
    check(head.endswith("}") and out.startswith(head[:-1].rstrip() + ",") and
          '"explain"' not in plain, "--explain adds the member after --json's members, the rest "
          "byte for byte")
    doc = json.loads(out)
    e = doc["explain"]
    check(e["score"] == "dot" and e["p"] == 4 and e["first"] == 4, "dot, p 4, first 4")
    near(e["scale"], 2.0, "scale √4")
    check(e["mask_value"] == -1000000, "mask value -1e6")
    # the source row attn read: the words' ids (<unk> for zebra), <eos>, <pad> to T
    src_v, tgt_v = {t: i for i, t in enumerate(m["src_vocab"])}, {t: i for i, t in
                                                                  enumerate(m["tgt_vocab"])}
    S, R = len(doc["source"]), len(doc["target"])
    check(doc["source"][-1] == "<eos>" and "<unk>" in doc["source"] and S < T,
          "the source: %r" % doc["source"])
    src = [src_v[t] for t in doc["source"]] + [src_v["<pad>"]] * (T - S)
    dec_in = [tgt_v[t] for t in doc["decoder_input"]]
    check(doc["decoder_input"][0] == "<bos>" and len(dec_in) == R, "the decoder's input")
    cells = forward(m, src, S, dec_in)
    got = {}
    for name, w, nq, nk, shown in (("cross", "cross_attention", R, T, S),
                                   ("encoder", "encoder_attention", S, T, S),
                                   ("decoder", "decoder_attention", R, R, R)):
        got[name] = check_attention(e, doc, name, doc[w], cells[name], nq, nk, shown)
    L, NH = m["num_layers"], m["num_heads"]
    check(got["decoder"][1] == L * NH * R * (R - 1) // 2,
          "decoder: every later key masked (%d cells)" % got["decoder"][1])
    for name, nq in (("cross", R), ("encoder", S)):
        check(got[name][2] == L * NH * nq * (T - S) and got[name][0] == got[name][2],
              "%s: the %d <pad> keys of each row masked, no other (%d cells)"
              % (name, T - S, got[name][2]))
    # without --all: the cross-attention only
    rc, out, _ = run(["translate", "--input", model, "--explain", "--json", "-", SENTENCE])
    e1 = json.loads(out)["explain"]
    check(rc == 0 and "cross" in e1 and "encoder" not in e1 and "decoder" not in e1 and
          e1["cross"] == e["cross"], "without --all: the same cross member alone")
    # the same bytes twice; --json FILE the same bytes as --json -
    path = os.path.join(tmp, "ex.json")
    expect(["translate", "--input", model, "--all", "--explain", "--json", path, SENTENCE], 0)
    with open(path, encoding="utf-8") as f:
        check(f.read() == run(base[:-1] + ["--explain", SENTENCE])[1],
              "--json FILE holds the bytes of --json -, run twice")
    # the errors
    T_ = "attn translate: "
    expect(["translate", "--input", model, "--explain", SENTENCE], 2,
           err=T_ + "--explain writes every weight's path into --json's \"explain\" member: "
           "give --json FILE (- for stdout)")
    expect(["translate", "--input", model, "--head-importance", "--explain", "--json", "-"], 2)
    # a page's data is --json's object: --explain --html holds the member too (a page
    # rerun by its own attn keeps --explain and drops --json)
    page = os.path.join(tmp, "ex.html")
    expect(["translate", "--input", model, "--explain", "--html", page, SENTENCE], 0)
    with open(page, encoding="utf-8") as f:
        check('"explain"' in f.read(), "--explain --html: the page's data has the member")
    for score in ("additive", "dot"):
        check_bahdanau(tmp, score)


def check_bahdanau(tmp, score):
    """A Bahdanau model (d 8: every vector whole): its one attention per
    step, every cell recomputed from the vectors shown and the model's
    W_q, W_k, w_v; the query of step 0 is the encoder's final state."""
    bah = os.path.join(tmp, "bah-%s.json" % score)
    expect(["train", "--task", "translate", "--arch", "bahdanau", "--score", score, "--steps", "30",
            "--hiddens", "8", "--save", bah], 0)
    with open(bah, encoding="utf-8") as f:
        sd = json.load(f)["state_dict"]
    rc, out, err = run(["translate", "--input", bah, "--explain", "--json", "-", SENTENCE])
    check(rc == 0, "bahdanau %s --explain: exit %d (%r)" % (score, rc, err))
    doc = json.loads(out)
    e, W = doc["explain"], doc["cross_attention"][0][0]
    a = e["cross"]
    S, R, T = len(doc["source"]), len(doc["target"]), a["keys"]
    additive = score == "additive"
    check(e["score"] == score and e["p"] == 8 and e["first"] == 8 and list(e) ==
          (["score", "p", "first", "mask_value", "hiddens", "first_hiddens", "w_v", "cross"]
           if additive else ["score", "p", "first", "scale", "mask_value", "cross"]),
          "bahdanau %s: the member's keys %r" % (score, list(e)))
    check(a["queries"] == R and T == doc["model"]["num_steps"], "bahdanau: R queries, T keys")
    # one GRU layer: the decoder starts from the encoder's state after the whole row
    check(a["q"][0][0][0] == a["k"][0][0][T - 1], "bahdanau: step 0's query is the encoder's "
          "final state, H at position T-1")
    at0 = "bahdanau %s" % score
    if additive:
        for x, y in zip(e["w_v"], sd["decoder.attention.w_v.weight"][0]):
            near(x, y, at0 + ": w_v is the model's")
    masked_seen = 0
    for q in range(R):
        qv = a["q"][0][0][q]
        rowk = []
        for k in range(T):
            at = "%s cell (%d, %d)" % (at0, q, k)
            kv = a["k"][0][0][k]
            check(kv == a["v"][0][0][k], at + ": k = v = H_j")
            if additive:
                qa, ka = linear(sd["decoder.attention.W_q.weight"], qv), linear(sd["decoder.attention.W_k.weight"], kv)
                for i in range(8):
                    near(a["qa"][0][0][q][i], qa[i], at + ": W_q q")
                    near(a["ka"][0][0][k][i], ka[i], at + ": W_k k")
                    near(a["tanh"][0][0][q][k][i], math.tanh(a["qa"][0][0][q][i] + a["ka"][0][0][k][i]),
                         at + ": tanh")
                want = sum(w * t for w, t in zip(e["w_v"], a["tanh"][0][0][q][k]))
                near(a["scores"][0][0][q][k], want, at + ": w_vᵀ tanh(…)")
                s = a["scores"][0][0][q][k]
            else:
                near(a["scores"][0][0][q][k], sum(x * y for x, y in zip(qv, kv)), at + ": q·k")
                s = a["scores"][0][0][q][k] / math.sqrt(8)
                near(a["scaled"][0][0][q][k], s, at + ": ÷√8")
            masked = a["masked"][0][0][q][k]
            check(masked == (1 if k >= S else 0), at + ": masked only past the valid length")
            masked_seen += masked
            near(a["masked_scores"][0][0][q][k], -1e6 if masked else s, at + ": masked score")
            rowk.append(a["masked_scores"][0][0][q][k])
        mx = max(rowk)
        se = sum(math.exp(x - mx) for x in rowk)
        near(a["row_max"][0][0][q], mx, "%s row %d: max" % (at0, q))
        near(a["row_sum_exp"][0][0][q], se, "%s row %d: Σexp" % (at0, q))
        w = [math.exp(x - mx) / se for x in rowk]
        for k in range(S):
            near(w[k], W[q][k], "%s cell (%d, %d): the weight against --json's" % (at0, q, k))
        ctx = [sum(w[k] * a["v"][0][0][k][i] for k in range(T)) for i in range(8)]
        for i in range(8):
            near(a["head_output"][0][0][q][i], ctx[i], "%s row %d: the context Σ w_j H_j" % (at0, q))
    check(masked_seen == R * (T - S), "%s: the %d <pad> keys of each row masked" % (at0, T - S))
