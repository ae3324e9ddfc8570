"""Group score_page: attn score's --valid-lens (the lengths worked out by
hand on the section's cells, whose keys are all ones: every key scores the
same, so the weights are uniform over the keys a length keeps) and its
usage errors, and --html: the attention page's data, a row per scoring
function and a panel per example, its weights those of --json. What the
page does in a browser is tests/browser/run.js's (group live)."""
import json
import os
import re

from .common import check, expect, run, sha
from .html import f32, floats, page_data
from .score import check_result, near

S = "attn score: "
VALUES = [[r * 4 + c for c in range(4)] for r in range(10)]  # arange(40) as (10, 4)


def uniform(n, nk=10):
    """The weights of one query over nk equal scores, n of them kept."""
    keep = n if 0 < n <= nk else nk
    return [1.0 / keep if k < keep else 0.0 for k in range(nk)]


def mean_rows(n, nk=10):
    keep = n if 0 < n <= nk else nk
    return [sum(VALUES[r][c] for r in range(keep)) / keep for c in range(4)]


def score_json(args):
    rc, out, err = run(["score"] + args + ["--json", "-"])
    check(rc == 0 and err == "", "attn score %s --json -: exit %d %r" % (" ".join(args), rc, err))
    return json.loads(out) if rc == 0 else {"results": []}


def lens_cases():
    # 1,3: one key kept in example 0 (weight 1), three in example 1 (1/3 each)
    doc = score_json(["--valid-lens", "1,3"])
    check([r["score"] for r in doc["results"]] == ["additive", "dot"],
          "score --valid-lens 1,3: both scoring functions, additive first")
    for r in doc["results"]:
        name = "score --valid-lens 1,3 (%s)" % r["score"]
        check(r["valid_lens"] == [1, 3], "%s: valid_lens [1, 3], got %r" % (name, r["valid_lens"]))
        check(near(r["attention_weights"], [[uniform(1)], [uniform(3)]]),
              "%s: weights 1, then 1/3 three times, 0 beyond: %r" % (name, r["attention_weights"]))
        check(r["attention_weights"][0][0][:2] == [1, 0], "%s: exactly 1 and 0" % name)
        check(near(r["output"], [[[0, 1, 2, 3]], [[4, 5, 6, 7]]], 1e-5),
              "%s: the output is value row 0, then the mean of rows 0-2: %r" % (name, r["output"]))
        check_result(r)
    rc, out, _ = run(["score", "--valid-lens", "1,3"])
    check(rc == 0 and out.count("valid_lens [1, 3]\n") == 2, "score --valid-lens 1,3: printed")
    # one length per query (a row per example of one query), none, 0 and one above Nk
    for arg, lens, want in [("1;3", [[1], [3]], [1, 3]), ("none", None, [10, 10]),
                            ("0,11", [0, 11], [0, 11]), ("10,1000000000", [10, 1000000000], [10, 10])]:
        for r in score_json(["--valid-lens", arg])["results"]:
            name = "score --valid-lens %s (%s)" % (arg, r["score"])
            check(r["valid_lens"] == lens, "%s: valid_lens %r, got %r" % (name, lens, r["valid_lens"]))
            check(near(r["attention_weights"], [[uniform(want[0])], [uniform(want[1])]]),
                  "%s: weights %r" % (name, r["attention_weights"]))
            check(near(r["output"], [[mean_rows(want[0])], [mean_rows(want[1])]], 1e-5),
                  "%s: output %r" % (name, r["output"]))
            check_result(r)


