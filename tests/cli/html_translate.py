"""--html of a translation (SPEC.md §10, §11): `attn train --task
translate --html`, `attn train --data PAIRS --html` and `attn translate
--html` — refused up front,
the data element --json's object plus "page" (the probe's cross-, encoder
and decoder self-attention at every logged step, its translations, the
held-out table), softmax rows, causal decoder rows, the same bytes for the
same command and for --threads 1 and 2, and tokens that could run as HTML
kept as text; attn translate's page: its --json object and the same
view. What the pages do in a browser is tests/browser/run.js's group
translate."""
import json
import os
import re

from .common import check, expect, slow_build
from .html import f32, floats, page_data

T = "attn train: "


def shape(t):
    return t["shape"] if isinstance(t, dict) else None


def rows_of(A, n):
    return [A[i:i + n] for i in range(0, len(A), n)]


def check_softmax(name, A, n):
    """Every row of n weights sums to 1."""
    sums = [sum(r) for r in rows_of(A, n)]
    check(sums and all(abs(x - 1) < 1e-5 for x in sums), "html translate: %s rows sum to 1" % name)


def check_task_page(tmp, model):
    page, jpath = os.path.join(tmp, "t.html"), os.path.join(tmp, "t.json")
    args = ["train", "--task", "translate", "--steps", "40", "--log-every", "20"]
    rc, out, err = expect(args + ["--json", jpath, "--html", page, "--save", model], 0)
    check(out.endswith("wrote %s: the history and the final figures\n"
                       "wrote %s: a page of the probe's attention at 4 steps, %d KB\n"
                       % (jpath, page, round(os.path.getsize(page) / 1024))),
          "html translate: the report lines %r" % out[-200:])
    html, raw, data = page_data(page)
    with open(jpath) as f:
        ref = json.load(f)
    pg = data.pop("page")
    check(data == ref, "html translate: the data is --json's object and page")
    check(pg["kind"] == "translate" and pg["rows"] == "reference" and
          pg["model"] == {"arch": "transformer", "layers": 2, "heads": 4, "hiddens": 32, "ffn": 64},
          "html translate: kind, rows, model: %r" % {k: pg[k] for k in ("kind", "rows", "model")})
    src, tgt = pg["source"], pg["target"]
    Ts, Tq, S = len(src), len(tgt), 4
    check(src[-1] == "<eos>" and tgt[-1] == "<eos>" and
          pg["decoder_input"] == ["<bos>"] + tgt[:-1] and
          pg["sentence"]["source"] == " ".join(src[:-1]) and
          pg["sentence"]["reference"] == " ".join(tgt[:-1]),
          "html translate: the probe's words %r" % pg["sentence"])
    check(pg["steps"] == [0, 1, 20, 40] and pg["stride"] == 1 and
          len(pg["step_translations"]) == S and pg["sentence"]["translation"] == pg["step_translations"][-1],
          "html translate: the steps kept and the probe's translations")
    check(shape(pg["cross"]) == [S, 2, 4, Tq, Ts] and shape(pg["encoder"]) == [S, 2, 4, Ts, Ts] and
          shape(pg["decoder"]) == [S, 2, 4, Tq, Tq],
          "html translate: the attentions' shapes %r" % [shape(pg[k]) for k in ("cross", "encoder", "decoder")])
    check_softmax("cross-attention", floats(pg["cross"]), Ts)
    check_softmax("encoder self-attention", floats(pg["encoder"]), Ts)
    D = floats(pg["decoder"])
    check_softmax("decoder self-attention", D, Tq)
    later = [x for i, r in enumerate(rows_of(D, Tq)) for k, x in enumerate(r) if k > i % Tq]
    check(later and max(later) == 0, "html translate: the decoder's rows are causal")
    check(len(pg["align"]) == Tq - 1 and all(-1 <= a < Ts for a in pg["align"]),
          "html translate: the grammar's alignment of the probe %r" % pg["align"])
    tr = pg["translations"]
    check(tr["count"] == 200 and len(tr["shown"]) == 100 and tr["exact"] == ref["final"]["exact"] and
          sorted(tr["shown"][0]) == ["bleu", "reference", "source", "translation"] and
          tr["shown"][0]["source"] == pg["sentence"]["source"],
          "html translate: the held-out table %r" % {k: v for k, v in tr.items() if k != "shown"})
    # the same command, the same bytes; --threads 1 and 2 alike
    with open(page, "rb") as f:
        first = f.read()
    expect(args + ["--json", jpath, "--html", page, "--save", model], 0)
    with open(page, "rb") as f:
        check(f.read() == first, "html translate: the same command gives the same bytes")
    strip = lambda b: re.sub(rb'"command": "attn train[^"]*"', b"", b)
    pages = []
    for threads in ("1", "2"):
        expect(args + ["--html", page, "--threads", threads], 0)
        with open(page, "rb") as f:
            pages.append(strip(f.read()))
    check(pages[0] == pages[1] == strip(first), "html translate: --threads 1 and 2 give the same page")


