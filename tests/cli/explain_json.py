"""--explain --json: the "explain" member, every cell's path, recomputed
here from the document's own inputs and state_dict by the formulas (d2l's
MultiHeadAttention with DotProductAttention or AdditiveAttention), in
plain Python: q·k, ÷√p, the mask, the row's max and Σexp, the weight, the
head's weighted sum of the values."""
import json
import math
import os

from .common import check, expect, run

TOL = 2e-5


def near(a, b, what):
    ok = abs(a - b) <= TOL * max(1.0, abs(b))
    return check(ok, "%s: %r, want %r" % (what, a, b))


def linear(W, x):
    """W (out, in) times x (in,)."""
    return [sum(w * xi for w, xi in zip(row, x)) for row in W]


def recompute(d, causal=False):
    """The expected explain member's numbers, from the inputs and weights."""
    sd, nh = d["state_dict"], d["num_heads"]
    X = d.get("X")
    queries = X if X is not None else d["queries"]
    keys = X if X is not None else d["keys"]
    values = X if X is not None else d["values"]
    vl = d.get("valid_lens")
    additive = "attention.w_v.weight" in sd
    cells = {}
    for b in range(len(queries)):
        Q = [linear(sd["W_q.weight"], x) for x in queries[b]]
        K = [linear(sd["W_k.weight"], x) for x in keys[b]]
        V = [linear(sd["W_v.weight"], x) for x in values[b]]
        p = len(Q[0]) // nh
        for h in range(nh):
            sl = slice(h * p, h * p + p)
            for i, q in enumerate(Q):
                qh = q[sl]
                row = []
                for j, k in enumerate(K):
                    kh = k[sl]
                    if additive:
                        qa = linear(sd["attention.W_q.weight"], qh)
                        ka = linear(sd["attention.W_k.weight"], kh)
                        s = sum(w * math.tanh(x + y) for w, x, y in
                                zip(sd["attention.w_v.weight"][0], qa, ka))
                        scaled = s
                    else:
                        s = sum(x * y for x, y in zip(qh, kh))
                        scaled = s / math.sqrt(p)
                    lim = None if vl is None else (vl[b][i] if isinstance(vl[b], list) else vl[b])
                    masked = (lim is not None and j >= lim) or (causal and j > i)
                    row.append((s, scaled, masked, -1e6 if masked else scaled))
                mx = max(r[3] for r in row)
                se = sum(math.exp(r[3] - mx) for r in row)
                w = [math.exp(r[3] - mx) / se for r in row]
                out = [sum(w[j] * V[j][sl][c] for j in range(len(K))) for c in range(p)]
                for j, r in enumerate(row):
                    cells[(b, h, i, j)] = dict(q=qh, k=K[j][sl], v=V[j][sl], score=r[0],
                                               scaled=r[1], masked=r[2], masked_score=r[3],
                                               row_max=mx, row_sum_exp=se, weight=w[j],
                                               out=out)
    return cells


def check_member(d, what, causal=False):
    """Every cell of d's explain member against the recomputation."""
    e, cells = d["explain"], recompute(d, causal)
    F = e["first"]
    masked_seen = 0
    for (b, h, i, j), c in sorted(cells.items()):
        at = "%s cell (%d, %d, %d, %d)" % (what, b, h, i, j)
        for name, got, want in (("q", e["q"][b][h][i], c["q"]), ("k", e["k"][b][h][j], c["k"]),
                                ("v", e["v"][b][h][j], c["v"]),
                                ("head_output", e["head_output"][b][h][i], c["out"])):
            check(len(got) == min(F, len(want)), "%s: %s has %d entries" % (at, name, len(got)))
            for x, y in zip(got, want[:F]):
                near(x, y, "%s: %s" % (at, name))
        near(e["scores"][b][h][i][j], c["score"], at + ": score")
        if e["score"] == "dot":
            near(e["scaled"][b][h][i][j], c["scaled"], at + ": q·k/√p")
        check(e["masked"][b][h][i][j] == (1 if c["masked"] else 0), at + ": masked flag")
        masked_seen += c["masked"]
        near(e["masked_scores"][b][h][i][j], c["masked_score"], at + ": masked score")
        near(e["row_max"][b][h][i], c["row_max"], at + ": row max")
        near(e["row_sum_exp"][b][h][i], c["row_sum_exp"], at + ": Σexp")
        near(d["attention_weights"][b][h][i][j], c["weight"], at + ": weight")
    return masked_seen


