"""Group translate: attn translate (SPEC §11) from the command line. The
usage and data errors with their exact lines and exit codes, outputs
refused before any work and left untouched by a failed run; then, on a
model trained once here (attn train --task translate --steps 300, about 5
s), the grammar's French for sentences of the grammar (src/nn/
seq2seq_task.h), the <unk> note, BLEU against --reference (1 for the
right translation, and a wrong reference worked out by hand), --json's
keys and shapes (every cross-attention row sums to 1 over the source
words), --all's two self-attentions, the --png figure, colour, stdin, a
sentence cut at num_steps, and a model of JSON pairs that keeps the case
of "Tom".

Under valgrind and in an unoptimized build (the sanitizers') the 300
steps would take minutes: the model is then trained for no step (its
translations are random), and only what does not depend on a good
translation is checked."""
import json
import math
import os

from .common import check, expect, png_info, run, slow_build, write

T = "attn translate: "

# Sentences of the grammar and their French (seq2seq_task.h's tables).
GRAMMAR = [
    ("the big red dog sees a cat .", "le grand chien rouge voit un chat ."),
    ("a small green apple wants the big blue car .",
     "une petite pomme verte veut la grande voiture bleue ."),
    ("the pretty white girl follows a black horse .",
     "la jolie fille blanche suit un cheval noir ."),
    ("an apple finds the small house .", "une pomme trouve la petite maison ."),
]
DOG = GRAMMAR[0][0]


def translate(model, *args, env=None, stdin=None):
    """attn translate --input model ARGS…, expected to succeed: (stdout, stderr)."""
    rc, out, err = run(["translate", "--input", model] + list(args), env=env, stdin=stdin)
    check(rc == 0, "attn translate -i %s %s: exit %d (%r)" % (model, " ".join(args), rc, err))
    return out, err


def translate_json(model, *args):
    """The --json - document of attn translate --input model ARGS…"""
    out, _ = translate(model, "--json", "-", *args)
    try:
        return json.loads(out)
    except ValueError:
        check(False, "attn translate --json -: not JSON: %r" % out[:200])
        return {}


def shape(a):
    s = []
    while isinstance(a, list):
        s.append(len(a))
        a = a[0] if a else None
    return s


def rows_sum_to_one(att, what):
    """Every row of a (blocks, heads, rows, cols) array sums to 1."""
    worst = max(abs(sum(row) - 1.0) for block in att for head in block for row in head)
    check(worst < 1e-5, "%s: a row sums to 1 ± %g" % (what, worst))


def group_translate(tmp):
    expect(["translate", "--help"], 0, err="",
           out_has=["usage: attn translate --input MODEL", "--reference", "--all", "Examples:"])
    rc, out, _ = expect(["translate", "--list-options"], 0, err="")
    check("--input -i FILE file" in out and "--all - - flag" in out
          and "--reference -r TEXT text" in out, "translate --list-options: %r" % out)
    models = make_models(tmp)
    usage_errors(tmp, models["data"])
    data_errors(tmp, models["data"])
    structure(tmp, models["data"])
    pairs_model(models["data"])
    if models["grammar"]:
        grammar(tmp, models["grammar"])


def make_models(tmp):
    """{"data": a model of a few JSON pairs (no training: quick anywhere),
    "grammar": the built-in task's, trained (None in a slow build)}."""
    pairs = write(tmp, "pairs.json", json.dumps({"pairs": [
        ["the big red dog sees a cat .", "le grand chien rouge voit un chat ."],
        ["Tom sees the small apple .", "Tom voit la petite pomme ."]]}))
    data = os.path.join(tmp, "data-model.json")
    expect(["train", "--data", pairs, "--min-freq", "1", "--steps", "0", "--hiddens", "8",
            "--heads", "2", "--layers", "1", "--ffn", "8", "--save", data], 0)
    models = {"data": data, "grammar": None}
    if not slow_build("training the translate task for 300 steps"):
        models["grammar"] = os.path.join(tmp, "model.json")
        expect(["train", "--task", "translate", "--steps", "300", "--save", models["grammar"]],
               0)
    return models