def check_data_page(tmp):
    """--data of JSON pairs whose tokens would be markup: text, escaped."""
    evil = ["</script><b>x</b>", "a\u2028b\u2029c", "&amp;", "<!--"]
    pairs = [["the %s cat ." % evil[i % 4], "le %s chat ." % evil[(i + 1) % 4]] for i in range(8)]
    held = [["the %s cat ." % evil[0], "le %s chat ." % evil[1]]]
    inp = os.path.join(tmp, "evil-pairs.json")
    with open(inp, "w", encoding="utf-8") as f:
        json.dump({"pairs": pairs, "heldout": {"pairs": held}}, f, ensure_ascii=False)
    page = os.path.join(tmp, "e.html")
    expect(["train", "--data", inp, "--min-freq", "1", "--steps", "6", "--log-every", "3",
            "--html", page], 0)
    html, raw, data = page_data(page)
    pg = data["page"]
    check(not re.search("[<>&\u2028\u2029]", raw), "html translate: no <, >, &, U+2028, U+2029 in the data")
    check("\\u003c/script\\u003e" in raw and "\\u2028" in raw and "\\u0026amp;" in raw,
          "html translate: they are written as \\u escapes")
    check(html.count("</script>") == 2 + ('id="attn-module"' in html),
          "html translate: no token closes a script element")
    check(pg["source"] == ["the", evil[0], "cat", ".", "<eos>"] and
          pg["target"] == ["le", evil[1], "chat", ".", "<eos>"] and
          pg["sentence"]["source"] == "the %s cat ." % evil[0],
          "html translate: the tokens read back the same: %r" % pg["source"])
    check(pg["align"] is None and pg["steps"] == [0, 1, 3, 6] and
          pg["translations"]["shown"][0]["reference"] == "le %s chat ." % evil[1],
          "html translate: --data has no alignment; its held-out table")


def check_command_page(tmp, model):
    """attn translate --html: --json's object plus the view, one state."""
    X = "attn translate: "
    page, jpath = os.path.join(tmp, "x.html"), os.path.join(tmp, "x.json")
    sent, ref = "the small green apple wants the big blue boy .", "la petite pomme verte veut le grand garçon bleu ."
    args = ["translate", "--input", model, "--reference", ref, "--all", sent]
    rc, out, err = expect(args + ["--json", jpath, "--html", page], 0)
    check(out.endswith("wrote %s: a page of the translation's attention, 2 blocks × 4 heads, %d KB\n"
                       % (page, round(os.path.getsize(page) / 1024))), "html translate: attn translate's report %r"
          % out[-160:])
    _, raw, data = page_data(page)
    with open(jpath) as f:
        want = json.load(f)
    pg = data.pop("page")
    tensors = ("cross_attention", "encoder_attention", "decoder_attention")
    check(sorted(data) == sorted(want) and all(data[k] == want[k] for k in want if k not in tensors) and
          all(floats(data[k]) == [f32(x) for x in floats(want[k])] for k in tensors),
          "html translate: attn translate's data is --json's object and page")
    R, S = len(want["target"]), len(want["source"])
    check(pg["kind"] == "translate" and pg["rows"] == "translation" and pg["steps"] is None and
          pg["source"] == want["source"] and pg["target"] == want["target"] and
          pg["decoder_input"] == want["decoder_input"],
          "html translate: attn translate's rows and columns")
    check(pg["sentence"] == {"source": sent, "reference": ref, "translation": " ".join(want["translation"]),
                             "bleu": want["bleu"]}, "html translate: the sentence %r" % pg["sentence"])
    check(shape(pg["cross"]) == [1, 2, 4, R, S] and floats(pg["cross"]) == floats(data["cross_attention"]) and
          shape(pg["encoder"]) == [1, 2, 4, S, S] and floats(pg["encoder"]) == floats(data["encoder_attention"]) and
          shape(pg["decoder"]) == [1, 2, 4, R, R] and floats(pg["decoder"]) == floats(data["decoder_attention"]),
          "html translate: the page's attention is --json's")
    with open(page, "rb") as f:
        first = f.read()
    expect(args + ["--json", jpath, "--html", page], 0)
    with open(page, "rb") as f:
        check(f.read() == first, "html translate: attn translate, the same bytes")
    # without --all: the cross-attention only; a typed word that is markup
    rc, out, err = expect(["translate", "--input", model, "--html", page, "the </script><b> cat ."], 0)
    _, raw, data = page_data(page)
    pg = data["page"]
    check(pg["encoder"] is None and pg["decoder"] is None and "<unk>" in pg["source"] and
          pg["sentence"]["source"] == "the </script><b> cat ." and not re.search("[<>&]", raw),
          "html translate: without --all, and a typed word escaped: %r" % pg["sentence"])
    missing = os.path.join(tmp, "no", "x.html")
    expect(["translate", "--input", model, "--html", missing, sent], 1,
           err=X + "--html %s: cannot create: No such file or directory" % missing)


def group_html_translate(tmp):
    missing = os.path.join(tmp, "no", "t.html")
    # refused before training (100000 steps would take minutes)
    expect(["train", "--task", "translate", "--steps", "100000", "--html", missing], 1,
           err=T + "--html %s: cannot create: No such file or directory" % missing)
    expect(["train", "--task", "translate", "--steps", "100000", "--html", "-"], 2,
           err=T + "--html: a page is written to a file, not to standard output (-)")
    check(not os.path.exists(os.path.dirname(missing)), "html translate: nothing made")
    if slow_build("the translation pages"):
        return
    model = os.path.join(tmp, "model.json")
    check_task_page(tmp, model)
    check_data_page(tmp)
    check_command_page(tmp, model)
