"""Group translate_additive: attn translate on a Transformer whose every
head scores additively (attn train --arch transformer --score additive,
d2l 10.7's Exercise 2: w_vᵀ tanh(W_q q_h + W_k k_h), one scorer per
attention module, A = p), which the fast path cannot run: greedy decoding,
--all, --explain, --head-importance and --prune-heads on the reference
loops. A tiny model (2 blocks a side, d 8, 2 heads of p 4, FFN 16) is
trained here for a few steps (under valgrind 2 steps on the three pairs
below, not the built-in task, whose 200 held-out pairs take a minute
there); its model file's
state_dict drives a forward pass written here in plain Python (d2l's
encoder and decoder blocks, translate_explain.py's layers, the additive
score by hand), and everything attn prints is checked against it:
- the translation is the Python greedy decoding's (each step's argmax of
  decoder.dense's logits, until <eos>);
- every weight of the cross-attention, the encoder's and the decoder's
  self-attention (--all) is the Python forward pass's on <bos> + the
  translation, and every row sums to 1;
- --explain: every cell's q, k, v, W_q q_h, W_k k_h, tanh, the block's
  w_v (the model file's), w_vᵀ tanh (from the numbers shown too), the
  mask, the row's max and Σexp, e^(s − m) / Σ against --json's weight and
  the head's output; no "scale";
- --prune-heads on --data pairs: the full and the pruned model's loss are
  the Python teacher-forced cross-entropy with and without the heads (a
  head off: zeros in the concat before W_o), the sentence's two
  translations the Python greedy decodings with and without them;
  --head-importance's Δloss of every head is the Python loss without that
  head minus the full model's;
- --max-mem refuses before it writes anything, at the estimate it names;
- a model file with a bad score, a missing or misshapen scorer weight is
  refused with the place named.
"""
import json
import math
import os

from .common import VALGRIND, check, expect, png_info, run, write
from .translate_explain import addnorm, embed, ffn, linear, near

SENTENCE = "a cat sees the big dog ."
KINDS = ("enc", "dec", "cross")
PAIRS = [["a cat sees the dog .", "un chat voit le chien ."],
         ["the big red dog finds a hat .", "le grand chien rouge trouve un chapeau ."],
         ["a small girl likes the green apple .", "une petite fille aime la pomme verte ."]]


def mha_additive(sd, pre, xq, xkv, nh, valid, causal, cells, off=()):
    """d2l's MultiHeadAttention with every head scored by the module's
    AdditiveAttention (pre + "score.*"); heads in off give zeros; each
    cell's path into cells[(h, i, j)]."""
    Q = [linear(sd[pre + "W_q.weight"], x) for x in xq]
    K = [linear(sd[pre + "W_k.weight"], x) for x in xkv]
    V = [linear(sd[pre + "W_v.weight"], x) for x in xkv]
    Wq, Wk = sd[pre + "score.W_q.weight"], sd[pre + "score.W_k.weight"]
    wv = sd[pre + "score.w_v.weight"][0]
    d = len(Q[0])
    p = d // nh
    concat = [[0.0] * d for _ in Q]
    for h in range(nh):
        sl = slice(h * p, h * p + p)
        qa = [linear(Wq, q[sl]) for q in Q]
        ka = [linear(Wk, k[sl]) for k in K]
        for i in range(len(Q)):
            row = []
            for j in range(len(K)):
                th = [math.tanh(a + b) for a, b in zip(qa[i], ka[j])]
                s = sum(w * t for w, t in zip(wv, th))
                masked = j >= valid or (causal and j > i)
                row.append((s, th, masked, -1e6 if masked else s))
            mx = max(r[3] for r in row)
            se = sum(math.exp(r[3] - mx) for r in row)
            w = [math.exp(r[3] - mx) / se for r in row]
            out = [sum(w[j] * V[j][sl][c] for j in range(len(K))) for c in range(p)]
            concat[i][sl] = [0.0] * p if h in off else out
            for j, r in enumerate(row):
                cells[(h, i, j)] = dict(q=Q[i][sl], k=K[j][sl], v=V[j][sl], qa=qa[i], ka=ka[j],
                                        tanh=r[1], score=r[0], masked=r[2], masked_score=r[3],
                                        row_max=mx, row_sum_exp=se, weight=w[j],
                                        out=[0.0] * p if h in off else out)
    return [linear(sd[pre + "W_o.weight"], c) for c in concat]