def file_cases(tmp):
    # --valid-lens over the file's valid_lens
    cell = score_json(["--score", "additive"])["results"][0]
    inp = {n: cell[n] for n in ("queries", "keys", "values", "state_dict")}
    inp["valid_lens"] = [[0], [11]]
    path = os.path.join(tmp, "in.json")
    json.dump(inp, open(path, "w"))
    r = score_json(["--input", path, "--score", "additive", "--valid-lens", "2,5"])["results"][0]
    check(r["valid_lens"] == [2, 5], "score --input --valid-lens 2,5: the option's, got %r"
          % r["valid_lens"])
    check(near(r["attention_weights"], [[uniform(2)], [uniform(5)]]),
          "score --input --valid-lens 2,5: weights 1/2 and 1/5")
    check(r["state_dict"] == inp["state_dict"], "score --input --valid-lens: the file's state_dict")
    check_result(r)
    # the file's batch sets the count
    one = {"queries": [[[1, 0]]], "keys": [[[1, 0], [0, 1], [1, 1]]], "values": [[[1], [2], [3]]]}
    small = os.path.join(tmp, "one.json")
    json.dump(one, open(small, "w"))
    expect(["score", "--input", small, "--valid-lens", "1,2"], 2,
           err=S + "--valid-lens: expected 1 length (one per example of %s), got 2" % small)
    r = score_json(["--input", small, "--score", "dot", "--valid-lens", "2"])["results"][0]
    check(r["valid_lens"] == [2] and r["attention_weights"][0][0][2] == 0,
          "score --input (batch 1) --valid-lens 2: the third key masked")
    check_result(r)


def usage_errors(tmp):
    bad = S + ("--valid-lens: expected integers >= 0 like 3,2 or 1,2,3,4;2,2,2,2, or none, "
               "got '%s'")
    for arg in ["-1", "1.5", "1,,2", "", "a", "1,2;"]:
        expect(["score", "--valid-lens", arg], 2, err=bad % arg)
    expect(["score", "--valid-lens", "1,2,3"], 2,
           err=S + "--valid-lens: expected 2 lengths (one per example), got 3")
    expect(["score", "--valid-lens", "1,2;3,4"], 2,
           err=S + "--valid-lens: expected 2 rows of 1 (one per example and query), got 2 rows "
           "of 2")
    expect(["score", "--valid-lens", "1,2;3"], 2,
           err=S + "--valid-lens: every row needs 2 lengths, row 2 has 1")
    expect(["score", "--valid-lens", "1000000001,1"], 2, err=bad % "1000000001,1")
    expect(["score", "--masked-softmax", "--valid-lens", "1,2"], 2,
           err=S + "--valid-lens cannot be used with --masked-softmax, which prints the "
           "section's two masked_softmax calls and stops")
    expect(["score", "--valid-lens", "1,2", "--valid-lens", "3,4"], 2)
    # --html: a file, checked before any work
    expect(["score", "--html", "-"], 2,
           err=S + "--html: a page is written to a file, not to standard output (-)")
    missing = os.path.join(tmp, "no", "such", "s.html")
    expect(["score", "--input", os.path.join(tmp, "absent.json"), "--html", missing], 1,
           err=S + "--html %s: cannot create: No such file or directory" % missing)
    expect(["score", "--masked-softmax", "--html", os.path.join(tmp, "m.html")], 2,
           err=S + "--html cannot be used with --masked-softmax, which prints the section's "
           "two masked_softmax calls and stops")
    check(not os.path.exists(os.path.join(tmp, "m.html")), "score: no page after a usage error")


