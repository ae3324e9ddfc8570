"""attn heatmap: d2l's show_heatmaps for any matrices (SPEC §13): the
identity of --eye (terminal, PNG, JSON), a rank-4 file, a tensor of a
selfattn --json file by --path, and every error with its exit code and
message."""
import json
import math
import os

from .common import ROOT, check, expect, png_info, run, write

P = "attn heatmap: "
RANKS = ("expected numbers of rank 2, 3 or 4 ((queries, keys), (columns, queries, keys) "
         "or (rows, columns, queries, keys)), got rank ")


def eye_checks(tmp):
    # the section's first cell, as numbers without colour
    rc, out, err = run(["heatmap", "--eye", "3", "--color", "never"])
    check(rc == 0 and err == "", "heatmap --eye 3: exit %d, %r" % (rc, err))
    check(out == "torch.eye(3): torch.Size([1, 1, 3, 3])\n"
                 "1 × 1 panel of 3 Queries × 3 Keys, one colour scale from 0 to 1\n"
                 "[[1.0000, 0.0000, 0.0000],\n"
                 " [0.0000, 1.0000, 0.0000],\n"
                 " [0.0000, 0.0000, 1.0000]]\n", "heatmap --eye 3: %r" % out)
    # in colour: two rows a line, the diagonal Reds' darkest, the rest its lightest
    rc, out, _ = run(["heatmap", "--eye", "2", "--color", "always"])
    lines = out.split("\n")
    check(rc == 0 and lines[2] == "  0" and lines[3] ==
          "0 \x1b[38;2;103;0;13m\x1b[48;2;255;245;240m\u2580"
          "\x1b[38;2;255;245;240m\x1b[48;2;103;0;13m\u2580\x1b[0m",
          "heatmap --eye 2 --color always: %r" % lines[:4])
    check(lines[4].startswith("0.00 ") and lines[4].endswith(" 1.00  Reds"),
          "heatmap --eye 2: the colour bar %r" % lines[4])
    # NO_COLOR and --color auto on a pipe: numbers
    expect(["heatmap", "--eye", "2"], 0, err="", out_has=["[[1.0000, 0.0000],"])
    png = os.path.join(tmp, "eye.png")
    expect(["heatmap", "--eye", "10", "--png", png], 0, err="",
           out_has=["wrote %s: 1 × 1 heatmap of 10 × 10, 404×340 px" % png])
    check(png_info(png)[:2] == (404, 340), "eye.png: %r" % (png_info(png),))
    rc, out, _ = run(["heatmap", "--eye", "3", "--json", "-"])
    doc = json.loads(out)
    check(rc == 0 and doc == {"command": "heatmap", "shape": [1, 1, 3, 3], "xlabel": "Keys",
                              "ylabel": "Queries", "titles": None,
                              "attention_weights": [[[[1, 0, 0], [0, 1, 0], [0, 0, 1]]]]},
          "heatmap --eye 3 --json -: %r" % doc)