def forward(model, src, S, dec_in, off=frozenset()):
    """The encoder on src (T ids, S valid), the decoder on dec_in; heads
    (kind, block, head) in off switched off. Returns every attention's
    cells by kind and block, and the logits (len(dec_in), Vt)."""
    sd, d, nh, L = model["state_dict"], model["num_hiddens"], model["num_heads"], model["num_layers"]
    cells = {"encoder": [], "decoder": [], "cross": []}

    def off_in(kind, l):
        return {h for (k, b, h) in off if k == kind and b == l}
    x = embed(sd["encoder.embedding.weight"], src, d)
    for l in range(L):
        pre = "encoder.blks.block%d." % l
        c = {}
        y = addnorm(sd, pre + "addnorm1", x,
                    mha_additive(sd, pre + "attention.", x, x, nh, S, False, c, off_in("enc", l)))
        x = addnorm(sd, pre + "addnorm2", y, ffn(sd, pre + "ffn.", y))
        cells["encoder"].append(c)
    enc = x
    x = embed(sd["decoder.embedding.weight"], dec_in, d)
    for l in range(L):
        pre = "decoder.blks.block%d." % l
        c1, c2 = {}, {}
        y = addnorm(sd, pre + "addnorm1", x, mha_additive(sd, pre + "attention1.", x, x, nh,
                                                          len(dec_in), True, c1, off_in("dec", l)))
        z = addnorm(sd, pre + "addnorm2", y, mha_additive(sd, pre + "attention2.", y, enc, nh, S,
                                                          False, c2, off_in("cross", l)))
        x = addnorm(sd, pre + "addnorm3", z, ffn(sd, pre + "ffn.", z))
        cells["decoder"].append(c1)
        cells["cross"].append(c2)
    logits = [linear(sd["decoder.dense.weight"], r, sd["decoder.dense.bias"]) for r in x]
    return cells, logits


def source_row(model, words):
    """attn's source row: the words' ids (<unk> when unknown), <eos>, <pad>
    to T; and its valid length."""
    v, T = {t: i for i, t in enumerate(model["src_vocab"])}, model["num_steps"]
    ids = ([v.get(w, v["<unk>"]) for w in words] + [v["<eos>"]])[:T]
    return ids + [v["<pad>"]] * (T - len(ids)), len(ids)


def greedy(model, words, off=frozenset()):
    """d2l's predict_seq2seq: from <bos>, each step's argmax fed back, until
    <eos> or T words. The words; a step whose two best logits are within
    1e-4 (float and double might choose apart) makes it None."""
    tgt = model["tgt_vocab"]
    src, S = source_row(model, words)
    dec_in, out = [tgt.index("<bos>")], []
    for t in range(model["num_steps"]):
        logits = forward(model, src, S, dec_in, off)[1][t]
        best = max(range(len(logits)), key=lambda i: logits[i])
        second = max(x for i, x in enumerate(logits) if i != best)
        if logits[best] - second < 1e-4:
            return None
        if tgt[best] == "<eos>":
            break
        out.append(tgt[best])
        dec_in.append(best)
    return out


