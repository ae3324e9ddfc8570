"""attn multihead and selfattn: bad JSON inputs (attention_errors), bad
options (attention_options), and what they print, write and draw
(attention_outputs)."""
import json
import math
import os

from .common import check, expect, png_info, run, write


def group_attention_errors(tmp):
    """Bad JSON inputs: each message names the file, the JSON path, the
    expected and the found shape."""
    M = "attn multihead: "
    eye = "[[1,0],[0,1]]"
    sd = ('"state_dict": {"W_q.weight": %s, "W_k.weight": %s, "W_v.weight": %s, '
          '"W_o.weight": %s' % (eye, eye, eye, eye))
    cases = [
        ('{"queries": [[[1,2],[3]]], "num_heads": 1}', 1,
         "$.queries[0][1]: expected 2 numbers, got 1"),
        ('{"queries": [[[1,"x"]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a number, got a string"),
        ('{"queries": [[[1,true]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a number, got a boolean"),
        ('{"queries": [[[1,2]]], "keys": [[[1,2]],[[1,2]]], "num_heads": 1}', 1,
         "$.keys: expected batch 1 like $.queries (1, 1, 2), got shape (2, 1, 2)"),
        ('{"queries": [[[1,2]]], "keys": [[[1,2],[3,4]]], "values": [[[1,2]]], "num_heads": 1}', 1,
         "$.values: expected shape (1, 2, value_size) to pair with $.keys (1, 2, 2), got (1, 1, 2)"),
        ('{"queries": [[[1,2]]], "values": [[[1,2]]], "num_heads": 1}', 1,
         '$.values: given without "keys" (values pair with keys)'),
        ('{"queries": [[[1,2,3]]], "num_heads": 2}', 2,
         "num_hiddens 3 (the width of $.queries) is not divisible by num_heads 2 ($.num_heads)"),
        ('{"queries": [[[1,2]]], "valid_lens": [-1], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got -1"),
        ('{"queries": [[[1,2]]], "valid_lens": [1.5], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got 1.5"),
        ('{"queries": [[[1,2]]], "valid_lens": ["1"], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got a string"),
        ('{"queries": [[[1,2]]], "valid_lens": [1, 2], "num_heads": 1}', 1,
         "$.valid_lens: expected 1 length (one per example) or a (1, 1) array, got 2"),
        ('{"queries": [[[1,2],[3,4]]], "valid_lens": [[1,2,3]], "num_heads": 1}', 1,
         "$.valid_lens: expected shape (1,) or (1, 2), got (1, 3)"),
        ('{"queries": [[[1,1e400]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a finite float32 number, got inf"),
        ('{"queries": [[[1,1e39]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a finite float32 number, got 1e+39"),
        ('{"queries": [[[1,2]]], "num_heads": 1, %s, "W_x.weight": [[1]]}}' % sd, 1,
         '$.state_dict["W_x.weight"]: unknown key (known: W_q.weight, W_q.bias, W_k.weight, '
         'W_k.bias, W_v.weight, W_v.bias, W_o.weight, W_o.bias, attention.W_q.weight, '
         'attention.W_k.weight, attention.w_v.weight)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1,0,0],[0,1,0]], '
         '"W_k.weight": %s, "W_v.weight": %s, "W_o.weight": %s}}' % (eye, eye, eye), 1,
         '$.state_dict["W_q.weight"]: expected shape (2, 2) (num_hiddens × query_size 2), got (2, 3)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, %s, "W_o.bias": [1,2,3]}}' % sd, 1,
         '$.state_dict["W_o.bias"]: expected shape (2,) (num_hiddens), got (3,)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, "state_dict": {"W_q.weight": %s}}' % eye, 1,
         '$.state_dict: missing "W_k.weight" (W_q, W_k, W_v and W_o weights are all needed)'),
        ('{"queries": [[[1,2]]], "num_heads": 3, %s}}' % sd, 2,
         "num_hiddens 2 (the rows of W_q.weight) is not divisible by num_heads 3 ($.num_heads)"),
        ('{"queries": [[[1,2]]], "num_heads": 1, "foo": 1}', 1,
         "$.foo: unknown key (known: queries, keys, values, valid_lens, num_heads, state_dict, "
         "query_tokens, key_tokens, command, shape, output, attention_weights)"),
        ('{"queries": [[[1,2]]], "num_heads": 1, "queries": [[[3,4]]]}', 1,
         "$.queries: the key appears twice"),
        ('{"queries": [[[1,2]]], "num_heads": 0}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got 0"),
        ('{"queries": [], "num_heads": 1}', 1, "$.queries: an empty array"),
        ('{"queries": [1, 2], "num_heads": 1}', 1,
         "$.queries: expected a 2-D or deeper array of numbers, got a 1-D array"),
        ('{"queries": [[[[[1]]]]], "num_heads": 1}', 1,
         "$.queries: expected at most 3 nested arrays, found more"),
        ('{"queries": [[[1,2]]], "query_tokens": ["a", "b"], "num_heads": 1}', 1,
         "$.query_tokens: expected 1 labels, got 2"),
        ('{"queries": [[[1,2]]], "num_heads": 1', 1, "line 1, column 38: the JSON ends too early"),
        ('{"queries": [[[1,2]]],\n "num_heads": 1\n', 1, "line 3, column 1: the JSON ends too early"),
        ('{"queries": [[[1,2]]]} xx', 1, "line 1, column 24: unexpected text after the JSON value"),
        ('', 1, "empty: expected a JSON object"),
        ('[1, 2]', 1, "$: expected an object, got an array"),
        ('{"queries": [[[1,NaN]]]}', 1,
         "line 1, column 18: NaN is not a JSON number (NaN and Infinity are not allowed)"),
    ]
    for i, (text, code, msg) in enumerate(cases):
        path = write(tmp, "bad%02d.json" % i, text)
        expect(["multihead", "--input", path], code, err=M + "%s: %s" % (path, msg))
    S = "attn selfattn: "
    path = write(tmp, "self.json", '{"X": [[[1,2]]], "tokens": ["a","b"]}')
    expect(["selfattn", "--input", path], 2,
           err=S + "%s: num_hiddens 2 (the width of $.X) is not divisible by num_heads 5 "
                   "(the chapter's 5: give $.num_heads or --heads)" % path)
    expect(["selfattn", "--input", path, "--heads", "1"], 1,
           err=S + "%s: $.tokens: expected 1 labels, got 2" % path)
    path = write(tmp, "q.json", '{"queries": [[[1,2]]], "num_heads": 1}')
    expect(["selfattn", "--input", path], 1,
           err=S + '%s: $.queries: unknown key (known: X, valid_lens, num_heads, state_dict, '
                   'tokens, command, shape, output, attention_weights)' % path)
    expect(["multihead", "--input", path, "--heads", "2"], 2,
           err=M + "%s: $.num_heads is 1 but --heads is 2" % path)
    missing = os.path.join(tmp, "nosuch.json")
    expect(["multihead", "--input", missing], 1,
           err=M + "%s: cannot open: No such file or directory" % missing)
    expect(["multihead", "--input", tmp], 1, err=M + "%s: cannot read: Is a directory" % tmp)


def group_attention_options(tmp):
    M = "attn multihead: "
    S = "attn selfattn: "
    expect(["multihead", "--heads", "0"], 2,
           err=M + "--heads: expected an integer from 1 to 1000000000000, got '0'")
    expect(["multihead", "--hiddens", "100", "--heads", "3"], 2,
           err=M + "--hiddens 100 is not divisible by --heads 3")
    expect(["multihead", "--valid-lens", "3,x"], 2,
           err=M + "--valid-lens: expected integers >= 0 like 3,2 or 1,2,3,4;2,2,2,2, or none, "
                   "got '3,x'")
    expect(["multihead", "--valid-lens", "1,2;3"], 2,
           err=M + "--valid-lens: every row needs 2 lengths, row 2 has 1")
    expect(["multihead", "--valid-lens", "3,2,1"], 2,
           err=M + "--valid-lens: expected 2 lengths (one per example), got 3")
    expect(["multihead", "--valid-lens", "1,2;3,4"], 2,
           err=M + "--valid-lens: expected 2 rows of 4 (one per example and query), got 2 rows of 2")
    expect(["multihead", "--fill", "zeros"], 2, err=M + "--fill: expected ones or random, got 'zeros'")
    expect(["multihead", "--score", "cosine"], 2,
           err=M + "--score: expected dot or additive, got 'cosine'")
    expect(["multihead", "--dropout", "1.5"], 2,
           err=M + "--dropout: expected a number from 0 to 1, got '1.5'")
    expect(["multihead", "--score-hiddens", "4"], 2, err=M + "--score-hiddens is for --score additive")
    expect(["multihead", "--input", "x.json", "--batch", "2"], 2,
           err=M + "--batch makes random inputs and cannot be used with --input")
    expect(["multihead", "--tokens", "a b"], 2,
           err=M + "unknown option '--tokens' (see attn multihead --help)")
    expect(["selfattn", "--kv", "3"], 2,
           err=S + "--kv is for --scale-sweep (in self-attention the keys are the queries: "
                   "--queries)")
    expect(["selfattn", "--tokens", "a b | c", "--batch", "3"], 2,
           err=S + "--batch 3 disagrees with --tokens, which has 2 sentences")
    expect(["selfattn", "--tokens", "a b |  | c"], 2, err=S + "--tokens: sentence 2 has no tokens")
    expect(["selfattn", "--no-proj", "--bias"], 2,
           err=S + "--no-proj uses identity projections without bias or additive scoring")
    expect(["multihead", "--seed", "-1"], 2,
           err=M + "--seed: expected an integer from 0 to 2147483647, got '-1'")
    expect(["multihead", "--heads", "4", "--heads", "5"], 2, err=M + "option '--heads' given twice")
    expect(["multihead", "--queries", "100000", "--kv", "100000", "--hiddens", "8",
            "--heads", "8", "--batch", "8"], 1,
           err=M + "batch 8 × 8 heads × 100000 queries × 100000 keys needs about 2.33 TiB, more "
                   "than --max-mem 4 GiB; --stream computes without storing the attention weights")
    expect(["multihead", "--stream", "--png", "x.png"], 2,
           err=M + "--stream never stores the attention weights, which --png needs")
    expect(["multihead", "--stream", "--naive"], 2,
           err=M + "--stream never stores the attention weights, which --naive needs")
    expect(["multihead", "--stream", "--score", "additive"], 2,
           err=M + "--stream computes dot-product scores only")
    expect(["multihead", "--block", "4"], 2, err=M + "--block sets the key blocks of --stream --explain")
    expect(["multihead", "--threads", "0"], 2,
           err=M + "--threads: expected an integer from 1 to 1024, got '0'")
    expect(["multihead", "--queries", "100000000", "--hiddens", "100000000", "--heads", "1"], 1,
           err=M + "the inputs and weights need about 213 PiB, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "100000000", "--queries", "100000000", "--hiddens",
            "100000000", "--heads", "1"], 1,
           err=M + "the inputs and weights need more than this machine can address, more than "
                   "--max-mem 4 GiB")


def group_attention_outputs(tmp):
    # the chapter's cells: the shape line and the module print-out
    rc, out, _ = expect(["multihead"], 0, err="",
                        out_has=["attention(queries, keys, values, valid_lens).shape\n"
                                 "torch.Size([2, 4, 100])\n"])
    rc, out, _ = expect(["selfattn"], 0, err="",
                        out_has=["attention(X, X, X, valid_lens).shape\ntorch.Size([2, 4, 100])\n"])
    rc, out, _ = expect(["multihead", "--describe"], 0, err="")
    check(out == "MultiHeadAttention(\n"
                 "  (attention): DotProductAttention(\n"
                 "    (dropout): Dropout(p=0.5, inplace=False)\n"
                 "  )\n"
                 "  (W_q): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_k): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_v): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_o): Linear(in_features=100, out_features=100, bias=False)\n"
                 ")\n", "--describe prints the chapter's module")
    expect(["multihead", "--describe", "--score", "additive", "--hiddens", "20", "--heads", "2",
            "--score-hiddens", "7", "--bias", "--dropout", "0"], 0,
           out_has=["  (attention): AdditiveAttention(\n"
                    "    (W_k): Linear(in_features=10, out_features=7, bias=False)\n"
                    "    (W_q): Linear(in_features=10, out_features=7, bias=False)\n"
                    "    (w_v): Linear(in_features=7, out_features=1, bias=False)\n"
                    "    (dropout): Dropout(p=0.0, inplace=False)\n  )\n",
                    "(W_o): Linear(in_features=20, out_features=20, bias=True)"])

    # ones in, uniform weights over the valid keys out, whatever the weights
    rc, out, _ = expect(["multihead", "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(doc["command"] == "multihead" and doc["shape"] == [2, 4, 100] and
          doc["valid_lens"] == [3, 2] and doc["num_heads"] == 5, "multihead JSON header")
    w = doc["attention_weights"]
    check(len(w) == 2 and len(w[0]) == 5 and len(w[0][0]) == 4 and len(w[0][0][0]) == 6,
          "attention_weights is (batch, heads, queries, keys)")
    worst = max(abs(w[b][h][q][k] - ((1 / 3 if k < 3 else 0) if b == 0 else (0.5 if k < 2 else 0)))
                for b in range(2) for h in range(5) for q in range(4) for k in range(6))
    check(worst < 1e-7, "valid_lens 3, 2 give weights 1/3 and 1/2 (worst %g)" % worst)
    # output = W_o · (W_v · 1): every head's output is a row of V
    sd = doc["state_dict"]
    v = [sum(row) for row in sd["W_v.weight"]]
    want = [sum(a * b for a, b in zip(row, v)) for row in sd["W_o.weight"]]
    worst = max(abs(doc["output"][b][q][c] - want[c]) for b in range(2) for q in range(4)
                for c in range(100))
    check(worst < 1e-5, "ones: output = W_o W_v 1 (worst %g)" % worst)
    # weights like nn.Linear's init: uniform in ±1/sqrt(100)
    flat = [x for row in sd["W_q.weight"] for x in row]
    check(max(abs(x) for x in flat) <= 0.1 and max(flat) > 0.09 and min(flat) < -0.09,
          "weights uniform in ±1/sqrt(in_features)")
    check(abs(sum(flat) / len(flat)) < 0.005, "weights centred on 0")

    # a run's output file is a complete input: feeding it back gives the same output
    first = os.path.join(tmp, "first.json")
    expect(["multihead", "--fill", "random", "--seed", "7", "--bias", "--valid-lens",
            "1,2,3,4;2,2,2,2", "--causal", "--json", first], 0)
    second = os.path.join(tmp, "second.json")
    expect(["multihead", "--input", first, "--causal", "--json", second], 0)
    a, b = json.load(open(first)), json.load(open(second))
    check(a["output"] == b["output"] and a["attention_weights"] == b["attention_weights"],
          "an output file fed back reproduces output and weights exactly")
    # the same seed, the same bytes; another seed, other weights
    r1 = run(["selfattn", "--fill", "random", "--seed", "3", "--json", "-"])[1]
    r2 = run(["selfattn", "--fill", "random", "--seed", "3", "--json", "-"])[1]
    r3 = run(["selfattn", "--fill", "random", "--seed", "4", "--json", "-"])[1]
    check(r1 == r2 and r1 != r3, "--seed makes runs byte-identical")
    # dropout: eval ignores it, --train applies it (seeded)
    ev = json.loads(run(["selfattn", "--fill", "random", "--json", "-"])[1])
    ev2 = json.loads(run(["selfattn", "--fill", "random", "--dropout", "0.9", "--json", "-"])[1])
    tr = json.loads(run(["selfattn", "--fill", "random", "--train", "--json", "-"])[1])
    check(ev["output"] == ev2["output"], "--dropout has no effect in eval mode")
    check(ev["output"] != tr["output"] and ev["attention_weights"] == tr["attention_weights"],
          "--train changes the output, not the reported weights (d2l reports them before dropout)")
    # causal: no weight on later keys
    c = json.loads(run(["selfattn", "--fill", "random", "--causal", "--valid-lens", "none",
                        "--json", "-"])[1])
    check(all(c["attention_weights"][b][h][q][k] == 0 for b in range(2) for h in range(5)
              for q in range(4) for k in range(q + 1, 4)), "--causal masks later keys")
    # --no-proj: Q = K = V = X, so each output row is a weighted mean of X's rows
    d = json.loads(run(["selfattn", "--no-proj", "--fill", "random", "--hiddens", "6", "--heads",
                        "1", "--valid-lens", "none", "--json", "-"])[1])
    X, W = d["X"][0], d["attention_weights"][0][0]
    worst = max(abs(d["output"][0][q][c] - sum(W[q][k] * X[k][c] for k in range(4)))
                for q in range(4) for c in range(6))
    check(worst < 1e-6, "--no-proj: output = softmax(X Xᵀ / sqrt(d)) X (worst %g)" % worst)
    s = 1 / math.sqrt(6)
    sc = [sum(X[0][c] * X[k][c] for c in range(6)) * s for k in range(4)]
    m = max(sc)
    e = [math.exp(x - m) for x in sc]
    check(max(abs(W[0][k] - e[k] / sum(e)) for k in range(4)) < 1e-6,
          "--no-proj weights are softmax(x_0 · x_k / sqrt(d))")
    # --posenc adds P: with --no-proj and ones, X + P differs from X by P
    p0 = json.loads(run(["selfattn", "--no-proj", "--hiddens", "4", "--heads", "1", "--posenc",
                         "--json", "-"])[1])
    check(abs(p0["X"][0][1][0] - (1 + math.sin(1))) < 1e-6 and
          abs(p0["X"][0][1][1] - (1 + math.cos(1))) < 1e-6, "--posenc adds P to X")

    # tokens: the same word, the same input, another output in another sentence
    rc, out, _ = expect(["selfattn", "--tokens", "苹果 很 好吃 | 苹果 发布 了 新的 产品",
                         "--hiddens", "16", "--heads", "2"], 0, err="",
                        out_has=["苹果: input 1.0000 (the same embedding), output "])
    doc = json.loads(run(["selfattn", "--tokens", "苹果 很 好吃 | 苹果 发布 了 新的 产品",
                          "--hiddens", "16", "--heads", "2", "--json", "-"])[1])
    check(doc["tokens"] == [["苹果", "很", "好吃", "<pad>", "<pad>"],
                            ["苹果", "发布", "了", "新的", "产品"]] and doc["valid_lens"] == [3, 5],
          "two sentences: a padded batch with their lengths as valid_lens")
    check(doc["X"][0][0] == doc["X"][1][0] and doc["output"][0][0] != doc["output"][1][0],
          "苹果 has one embedding and two contextual outputs")
    # the printed cosine similarity, recomputed from the JSON's outputs
    u, v = doc["output"][0][0], doc["output"][1][0]
    cos = sum(x * y for x, y in zip(u, v)) / math.sqrt(sum(x * x for x in u) *
                                                        sum(y * y for y in v))
    line = [l for l in out.splitlines() if l.startswith("  苹果: input")]
    check(len(line) == 1 and abs(float(line[0].split("output ")[1].split()[0]) - cos) < 6e-5,
          "苹果's output cosine similarity printed as computed here (%.4f): %r" % (cos, line))
    # --json's same_tokens: the same pairs, their cosines recomputed from X and output
    def cosine(u, v):
        return sum(x * y for x, y in zip(u, v)) / math.sqrt(sum(x * x for x in u) *
                                                            sum(y * y for y in v))
    same = doc.get("same_tokens")
    check(same is not None and len(same) == 1 and
          {k: same[0][k] for k in ("token", "sentence", "position", "other_sentence",
                                   "other_position")} ==
          {"token": "苹果", "sentence": 1, "position": 0, "other_sentence": 2, "other_position": 0}
          and abs(same[0]["output_cosine"] - cos) < 1e-6
          and abs(same[0]["input_cosine"] - cosine(doc["X"][0][0], doc["X"][1][0])) < 1e-6,
          "--json same_tokens: 苹果's pair and its cosines (%.6f): %r" % (cos, same))
    tri = json.loads(run(["selfattn", "--tokens", "a b c|x b a|a y", "--hiddens", "8",
                          "--heads", "2", "--seed", "3", "--json", "-"])[1])
    want = [("a", 0, 2, 2), ("a", 0, 3, 0), ("b", 1, 2, 1)]
    got = [(p["token"], p["position"], p["other_sentence"], p["other_position"])
           for p in tri.get("same_tokens", [])]
    check(got == want and all(
        abs(p["output_cosine"] - cosine(tri["output"][0][p["position"]],
                                        tri["output"][p["other_sentence"] - 1][p["other_position"]]))
        < 1e-6 for p in tri["same_tokens"]),
          "same_tokens over three sentences: each of sentence 1's words found again: %r" % got)
    check("same_tokens" not in json.loads(run(["selfattn", "--tokens", "a b a", "--json", "-",
                                               "--hiddens", "8", "--heads", "2"])[1]),
          "one sentence: no same_tokens")
    # --png prints the results for a person too, then names the figure;
    # with --json the JSON is the result and only the files are named
    fig = os.path.join(tmp, "cell.png")
    rc, out, _ = expect(["multihead", "--png", fig], 0, err="",
                        out_has=["torch.Size([2, 4, 100])\n", "example 1, valid_len 2, head 5:"])
    check(out.rstrip().splitlines()[-1].startswith("wrote %s: attention weights" % fig),
          "multihead --png: the figure named last: %r" % out[-120:])
    rc, out, _ = expect(["selfattn", "--png", fig, "--json", os.path.join(tmp, "cell.json")],
                        0, err="", out_not=["torch.Size"])
    check(len(out.splitlines()) == 2 and all(l.startswith("wrote ") for l in out.splitlines()),
          "--png --json: only the two files named: %r" % out)
    single = json.loads(run(["selfattn", "--tokens", "苹果 很 好吃", "--hiddens", "16", "--heads",
                             "2", "--json", "-"])[1])
    check(max(abs(a - b) for a, b in zip(single["output"][0][0], doc["output"][0][0])) < 1e-6,
          "a padded sentence in a batch gives the output it gives alone")

    # the fast loops, streaming, the reference loops and threads agree
    base = ["selfattn", "--fill", "random", "--queries", "70", "--hiddens", "24", "--heads", "3",
            "--valid-lens", "50,70", "--causal", "--bias", "--json", "-"]
    fast = json.loads(run(base)[1])
    naive = json.loads(run(base + ["--naive"])[1])
    stream = json.loads(run(base + ["--stream"])[1])
    one = json.loads(run(base + ["--threads", "1"])[1])
    flat = lambda t: [x for a in t for b in a for x in b]
    worst = max(abs(a - b) for a, b in zip(flat(fast["output"]), flat(naive["output"])))
    check(worst < 1e-5, "fast and reference loops agree (worst %g)" % worst)
    worst = max(abs(a - b) for a, b in zip(flat(stream["output"]), flat(naive["output"])))
    check(worst < 1e-5, "streaming and reference loops agree (worst %g)" % worst)
    check(stream["attention_weights"] is None, "--stream writes attention_weights null")
    check(one["output"] == fast["output"], "--threads 1 gives the same bytes as all threads")
    rc, out, errtext = expect(["selfattn", "--fill", "random", "--time"], 0)
    check(errtext.startswith("forward pass: ") and "GFLOP/s (fast loops, " in errtext,
          "--time reports the forward pass on stderr")
    # --stream --explain: the online softmax block by block, equal to softmax·V
    rc, out, _ = expect(["selfattn", "--stream", "--explain", "--batch", "1", "--queries", "5",
                         "--hiddens", "4", "--heads", "1", "--fill", "random", "--valid-lens",
                         "none", "--block", "2"], 0, err="",
                        out_has=["keys in blocks of 2", "keys 0-1: scores [", "keys 4-4: scores [",
                                 "rescale e^(m_old - m) = "])
    last = [l for l in out.splitlines() if l.startswith("Largest difference")][0]
    check(float(last.rsplit(":", 1)[1]) < 1e-6, "the streamed output equals softmax·V: " + last)

    # the figure
    png = os.path.join(tmp, "heads.png")
    expect(["multihead", "--png", png], 0, err="",
           out_has=["wrote %s: attention weights, 2 examples × 5 heads, " % png])
    w_, h_, _ = png_info(png)
    check(w_ > h_ >= 200, "a 2 × 5 grid is wider than tall (%dx%d)" % (w_, h_))
    # --explain: every step of a small case
    rc, out, _ = expect(["multihead", "--explain", "--batch", "1", "--queries", "2", "--kv", "3",
                         "--hiddens", "4", "--heads", "2", "--valid-lens", "2"], 0, err="")
    for step in ["Step 1. Project: Q = queries·W_qᵀ  (2, 4)", "Step 2. Split into heads: Q_1  (2, 2)",
                 "Step 3. Scores: Q_1 K_1ᵀ  (2, 3)", "Step 4. Scaled: Q_1 K_1ᵀ / sqrt(2) = / 1.4142",
                 "Step 5. Masked: keys at k >= valid_len get -1e6", "-1000000.0000",
                 "Step 6. Attention weights", "Step 7. Head output: weights · V_2  (2, 2)",
                 "Step 8. Concatenate the heads", "Step 9. Output: concat · W_oᵀ  (2, 4)"]:
        check(step in out, "--explain shows %r" % step)
