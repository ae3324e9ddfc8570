"""attn score --explain --json: each result's "explain" member, every
cell's path, recomputed here from the document's own queries, keys,
values, valid_lens and state_dict by d2l 10.3's formulas, in plain Python:
the score a(q, k) of each scoring function (additive, dot, general, sum)
and its parts, the mask, the row's max and Σexp, the weight, the output."""
import json
import math
import os

from .common import check, expect, run

TOL = 2e-5
SCORES = ("additive", "dot", "general", "sum")


def near(a, b, what):
    ok = abs(a - b) <= TOL * max(1.0, abs(b))
    return check(ok, "%s: %r, want %r" % (what, a, b))


def near_vec(got, want, n, what):
    """got: the first n entries of want."""
    check(len(got) == min(n, len(want)), "%s: %d entries, want %d" % (what, len(got),
                                                                      min(n, len(want))))
    for x, y in zip(got, want[:n]):
        near(x, y, what)


def linear(W, x):
    """W (out, in) times x (in,)."""
    return [sum(w * xi for w, xi in zip(row, x)) for row in W]


def score_parts(res, q, k):
    """a(q, k) as the result's scoring function computes it, and its parts."""
    kind, sd = res["score"], res.get("state_dict")
    if kind == "dot":
        s = sum(x * y for x, y in zip(q, k))
        return s / math.sqrt(len(q)), {"scores": s}
    if kind == "additive":
        qa, ka = linear(sd["W_q.weight"], q), linear(sd["W_k.weight"], k)
        th = [math.tanh(x + y) for x, y in zip(qa, ka)]
        s = sum(w * t for w, t in zip(sd["w_v.weight"][0], th))
        return s, {"scores": s, "qa": qa, "ka": ka, "tanh": th}
    if kind == "general":
        qw = linear(sd["W.weight"], q)  # qᵀ W, a key-sized vector
        s = sum(x * y for x, y in zip(qw, k))
        return s, {"scores": s, "qw": qw}
    s = sum(q) + sum(k)
    return s, {"scores": s, "q_sum": sum(q), "k_sum": sum(k)}


def recompute(res):
    """Every cell (b, i, j) of a result: its numbers."""
    Q, K, V, vl = res["queries"], res["keys"], res["values"], res["valid_lens"]
    cells = {}
    for b in range(len(Q)):
        for i, q in enumerate(Q[b]):
            row = []
            for j, k in enumerate(K[b]):
                a, parts = score_parts(res, q, k)
                lim = None if vl is None else (vl[b][i] if isinstance(vl[b], list) else vl[b])
                masked = lim is not None and j >= lim
                row.append((a, parts, masked, -1e6 if masked else a))
            mx = max(r[3] for r in row)
            se = sum(math.exp(r[3] - mx) for r in row)
            w = [math.exp(r[3] - mx) / se for r in row]
            out = [sum(w[j] * V[b][j][c] for j in range(len(K[b]))) for c in range(len(V[b][0]))]
            for j, r in enumerate(row):
                cells[(b, i, j)] = dict(a=r[0], parts=r[1], masked=r[2], masked_score=r[3],
                                        row_max=mx, row_sum_exp=se, weight=w[j], out=out)
    return cells


def check_parts(e, c, b, i, j, at):
    """The scoring function's own numbers of cell (b, i, j)."""
    p = c["parts"]
    near(e["scores"][b][i][j], p["scores"], at + ": score")
    if e["score"] == "dot":
        near(e["scale"], math.sqrt(e["query_size"]), at + ": scale √d")
        near(e["scaled"][b][i][j], c["a"], at + ": q·k/√d")
    elif e["score"] == "additive":
        FA = e["first_hiddens"]
        check(FA == min(8, e["hiddens"]) and len(e["w_v"]) == FA, at + ": first hiddens")
        near_vec(e["qa"][b][i], p["qa"], FA, at + ": W_q q")
        near_vec(e["ka"][b][j], p["ka"], FA, at + ": W_k k")
        near_vec(e["tanh"][b][i][j], p["tanh"], FA, at + ": tanh(W_q q + W_k k)")
    elif e["score"] == "general":
        near_vec(e["qw"][b][i], p["qw"], e["first_k"], at + ": qᵀ W")
    else:
        near(e["q_sum"][b][i], p["q_sum"], at + ": Σq")
        near(e["k_sum"][b][j], p["k_sum"], at + ": Σk")