def loss(model, pairs, off=frozenset()):
    """The teacher-forced cross-entropy over the pairs' target entries that
    are not <pad> (target: the words, <eos>, cut or padded to T)."""
    tgt, T = {t: i for i, t in enumerate(model["tgt_vocab"])}, model["num_steps"]
    total, count = 0.0, 0
    for s, t in pairs:
        src, S = source_row(model, s.split())
        y = ([tgt.get(w, tgt["<unk>"]) for w in t.split()] + [tgt["<eos>"]])[:T]
        dec_in = [tgt["<bos>"]] + y[:-1]
        for row, want in zip(forward(model, src, S, dec_in, off)[1], y):
            m = max(row)
            total += m + math.log(sum(math.exp(x - m) for x in row)) - row[want]
            count += 1
    return total / count


def json_of(args, what):
    rc, out, err = run(args)
    check(rc == 0, "%s: exit %d (%r)" % (what, rc, err))
    try:
        return json.loads(out)
    except ValueError:
        check(False, "%s: not JSON: %r" % (what, out[:200]))
        return {}


def group_translate_additive(tmp):
    model_path = os.path.join(tmp, "additive.json")
    data = write(tmp, "pairs.json", json.dumps({"pairs": PAIRS, "heldout": {"pairs": PAIRS}}))
    task = ["--data", data, "--min-freq", "1", "--steps", "2"] if VALGRIND else \
        ["--task", "translate", "--steps", "40"]
    expect(["train"] + task + ["--score", "additive", "--layers", "2", "--hiddens", "8", "--heads",
                               "2", "--ffn", "16", "--save", model_path], 0,
           out_has=("wrote %s: the model (attn translate --input %s \"…\" translates with it)\n"
                    % (model_path, model_path),))
    with open(model_path, encoding="utf-8") as f:
        model = json.load(f)
    check(model.get("score") == "additive" and model.get("arch") == "transformer",
          "the model file: an additive Transformer")
    words = SENTENCE.split()
    want = greedy(model, words)
    translation(model_path, model, want)
    doc = attentions(model_path, model)
    explain(model_path, model, doc)
    outputs(tmp, model_path)
    heads(model_path, model, data)
    memory(tmp, model_path, model["num_steps"], data)
    bad_models(tmp, model)


def translation(path, model, want):
    """The printout: the model, its scores, d2l's line with the Python
    greedy decoding's words."""
    rc, out, err = run(["translate", "--input", path, SENTENCE])
    check(rc == 0 and err == "", "plain: exit %d (%r)" % (rc, err))
    lines = out.splitlines()
    check(lines[:2] == ["model %s: Transformer encoder–decoder, 2 blocks a side, d 8, 2 heads, "
                        "FFN 16, num_steps %d" % (path, model["num_steps"]),
                        "additive scores: every head scores w_v·tanh(W_q q + W_k k) (translated "
                        "by the reference loops)"], "plain: the model's lines %r" % lines[:2])
    if want is None:
        print("the Python greedy decoding met a near tie: the translation is not compared")
    else:
        check(len(lines) > 2 and lines[2] == "%s => %s" % (SENTENCE, " ".join(want)),
              "plain: %r, the Python greedy decoding gives %r" % (lines[2:3], " ".join(want)))