def file_checks(tmp):
    r4 = [[[[1, 2, 3], [3, 4, 5]], [[5, 6, 7], [7, 8, 9]]],
          [[[0, 1, 0], [1, 0, 1]], [[2, 2, 2], [1, 1, 1]]]]
    path = write(tmp, "r4.json", json.dumps(r4))
    png = os.path.join(tmp, "r4.png")
    expect(["heatmap", path, "--titles", "Head 1,Head 2", "--png", png], 0, err="",
           out_has=["wrote %s: 2 × 2 heatmaps of 2 × 3, 626×450 px" % png])
    check(png_info(png)[:2] == (626, 450), "r4.png: %r" % (png_info(png),))
    rc, out, _ = run(["heatmap", path, "--json", "-", "--xlabel", "k", "--titles", "a,b"])
    doc = json.loads(out)
    check(rc == 0 and doc["shape"] == [2, 2, 2, 3] and doc["attention_weights"] == r4 and
          doc["xlabel"] == "k" and doc["titles"] == ["a", "b"], "r4 --json: %r" % doc)
    rc, out, _ = run(["heatmap", path, "--color", "never", "--titles", "a,b"])
    check(rc == 0 and "2 × 2 panels of 2 Queries × 3 Keys, one colour scale from 0 to 9\n"
          in out and "\nrow 1, column 1 (b):\n[[2.0000, 2.0000, 2.0000],\n"
                     " [1.0000, 1.0000, 1.0000]]\n" in out, "r4 printed: %r" % out)
    # rank 3 from stdin: one row of columns
    rc, out, _ = run(["heatmap", "-", "--json", "-"], stdin=b"[[[1, 2]], [[3, 4]]]")
    check(rc == 0 and json.loads(out)["attention_weights"] == [[[[1, 2]], [[3, 4]]]],
          "rank 3 from stdin: %r" % out)
    # the data file of the guide: two heads of 4 queries × 5 keys
    rc, out, _ = run(["heatmap", os.path.join(ROOT, "data", "heatmap_heads.json"), "--json", "-"])
    check(rc == 0 and json.loads(out)["shape"] == [2, 4, 5], "heatmap_heads.json: %r" % out)
    # --html: the page's columns named by --titles (its heads), the values its data's
    page = os.path.join(tmp, "heads.html")
    rc, out, _ = run(["heatmap", os.path.join(ROOT, "data", "heatmap_heads.json"), "--titles",
                      "first,second", "--html", page, "--color", "never"])
    text = open(page, encoding="utf-8").read() if rc == 0 else ""
    check(rc == 0 and '"titles": ["first", "second"]' in text and '"kind": "attention"' in text,
          "heatmap --titles --html: the page names its columns: %r" % out)


def path_checks(tmp):
    run_json = os.path.join(tmp, "run.json")
    expect(["selfattn", "--json", run_json], 0)
    with open(run_json) as f:
        weights = json.load(f)["attention_weights"]
    rc, out, _ = run(["heatmap", run_json, "--path", "$.attention_weights", "--json", "-"])
    doc = json.loads(out)
    check(rc == 0 and doc["shape"] == [2, 5, 4, 4] and doc["attention_weights"] == weights,
          "--path $.attention_weights: %r" % out[:200])
    rc, out, _ = run(["heatmap", run_json, "--path", "$.attention_weights[1]", "--json", "-"])
    check(rc == 0 and json.loads(out)["attention_weights"] == [weights[1]],
          "--path $.attention_weights[1]: %r" % out[:200])
    png = os.path.join(tmp, "run.png")
    expect(["heatmap", run_json, "--path", "$.attention_weights", "--png", png], 0, err="",
           out_has=["wrote %s: 2 × 5 heatmaps of 4 × 4," % png])
    f = "attn heatmap: %s: " % run_json
    expect(["heatmap", run_json, "--path", "$.nope"], 1,
           err=f + "$.nope: no such member (the object has command, shape, output, "
                   "attention_weights, valid_lens, X, num_heads, state_dict)")
    expect(["heatmap", run_json, "--path", "$.output[5]"], 1,
           err=f + "$.output[5]: no such index (the array has 2 entries)")
    expect(["heatmap", run_json, "--path", "$.command[0]"], 1,
           err=f + "$.command[0]: no such index: the value before it is a string, not an array")
    expect(["heatmap", run_json, "--path", "$.shape"], 1, err=f + "$.shape: " + RANKS + "1")
    expect(["heatmap", run_json, "--path", "$.command"], 1,
           err=f + "$.command: expected an array of numbers, got a string")
    expect(["heatmap", run_json, "--path", "x"], 2,
           err=P + "--path: expected a JSON path starting with $, like $.attention_weights "
                   "or $.cross_attention[1], got 'x'")
    expect(["heatmap", run_json, "--path", "$.a[01]"], 2,
           err=P + "--path: expected .member or [index] at character 4 of '$.a[01]'")


