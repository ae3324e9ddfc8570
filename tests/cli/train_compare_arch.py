"""Group train_compare_arch: attn train --task translate --compare-arch, the
Transformer and Bahdanau's Seq2Seq on the same pairs, seed and steps: the
table's rows, the sequential steps (2·L and 2·T), --json's keys and
figures, the page, and the options refused with it (one line, exit 2,
nothing written); and --compare-rnn, --compare-score (SPEC §15: Bahdanau's
model with GRUs against LSTMs, the additive score against the dot
product) the same way; and --compare-layers for translation (SPEC §16:
d2l's 2 blocks against N, with the parameters counted); and the
Transformer's additive heads (SPEC §16: --score additive, saved, loaded,
refused by attn translate; --arch transformer --compare-score, the
parameters counted by hand)."""
import json
import os

from .common import VALGRIND, check, expect, run, slow_build, write


def refused(tmp):
    T = "attn train: "
    out = os.path.join(tmp, "refused.json")
    for opt in (["--load", "m.json"], ["--save", "m.json"], ["--arch", "bahdanau"],
                ["--heads", "2"], ["--layers", "2"], ["--png", "x.png"]):
        expect(["train", "--task", "translate", "--compare-arch", "--json", out] + opt, 2,
               err=T + "--compare-arch trains both architectures with their own defaults and "
               "keeps neither; %s cannot be used with it" % opt[0])
    expect(["train", "--task", "reverse", "--compare-arch", "--json", out], 2,
           err=T + "--compare-arch is for translation (--task translate, or --data of "
           "sentence pairs)")
    check(not os.path.exists(out), "--compare-arch refused: nothing written")


def table_and_json(tmp):
    js, page = os.path.join(tmp, "c.json"), os.path.join(tmp, "c.html")
    rc, out, err = run(["train", "--task", "translate", "--compare-arch", "--steps", "120",
                        "--log-every", "20", "--json", js, "--html", page])
    check(rc == 0, "--compare-arch: exit 0 (%r)" % err)
    lines = out.splitlines()
    rows = {}
    for name in ("held-out BLEU", "exact", "alignment", "BLEU ≥ 0.95 at step (s)", "ms per step",
                 "sequential steps, training", "sequential steps, greedy",
                 "layers a greedy step"):
        got = [l for l in lines if l.startswith(name + " ")]
        check(len(got) == 1, "--compare-arch: the table's row %r: %r" % (name, got))
        rows[name] = got[0][len(name):].split() if got else []
    check(any(l.split() == ["transformer", "bahdanau"] for l in lines),
          "--compare-arch: the table's heading")
    # the Transformer: 2 blocks a side (2·L = 4); Bahdanau: num_steps 12 a side (2·T = 24)
    check(rows.get("sequential steps, training") == ["4", "24"],
          "--compare-arch: sequential steps 2·L and 2·T: %r" % rows.get("sequential steps, training"))
    check(rows.get("sequential steps, greedy") == ["12", "12"] and
          rows.get("layers a greedy step") == ["2", "1"],
          "--compare-arch: greedy steps and layers: %r" % rows)
    with open(js) as fh:
        doc = json.load(fh)
    runs = doc.get("runs", [])
    check(doc.get("compare_arch") is True and doc.get("steps") == 120 and
          [r.get("arch") for r in runs] == ["transformer", "bahdanau"],
          "--compare-arch --json: both runs: %r" % [r.get("arch") for r in runs])
    keys = {"bleu", "exact", "alignment", "bleu_095_step", "bleu_095_seconds", "ms_per_step",
            "sequential_steps_training", "sequential_steps_greedy", "layers_per_greedy_step",
            "loss"}
    for r in runs:
        f, h = r.get("final", {}), r.get("history", [])
        check(set(f) == keys, "--compare-arch --json %s: final's keys %r" % (r["arch"], sorted(f)))
        check([e["step"] for e in h] == [1, 20, 40, 60, 80, 100, 120] and
              all(b["seconds"] >= a["seconds"] >= 0 for a, b in zip(h, h[1:])),
              "--compare-arch --json %s: the history's steps and seconds" % r["arch"])
        first = next((e for e in h if e["heldout_bleu"] >= 0.95), None)
        check(f.get("bleu_095_step") == (first["step"] if first else None),
              "--compare-arch --json %s: BLEU 0.95's step is the history's first" % r["arch"])
        check(0 <= f.get("bleu", -1) <= 1 and 0 <= f.get("alignment", -1) <= 1
              and f.get("ms_per_step", 0) > 0, "--compare-arch --json %s: figures" % r["arch"])
    t, b = runs[0]["final"], runs[1]["final"]
    check(t["sequential_steps_training"] == 2 * runs[0]["layers"] == 4 and
          b["sequential_steps_training"] == 2 * 12, "--compare-arch --json: 2·L and 2·T")
    check(t["bleu"] >= 0.95, "--compare-arch: the Transformer learns the grammar in 120 steps: %r"
          % t["bleu"])
    with open(page, encoding="utf-8") as fh:
        html = fh.read()
    check('"kind": "compare_arch"' in html and "compareArchPage" in html,
          "--compare-arch --html: the page of both runs")


