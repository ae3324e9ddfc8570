"""Group tour: attn tour's steps in the chapter's order, its errors, each
step alone and the whole tour, with valid figures."""
import os
import re

from .common import check, expect, heavy, need_cjk_font, png_info, slow_build


def tour_figures(out):
    """The files named in "wrote PATH: ..." lines."""
    return [line[len("wrote "):line.index(": ")] for line in out.splitlines()
            if line.startswith("wrote ") and ": " in line]


def check_figure(path, what):
    """A valid PNG of a sensible size for a figure."""
    try:
        w, h, ctype = png_info(path)
    except (OSError, AssertionError) as e:
        check(False, "%s: %s is not a valid PNG: %s" % (what, path, e))
        return
    check(200 <= w <= 2500 and 150 <= h <= 2500 and ctype == 2,
          "%s: %s is %dx%d colour type %d" % (what, path, w, h, ctype))
    check(os.path.getsize(path) > 2000, "%s: %s has only %d bytes"
          % (what, path, os.path.getsize(path)))


TOUR_STEPS = ["cues", "pooling", "scoring", "scaling", "bahdanau", "multihead", "selfattn",
              "context", "complexity", "order", "posenc", "binary", "relative", "rope",
              "learned", "circuits", "cross", "vit"]
# each step's place in zh.d2l.ai chapter 10, the one numbering of the tour
TOUR_WHERE = ["zh 10.1", "zh 10.2", "zh 10.3", "zh 10.3.3", "zh 10.4", "zh 10.5", "zh 10.6.1",
              "zh 10.6.1, the notes' example", "zh 10.6.2", "zh 10.6.3", "zh 10.6.3",
              "zh 10.6.3.1", "zh 10.6.3.2", "after zh 10.6.3.2, beyond the chapter",
              "zh 10.6's layer, trained", "zh 10.7.4, the encoder stacked",
              "zh 10.7.5, the decoder; the notes' opening", "zh 10.7's exercise 6; d2l.ai 11.8"]
TOUR_FIGURES = {
    "cues": ["01-heatmap-eye.png"],
    "pooling": ["02-pool-fits.png", "02-pool-weights.png"],
    "scoring": ["03-score-weights.png"],
    "scaling": ["04-scale-sweep.png"],
    "bahdanau": ["05-train-bahdanau.png"],
    "multihead": ["06-multihead-weights.png"],
    "selfattn": ["07-selfattn-weights.png"],
    "context": ["08-apple-context.png"],
    "complexity": ["09-complexity-loglog.png"],
    "order": ["10-permute.png", "10-permute-posenc.png"],
    "posenc": ["11-posenc-columns.png", "11-posenc-heatmap.png"],
    "binary": [],
    "relative": ["13-posenc-similarity.png"],
    "rope": ["14-posenc-concat.png", "14-rope-scores.png"],
    "learned": ["15-train-reverse.png", "15-train-reverse-no-posenc.png",
                "15-train-apple.png"],
    "circuits": ["16-train-induction.png"],
    "cross": ["17-train-translate.png"],
    "vit": ["18-train-vit.png"],
}


