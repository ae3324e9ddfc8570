"""Terminal fixes of issue 40: unspaced Chinese or Japanese --tokens split
into characters, pool's error over the test inputs it could predict says
how many it could not, and help lines padded by display width."""
import json
import unicodedata

from .common import check, expect, run

S = "attn selfattn: "


def columns(text):
    """Display columns of text: East Asian wide and fullwidth 2, else 1."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def tokens_of(spec):
    rc, out, err = run(["selfattn", "--tokens", spec, "--hiddens", "8", "--heads", "2",
                        "--json", "-"])
    check(rc == 0 and err == "", "--tokens %r: exit %d, %r" % (spec, rc, err))
    return json.loads(out) if rc == 0 else None


def cjk_tokens():
    # a sentence with no space, all Han: one token a character
    doc = tokens_of("我爱北京天安门")
    check(doc and doc["tokens"] == [list("我爱北京天安门")] and doc["valid_lens"] is None,
          "我爱北京天安门: 7 tokens, %r" % (doc and doc["tokens"]))
    # the same numbers as the spaced text: the split is only a tokenizer
    spaced = tokens_of("我 爱 北 京 天 安 门")
    if doc and spaced:
        for key in ("tokens", "X", "output", "attention_weights"):
            check(doc[key] == spaced[key], "unspaced and spaced: the same %s" % key)
    # each sentence of a batch on its own; spaces around | do not count
    doc = tokens_of(" 我爱北京 | 天安门 ")
    check(doc and doc["tokens"] == [list("我爱北京"), list("天安门") + ["<pad>"]]
          and doc["valid_lens"] == [4, 3], "two unspaced sentences: 4 and 3 tokens")
    # kana and CJK punctuation are characters too
    doc = tokens_of("こんにちは。")
    check(doc and doc["tokens"] == [list("こんにちは。")], "kana: 6 tokens")
    # spaced text, mixed scripts, Korean and one character: as before
    for spec, want in (("苹果 很 好吃", [["苹果", "很", "好吃"]]), ("我爱NLP", [["我爱NLP"]]),
                       ("안녕하세요", [["안녕하세요"]]), ("好", [["好"]]),
                       ("我爱北京 | a b", [list("我爱北京"), ["a", "b", "<pad>", "<pad>"]])):
        doc = tokens_of(spec)
        check(doc and doc["tokens"] == want, "%r: %r, want %r"
              % (spec, doc and doc["tokens"], want))
    # the split counts in the size checks
    expect(["selfattn", "--tokens", "我爱北京", "--queries", "3"], 2,
           err=S + "--queries 3 disagrees with --tokens, whose longest sentence has 4 tokens")
    expect(["selfattn", "--tokens", "我爱北京|天安门", "--batch", "1"], 2,
           err=S + "--batch 1 disagrees with --tokens, which has 2 sentences")
    expect(["selfattn", "--tokens", "我爱北京 |  "], 2,
           err=S + "--tokens: sentence 2 has no tokens")
    # U+FFFD (what a malformed byte stands for) is not CJK: one token
    doc = tokens_of("我爱\ufffd北京")
    check(doc and doc["tokens"] == [["我爱\ufffd北京"]], "U+FFFD among Han: one token")
    # the help says it
    rc, out, _ = run(["selfattn", "--help"])
    check("is its characters (我爱北京: 4 tokens)" in out, "selfattn --help: unspaced CJK")


def pool_unreached():
    args = ["pool", "--method", "nonparametric", "--kernel", "boxcar", "--sigma", "0.02"]
    rc, out, _ = expect(args, 0, err="", out_has=[
        "  MSE against the truth 0.299651 over 11 of 50 test inputs; 39 have no training "
        "point within σ (every weight 0: no prediction, null in JSON)\n",
        "  mean largest weight 0.939394 (over the same test inputs)\n"])
    rc, out, _ = expect(args + ["--json", "-"], 0, err="")
    doc = json.loads(out)
    r = doc["results"][0]
    # the MSE by hand over the predicted inputs, the count of the others
    errs = [(y - t) ** 2 for y, t in zip(r["y_hat"], doc["y_truth"]) if y is not None]
    nulls = sum(y is None for y in r["y_hat"])
    check(r["unreached"] == 39 == nulls and len(errs) == 11, "unreached 39: %r" % r["unreached"])
    check(abs(sum(errs) / len(errs) - r["mse"]) < 1e-8, "mse over the 11: %r" % r["mse"])
    # the rows without a prediction are the ones whose weights are all 0
    check(all((y is None) == (max(w) == 0) for y, w in zip(r["y_hat"], r["attention_weights"])),
          "unreached rows: weights all 0")
    # Epanechikov too; the Gaussian and the constant reach everything: no key
    doc = json.loads(expect(["pool", "--method", "nonparametric", "--kernel",
                             "gaussian,constant,epanechikov", "--sigma", "0.02", "--json", "-"],
                            0)[1])
    keys = ["unreached" in r for r in doc["results"]]
    check(keys == [False, False, True], "unreached only for kernels 0 beyond σ: %r" % keys)
    e = doc["results"][2]
    check(e["unreached"] == sum(y is None for y in e["y_hat"]) > 0, "epanechikov: unreached")
    # every input reached: the line is as before, unreached 0
    rc, out, _ = expect(["pool", "--method", "nonparametric", "--kernel", "boxcar", "--sigma",
                         "1", "--json", "-"], 0)
    check(json.loads(out)["results"][0]["unreached"] == 0, "σ 1: unreached 0")
    expect(["pool", "--method", "nonparametric", "--kernel", "boxcar", "--sigma", "1"], 0,
           out_has=["  MSE against the truth 0."], out_not=["test inputs;", "within σ"])
    # no input reached: said, no number
    expect(["pool", "--method", "nonparametric", "--kernel", "boxcar", "--sigma", "0.0001"], 0,
           out_has=["  MSE against the truth: none, no test input has a training point within "
                    "σ (every weight 0: no prediction, null in JSON)\n",
                    "  mean largest weight: none\n"])
    # bad widths still refused
    expect(["pool", "--kernel", "boxcar", "--sigma", "0"], 2)


def help_columns():
    """Every option line's help starts at display column 27, whatever its
    argument's characters (--titles A,B,…: … is 3 bytes, 1 column)."""
    rc, out, _ = run(["--help"])
    block = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    cmds = [l.split()[0] for l in block.splitlines()]
    check(len(cmds) >= 11, "commands: %r" % cmds)
    seen_wide = False
    for cmd in cmds:
        rc, out, _ = run([cmd, "--help"])
        check(rc == 0, "%s --help: exit %d" % (cmd, rc))
        options = out.split("Options:\n", 1)[1].split("\n\n", 1)[0]
        for line in options.splitlines():
            if not (line.startswith("  -") or line.startswith("      --")):
                continue
            at = line.find("  ", line.find("--") + 2)
            if at < 0:
                continue  # the help begins on the next line
            while at < len(line) and line[at] == " ":
                at += 1
            col = columns(line[:at])
            seen_wide |= columns(line[:at]) != len(line[:at].encode("utf-8"))
            check(col == 27, "%s --help: %r: help at column %d" % (cmd, line, col))
    check(seen_wide, "some option argument has a multi-byte character")
    rc, out, _ = run(["heatmap", "--help"])
    check("      --titles A,B,…       one title a column of panels" in out,
          "heatmap --help: --titles aligned")


def group_fixes(tmp):
    cjk_tokens()
    pool_unreached()
    help_columns()
