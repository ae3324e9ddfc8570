"""Group score_exercises: zh 10.3's exercises on attn score (SPEC §15).
--keys random: keys drawn normal from the seed, the same for every scoring
function, the queries and weights as with ones; the printed spreads and
gaps worked out here from --json's numbers. --score general: qᵀ W k on the
cells (queries of 20 against keys of 2), its W.weight drawn as nn.Linear
draws it and read back from a state_dict, a small case by hand, the
formula on --json's numbers. --score sum: Σ (q_i + k_i), every query of an
example given the same weights (several queries: --queries N), the printed
check worked out here, a case by hand. Every error with its exact line."""
import math
import json
import os
import re

from .common import check, expect, run
from .html import f32, floats, page_data
from .score import DEFAULT, check_result, near

S = "attn score: "


def score_json(args):
    rc, out, err = run(["score"] + args + ["--json", "-"])
    check(rc == 0 and err == "", "attn score %s --json -: exit %d %r" % (" ".join(args), rc, err))
    return json.loads(out)["results"] if rc == 0 else []


def kept(r, b, q):
    """The keys a query's mask keeps (a length 0 or above Nk: all)."""
    nk, lens = len(r["keys"][0]), r["valid_lens"]
    n = nk if lens is None else lens[b][q] if isinstance(lens[b], list) else lens[b]
    return nk if n <= 0 or n > nk else n


def spread_and_gap(r):
    """The widest spread of a query's kept scores, the largest |w - 1/n|."""
    spread = gap = 0.0
    for b, rows in enumerate(r["attention_weights"]):
        for q, w in enumerate(rows):
            n = kept(r, b, q)
            s = r["scores"][b][q][:n]
            spread = max(spread, max(s) - min(s))
            gap = max(gap, max(abs(x - (1.0 / n if k < n else 0.0)) for k, x in enumerate(w)))
    return spread, gap


def weights_gap(x, y):
    return max(abs(a - b) for bx, by in zip(x["attention_weights"], y["attention_weights"])
               for rx, ry in zip(bx, by) for a, b in zip(rx, ry))


def keys_cases(tmp):
    # ones: the book's keys, byte for byte the default
    rc, out, _ = expect(["score", "--keys", "ones"], 0, err="")
    check(out == DEFAULT, "score --keys ones: the default printout")
    ones = score_json([])
    rand = score_json(["--keys", "random"])
    check(len(rand) == 2, "score --keys random: both scoring functions")
    if len(rand) != 2:
        return
    add, dot = rand
    # the same keys for both, not ones, their own stream: queries and weights unchanged
    check(add["keys"] == dot["keys"], "--keys random: the same keys for every scoring function")
    flat = [x for b in add["keys"] for k in b for x in k]
    check(len(flat) == 40 and len(set(flat)) == 40 and all(abs(x) < 6 for x in flat),
          "--keys random: 40 different normal numbers")
    mean = sum(flat) / 40
    var = sum((x - mean) ** 2 for x in flat) / 39
    check(abs(mean) < 0.5 and 0.4 < var < 2.0, "--keys random: about normal(0, 1): mean %g, "
          "variance %g" % (mean, var))
    for mine, book in zip(rand, ones):
        check(mine["queries"] == book["queries"] and mine.get("state_dict") ==
              book.get("state_dict") and mine["values"] == book["values"],
              "--keys random (%s): the queries, weights and values as with ones" % mine["score"])
        check_result(mine)
    check(score_json(["--keys", "random", "--seed", "1"])[0]["keys"] != add["keys"],
          "--keys random --seed 1: other keys")
    check(score_json(["--keys", "random", "--score", "dot"])[0] == dot,
          "--keys random --score dot: the same run as beside additive")
    # the printout: the spreads, the gaps and the difference, from the JSON
    rc, out, _ = expect(["score", "--keys", "random"], 0, err="",
                        out_has=["keys (2, 10, 2) normal(0, 1), values"])
    m = re.search(r"  AdditiveAttention +([0-9.]+) +([0-9.]+)\n"
                  r"  DotProductAttention +([0-9.]+) +([0-9.]+)\n", out)
    check(m is not None, "--keys random: the table of spreads and gaps:\n%s" % out)
    if m:
        want = ["%.4f" % x for x in spread_and_gap(add) + spread_and_gap(dot)]
        check(list(m.groups()) == want, "--keys random: %r, want %r" % (m.groups(), want))
    diff = weights_gap(add, dot)
    check(("weigh the same keys differently:\nlargest |difference| %.4f\n" % diff) in out,
          "--keys random: the difference of the weights, %.4f" % diff)
    check(diff > 0.1, "--keys random: additive and dot weights differ (%.4f)" % diff)
    check(weights_gap(*ones) < 1e-6, "with ones both weigh alike")
    # errors
    expect(["score", "--keys", "zeros"], 2, err=S + "--keys: expected ones or random, got 'zeros'")
    expect(["score", "--keys"], 2)
    path = os.path.join(tmp, "in.json")
    json.dump({n: add[n] for n in ("queries", "keys", "values")}, open(path, "w"))
    expect(["score", "--input", path, "--keys", "random"], 2,
           err=S + "--keys shapes the section's cells and cannot be used with --input, whose "
           "file gives the inputs")
    expect(["score", "--masked-softmax", "--keys", "random"], 2,
           err=S + "--keys cannot be used with --masked-softmax, which prints the section's "
           "two masked_softmax calls and stops")