def group_tour(tmp):
    need_cjk_font()
    # --list: every step in order, with the commands it runs
    rc, out, _ = expect(["tour", "--list"], 0, err="")
    lines = [l for l in out.splitlines() if l[:2].strip().isdigit()]
    check([l.split()[1] for l in lines] == TOUR_STEPS,
          "tour --list: the steps in the chapter's order: %r" % lines)
    check([l[l.rindex("(") + 1:-1] for l in lines] == TOUR_WHERE and "d2l 1" not in out,
          "tour --list: every step placed by the zh edition's numbers: %r" % lines)
    check(TOUR_STEPS.index("multihead") < TOUR_STEPS.index("cross") and
          TOUR_STEPS.index("scoring") + 1 == TOUR_STEPS.index("scaling"),
          "tour: 10.5's multi-head before 10.7's cross-attention, 10.3.3 after 10.3")
    for fig in sum(TOUR_FIGURES.values(), []):
        check("@" + fig in out, "tour --list names %s" % fig)
    expect(["tour", "--help"], 0, err="", out_has=["usage: attn tour", "Examples:",
                                                    "attn tour --out figs"])
    expect(["help", "tour"], 0, err="", out_has=["usage: attn tour"])

    # usage errors
    for args, msg in [
            (["--step", "0"], "attn tour: --step: expected an integer from 1 to 18, got '0'"),
            (["--step", "19"], "attn tour: --step: expected an integer from 1 to 18, got '19'"),
            (["--step", "poem"], "attn tour: --step: expected a number from 1 to 18 or a "
                                 "step name (see attn tour --list), got 'poem'"),
            (["--out", ""], "attn tour: --out: expected a folder name, got an empty string"),
            (["--list", "--step", "2"], "attn tour: --list runs nothing; --step has no "
                                        "effect with it"),
            (["--color", "pink"], "attn tour: --color: expected auto, always or never, "
                                  "got 'pink'"),
            (["--frobnicate"], "attn tour: unknown option '--frobnicate' (see attn tour --help)"),
            (["extra"], "attn tour: unexpected argument 'extra' (see attn tour --help)"),
            (["--step", "2", "--step", "3"], None)]:
        expect(["tour"] + args, 2, err=msg)
    # run-time errors: the folder cannot be made
    afile = os.path.join(tmp, "a-file")
    with open(afile, "w") as f:
        f.write("not a folder\n")
    expect(["tour", "--step", "binary", "--out", afile], 1,
           err="attn tour: --out %s: exists and is not a folder" % afile)
    expect(["tour", "--step", "binary", "--out", afile + "/sub"], 1,
           err="attn tour: --out %s/sub: cannot make folder %s/sub: Not a directory"
           % (afile, afile))

    # --font goes to the commands, which name the file when it is bad
    rc, out, _ = expect(["tour", "--step", "context", "--out", os.path.join(tmp, "f"),
                         "--font", os.path.join(tmp, "no-such.ttf")], 1,
                        err="attn tour: --font: %s: cannot read: No such file or directory"
                        % os.path.join(tmp, "no-such.ttf"))
    check("--font %s\n" % os.path.join(tmp, "no-such.ttf") in out,
          "tour: the command line shown includes --font")
    expect(["tour", "--list", "--font", "x.ttf"], 2,
           err="attn tour: --list runs nothing; --font has no effect with it")

    # each step alone, by number and by name: exit 0, its figures valid PNGs
    for i, name in enumerate(TOUR_STEPS):
        if name in ("complexity", "learned") and heavy("tour step %s" % name):
            continue
        if name == "circuits" and slow_build("tour step circuits (two trainings of 800 steps)"):
            continue
        if name == "cross" and slow_build("tour step cross (a translation model, 150 steps)"):
            continue
        if name == "bahdanau" and slow_build("tour step bahdanau (a translation model, 200 steps)"):
            continue
        if name == "vit" and (not os.path.isdir("/usr/share/datasets/fashion-mnist")
                              or slow_build("tour step vit (3 epochs of 10,000 images)")):
            continue
        out_dir = os.path.join(tmp, "step-%d" % (i + 1), "figs")
        step = str(i + 1) if i % 2 else name
        # attn train prints its progress on stderr, as lines when not a terminal
        rc, out, err = expect(["tour", "--step", step, "--out", out_dir, "--color", "never"],
                              0, err=None if name in ("bahdanau", "cross", "learned", "circuits", "vit") else "")
        check(all(re.fullmatch(r"step \d+/\d+: loss .*", l) for l in err.splitlines()),
              "tour step %s: nothing but progress on stderr: %r" % (name, err[-300:]))
        head = "Step %d of 18 · " % (i + 1)
        check(out.startswith(head) and out.splitlines()[0].endswith(" (%s)" % TOUR_WHERE[i]),
              "tour step %s starts with %r and ends with its place: %r" % (name, head, out[:90]))
        check("\033[" not in out, "tour step %s --color never: no escapes" % name)
        want = [os.path.join(out_dir, f) for f in TOUR_FIGURES[name]]
        check(tour_figures(out) == want, "tour step %s names %r, want %r"
              % (name, tour_figures(out), want))
        check(sorted(os.listdir(out_dir)) == sorted(TOUR_FIGURES[name]),
              "tour step %s: the folder holds %r" % (name, os.listdir(out_dir)))
        for path in want:
            check_figure(path, "tour step %s" % name)
        # what each step must show, from the chapter
        if name == "cross":
            bleu = re.search(r"held-out BLEU ([0-9.]+), exact", out)
            align = re.search(r"^alignment ([0-9.]+): in the last decoder block", out, re.M)
            check(bleu and float(bleu.group(1)) >= 0.95 and align and
                  float(align.group(1)) >= 0.8,
                  "tour cross: held-out BLEU >= 0.95 and alignment >= 0.8: %r %r"
                  % (bleu and bleu.group(0), align and align.group(0)))
            check("Q ← decoder" in out and "K = V ← encoder" in out and
                  len(re.findall(r"^[a-z].* => .*, bleu [0-9.]+$", out, re.M)) >= 3,
                  "tour cross: the formula, and a few held-out sentences translated d2l's way")
        if name == "vit":
            acc = re.findall(r"^3 +[0-9.]+ +[0-9.]+ +([0-9.]+) ", out, re.M)
            check(len(acc) == 1 and float(acc[0]) >= 0.7 and "<cls>" in out
                  and "attn vit --input MODEL --index I" in out,
                  "tour vit: 3 epochs, test accuracy >= 0.7, the <cls> token, attn vit: %r" % acc)
        if name == "cues":
            check("Σ_i α(q, k_i) v_i" in out and "$ attn heatmap --eye 10" in out,
                  "tour cues: the pooling formula and the identity's command")
        if name == "pooling":
            losses = re.findall(r"^epoch (\d), loss [0-9.]+$", out, re.M)
            check(losses == ["1", "2", "3", "4", "5"] and "learned w" in out,
                  "tour pooling: the five loss lines and the learned w: %r" % losses)
        if name == "scoring":
            check(out.count("[[ 2.0000,  3.0000,  4.0000,  5.0000]]") == 2 and
                  out.count("[[10.0000, 11.0000, 12.0000, 13.0000]]") == 2 and
                  "masked_softmax(" in out,
                  "tour scoring: both cells' outputs as PyTorch prints them, and masked_softmax")
        if name == "bahdanau":
            bleu = re.search(r"held-out BLEU ([0-9.]+), exact", out)
            check(bleu and float(bleu.group(1)) >= 0.9,
                  "tour bahdanau: held-out BLEU >= 0.9: %r" % (bleu and bleu.group(0)))
        if name == "multihead":
            check(out.count("torch.Size([2, 4, 100])") == 1
                  and "(W_o): Linear(in_features=100, out_features=100, bias=False)" in out,
                  "tour multihead: the module print-out and torch.Size([2, 4, 100])")
        if name == "selfattn":
            check("torch.Size([2, 4, 100])" in out, "tour selfattn: torch.Size([2, 4, 100])")
        if name == "context":
            check("苹果: input 1.0000 (the same embedding), output" in out,
                  "tour context: 苹果's cosine similarity")
        if name == "binary":
            want_rows = ["%d in binary is %s" % (k, format(k, "03b")) for k in range(8)]
            check(all(r in out.splitlines() for r in want_rows), "tour binary: 0 … 7 in binary")
        if name == "relative":
            worst = [l for l in out.splitlines() if l.startswith("worst over")]
            check(len(worst) == 1 and float(worst[0].split(": ")[1].split()[0]) < 1e-6,
                  "tour relative: the worst error printed and small: %r" % worst)
        if name == "learned":
            acc = re.findall(r"held-out accuracy ([0-9.]+)%", out)
            check(len(acc) == 3 and float(acc[0]) >= 99 and float(acc[1]) < 60 and
                  float(acc[2]) >= 95, "tour learned: reverse with P, without, 苹果: %r" % acc)
        if name == "circuits":
            row = [l for l in out.splitlines() if l.startswith("held-out accuracy")]
            acc = row[0].split()[2:4] if row else []
            check(len(acc) == 2 and float(acc[0].rstrip("%")) <= 50 and
                  float(acc[1].rstrip("%")) >= 95 and
                  re.search(r"the circuit: layer 1 head \d copies the previous token "
                            r"\([0-9.]+\), layer 2 head \d finds the earlier copy", out),
                  "tour circuits: 1 layer <= 50%%, 2 layers >= 95%%, the two heads: %r" % row)
        if name == "complexity":
            check("self-attention" in out and "Growth exponent" in out,
                  "tour complexity: the table and the fitted exponents")

    # the whole tour into one folder (skipped under valgrind: each step ran above)
    if heavy("the whole tour") or slow_build("the whole tour"):
        return
    out_dir = os.path.join(tmp, "whole")
    rc, out, _ = expect(["tour", "--out", out_dir, "--color", "always"], 0)
    check(out.count("Step ") >= 18 and "\033[1mStep 1 of 18" in out,
          "tour --color always: bold headings for every step")
    named = tour_figures(out)
    check(len(named) == len(set(named)) == len(sum(TOUR_FIGURES.values(), [])),
          "the whole tour names each figure once: %r" % named)
    check(sorted(os.listdir(out_dir)) == sorted(sum(TOUR_FIGURES.values(), [])),
          "the whole tour writes exactly its figures: %r" % os.listdir(out_dir))
    check(out.rstrip().endswith("every figure above is in %s/." % out_dir),
          "the tour ends by naming the folder")