def error_checks(tmp):
    bad = [("[1, 2]", "$: " + RANKS + "1"),
           ("[[[[[1]]]]]", "$: " + RANKS + "5 or more"),
           ("[[1, 2], [3]]", "$[1]: expected 2 numbers, got 1"),
           ("[[1, \"a\"]]", "$[0][1]: expected a number, got a string"),
           ("[[1, null]]", "$[0][1]: expected a number, got null"),
           ("[]", "$: an empty array: every axis needs at least one entry"),
           ("[[[]]]", "$[0][0]: an empty array: every axis needs at least one entry"),
           ("5", "$: expected an array of numbers, got a number"),
           ("[[1e39]]", "$[0][0]: expected a finite float32 number, got 1e+39")]
    for text, msg in bad:
        expect(["heatmap", write(tmp, "bad.json", text)], 1,
               err=P + os.path.join(tmp, "bad.json") + ": " + msg)
        expect(["heatmap", "-"], 1, err=P + "stdin: " + msg, stdin=text.encode())
    missing = os.path.join(tmp, "missing.json")
    expect(["heatmap", missing], 1, err=P + missing + ": cannot open: No such file or directory")
    expect(["heatmap", tmp], 1, err=P + tmp + ": cannot read: Is a directory")
    expect(["heatmap", write(tmp, "nan.json", "[[NaN]]")], 1,
           err=P + os.path.join(tmp, "nan.json") + ": line 1, column 3: NaN is not a JSON "
           "number (NaN and Infinity are not allowed)")
    expect(["heatmap", "--eye", "2", "--png", os.path.join(tmp, "no", "x.png")], 1,
           err=P + "--png %s: cannot create: No such file or directory"
           % os.path.join(tmp, "no", "x.png"))
    expect(["heatmap", "--eye", "100000"], 1,
           err=P + "--eye 100000 needs about 74.5 GiB, more than --max-mem 4 GiB")
    # usage
    expect(["heatmap"], 2, err=P + "expected a JSON FILE (- for stdin), --eye N or --random N "
                                   "(see attn heatmap --help)")
    expect(["heatmap", "a", "b"], 2, err=P + "expected one FILE, got 2 (see attn heatmap --help)")
    expect(["heatmap", "--eye", "0"], 2,
           err=P + "--eye: expected an integer from 1 to 1000000, got '0'")
    expect(["heatmap", "--eye", "x"], 2,
           err=P + "--eye: expected an integer from 1 to 1000000, got 'x'")
    expect(["heatmap", "--eye", "3", "f.json"], 2,
           err=P + "--eye draws the identity and takes no FILE, got 'f.json'")
    expect(["heatmap", "--eye", "3", "--path", "$"], 2,
           err=P + "--eye draws the identity: --path is for a FILE")
    expect(["heatmap", "--eye", "3", "--titles", "a,b"], 2,
           err=P + "--titles: 2 titles for 1 column of panels")
    expect(["heatmap", "--eye", "3", "--frob"], 2,
           err=P + "unknown option '--frob' (see attn heatmap --help)")
    expect(["heatmap", "--eye", "3", "--cmap", "jet"], 2,
           err=P + "--cmap: unknown colormap 'jet' (known: Reds, Blues, viridis, gray)")
    expect(["heatmap", "--eye", "3", "--html", "-"], 2)
    expect(["heatmap", "--help"], 0, err="", out_has=["usage: attn heatmap", "Examples:"])


def softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    return [v / sum(e) for v in e]


