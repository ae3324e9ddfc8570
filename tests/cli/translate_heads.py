"""Group translate_heads: attn translate --head-importance and --prune-heads
(d2l 10.5's exercise, SPEC §15) from the command line, on a small model of
the built-in task trained here (150 steps, d 16, 2 heads, 2 blocks: under
a second) and a model of JSON pairs trained for no step.

What is checked against an independent computation:
- the full model's BLEU on the held-out pairs drawn again from the seed
  the model file names is attn train's final held-out BLEU for that model;
- the full model's loss on --data pairs is attn train's final loss on the
  same pairs (the trainer's teacher-forced cross-entropy);
- each cell of --head-importance (ΔBLEU, Δloss) is what --prune-heads of
  that one head measures;
- a head whose values are zero (its rows of W_v zeroed in the model file:
  whatever its weights, its output is 0) costs exactly 0 BLEU and 0 loss,
  and pruning it gives the full model's numbers;
- with a SENTENCE, --prune-heads' full translation is attn translate's.
Then --json's keys and shapes, the --png figure, and the bad input with
its exact lines and exit codes."""
import json
import os

from .common import check, expect, heavy, png_info, run, write

T = "attn translate: "
DOG = "the big red dog sees a cat ."


def heads_json(model, *args):
    """The --json - document of attn translate --input model ARGS…"""
    rc, out, err = run(["translate", "--input", model, "--json", "-"] + list(args))
    check(rc == 0, "attn translate -i %s %s --json -: exit %d (%r)"
          % (model, " ".join(args), rc, err))
    try:
        return json.loads(out)
    except ValueError:
        check(False, "not JSON: %r" % out[:200])
        return {}


def group_translate_heads(tmp):
    model = os.path.join(tmp, "model.json")
    train_json = os.path.join(tmp, "train.json")
    # under valgrind the model is not trained (its errors and --data's small
    # pairs are checked; the 24 evaluations of 200 held-out pairs are not)
    slow = heavy("--head-importance and --prune-heads on the 200 held-out pairs")
    expect(["train", "--task", "translate", "--steps", "0" if slow else "150", "--hiddens", "16",
            "--heads", "2", "--layers", "2", "--ffn", "16", "--save", model, "--json",
            train_json], 0)
    with open(model) as f:
        check(json.load(f).get("seed") == 0, "the model file names its task's seed")
    usage_errors(tmp, model)
    if not slow:
        importance(tmp, model, train_json)
        zero_values(tmp, model)
    data_pairs(tmp)


def usage_errors(tmp, model):
    """Exit 2 (1 for a file), one line."""
    bah = os.path.join(tmp, "bahdanau.json")
    expect(["train", "--task", "translate", "--arch", "bahdanau", "--steps", "0", "--hiddens",
            "8", "--save", bah], 0)
    pairs = write(tmp, "pairs.json", json.dumps({"pairs": [[DOG, "le grand chien rouge voit "
                                                             "un chat ."]]}))
    data_model = os.path.join(tmp, "data-model.json")
    expect(["train", "--data", pairs, "--min-freq", "1", "--steps", "0", "--hiddens", "8",
            "--heads", "2", "--layers", "1", "--ffn", "8", "--save", data_model], 0)
    bad = ("'%s' is not a head: expected KIND BLOCK.HEAD, e.g. enc1.3 (kinds enc, dec, cross; "
           "blocks and heads from 1), a comma between heads")
    sizes = "%s has 2 blocks a side of 2 heads (%%s1.1 … %%s2.2)" % model
    for args, msg in [
            (["--prune-heads", "enc1.3"], "--prune-heads: enc1.3: " + sizes % ("enc", "enc")),
            (["--prune-heads", "dec1.1,cross3.1"],
             "--prune-heads: cross3.1: " + sizes % ("cross", "cross")),
            (["--prune-heads", "enc1.2,dec2.1,enc1.2"], "--prune-heads: enc1.2 is given twice"),
            (["--prune-heads", "foo"], "--prune-heads: " + bad % "foo"),
            (["--prune-heads", "enc1"], "--prune-heads: " + bad % "enc1"),
            (["--prune-heads", "enc0.1"], "--prune-heads: " + bad % "enc0.1"),
            (["--prune-heads", "enc01.1"], "--prune-heads: " + bad % "enc01.1"),
            (["--prune-heads", "enc1.1,"], "--prune-heads: " + bad % ""),
            (["--prune-heads", "enc1.1;dec1.1"], "--prune-heads: " + bad % "enc1.1;dec1.1"),
            (["--prune-heads", ""], "--prune-heads: " + bad % ""),
            (["--head-importance", DOG],
             "--head-importance measures the held-out pairs, not a sentence: give no SENTENCE "
             "(without --head-importance, attn translate translates it)"),
            (["--head-importance", "--prune-heads", "enc1.1"],
             "--head-importance and --prune-heads: give one (--head-importance switches each "
             "head off alone, --prune-heads the heads of its list together)"),
            (["--head-importance", "--all"],
             "--all is for a sentence's translation; --head-importance measures held-out pairs"),
            (["--prune-heads", "enc1.1", "--png", "x.png"],
             "--png is not for --prune-heads (it prints and --json writes the full and the "
             "pruned model's scores)"),
            (["--data", pairs, DOG],
             "--data gives the pairs --head-importance and --prune-heads measure; neither is "
             "given (a sentence is translated without --data)")]:
        expect(["translate", "--input", model] + args, 2, err=T + msg)
    for flag, arg, what in [("--head-importance", [], "switch off in turn"),
                            ("--prune-heads", ["cross1.1"], "prune")]:
        expect(["translate", "--input", bah, flag] + arg, 2,
               err=T + "%s: %s is Bahdanau's model: one attention with one head, no heads to %s"
               % (flag, bah, what))
    expect(["translate", "--input", data_model, "--head-importance"], 2,
           err=T + "%s names no seed of the built-in task's pairs (it learned --data pairs, or "
           "was saved before attn wrote \"seed\"): give --data FILE, the pairs to measure on"
           % data_model)
    with open(model) as f:
        m = json.load(f)
    m["seed"] = -1
    badseed = write(tmp, "badseed.json", json.dumps(m))
    expect(["translate", "--input", badseed, "--head-importance"], 1,
           err=T + "%s: $.seed: expected an integer from 0 to 2147483647, got -1" % badseed)
    missing = os.path.join(tmp, "no", "such")
    expect(["translate", "--input", model, "--head-importance", "--png", missing], 1,
           err=T + "--png %s: cannot create: No such file or directory" % missing)
    expect(["translate", "--input", model, "--prune-heads", "enc1.1", "--data", missing], 1,
           err=T + "%s: cannot open: No such file or directory" % missing)


