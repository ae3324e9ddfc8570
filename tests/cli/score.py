"""Group score: attn score's default printout (the section's two cells),
--masked-softmax, --json's values against the formulas worked out here,
--png, and every error with its exit code and exact message."""
import json
import math
import os

from .common import check, expect, png_info, run

DEFAULT_ADDITIVE_OUT = """attention(queries, keys, values, valid_lens)
tensor([[[ 2.0000,  3.0000,  4.0000,  5.0000]],

        [[10.0000, 11.0000, 12.0000, 13.0000]]], grad_fn=<BmmBackward0>)

attention.attention_weights: a softmax over the keys that are there
tensor([[[0.5000, 0.5000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000,
          0.0000, 0.0000]],

        [[0.1667, 0.1667, 0.1667, 0.1667, 0.1667, 0.1667, 0.0000, 0.0000,
          0.0000, 0.0000]]])
"""

DEFAULT = ("AdditiveAttention(key_size=2, query_size=20, num_hiddens=8): "
           "a(q, k) = w_vᵀ tanh(W_q q + W_k k)\n"
           "queries (2, 1, 20) normal(0, 1), keys (2, 10, 2) ones, values (2, 10, 4) "
           "arange(40), valid_lens [2, 6]\n\n" + DEFAULT_ADDITIVE_OUT + "\n\n"
           "DotProductAttention(): a(q, k) = q·k / sqrt(2)\n"
           "queries (2, 1, 2) normal(0, 1), keys (2, 10, 2) ones, values (2, 10, 4) "
           "arange(40), valid_lens [2, 6]\n\n"
           + DEFAULT_ADDITIVE_OUT.replace(", grad_fn=<BmmBackward0>", ""))


def masked_softmax(X, lens):
    """d2l's masked_softmax on nested lists, lens (B,) or (B, Nq)."""
    out = []
    for b, rows in enumerate(X):
        block = []
        for q, row in enumerate(rows):
            n = lens[b][q] if isinstance(lens[b], list) else lens[b]
            s = [x if k < n else -1e6 for k, x in enumerate(row)]
            m = max(s)
            e = [math.exp(x - m) for x in s]
            block.append([x / sum(e) for x in e])
        out.append(block)
    return out


def near(a, b, tol=1e-6):
    if isinstance(a, list):
        return len(a) == len(b) and all(near(x, y, tol) for x, y in zip(a, b))
    return abs(a - b) <= tol + tol * abs(b)


def check_result(r):
    """A --json result against the section's formulas, from its own inputs."""
    q, k, v = r["queries"], r["keys"], r["values"]
    if r["score"] == "dot":
        d = len(q[0][0])
        scores = [[[sum(a * c for a, c in zip(qq, kk)) / math.sqrt(d) for kk in k[b]]
                   for qq in q[b]] for b in range(len(q))]
    elif r["score"] == "sum":
        scores = [[[sum(a + c for a, c in zip(qq, kk)) for kk in k[b]] for qq in q[b]]
                  for b in range(len(q))]
    elif r["score"] == "general":
        W = r["state_dict"]["W.weight"]  # (Dk, Dq): W(q) = q · Wᵀ, then · k
        scores = [[[sum(sum(w * y for w, y in zip(row, qq)) * c for row, c in zip(W, kk))
                    for kk in k[b]] for qq in q[b]] for b in range(len(q))]
    else:
        sd = r["state_dict"]
        lin = lambda W, x: [sum(w * y for w, y in zip(row, x)) for row in W]
        scores = [[[sum(w * math.tanh(a + c) for w, a, c in
                        zip(sd["w_v.weight"][0], lin(sd["W_q.weight"], qq),
                            lin(sd["W_k.weight"], kk))) for kk in k[b]]
                   for qq in q[b]] for b in range(len(q))]
    lens = r["valid_lens"] or [len(k[0])] * len(q)
    weights = masked_softmax(scores, lens)
    out = [[[sum(w * v[b][j][c] for j, w in enumerate(row)) for c in range(len(v[0][0]))]
            for row in weights[b]] for b in range(len(q))]
    check(near(r["scores"], scores), "score --json %s: scores" % r["score"])
    check(near(r["attention_weights"], weights), "score --json %s: weights" % r["score"])
    check(near(r["output"], out, 1e-5), "score --json %s: output" % r["score"])


