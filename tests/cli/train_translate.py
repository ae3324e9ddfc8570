"""Group train_translate: attn train on a translation model (SPEC §11):
usage and data errors with their exact lines, the grammar learned (held-out
BLEU, exact share, alignment), d2l's printout, byte-identical JSON across
thread counts, --save then --load, --data of fra.txt lines and of JSON
pairs, --png and --plot."""
import json
import os

from .common import check, expect, png_ok, run, slow_build, write


def group_train_translate(tmp):
    T = "attn train: "
    # usage errors: one line, exit 2
    for args, msg in [
            (["--task", "poem"],
             "--task: expected reverse, previous, apple, induction, translate, lm or vit, got 'poem'"),
            (["--task", "translate", "--num-steps", "10"],
             "--num-steps 10 is too small: the grammar's longest sentence has 10 words, 11 "
             "with its <eos>"),
            (["--task", "translate", "--length", "5"],
             "--length is not used by translation: the grammar's sentences are 6 to 10 words; "
             "--num-steps sets the padding"),
            (["--task", "translate", "--no-posenc"],
             "--no-posenc is not used by translation: the Transformer always adds P"),
            (["--task", "translate", "--ffn", "0"],
             "--ffn 0: d2l's Transformer has a PositionWiseFFN in every block; give --ffn H "
             "≥ 1 (default 64)"),
            (["--task", "translate", "--hiddens", "30"], "--hiddens 30 is not divisible by "
             "--heads 4"),
            (["--task", "translate", "--arch", "rnn"],
             "--arch: expected transformer or bahdanau, got 'rnn'"),
            (["--task", "reverse", "--clip", "2"],
             "--clip is for translation (--task translate, or --data of sentence pairs)"),
            (["--num-steps", "12"],
             "--num-steps is for translation (--task translate, or --data of sentence pairs)"),
            (["--task", "translate", "--clip", "-1"],
             "--clip: expected a number from 0 to 1e+30, got '-1'")]:
        expect(["train"] + args, 2, err=T + msg)

    # bad data files: one line naming the file and the place, exit 1
    notab = write(tmp, "notab.txt", "go .\tva !\nhello there\n")
    empty_side = write(tmp, "empty.txt", "go .\tva !\nhi .\t \n")
    nopairs = write(tmp, "nopairs.txt", "\t\n \t \n")
    for path, msg in [
            (notab, "%s: line 2: no tab between the source and the target" % notab),
            (empty_side, "%s: line 2: the target (after the tab) is empty" % empty_side),
            (nopairs, "%s: no sentence pairs (expected lines of English<TAB>French)" % nopairs)]:
        expect(["train", "--data", path], 1, err=T + msg)
    badjson = write(tmp, "bad.json", json.dumps({"pairs": [["the car", 3]]}))
    expect(["train", "--data", badjson], 1,
           err=T + "%s: $.pairs[0][1]: expected a string (a sentence), got a number" % badjson)
    missing = os.path.join(tmp, "no", "such")
    expect(["train", "--task", "translate", "--save", missing], 1,
           err=T + "--save %s: cannot create: No such file or directory" % missing)
    expect(["train", "--task", "translate", "--max-mem", "1M"], 1,
           err=T + "training on batches of 64 pairs of num_steps 12 needs about 11.9 MiB, more "
           "than --max-mem 1 MiB")

    # JSON pairs: a small run, its printout in d2l's form, --png and --plot
    pairs = write(tmp, "pairs.json", json.dumps({
        "pairs": [["the red car", "la voiture rouge"], ["a big dog", "un grand chien"],
                  ["the big car", "la grande voiture"], ["a red dog", "un chien rouge"]],
        "heldout": {"pairs": [["the big dog", "le grand chien"]]}}))
    png, plot = os.path.join(tmp, "x.png"), os.path.join(tmp, "x.png.plot.png")
    rc, out, err = expect(["train", "--data", pairs, "--steps", "40", "--min-freq", "1",
                           "--png", png, "--plot", plot], 0,
                          out_has=["attn train: data, 40 steps in ",
                                   "the big dog => ", ", bleu ", "wrote %s: " % png,
                                   "wrote %s: loss and BLEU against the step" % plot])
    check(png_ok(png) and png_ok(plot), "train --data pairs: --png and --plot are PNGs")

    # fra.txt lines, read as d2l reads them
    fra = write(tmp, "fra.txt", "Go.\tVa !\nHi.\tSalut !\nRun!\tCours !\nRun!\tCourez !\n"
                "Wow!\tÇa alors !\n")
    rc, out, err = expect(["train", "--data", fra, "--steps", "20", "--min-freq", "1",
                           "--json", "-"], 0)
    doc = json.loads(out) if rc == 0 else {}
    rc, out, err = expect(["train", "--data", fra, "--steps", "20", "--min-freq", "1"], 0,
                          out_not=["alignment", "held-out"])
    check(doc.get("task") == "translate" and doc.get("steps") == 20
          and doc.get("final", {}).get("bleu", 0) is None,
          "train --data fra.txt: a translation run without held-out pairs: %r" % doc.get("final"))

    if slow_build("the grammar learned (600 steps)"):
        return
    # the grammar: learned, held-out BLEU and alignment high (SPEC §11)
    model = os.path.join(tmp, "m.json")
    rc, out, err = expect(["train", "--task", "translate", "--save", model, "--json", "-"], 0)
    doc = json.loads(out) if rc == 0 else {"final": {}, "history": []}
    f = doc["final"]
    check(f.get("bleu", 0) >= 0.95 and f.get("exact", 0) >= 0.9 and f.get("alignment", 0) >= 0.6,
          "train --task translate: final %r" % f)
    check(all("heldout_bleu" in h for h in doc["history"]) and len(doc["history"]) == 31,
          "train --task translate: every history entry has heldout_bleu")
    with open(model) as fh:
        saved = json.load(fh)
    check(saved.get("task") == "translate" and saved.get("arch") == "transformer"
          and saved.get("num_steps") == 12
          and "decoder.blks.block1.attention2.W_o.weight" in saved.get("state_dict", {}),
          "train --save: SPEC §11's model file")
    # --load and --steps 0: the same model, evaluated again
    rc, out2, err = expect(["train", "--task", "translate", "--load", model, "--steps", "0",
                            "--json", "-"], 0)
    f2 = json.loads(out2)["final"] if rc == 0 else {}
    check(f2.get("bleu") == f.get("bleu") and f2.get("loss") == f.get("loss"),
          "train --load --steps 0: the saved model's numbers %r, want %r" % (f2, f))
    rc, out, err = expect(["train", "--task", "translate", "--steps", "0", "--load", model], 0,
                          out_has=[" => ", "alignment ", "cross-attention of the last decoder"])
    # the same numbers with 1 and 2 threads
    outs = [run(["train", "--task", "translate", "--steps", "30", "--threads", n, "--json",
                 "-"])[1] for n in ("1", "2")]
    check(outs[0] == outs[1] and outs[0], "train --task translate: the same JSON with 1 and 2 "
          "threads")