def refused_rnn_score(tmp):
    """--compare-rnn and --compare-score (SPEC §15): what they refuse."""
    T = "attn train: "
    out = os.path.join(tmp, "refused_rnn.json")
    for flag, what, opts in [
            ("--compare-rnn", "with a GRU and with an LSTM",
             [["--compare-arch"], ["--rnn", "lstm"], ["--save", "m.json"], ["--load", "m.json"],
              ["--heads", "2"], ["--compare-score"], ["--png", "x.png"]]),
            ("--compare-score", "with both scores",
             [["--compare-arch"], ["--score", "dot"], ["--save", "m.json"], ["--plot", "p.png"]])]:
        for opt in opts:
            expect(["train", "--task", "translate", flag, "--json", out] + opt, 2,
                   err=T + "%s trains Bahdanau's model %s and keeps neither; %s cannot be used "
                   "with it" % (flag, what, opt[0]))
        if flag == "--compare-rnn":  # --compare-score: the Transformer's (tfm_score)
            expect(["train", "--task", "translate", flag, "--arch", "transformer", "--json", out],
                   2, err=T + "%s is for --arch bahdanau, not --arch transformer: it trains "
                   "Bahdanau's model twice" % flag)
        expect(["train", "--task", "reverse", flag, "--json", out], 2,
               err=T + "%s is for translation (--task translate, or --data of sentence pairs)"
               % flag)
    # the other order of the two flags: the same line
    expect(["train", "--task", "translate", "--compare-arch", "--compare-rnn"], 2,
           err=T + "--compare-rnn trains Bahdanau's model with a GRU and with an LSTM and keeps "
           "neither; --compare-arch cannot be used with it")
    check(not os.path.exists(out), "--compare-rnn, --compare-score refused: nothing written")


def compare_rnn_score(tmp):
    """--compare-rnn and --compare-score: the table's columns and rows, --json's runs."""
    for flag, key, labels, rnns, scores in [
            ("--compare-rnn", "compare_rnn", ["gru", "lstm"], ["gru", "lstm"],
             ["additive", "additive"]),
            ("--compare-score", "compare_score", ["additive", "dot"], ["gru", "gru"],
             ["additive", "dot"])]:
        js, page = os.path.join(tmp, key + ".json"), os.path.join(tmp, key + ".html")
        rc, out, err = run(["train", "--task", "translate", flag, "--steps", "60", "--log-every",
                            "20", "--json", js, "--html", page])
        check(rc == 0, "%s: exit 0 (%r)" % (flag, err))
        lines = out.splitlines()
        check(any(l.split() == labels for l in lines), "%s: the table's heading %r" % (flag, labels))
        for name in ("held-out BLEU", "exact", "alignment", "BLEU ≥ 0.95 at step (s)",
                     "ms per step"):
            check(sum(l.startswith(name + " ") for l in lines) == 1,
                  "%s: the table's row %r" % (flag, name))
        check(not any(l.startswith("sequential steps") for l in lines),
              "%s: no sequential steps' rows (the same model twice)" % flag)
        with open(js) as fh:
            doc = json.load(fh)
        runs = doc.get("runs", [])
        check(doc.get(key) is True and "compare_arch" not in doc and
              [r.get("arch") for r in runs] == ["bahdanau", "bahdanau"] and
              [r.get("label") for r in runs] == labels and
              [r.get("rnn") for r in runs] == rnns and [r.get("score") for r in runs] == scores,
              "%s --json: the runs %r" % (flag, [(r.get("label"), r.get("rnn"), r.get("score"))
                                                 for r in runs]))
        check(all([e["step"] for e in r.get("history", [])] == [1, 20, 40, 60] for r in runs),
              "%s --json: both histories" % flag)
        with open(page, encoding="utf-8") as fh:
            html = fh.read()
        check('"kind": "compare_arch"' in html and ('"%s": true' % key) in html and
              '"label": "%s"' % labels[1] in html,
              "%s --html: the comparison page with its runs' labels" % flag)


