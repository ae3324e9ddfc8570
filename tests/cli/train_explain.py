"""attn train --explain --json: the "explain" member, every cell's path of
the probe's heads at each step the page keeps. A step's paths are
recomputed here in plain Python from the model at that step (--save of a
run of that many steps: training is deterministic for a seed) through
d2l's embedding·√d + P and MultiHeadAttention; a stack's later layers,
whose inputs pass AddNorm, are checked for the path's own arithmetic
(p ≤ 8: the vectors are whole), and every weight against the page's."""
import json
import math
import os

from .common import check, expect, run
from .html import f32, floats, page_data

TOL = 2e-5


def near(a, b, what):
    return check(abs(a - b) <= TOL * max(1.0, abs(b)), "%s: %r, want %r" % (what, a, b))


def linear(W, x, b=None):
    return [sum(w * xi for w, xi in zip(row, x)) + (b[i] if b else 0.0)
            for i, row in enumerate(W)]


def layer0_input(model, tokens):
    """embedding[token]·√d + P[t] (the chapter's sinusoid)."""
    sd, d = model["state_dict"], model["num_hiddens"]
    ids = [model["vocab"].index(t) for t in tokens]
    X = []
    for t, i in enumerate(ids):
        row = [e * math.sqrt(d) for e in sd["embedding.weight"][i]]
        if model["posenc"]:
            for c in range(d):
                ang = t / math.pow(10000.0, (c - c % 2) / d)
                row[c] += math.sin(ang) if c % 2 == 0 else math.cos(ang)
        X.append(row)
    return X


def check_arith(lay, what, causal):
    """The path's own arithmetic, every cell (the vectors whole: p ≤ 8)."""
    e, W = lay["explain"], lay["attention_weights"][0]
    p = e["p"]
    check(e["first"] == p and e["score"] == "dot", "%s: p %d whole, dot" % (what, p))
    near(e["scale"], math.sqrt(p), what + ": scale √p")
    for h in range(len(W)):
        T = len(W[h])
        for i in range(T):
            for j in range(T):
                at = "%s cell (%d, %d, %d)" % (what, h, i, j)
                qk = sum(a * b for a, b in zip(e["q"][0][h][i], e["k"][0][h][j]))
                near(e["scores"][0][h][i][j], qk, at + ": q·k")
                near(e["scaled"][0][h][i][j], qk / math.sqrt(p), at + ": ÷√p")
                m = causal and j > i
                check(e["masked"][0][h][i][j] == (1 if m else 0), at + ": masked flag")
                ms = e["masked_scores"][0][h][i][j]
                check(ms == -1e6 if m else ms == e["scaled"][0][h][i][j], at + ": masked score")
            row = e["masked_scores"][0][h][i]
            mx = max(row)
            se = sum(math.exp(s - mx) for s in row)
            near(e["row_max"][0][h][i], mx, "%s row (%d, %d): max" % (what, h, i))
            near(e["row_sum_exp"][0][h][i], se, "%s row (%d, %d): Σexp" % (what, h, i))
            for j in range(T):
                near(W[h][i][j], math.exp(row[j] - mx) / se, "%s (%d, %d, %d): weight" % (what, h, i, j))
            for c in range(p):
                out = sum(W[h][i][j] * e["v"][0][h][j][c] for j in range(T))
                near(e["head_output"][0][h][i][c], out, "%s (%d, %d): output" % (what, h, i))


def check_from_model(lay, model, tokens, what):
    """Layer 0's q, k, v from the model's weights at that step."""
    sd, nh = model["state_dict"], model["num_heads"]
    X = layer0_input(model, tokens)
    e = lay["explain"]
    p = e["p"]
    pre = "" if "W_q.weight" in sd else "blks.block0.attention."
    for name, key in (("q", "W_q"), ("k", "W_k"), ("v", "W_v")):
        rows = [linear(sd[pre + key + ".weight"], x, sd.get(pre + key + ".bias")) for x in X]
        for h in range(nh):
            for i, r in enumerate(rows):
                for c in range(p):
                    near(e[name][0][h][i][c], r[h * p + c], "%s: %s[%d][%d][%d]" % (what, name, h, i, c))