GENERAL_HEAD = ("GeneralAttention(query_size=20, key_size=2): a(q, k) = qᵀ W k, W (20, 2)\n"
                "W(q) = qᵀ W as nn.Linear(20, 2, bias=False), its W.weight (2, 20); then "
                "W(q)·k\n"
                "queries (2, 1, 20) normal(0, 1), keys (2, 10, 2) ones, values (2, 10, 4) "
                "arange(40), valid_lens [2, 6]\n\n")


def general_cases(tmp):
    # the cell: keys of ones, so the book's output; the output has a grad_fn (W is a parameter)
    rc, out, _ = expect(["score", "--score", "general"], 0, err="")
    add_out = DEFAULT.split("\n\n", 1)[1].split("\n\n\n")[0]
    check(out == GENERAL_HEAD + add_out + "\n", "score --score general: the printout:\n%s" % out)
    r = score_json(["--score", "general"])[0]
    W = r["state_dict"]["W.weight"]
    check(sorted(r["state_dict"]) == ["W.weight"] and len(W) == 2 and
          all(len(row) == 20 for row in W), "general: W.weight (2, 20) as nn.Linear(20, 2)")
    flat = [x for row in W for x in row]
    bound = 1 / math.sqrt(20)
    check(all(abs(x) < bound for x in flat) and len(set(flat)) == 40 and
          min(flat) < -bound / 2 and max(flat) > bound / 2,
          "general: W.weight uniform in ±1/sqrt(20): %g … %g" % (min(flat), max(flat)))
    check_result(r)
    check(near(r["output"], [[[2, 3, 4, 5]], [[10, 11, 12, 13]]], 1e-5), "general: the cells' output")
    again = score_json(["--score", "general", "--seed", "1"])[0]
    check(again["state_dict"] != r["state_dict"] and again["queries"] != r["queries"],
          "general --seed 1: other queries and W")
    check(score_json(["--score", "general"])[0] == r, "general: the same seed, the same numbers")
    # random keys: the scores now differ; the same keys as the other functions'
    rk = score_json(["--score", "general", "--keys", "random"])[0]
    check(rk["keys"] == score_json(["--keys", "random"])[0]["keys"] and
          rk["state_dict"] == r["state_dict"], "general --keys random: the same keys, the same W")
    check_result(rk)
    spread, gap = spread_and_gap(rk)
    expect(["score", "--score", "general", "--keys", "random"], 0, err="",
           out_has=["  GeneralAttention     %12.4f %26.4f\n" % (spread, gap)])
    check(gap > 0.01, "general --keys random: the weights leave 1/valid_len (%g)" % gap)
    # the state_dict back from a file: the same numbers
    path = os.path.join(tmp, "general.json")
    json.dump({n: rk[n] for n in ("queries", "keys", "values", "valid_lens", "state_dict")},
              open(path, "w"))
    back = score_json(["--input", path, "--score", "general"])[0]
    check(back == rk, "general: its own state_dict read back gives the same result")
    expect(["score", "--input", path, "--score", "general"], 0, err="",
           out_has=["valid_lens [2, 6]; from the file\n"])
    # by hand: q (1, 2, 3) against two keys of size 2, W(q) = (q0, q2): scores 1, 3 and 3, 1
    hand = {"queries": [[[1, 2, 3], [3, 0, 1]]], "keys": [[[1, 0], [0, 1]]],
            "values": [[[10], [20]]], "state_dict": {"W.weight": [[1, 0, 0], [0, 0, 1]]}}
    json.dump(hand, open(path, "w"))
    h = score_json(["--input", path, "--score", "general"])[0]
    s1 = 1 / (1 + math.exp(2))
    check(h["scores"] == [[[1, 3], [3, 1]]], "general by hand: scores %r" % h["scores"])
    check(near(h["attention_weights"], [[[s1, 1 - s1], [1 - s1, s1]]]) and
          near(h["output"], [[[10 * s1 + 20 * (1 - s1)], [10 * (1 - s1) + 20 * s1]]]),
          "general by hand: weights and output %r" % h)
    rc, out, _ = expect(["score", "--input", path, "--score", "general"], 0, err="",
                        out_has=["GeneralAttention(query_size=3, key_size=2)",
                                 "; from the file\n"])
    check("random" not in out, "general: the file's W, not a random one")
    # a file without a state_dict: W drawn from the seed
    del hand["state_dict"]
    json.dump(hand, open(path, "w"))
    expect(["score", "--input", path, "--score", "general"], 0, err="",
           out_has=["from the file, weights random (nn.Linear's initialisation)\n"])
    general_errors(tmp, path, hand)