def importance(tmp, model, train_json):
    """The table, the JSON, the figure; each cell against --prune-heads."""
    png = os.path.join(tmp, "heads.png")
    rc, out, err = run(["translate", "--input", model, "--head-importance", "--png", png])
    w, h, _ = png_info(png)
    check(rc == 0 and err == "", "--head-importance: exit 0, nothing on stderr (%r)" % err)
    check(out.startswith("model %s: Transformer encoder–decoder, 2 blocks a side, d 16, 2 heads, "
                         "num_steps 12\npairs: the 200 held-out pairs of the built-in task, "
                         "seed 0 (as attn train drew them)\nthe full model: BLEU " % model),
          "the printout's first lines: %r" % out[:300])
    for k in ["encoder self-attention (enc)", "decoder self-attention (masked) (dec)",
              "cross-attention (cross)"]:
        check("\n%s: each head switched off in turn\n" % k in out, "a table for %s" % k)
    check(out.endswith("wrote %s: the BLEU and the loss each head costs, 2 blocks × 2 heads, "
                       "%d×%d px\n" % (png, w, h)) and 500 <= w <= 1400 and 300 <= h <= 900,
          "--png: one figure of two rows of three panels (%d×%d)" % (w, h))
    d = heads_json(model, "--head-importance")
    check(list(d) == ["command", "model", "pairs", "full", "kinds", "delta_bleu", "delta_loss"],
          "--json keys: %r" % list(d))
    check(d["pairs"] == {"task": "translate", "seed": 0, "n": 200} and d["kinds"] ==
          ["enc", "dec", "cross"], "--json pairs and kinds: %r %r" % (d["pairs"], d["kinds"]))
    check(all(len(d[key]) == 3 and all(len(b) == 2 and all(len(r) == 2 for r in b)
                                       for b in d[key]) for key in ["delta_bleu", "delta_loss"]),
          "delta_bleu, delta_loss: (3 kinds, 2 blocks, 2 heads)")
    with open(train_json) as f:
        final = json.load(f)["final"]
    check(abs(d["full"]["bleu"] - final["bleu"]) < 1e-12 and
          abs(d["full"]["exact"] - final["exact"]) < 1e-12,
          "the full model's BLEU on the held-out pairs drawn again is attn train's (%r, %r)"
          % (d["full"], final))
    check(d["full"]["bleu"] > 0.9, "the small model has learned (BLEU %r)" % d["full"]["bleu"])
    # each cell is what --prune-heads of that one head measures
    kinds = ["enc", "dec", "cross"]
    for k, l, hd in [(0, 0, 1), (1, 0, 0), (2, 1, 1), (2, 1, 0)]:
        name = "%s%d.%d" % (kinds[k], l + 1, hd + 1)
        p = heads_json(model, "--prune-heads", name)
        db = p["pruned"]["bleu"] - p["full"]["bleu"]
        dl = p["pruned"]["loss"] - p["full"]["loss"]
        check(p["pruned_heads"] == [name] and p["full"]["bleu"] == d["full"]["bleu"] and
              p["full"]["loss"] == d["full"]["loss"], "--prune-heads %s: the same full model"
              % name)
        check(abs(db - d["delta_bleu"][k][l][hd]) < 1e-12 and
              abs(dl - d["delta_loss"][k][l][hd]) < 1e-12,
              "--prune-heads %s: ΔBLEU %r, Δloss %r as its cell (%r, %r)"
              % (name, db, dl, d["delta_bleu"][k][l][hd], d["delta_loss"][k][l][hd]))
    # a cross-attention head of the last block is what the model reads the
    # source through: switching one off costs BLEU
    check(min(d["delta_bleu"][2][1]) < -0.05, "a head of cross2 matters: %r"
          % d["delta_bleu"][2][1])
    # --prune-heads: the printout, the sentence translated both ways
    rc, out, err = run(["translate", "--input", model, "--prune-heads", "cross2.1,cross2.2",
                        DOG])
    check(rc == 0 and "pruned: 2 of the 12 heads (cross2.1,cross2.2)\n" in out and
          "\nfull model   %.4f" % d["full"]["bleu"] in out, "--prune-heads: the table (%r)" % out)
    rc, plain, _ = run(["translate", "--input", model, "--json", "-", DOG])
    p = heads_json(model, "--prune-heads", "cross2.1,cross2.2", DOG)
    check(list(p) == ["command", "model", "pairs", "pruned_heads", "full", "pruned", "sentence",
                      "translation_full", "translation"], "--prune-heads --json keys: %r"
          % list(p))
    check(p["translation_full"] == json.loads(plain)["translation"] and
          p["sentence"] == DOG.split(), "the full model's translation is attn translate's")
    check(list(p["full"]) == ["bleu", "exact", "loss", "words_per_sentence", "ms_per_sentence"]
          and 6 <= p["full"]["words_per_sentence"] <= 10,
          "--prune-heads --json: a measure's keys, the grammar's 6 to 10 words (%r)" % p["full"])
    check(p["pruned"]["bleu"] < p["full"]["bleu"] and p["full"]["ms_per_sentence"] > 0,
          "both cross-attentions of block 2 pruned: BLEU falls (%r)" % p)