def check_result(res, what):
    """Every cell of a result's explain member against the recomputation;
    the number of masked cells."""
    e, cells = res["explain"], recompute(res)
    check(e["score"] == res["score"], what + ": the member's score")
    Dq, Dk, Dv = len(res["queries"][0][0]), len(res["keys"][0][0]), len(res["values"][0][0])
    check((e["query_size"], e["key_size"], e["value_size"]) == (Dq, Dk, Dv), what + ": sizes")
    check((e["first_q"], e["first_k"], e["first_v"]) == (min(8, Dq), min(8, Dk), min(8, Dv)),
          what + ": first entries")
    check(e["mask_value"] == -1000000, what + ": mask value -1e6")
    masked_seen = 0
    for (b, i, j), c in sorted(cells.items()):
        at = "%s cell (%d, %d, %d)" % (what, b, i, j)
        near_vec(e["q"][b][i], res["queries"][b][i], e["first_q"], at + ": q")
        near_vec(e["k"][b][j], res["keys"][b][j], e["first_k"], at + ": k")
        near_vec(e["v"][b][j], res["values"][b][j], e["first_v"], at + ": v")
        near_vec(e["output"][b][i], c["out"], e["first_v"], at + ": output")
        check_parts(e, c, b, i, j, at)
        check(e["masked"][b][i][j] == (1 if c["masked"] else 0), at + ": masked flag")
        masked_seen += c["masked"]
        near(e["masked_scores"][b][i][j], c["masked_score"], at + ": masked score")
        near(e["row_max"][b][i], c["row_max"], at + ": row max")
        near(e["row_sum_exp"][b][i], c["row_sum_exp"], at + ": Σexp")
        near(res["attention_weights"][b][i][j], c["weight"], at + ": weight")
    return masked_seen


def without_explain(doc):
    """The document with the explain members taken out."""
    d = json.loads(json.dumps(doc))
    for r in d["results"]:
        r.pop("explain", None)
    return d


def explain_run(args, what):
    """args with --explain --json -, checked against the same run's --json -."""
    rc, out, err = run(args + ["--explain", "--json", "-"])
    check(rc == 0 and err == "", "%s: exit %d, stderr %r" % (what, rc, err))
    doc = json.loads(out)  # stdout is the JSON alone
    rc, plain, _ = run(args + ["--json", "-"])
    check(rc == 0 and "explain" not in json.loads(plain)["results"][0],
          what + ": --json alone has no explain member")
    check(without_explain(doc) == json.loads(plain),
          what + ": the weights (and every member) equal --json's")
    return doc, out