def page_cases(tmp):
    page = os.path.join(tmp, "s.html")
    expect(["score", "--valid-lens", "1,3", "--html", page], 0, err="",
           out_has=["wrote %s: a page of the attention weights, 2 scoring functions × 2 "
                    "examples, " % page, "valid_lens [1, 3]\n"])
    _, _, data = page_data(page)
    doc = score_json(["--valid-lens", "1,3"])
    pg = data.get("page", {})
    check(data["command"] == "score" and sorted(data) == ["command", "page", "results"],
          "score --html: the data is --json's object and page: %r" % sorted(data))
    check(pg.get("kind") == "attention" and pg.get("title") == "attn score",
          "score --html: an attention page")
    check(pg.get("command") == "attn score --valid-lens 1,3 --html " + page,
          "score --html: the command line, got %r" % pg.get("command"))
    check([r["name"] for r in pg["rows"]] == ["additive", "dot"] and
          [r["head_valid_lens"] for r in pg["rows"]] == [[1, 3], [1, 3]] and
          all(r["valid_lens"] is None for r in pg["rows"]),
          "score --html: a row per scoring function, each panel its example's length: %r"
          % pg["rows"])
    check(pg["rows"][1]["title"] == "DotProductAttention: a(q, k) = q·k / sqrt(2)",
          "score --html: the rows' titles name the modules")
    check(pg["titles"] == ["example 0", "example 1"] and pg["column"] == "example",
          "score --html: a panel per example")
    check(pg["xlabel"] == "Keys" and pg["ylabel"] == "Queries", "score --html: Keys, Queries")
    check(pg["weights"]["shape"] == [2, 2, 1, 10], "score --html: weights (2, 2, 1, 10)")
    want = [f32(x) for r in doc["results"] for x in floats(r["attention_weights"])]
    check(floats(pg["weights"]) == want, "score --html: the page's weights are --json's")
    check(near(floats(pg["weights"]), uniform(1) + uniform(3) + uniform(1) + uniform(3)),
          "score --html: 1, then 1/3 three times, in each row")
    check(len(data["results"]) == len(doc["results"]) == 2, "score --html: both results")
    same = lambda a, b: [f32(x) for x in floats(a)] == [f32(x) for x in floats(b)]
    for mine, theirs in zip(data["results"], doc["results"]):
        for key in theirs:
            if key == "state_dict":
                ok = sorted(mine[key]) == sorted(theirs[key]) and all(
                    same(mine[key][n], theirs[key][n]) for n in theirs[key])
            elif key in ("score", "valid_lens"):
                ok = mine[key] == theirs[key]
            else:
                ok = same(mine[key], theirs[key])
            check(ok, "score --html: results' %s (%s) as --json's" % (key, theirs["score"]))
    # the same command, the same bytes; one scoring function, one row
    first = sha(page)
    expect(["score", "--valid-lens", "1,3", "--html", page], 0)
    check(sha(page) == first, "score --html: the same bytes for the same command")
    one = os.path.join(tmp, "dot.html")
    expect(["score", "--score", "dot", "--valid-lens", "none", "--html", one], 0,
           out_has=["a page of the attention weights, 1 scoring function × 2 examples"])
    pg = page_data(one)[2]["page"]
    check([r["name"] for r in pg["rows"]] == ["dot"] and pg["rows"][0]["head_valid_lens"] is None
          and near(floats(pg["weights"]), [0.1] * 20),
          "score --score dot --valid-lens none --html: one row, nothing masked")


def preview_case(tmp):
    """More than 2^20 weights: a preview before the script whose page keeps
    only their shape; the data's page has them whole."""
    Nq, Nk = 1100, 1000
    big = {"queries": [[[(i % 7) / 7.0] for i in range(Nq)]],
           "keys": [[[(k % 5) / 5.0] for k in range(Nk)]],
           "values": [[[float(k)] for k in range(Nk)]], "valid_lens": [700]}
    path, page = os.path.join(tmp, "big.json"), os.path.join(tmp, "big.html")
    json.dump(big, open(path, "w"))
    expect(["score", "--input", path, "--score", "dot", "--html", page], 0, err="")
    html, _, data = page_data(page)
    m = re.search(r'<script type="application/json" id="attn-preview">(.*?)</script>', html, re.S)
    pv = json.loads(m.group(1)) if m else {"page": {}}
    check(pv["page"].get("weights") == {"dtype": "float32", "shape": [1, 1, Nq, Nk],
                                        "omitted": "in the data's page"},
          "score --html, 1.1M weights: the preview's page keeps only their shape")
    w = floats(data["page"]["weights"])
    check(len(w) == Nq * Nk and w[700] == 0 and abs(sum(w[:Nk]) - 1) < 1e-5,
          "score --html, 1.1M weights: the data's page has them whole, masked past 700")


def group_score_page(tmp):
    lens_cases()
    file_cases(tmp)
    usage_errors(tmp)
    page_cases(tmp)
    preview_case(tmp)