def attentions(path, model):
    """--all --json -: the translation, every weight against the Python
    forward pass on <bos> + the translation, rows summing to 1."""
    doc = json_of(["translate", "--input", path, "--all", "--json", "-", SENTENCE], "--all --json")
    T = model["num_steps"]
    check(doc["model"] == {"file": path, "arch": "transformer", "num_layers": 2, "num_hiddens": 8,
                           "num_heads": 2, "ffn_num_hiddens": 16, "score": "additive",
                           "num_steps": T, "src_vocab_size": len(model["src_vocab"]),
                           "tgt_vocab_size": len(model["tgt_vocab"])},
          "--json: the model, its score named: %r" % doc.get("model"))
    tgt = {t: i for i, t in enumerate(model["tgt_vocab"])}
    src, S = source_row(model, SENTENCE.split())
    dec_in = [tgt[t] for t in doc["decoder_input"]]
    R = len(doc["target"])
    check(doc["target"] == doc["translation"] + (["<eos>"] if R == len(doc["translation"]) + 1
                                                  else []) and len(doc["source"]) == S,
          "--json: the rows and the columns")
    cells = forward(model, src, S, dec_in)[0]
    for key, name, nq, nk in (("cross_attention", "cross", R, S),
                              ("encoder_attention", "encoder", S, S),
                              ("decoder_attention", "decoder", R, R)):
        att = doc[key]
        check(len(att) == 2 and all(len(b) == 2 and len(b[0]) == nq and len(b[0][0]) == nk
                                    for b in att), "%s: (2, 2, %d, %d)" % (key, nq, nk))
        for l in range(2):
            for h in range(2):
                for i in range(nq):
                    near(sum(att[l][h][i]), 1.0, "%s block %d head %d row %d sums to 1"
                         % (key, l + 1, h + 1, i))
                    for j in range(nk):
                        near(att[l][h][i][j], cells[name][l][(h, i, j)]["weight"],
                             "%s block %d head %d (%d, %d)" % (key, l + 1, h + 1, i, j))
    return doc


def explain(path, model, plain):
    """--all --explain --json -: every cell's additive path."""
    doc = json_of(["translate", "--input", path, "--all", "--explain", "--json", "-", SENTENCE],
                  "--explain")
    e = doc.get("explain", {})
    check(list(e) == ["score", "p", "first", "mask_value", "hiddens", "first_hiddens", "cross",
                      "encoder", "decoder"] and e["score"] == "additive" and e["p"] == 4 and
          e["hiddens"] == 4 and e["first"] == 4 and e["first_hiddens"] == 4,
          "--explain: the member's keys %r" % list(e))
    check({k: v for k, v in doc.items() if k != "explain"} == plain,
          "--explain: the rest of the document as without it")
    alone = json_of(["translate", "--input", path, "--explain", "--json", "-", SENTENCE],
                    "--explain without --all").get("explain", {})
    check(list(alone) == list(e)[:-2] and alone.get("cross") == e.get("cross"),
          "--explain without --all: the same cross member alone")
    sd, T = model["state_dict"], model["num_steps"]
    tgt = {t: i for i, t in enumerate(model["tgt_vocab"])}
    src, S = source_row(model, SENTENCE.split())
    R = len(doc["target"])
    cells = forward(model, src, S, [tgt[t] for t in doc["decoder_input"]])[0]
    prefix = {"cross": "decoder.blks.block%d.attention2.", "encoder":
              "encoder.blks.block%d.attention.", "decoder": "decoder.blks.block%d.attention1."}
    for name, weights, nq, nk, shown in (("cross", "cross_attention", R, T, S),
                                         ("encoder", "encoder_attention", S, T, S),
                                         ("decoder", "decoder_attention", R, R, R)):
        a = e[name]
        check(a["queries"] == nq and a["keys"] == nk and "scaled" not in a and
              list(a) == ["queries", "keys", "q", "k", "v", "scores", "masked", "masked_scores",
                          "row_max", "row_sum_exp", "head_output", "w_v", "qa", "ka", "tanh"],
              "%s: %d × %d, the keys %r" % (name, nq, nk, list(a)))
        for l in range(2):
            for x, y in zip(a["w_v"][l], sd[(prefix[name] % l) + "score.w_v.weight"][0]):
                check(x == y, "%s block %d: w_v is the model file's" % (name, l + 1))
            explain_cells(a, doc[weights], cells[name][l], l, name, nq, nk, shown)