def group_score(tmp):
    rc, out, err = expect(["score"], 0, err="")
    check(out == DEFAULT, "attn score: the default printout differs:\n%s" % out)
    # --masked-softmax: the section's two calls; the zeros where valid_lens puts them
    rc, out, _ = expect(["score", "--masked-softmax"], 0, err="",
                        out_has=["masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3]))\n"
                                 "tensor([[[",
                                 "masked_softmax(torch.rand(2, 2, 4), "
                                 "torch.tensor([[1, 3], [2, 4]]))\ntensor([[[1.0000, 0.0000, "
                                 "0.0000, 0.0000],\n",
                                 "draw differs"])
    first = out.split("masked_softmax(torch.rand")[1]
    check(first.count(", 0.0000]") == 4, "--masked-softmax: [2, 3] masks the last key of each row")
    rc, out2, _ = run(["score", "--masked-softmax", "--seed", "1"])
    check(rc == 0 and out2 != out, "--masked-softmax --seed 1 draws another X")
    # --json: both results, the section's values and the formulas
    path = os.path.join(tmp, "s.json")
    expect(["score", "--json", path], 0, err="")
    doc = json.load(open(path))
    check(doc["command"] == "score" and [r["score"] for r in doc["results"]] == ["additive", "dot"],
          "score --json: both results, additive first")
    for r in doc["results"]:
        check_result(r)
        check(near(r["output"], [[[2, 3, 4, 5]], [[10, 11, 12, 13]]], 1e-5), "the cells' output")
        check(r["valid_lens"] == [2, 6], "the cells' valid_lens")
    sd = doc["results"][0]["state_dict"]
    check([len(sd["W_q.weight"]), len(sd["W_q.weight"][0]), len(sd["W_k.weight"][0]),
           len(sd["w_v.weight"])] == [8, 20, 2, 1], "additive's state_dict shapes")
    # a file: 2-D lengths, a length 0 (equal weights), one above Nk; its state_dict back
    doc["results"][0]["valid_lens"] = [[0], [11]]
    inp = {n: doc["results"][0][n] for n in ("queries", "keys", "values", "valid_lens",
                                            "state_dict")}
    json.dump(inp, open(os.path.join(tmp, "in.json"), "w"))
    out_json = os.path.join(tmp, "o.json")
    expect(["score", "--input", os.path.join(tmp, "in.json"), "--score", "additive",
            "--json", out_json], 0, err="")
    r = json.load(open(out_json))["results"][0]
    check(r["state_dict"] == inp["state_dict"], "the file's state_dict is used")
    check_result(r)
    check(near(r["attention_weights"][0][0], [0.1] * 10), "a length 0 gives equal weights")
    # --png: one panel per scoring function
    png = os.path.join(tmp, "w.png")
    expect(["score", "--png", png], 0, err="", out_has=["wrote %s: the attention weights" % png])
    info = png_info(png)
    check(info and info[0] >= 300, "score --png: a figure")
    # --explain: the four steps
    expect(["score", "--score", "dot", "--explain"], 0, err="",
           out_has=["Step 1. Scores: a(q, k) = q·k / sqrt(2)", "Step 2. Masked",
                    "Step 3. Attention weights", "Step 4. Output"])
    errors(tmp)


def errors(tmp):
    base = {"queries": [[[1, 2]]], "keys": [[[1, 2], [3, 4]]], "values": [[[1], [2]]]}
    cases = [
        ({"values": [[[1], [2], [3]]]}, "$.values: expected shape (1, 2, value_size), one value "
         "per key of $.keys (1, 2, 2), got (1, 3, 1)"),
        ({"queries": [[[1, 2, 3]]]}, "$.queries: dot-product scoring needs queries of the keys' "
         "size 2, got 3 (--score additive or general scores queries and keys of different "
         "sizes)"),
        ({"keys": [[[1, 2], [3]]]}, "$.keys[0][1]: expected 2 numbers, got 1"),
        ({"valid_lens": [-1]}, "$.valid_lens[0]: expected an integer from 0 to 1000000000000, "
         "got -1"),
        ({"valid_lens": [1.5]}, "$.valid_lens[0]: expected an integer from 0 to 1000000000000, "
         "got 1.5"),
        ({"valid_lens": [1, 2]}, "$.valid_lens: expected 1 lengths (one per example), got 2"),
        ({"state_dict": {"W_q.weight": [[1, 2]], "W_k.weight": [[1, 2, 3]],
                         "w_v.weight": [[1]]}},
         "$.state_dict[\"W_k.weight\"]: expected shape (1, 2), got (1, 3)"),
        ({"state_dict": {"W_q.weight": [[1, 2]], "W_k.weight": [[1, 2]]}},
         "$.state_dict: missing \"w_v.weight\" (1, 1)"),
        ({"valid_len": [1]}, "$: unknown key \"valid_len\" (expected queries, keys, values, "
         "valid_lens, state_dict)"),
    ]
    path = os.path.join(tmp, "bad.json")
    for change, msg in cases:
        doc = dict(base, **change)
        json.dump(doc, open(path, "w"))
        expect(["score", "--input", path], 1, err="attn score: %s: %s" % (path, msg))
    with open(path, "w") as f:
        f.write('{"queries": [[[NaN, 1]]], "keys": [[[1, 1]]], "values": [[[1]]]}')
    rc, _, err = run(["score", "--input", path])
    check(rc == 1 and err.startswith("attn score: %s: " % path) and err.count("\n") == 1,
          "score: NaN is refused on one line: %r" % err)
    json.dump(dict(base, state_dict={"W_q.weight": [[1, 2]], "W_k.weight": [[1, 2]],
                                     "w_v.weight": [[1]]}), open(path, "w"))
    expect(["score", "--input", path, "--score-hiddens", "3"], 2,
           err="attn score: --score-hiddens: the file's state_dict sets num_hiddens (the rows "
           "of W_q.weight); give one")
    expect(["score", "--score", "dot", "--score-hiddens", "3"], 2,
           err="attn score: --score-hiddens is for --score additive")
    expect(["score", "--masked-softmax", "--score", "dot"], 2,
           err="attn score: --score cannot be used with --masked-softmax, which prints the "
           "section's two masked_softmax calls and stops")
    expect(["score", "--score", "bilinear"], 2)
    expect(["score", "--input", os.path.join(tmp, "missing.json")], 1)
    expect(["score", "--png", os.path.join(tmp, "no", "dir.png")], 1)
