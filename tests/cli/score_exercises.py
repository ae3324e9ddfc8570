"""Group score_exercises: zh 10.3's exercises on attn score (SPEC §15).
--keys random: keys drawn normal from the seed, the same for every scoring
function, the queries and weights as with ones; the printed spreads and
gaps worked out here from --json's numbers; its usage errors with their
exact lines."""
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


def group_score_exercises(tmp):
    keys_cases(tmp)
