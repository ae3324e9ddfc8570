"""Group score_exercises: zh 10.3's exercises on attn score (SPEC §15).
--keys random: keys drawn normal from the seed, the same for every scoring
function, the queries and weights as with ones; the printed spreads and
gaps worked out here from --json's numbers. --score general: qᵀ W k on the
cells (queries of 20 against keys of 2), its W.weight drawn as nn.Linear
draws it and read back from a state_dict, a small case by hand, the
formula on --json's numbers. Every error with its exact line."""
import math
import json
import os
import re

from .common import check, expect, run
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
           err=S + "--score: expected additive, dot or general, got 'bilinear'")


def group_score_exercises(tmp):
    keys_cases(tmp)
    general_cases(tmp)