def zero_values(tmp, model):
    """A head of zero values changes nothing."""
    with open(model) as f:
        m = json.load(f)
    wv = m["state_dict"]["decoder.blks.block0.attention1.W_v.weight"]  # (16, 16)
    for r in range(8, 16):  # head 2's rows
        wv[r] = [0.0] * 16
    zero = write(tmp, "zero.json", json.dumps(m))
    d = heads_json(zero, "--head-importance")
    check(d["delta_bleu"][1][0][1] == 0 and d["delta_loss"][1][0][1] == 0,
          "dec1.2 of zero values: ΔBLEU %r, Δloss %r (want 0, 0)"
          % (d["delta_bleu"][1][0][1], d["delta_loss"][1][0][1]))
    check(d["delta_loss"][1][0][0] != 0, "dec1.1 still matters: %r" % d["delta_loss"][1][0][0])
    p = heads_json(zero, "--prune-heads", "dec1.2")
    check(p["pruned"]["bleu"] == p["full"]["bleu"] and p["pruned"]["loss"] == p["full"]["loss"],
          "--prune-heads dec1.2 of zero values: the full model's numbers")


def data_pairs(tmp):
    """--data: the loss is attn train's on the same pairs."""
    sentences = [("the red car is fast .", "la voiture rouge est rapide ."),
                 ("the dog sees the car .", "le chien voit la voiture ."),
                 ("a red dog is fast .", "un chien rouge est rapide ."),
                 ("the car sees a dog .", "la voiture voit un chien .")]
    pairs = write(tmp, "four.json", json.dumps({"pairs": [list(s) for s in sentences]}))
    model = os.path.join(tmp, "four-model.json")
    out_json = os.path.join(tmp, "four-train.json")
    expect(["train", "--data", pairs, "--min-freq", "1", "--steps", "3", "--hiddens", "8",
            "--heads", "2", "--layers", "1", "--ffn", "8", "--save", model, "--json", out_json],
           0)
    with open(out_json) as f:
        final = json.load(f)["final"]
    d = heads_json(model, "--head-importance", "--data", pairs)
    check(d["pairs"] == {"data": pairs, "heldout": False, "n": 4},
          "--data without held-out pairs: all of them (%r)" % d["pairs"])
    check(abs(d["full"]["loss"] - final["loss"]) < 1e-12,
          "the full model's loss on the pairs is attn train's (%r, %r)"
          % (d["full"]["loss"], final["loss"]))
    held = write(tmp, "held.json", json.dumps({"pairs": [list(s) for s in sentences],
                                               "heldout": {"pairs": [list(sentences[0])]}}))
    d = heads_json(model, "--prune-heads", "enc1.1", "--data", held)
    check(d["pairs"] == {"data": held, "heldout": True, "n": 1},
          "--data with held-out pairs: those (%r)" % d["pairs"])