def refused_layers(tmp):
    """--compare-layers for translation (SPEC §16): what it refuses."""
    T = "attn train: "
    for opt, name in ((["--arch", "bahdanau"], "arch bahdanau"),
                      (["--png", os.path.join(tmp, "x.png")], "png"),
                      (["--html", os.path.join(tmp, "x.html")], "html")):
        expect(["train", "--task", "translate", "--compare-layers", "--layers", "4"] + opt, 2,
               err=T + "--compare-layers trains the Transformer with 2 blocks and N and keeps "
               "neither; --%s cannot be used with it" % name)
    for opt in ([], ["--layers", "2"]):
        expect(["train", "--task", "translate", "--compare-layers"] + opt, 2,
               err=T + "--compare-layers compares d2l's 2 blocks with --layers N: give N ≠ 2")
    expect(["train", "--task", "translate", "--compare-layers", "--layers", "3", "--compare-arch"],
           2, err=T + "--compare-arch trains both architectures with their own defaults and "
           "keeps neither; --layers cannot be used with it")
    check(not os.path.exists(os.path.join(tmp, "x.png")) and
          not os.path.exists(os.path.join(tmp, "x.html")),
          "--compare-layers refused: nothing written")


def parameters(V_src, V_tgt, d, H, L):
    """d2l's Transformer's parameters, counted from its modules: the two
    embeddings; an encoder block (W_q, W_k, W_v, W_o without bias, two
    LayerNorms, dense1 d → H and dense2 H → d with biases); a decoder block
    (two attentions, three LayerNorms, the FFN); the dense layer d → V_tgt."""
    attention, ln, ffn = 4 * d * d, 2 * d, d * H + H + H * d + d
    enc = attention + 2 * ln + ffn
    dec = 2 * attention + 3 * ln + ffn
    return V_src * d + V_tgt * d + L * (enc + dec) + d * V_tgt + V_tgt


def compare_layers(tmp):
    """--compare-layers for translation: the table's columns and rows, the
    parameters counted by hand, both runs the same length."""
    js = os.path.join(tmp, "layers.json")
    rc, out, err = run(["train", "--task", "translate", "--compare-layers", "--layers", "3",
                        "--steps", "60", "--log-every", "20"])
    rc2, _, err2 = run(["train", "--task", "translate", "--compare-layers", "--layers", "3",
                        "--steps", "60", "--log-every", "20", "--json", js])
    check(rc2 == 0, "--compare-layers translate --json: exit 0 (%r)" % err2)
    with open(js) as fh:
        doc = json.load(fh)
    runs = doc.get("runs", [])
    check(doc.get("compare_layers") is True and doc.get("steps") == 60 and
          [r.get("layers") for r in runs] == [2, 3] and
          [r.get("label") for r in runs] == ["2 blocks", "3 blocks"] and
          all("rnn" not in r and "score" not in r for r in runs),
          "--compare-layers --json: both runs %r" % [(r.get("layers"), r.get("label"))
                                                     for r in runs])
    check(all([e["step"] for e in r.get("history", [])] == [1, 20, 40, 60] for r in runs),
          "--compare-layers --json: both histories")
    check(rc == 0, "--compare-layers translate: exit 0 (%r)" % err)
    lines = out.splitlines()
    check(lines[:1] == ["attn train: --compare-layers, translate, 60 steps each, seed 0"],
          "--compare-layers translate: the title %r" % lines[:1])
    check(any(l.split() == ["2", "blocks", "3", "blocks"] for l in lines),
          "--compare-layers translate: the table's heading")
    rows = {}
    for name in ("held-out BLEU", "exact", "alignment", "BLEU ≥ 0.95 at step (s)",
                 "ms per step", "parameters"):
        got = [l for l in lines if l.startswith(name + " ")]
        check(len(got) == 1, "--compare-layers translate: the table's row %r: %r" % (name, got))
        rows[name] = got[0][len(name):].split() if got else []
    check(not any(l.startswith("sequential steps") for l in lines),
          "--compare-layers translate: no sequential steps' rows")
    check("training the Transformer with 2 blocks a side" in err and
          "training the Transformer with 3 blocks a side" in err,
          "--compare-layers translate: stderr names both runs")
    # the grammar's vocabularies: read from a saved 2-block model
    model = os.path.join(tmp, "tfm2.json")
    rc, _, err2 = run(["train", "--task", "translate", "--steps", "1", "--save", model])
    check(rc == 0, "--save for the vocabularies (%r)" % err2)
    with open(model) as fh:
        m = json.load(fh)
    sd = m["state_dict"]
    Vs = len(sd["encoder.embedding.weight"])
    Vt = len(sd["decoder.embedding.weight"])
    want = [str(parameters(Vs, Vt, 32, 64, L)) for L in (2, 3)]
    check([str(r.get("final", {}).get("parameters")) for r in runs] == want,
          "--compare-layers --json: parameters %r" % [r.get("final", {}).get("parameters")
                                                      for r in runs])
    check(rows.get("parameters") == want,
          "--compare-layers translate: parameters %r, by hand %r" % (rows.get("parameters"), want))
    for v in rows.get("held-out BLEU", []) + rows.get("alignment", []):
        check(0 <= float(v) <= 1, "--compare-layers translate: a figure in [0, 1]: %r" % v)
    check(all(float(v) > 0 for v in rows.get("ms per step", [])),
          "--compare-layers translate: ms per step > 0: %r" % rows.get("ms per step"))