def group_score_explain(tmp):
    # each scoring function: random keys, two queries, lengths per query
    # (0: every key masked, equal weights; 11: none)
    for kind in SCORES:
        args = ["score", "--score", kind, "--keys", "random", "--queries", "2",
                "--valid-lens", "1,3;0,11", "--seed", "3"]
        doc, _ = explain_run(args, kind)
        check(len(doc["results"]) == 1, kind + ": one result")
        res = doc["results"][0]
        check(check_result(res, kind) == 9 + 7 + 10, kind + ": 26 cells masked")
        check(res["explain"]["masked_scores"][1][0][4] == -1e6,
              kind + ": length 0 masks every key: score -1e6")
        near(res["attention_weights"][1][0][4], 0.1, kind + ": length 0: the weight 1/10")
        check(res["attention_weights"][0][0][5] == 0, kind + ": a masked cell weighs 0")
    # the default (additive and dot), lengths per example, and none
    doc, out = explain_run(["score", "--keys", "random", "--queries", "2", "--valid-lens",
                            "2,6"], "default")
    check([r["score"] for r in doc["results"]] == ["additive", "dot"], "default: two results")
    for r in doc["results"]:
        check(check_result(r, "default " + r["score"]) == 2 * (8 + 4), "default: 24 masked")
    doc, _ = explain_run(["score", "--score", "general", "--keys", "random", "--valid-lens",
                          "none"], "none")
    res = doc["results"][0]
    check(res["valid_lens"] is None and check_result(res, "none") == 0, "none: nothing masked")
    # a file: sizes above 8 show their first 8 entries (qw: key-sized)
    inp = {"queries": [[[0.1 * (i - 5) + 0.01 * q for i in range(12)] for q in range(2)]],
           "keys": [[[math.sin(i + 3 * k) for i in range(10)] for k in range(3)]],
           "values": [[[float(k * 9 + c) for c in range(9)] for k in range(3)]],
           "valid_lens": [2],
           "state_dict": {"W_q.weight": [[math.cos(a * 12 + i) / 4 for i in range(12)]
                                         for a in range(11)],
                          "W_k.weight": [[math.sin(a * 10 + i) / 3 for i in range(10)]
                                         for a in range(11)],
                          "w_v.weight": [[0.2 * a - 1 for a in range(11)]],
                          "W.weight": [[math.cos(k * 12 + i) / 5 for i in range(12)]
                                       for k in range(10)]}}
    path = os.path.join(tmp, "in.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(inp, f)
    for kind in ("additive", "general"):
        doc, out = explain_run(["score", "--score", kind, "--input", path], "file " + kind)
        res = doc["results"][0]
        check(check_result(res, "file " + kind) == 2, "file %s: key 2 masked" % kind)
        e = res["explain"]
        check(e["first_q"] == 8 and len(e["q"][0][0]) == 8 and e["first_v"] == 8 and
              len(e["output"][0][1]) == 8, "file %s: the first 8 of 12 and of 9" % kind)
        if kind == "additive":
            check(e["hiddens"] == 11 and len(e["tanh"][0][1][2]) == 8, "file: 8 of 11 hiddens")
        else:
            check(len(e["qw"][0][0]) == 8, "file: the first 8 of qᵀ W's 10")
    # --json FILE: the steps for a person on stdout, the same JSON in the file
    jpath = os.path.join(tmp, "ex.json")
    rc, text, _ = run(["score", "--score", "general", "--input", path, "--explain",
                       "--json", jpath])
    check(rc == 0 and "Step 1. Scores: a(q, k) = qᵀ W k" in text,
          "--explain --json FILE prints the steps")
    with open(jpath, encoding="utf-8") as f:
        check(f.read() == out, "--json FILE holds the bytes of --json -")
    # the same bytes twice
    args = ["score", "--keys", "random", "--queries", "2", "--explain", "--json", "-"]
    check(run(args)[1] == run(args)[1], "--explain --json -: the same bytes twice")
    # --max-mem counts the members' scratch: 1 MiB runs --json, not with --explain
    big = ["score", "--score", "additive", "--queries", "2000", "--max-mem", "1M", "--json"]
    expect(big + [os.path.join(tmp, "big.json")], 0)
    expect(big[:-1] + ["--explain", "--json", "-"], 1,
           err="attn score: the scores, weights, outputs and every cell's path needs about "
           "1.89 MiB, more than --max-mem 1 MiB")
    # the one combination refused: --masked-softmax prints two calls and stops
    expect(["score", "--masked-softmax", "--explain", "--json", "-"], 2,
           err="attn score: --explain cannot be used with --masked-softmax, which prints the "
           "section's two masked_softmax calls and stops")
