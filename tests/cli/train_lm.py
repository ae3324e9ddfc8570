"""Group train_lm: attn train --task lm (SPEC §16): the options' errors with
their exact lines, bad texts (invalid UTF-8 named by its byte offset,
empty, too short, unreadable), a tiny run's JSON (its vocabulary, split
and unigram perplexity recomputed here from the text), the same bytes for
the same seed, sampling's temperature, --compare-causal, the probe's
attention on the page and in the figure (the mask's zeros, the weight on
the next character recomputed here from the page's weights), and the
default text named in the output."""
import json
import math
import os
import random

from .common import check, expect, png_info, run, write
from .html import floats, page_data

T = "attn train: "


def unigram(text):
    """The baseline as SPEC §16 and encoder_lm.h define it: add-one counts
    of the training text (the first n − n//10 characters), perplexity over
    the held-out characters from the second."""
    n = len(text)
    ntrain = n - n // 10
    train, held = text[:ntrain], text[ntrain:]
    V = len(set(text))
    counts = {}
    for ch in train:
        counts[ch] = counts.get(ch, 0) + 1
    targets = held[1:]
    nll = -sum(math.log((counts.get(ch, 0) + 1) / (ntrain + V)) for ch in targets)
    return math.exp(nll / len(targets))


def label(ch):
    """A character as the probe's tick label: white space made visible."""
    return {" ": "\u2423", "\n": "\u21b5", "\t": "\u21e5", "\r": "\u240d"}.get(ch, ch)


def next_weights(w, T):
    """Per head, the mean over queries i < T − 1 of the weight on key i + 1
    (w: the (T, T) weights of each head, flattened)."""
    return sum(w[i * T + i + 1] for i in range(T - 1)) / (T - 1)