def additive_extra(d, heads, L):
    """What additive heads add (SPEC §16): in each of a block pair's three
    attentions, score.W_q (p, p), score.W_k (p, p), score.w_v (1, p)."""
    p = d // heads
    return L * 3 * (2 * p * p + p)


def tfm_score(tmp):
    """The Transformer with --score additive: a tiny run saved with its
    score's weights and "score": "additive", loaded again, translated by attn
    translate; what is refused with it."""
    T = "attn train: "
    pairs = write(tmp, "add_pairs.json", json.dumps({
        "pairs": [["the red car", "la voiture rouge"], ["a big dog", "un grand chien"],
                  ["the big car", "la grande voiture"]],
        "heldout": {"pairs": [["the big dog", "le grand chien"]]}}))
    model = os.path.join(tmp, "additive.json")
    base = ["train", "--data", pairs, "--min-freq", "1", "--hiddens", "8", "--heads", "2",
            "--ffn", "8", "--layers", "1", "--steps", "2" if VALGRIND else "6"]
    rc, out, err = run(base + ["--score", "additive", "--save", model])
    check(rc == 0, "--score additive: exit 0 (%r)" % err)
    check(", additive scores\n" in out and "Transformer encoder–decoder" in out,
          "--score additive: the printout names the scores: %r" % out.splitlines()[:1])
    check("wrote %s: the model (attn translate --input %s \"…\" translates with it)\n"
          % (model, model) in out, "--score additive --save: names attn translate, which reads "
          "the model: %r" % out.splitlines()[-1:])
    with open(model) as fh:
        m = json.load(fh)
    sd = m.get("state_dict", {})
    keys = list(sd)
    want = []
    for prefix in ("encoder.blks.block0.attention.", "decoder.blks.block0.attention1.",
                   "decoder.blks.block0.attention2."):
        want += [prefix + "W_o.weight", prefix + "score.W_q.weight", prefix + "score.W_k.weight",
                 prefix + "score.w_v.weight"]
    check(m.get("score") == "additive" and m.get("arch") == "transformer",
          "--score additive --save: \"score\": \"additive\" (%r)" % m.get("score"))
    check(all(k in keys for k in want) and
          all(keys.index(want[i]) + 1 == keys.index(want[i + 1])
              for i in range(len(want)) if i % 4 != 3),
          "--score additive --save: the score's weights right after each W_o")
    shapes = [(len(sd[k]), len(sd[k][0])) for k in want if k in sd and "score" in k]
    check(shapes == [(4, 4), (4, 4), (1, 4)] * 3,
          "--score additive --save: score.W_q, W_k (p, p), w_v (1, p): %r" % shapes)
    # the dot-product default: no "score", no score weights
    dot = os.path.join(tmp, "dot.json")
    rc, _, err = run(base + ["--save", dot])
    with open(dot) as fh:
        d = json.load(fh)
    check(rc == 0 and "score" not in d and not any("score" in k for k in d["state_dict"]) and
          len(d["state_dict"]) + 9 == len(sd),
          "the Transformer's default: dot products, nothing added to the file (%r)" % err)
    rc, out, err = run(["train", "--data", pairs, "--load", model, "--steps", "1"])
    check(rc == 0 and ", additive scores, from --load\n" in out,
          "--load of an additive model: trained on, said so (%r)" % ((out.splitlines()[:1], err),))
    # attn translate reads it (the reference loops: tests/cli/translate_additive.py)
    rc, out, err = run(["translate", "--input", model, "the big dog"])
    check(rc == 0 and "\nadditive scores: every head scores w_v·tanh(W_q q + W_k k) (translated "
          "by the reference loops)\nthe big dog => " in out,
          "attn translate of an additive model: translated, said so (%r)" % ((out[:300], err),))
    expect(["train", "--data", pairs, "--load", model, "--score", "dot"], 2,
           err=T + "--score is read from the model file of --load")
    expect(["train", "--task", "reverse", "--score", "additive"], 2,
           err=T + "--score is for translation (--task translate, or --data of sentence pairs)")
    expect(["train", "--task", "translate", "--score", "cosine"], 2,
           err=T + "--score: expected additive or dot, got 'cosine'")
    expect(["train", "--task", "translate", "--arch", "transformer", "--compare-score",
            "--score", "dot"], 2,
           err=T + "--compare-score trains Bahdanau's model with both scores and keeps "
           "neither; --score cannot be used with it")