def general_errors(tmp, path, hand):
    bad = [({"W.weight": [[1, 0], [0, 0], [0, 1]]},
            "$.state_dict[\"W.weight\"]: expected shape (2, 3), nn.Linear(3, 2)'s (key_size, "
            "query_size), got (3, 2)"),
           ({"W.weight": [[1, 0, 0]]}, "$.state_dict[\"W.weight\"]: expected shape (2, 3), "
            "nn.Linear(3, 2)'s (key_size, query_size), got (1, 3)"),
           ({"W.weight": [[1, 0, 0], [0, 1]]}, "$.state_dict[\"W.weight\"][1]: expected 3 numbers, "
            "got 2"),
           ({"W.weight": [1, 0, 0]}, None),
           ({}, "$.state_dict: missing \"W.weight\" (2, 3)"),
           ({"W.weight": [[1, 0, 0], [0, 0, 1]], "W.bias": [0, 0]},
            "$.state_dict: unknown key \"W.bias\" (AdditiveAttention has W_q.weight, "
            "W_k.weight, w_v.weight; the general score W.weight)")]
    for sd, msg in bad:
        json.dump(dict(hand, state_dict=sd), open(path, "w"))
        rc, _, err = run(["score", "--input", path, "--score", "general"])
        if msg is None:
            check(rc == 1 and err.startswith(S + path + ": $.state_dict[\"W.weight\"]") and
                  err.count("\n") == 1, "general: a W.weight of rank 1 refused: %r" % err)
        else:
            check(rc == 1 and err == S + "%s: %s\n" % (path, msg),
                  "general: %r, want %r" % (err, msg))
    # general's state_dict alone for additive: it misses additive's
    json.dump(dict(hand, state_dict={"W.weight": [[1, 0, 0], [0, 0, 1]]}), open(path, "w"))
    expect(["score", "--input", path], 1,
           err=S + path + ": $.state_dict: missing \"W_q.weight\" (num_hiddens, 3)")
    expect(["score", "--score", "general", "--score-hiddens", "3"], 2,
           err=S + "--score-hiddens is for --score additive")
    expect(["score", "--score", "bilinear"], 2,
           err=S + "--score: expected additive, dot, general or sum, got 'bilinear'")


SUM_LESSON = ("The sum score is Σq + Σk: a query adds the same Σq to every key's score,\n"
              "and the softmax over the keys takes it away (softmax(x + c) = softmax(x)).\n"
              "Every query of an example gets the same weights, and the same output.\n")


