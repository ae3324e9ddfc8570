"""--html FILE (SPEC.md §10): the page's file as a file — refused up front
when it cannot be written, written atomically, the same bytes for the same
command, the data element escaped and holding --json's members. What the
page does in a browser is tests/browser/run.js's (suite browser)."""
import base64
import json
import os
import re
import struct

from .common import check, expect, run, slow_build

DATA_RE = re.compile(r'<script type="application/json" id="attn-data">(.*?)</script>', re.S)


def page_data(path):
    """(the whole page, the data element's text, its JSON)."""
    with open(path, encoding="utf-8") as f:
        html = f.read()
    m = DATA_RE.search(html)
    assert m, "no data element in " + path
    return html, m.group(1), json.loads(m.group(1))


def floats(t):
    """A tensor of the page (base64 float32, little-endian) or of --json
    (nested lists), flattened to a list of floats."""
    if isinstance(t, dict):
        raw = base64.b64decode(t["base64"])
        return list(struct.unpack("<%df" % (len(raw) // 4), raw))
    out = []

    def walk(v):
        if isinstance(v, list):
            for x in v:
                walk(x)
        else:
            out.append(v)
    walk(t)
    return out


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def group_html(tmp):
    M = "attn multihead: "
    S = "attn selfattn: "
    page = os.path.join(tmp, "mh.html")

    # unwritable: refused before any work (the missing input is not read)
    missing = os.path.join(tmp, "no", "such", "p.html")
    expect(["multihead", "--html", missing], 1,
           err=M + "--html %s: cannot create: No such file or directory" % missing)
    expect(["selfattn", "--input", os.path.join(tmp, "absent.json"), "--html", missing], 1,
           err=S + "--html %s: cannot create: No such file or directory" % missing)
    expect(["multihead", "--html", tmp], 1, err=M + "--html %s: cannot write: Is a directory" % tmp)
    for cmd in (["multihead"], ["posenc"], ["complexity"], ["train", "--steps", "100000"]):
        expect(cmd + ["--html", "-"], 2, err="attn %s: --html: a page is written to a file, not to "
                                            "standard output (-)" % cmd[0])
    check(not os.path.exists(os.path.dirname(missing)), "html: nothing made for a missing folder")
    # what cannot go with it
    expect(["multihead", "--stream", "--html", page], 2,
           err=M + "--stream never stores the attention weights, which --html needs")
    expect(["selfattn", "--describe", "--html", page], 2,
           err=S + "--describe prints the module and stops; --html would have nothing to show")
    # --scale-sweep's page: its --json members and the kind scale_sweep
    rc, out, err = expect(["selfattn", "--scale-sweep", "--dims", "1:16", "--samples", "200",
                           "--html", page], 0, err="")
    check(out.endswith("wrote %s: a page of the largest weight and the variance against d, "
                       "%d KB\n" % (page, round(os.path.getsize(page) / 1024))),
          "html scale-sweep: one report line: %r" % out[-200:])

    # the chapter's cell: one report line, under 100 KB, the same bytes twice
    rc, out, err = expect(["multihead", "--html", page], 0, err="")
    size = os.path.getsize(page)
    check(out.endswith("wrote %s: a page of the attention weights, 2 examples × 5 heads, %d KB\n"
                       % (page, round(size / 1024))), "html: the report line: %r" % out[-120:])
    with open(page, encoding="utf-8") as f:
        module = re.search(r'<script type="application/octet-stream" id="attn-module"[^>]*>([^<]*)</script>', f.read())
    msize = len(module.group(0)) if module else 0
    check(size - msize < 176 * 1024, "html: the chapter's page is under 176 KB without attn's module (%d bytes)"
          % (size - msize))
    check(size < 1024 * 1024, "html: the chapter's page, with attn's module, is under 1 MB (SPEC §14): %d bytes" % size)
    with open(page, "rb") as f:
        first = f.read()
    expect(["multihead", "--html", page], 0)
    with open(page, "rb") as f:
        check(f.read() == first, "html: the same command gives the same bytes")
    leftovers = [n for n in os.listdir(tmp) if n.startswith("mh.html.")]
    check(not leftovers, "html: no temporary file left: %r" % leftovers)

    # a failed run leaves an existing page untouched
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"queries": [[1, 2], [3]]}')
    expect(["multihead", "--input", bad, "--html", page], 1)
    with open(page, "rb") as f:
        check(f.read() == first, "html: a failed run leaves the old page as it was")

    # self-contained: the policy, no URL to load, inline style and script
    html, raw, data = page_data(page)
    check(html.startswith("<!DOCTYPE html>\n"), "html: an HTML5 page")
    check('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
          "script-src 'unsafe-inline' 'wasm-unsafe-eval'; worker-src blob: data:; "
          "style-src 'unsafe-inline'; img-src data:;" in html,
          "html: a Content-Security-Policy that forbids remote loads (and lets attn's module run)")
    check(not re.search(r'\b(src|href)\s*=', html.replace(raw, "")), "html: no src= or href= in the page")
    check(not re.search(r"https?://", html.replace(raw, "")), "html: no URL in the page's markup or code")
    nmodule = 1 if 'id="attn-module"' in html else 0
    check(html.count("<script") == 2 + nmodule and "<style>" in html,
          "html: one style, the data, one script (and attn's module)")

    # the data: --json's members, the weights whole as base64 float32
    jpath = os.path.join(tmp, "mh.json")
    expect(["multihead", "--json", jpath], 0)
    with open(jpath) as f:
        ref = json.load(f)
    check(sorted(k for k in data if k != "page") == sorted(ref),
          "html: the data has --json's keys: %r" % sorted(data))
    w = data["attention_weights"]
    check(w["dtype"] == "float32" and w["shape"] == [2, 5, 4, 6], "html: the weights' shape: %r"
          % {k: v for k, v in w.items() if k != "base64"})
    check(floats(w) == [f32(x) for x in floats(ref["attention_weights"])],
          "html: the weights are --json's, as float32")
    check(data["valid_lens"] == [3, 2] and data["page"]["kind"] == "attention",
          "html: valid_lens and the page's kind")
    sd = data["state_dict"]["W_q.weight"]
    check(sd["shape"] == [100, 100] and "omitted" in sd and "base64" not in sd,
          "html: a large tensor keeps its shape only: %r" % sd)
    check(data["page"]["rows"][1] == {"name": "example 1", "query_tokens": None,
                                      "key_tokens": None, "valid_lens": 2},
          "html: a row of the grid: %r" % data["page"]["rows"][1])

    # escaping: <, >, &, U+2028 and U+2029 as \\u escapes in the element,
    # and the tokens read back the same
    evil = ["</script><b>x</b>", "<!--", "a&b", "l\u2028p\u2029", "\"'"]
    inp = os.path.join(tmp, "evil.json")
    with open(inp, "w", encoding="utf-8") as f:
        json.dump({"queries": [[1, 0], [0, 1], [1, 1], [0, 0], [2, 1]], "num_heads": 1,
                   "query_tokens": evil, "key_tokens": evil}, f, ensure_ascii=False)
    epage = os.path.join(tmp, "evil.html")
    expect(["multihead", "--input", inp, "--hiddens", "2", "--heads", "1", "--html", epage], 0)
    html, raw, data = page_data(epage)
    check(not re.search("[<>&\u2028\u2029]", raw), "html: no <, >, &, U+2028, U+2029 in the data")
    check("\\u003c/script\\u003e" in raw and "\\u0026" in raw and "\\u2028" in raw and "\\u2029" in raw,
          "html: they are written as \\u escapes")
    check(data["page"]["rows"][0]["query_tokens"] == evil, "html: the tokens read back the same")
    check(html.count("</script>") == 2 + ('id="attn-module"' in html), "html: no token closes a script element")

    # selfattn --tokens: a row of tokens per sentence, their lengths
    spage = os.path.join(tmp, "apple.html")
    expect(["selfattn", "--tokens", "苹果 很 好吃|苹果 发布 了 新的 产品", "--hiddens", "16", "--heads",
            "2", "--html", spage], 0)
    _, _, data = page_data(spage)
    rows = data["page"]["rows"]
    check(rows[0]["query_tokens"] == ["苹果", "很", "好吃", "<pad>", "<pad>"] and
          rows[1]["key_tokens"] == ["苹果", "发布", "了", "新的", "产品"] and
          [r["valid_lens"] for r in rows] == [3, 5], "html: selfattn --tokens rows: %r" % rows)
    # with --json - the report goes to stderr
    rc, out, err = run(["selfattn", "--json", "-", "--html", spage])
    check(rc == 0 and json.loads(out)["command"] == "selfattn" and
          err.startswith("wrote %s: a page" % spage), "html: with --json -, the report is on stderr")


def group_html_posenc(tmp):
    P = "attn posenc: "
    page = os.path.join(tmp, "pe.html")
    missing = os.path.join(tmp, "no", "pe.html")
    expect(["posenc", "--html", missing], 1,
           err=P + "--html %s: cannot create: No such file or directory" % missing)
    expect(["posenc", "--rope", "--html", page], 2,
           err=P + "--html is for the encoding P and cannot be used with --rope")
    # more than a page holds: refused before P is made
    expect(["posenc", "--steps", "100000", "--dim", "512", "--html", page], 1,
           err=P + "--html: P of --steps 100000 × --dim 512 is more numbers than a page holds "
                   "(4194304); --png draws it")
    check(not os.path.exists(page), "html posenc: no page for a refused run")
    # the page: --json's members, P whole, the columns and the check
    jpath = os.path.join(tmp, "pe.json")
    rc, out, err = expect(["posenc", "--dim", "32", "--steps", "60", "--html", page, "--json", jpath,
                           "--cols", "1,3"], 0, err="")
    check(out == "wrote %s: P as JSON, 60 × 32\nwrote %s: a page of P, 60 × 32, %d KB\n"
          % (jpath, page, round(os.path.getsize(page) / 1024)), "html posenc: report %r" % out)
    _, _, data = page_data(page)
    with open(jpath) as f:
        ref = json.load(f)
    check(sorted(k for k in data if k != "page") == sorted(ref), "html posenc: --json's keys")
    check(floats(data["P"]) == [f32(x) for x in floats(ref["P"])], "html posenc: P is --json's")
    check(data["page"]["cols"] == [1, 3], "html posenc: the plot's columns from --cols")
    chk = data["page"]["check_relative"]
    check([c["delta"] for c in chk] == list(range(1, 11)) and chk[0]["positions"] == 59 and
          chk[0]["pairs"] == 16 and 0 < chk[0]["max_difference"] < 1e-6,
          "html posenc: the relative check for δ = 1 … 10: %r" % chk[:2])
    # --check-relative chooses the table's offsets
    expect(["posenc", "--html", page, "--check-relative", "-3:-1"], 0)
    _, _, data = page_data(page)
    check([c["delta"] for c in data["page"]["check_relative"]] == [-3, -2, -1],
          "html posenc: --check-relative's offsets in the table")


def group_html_complexity(tmp):
    C = "attn complexity: "
    missing = os.path.join(tmp, "no", "c.html")
    # refused before measuring
    expect(["complexity", "--measure", "--sweep", "64:4096", "--html", missing], 1,
           err=C + "--html %s: cannot create: No such file or directory" % missing)
    page, jpath = os.path.join(tmp, "c.html"), os.path.join(tmp, "c.json")
    rc, out, err = expect(["complexity", "--n", "5", "--k", "3", "--json", jpath, "--html", page], 0,
                          err="")
    check(out.endswith("wrote %s: a page of the table and the costs, %d KB\n"
                       % (page, round(os.path.getsize(page) / 1024))), "html complexity: report")
    _, _, data = page_data(page)
    with open(jpath) as f:
        ref = json.load(f)
    page_kind = data.pop("page")["kind"]
    check(data == ref and page_kind == "complexity", "html complexity: the data is --json's object")


def group_html_train(tmp):
    T = "attn train: "
    missing = os.path.join(tmp, "no", "t.html")
    # refused before training (100000 steps would take minutes)
    expect(["train", "--steps", "100000", "--html", missing], 1,
           err=T + "--html %s: cannot create: No such file or directory" % missing)
    expect(["train", "--compare-posenc", "--steps", "100000", "--html", missing], 1,
           err=T + "--html %s: cannot create: No such file or directory" % missing)
    page, jpath = os.path.join(tmp, "t.html"), os.path.join(tmp, "t.json")
    # d 8 (the default 4 heads): the page's code at a sixteenth of d 32's
    # arithmetic (under valgrind minutes; cli_train runs the default size)
    narrow = ["--hiddens", "8"]
    rc, out, err = expect(["train", "--steps", "30", "--log-every", "10", "--json", jpath,
                           "--html", page] + narrow, 0)
    check(out.endswith("wrote %s: the history and the final figures\n"
                       "wrote %s: a page of the attention at 5 steps, %d KB\n"
                       % (jpath, page, round(os.path.getsize(page) / 1024))),
          "html train: report %r" % out[-200:])
    _, _, data = page_data(page)
    with open(jpath) as f:
        ref = json.load(f)
    pg = data.pop("page")
    check(data == ref, "html train: the data is --json's object and page")
    run0 = pg["runs"][0]
    check(run0["steps"] == [0, 1, 10, 20, 30] and run0["layers"] == 1 and run0["heads"] == 4 and
          run0["attention"]["shape"] == [5, 1, 1, 4, 8, 8] and run0["label"] is None,
          "html train: a run's steps and attention: %r" % {k: v for k, v in run0.items() if k != "attention"})
    # each head's rows are softmax rows: they sum to 1
    A = floats(run0["attention"])
    sums = [sum(A[i:i + 8]) for i in range(0, len(A), 8)]
    check(all(abs(x - 1) < 1e-5 for x in sums), "html train: every row of weights sums to 1")
    # the same command, the same bytes (one thread or many)
    with open(page, "rb") as f:
        first = f.read()
    expect(["train", "--steps", "30", "--log-every", "10", "--json", jpath, "--html", page,
            "--threads", "1"] + narrow, 0)
    # --threads is in the command line the page shows; the rest is the same
    with open(page, "rb") as f:
        second = f.read()
    strip = lambda b: re.sub(rb'"command": "attn train[^"]*"', b"", b)
    check(strip(first) == strip(second), "html train: the same page with --threads 1")
    # --compare-posenc: both runs
    rc, out, err = expect(["train", "--compare-posenc", "--steps", "20", "--log-every", "10",
                           "--html", page] + narrow, 0)
    check(out.endswith("wrote %s: a page of the attention at 4 steps, with P and without P, %d KB\n"
                       % (page, round(os.path.getsize(page) / 1024))), "html train: compare report")
    _, _, data = page_data(page)
    check(data["compare_posenc"] is True and [r["posenc"] if "posenc" in r else r["task"]
                                               for r in data["runs"]] == ["reverse", "reverse"] and
          [r["label"] for r in data["page"]["runs"]] == ["with P", "without P"],
          "html train: compare has both runs")
    # --compare-posenc --pos-embedding learned: three runs on one slider
    rc, out, err = expect(["train", "--compare-posenc", "--pos-embedding", "learned", "--steps",
                           "20", "--log-every", "10", "--html", page] + narrow, 0)
    check(out.endswith("wrote %s: a page of the attention at 4 steps, sinusoid P, learned P and "
                       "no P, %d KB\n" % (page, round(os.path.getsize(page) / 1024))),
          "html train: the three-way report")
    _, _, data = page_data(page)
    check(data["compare_posenc"] is True and len(data["runs"]) == 3 and
          [r["label"] for r in data["page"]["runs"]] == ["sinusoid P", "learned P", "no P"],
          "html train: compare with learned has the three runs")
    # apple: the two sentences, 苹果's position
    expect(["train", "--task", "apple", "--steps", "10", "--html", page], 0)
    _, _, data = page_data(page)
    probes = data["page"]["runs"][0]["probes"]
    check([(p["name"], p["tokens"][p["at"]]) for p in probes] == [("fruit", "苹果"), ("company", "苹果")],
          "html train: apple's probes: %r" % probes)
    # a stack: the probe's attention of every layer at each kept step;
    # --compare-layers: both runs on one slider. A small stack (the same
    # code as the default's 2 × 4 heads, d 32: a thousandth of its
    # arithmetic, which under valgrind takes minutes)
    small = ["--length", "8", "--vocab", "24", "--hiddens", "8", "--heads", "2", "--ffn", "8"]
    expect(["train", "--task", "induction"] + small + ["--steps", "20", "--log-every", "10",
            "--save", os.path.join(tmp, "stack.json"), "--html", page], 0)
    _, _, data = page_data(page)
    run0 = data["page"]["runs"][0]
    check(run0["layers"] == 2 and run0["heads"] == 2 and run0["causal"] is True and
          run0["attention"]["shape"] == [4, 1, 2, 2, 8, 8],
          "html train: a stack's layers: %r" % {k: v for k, v in run0.items() if k != "attention"})
    A = floats(run0["attention"])
    # causal: no weight on a later key; every row sums to 1
    later = [A[((s * 2 + l) * 2 + h) * 64 + q * 8 + k] for s in range(4) for l in range(2)
             for h in range(2) for q in range(8) for k in range(q + 1, 8)]
    sums = [sum(A[i:i + 8]) for i in range(0, len(A), 8)]
    check(max(later) == 0 and all(abs(x - 1) < 1e-5 for x in sums),
          "html train: a stack's rows are causal softmax rows")
    rc, out, err = expect(["train", "--task", "induction", "--compare-layers"] + small +
                          ["--steps", "20", "--log-every", "10", "--html", page], 0)
    check(out.endswith("wrote %s: a page of the attention at 4 steps, 1 layer and 2 layers, %d KB\n"
                       % (page, round(os.path.getsize(page) / 1024))), "html train: compare-layers report %r" % out[-120:])
    _, _, data = page_data(page)
    check(data["compare_layers"] is True and len(data["runs"]) == 2 and
          [(r["label"], r["layers"]) for r in data["page"]["runs"]] == [("1 layer", 1), ("2 layers", 2)],
          "html train: compare-layers has both runs")
    # selfattn --input of the stack: rows = layers, the weights --json gives
    jpath2 = os.path.join(tmp, "stack-sa.json")
    toks = "x a b c d a b c d"
    expect(["selfattn", "--input", os.path.join(tmp, "stack.json"), "--tokens", toks,
            "--json", jpath2], 0)
    rc, out, err = expect(["selfattn", "--input", os.path.join(tmp, "stack.json"), "--tokens", toks,
                           "--html", page], 0)
    check(out.endswith("wrote %s: a page of every block's attention, 2 blocks × 2 heads, %d KB\n"
                       % (page, round(os.path.getsize(page) / 1024))), "html selfattn stack: report %r" % out[-120:])
    _, _, data = page_data(page)
    with open(jpath2) as f:
        ref = json.load(f)
    pg = data.pop("page")
    tensors = ("output", "attention_weights")  # base64 float32 on the page
    check(sorted(data) == sorted(ref) and all(data[k] == ref[k] for k in ref if k not in tensors) and
          all(floats(data[k]) == [f32(x) for x in floats(ref[k])] for k in tensors) and
          data["attention_weights"]["shape"] == [2, 1, 2, 9, 9],
          "html selfattn stack: the data is --json's object and page")
    check([r["name"] for r in pg["rows"]] == ["layer 1", "layer 2"] and pg["causal"] is True and
          pg["rows"][1]["query_tokens"] == toks.split(),
          "html selfattn stack: a row per layer: %r" % pg["rows"])
    # 70 tokens: 2 × 2 × 70 × 70 weights, more than a page keeps of a tensor
    # it does not draw (4096): the page draws these, so it keeps them whole
    long_toks = " ".join("abcdefgh"[i % 8] for i in range(70))
    expect(["selfattn", "--input", os.path.join(tmp, "stack.json"), "--tokens", long_toks,
            "--json", jpath2, "--html", page], 0)
    _, _, data = page_data(page)
    with open(jpath2) as f:
        ref = json.load(f)
    w = data["attention_weights"]
    check("omitted" not in w and w["shape"] == [2, 1, 2, 70, 70] and
          floats(w) == [f32(x) for x in floats(ref["attention_weights"])],
          "html selfattn stack of 70 tokens: the page keeps every weight: %r"
          % {k: v for k, v in w.items() if k != "base64"})


def group_html_tour(tmp):
    U = "attn tour: "
    # DIR/index.html cannot be written: refused before the first step
    out = os.path.join(tmp, "t")
    os.makedirs(os.path.join(out, "index.html"))
    rc, stdout, err = expect(["tour", "--out", out, "--html"], 1,
                             err=U + "--html %s/index.html: cannot write: Is a directory" % out)
    check("Step 1" not in stdout, "html tour: nothing run before the refusal")
    expect(["tour", "--list", "--html"], 2, err=U + "--list runs nothing; --html has no effect with it")
    # one step: its page holds the step, its commands, their output and views
    out2 = os.path.join(tmp, "u")
    rc, stdout, err = expect(["tour", "--out", out2, "--step", "selfattn", "--html"], 0, err="")
    index = os.path.join(out2, "index.html")
    check(stdout.endswith("wrote %s: every step with its output and views, %d KB\n"
                          % (index, round(os.path.getsize(index) / 1024))),
          "html tour: the report line %r" % stdout[-160:])
    _, _, data = page_data(index)
    steps = data["steps"]
    check(len(steps) == 1 and steps[0]["number"] == 7 and steps[0]["name"] == "selfattn",
          "html tour: the one step asked for")
    run0 = steps[0]["runs"][0]
    check(run0["command"] == "attn selfattn --png %s/07-selfattn-weights.png" % out2,
          "html tour: the command line shown: %r" % run0["command"])
    check(run0["output"] and run0["output"] in stdout and "\x1b" not in run0["output"],
          "html tour: the output as printed, without colour")
    check(run0["view"]["command"] == "selfattn" and run0["view"]["page"]["kind"] == "attention",
          "html tour: the run's view is selfattn's page data")
    check(not [n for n in os.listdir(out2) if n.startswith("index.html.")],
          "html tour: no temporary file left")
    # with colour forced, the page's copy of the output has none
    rc, stdout, err = expect(["tour", "--out", out2, "--step", "selfattn", "--html", "--color",
                              "always"], 0)
    _, _, data = page_data(index)
    kept = data["steps"][0]["runs"][0]["output"]
    check("\x1b[" in stdout and "\x1b" not in kept, "html tour: colour on the terminal, none in the page")
    check(kept in re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", stdout),
          "html tour: the page's output is the terminal's without its colour sequences")
    expect(["tour", "--out", out2, "--step", "binary", "--html"], 0)
    _, _, data = page_data(index)
    check(data["steps"][0]["runs"][0]["view"] is None and
          data["steps"][0]["runs"][0]["output"].startswith("0 in binary is 000\n") and
          "picture" not in data["steps"][0]["runs"][0],
          "html tour: --binary's output and no view")
    # cross-attention: the translation's page data is the run's view, no picture
    if slow_build("html tour step cross (a translation model, 150 steps)"):
        return
    expect(["tour", "--out", out2, "--step", "cross", "--html"], 0, err=None)
    _, _, data = page_data(index)
    run0 = data["steps"][0]["runs"][0]
    view = run0["view"] or {}
    check(data["steps"][0]["number"] == 17 and view.get("command") == "train" and
          view.get("task") == "translate" and view["page"]["kind"] == "translate" and
          "picture" not in run0 and os.path.exists(os.path.join(out2, "17-train-translate.png")),
          "html tour: the cross step (17) shows the translation's view, its figure in the folder")