def random_checks(tmp):
    """--random N and --softmax (d2l 10.1's exercise): the rows of the
    softmaxed matrix against the test's own softmax of the same seeded
    numbers, each row summing to 1; by hand on a file and on --eye."""
    rc, out, _ = run(["heatmap", "--random", "6", "--seed", "3", "--json", "-"])
    raw = json.loads(out)["attention_weights"][0][0]
    rc2, out2, _ = run(["heatmap", "--random", "6", "--seed", "3", "--softmax", "--json", "-"])
    doc = json.loads(out2)
    got = doc["attention_weights"][0][0]
    check(rc == 0 and rc2 == 0 and len(raw) == 6 and all(len(r) == 6 for r in raw),
          "--random 6: %r" % raw)
    # standard normal numbers: not all alike, about mean 0 and variance 1
    flat = [v for r in raw for v in r]
    check(len(set(flat)) == 36 and abs(sum(flat) / 36) < 0.5 and
          0.4 < sum(v * v for v in flat) / 36 < 2.0, "--random 6: not standard normal: %r" % flat)
    for i, (g, r) in enumerate(zip(got, raw)):
        want = softmax(r)
        check(all(abs(a - b) <= 1e-7 + 1e-6 * b for a, b in zip(g, want)),
              "--random 6 --softmax row %d: %r, by hand %r" % (i, g, want))
        check(abs(sum(g) - 1) < 1e-6 and min(g) > 0, "row %d sums to %r" % (i, sum(g)))
    check(doc["softmax"] is True and 0 <= doc["row_sum_error"] < 1e-6 and doc["seed"] == 3,
          "--softmax --json: %r" % {k: v for k, v in doc.items() if k != "attention_weights"})
    # the same seed, the same numbers; another seed, others
    check(run(["heatmap", "--random", "6", "--seed", "3", "--json", "-"])[1] == out,
          "--random 6 --seed 3 twice: other numbers")
    check(json.loads(run(["heatmap", "--random", "6", "--json", "-"])[1])["attention_weights"]
          != doc["attention_weights"], "--seed 0 and 3 give the same numbers")
    # printed: the check line, each row summing to 1
    expect(["heatmap", "--random", "3", "--softmax", "--color", "never"], 0, err="",
           out_has=["normal(0, 1) of 3 × 3, --seed 0: torch.Size([1, 1, 3, 3])\n",
                    "softmax over each row: 3 rows of 3, each sums to 1 (largest |sum − 1| "])
    png = os.path.join(tmp, "softmax.png")
    expect(["heatmap", "--random", "10", "--softmax", "--png", png], 0, err="",
           out_has=["softmax over each row: 10 rows of 10, each sums to 1",
                    "wrote %s: 1 × 1 heatmap of 10 × 10, 404×340 px" % png])
    # by hand: softmax([0, ln 2, ln 5]) = [1/8, 2/8, 5/8]; a rank-3 file, row by row
    path = write(tmp, "logs.json", json.dumps([[[0, math.log(2), math.log(5)],
                                                [1, 1, 1]]]))
    rc, out, _ = run(["heatmap", path, "--softmax", "--json", "-"])
    w = json.loads(out)["attention_weights"][0][0]
    check(rc == 0 and all(abs(a - b) < 1e-7 for a, b in
                          zip(w[0] + w[1], [1 / 8, 2 / 8, 5 / 8] + [1 / 3] * 3)),
          "softmax by hand: %r" % w)
    # the identity's rows: e/(e + N − 1) on the diagonal, 1/(e + N − 1) elsewhere
    rc, out, _ = run(["heatmap", "--eye", "4", "--softmax", "--json", "-"])
    w = json.loads(out)["attention_weights"][0][0]
    d = math.e + 3
    check(rc == 0 and all(abs(w[i][j] - (math.e if i == j else 1) / d) < 1e-7
                          for i in range(4) for j in range(4)), "--eye 4 --softmax: %r" % w)
    # refused
    expect(["heatmap", "--random", "0"], 2,
           err=P + "--random: expected an integer from 1 to 1000000, got '0'")
    expect(["heatmap", "--random", "1000001"], 2,
           err=P + "--random: expected an integer from 1 to 1000000, got '1000001'")
    expect(["heatmap", "--random", "100000"], 1,
           err=P + "--random 100000 needs about 74.5 GiB, more than --max-mem 4 GiB")
    expect(["heatmap", "--random", "3", "f.json"], 2,
           err=P + "--random draws a random matrix and takes no FILE, got 'f.json'")
    expect(["heatmap", "--random", "3", "--eye", "3"], 2,
           err=P + "--eye and --random draw two different matrices; give one")
    expect(["heatmap", "--random", "3", "--path", "$"], 2,
           err=P + "--random draws a random matrix: --path is for a FILE")
    expect(["heatmap", "--eye", "3", "--seed", "3"], 2,
           err=P + "--seed draws --random's numbers; give --random N")
    expect(["heatmap", "--random", "3", "--seed", "-1"], 2,
           err=P + "--seed: expected an integer from 0 to 2147483647, got '-1'")
    # --softmax on what is not a matrix: refused with the JSON path
    r1 = write(tmp, "r1.json", "[1, 2, 3]")
    expect(["heatmap", r1, "--softmax"], 1,
           err=P + r1 + ": $: " + RANKS + "1")
    num = write(tmp, "num.json", '{"a": 5}')
    expect(["heatmap", num, "--path", "$.a", "--softmax"], 1,
           err=P + num + ": $.a: expected an array of numbers, got a number")


def group_heatmap(tmp):
    random_checks(tmp)
    eye_checks(tmp)
    file_checks(tmp)
    path_checks(tmp)
    error_checks(tmp)