def compare_tfm_score(tmp):
    """--arch transformer --compare-score: dot against additive heads, the
    same pairs and seed; the table, --json's runs, the parameters by hand."""
    js = os.path.join(tmp, "tfm_score.json")
    rc, out, err = run(["train", "--task", "translate", "--arch", "transformer",
                        "--compare-score", "--steps", "4", "--log-every", "2", "--json", js])
    check(rc == 0, "--arch transformer --compare-score: exit 0 (%r)" % err)
    with open(js) as fh:
        doc = json.load(fh)
    runs = doc.get("runs", [])
    check(doc.get("compare_score") is True and doc.get("steps") == 4 and
          [r.get("arch") for r in runs] == ["transformer", "transformer"] and
          [r.get("label") for r in runs] == ["dot", "additive"] and
          [r.get("score") for r in runs] == ["dot", "additive"] and
          all("rnn" not in r for r in runs),
          "--compare-score transformer --json: the runs %r" % [(r.get("label"), r.get("score"))
                                                              for r in runs])
    check(all([e["step"] for e in r.get("history", [])] == [1, 2, 4] for r in runs),
          "--compare-score transformer --json: both histories")
    model = os.path.join(tmp, "tfm_vocab.json")
    rc2, _, err2 = run(["train", "--task", "translate", "--steps", "1", "--save", model])
    with open(model) as fh:
        sd = json.load(fh)["state_dict"]
    Vs, Vt = len(sd["encoder.embedding.weight"]), len(sd["decoder.embedding.weight"])
    dot = parameters(Vs, Vt, 32, 64, 2)
    want = [dot, dot + additive_extra(32, 4, 2)]
    got = [r.get("final", {}).get("parameters") for r in runs]
    check(rc2 == 0 and got == want,
          "--compare-score transformer: parameters %r, by hand %r" % (got, want))
    lines = out.splitlines()
    check(lines[:1] == ["attn train: --compare-score, translate, 4 steps each, seed 0"],
          "--compare-score transformer: the title %r" % lines[:1])
    check(any(l.split() == ["dot", "additive"] for l in lines),
          "--compare-score transformer: the table's heading")
    rows = [l for l in lines if l.startswith("parameters ")]
    check(len(rows) == 1 and rows[0].split()[1:] == [str(w) for w in want],
          "--compare-score transformer: the parameters row %r" % rows)
    check(any("both trained by the reference loops" in l for l in lines) and
          "training the Transformer with dot-product scores" in err and
          "training the Transformer with additive scores" in err,
          "--compare-score transformer: both runs named, the note")


def group_train_compare_arch(tmp):
    refused(tmp)
    refused_rnn_score(tmp)
    refused_layers(tmp)
    tfm_score(tmp)
    if slow_build("--compare-arch trains two models"):
        return
    table_and_json(tmp)
    compare_rnn_score(tmp)
    compare_layers(tmp)
    compare_tfm_score(tmp)