def usage_errors(tmp, model):
    """Exit 2, one line."""
    for args, msg in [
            ([], "missing --input MODEL: a model saved by attn train --task translate --save"),
            (["the", "cat"],
             "missing --input MODEL: a model saved by attn train --task translate --save"),
            (["--input", model], 'missing the sentence: attn translate --input %s "SENTENCE"'
             % model),
            (["--input", model, ""], "the sentence is empty"),
            (["--input", model, "   "], "the sentence is empty"),
            (["--input", model, "--reference", "", DOG], "--reference is empty"),
            (["--input", model, "--reference", " ", DOG], "--reference is empty"),
            (["--input", model, "--color", "sometimes", DOG],
             "--color: expected auto, always or never, got 'sometimes'"),
            (["--input", model, "--cmap", "jet", DOG],
             "--cmap: unknown colormap 'jet' (known: Reds, Blues, viridis, gray)"),
            (["--input", model, "--html", "-", DOG],
             "--html: a page is written to a file, not to standard output (-)"),
            (["--input", model, "--all", "--all", DOG], "option '--all' given twice"),
            (["--input", model, "--frob", DOG],
             "unknown option '--frob' (see attn translate --help)")]:
        expect(["translate"] + args, 2, err=T + msg)
    rc, _, err = run(["translate", "--input", model, "the \udcff cat"])  # the byte 0xff
    check(rc == 2 and err == T + "the sentence: byte 5: not valid UTF-8\n",
          "a sentence that is not UTF-8: exit 2 (%d, %r)" % (rc, err))


def data_errors(tmp, model):
    """Exit 1, one line naming the file; nothing written, an old file kept."""
    missing = os.path.join(tmp, "no", "such")
    reverse = os.path.join(tmp, "reverse.json")
    expect(["train", "--task", "reverse", "--steps", "1", "--save", reverse], 0)
    notjson = write(tmp, "notjson.json", "{\"command\": \"train\",")
    other = write(tmp, "other.json", json.dumps({"command": "multihead"}))
    for args, msg in [
            (["--input", missing, DOG], "%s: cannot open: No such file or directory" % missing),
            (["--input", tmp, DOG], "%s: cannot read: Is a directory" % tmp),
            (["--input", reverse, DOG],
             '%s: $: a self-attention model of attn train (it has "vocab", no "task": '
             '"translate"), not a translation model; attn selfattn --input reads it' % reverse),
            (["--input", other, DOG], '%s: $.command: expected "train", got "multihead"' % other),
            (["--input", model, "--max-mem", "10K", DOG],
             "translating with %s (num_steps 10, 1 block, 2 heads) needs about 27.8 KiB, more "
             "than --max-mem 10 KiB" % model),
            (["--input", model, "--png", missing, DOG],
             "--png %s: cannot create: No such file or directory" % missing),
            (["--input", model, "--json", missing, DOG],
             "--json %s: cannot create: No such file or directory" % missing)]:
        expect(["translate"] + args, 1, err=T + msg)
    # num_steps 100000 (the model file's largest): refused up front, not decoded
    with open(model) as f:
        big = json.load(f)
    big["num_steps"] = 100000
    big = write(tmp, "big.json", json.dumps(big))
    expect(["translate", "--input", big, DOG], 1,
           err=T + "translating with %s (num_steps 100000, 1 block, 2 heads) needs about "
           "373 GiB, more than --max-mem 4 GiB" % big)
    expect(["train", "--load", big, "--data", os.path.join(tmp, "pairs.json"), "--steps", "0"],
           1, err="attn train: training on batches of 2 pairs of num_steps 100000 needs about "
           "1.75 TiB, more than --max-mem 4 GiB")
    rc, _, err = run(["translate", "--input", notjson, DOG])
    check(rc == 1 and err.startswith(T + notjson + ": ") and err.count("\n") == 1,
          "a file that is not JSON: exit 1, one line (%d, %r)" % (rc, err))
    # a failed run leaves an old file as it was and makes no new one
    old = write(tmp, "old.png", "old")
    expect(["translate", "--input", reverse, "--png", old, "--json",
            os.path.join(tmp, "new.json"), DOG], 1)
    with open(old) as f:
        check(f.read() == "old", "a failed run left --png's old file untouched")
    check(not os.path.exists(os.path.join(tmp, "new.json")), "a failed run made no --json")