def group_train_explain(tmp):
    base = ["train", "--task", "reverse", "--hiddens", "16", "--heads", "2", "--seed", "5",
            "--log-every", "1"]
    saves = {}
    for n in (0, 2, 3):  # the model at steps 0, 2 and 3
        saves[n] = os.path.join(tmp, "m%d.json" % n)
        rc, _, _ = run(base + ["--steps", str(n), "--save", saves[n]])
        check(rc == 0, "--steps %d --save" % n)
    rc, out, err = run(base + ["--steps", "3", "--explain", "--json", "-"])
    check(rc == 0, "--explain --json -: exit %d %s" % (rc, err))
    doc = json.loads(out)
    e = doc["explain"]
    check([s["step"] for s in e["steps"]] == [0, 1, 2, 3] and e["stride"] == 1,
          "every logged step kept: %r" % [s["step"] for s in e["steps"]])
    check(e["layers"] == 1 and e["heads"] == 2 and e["length"] == 8 and e["causal"] is False,
          "layers, heads, length, causal")
    tokens = e["probes"][0]["tokens"]
    check(len(e["probes"]) == 1 and e["probes"][0]["name"] is None and len(tokens) == 8,
          "one probe of 8 tokens")
    # without --explain: the same bytes up to the member
    rc, plain, _ = run(base + ["--steps", "3", "--json", "-"])
    head = plain.rstrip("\n")[:-1].rstrip("\n")
    check(rc == 0 and "explain" not in json.loads(plain) and out.startswith(head + ",\n  \"explain\""),
          "without --explain the document is the same bytes, no member")
    # the page's probe and weights at every step: the same
    page = os.path.join(tmp, "t.html")
    rc, _, _ = run(base + ["--steps", "3", "--html", page])
    pg = page_data(page)[2]["page"]["runs"][0]
    check(pg["steps"] == [0, 1, 2, 3] and pg["probes"][0]["tokens"] == tokens,
          "the page's steps and probe are the explain's")
    att = floats(pg["attention"])
    per = len(att) // 4
    for i, st in enumerate(e["steps"]):
        w = floats(st["probes"][0][0]["attention_weights"])
        check(len(w) == per and all(f32(a) == b for a, b in zip(w, att[i * per:(i + 1) * per])),
              "step %d: the weights are the page's, exactly" % st["step"])
        check_arith(st["probes"][0][0], "reverse step %d" % st["step"], False)
    for n in (0, 2, 3):
        with open(saves[n], encoding="utf-8") as f:
            model = json.load(f)
        check_from_model(e["steps"][n]["probes"][0][0], model, tokens, "reverse step %d" % n)
    # --explain with --html: the page's data holds the member, as --json's
    rc, _, _ = run(base + ["--steps", "3", "--explain", "--html", page])
    check(rc == 0 and page_data(page)[2].get("explain") == doc["explain"],
          "--explain --html: the page's data holds --json's member")
    # a causal stack of two layers: layer 0 from the model, both by arithmetic
    stack = ["train", "--task", "previous", "--layers", "2", "--causal", "--hiddens", "16",
             "--heads", "2", "--steps", "2", "--log-every", "1", "--seed", "2"]
    m2 = os.path.join(tmp, "s2.json")
    rc, out, _ = run(stack + ["--explain", "--json", "-", "--save", m2])
    e = json.loads(out)["explain"]
    check(rc == 0 and e["layers"] == 2 and e["causal"] is True and len(e["steps"]) == 3,
          "causal stack: 2 layers, 3 steps")
    for st in e["steps"]:
        for layer in (0, 1):
            check_arith(st["probes"][0][layer], "stack step %d layer %d" % (st["step"], layer), True)
    with open(m2, encoding="utf-8") as f:
        check_from_model(e["steps"][2]["probes"][0][0], json.load(f), e["probes"][0]["tokens"],
                         "stack step 2 layer 0")
    masked = e["steps"][2]["probes"][0][1]
    check(masked["explain"]["masked"][0][0][0][5] == 1 and masked["attention_weights"][0][0][0][5] == 0,
          "causal: query 0's key 5 masked, weight 0")
    # apple: both sentences, named
    rc, out, _ = run(["train", "--task", "apple", "--steps", "1", "--explain", "--json", "-"])
    e = json.loads(out)["explain"]
    check(rc == 0 and [p["name"] for p in e["probes"]] == ["fruit", "company"] and
          len(e["steps"][0]["probes"]) == 2, "apple: the fruit and company probes")
    # the cap: past TE_MAX_FLOATS every 2nd logged step (and the last)
    rc, out, _ = run(["train", "--task", "reverse", "--length", "30", "--hiddens", "16", "--heads",
                      "2", "--steps", "101", "--log-every", "1", "--explain", "--json", "-"])
    e = json.loads(out)["explain"]
    check(rc == 0 and e["stride"] == 2 and [s["step"] for s in e["steps"]] ==
          list(range(0, 101, 2)) + [101], "stride 2 past the cap: steps 0, 2, …, 100, 101")
    # refused: without --json, and for translate
    expect(["train", "--explain"], 2,
           err="attn train: --explain adds the paths to --json's document: give --json FILE "
           "(- for stdout), or --html FILE")
    expect(["train", "--task", "translate", "--explain", "--json", "-"], 2,
           err="attn train: --explain is for the encoder's tasks (reverse, previous, apple, "
           "induction, --data); a translation has no paths yet")