def group_explain_json(tmp):
    # dot scoring, two examples of different valid lengths: every cell
    dot = ["multihead", "--explain", "--batch", "2", "--queries", "2", "--kv", "3",
           "--hiddens", "8", "--heads", "2", "--valid-lens", "2,3", "--fill", "random",
           "--seed", "4"]
    rc, out, err = run(dot + ["--json", "-"])
    check(rc == 0 and err == "", "dot --explain --json -: exit %d, stderr %r" % (rc, err))
    d = json.loads(out)  # stdout is the JSON alone: no --explain text before it
    e = d["explain"]
    check(e["score"] == "dot" and e["p"] == 4 and e["first"] == 4, "dot: score, p, first")
    near(e["scale"], 2.0, "dot: scale √4")
    check(e["mask_value"] == -1000000, "mask value -1e6")
    check(check_member(d, "dot") == 2 * 2, "dot: example 0's key 2 masked for both queries "
          "and heads")
    # the masked cell: weight exactly 0, its score the mask value
    check(d["attention_weights"][0][1][0][2] == 0 and e["masked_scores"][0][1][0][2] == -1e6,
          "dot: the masked cell (0, 1, 0, 2) has weight 0 and score -1e6")
    # --json FILE: the text for a person on stdout, the same JSON in the file
    path = os.path.join(tmp, "ex.json")
    rc, text, _ = run(dot + ["--json", path])
    check(rc == 0 and "Step 4. Scaled" in text and "Step 6. Attention weights" in text,
          "--explain --json FILE prints the steps")
    with open(path, encoding="utf-8") as f:
        check(f.read() == out, "--json FILE holds the bytes of --json -")
    # additive scoring, self-attention, causal and valid lengths
    add = ["selfattn", "--explain", "--batch", "2", "--queries", "3", "--hiddens", "6",
           "--heads", "2", "--score", "additive", "--score-hiddens", "3", "--valid-lens", "2,3",
           "--causal", "--fill", "random", "--seed", "3", "--json", "-"]
    rc, out, err = run(add)
    check(rc == 0 and err == "", "additive --explain --json -: exit %d" % rc)
    d = json.loads(out)
    e = d["explain"]
    check(e["score"] == "additive" and "scaled" not in e and e["hiddens"] == 3,
          "additive: score, no scale, A 3")
    check(check_member(d, "additive", causal=True) > 0, "additive: some cells masked")
    sd = d["state_dict"]
    for b, h, i, j in ((0, 0, 0, 0), (1, 1, 2, 1)):
        qh = [r[h * 3:h * 3 + 3] for r in [linear(sd["W_q.weight"], x) for x in d["X"][b]]][i]
        kh = [r[h * 3:h * 3 + 3] for r in [linear(sd["W_k.weight"], x) for x in d["X"][b]]][j]
        qa, ka = linear(sd["attention.W_q.weight"], qh), linear(sd["attention.W_k.weight"], kh)
        for a in range(3):
            near(e["qa"][b][h][i][a], qa[a], "additive W_q q")
            near(e["ka"][b][h][j][a], ka[a], "additive W_k k")
            near(e["tanh"][b][h][i][j][a], math.tanh(qa[a] + ka[a]), "additive tanh")
            near(e["w_v"][a], sd["attention.w_v.weight"][0][a], "additive w_v")
    # first entries only: p 20 shows 8
    rc, out, _ = run(["multihead", "--explain", "--batch", "1", "--queries", "1", "--kv", "2",
                      "--hiddens", "40", "--heads", "2", "--json", "-"])
    e = json.loads(out)["explain"]
    check(rc == 0 and e["p"] == 20 and e["first"] == 8 and len(e["q"][0][0][0]) == 8,
          "p 20: the first 8 entries")
    # the same bytes twice
    check(run(add)[1] == run(add)[1], "additive --explain --json -: the same bytes twice")
    # bad input: the JSON's folder missing, nothing on stdout
    expect(["multihead", "--explain", "--json", os.path.join(tmp, "no", "x.json")], 1,
           err="attn multihead: %s: cannot create: No such file or directory"
           % os.path.join(tmp, "no", "x.json"))
    # --max-mem counts the member's scratch: 1 MiB runs --explain, not its JSON
    big = ["multihead", "--score", "additive", "--queries", "50", "--kv", "50", "--explain",
           "--max-mem", "1M"]
    expect(big, 0)
    expect(big + ["--json", "-"], 1, err="attn multihead: batch 2 × 5 heads × 50 queries × 50 "
           "keys needs about 1.76 MiB, more than --max-mem 1 MiB")
