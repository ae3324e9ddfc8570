"""Group train_posemb: attn train --pos-embedding sinusoid|learned|none (zh
10.6's exercise, SPEC §15): the options' errors with their exact lines, a
learned P saved and loaded (train --load, selfattn --input), a file whose
pos_embedding is missing or of the wrong shape, a sequence longer than
max_len, --compare-posenc with three columns, and --pos-png."""
import json
import os
import re

from .common import VALGRIND, check, expect, png_info, run


def group_train_posemb(tmp):
    T = "attn train: "
    expect(["train", "--help"], 0, err="", out_has=["--pos-embedding KIND", "--pos-png FILE",
                                                     "learned (d2l.ai 11.8's"])
    rc, out, _ = expect(["train", "--list-options"], 0, err="")
    check("--pos-embedding - KIND choice sinusoid learned none" in out,
          "train --list-options: --pos-embedding's choices: %r" % out)

    # usage errors: one line, exit 2
    for args, msg in [
            (["--pos-embedding", "rope"],
             "--pos-embedding: expected sinusoid, learned or none, got 'rope'"),
            (["--pos-embedding", ""], "--pos-embedding: expected sinusoid, learned or none, "
             "got ''"),
            (["--posenc", "--pos-embedding", "learned"],
             "--posenc and --pos-embedding learned: give one (--posenc is --pos-embedding "
             "sinusoid)"),
            (["--posenc", "--pos-embedding", "none"],
             "--posenc and --pos-embedding none: give one (--posenc is --pos-embedding "
             "sinusoid)"),
            (["--no-posenc", "--pos-embedding", "sinusoid"],
             "--no-posenc and --pos-embedding sinusoid: give one (--no-posenc is "
             "--pos-embedding none)"),
            (["--compare-posenc", "--pos-embedding", "none"],
             "--compare-posenc already trains with the sinusoid and with none; "
             "--pos-embedding learned adds the learned P as a third"),
            (["--compare-posenc", "--pos-embedding", "sinusoid"],
             "--compare-posenc already trains with the sinusoid and with none; "
             "--pos-embedding learned adds the learned P as a third"),
            (["--pos-png", "p.png"], "--pos-png draws a learned P: give --pos-embedding learned"),
            (["--pos-embedding", "none", "--pos-png", "p.png"],
             "--pos-png draws a learned P: give --pos-embedding learned"),
            (["--load", "m.json", "--pos-embedding", "learned"],
             "--pos-embedding is read from the model file of --load"),
            (["--compare-layers", "--layers", "2", "--pos-embedding", "learned", "--pos-png",
              "p.png"],
             "--compare-layers trains 1 layer and N and keeps neither; --pos-png cannot be used "
             "with it"),
            (["--task", "translate", "--pos-embedding", "learned"],
             "--pos-embedding is not used by translation: the Transformer always adds the "
             "sinusoid P (a learned P is for the encoder tasks)"),
            (["--task", "translate", "--pos-png", "p.png"],
             "--pos-png is not used by translation: it draws the learned P of the encoder "
             "tasks")]:
        expect(["train"] + args, 2, err=T + msg)
    # the agreeing old names are accepted
    expect(["train", "--posenc", "--pos-embedding", "sinusoid", "--steps", "1"], 0,
           out_has=["with P"])
    expect(["train", "--no-posenc", "--pos-embedding", "none", "--steps", "1"], 0,
           out_has=["without P"])
    missing = os.path.join(tmp, "no", "such.png")
    expect(["train", "--pos-embedding", "learned", "--steps", "100000", "--pos-png", missing], 1,
           err=T + "--pos-png %s: cannot create: No such file or directory" % missing)

    # a learned P trained, saved, drawn; the file says which and holds it
    model, fig = os.path.join(tmp, "m.json"), os.path.join(tmp, "p.png")
    rc, out, _ = expect(["train", "--pos-embedding", "learned", "--steps", "30", "--save", model,
                         "--pos-png", fig], 0,
                        out_has=["with a learned P (max_len 8)", "learned P (max_len 8): moved ",
                                 "% from its start (‖P − P₀‖ / ‖P₀‖)\nmean cosine of positions "
                                 "|i−j| = 1 apart / further apart:\n  learned P  ",
                                 "\n  sinusoid    0.96 /  0.78   (a band on P·Pᵀ's diagonal)"])
    check(re.search(r"wrote .*p\.png: the learned P \(8 × 32\) and P·Pᵀ beside the "
                    r"sinusoid's, \d+×\d+ px", out) is not None, "train --pos-png: %r" % out)
    w, h, _ = png_info(fig)
    check(w > 600 and h > 400, "train --pos-png: P over two P·Pᵀ: %dx%d" % (w, h))
    saved = json.load(open(model))
    sd = saved["state_dict"]
    check(saved["pos_embedding"] == "learned" and "posenc" not in saved and
          list(sd)[:2] == ["pos_embedding", "embedding.weight"] and
          len(sd["pos_embedding"]) == 1 and len(sd["pos_embedding"][0]) == 8 and
          len(sd["pos_embedding"][0][0]) == 32,
          "train --save: \"pos_embedding\": \"learned\", the (1, 8, 32) parameter first")
    # loaded: the same final figures; then a longer task refused, naming both lengths
    j1, j2 = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    expect(["train", "--pos-embedding", "learned", "--steps", "30", "--json", j1], 0)
    rc, out, _ = expect(["train", "--load", model, "--steps", "0", "--json", j2], 0,
                        out_has=["with a learned P (max_len 8), from --load",
                                 "\nlearned P (max_len 8)\nmean cosine"])
    check("moved" not in out, "train --load: P's start unknown, no 'moved': %r" % out)
    check(json.load(open(j1))["final"] == json.load(open(j2))["final"],
          "train --load: a learned P gives back the saved model's final figures")
    expect(["train", "--load", model, "--length", "12", "--steps", "1", "--json", j2], 1,
           err=T + "--load %s: sequences of 12 positions, but pos_embedding holds 8 (max_len)"
           % model)
    expect(["train", "--load", model, "--steps", "3"], 0, out_has=["3 steps", "from --load"])
    expect(["selfattn", "--input", model, "--tokens", "1 2 3 4 5 6 7 8 9"], 1,
           err="attn selfattn: --tokens: 9 tokens, but the learned P of %s holds 8 positions "
               "(max_len)" % model)
    sj = os.path.join(tmp, "sa.json")
    expect(["selfattn", "--input", model, "--tokens", "1 2 3 4 5 6 7 8", "--json", sj], 0)
    check(len(json.load(open(sj))["attention_weights"][0][0]) == 8,
          "selfattn --input LEARNED: 8 positions")
    # --pos-png of a loaded model without a learned P
    plain = os.path.join(tmp, "plain.json")
    expect(["train", "--steps", "1", "--save", plain], 0)
    expect(["train", "--load", plain, "--steps", "0", "--pos-png", fig], 1,
           err=T + "--pos-png: the model of --load %s has no learned P (pos_embedding)" % plain)

    # broken files: one line naming the JSON path, exit 1
    def variant(name, change):
        doc = json.load(open(model))
        change(doc)
        path = os.path.join(tmp, name)
        json.dump(doc, open(path, "w"))
        return path
    cases = [
        ("short.json", lambda d: d["state_dict"].update(
            pos_embedding=[[r[:16] for r in d["state_dict"]["pos_embedding"][0]]]),
         "$.state_dict[\"pos_embedding\"]: expected shape (1, max_len, 32) with max_len 1 … "
         "512, got (1, 8, 16)"),
        ("flat.json", lambda d: d["state_dict"].update(
            pos_embedding=d["state_dict"]["pos_embedding"][0]),
         "$.state_dict[\"pos_embedding\"]: expected shape (1, max_len, 32) with max_len 1 … "
         "512, got (8, 32)"),
        ("two.json", lambda d: d["state_dict"].update(
            pos_embedding=d["state_dict"]["pos_embedding"] * 2),
         "$.state_dict[\"pos_embedding\"]: expected shape (1, max_len, 32) with max_len 1 … "
         "512, got (2, 8, 32)"),
        ("ragged.json", lambda d: d["state_dict"]["pos_embedding"][0][3].pop(),
         None),
        ("gone.json", lambda d: d["state_dict"].pop("pos_embedding"),
         "$.state_dict: missing \"pos_embedding\" (the model's learned P)"),
        ("kind.json", lambda d: d.update(pos_embedding="learnt"),
         "$.pos_embedding: expected \"sinusoid\", \"learned\" or \"none\", got \"learnt\""),
        ("number.json", lambda d: d.update(pos_embedding=1),
         "$.pos_embedding: expected \"sinusoid\", \"learned\" or \"none\", got a number"),
        ("disagree.json", lambda d: d.update(posenc=True),
         "$.posenc: true, but $.pos_embedding is \"learned\""),
        ("extra.json", lambda d: d.update(pos_embedding="sinusoid"),
         "$.state_dict[\"pos_embedding\"]: not a parameter of this model")]
    for name, change, msg in cases:
        path = variant(name, change)
        for args, who in ((["train", "--load", path, "--steps", "0"], "train: --load "),
                          (["selfattn", "--input", path, "--tokens", "1 2"], "selfattn: ")):
            rc, _, err = run(args)
            if msg is None:  # the JSON reader's own words: one line naming the path
                check(rc == 1 and err.startswith("attn %s%s: $.state_dict[\"pos_embedding\"]"
                                                 % (who, path)) and err.count("\n") == 1,
                      "%s: a ragged pos_embedding: %r" % (name, err))
            else:
                check(rc == 1 and err == "attn %s%s: %s\n" % (who, path, msg),
                      "%s %s: %r" % (args[0], name, err))

    # --compare-posenc with learned: the three side by side, and the figure
    steps = "40" if VALGRIND else "150"
    rc, out, _ = expect(["train", "--task", "previous", "--compare-posenc", "--pos-embedding",
                         "learned", "--steps", steps, "--seed", "1", "--pos-png", fig], 0,
                        out_has=["the same batches and weights with each P", "sinusoid",
                                 "learned", "none", "held-out ≥ 99% at step",
                                 "learned P (max_len 8): moved"])
    row = [l for l in out.splitlines() if l.startswith("held-out accuracy")][0].split()
    check(len(row) == 5, "train --compare-posenc --pos-embedding learned: three columns: %r" % row)
    if not VALGRIND:
        check(float(row[2].rstrip("%")) >= 99 and float(row[3].rstrip("%")) >= 99 and
              float(row[4].rstrip("%")) < 60,
              "previous: sinusoid and learned >= 99%%, none < 60%%: %r" % row)
    check(png_info(fig)[0] > 600, "train --compare-posenc --pos-png: the learned run's P")