def explain_cells(a, weights, cells, l, name, nq, nk, shown):
    for (h, i, j), c in sorted(cells.items()):
        if i >= nq or j >= nk:
            continue
        at = "%s block %d head %d cell (%d, %d)" % (name, l + 1, h + 1, i, j)
        for part, got, want in (("q", a["q"][l][h][i], c["q"]), ("k", a["k"][l][h][j], c["k"]),
                                ("v", a["v"][l][h][j], c["v"]), ("qa", a["qa"][l][h][i], c["qa"]),
                                ("ka", a["ka"][l][h][j], c["ka"]),
                                ("tanh", a["tanh"][l][h][i][j], c["tanh"]),
                                ("head_output", a["head_output"][l][h][i], c["out"])):
            check(len(got) == len(want), "%s: %s has %d entries" % (at, part, len(got)))
            for x, y in zip(got, want):
                near(x, y, "%s: %s" % (at, part))
        score = a["scores"][l][h][i][j]
        near(score, c["score"], at + ": w_vᵀ tanh")
        near(score, sum(w * t for w, t in zip(a["w_v"][l], a["tanh"][l][h][i][j])),
             at + ": w_vᵀ tanh of the numbers shown")
        for x, qa, ka in zip(a["tanh"][l][h][i][j], a["qa"][l][h][i], a["ka"][l][h][j]):
            near(x, math.tanh(qa + ka), at + ": tanh(W_q q + W_k k) of the numbers shown")
        check(a["masked"][l][h][i][j] == (1 if c["masked"] else 0), at + ": the mask")
        ms, mx, se = a["masked_scores"][l][h][i][j], a["row_max"][l][h][i], a["row_sum_exp"][l][h][i]
        near(ms, c["masked_score"], at + ": the masked score")
        near(mx, c["row_max"], at + ": the row's max")
        near(se, c["row_sum_exp"], at + ": Σexp")
        if j < shown:
            near(math.exp(ms - mx) / se, weights[l][h][i][j], at + ": e^(s − m) / Σ is --json's")


def outputs(tmp, path):
    """--png (the self-attentions below the cross-attention with --all)
    and --html (the model's score and every attention in the page's data)."""
    one, three = os.path.join(tmp, "cross.png"), os.path.join(tmp, "all.png")
    expect(["translate", "--input", path, "--png", one, SENTENCE], 0)
    expect(["translate", "--input", path, "--all", "--png", three, SENTENCE], 0)
    a, b = png_info(one), png_info(three)
    check(a and b and b[0] >= a[0] and b[1] > 2 * a[1],
          "--png: --all stacks the self-attentions below (%r, %r)" % (a, b))
    page = os.path.join(tmp, "page.html")
    expect(["translate", "--input", path, "--all", "--explain", "--html", page, SENTENCE], 0)
    with open(page, encoding="utf-8") as f:
        html = f.read()
    for s in ('"layers": 2, "score": "additive", "heads": 2', '"encoder_attention"',
              '"decoder_attention"', '"explain"', '"w_v"', '"score": "additive"'):
        check(s in html, "--html: the page's data has %s" % s)


def heads(path, model, data):
    """--prune-heads and --head-importance on --data's held-out pairs,
    against the Python loss and greedy decoding with the heads off."""
    full = loss(model, PAIRS)
    off = frozenset([("cross", 1, 0), ("dec", 0, 1)])
    doc = json_of(["translate", "--input", path, "--data", data, "--prune-heads", "cross2.1,dec1.2",
                   "--json", "-", SENTENCE], "--prune-heads")
    check(doc.get("model", {}).get("score") == "additive" and
          doc.get("pruned_heads") == ["dec1.2", "cross2.1"] and doc["pairs"]["n"] == 3,
          "--prune-heads --json: the model and the heads")
    near(doc["full"]["loss"], full, "--prune-heads: the full model's loss")
    near(doc["pruned"]["loss"], loss(model, PAIRS, off), "--prune-heads: the pruned model's loss")
    for key, o in (("translation_full", frozenset()), ("translation", off)):
        want = greedy(model, SENTENCE.split(), o)
        check(want is None or doc[key] == want, "--prune-heads: %s %r, Python %r"
              % (key, doc[key], want))
    rc, out, err = run(["translate", "--input", path, "--data", data, "--prune-heads", "enc1.1",
                        SENTENCE])
    check(rc == 0 and "\nadditive scores: every head scores w_v·tanh(W_q q + W_k k) (measured on "
          "the reference loops)\n" in out, "--prune-heads: the printout names the scores (%r)"
          % err)
    doc = json_of(["translate", "--input", path, "--data", data, "--head-importance", "--json",
                   "-"], "--head-importance")
    near(doc["full"]["loss"], full, "--head-importance: the full model's loss")
    for k, kind in enumerate(KINDS):
        for l in range(2):
            for h in range(2):
                near(doc["delta_loss"][k][l][h], loss(model, PAIRS, {(kind, l, h)}) - full,
                     "--head-importance: %s%d.%d's Δloss" % (kind, l + 1, h + 1))