def structure(tmp, model):
    """What holds whatever the translation: keys, shapes, sums, notes."""
    d = translate_json(model, "--all", DOG)
    check(list(d) == ["command", "model", "sentence", "source", "unknown", "translation",
                      "target", "reference", "bleu", "cross_attention", "decoder_input",
                      "encoder_attention", "decoder_attention"], "--json --all keys: %r" % list(d))
    check(d.get("model") == {"file": model, "arch": "transformer", "num_layers": 1,
                             "num_hiddens": 8, "num_heads": 2, "ffn_num_hiddens": 8,
                             "num_steps": 10, "src_vocab_size": 15, "tgt_vocab_size": 16},
          "--json model: %r" % d.get("model"))
    src, tgt, tr = d["source"], d["target"], d["translation"]
    check(src == DOG.split() + ["<eos>"], "source: the words read and <eos>: %r" % src)
    check(tgt[:len(tr)] == tr and len(tgt) - len(tr) in (0, 1)
          and (len(tgt) == len(tr) or tgt[-1] == "<eos>")
          and (len(tgt) == len(tr)) == (len(tr) == 10),
          "target: the translation, then <eos> unless it wrote num_steps words: %r / %r"
          % (tr, tgt))
    S, R = len(src), len(tgt)
    check(shape(d["cross_attention"]) == [1, 2, R, S], "cross_attention (1, 2, %d, %d): %r"
          % (R, S, shape(d["cross_attention"])))
    check(shape(d["encoder_attention"]) == [1, 2, S, S], "encoder_attention (1, 2, S, S)")
    check(shape(d["decoder_attention"]) == [1, 2, R, R], "decoder_attention (1, 2, R, R)")
    check(d["decoder_input"] == ["<bos>"] + tgt[:-1], "decoder_input: <bos> and the words")
    for key in ["cross_attention", "encoder_attention", "decoder_attention"]:
        rows_sum_to_one(d[key], key)
    causal = all(d["decoder_attention"][0][h][i][j] == 0 for h in range(2) for i in range(R)
                 for j in range(i + 1, R))
    check(causal, "decoder_attention: no weight after a row's own position")
    check(d["unknown"] == [] and d["reference"] is None and d["bleu"] is None,
          "no unknown word, no reference, bleu null")
    # the cross-attention of greedy decoding is the forward pass's on its output
    plain = translate_json(model, DOG)
    check(plain.get("cross_attention") == d["cross_attention"] and "encoder_attention" not in plain,
          "without --all: the same cross_attention and no self-attention")

    # words outside the vocabulary: <unk>, named once each on one line
    out, err = translate(model, "--json", "-", "the big red zebra sees a zebra .")
    check(err == T + 'note: "zebra" is not in the model\'s source vocabulary: read as <unk>\n',
          "one unknown word: the note (%r)" % err)
    d = json.loads(out)
    check(d["unknown"] == ["zebra"] and d["source"][3] == "<unk>" and d["source"][6] == "<unk>",
          "--json: unknown and the <unk> entries: %r %r" % (d["unknown"], d["source"]))
    _, err = translate(model, "the lion sees a zebra .")
    check(err == T + 'note: 2 words are not in the model\'s source vocabulary, read as <unk>: '
          '"lion", "zebra"\n', "two unknown words: one line (%r)" % err)
    # typed control characters are not sent to the terminal
    out, err = translate(model, "the \x1b[31m dog")
    check("\x1b" not in out + err and err == T + 'note: "?[31m" is not in the model\'s source '
          'vocabulary: read as <unk>\n' and "\nthe ?[31m dog => " in out,
          "an escape typed in the sentence is shown as '?' (%r)" % err)
    # longer than num_steps: cut, its <eos> dropped, and said
    long_sentence = "the big red dog sees a cat and the small cat sees it"
    out, err = translate(model, "--json", "-", long_sentence)
    check(err.endswith(T + "note: the sentence has 13 words, more than num_steps 10 holds with "
                       "its <eos>: cut to 10 entries, as d2l's truncate_pad does\n"),
          "a sentence cut: the note (%r)" % err)
    d = json.loads(out)
    check(d["source"] == ["the", "big", "red", "dog", "sees", "a", "cat", "<unk>", "the",
                          "small"], "cut: the first num_steps words, no <eos>: %r" % d["source"])
    # the printout: the model, d2l's line, a table per block and head
    out, _ = translate(model, DOG)
    check(out.startswith("model %s: Transformer encoder–decoder, 1 block a side, d 8, "
                         "2 heads, FFN 8, num_steps 10\n%s => " % (model, DOG)),
          "the printout's first lines: %r" % out[:200])
    check("block 1, head 2:\n" in out and "\n       the  big  red  dog sees    a  cat    . "
          "<eos>\n" in out and "\x1b[" not in out, "the tables, without colour: %r" % out)
    out, _ = translate(model, "--color", "always", DOG)
    check("\x1b[48;2;" in out and "\x1b[0m" in out, "--color always: coloured cells")
    out, _ = translate(model, "--color", "auto", DOG, env={"NO_COLOR": "1"})
    check("\x1b[" not in out, "NO_COLOR: no colour")
    out, _ = translate(model, DOG, env={"COLUMNS": "30"})
    check("columns: the big red dog sees a cat . <eos>\nrows: " in out and "[[" in out,
          "a table too wide for the terminal: the numbers, their labels named (%r)" % out[:300])
    # several operands are one sentence; --input - reads the model from stdin
    a, _ = translate(model, *DOG.split())
    b, _ = translate(model, DOG)
    check(a == b, "the words as separate operands: the same run")
    with open(model, "rb") as f:
        c, _ = translate("-", DOG, stdin=f.read())
    check(c == b.replace("model %s:" % model, "model -:"), "--input -: the model from stdin")


