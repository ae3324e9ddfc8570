"""Group train: attn train from the command line: usage and data errors with
their exact lines, outputs refused before training, each default task
learning, byte-identical JSON across thread counts, --save then selfattn
--input, --load continuing."""
import json
import os
import re

from .common import VALGRIND, check, expect, heavy, png_info, run


def group_train(tmp):
    T = "attn train: "
    expect(["train", "--help"], 0, err="", out_has=["usage: attn train", "Examples:",
                                                     "--compare-posenc", "--no-posenc"])
    rc, out, _ = expect(["train", "--list-options"], 0, err="")
    check("--task - TASK choice reverse previous apple" in out
          and "--optimizer - NAME choice adam sgd" in out and "--lr - LR value" in out,
          "train --list-options: the choices and --lr: %r" % out)

    # usage errors: one line, exit 2
    for args, msg in [
            (["--task", "poem"],
             "--task: expected reverse, previous, apple, induction, translate, lm or vit, got 'poem'"),
            (["--lr", "0"], "--lr: expected a positive number, got '0'"),
            (["--lr", "-0.1"], "--lr: expected a positive number, got '-0.1'"),
            (["--lr", "abc"], "--lr: expected a positive number, got 'abc'"),
            (["--lr", "nan"], "--lr: expected a positive number, got 'nan'"),
            (["--optimizer", "rmsprop"], "--optimizer: expected adam or sgd, got 'rmsprop'"),
            (["--posenc", "--no-posenc"], "--posenc and --no-posenc: give one"),
            (["--hiddens", "30", "--heads", "4"], "--hiddens 30 is not divisible by --heads 4"),
            (["--task", "apple", "--length", "5"],
             "--length is for reverse, previous and induction; apple's sentences are its "
             "corpus's"),
            # stacks (SPEC §9 "Stacks")
            (["--layers", "0"], "--layers: expected an integer from 1 to 12, got '0'"),
            (["--layers", "13"], "--layers: expected an integer from 1 to 12, got '13'"),
            (["--ffn", "-1"], "--ffn: expected an integer from 0 to 4096, got '-1'"),
            (["--task", "induction", "--length", "7"],
             "--length 7 is too short for induction: two copies of a segment of at least 2 "
             "tokens need --length 8 or more"),
            (["--task", "induction", "--vocab", "19"],
             "--vocab 19 is smaller than --length 20: an induction sequence holds distinct "
             "tokens"),
            (["--task", "induction", "--compare-layers", "--layers", "1"],
             "--compare-layers compares 1 layer with --layers N: give N ≥ 2"),
            (["--compare-layers", "--json", "x.json"],
             "--compare-layers trains 1 layer and N and keeps neither; --json cannot be used "
             "with it"),
            (["--load", "m.json", "--layers", "2"], "--layers is read from the model file of "
             "--load"),
            (["--causal", "--no-causal"], "--causal and --no-causal: give one"),
            (["--data", "x.json", "--task", "apple"],
             "--task is for the built-in tasks; --data brings its own"),
            (["--load", "m.json", "--heads", "2"], "--heads is read from the model file of --load"),
            (["--compare-posenc", "--save", "m.json"],
             "--compare-posenc trains with and without P and keeps neither; --save cannot be "
             "used with it"),
            (["--steps", "-1"], "--steps: expected an integer from 0 to 10000000, got '-1'")]:
        expect(["train"] + args, 2, err=T + msg)

    # unwritable outputs: refused before training, nothing left behind
    missing = os.path.join(tmp, "no", "such")
    for opt in ["--save", "--png", "--plot", "--json"]:
        expect(["train", "--steps", "100000", opt, missing], 1,
               err=T + "%s %s: cannot create: No such file or directory" % (opt, missing))
    check(not os.path.exists(os.path.dirname(missing)), "train: nothing made for --save")

    # bad data: one line naming the file and the place, exit 1
    def data(name, doc):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f, ensure_ascii=False)
        return path
    ragged = data("ragged.json", {"sequences": [["a", "b"], ["b", "a"]],
                                   "targets": [["b", "a"], ["a"]]})
    nolabel = data("nolabel.json", {"sequences": [["苹果", "甜"], ["很", "甜"]],
                                     "labels": ["fruit", "fruit"], "label_at": "苹果"})
    ok = data("ok.json", {"sequences": [["a", "b", "c"], ["c", "b", "a"], ["b", "c"]],
                          "targets": [["c", "b", "a"], ["a", "b", "c"], ["c", None]]})
    oov = data("oov.json", {"sequences": [["a", "b"]], "targets": [["b", "zz"]]})
    out_json = os.path.join(tmp, "out.json")
    expect(["train", "--data", ragged, "--json", out_json], 1,
           err=T + "%s: $.targets[1]: expected 2 tokens, got 1" % ragged)
    expect(["train", "--data", nolabel], 1,
           err=T + "%s: $.sequences[1]: no \"苹果\" (label_at) in the sentence" % nolabel)
    both = data("both.json", {"sequences": [["a"]], "labels": ["x"], "label_at": "a",
                              "targets": [["a"]]})
    expect(["train", "--data", both], 1,
           err=T + "%s: $: has \"targets\", but the data has sequence labels" % both)
    check(not os.path.exists(out_json), "train: no --json after bad data")
    model = os.path.join(tmp, "small.json")
    expect(["train", "--data", ok, "--steps", "5", "--save", model, "--hiddens", "8",
            "--heads", "2"], 0)
    rc, _, err = run(["train", "--data", oov, "--load", model, "--steps", "1"])
    check(rc == 1 and err.startswith(T + oov + ": ") and "zz" in err and err.count("\n") == 1,
          "train --load: a target outside the model's vocabulary: %r" % err)
    # a model file claiming sizes its numbers cannot fill: refused before allocating
    small = json.load(open(model))
    huge = data("huge.json", dict(small, num_hiddens=100000, num_heads=1))
    for args in (["train", "--load", huge, "--steps", "0"],
                 ["selfattn", "--input", huge, "--tokens", "a b"]):
        n = sum(len(v) * (len(v[0]) if isinstance(v[0], list) else 1)
                for v in small["state_dict"].values())
        expect(args, 1, err="attn %s: %s%s: $.state_dict: %d numbers, far fewer than a model of "
               "num_hiddens 100000 with 4 words and 4 classes has parameters (at least "
               "40000800000)" % (args[0], "--load " if args[0] == "train" else "", huge, n))
    # a loss that becomes NaN: the step named, a smaller --lr suggested, no file
    rc, _, err = run(["train", "--lr", "1e6", "--steps", "50", "--json", out_json])
    last = err.splitlines()[-1] if err else ""
    check(rc == 1 and re.fullmatch(r"attn train: step \d+: the loss became (nan|infinite); "
                                   r"try a smaller --lr", last) is not None,
          "train --lr 1e6: %r" % err)
    check(not os.path.exists(out_json), "train: no --json after a NaN loss")

    # plain progress lines on stderr (not a terminal), every --log-every
    rc, out, err = expect(["train", "--data", ok, "--steps", "6", "--log-every", "3"], 0)
    check(len(err.splitlines()) == 2 and all(
        re.fullmatch(r"step %d/6: loss \d+\.\d{4}, accuracy \d+\.\d%%" % s, l)
        for s, l in zip([3, 6], err.splitlines())),
          "train --log-every 3: two lines: %r" % err)
    check("final loss" in out and "attention of the probe after step 6" in out,
          "train: the final figures and the probe: %r" % out)

    # determinism: the same JSON and PNGs with 1 and 2 threads
    steps = "20" if VALGRIND else "60"
    files = {}
    for th in ["1", "2"]:
        j, p, q = (os.path.join(tmp, "d%s.%s" % (th, e)) for e in ["json", "png", "plot.png"])
        expect(["train", "--task", "reverse", "--steps", steps, "--seed", "3", "--threads", th,
                "--dropout", "0.1", "--json", j, "--png", p, "--plot", q], 0)
        files[th] = [open(f, "rb").read() for f in (j, p, q)]
    check(files["1"] == files["2"], "train: --json, --png and --plot identical with 1 and 2 threads")
    doc = json.loads(files["1"][0])
    check(list(doc) == ["command", "task", "steps", "history", "final"] and
          doc["command"] == "train" and doc["task"] == "reverse" and doc["steps"] == int(steps),
          "train --json: the keys of SPEC §9: %r" % list(doc))
    h = doc["history"]
    check([e["step"] for e in h][:2] == [1, 20] and h[-1]["step"] == int(steps) and
          all(list(e) == ["step", "loss", "train_accuracy", "heldout_accuracy"] for e in h),
          "train --json: history entries at 1, every 20 and the last")
    check(list(doc["final"]) == ["loss", "train_accuracy", "heldout_accuracy"] and
          0 <= doc["final"]["heldout_accuracy"] <= 1, "train --json: final")
    w, hh, _ = png_info(os.path.join(tmp, "d1.png"))
    check(w > 400 and hh > w, "train --png: 5 rows of 4 heads, taller than wide: %dx%d" % (w, hh))
    expect(["train", "--data", ok, "--steps", "2", "--json", "-"], 0)
    rc, out, _ = run(["train", "--data", ok, "--steps", "2", "--json", "-"])
    check(json.loads(out)["final"]["heldout_accuracy"] is None,
          "train --json -: the document alone on stdout, null without held-out data")

    # a stack on induction, small: every layer's and head's scores in the
    # history and the final figures, where the loss fell fastest; --save
    # under d2l's TransformerEncoder names, selfattn --input shows each block
    small = ["train", "--task", "induction", "--length", "8", "--vocab", "9", "--hiddens", "8",
             "--heads", "2", "--ffn", "8", "--steps", "6", "--log-every", "3", "--seed", "2"]
    sj, sm, sp = (os.path.join(tmp, "stack." + e) for e in ["json", "model.json", "png"])
    rc, out, _ = expect(small + ["--json", sj, "--save", sm, "--png", sp], 0,
                        out_has=["induction, 6 steps in", "2 layers, FFN 8, d 8, 2 heads, with P, "
                                 "AddNorm, causal", "layer 2 head 2", "the induction head formed "
                                 "between steps"])
    sj2 = os.path.join(tmp, "stack-2threads.json")
    for th, path in [("1", sj + ".1"), ("2", sj2)]:
        expect(small + ["--threads", th, "--json", path], 0)
    check(open(sj + ".1", "rb").read() == open(sj2, "rb").read() == open(sj, "rb").read(),
          "train --task induction: the same JSON with 1 and 2 threads")
    doc = json.load(open(sj))
    h = doc["history"]
    check([e["step"] for e in h] == [1, 3, 6] and all(
        list(e) == ["step", "loss", "train_accuracy", "heldout_accuracy", "scores"] and
        len(e["scores"]["previous_token"]) == 2 and len(e["scores"]["induction"][1]) == 2
        for e in h), "train --task induction --json: scores (2 layers × 2 heads) in each entry")
    f = doc["final"]
    check(list(f) == ["loss", "train_accuracy", "heldout_accuracy", "scores", "formed"] and
          1 <= f["formed"]["from_step"] <= f["formed"]["to_step"] <= 6 and
          all(0 <= v <= 1 for r in f["scores"]["induction"] for v in r),
          "train --task induction --json: final scores and formed: %r" % f)
    saved = json.load(open(sm))
    keys = list(saved["state_dict"])
    check([k for k in saved if k != "state_dict"] ==
          ["command", "vocab", "classes", "num_hiddens", "num_heads", "num_layers",
           "ffn_num_hiddens", "posenc", "causal"] and saved["num_layers"] == 2 and
          saved["causal"] is True and saved["vocab"][1:4] == ["a", "b", "c"] and
          keys[:2] == ["embedding.weight", "blks.block0.attention.W_q.weight"] and
          "blks.block1.ffn.dense2.bias" in keys and "blks.block1.addnorm2.ln.weight" in keys and
          keys[-2:] == ["head.weight", "head.bias"],
          "train --save: a stack under d2l's TransformerEncoder names: %r" % keys[:8])
    w, hh, _ = png_info(sp)
    check(w > 1000 and hh > 1000,
          "train --task induction --png: 4 rows (steps) of 2 layers × 2 heads: %dx%d" % (w, hh))
    aj = os.path.join(tmp, "stack-sa.json")
    expect(["selfattn", "--input", sm, "--tokens", "a b c a b c", "--json", aj], 0)
    sa = json.load(open(aj))
    wts = sa["attention_weights"]
    check(sa["num_layers"] == 2 and len(wts) == 2 and len(wts[0][0]) == 2 and
          len(wts[1][0][0]) == 6 and all(x == 0 for x in wts[1][0][0][0][1:]),
          "selfattn --input STACK: (2 blocks, 1, 2 heads, 6, 6), causal")
    expect(["selfattn", "--input", sm, "--tokens", "a b c", "--explain"], 2,
           err="attn selfattn: %s is a stack of 2 blocks: --explain, --stream, --describe, "
               "--permute, --posenc, --depth and --time are for one attention layer" % sm)
    # --load of a stack whose keys do not match its layers: one line, exit 1, nothing written
    broken = dict(saved)
    broken["num_layers"] = 3
    bp = os.path.join(tmp, "stack-broken.json")
    json.dump(broken, open(bp, "w"))
    out_json = os.path.join(tmp, "never.json")
    expect(["train", "--task", "induction", "--length", "8", "--vocab", "9", "--load", bp,
            "--steps", "1", "--json", out_json], 1,
           err=T + "--load %s: $.state_dict: missing \"blks.block2.attention.W_q.weight\"" % bp)
    broken["num_layers"] = 2
    broken["state_dict"] = dict(saved["state_dict"])
    broken["state_dict"]["blks.block2.attention.W_q.weight"] = [[0.0]]
    json.dump(broken, open(bp, "w"))
    expect(["train", "--task", "induction", "--length", "8", "--vocab", "9", "--load", bp,
            "--steps", "1", "--json", out_json], 1,
           err=T + "--load %s: $.state_dict[\"blks.block2.attention.W_q.weight\"]: not a "
               "parameter of this model" % bp)
    check(not os.path.exists(out_json), "train --load BROKEN: no --json")
    # the stack goes on training from its file
    expect(["train", "--task", "induction", "--length", "8", "--vocab", "9", "--load", sm,
            "--steps", "2"], 0, out_has=["2 layers, FFN 8", "from --load"])

    if heavy("the default tasks trained to the end"):
        return
    # each default task learns, with a fixed seed
    for task, want in [("reverse", 0.99), ("previous", 0.99), ("apple", 0.95)]:
        j = os.path.join(tmp, task + ".json")
        args = ["train", "--task", task, "--seed", "1", "--json", j]
        if task == "apple":
            args += ["--save", os.path.join(tmp, "apple-model.json")]
        rc, out, _ = expect(args, 0)
        acc = json.load(open(j))["final"]["heldout_accuracy"]
        check(acc >= want, "train --task %s: held-out accuracy %.4f >= %.2f" % (task, acc, want))
        if task == "apple":
            m = re.search(r"cue words \(mean over heads and sentences\): ([0-9.]+) before, "
                          r"([0-9.]+) after", out)
            check(m is not None and float(m.group(2)) >= 0.5 and
                  float(m.group(2)) > float(m.group(1)),
                  "train --task apple: 苹果 puts at least half its weight on the cues: %r" % out)
    # without P, reverse cannot be learned: side by side
    rc, out, _ = expect(["train", "--task", "reverse", "--compare-posenc", "--seed", "1"], 0,
                        out_has=["with P", "without P", "held-out accuracy"])
    row = [l for l in out.splitlines() if l.startswith("held-out accuracy")][0].split()
    check(float(row[2].rstrip("%")) >= 99 and float(row[3].rstrip("%")) < 60,
          "train --compare-posenc: with P >= 99%%, without < 60%%: %r" % row)

    # --save, then selfattn --input draws the trained attention
    model = os.path.join(tmp, "apple-model.json")
    saved = json.load(open(model))
    check(saved["command"] == "train" and list(saved["state_dict"])[:5] ==
          ["embedding.weight", "W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"],
          "train --save: SPEC §9's model file")
    sj, sp = os.path.join(tmp, "sa.json"), os.path.join(tmp, "sa.png")
    expect(["selfattn", "--input", model, "--tokens", "苹果 发布 了 新的 产品", "--png", sp,
            "--json", sj], 0)
    sa = json.load(open(sj))
    heads = sa["attention_weights"][0]
    cue = sum(row0[k] for row0 in (hd[0] for hd in heads) for k in (1, 4)) / len(heads)
    check(len(heads) == 4 and png_info(sp)[0] > 0 and cue >= 0.5,
          "selfattn --input MODEL: 苹果's row on 发布 and 产品: %.3f" % cue)
    expect(["selfattn", "--input", model, "--tokens", "苹果 飞 了"], 1,
           err="attn selfattn: --tokens: '飞' is not in the vocabulary of %s" % model)
    expect(["selfattn", "--input", model], 2,
           err="attn selfattn: %s is a model of attn train: give the sentence to run it on "
               "with --tokens" % model)
    # --load: evaluates (--steps 0) to the saved figures, or trains on
    j0 = os.path.join(tmp, "apple-load.json")
    expect(["train", "--task", "apple", "--load", model, "--steps", "0", "--json", j0], 0)
    before = json.load(open(os.path.join(tmp, "apple.json")))["final"]
    check(json.load(open(j0))["final"] == before, "train --load --steps 0: the saved model's "
          "final figures")
    expect(["train", "--task", "apple", "--load", model, "--steps", "10"], 0,
           out_has=["10 steps", "from --load"])
    expect(["train", "--task", "reverse", "--load", model, "--steps", "1"], 1,
           err=T + "--load %s: the model's vocabulary (%d tokens) is not the one of task "
           "reverse with 10 digits (11 tokens)" % (model, len(saved["vocab"])))