def memory(tmp, path, T, data):
    """--max-mem: refused before anything is written, at the estimate."""
    out = os.path.join(tmp, "never.json")
    msg = ("attn translate: translating with %s (num_steps %d, 2 blocks, 2 heads) needs about "
           % (path, T))
    sizes = {}
    for extra in ([], ["--all"], ["--all", "--explain"]):
        rc, _, err = run(["translate", "--input", path, "--max-mem", "1K", "--json", out] + extra +
                         [SENTENCE])
        check(rc == 1 and err.startswith(msg) and err.endswith(" KiB, more than --max-mem 1 KiB\n")
              and err.count("\n") == 1, "--max-mem 1K %s: exit %d, %r" % (extra, rc, err))
        check(not os.path.exists(out), "--max-mem: nothing written")
        try:
            sizes[len(extra)] = float(err[len(msg):].split()[0])
        except (ValueError, IndexError):
            sizes[len(extra)] = 0.0
    check(0 < sizes[0] < sizes[1] < sizes[2], "--max-mem: --all keeps a forward pass's cache "
          "beside greedy decoding's, --explain its scratch: %r" % sizes)
    for extra in ([], ["--all"], ["--all", "--explain"]):
        kib = sizes[len(extra)]
        expect(["translate", "--input", path, "--max-mem", "%dK" % math.floor(kib - 0.1)] + extra
               + ["--json", out, SENTENCE], 1)
        expect(["translate", "--input", path, "--max-mem", "%dK" % math.ceil(kib + 0.1)] + extra +
               ["--json", out, SENTENCE], 0)
    rc, _, err = run(["translate", "--input", path, "--data", data, "--head-importance",
                      "--max-mem", "1K"])
    check(rc == 1 and err.startswith("attn translate: measuring the heads of %s on 3 pairs "
                                      "needs about " % path), "--head-importance --max-mem 1K: %r"
          % err)


def bad_models(tmp, model):
    """A bad score, a scorer's weight missing or misshapen: refused, the
    place named."""
    def variant(name, edit):
        m = json.loads(json.dumps(model))
        edit(m)
        return write(tmp, name, json.dumps(m))
    T = "attn translate: "
    cosine = variant("cosine.json", lambda m: m.update(score="cosine"))
    expect(["translate", "--input", cosine, SENTENCE], 1,
           err=T + cosine + ': $.score: expected "additive" or "dot", got "cosine"')
    key = "decoder.blks.block1.attention2.score.w_v.weight"
    missing = variant("missing.json", lambda m: m["state_dict"].pop(key))
    expect(["translate", "--input", missing, "--all", SENTENCE], 1,
           err=T + missing + ': $.state_dict: missing "%s"' % key)
    key = "encoder.blks.block0.attention.score.W_k.weight"
    short = variant("short.json", lambda m: m["state_dict"][key].__setitem__(1, [0.5] * 3))
    expect(["translate", "--input", short, "--head-importance"], 1,
           err=T + short + ': $.state_dict["%s"][1]: expected 4 numbers, got 3' % key)