def pairs_model(model):
    """A model of JSON pairs reads its words in the case written."""
    _, err = translate(model, "Tom sees the red dog .")
    check(err == "", "Tom, known only as written, is read as written: %r" % err)
    _, err = translate(model, "TOM sees the red dog .")
    check(err == T + 'note: "tom" is not in the model\'s source vocabulary: read as <unk>\n',
          "TOM, known neither in lower case nor as typed: <unk> (%r)" % err)


def grammar(tmp, model):
    """A model that has learned the grammar translates as it does."""
    for en, fr in GRAMMAR:
        out, err = translate(model, en)
        check("\n%s => %s\n" % (en, fr) in out and err == "",
              "%s => %s (got %r)" % (en, fr, out.split("\n")[1]))
    out, _ = translate(model, "The big red dog sees a cat.")
    check("\n%s => %s\n" % GRAMMAR[0] in out, "read as d2l's data: lower case, '.' apart")
    d = translate_json(model, DOG)
    fr = GRAMMAR[0][1].split()
    check(d["translation"] == fr and d["target"] == fr + ["<eos>"]
          and shape(d["cross_attention"]) == [2, 4, 9, 9], "the dog's --json")
    rows_sum_to_one(d["cross_attention"], "the dog's cross_attention")
    # the last block looks where each word comes from: a head's largest
    # weight for "chien" on "dog" and for "rouge" on "red" (the crossing)
    top = d["cross_attention"][1]
    check(any(max(range(9), key=lambda j: h[2][j]) == 3 and max(range(9), key=lambda j: h[3][j])
              == 2 for h in top), "a head of block 2 reads dog for chien, red for rouge")

    # BLEU: 1 for the translation itself; by hand for a reference one word
    # longer: brevity exp(1 − 9/8), unigrams 8/8, bigrams 6/7 ("un chat"
    # is not in it): exp(−1/8) · 1^(1/2) · (6/7)^(1/4) = 0.8492
    out, _ = translate(model, "--reference", GRAMMAR[0][1], DOG)
    check("=> %s, bleu 1.000\n" % GRAMMAR[0][1] in out, "--reference itself: bleu 1.000")
    wrong = "le grand chien rouge voit un petit chat ."
    want = math.exp(1 - 9 / 8) * (8 / 8) ** 0.5 * (6 / 7) ** 0.25
    out, _ = translate(model, "--reference", wrong, DOG)
    check(", bleu %.3f\n" % want in out and "%.3f" % want == "0.849",
          "a wrong reference: bleu %.3f (%r)" % (want, out.split("\n")[1]))
    d = translate_json(model, "--reference", wrong, DOG)
    check(d["reference"] == wrong.split() and abs(d["bleu"] - want) < 1e-12,
          "--json: reference and bleu %r, want %r" % (d.get("bleu"), want))

    # --png: blocks × heads, then with --all the two self-attentions below
    png = os.path.join(tmp, "cross.png")
    rc, out, err = run(["translate", "--input", model, "--png", png, DOG])
    w, h, _ = png_info(png)
    check(rc == 0 and out.endswith("wrote %s: the cross-attention, 2 blocks × 4 heads, %d×%d px\n"
                                   % (png, w, h)), "--png: wrote it (%r)" % out[-200:])
    check(800 <= w <= 1400 and 450 <= h <= 800, "--png: 2 × 4 panels of 9 × 9: %d×%d" % (w, h))
    png_all = os.path.join(tmp, "all.png")
    rc, out, err = run(["translate", "--input", model, "--all", "--png", png_all, "--json", "-",
                        DOG])
    w2, h2, _ = png_info(png_all)
    check(rc == 0 and err == "wrote %s: the cross-attention and both self-attentions, 2 blocks "
          "× 4 heads, %d×%d px\n" % (png_all, w2, h2) and json.loads(out)["command"] ==
          "translate", "--json - --png: the JSON on stdout, wrote on stderr (%r)" % err)
    check(w2 >= w and 2.5 * h <= h2 <= 3.5 * h, "--all --png: three figures stacked: %d×%d"
          % (w2, h2))