def check_probe_outputs(doc, page, fig, texts, err, path):
    """--compare-causal's page and figure: the probe is the held-out text's
    first characters; the causal run's weights above the diagonal are 0 and
    every row sums to 1; each run's next_weight is the largest per-head
    mean weight on key i + 1 of the page's last step, recomputed here; the
    figure draws each head's."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    n = len(text)
    _, _, data = page_data(page)
    pg = data["page"]
    check(data["compare_causal"] is True and [r["task"] for r in data["runs"]] == ["lm", "lm"],
          "page: the two runs' documents")
    check([r["label"] for r in pg["runs"]] == ["causal", "no mask"]
          and [r["causal"] for r in pg["runs"]] == [True, False], "page: the runs' labels")
    T = pg["runs"][0]["length"]
    want = [label(ch) for ch in text[n - n // 10:][:T]]
    check(T == 8 and pg["runs"][0]["probes"][0]["tokens"] == want,
          "page: the probe %r, want %r" % (pg["runs"][0]["probes"][0]["tokens"], want))
    drawn = open(texts, encoding="utf-8").read().splitlines()
    for k, run_ in enumerate(pg["runs"]):
        L, NH = run_["layers"], run_["heads"]
        w = floats(run_["attention"])
        per = L * NH * T * T
        check(run_["steps"][-1] == 60 and len(w) == len(run_["steps"]) * per,
              "page run %d: steps %r, %d numbers" % (k, run_["steps"][-3:], len(w)))
        last = w[-per:]
        for m in range(L * NH):
            for i in range(T):
                row = last[(m * T + i) * T:(m * T + i + 1) * T]
                check(abs(sum(row) - 1) < 1e-5, "page run %d head %d row %d sums to %r"
                      % (k, m, i, sum(row)))
                if run_["causal"]:
                    check(all(x == 0 for x in row[i + 1:]),
                          "page run %d head %d row %d: weight after the query" % (k, m, i))
        means = [next_weights(last[m * T * T:(m + 1) * T * T], T) for m in range(L * NH)]
        best = max(range(L * NH), key=lambda m: (means[m], -m))
        nw = doc["runs"][k]["final"]["next_weight"]
        if run_["causal"]:
            check(max(means) == 0 and nw == {"weight": 0, "layer": None, "head": None},
                  "causal next_weight %r, recomputed %r" % (nw, means))
        else:
            check(abs(nw["weight"] - means[best]) < 1e-6 and
                  (nw["layer"], nw["head"]) == (best // NH + 1, best % NH + 1),
                  "no-mask next_weight %r, recomputed %r" % (nw, means))
            # the model that learned to copy reads the next character
            check(nw["weight"] > 0.3, "no mask: weight on the next character %r" % nw["weight"])
        for m in range(L * NH):
            t = "head %d \u00b7 on i+1: %.2f" % (m % NH + 1, means[m])
            check(t in drawn, "figure: %r not drawn (%r)" % (t, drawn[:12]))
    check(png_info(fig)[0] > 400, "figure: %r" % (png_info(fig),))
    check("wrote %s: the attention over the held-out text's first 8 characters, 4 rows × 4 "
          "heads" % fig in err and "wrote %s: a page of the attention at" % page in err,
          "the reports on stderr: %r" % err[-400:])


def group_train_lm(tmp):
    expect(["train", "--help"], 0, err="",
           out_has=["--sample N", "--temperature T", "--compare-causal", "lm (a character-level"])

    text = "The quick brown fox jumps over the lazy dog. Ça va? 苹果很甜。\n" * 8
    tiny = write(tmp, "tiny.txt", text)
    bad = os.path.join(tmp, "bad.txt")
    with open(bad, "wb") as f:
        f.write("héllo".encode() + b"\xff rest")
    empty = write(tmp, "empty.txt", "")
    short = write(tmp, "short.txt", "hello world\n")

    # usage errors: exit 2, one line
    for args, msg in [
            (["--temperature", "0"], "--temperature: expected a number above 0, got 0"),
            (["--temperature", "-1"], "--temperature: expected a number from 0 to 1e+06, "
             "got '-1'"),
            (["--sample", "-1"], "--sample: expected an integer from 0 to 1000000, got '-1'"),
            (["--plot", "x.png"], "--plot is not for --task lm"),
            (["--save", "m.json"], "--save is not for --task lm"),
            (["--compare-layers"], "--compare-layers is not for --task lm"),
            (["--compare-causal", "--no-causal"],
             "--compare-causal trains with and without the mask; --no-causal cannot be used "
             "with it"),
            (["--clip", "2"], "--clip is for translation (--task translate, or --data of "
             "sentence pairs)"),
            (["--posenc", "--pos-embedding", "learned"],
             "--posenc and --pos-embedding learned: give one (--posenc is --pos-embedding "
             "sinusoid)")]:
        expect(["train", "--task", "lm"] + args, 2, err=T + msg)
    for opt in (["--sample", "5"], ["--temperature", "0.5"], ["--compare-causal"]):
        expect(["train", "--task", "reverse"] + opt, 2, err=T + "%s is for --task lm" % opt[0])
    # --length with --data stays refused for the other tasks
    expect(["train", "--data", tiny, "--length", "4"], 2,
           err=T + "--length is for the built-in tasks; --data brings its own")

    # bad texts: exit 1, the file and the place named
    for path, msg in [
            (bad, "%s: invalid UTF-8 at byte offset 6" % bad),
            (empty, "%s: empty text" % empty),
            (short, "%s: 12 characters: too short for --length 32 (the training and the "
             "held-out part (the last 10%%) each need 33)" % short),
            (os.path.join(tmp, "nope.txt"), "%s: cannot read: No such file or directory"
             % os.path.join(tmp, "nope.txt"))]:
        expect(["train", "--task", "lm", "--data", path], 1, err=T + msg)
    expect(["train", "--task", "lm", "--data", short, "--length", "2", "--steps", "1"], 1,
           err=T + "%s: 12 characters: too short for --length 2 (the training and the "
           "held-out part (the last 10%%) each need 3)" % short)

    # --max-mem: the windows of the text estimated before they are cut
    # (GPL-3-sized text of 35,149 characters: about 9 MiB at --length 32)
    big = write(tmp, "big.txt", "abcdefghij" * 3515)
    expect(["train", "--task", "lm", "--data", big, "--max-mem", "1M", "--steps", "1"], 1,
           err=T + "the text cut into windows needs about 8.98 MiB, more than --max-mem 1 MiB")

    # a tiny run's JSON
    args = ["train", "--task", "lm", "--data", tiny, "--length", "8", "--steps", "30",
            "--log-every", "10", "--sample", "40", "--json", "-"]
    rc, out, _ = run(args)
    check(rc == 0, "tiny run: exit %d" % rc)
    doc = json.loads(out)
    n = len(text)
    check(doc["command"] == "train" and doc["task"] == "lm", "tiny: command, task")
    check(doc["characters"] == n, "tiny: characters %r, want %d" % (doc["characters"], n))
    check(doc["vocab_size"] == len(set(text)), "tiny: vocab_size %r" % doc["vocab_size"])
    check(doc["train_characters"] == n - n // 10 and doc["heldout_characters"] == n // 10,
          "tiny: the split")
    check(abs(doc["unigram_perplexity"] - unigram(text)) < 1e-6 * unigram(text),
          "tiny: unigram perplexity %r, want %r" % (doc["unigram_perplexity"], unigram(text)))
    check(doc["causal"] is True and doc["steps"] == 30, "tiny: causal, steps")
    check([h["step"] for h in doc["history"]] == [1, 10, 20, 30], "tiny: history steps")
    f = doc["final"]
    check(set(f) == {"loss", "train_accuracy", "heldout_loss", "heldout_accuracy",
                     "perplexity", "next_weight"}, "tiny: final's keys %r" % sorted(f))
    check(f["next_weight"] == {"weight": 0, "layer": None, "head": None},
          "tiny: the causal model puts no weight on the next character: %r" % f["next_weight"])
    check(abs(f["perplexity"] - math.exp(f["heldout_loss"])) < 1e-6 * f["perplexity"],
          "tiny: perplexity = exp(held-out loss)")
    # a repeated sentence: the model beats the baseline by far
    check(f["perplexity"] < doc["unigram_perplexity"] / 4,
          "tiny: perplexity %r against the unigram's %r" % (f["perplexity"],
                                                          doc["unigram_perplexity"]))
    s = doc["sample"]
    check(len(s["text"]) == 40 and set(s["text"]) <= set(text), "tiny: the sample's characters")
    check(s["prompt"] == text[n - n // 10], "tiny: the prompt is the held-out text's first")
    check(s["temperature"] == 1 and s["seed"] == 0, "tiny: the sample's temperature and seed")
    # the same bytes again; another seed, another sample; a very low
    # temperature is greedy: the same text for every seed
    rc2, out2, _ = run(args)
    check(rc2 == 0 and out2 == out, "tiny: the same bytes for the same seed")
    cold = []
    for seed in ("1", "2"):
        rc, o, _ = run(args + ["--seed", seed])
        check(json.loads(o)["sample"]["text"] != s["text"], "tiny: seed %s, another sample"
              % seed)
    for seed in ("1", "2"):
        rc, o, _ = run(args[:-2] + ["--seed", "3", "--json", "-", "--temperature", "1e-9"]
                       + (["--threads", seed]))
        cold.append(json.loads(o)["sample"]["text"])
    check(cold[0] == cold[1], "tiny: the same sample with 1 and 2 threads")

    # the text shown: the table, the sample between its rules
    rc, out, _ = expect(["train", "--task", "lm", "--data", tiny, "--length", "8", "--steps",
                         "30", "--sample", "40"], 0,
                        out_has=["attn train --task lm: " + tiny,
                                 "%d characters, %d distinct; training the first %d, held out "
                                 "the last %d" % (n, len(set(text)), n - n // 10, n // 10),
                                 "held-out perplexity", "unigram perplexity",
                                 "causal sample: 40 characters after the held-out text's "
                                 "first, temperature 1, seed 0"])
    check(s["prompt"] + s["text"] in out, "tiny: the JSON's sample printed")

    # --compare-causal: both columns, both samples, the why
    rc, out, _ = expect(["train", "--task", "lm", "--data", tiny, "--length", "8", "--steps",
                         "30", "--compare-causal", "--sample", "20"], 0,
                        out_has=["causal      no mask", "no-mask sample:",
                                 "Without the mask each position sees the next character and "
                                 "learns to copy it; at generation time the future is not "
                                 "there, so the no-mask model cannot generate."])
    # letters drawn at random: nothing to learn from the past (a causal
    # model stays near 1/9), everything from the next character it sees
    rng = random.Random(1)
    noise = write(tmp, "noise.txt", "".join(rng.choice("abcdefgh ") for _ in range(600)))
    page, fig, texts = (os.path.join(tmp, n) for n in ("lm.html", "lm.png", "lm-texts.txt"))
    rc, out, err = run(["train", "--task", "lm", "--data", noise, "--length", "8", "--steps",
                        "60", "--compare-causal", "--json", "-", "--html", page, "--png", fig],
                       env={"ATTN_FIGURE_TEXT": texts})
    doc = json.loads(out)
    check([r["causal"] for r in doc["runs"]] == [True, False], "compare: the runs")
    acc = [r["final"]["train_accuracy"] for r in doc["runs"]]
    check(acc[0] < 0.4 and acc[1] > 0.7,
          "compare: training accuracy with the mask %r, without %r" % (acc[0], acc[1]))
    check(doc["why"].startswith("Without the mask"), "compare: why")
    check_probe_outputs(doc, page, fig, texts, err, noise)

    # the default text, named
    if os.path.exists("/usr/share/common-licenses/GPL-3"):
        expect(["train", "--task", "lm", "--steps", "2", "--sample", "5"], 0,
               out_has=["attn train --task lm: /usr/share/common-licenses/GPL-3"])