def sum_cases(tmp):
    # the book's cell (keys of ones, one query): the book's output, no grad_fn, nothing to compare
    rc, out, _ = expect(["score", "--score", "sum"], 0, err="")
    dot_out = DEFAULT.split("\n\n\n")[1].split("\n\n", 1)[1]
    check(out == "SumAttention(): a(q, k) = Σᵢ (qᵢ + kᵢ) = Σq + Σk\n"
          "queries (2, 1, 2) normal(0, 1), keys (2, 10, 2) ones, values (2, 10, 4) arange(40), "
          "valid_lens [2, 6]\n\n" + dot_out + "\n" + SUM_LESSON +
          "Checked: nothing to compare, one query per example (--queries N for more).\n",
          "score --score sum: the printout:\n%s" % out)
    # random keys, three queries an example: identical rows, as the printed check says
    args = ["--score", "sum", "--keys", "random", "--queries", "3"]
    r = score_json(args)[0]
    check("state_dict" not in r and len(r["queries"][0]) == 3, "sum: no parameters, 3 queries")
    check_result(r)
    dw = max(abs(f32(a) - f32(b)) for ex in r["attention_weights"] for row in ex
             for a, b in zip(row, ex[0]))
    do = max(abs(f32(a) - f32(b)) for ex in r["output"] for row in ex for a, b in zip(row, ex[0]))
    check(dw < 1e-6 and do < 1e-5, "sum: every query of an example the same weights (%g, %g)"
          % (dw, do))
    check(max(abs(a - b) for a, b in zip(r["attention_weights"][1][0], [1 / 6.0] * 6)) > 0.05,
          "sum --keys random: the weights are not uniform")
    rows = {tuple(q) for ex in r["queries"] for q in ex}
    check(len(rows) == 6, "sum: six different queries give the same weights within an example")
    rc, out, _ = expect(["score"] + args, 0, err="", out_has=[SUM_LESSON])
    check(("Checked on 4 queries, each against the first of its example with the\n"
           "same valid length: largest |weight difference| %.3g, |output difference|\n"
           "%.3g: float32 rounding" % (dw, do)) in out, "sum: the printed check:\n%s" % out)
    # one valid length per query: each compared with the first of the same length
    r2 = score_json(args[:-2] + ["--queries", "4", "--valid-lens", "2,2,5,5;1,3,3,3"])[0]
    check_result(r2)
    for b, pairs in [(0, [(0, 1), (2, 3)]), (1, [(1, 2), (1, 3)])]:
        for p, q in pairs:
            check(near(r2["attention_weights"][b][p], r2["attention_weights"][b][q]),
                  "sum, lengths per query: example %d, queries %d and %d alike" % (b, p, q))
    expect(["score"] + args[:-2] + ["--queries", "4", "--valid-lens", "2,2,5,5;1,3,3,3"], 0,
           out_has=["Checked on 4 queries,"])
    # by hand: Σq 3 and 4, Σk 1, 4, -1
    path = os.path.join(tmp, "sum.json")
    json.dump({"queries": [[[1, 2], [5, -1]]], "keys": [[[0, 1], [2, 2], [-1, 0]]],
               "values": [[[1, 0], [0, 1], [1, 1]]]}, open(path, "w"))
    h = score_json(["--input", path, "--score", "sum"])[0]
    e = [math.exp(x) for x in (1, 4, -1)]
    w = [x / sum(e) for x in e]
    check(h["scores"] == [[[4, 7, 2], [5, 8, 3]]] and
          near(h["attention_weights"], [[w, w]]) and
          near(h["output"], [[[w[0] + w[2], w[1] + w[2]]] * 2]),
          "sum by hand: scores Σq + Σk, the same weights for both queries: %r" % h)
    expect(["score", "--input", path, "--score", "sum"], 0, err="",
           out_has=["Checked on 1 query, each against"])
    # unequal lengths: refused with the path; --queries: a usage error out of range
    json.dump({"queries": [[[1, 2, 3]]], "keys": [[[0, 1]]], "values": [[[1]]]}, open(path, "w"))
    expect(["score", "--input", path, "--score", "sum"], 1,
           err=S + path + ": $.queries: the sum score Σᵢ (qᵢ + kᵢ) needs queries of the keys' "
           "size 2, got 3 (--score additive or general scores queries and keys of different "
           "sizes)")
    expect(["score", "--input", path, "--score", "general"], 0, err="")
    for bad in ["0", "-1", "1.5", "x", "100001"]:
        expect(["score", "--score", "sum", "--queries", bad], 2,
               err=S + "--queries: expected an integer from 1 to 100000, got '%s'" % bad)
    expect(["score", "--input", path, "--queries", "2"], 2,
           err=S + "--queries shapes the section's cells and cannot be used with --input, "
           "whose file gives the inputs")
    expect(["score", "--masked-softmax", "--queries", "2"], 2,
           err=S + "--queries cannot be used with --masked-softmax, which prints the section's "
           "two masked_softmax calls and stops")
    expect(["score", "--score", "sum", "--score-hiddens", "4"], 2,
           err=S + "--score-hiddens is for --score additive")
    expect(["score", "--score", "sum", "--queries", "2", "--valid-lens", "1;2"], 2,
           err=S + "--valid-lens: expected 2 rows of 2 (one per example and query), got 2 rows "
           "of 1")


def page_cases(tmp):
    """--html for the new scores: a row each, titled by its formula, its
    weights those of --json; the page's command line keeps the options."""
    for score, title in [("general", "GeneralAttention: a(q, k) = qᵀ W k"),
                         ("sum", "SumAttention: a(q, k) = Σᵢ (qᵢ + kᵢ)")]:
        page = os.path.join(tmp, score + ".html")
        args = ["score", "--score", score, "--keys", "random", "--queries", "3"]
        expect(args + ["--html", page], 0, err="",
               out_has=["a page of the attention weights, 1 scoring function × 2 examples"])
        pg = page_data(page)[2]["page"]
        r = score_json(args[1:])[0]
        check([(x["name"], x["title"]) for x in pg["rows"]] == [(score, title)],
              "score --score %s --html: its row %r" % (score, pg["rows"]))
        check(pg["weights"]["shape"] == [1, 2, 3, 10] and
              floats(pg["weights"]) == [f32(x) for x in floats(r["attention_weights"])],
              "score --score %s --html: the weights of --json" % score)
        check(pg["command"] == "attn " + " ".join(args) + " --html " + page,
              "score --score %s --html: the command line %r" % (score, pg["command"]))


def group_score_exercises(tmp):
    keys_cases(tmp)
    general_cases(tmp)
    sum_cases(tmp)
    page_cases(tmp)
