#!/usr/bin/env python3
"""CLI tests for attn: exit codes, exact error lines, outputs and files.

usage: cli_test.py ATTN GROUP

Each group is one meson test. A case runs attn with arguments and checks
the exit status, the exact stderr line for errors, what stdout contains,
and which files exist afterwards. Meson's should_fail cannot check an exact
exit code, hence this runner. Only the standard library is used.
"""
import hashlib
import json
import math
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

ATTN = None
FAILED = []
COUNT = 0

# `meson test --setup=valgrind` sets ATTN_VALGRIND: every attn run is then
# wrapped in valgrind, and a memory error or a definite or indirect leak
# exits 99, which no exact exit-code check accepts (libgomp's still-reachable
# blocks are not errors). The slowest cases are skipped there (heavy()).
VALGRIND = ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect"] if os.environ.get("ATTN_VALGRIND") else []


def heavy(what):
    """True (and says so) when a slow case is skipped under valgrind."""
    if VALGRIND:
        print("skipped under valgrind (too slow there): %s" % what)
    return bool(VALGRIND)


# The fonts every run sees, whatever the machine has: no $ATTN_FONT, the
# search list naming only the CJK font scripts/setup.sh installs (Debian's
# fonts-wqy-microhei), and fontconfig reading a configuration without fonts
# (FONTS_ENV["FONTCONFIG_FILE"] is set by main). A case's env overrides
# these; a value None removes the variable (ATTN_FONT_SEARCH: None lets
# attn ask fontconfig).
WQY = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
FONTS_ENV = {"ATTN_FONT": None, "ATTN_FONT_SEARCH": WQY}


def run(args, env=None, stdout=subprocess.PIPE, cwd=None, stdin=None):
    """Run attn; stdin may be bytes to feed it."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e["COLUMNS"] = "80"
    for k, v in list(FONTS_ENV.items()) + list((env or {}).items()):
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    p = subprocess.run(VALGRIND + [ATTN] + args, stdout=stdout, stderr=subprocess.PIPE,
                       input=stdin, env=e, cwd=cwd, timeout=1200 if VALGRIND else 120)
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    errtext = p.stderr.decode("utf-8", "replace")
    if VALGRIND:
        check(p.returncode != 99, "attn %s: valgrind reports errors or leaks:\n%s"
              % (" ".join(args), errtext))
    return p.returncode, out, errtext


def check(cond, what):
    """Count a check, report it when it fails; cond, for chaining."""
    global COUNT
    COUNT += 1
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)
    return cond


def expect(args, code, err=None, out_has=(), out_not=(), env=None, stdin=None):
    """Run attn; check the exit code, the exact stderr (when err is given)
    and substrings of stdout."""
    rc, out, errtext = run(args, env=env, stdin=stdin)
    name = "attn " + " ".join(args)
    check(rc == code, "%s: exit %d, want %d (stderr: %r)" % (name, rc, code, errtext))
    if err is not None:
        want = err + "\n" if err else ""
        check(errtext == want, "%s: stderr %r, want %r" % (name, errtext, want))
    for s in out_has:
        check(s in out, "%s: stdout lacks %r" % (name, s))
    for s in out_not:
        check(s not in out, "%s: stdout has %r" % (name, s))
    return rc, out, errtext


def png_info(path):
    """(width, height, colour type) from a PNG's IHDR, after checking the
    signature and every chunk's CRC."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, ihdr = 8, None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(kind + body) == crc, "bad CRC in %r" % kind
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        pos += 12 + n
        if kind == b"IEND":
            break
    assert ihdr is not None
    return ihdr[0], ihdr[1], ihdr[3]


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
            (["--task", "poem"], "--task: expected reverse, previous or apple, got 'poem'"),
            (["--lr", "0"], "--lr: expected a positive number, got '0'"),
            (["--lr", "-0.1"], "--lr: expected a positive number, got '-0.1'"),
            (["--lr", "abc"], "--lr: expected a positive number, got 'abc'"),
            (["--lr", "nan"], "--lr: expected a positive number, got 'nan'"),
            (["--optimizer", "rmsprop"], "--optimizer: expected adam or sgd, got 'rmsprop'"),
            (["--posenc", "--no-posenc"], "--posenc and --no-posenc: give one"),
            (["--hiddens", "30", "--heads", "4"], "--hiddens 30 is not divisible by --heads 4"),
            (["--task", "apple", "--length", "5"],
             "--length is for reverse and previous; apple's sentences are its corpus's"),
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
    check(not os.path.exists(out_json), "train: no --json after bad data")
    model = os.path.join(tmp, "small.json")
    expect(["train", "--data", ok, "--steps", "5", "--save", model, "--hiddens", "8",
            "--heads", "2"], 0)
    rc, _, err = run(["train", "--data", oov, "--load", model, "--steps", "1"])
    check(rc == 1 and err.startswith(T + oov + ": ") and "zz" in err and err.count("\n") == 1,
          "train --load: a target outside the model's vocabulary: %r" % err)
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
    check(len(heads) == 4 and png_info(sp)[0] > 0 and cue > 0.3,
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


# ---- groups -------------------------------------------------------------

def group_general(tmp):
    rc, out, _ = expect(["--help"], 0, err="", out_has=["usage: attn COMMAND", "posenc",
                                                       "selfattn", "complexity", "tour"])
    expect(["help"], 0, err="", out_has=["usage: attn COMMAND"])
    expect(["--version"], 0, err="", out_has=["attn 0.1.0\n"])
    expect(["help", "posenc"], 0, err="", out_has=["usage: attn posenc", "Examples:"])
    expect(["posenc", "--help"], 0, err="", out_has=["usage: attn posenc", "--check-relative"])
    expect(["posenc", "-h"], 0, err="", out_has=["usage: attn posenc"])
    expect(["help", "complexity"], 0, err="", out_has=["usage: attn complexity", "Examples:"])
    expect(["help", "multihead"], 0, err="", out_has=["usage: attn multihead", "Examples:"])
    expect(["selfattn", "--help"], 0, err="", out_has=["usage: attn selfattn", "Examples:"])
    # every command is built, and every --help ends with examples to copy
    commands = [l.split()[0] for l in out.split("Commands:\n")[1].split("\n\n")[0].splitlines()]
    check(commands == ["selfattn", "multihead", "posenc", "complexity", "train", "tour"],
          "attn --help lists the commands: %r" % commands)
    check("not built" not in out, "attn --help: every command is built")
    for c in commands:
        rc, text, _ = expect([c, "--help"], 0, err="", out_has=["usage: attn %s" % c])
        examples = text.split("Examples:\n")[-1].splitlines() if "Examples:\n" in text else []
        check(sum(1 for l in examples if l.strip().startswith("attn %s" % c)) >= 1,
              "attn %s --help shows at least one example" % c)
    # the man page and the README name only options that exist
    helps = "".join(run([c, "--help"])[1] for c in commands)
    here = os.path.dirname(os.path.abspath(__file__))
    for doc in ["doc/attn.1.scd", "README.md"]:
        with open(os.path.join(here, "..", doc), encoding="utf-8") as f:
            text = f.read()
        named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", text))
        named -= {"--destdir", "--setup", "--suite", "--help", "--version", "--change",
                  "--list-commands", "--list-options"}
        stale = sorted(o for o in named if o not in helps)
        check(not stale, "%s names options no command has: %r" % (doc, stale))
        check(all(c in text for c in commands), "%s describes every command" % doc)
    # a value given to an option that takes none, in full or abbreviated
    expect(["posenc", "--numbers=1"], 2,
           err="attn posenc: option '--numbers' takes no value, got '--numbers=1'")
    expect(["multihead", "--nai=yes"], 2,
           err="attn multihead: option '--naive' takes no value, got '--nai=yes'")
    expect(["tour", "--list=all"], 2,
           err="attn tour: option '--list' takes no value, got '--list=all'")
    expect(["posenc", "--numbers", "-xd", "3"], 2,
           err="attn posenc: unknown option '-x' (see attn posenc --help)")
    expect(["frobnicate"], 2, err="attn: unknown command 'frobnicate' (see attn --help)")
    expect(["help", "frobnicate"], 2, err="attn: unknown command 'frobnicate' (see attn --help)")
    expect(["--frob"], 2, err="attn: unknown option '--frob' (see attn --help)")
    rc, out, errtext = run([])
    check(rc == 2 and "usage: attn COMMAND" in errtext and out == "",
          "attn without a command: usage on stderr, exit 2")


def group_posenc_options(tmp):
    P = "attn posenc: "
    expect(["posenc", "--dim", "0"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000000, got '0'")
    expect(["posenc", "--dim", "abc"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000000, got 'abc'")
    expect(["posenc", "--dim", "12x"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000000, got '12x'")
    expect(["posenc", "--dim="], 2,
           err=P + "--dim: expected an integer from 1 to 1000000000, got ''")
    expect(["posenc", "--dim", " 5"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000000, got ' 5'")
    expect(["posenc", "--dim", "99999999999999999999999"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000000, "
                   "got '99999999999999999999999'")
    expect(["posenc", "--steps", "-1"], 2,
           err=P + "--steps: expected an integer from 1 to 1000000000000, got '-1'")
    expect(["posenc", "--base", "0"], 2,
           err=P + "--base: expected a number from 1e-300 to 1e+300, got '0'")
    expect(["posenc", "--base", "nan"], 2,
           err=P + "--base: expected a number from 1e-300 to 1e+300, got 'nan'")
    expect(["posenc", "--base", "1e400"], 2,
           err=P + "--base: expected a number from 1e-300 to 1e+300, got '1e400'")
    expect(["posenc", "--frob"], 2, err=P + "unknown option '--frob' (see attn posenc --help)")
    expect(["posenc", "-x"], 2, err=P + "unknown option '-x' (see attn posenc --help)")
    expect(["posenc", "--dim"], 2, err=P + "option '--dim' needs a value")
    expect(["posenc", "-d"], 2, err=P + "option '-d' needs a value")
    expect(["posenc", "--dim", "8", "--dim", "16"], 2, err=P + "option '--dim' given twice")
    expect(["posenc", "extra"], 2, err=P + "unexpected argument 'extra' (see attn posenc --help)")
    expect(["posenc", "--cols", "6-9"], 2,
           err=P + "--cols chooses columns for --plot, which is not given")
    expect(["posenc", "--plot", os.path.join(tmp, "p.png"), "--cols", "9-6"], 2,
           err=P + "--cols: expected columns like 6-9 or 0,1,4-5, got '9-6'")
    expect(["posenc", "--plot", os.path.join(tmp, "p.png"), "--cols", "6-"], 2,
           err=P + "--cols: expected columns like 6-9 or 0,1,4-5, got '6-'")
    expect(["posenc", "--dim", "8", "--plot", os.path.join(tmp, "p.png"), "--cols", "6-9"], 2,
           err=P + "--cols: column 8 does not exist for --dim 8 (columns 0 … 7)")
    expect(["posenc", "--binary", "0"], 2,
           err=P + "--binary: expected an integer from 1 to 65536, got '0'")
    expect(["posenc", "--check-relative", "60"], 2,
           err=P + "--check-relative: offsets must lie between -59 and 59 for --steps 60")
    expect(["posenc", "--check-relative", "5:1"], 2,
           err=P + "--check-relative: the range 5:1 is empty (FROM > TO)")
    expect(["posenc", "--check-relative", "x"], 2,
           err=P + "--check-relative: expected an integer from -1000000000000 to 1000000000000, got 'x'")
    expect(["posenc", "--dim", "1", "--check-relative", "1"], 2,
           err=P + "--check-relative: --dim 1 has no (sin, cos) column pair to rotate")
    expect(["posenc", "--cmap", "jet"], 2,
           err=P + "--cmap: unknown colormap 'jet' (known: Reds, Blues, viridis, gray)")
    expect(["posenc", "--color", "sometimes"], 2,
           err=P + "--color: expected auto, always or never, got 'sometimes'")
    expect(["posenc", "--max-mem", "lots"], 2,
           err=P + "--max-mem: expected a positive size in bytes with an optional suffix "
                   "K, M, G or T, got 'lots'")
    # refused up front, with the estimate
    expect(["posenc", "--steps", "100000000", "--dim", "1000000"], 1,
           err=P + "--steps 100000000 --dim 1000000 needs about 364 TiB, more than "
                   "--max-mem 4 GiB")
    expect(["posenc", "--steps", "10000", "--dim", "512", "--max-mem", "1M"], 1,
           err=P + "--steps 10000 --dim 512 needs about 51.5 MiB, more than --max-mem 1 MiB")
    expect(["posenc", "--steps", "100000", "--similarity", os.path.join(tmp, "s.png")], 1,
           err=P + "--steps 100000 --dim 32 with --similarity needs about 37.3 GiB, more "
                   "than --max-mem 4 GiB")
    check(not os.path.exists(os.path.join(tmp, "s.png")), "refused run wrote no file")


def group_posenc_outputs(tmp):
    # the default view: the formula, the shape, aligned numbers off a terminal
    rc, out, _ = expect(["posenc", "--dim", "4", "--steps", "3"], 0, err="",
                        out_has=["P.shape: torch.Size([3, 4])",
                                 "P[i, 2j]   = sin(i / 10000^(2j/4))",
                                 "[[ 0.0000,  1.0000,  0.0000,  1.0000],",
                                 " [ 0.8415,  0.5403,  0.0100,  0.9999],",
                                 " [ 0.9093, -0.4161,  0.0200,  0.9998]]"],
                        out_not=["\x1b["])
    # colour when asked, none under NO_COLOR with auto
    expect(["posenc", "--color", "always"], 0, out_has=["\x1b[38;2;", "\u2580"])
    expect(["posenc", "--color", "auto"], 0, env={"NO_COLOR": "1"}, out_not=["\x1b["])
    expect(["posenc", "--color", "always", "--numbers"], 0, out_not=["\x1b["],
           out_has=["[[ 0.0000,  1.0000,"])

    # JSON to stdout: values from the formula, computed here independently
    rc, out, errtext = expect(["posenc", "--dim", "7", "--steps", "5", "--json", "-"], 0,
                              err="")
    doc = json.loads(out)
    check(doc["command"] == "posenc" and doc["dim"] == 7 and doc["steps"] == 5 and
          doc["base"] == 10000, "posenc JSON header")
    worst = 0.0
    for i in range(5):
        for c in range(7):
            w = i / 10000 ** ((c // 2 * 2) / 7)
            want = math.sin(w) if c % 2 == 0 else math.cos(w)
            worst = max(worst, abs(doc["P"][i][c] - want))
    check(len(doc["P"]) == 5 and all(len(r) == 7 for r in doc["P"]), "P shape (5, 7)")
    check(worst <= 1e-7, "posenc JSON values within 1e-7 of the formula (worst %g)" % worst)
    # --base in the header and the values
    rc, out, _ = expect(["posenc", "--dim", "2", "--steps", "3", "--base", "0.5",
                         "--json", "-"], 0)
    doc = json.loads(out)
    check(doc["base"] == 0.5 and abs(doc["P"][2][0] - math.sin(2.0)) < 1e-7,
          "--base 0.5 with D=2: omega_0 = 1")

    # JSON to a file, and the same bytes as to stdout
    jpath = os.path.join(tmp, "p.json")
    rc, out, _ = expect(["posenc", "--json", jpath], 0, err="",
                        out_has=["wrote %s: P as JSON, 60 × 32" % jpath])
    with open(jpath) as f:
        text = f.read()
    rc, out, _ = run(["posenc", "--json", "-"])
    check(text == out, "--json FILE and --json - write the same text")
    check(oct(os.stat(jpath).st_mode & 0o777) != oct(0o600), "output file mode is not 0600")

    # the chapter's figures
    png = os.path.join(tmp, "out.png")
    rc, out, _ = expect(["posenc", "--dim", "32", "--steps", "60", "--png", png], 0, err="",
                        out_has=["wrote %s: heatmap of P, 60 × 32, " % png])
    w, h, ctype = png_info(png)
    check(ctype == 2 and w >= 400 and h >= 400 and w <= 1600 and h <= 1600,
          "posenc PNG is RGB and of sensible size (%dx%d)" % (w, h))
    check(("%d×%d px" % (w, h)) in out, "the report gives the PNG's size")
    plot = os.path.join(tmp, "cols.png")
    rc, out, _ = expect(["posenc", "--plot", plot], 0, err="",
                        out_has=["wrote %s: 4 columns of P against position" % plot])
    w, h, ctype = png_info(plot)
    check(w >= 400 and h >= 150 and w > h, "plot PNG size (%dx%d)" % (w, h))
    sim = os.path.join(tmp, "sim.png")
    expect(["posenc", "--steps", "100", "--similarity", sim], 0, err="",
           out_has=["wrote %s: heatmap of P·Pᵀ, 100 × 100" % sim])
    png_info(sim)
    # the long case stays a readable size
    big = os.path.join(tmp, "big.png")
    if not heavy("posenc --dim 512 --steps 10000 --png"):
        expect(["posenc", "--dim", "512", "--steps", "10000", "--png", big], 0, err="")
        w, h, _ = png_info(big)
        check(w <= 1600 and h <= 1400,
              "10000x512 heatmap is pooled to a sane size (%dx%d)" % (w, h))
    # without other outputs the heatmap reads P's rows as they are made: the
    # same figure as from the stored P (--check-relative needs it stored)
    made = os.path.join(tmp, "made.png")
    expect(["posenc", "--dim", "64", "--steps", "3000", "--png", made], 0)
    stored = os.path.join(tmp, "stored.png")
    expect(["posenc", "--dim", "64", "--steps", "3000", "--png", stored, "--check-relative", "1"], 0)
    check(open(made, "rb").read() == open(stored, "rb").read(),
          "the heatmap of rows made on demand equals that of the stored P")
    # one column, one step: degenerate but fine
    one = os.path.join(tmp, "one.png")
    expect(["posenc", "--dim", "1", "--steps", "1", "--png", one, "--plot",
            os.path.join(tmp, "one_plot.png")], 0, err="")
    png_info(one)

    # the binary table, exactly as the chapter prints it (in English)
    rc, out, _ = expect(["posenc", "--binary", "8"], 0, err="")
    want = "".join("%d in binary is %s\n" % (i, format(i, "03b")) for i in range(8))
    check(out == want, "--binary 8 prints the chapter's table")
    rc, out, _ = expect(["posenc", "--binary", "1"], 0)
    check(out == "0 in binary is 0\n", "--binary 1")
    rc, out, _ = expect(["posenc", "--binary", "9"], 0)
    check(out.splitlines()[8] == "8 in binary is 1000", "--binary 9 uses 4 bits")

    # the relative-position check, every offset 1 … 50 below 1e-5
    rc, out, _ = expect(["posenc", "--steps", "100", "--check-relative", "1:50"], 0, err="")
    vals = [float(l.rsplit("=", 1)[1]) for l in out.splitlines() if l.startswith("  δ = ")]
    check(len(vals) == 50 and max(vals) < 1e-5, "check-relative 1:50 all below 1e-5")
    check("worst over δ = 1 … 50:" in out, "check-relative range summary")
    rc, out, _ = expect(["posenc", "--dim", "7", "--check-relative", "5"], 0,
                        out_has=["δ = 5    55 positions × 3 pairs", "column 6, a sin"])
    # --json - keeps stdout pure JSON; reports go to stderr
    rc, out, errtext = expect(["posenc", "--json", "-", "--png", png], 0)
    json.loads(out)
    check(errtext.startswith("wrote %s" % png), "with --json -, reports go to stderr")


def group_posenc_files(tmp):
    P = "attn posenc: "
    # unwritable: a missing folder, a directory, no file left behind
    missing = os.path.join(tmp, "no", "such", "out.png")
    expect(["posenc", "--png", missing], 1,
           err=P + "%s: cannot create: No such file or directory" % missing)
    check(not os.path.exists(os.path.dirname(missing)), "nothing created for a missing folder")
    expect(["posenc", "--png", tmp], 1, err=P + "%s: cannot write: Is a directory" % tmp)
    expect(["posenc", "--json", tmp], 1, err=P + "%s: cannot write: Is a directory" % tmp)
    # a read-only folder (root ignores permissions, so only when not root)
    if os.geteuid() != 0:
        ro = os.path.join(tmp, "ro")
        os.mkdir(ro, 0o555)
        expect(["posenc", "--png", os.path.join(ro, "x.png")], 1,
               err=P + "%s: cannot create: Permission denied" % os.path.join(ro, "x.png"))
    # a full device: stdout and a file
    with open("/dev/full", "w") as full:
        rc, out, errtext = run(["posenc", "--json", "-"], stdout=full)
    check(rc == 1 and errtext == P + "write error on standard output: No space left on device\n",
          "--json - > /dev/full: exit 1 and a message (%d %r)" % (rc, errtext))
    with open("/dev/full", "w") as full:
        rc, out, errtext = run(["posenc", "--binary", "8"], stdout=full)
    check(rc == 1 and "write error on standard output" in errtext, "--binary > /dev/full")
    # a device is written in place, never replaced by a renamed file
    import stat
    expect(["posenc", "--json", "/dev/null"], 0, err="")
    check(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is still a device")
    expect(["posenc", "--json", "/dev/full"], 1,
           err=P + "/dev/full: cannot write: No space left on device")
    expect(["posenc", "--png", "/dev/full"], 1,
           err=P + "/dev/full: cannot write: No space left on device")
    check(stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full is still a device")
    # a failed run leaves an existing file untouched
    keep = os.path.join(tmp, "keep.png")
    with open(keep, "wb") as f:
        f.write(b"old contents")
    expect(["posenc", "--png", keep, "--plot", os.path.join(tmp, "nope", "p.png")], 1)
    # (the PNG was written before the plot failed: it is complete and new)
    png_info(keep)
    with open(keep, "wb") as f:
        f.write(b"old contents")
    expect(["posenc", "--steps", "200000", "--dim", "10000", "--png", keep, "--check-relative", "1"],
           1)
    with open(keep, "rb") as f:
        check(f.read() == b"old contents", "a refused run leaves the old file untouched")
    # no temporary files are left in the folder
    left = [n for n in os.listdir(tmp) if ".png." in n or ".json." in n]
    check(left == [], "no temporary files left behind: %r" % left)
    # a closed pipe: quiet exit on SIGPIPE or exit 1 with a message, never a crash
    if heavy("posenc --dim 512 --steps 10000 --json - | head -c 10"):
        return
    p = subprocess.Popen("%s posenc --dim 512 --steps 10000 --json - | head -c 10" % ATTN,
                         shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    check(out == b'{\n  "comma', "head -c 10 got the start of the JSON")
    check(b"Sanitizer" not in err and b"Segmentation" not in err, "no crash on a closed pipe")


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def group_attention_errors(tmp):
    """Bad JSON inputs: each message names the file, the JSON path, the
    expected and the found shape."""
    M = "attn multihead: "
    eye = "[[1,0],[0,1]]"
    sd = ('"state_dict": {"W_q.weight": %s, "W_k.weight": %s, "W_v.weight": %s, '
          '"W_o.weight": %s' % (eye, eye, eye, eye))
    cases = [
        ('{"queries": [[[1,2],[3]]], "num_heads": 1}', 1,
         "$.queries[0][1]: expected 2 numbers, got 1"),
        ('{"queries": [[[1,"x"]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a number, got a string"),
        ('{"queries": [[[1,true]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a number, got a boolean"),
        ('{"queries": [[[1,2]]], "keys": [[[1,2]],[[1,2]]], "num_heads": 1}', 1,
         "$.keys: expected batch 1 like $.queries (1, 1, 2), got shape (2, 1, 2)"),
        ('{"queries": [[[1,2]]], "keys": [[[1,2],[3,4]]], "values": [[[1,2]]], "num_heads": 1}', 1,
         "$.values: expected shape (1, 2, value_size) to pair with $.keys (1, 2, 2), got (1, 1, 2)"),
        ('{"queries": [[[1,2]]], "values": [[[1,2]]], "num_heads": 1}', 1,
         '$.values: given without "keys" (values pair with keys)'),
        ('{"queries": [[[1,2,3]]], "num_heads": 2}', 2,
         "num_hiddens 3 (the width of $.queries) is not divisible by num_heads 2 ($.num_heads)"),
        ('{"queries": [[[1,2]]], "valid_lens": [-1], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got -1"),
        ('{"queries": [[[1,2]]], "valid_lens": [1.5], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got 1.5"),
        ('{"queries": [[[1,2]]], "valid_lens": ["1"], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got a string"),
        ('{"queries": [[[1,2]]], "valid_lens": [1, 2], "num_heads": 1}', 1,
         "$.valid_lens: expected 1 length (one per example) or a (1, 1) array, got 2"),
        ('{"queries": [[[1,2],[3,4]]], "valid_lens": [[1,2,3]], "num_heads": 1}', 1,
         "$.valid_lens: expected shape (1,) or (1, 2), got (1, 3)"),
        ('{"queries": [[[1,1e400]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a finite float32 number, got inf"),
        ('{"queries": [[[1,1e39]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a finite float32 number, got 1e+39"),
        ('{"queries": [[[1,2]]], "num_heads": 1, %s, "W_x.weight": [[1]]}}' % sd, 1,
         '$.state_dict["W_x.weight"]: unknown key (known: W_q.weight, W_q.bias, W_k.weight, '
         'W_k.bias, W_v.weight, W_v.bias, W_o.weight, W_o.bias, attention.W_q.weight, '
         'attention.W_k.weight, attention.w_v.weight)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1,0,0],[0,1,0]], '
         '"W_k.weight": %s, "W_v.weight": %s, "W_o.weight": %s}}' % (eye, eye, eye), 1,
         '$.state_dict["W_q.weight"]: expected shape (2, 2) (num_hiddens × query_size 2), got (2, 3)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, %s, "W_o.bias": [1,2,3]}}' % sd, 1,
         '$.state_dict["W_o.bias"]: expected shape (2,) (num_hiddens), got (3,)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, "state_dict": {"W_q.weight": %s}}' % eye, 1,
         '$.state_dict: missing "W_k.weight" (W_q, W_k, W_v and W_o weights are all needed)'),
        ('{"queries": [[[1,2]]], "num_heads": 3, %s}}' % sd, 2,
         "num_hiddens 2 (the rows of W_q.weight) is not divisible by num_heads 3 ($.num_heads)"),
        ('{"queries": [[[1,2]]], "num_heads": 1, "foo": 1}', 1,
         "$.foo: unknown key (known: queries, keys, values, valid_lens, num_heads, state_dict, "
         "query_tokens, key_tokens, command, shape, output, attention_weights)"),
        ('{"queries": [[[1,2]]], "num_heads": 1, "queries": [[[3,4]]]}', 1,
         "$.queries: the key appears twice"),
        ('{"queries": [[[1,2]]], "num_heads": 0}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got 0"),
        ('{"queries": [], "num_heads": 1}', 1, "$.queries: an empty array"),
        ('{"queries": [1, 2], "num_heads": 1}', 1,
         "$.queries: expected a 2-D or deeper array of numbers, got a 1-D array"),
        ('{"queries": [[[[[1]]]]], "num_heads": 1}', 1,
         "$.queries: expected at most 3 nested arrays, found more"),
        ('{"queries": [[[1,2]]], "query_tokens": ["a", "b"], "num_heads": 1}', 1,
         "$.query_tokens: expected 1 labels, got 2"),
        ('{"queries": [[[1,2]]], "num_heads": 1', 1, "line 1, column 38: the JSON ends too early"),
        ('{"queries": [[[1,2]]],\n "num_heads": 1\n', 1, "line 3, column 1: the JSON ends too early"),
        ('{"queries": [[[1,2]]]} xx', 1, "line 1, column 24: unexpected text after the JSON value"),
        ('', 1, "empty: expected a JSON object"),
        ('[1, 2]', 1, "$: expected an object, got an array"),
        ('{"queries": [[[1,NaN]]]}', 1,
         "line 1, column 18: NaN is not a JSON number (NaN and Infinity are not allowed)"),
    ]
    for i, (text, code, msg) in enumerate(cases):
        path = write(tmp, "bad%02d.json" % i, text)
        expect(["multihead", "--input", path], code, err=M + "%s: %s" % (path, msg))
    S = "attn selfattn: "
    path = write(tmp, "self.json", '{"X": [[[1,2]]], "tokens": ["a","b"]}')
    expect(["selfattn", "--input", path], 2,
           err=S + "%s: num_hiddens 2 (the width of $.X) is not divisible by num_heads 5 "
                   "(the chapter's 5: give $.num_heads or --heads)" % path)
    expect(["selfattn", "--input", path, "--heads", "1"], 1,
           err=S + "%s: $.tokens: expected 1 labels, got 2" % path)
    path = write(tmp, "q.json", '{"queries": [[[1,2]]], "num_heads": 1}')
    expect(["selfattn", "--input", path], 1,
           err=S + '%s: $.queries: unknown key (known: X, valid_lens, num_heads, state_dict, '
                   'tokens, command, shape, output, attention_weights)' % path)
    expect(["multihead", "--input", path, "--heads", "2"], 2,
           err=M + "%s: $.num_heads is 1 but --heads is 2" % path)
    missing = os.path.join(tmp, "nosuch.json")
    expect(["multihead", "--input", missing], 1,
           err=M + "%s: cannot open: No such file or directory" % missing)
    expect(["multihead", "--input", tmp], 1, err=M + "%s: cannot read: Is a directory" % tmp)


def group_attention_options(tmp):
    M = "attn multihead: "
    S = "attn selfattn: "
    expect(["multihead", "--heads", "0"], 2,
           err=M + "--heads: expected an integer from 1 to 1000000000000, got '0'")
    expect(["multihead", "--hiddens", "100", "--heads", "3"], 2,
           err=M + "--hiddens 100 is not divisible by --heads 3")
    expect(["multihead", "--valid-lens", "3,x"], 2,
           err=M + "--valid-lens: expected integers >= 0 like 3,2 or 1,2,3,4;2,2,2,2, or none, "
                   "got '3,x'")
    expect(["multihead", "--valid-lens", "1,2;3"], 2,
           err=M + "--valid-lens: every row needs 2 lengths, row 2 has 1")
    expect(["multihead", "--valid-lens", "3,2,1"], 2,
           err=M + "--valid-lens: expected 2 lengths (one per example), got 3")
    expect(["multihead", "--valid-lens", "1,2;3,4"], 2,
           err=M + "--valid-lens: expected 2 rows of 4 (one per example and query), got 2 rows of 2")
    expect(["multihead", "--fill", "zeros"], 2, err=M + "--fill: expected ones or random, got 'zeros'")
    expect(["multihead", "--score", "cosine"], 2,
           err=M + "--score: expected dot or additive, got 'cosine'")
    expect(["multihead", "--dropout", "1.5"], 2,
           err=M + "--dropout: expected a number from 0 to 1, got '1.5'")
    expect(["multihead", "--score-hiddens", "4"], 2, err=M + "--score-hiddens is for --score additive")
    expect(["multihead", "--input", "x.json", "--batch", "2"], 2,
           err=M + "--batch makes random inputs and cannot be used with --input")
    expect(["multihead", "--tokens", "a b"], 2,
           err=M + "unknown option '--tokens' (see attn multihead --help)")
    expect(["selfattn", "--kv", "3"], 2,
           err=S + "--kv is for --scale-sweep (in self-attention the keys are the queries: "
                   "--queries)")
    expect(["selfattn", "--tokens", "a b | c", "--batch", "3"], 2,
           err=S + "--batch 3 disagrees with --tokens, which has 2 sentences")
    expect(["selfattn", "--tokens", "a b |  | c"], 2, err=S + "--tokens: sentence 2 has no tokens")
    expect(["selfattn", "--no-proj", "--bias"], 2,
           err=S + "--no-proj uses identity projections without bias or additive scoring")
    expect(["multihead", "--seed", "-1"], 2,
           err=M + "--seed: expected an integer from 0 to 2147483647, got '-1'")
    expect(["multihead", "--heads", "4", "--heads", "5"], 2, err=M + "option '--heads' given twice")
    expect(["multihead", "--queries", "100000", "--kv", "100000", "--hiddens", "8",
            "--heads", "8", "--batch", "8"], 1,
           err=M + "batch 8 × 8 heads × 100000 queries × 100000 keys needs about 2.33 TiB, more "
                   "than --max-mem 4 GiB; --stream computes without storing the attention weights")
    expect(["multihead", "--stream", "--png", "x.png"], 2,
           err=M + "--stream never stores the attention weights, which --png needs")
    expect(["multihead", "--stream", "--naive"], 2,
           err=M + "--stream never stores the attention weights, which --naive needs")
    expect(["multihead", "--stream", "--score", "additive"], 2,
           err=M + "--stream computes dot-product scores only")
    expect(["multihead", "--block", "4"], 2, err=M + "--block sets the key blocks of --stream --explain")
    expect(["multihead", "--threads", "0"], 2,
           err=M + "--threads: expected an integer from 1 to 1024, got '0'")
    expect(["multihead", "--queries", "100000000", "--hiddens", "100000000", "--heads", "1"], 1,
           err=M + "the inputs and weights need about 213 PiB, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "100000000", "--queries", "100000000", "--hiddens",
            "100000000", "--heads", "1"], 1,
           err=M + "the inputs and weights need more than this machine can address, more than "
                   "--max-mem 4 GiB")


def group_attention_outputs(tmp):
    # the chapter's cells: the shape line and the module print-out
    rc, out, _ = expect(["multihead"], 0, err="",
                        out_has=["attention(queries, keys, values, valid_lens).shape\n"
                                 "torch.Size([2, 4, 100])\n"])
    rc, out, _ = expect(["selfattn"], 0, err="",
                        out_has=["attention(X, X, X, valid_lens).shape\ntorch.Size([2, 4, 100])\n"])
    rc, out, _ = expect(["multihead", "--describe"], 0, err="")
    check(out == "MultiHeadAttention(\n"
                 "  (attention): DotProductAttention(\n"
                 "    (dropout): Dropout(p=0.5, inplace=False)\n"
                 "  )\n"
                 "  (W_q): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_k): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_v): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_o): Linear(in_features=100, out_features=100, bias=False)\n"
                 ")\n", "--describe prints the chapter's module")
    expect(["multihead", "--describe", "--score", "additive", "--hiddens", "20", "--heads", "2",
            "--score-hiddens", "7", "--bias", "--dropout", "0"], 0,
           out_has=["  (attention): AdditiveAttention(\n"
                    "    (W_k): Linear(in_features=10, out_features=7, bias=False)\n"
                    "    (W_q): Linear(in_features=10, out_features=7, bias=False)\n"
                    "    (w_v): Linear(in_features=7, out_features=1, bias=False)\n"
                    "    (dropout): Dropout(p=0.0, inplace=False)\n  )\n",
                    "(W_o): Linear(in_features=20, out_features=20, bias=True)"])

    # ones in, uniform weights over the valid keys out, whatever the weights
    rc, out, _ = expect(["multihead", "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(doc["command"] == "multihead" and doc["shape"] == [2, 4, 100] and
          doc["valid_lens"] == [3, 2] and doc["num_heads"] == 5, "multihead JSON header")
    w = doc["attention_weights"]
    check(len(w) == 2 and len(w[0]) == 5 and len(w[0][0]) == 4 and len(w[0][0][0]) == 6,
          "attention_weights is (batch, heads, queries, keys)")
    worst = max(abs(w[b][h][q][k] - ((1 / 3 if k < 3 else 0) if b == 0 else (0.5 if k < 2 else 0)))
                for b in range(2) for h in range(5) for q in range(4) for k in range(6))
    check(worst < 1e-7, "valid_lens 3, 2 give weights 1/3 and 1/2 (worst %g)" % worst)
    # output = W_o · (W_v · 1): every head's output is a row of V
    sd = doc["state_dict"]
    v = [sum(row) for row in sd["W_v.weight"]]
    want = [sum(a * b for a, b in zip(row, v)) for row in sd["W_o.weight"]]
    worst = max(abs(doc["output"][b][q][c] - want[c]) for b in range(2) for q in range(4)
                for c in range(100))
    check(worst < 1e-5, "ones: output = W_o W_v 1 (worst %g)" % worst)
    # weights like nn.Linear's init: uniform in ±1/sqrt(100)
    flat = [x for row in sd["W_q.weight"] for x in row]
    check(max(abs(x) for x in flat) <= 0.1 and max(flat) > 0.09 and min(flat) < -0.09,
          "weights uniform in ±1/sqrt(in_features)")
    check(abs(sum(flat) / len(flat)) < 0.005, "weights centred on 0")

    # a run's output file is a complete input: feeding it back gives the same output
    first = os.path.join(tmp, "first.json")
    expect(["multihead", "--fill", "random", "--seed", "7", "--bias", "--valid-lens",
            "1,2,3,4;2,2,2,2", "--causal", "--json", first], 0)
    second = os.path.join(tmp, "second.json")
    expect(["multihead", "--input", first, "--causal", "--json", second], 0)
    a, b = json.load(open(first)), json.load(open(second))
    check(a["output"] == b["output"] and a["attention_weights"] == b["attention_weights"],
          "an output file fed back reproduces output and weights exactly")
    # the same seed, the same bytes; another seed, other weights
    r1 = run(["selfattn", "--fill", "random", "--seed", "3", "--json", "-"])[1]
    r2 = run(["selfattn", "--fill", "random", "--seed", "3", "--json", "-"])[1]
    r3 = run(["selfattn", "--fill", "random", "--seed", "4", "--json", "-"])[1]
    check(r1 == r2 and r1 != r3, "--seed makes runs byte-identical")
    # dropout: eval ignores it, --train applies it (seeded)
    ev = json.loads(run(["selfattn", "--fill", "random", "--json", "-"])[1])
    ev2 = json.loads(run(["selfattn", "--fill", "random", "--dropout", "0.9", "--json", "-"])[1])
    tr = json.loads(run(["selfattn", "--fill", "random", "--train", "--json", "-"])[1])
    check(ev["output"] == ev2["output"], "--dropout has no effect in eval mode")
    check(ev["output"] != tr["output"] and ev["attention_weights"] == tr["attention_weights"],
          "--train changes the output, not the reported weights (d2l reports them before dropout)")
    # causal: no weight on later keys
    c = json.loads(run(["selfattn", "--fill", "random", "--causal", "--valid-lens", "none",
                        "--json", "-"])[1])
    check(all(c["attention_weights"][b][h][q][k] == 0 for b in range(2) for h in range(5)
              for q in range(4) for k in range(q + 1, 4)), "--causal masks later keys")
    # --no-proj: Q = K = V = X, so each output row is a weighted mean of X's rows
    d = json.loads(run(["selfattn", "--no-proj", "--fill", "random", "--hiddens", "6", "--heads",
                        "1", "--valid-lens", "none", "--json", "-"])[1])
    X, W = d["X"][0], d["attention_weights"][0][0]
    worst = max(abs(d["output"][0][q][c] - sum(W[q][k] * X[k][c] for k in range(4)))
                for q in range(4) for c in range(6))
    check(worst < 1e-6, "--no-proj: output = softmax(X Xᵀ / sqrt(d)) X (worst %g)" % worst)
    s = 1 / math.sqrt(6)
    sc = [sum(X[0][c] * X[k][c] for c in range(6)) * s for k in range(4)]
    m = max(sc)
    e = [math.exp(x - m) for x in sc]
    check(max(abs(W[0][k] - e[k] / sum(e)) for k in range(4)) < 1e-6,
          "--no-proj weights are softmax(x_0 · x_k / sqrt(d))")
    # --posenc adds P: with --no-proj and ones, X + P differs from X by P
    p0 = json.loads(run(["selfattn", "--no-proj", "--hiddens", "4", "--heads", "1", "--posenc",
                         "--json", "-"])[1])
    check(abs(p0["X"][0][1][0] - (1 + math.sin(1))) < 1e-6 and
          abs(p0["X"][0][1][1] - (1 + math.cos(1))) < 1e-6, "--posenc adds P to X")

    # tokens: the same word, the same input, another output in another sentence
    rc, out, _ = expect(["selfattn", "--tokens", "苹果 很 好吃 | 苹果 发布 了 新的 产品",
                         "--hiddens", "16", "--heads", "2"], 0, err="",
                        out_has=["苹果: input 1.0000 (the same embedding), output "])
    doc = json.loads(run(["selfattn", "--tokens", "苹果 很 好吃 | 苹果 发布 了 新的 产品",
                          "--hiddens", "16", "--heads", "2", "--json", "-"])[1])
    check(doc["tokens"] == [["苹果", "很", "好吃", "<pad>", "<pad>"],
                            ["苹果", "发布", "了", "新的", "产品"]] and doc["valid_lens"] == [3, 5],
          "two sentences: a padded batch with their lengths as valid_lens")
    check(doc["X"][0][0] == doc["X"][1][0] and doc["output"][0][0] != doc["output"][1][0],
          "苹果 has one embedding and two contextual outputs")
    # the printed cosine similarity, recomputed from the JSON's outputs
    u, v = doc["output"][0][0], doc["output"][1][0]
    cos = sum(x * y for x, y in zip(u, v)) / math.sqrt(sum(x * x for x in u) *
                                                        sum(y * y for y in v))
    line = [l for l in out.splitlines() if l.startswith("  苹果: input")]
    check(len(line) == 1 and abs(float(line[0].split("output ")[1].split()[0]) - cos) < 6e-5,
          "苹果's output cosine similarity printed as computed here (%.4f): %r" % (cos, line))
    # --png prints the results for a person too, then names the figure;
    # with --json the JSON is the result and only the files are named
    fig = os.path.join(tmp, "cell.png")
    rc, out, _ = expect(["multihead", "--png", fig], 0, err="",
                        out_has=["torch.Size([2, 4, 100])\n", "example 1, valid_len 2, head 5:"])
    check(out.rstrip().splitlines()[-1].startswith("wrote %s: attention weights" % fig),
          "multihead --png: the figure named last: %r" % out[-120:])
    rc, out, _ = expect(["selfattn", "--png", fig, "--json", os.path.join(tmp, "cell.json")],
                        0, err="", out_not=["torch.Size"])
    check(len(out.splitlines()) == 2 and all(l.startswith("wrote ") for l in out.splitlines()),
          "--png --json: only the two files named: %r" % out)
    single = json.loads(run(["selfattn", "--tokens", "苹果 很 好吃", "--hiddens", "16", "--heads",
                             "2", "--json", "-"])[1])
    check(max(abs(a - b) for a, b in zip(single["output"][0][0], doc["output"][0][0])) < 1e-6,
          "a padded sentence in a batch gives the output it gives alone")

    # the fast loops, streaming, the reference loops and threads agree
    base = ["selfattn", "--fill", "random", "--queries", "70", "--hiddens", "24", "--heads", "3",
            "--valid-lens", "50,70", "--causal", "--bias", "--json", "-"]
    fast = json.loads(run(base)[1])
    naive = json.loads(run(base + ["--naive"])[1])
    stream = json.loads(run(base + ["--stream"])[1])
    one = json.loads(run(base + ["--threads", "1"])[1])
    flat = lambda t: [x for a in t for b in a for x in b]
    worst = max(abs(a - b) for a, b in zip(flat(fast["output"]), flat(naive["output"])))
    check(worst < 1e-5, "fast and reference loops agree (worst %g)" % worst)
    worst = max(abs(a - b) for a, b in zip(flat(stream["output"]), flat(naive["output"])))
    check(worst < 1e-5, "streaming and reference loops agree (worst %g)" % worst)
    check(stream["attention_weights"] is None, "--stream writes attention_weights null")
    check(one["output"] == fast["output"], "--threads 1 gives the same bytes as all threads")
    rc, out, errtext = expect(["selfattn", "--fill", "random", "--time"], 0)
    check(errtext.startswith("forward pass: ") and "GFLOP/s (fast loops, " in errtext,
          "--time reports the forward pass on stderr")
    # --stream --explain: the online softmax block by block, equal to softmax·V
    rc, out, _ = expect(["selfattn", "--stream", "--explain", "--batch", "1", "--queries", "5",
                         "--hiddens", "4", "--heads", "1", "--fill", "random", "--valid-lens",
                         "none", "--block", "2"], 0, err="",
                        out_has=["keys in blocks of 2", "keys 0-1: scores [", "keys 4-4: scores [",
                                 "rescale e^(m_old - m) = "])
    last = [l for l in out.splitlines() if l.startswith("Largest difference")][0]
    check(float(last.rsplit(":", 1)[1]) < 1e-6, "the streamed output equals softmax·V: " + last)

    # the figure
    png = os.path.join(tmp, "heads.png")
    expect(["multihead", "--png", png], 0, err="",
           out_has=["wrote %s: attention weights, 2 examples × 5 heads, " % png])
    w_, h_, _ = png_info(png)
    check(w_ > h_ >= 200, "a 2 × 5 grid is wider than tall (%dx%d)" % (w_, h_))
    # --explain: every step of a small case
    rc, out, _ = expect(["multihead", "--explain", "--batch", "1", "--queries", "2", "--kv", "3",
                         "--hiddens", "4", "--heads", "2", "--valid-lens", "2"], 0, err="")
    for step in ["Step 1. Project: Q = queries·W_qᵀ  (2, 4)", "Step 2. Split into heads: Q_1  (2, 2)",
                 "Step 3. Scores: Q_1 K_1ᵀ  (2, 3)", "Step 4. Scaled: Q_1 K_1ᵀ / sqrt(2) = / 1.4142",
                 "Step 5. Masked: keys at k >= valid_len get -1e6", "-1000000.0000",
                 "Step 6. Attention weights", "Step 7. Head output: weights · V_2  (2, 2)",
                 "Step 8. Concatenate the heads", "Step 9. Output: concat · W_oᵀ  (2, 4)"]:
        check(step in out, "--explain shows %r" % step)


def cx_expect(n, d, k, r):
    """The figures of `attn complexity` for (n, d, k, r), worked out here by
    enumerating taps and keys and by the closed forms of the path lengths."""
    half = (k - 1) // 2
    taps = sum(1 for t in range(n) for j in range(k) if 0 <= t + j - half < n)
    keys = sum(1 for t in range(n) for s in range(n) if -((r - 1) // 2) <= s - t <= r // 2)
    layers = 0
    while k ** layers < n:
        layers += 1
    ceil_div = lambda a, b: -(-a // b)
    return {
        "convolution": (d * d * taps, ceil_div(n - 1, k - 1), 1),
        "recurrent": (n * (d * d + d * d), n - 1, n),
        "self_attention": (2 * n * n * d + 3 * n * d * d, 1 if n > 1 else 0, 1),
        "restricted_self_attention": (2 * d * keys + 3 * n * d * d, ceil_div(n - 1, r - 1), 1),
        "dilated_convolution": (d * d * taps, layers, 1),
    }


def cx_first_costlier(d, k, other, proj):
    """The first n from which self-attention costs more than the other
    layer, by brute force up to well past k·d."""
    def conv(n):
        half = (k - 1) // 2
        return d * d * sum(1 for t in range(n) for j in range(k) if 0 <= t + j - half < n)
    first = None
    for n in range(1, 4 * k * d + 8):
        attn = 2 * n * n * d + (3 * n * d * d if proj else 0)
        cost = 2 * n * d * d if other == "rnn" else conv(n)
        if attn > cost:
            first = first or n
        else:
            first = None
    return first


def cx_estimate(N, d, k, n=100):
    """--max-mem's estimate: the --measure buffers at the largest n (X, Y with
    h_0, Q, K, V, the N×N weights, every weight and bias) and 3·n bytes of
    path sets, in the format of cli_format_bytes."""
    floats = 5 * N * d + d + N * N + d * d * (k + 5) + 2 * d
    b = 4 * floats + 3 * n
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while b >= 1024 and u + 1 < len(units):
        b /= 1024
        u += 1
    return "%.3g %s" % (b, units[u])


def group_complexity(tmp):
    C = "attn complexity: "
    expect(["complexity", "--help"], 0, err="",
           out_has=["usage: attn complexity", "Examples:", "--measure", "n = 100"])
    # the default table: the counts of these layers, worked by hand
    # (n = 100, d = 512, k = 3: 298 taps in range; r = 9: 880 keys in the windows)
    expect(["complexity"], 0, err="",
           out_has=["O(k·n·d²)     78,118,912", "O(n·d²)       52,428,800",
                    "O(n²·d)       88,883,200", "O(r·n·d)      79,544,320",
                    "512²·298 = 78,118,912", "k·n·d² = 78,643,200",
                    "n²·d + n²·d = 10,240,000", "2·512·880 = 901,120",
                    "50 layers", "99 steps", "13 layers", "⌈log_3 n⌉ = 5",
                    "n > d: n >= 513", "n > k·d: n >= 1537",
                    "QKᵀ and A·V only: n >= 768"])
    # every count and path length against the enumeration above
    for n, d, k, r in [(100, 512, 3, 9), (5, 2, 3, 3), (9, 4, 3, 2), (17, 3, 5, 4),
                       (1, 3, 3, 2), (10, 8, 4, 5), (28, 2, 3, 9), (12, 5, 2, 30)]:
        args = ["complexity", "--n", str(n), "--d", str(d), "--k", str(k), "--r", str(r),
                "--json", "-"]
        rc, out, _ = expect(args, 0, err="")
        doc = json.loads(out)
        check(doc["command"] == "complexity" and [doc["n"], doc["d"], doc["k"], doc["r"]] ==
              [n, d, k, r] and doc["measure"] is None, "%s: JSON header" % args)
        want = cx_expect(n, d, k, r)
        got = {l["layer"]: (l["multiply_adds"], l["path_measured"],
                            l["sequential_operations_value"]) for l in doc["layers"]}
        check(got == want, "n=%d d=%d k=%d r=%d: counts, paths, sequential ops %r, want %r"
              % (n, d, k, r, got, want))
        check(all(l["path_formula_value"] == l["path_measured"] for l in doc["layers"]),
              "n=%d k=%d: measured path lengths equal the formulas" % (n, k))
        sa = doc["layers"][2]
        check(sa["multiply_adds_without_projections"] == 2 * n * n * d and
              sa["projection_multiply_adds"] == 3 * n * d * d, "self-attention's two parts")
    # the chapter's figure and the issue's cases: x_1 and x_n connected after
    for n, k, layers in [(5, 3, 2), (9, 3, 4), (17, 5, 4), (2, 3, 1), (5, 2, 4)]:
        doc = json.loads(run(["complexity", "--n", str(n), "--k", str(k), "--json", "-"])[1])
        check(doc["layers"][0]["path_measured"] == layers,
              "convolution k=%d, n=%d: %d layers" % (k, n, layers))
    rc, out, _ = expect(["complexity", "--n", "5"], 0,
                        out_has=["convolution, k = 3            2 layers",
                                 "recurrent (tanh)              4 steps",
                                 "self-attention                1 layer "])
    # where self-attention becomes costlier, against brute force
    for d, k in [(8, 3), (5, 4), (3, 7)]:
        doc = json.loads(run(["complexity", "--d", str(d), "--k", str(k), "--json", "-"])[1])
        c = doc["self_attention_costlier"]
        got = [c["than_recurrent"]["big_o_n"], c["than_recurrent"]["exact_without_projections_n"],
               c["than_recurrent"]["exact_with_projections_n"], c["than_convolution"]["big_o_n"],
               c["than_convolution"]["exact_without_projections_n"],
               c["than_convolution"]["exact_with_projections_n"]]
        want = [d + 1, cx_first_costlier(d, k, "rnn", False), cx_first_costlier(d, k, "rnn", True),
                k * d + 1, cx_first_costlier(d, k, "conv", False),
                cx_first_costlier(d, k, "conv", True)]
        check(got == want, "d=%d k=%d: crossovers %r, want %r" % (d, k, got, want))
    # without --measure the JSON is the same every run
    check(run(["complexity", "--json", "-"])[1] == run(["complexity", "--json", "-"])[1],
          "complexity JSON is deterministic")

    # bad input: each refused with its reason, before any work
    expect(["complexity", "--n", "0"], 2,
           err=C + "--n: expected an integer from 1 to 1000000, got '0'")
    expect(["complexity", "--k", "1"], 2,
           err=C + "--k 1: a kernel of one position never connects two positions (output t "
                   "reads only input t), so no stack of layers ever connects x_1 and x_n; use "
                   "--k 2 or more")
    expect(["complexity", "--r", "1"], 2,
           err=C + "--r 1: a window of one position lets each query see only itself, so no "
                   "stack of layers ever connects x_1 and x_n; use --r 2 or more")
    expect(["complexity", "--k", "0"], 2,
           err=C + "--k: expected an integer from 2 to 1000, got '0'")
    expect(["complexity", "--k", "1001"], 2,
           err=C + "--k: expected an integer from 2 to 1000, got '1001'")
    expect(["complexity", "--d", "65537"], 2,
           err=C + "--d: expected an integer from 1 to 65536, got '65537'")
    expect(["complexity", "--measure", "--sweep", "4096:64"], 2,
           err=C + "--sweep: FROM must be less than TO, got '4096:64'")
    expect(["complexity", "--measure", "--sweep", "64:64"], 2,
           err=C + "--sweep: FROM must be less than TO, got '64:64'")
    for bad in ["64", "64:", ":64", ""]:
        expect(["complexity", "--measure", "--sweep", bad], 2,
               err=C + "--sweep: expected FROM:TO like 64:4096, got '%s'" % bad)
    expect(["complexity", "--measure", "--sweep", "0:64"], 2,
           err=C + "--sweep: expected an integer from 1 to 1000000, got '0'")
    expect(["complexity", "--sweep", "64:128"], 2,
           err=C + "--sweep is for --measure, which is not given")
    expect(["complexity", "--png", os.path.join(tmp, "x.png")], 2,
           err=C + "--png is for --measure, which is not given")
    expect(["complexity", "--measure", "--clock", "sundial"], 2,
           err=C + "--clock: expected cpu or wall, got 'sundial'")
    expect(["complexity", "--measure", "--reps", "0"], 2,
           err=C + "--reps: expected an integer from 1 to 101, got '0'")
    expect(["complexity", "--n", "5", "--n", "6"], 2, err=C + "option '--n' given twice")
    expect(["complexity", "--frob"], 2,
           err=C + "unknown option '--frob' (see attn complexity --help)")
    expect(["complexity", "--n"], 2, err=C + "option '--n' needs a value")
    expect(["complexity", "extra"], 2,
           err=C + "unexpected argument 'extra' (see attn complexity --help)")
    # buffers beyond --max-mem: refused up front with the estimate, no file written
    png = os.path.join(tmp, "refused.png")
    expect(["complexity", "--measure", "--sweep", "64:65536", "--png", png], 1,
           err=C + "--measure --sweep 64:65536 --measure-dim 64 needs about %s, more than "
                   "--max-mem 4 GiB" % cx_estimate(65536, 64, 3))
    check(not os.path.exists(png), "a refused run writes no PNG")
    expect(["complexity", "--measure", "--max-mem", "1M"], 1,
           err=C + "--measure --sweep 64:4096 --measure-dim 64 needs about %s, more than "
                   "--max-mem 1 MiB" % cx_estimate(4096, 64, 3))
    expect(["complexity", "--n", "1000000", "--max-mem", "1M"], 1,
           err=C + "--n 1000000 needs about 2.86 MiB, more than --max-mem 1 MiB")

    # a tiny measured sweep: its structure and counts (never its timings)
    jpath, ppath = os.path.join(tmp, "cx.json"), os.path.join(tmp, "cx.png")
    rc, out, _ = expect(["complexity", "--measure", "--sweep", "5:12", "--measure-dim", "4",
                         "--reps", "3", "--k", "3", "--r", "2", "--json", jpath, "--png", ppath],
                        0, err="",
                        out_has=["Growth exponent in n", "over n = 10 … 12",
                                 "wrote %s: table, path lengths, crossovers and measurements"
                                 % jpath,
                                 "wrote %s: time against n, log-log, 4 layers, 900×600 px"
                                 % ppath])
    m = json.load(open(jpath))["measure"]
    check(m["n"] == [5, 10, 12] and m["fit_n"] == [10, 12] and m["d"] == 4 and m["reps"] == 3
          and m["clock"] == "cpu", "measure header: sweep 5, 10, 12; fit on 10, 12")
    names = ["convolution", "recurrent", "self_attention", "restricted_self_attention"]
    check([l["layer"] for l in m["layers"]] == names, "measured layers")
    for l in m["layers"]:
        want = [cx_expect(n, 4, 3, 2)[l["layer"]][0] for n in m["n"]]
        check(l["multiply_adds"] == want, "%s: multiply-adds %r, want %r"
              % (l["layer"], l["multiply_adds"], want))
        slope = math.log(want[2] / want[1]) / math.log(12 / 10)
        check(abs(l["count_slope"] - slope) < 1e-12, "%s: count slope %r, want %r"
              % (l["layer"], l["count_slope"], slope))
        check(l["seconds"] == l["cpu_seconds"] and len(l["wall_seconds"]) == 3 and
              all(s > 0 for s in l["seconds"] + l["wall_seconds"]), "%s: times" % l["layer"])
        check(all(isinstance(l[s], (int, float)) for s in ["slope", "cpu_slope", "wall_slope"]),
              "%s: fitted slopes are numbers" % l["layer"])
    check([l["theory"] for l in m["layers"]] == [1, 1, 2, 1], "theory exponents")
    w, h, ctype = png_info(ppath)
    check((w, h, ctype) == (900, 600, 2), "log-log PNG 900x600 RGB (%dx%d)" % (w, h))
    # --json - keeps stdout pure JSON; the report of the PNG goes to stderr
    rc, out, errtext = expect(["complexity", "--measure", "--sweep", "2:4", "--measure-dim", "2",
                               "--reps", "1", "--clock", "wall", "--json", "-", "--png", ppath], 0)
    doc = json.loads(out)
    check(doc["measure"]["clock"] == "wall" and
          doc["measure"]["layers"][0]["seconds"] == doc["measure"]["layers"][0]["wall_seconds"],
          "--clock wall chooses the seconds shown")
    check(errtext.startswith("wrote %s" % ppath), "with --json -, reports go to stderr")
    # n = 1: nothing to connect
    doc = json.loads(run(["complexity", "--n", "1", "--json", "-"])[1])
    check(all(l["path_measured"] == 0 for l in doc["layers"]), "n = 1: every path is 0 steps")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def group_bad_options(tmp):
    """Issue 5's catalogue, part 1: every command against bad options
    (non-numeric, negative, out of range, empty, repeated, unknown, missing
    their value, --max-mem garbage) and absurd sizes, each case with its
    exit code and exact message. Part 2 is group_bad_inputs."""
    T = 10 ** 12  # the largest size an option takes; larger products meet --max-mem
    RANGE = {"posenc": [("--dim", 1, 10 ** 9), ("--steps", 1, T)],
             "multihead": [("--batch", 1, T), ("--queries", 1, T), ("--kv", 1, T),
                           ("--hiddens", 1, T), ("--heads", 1, T)],
             "selfattn": [("--batch", 1, T), ("--queries", 1, T), ("--hiddens", 1, T),
                          ("--heads", 1, T)],
             "complexity": [("--n", 1, 1000000), ("--d", 1, 65536), ("--k", 2, 1000),
                            ("--measure-dim", 1, 4096)]}
    MEM = ("--max-mem: expected a positive size in bytes with an optional suffix K, M, G "
           "or T, got '%s'")
    # ---- options, for every command
    for cmd, opts in RANGE.items():
        P = "attn %s: " % cmd
        for opt, lo, hi in opts:
            want = P + "%s: expected an integer from %d to %d, got '%%s'" % (opt, lo, hi)
            # non-numeric, negative, out of range, empty, fractional, hex, overflowing
            # (under valgrind two of them: each runs the same parser)
            for bad in (["abc", str(hi + 1)] if VALGRIND else
                        ["abc", "-3", str(hi + 1), "", "2.5", "0x10", "1e3",
                         "99999999999999999999"]):
                expect([cmd, opt, bad], 2, err=want % bad)
            if (cmd, opt) != ("complexity", "--k"):  # --k 1 has its own message
                expect([cmd, "%s=%s" % (opt, lo - 1)], 2, err=want % (lo - 1))
            expect([cmd, opt], 2, err=P + "option '%s' needs a value" % opt)
            expect([cmd, opt, str(lo), opt + "=" + str(lo)], 2,
                   err=P + "option '%s' given twice" % opt)
        for bad in (["lots", "18446744073709551616"] if VALGRIND else
                    ["lots", "0", "-5", "1.5G", "1e9", "", "4Q", "99999999999T",
                     "18446744073709551616"]):
            expect([cmd, "--max-mem", bad], 2, err=P + MEM % bad)
        expect([cmd, "--max-mem"], 2, err=P + "option '--max-mem' needs a value")
        expect([cmd, "--max-mem", "1G", "--max-mem", "2G"], 2,
               err=P + "option '--max-mem' given twice")
        for bad in ["--frob", "--frob=1", "-Z", "---x"]:
            expect([cmd, bad], 2, err=P + "unknown option '%s' (see attn %s --help)"
                   % (bad, cmd))
        expect([cmd, "stray"], 2, err=P + "unexpected argument 'stray' (see attn %s --help)"
               % cmd)
        expect([cmd, "--json"], 2, err=P + "option '--json' needs a value")
        if cmd != "complexity":
            expect([cmd, "--color", "purple"], 2,
                   err=P + "--color: expected auto, always or never, got 'purple'")
    # the memory limit, refused up front with the estimate (exit 1)
    expect(["posenc", "--max-mem", "1K"], 1,
           err="attn posenc: --steps 60 --dim 32 needs about 32 MiB, more than --max-mem 1 KiB")
    expect(["multihead", "--max-mem", "1K"], 1,
           err="attn multihead: the inputs and weights need about 169 KiB, more than "
               "--max-mem 1 KiB")
    expect(["selfattn", "--max-mem", "1K"], 1,
           err="attn selfattn: the inputs and weights need about 159 KiB, more than "
               "--max-mem 1 KiB")
    expect(["complexity", "--max-mem", "100"], 1,
           err="attn complexity: --n 100 needs about 300 B, more than --max-mem 100 B")

    # ---- absurd sizes: dimensions of 10^9, and products that overflow 64 bits,
    # are refused up front by --max-mem with the estimate (exit 1), never
    # allocated; complexity's counts keep their own range (exit 2)
    M, S = "attn multihead: ", "attn selfattn: "
    expect(["multihead", "--queries", "1000000000"], 1,
           err=M + "the inputs and weights need about 745 GiB, more than --max-mem 4 GiB")
    expect(["selfattn", "--hiddens", "1000000000"], 1,
           err=S + "the inputs and weights need about 13.9 EiB, more than --max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000"], 1,
           err="attn posenc: --steps 1000000000 --dim 32 needs about 119 GiB, more than "
               "--max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000", "--png", os.path.join(tmp, "huge.png")], 1,
           err="attn posenc: --steps 1000000000 --dim 32 needs about 119 GiB, more than "
               "--max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000000", "--dim", "1000000000"], 1,
           err="attn posenc: --steps 1000000000000 --dim 1000000000 needs more memory than "
               "this machine can address, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "1000000000000", "--queries", "1000000000000"], 1,
           err=M + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["complexity", "--n", "1000000000"], 2,
           err="attn complexity: --n: expected an integer from 1 to 1000000, got '1000000000'")
    big = ["--batch", "100000000", "--queries", "100000000", "--hiddens", "100000000",
           "--heads", "1"]
    expect(["multihead"] + big + ["--kv", "100000000"], 1,
           err=M + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn"] + big, 1,
           err=S + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn"] + big + ["--stream"], 1,
           err=S + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn", "--queries", "100000000", "--hiddens", "8", "--heads", "8"], 1,
           err=S + "the inputs and weights need about 5.96 GiB, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "100", "--queries", "100000", "--kv", "100000",
            "--hiddens", "8", "--heads", "8"], 1,
           err=M + "batch 100 × 8 heads × 100000 queries × 100000 keys needs about 29.1 TiB, "
                   "more than --max-mem 4 GiB; --stream computes without storing the "
                   "attention weights")
    expect(["posenc", "--steps", "100000000", "--dim", "1000000", "--similarity",
            os.path.join(tmp, "s.png")], 1,
           err="attn posenc: --steps 100000000 --dim 1000000 with --similarity needs about "
               "35.9 PiB, more than --max-mem 4 GiB")

    if VALGRIND:
        print("under valgrind: 2 bad values per option and for --max-mem, not all")


def group_bad_inputs(tmp):
    """Issue 5's catalogue, part 2: bad JSON for multihead and selfattn
    (from files and stdin), outputs that cannot be written, closed pipes.
    Input files are never written (checksums before and after), and a
    failed run leaves no file behind and an existing file untouched."""
    M = "attn multihead: "
    # ---- bad JSON, for multihead and selfattn
    inputs = {}  # every input file and its checksum when written

    def jfile(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        inputs[path] = sha(path)
        return path

    deep = "[" * 100000 + "]" * 100000
    deep_obj = '{"a":' * 100000 + "1" + "}" * 100000
    common = [  # (file name, text, {cmd: (exit code, message)}); None: same for both
        ("binary.json", bytes(range(256)), 1,
         "line 1, column 1: a NUL byte: not a JSON text"),
        ("binary1.json", bytes(range(1, 256)), 1,
         "line 2, column 23: invalid JSON at '!'"),
        ("high.json", bytes(range(0x80, 0x100)), 1,
         "line 1, column 1: invalid JSON at byte 0x80"),
        ("deep.json", deep, 1,
         "line 1, column 1001: arrays and objects nested deeper than 1000 levels"),
        ("deep_obj.json", deep_obj, 1,
         "line 1, column 5001: arrays and objects nested deeper than 1000 levels"),
        ("empty.json", "", 1, "empty: expected a JSON object"),
        ("blank.json", " \n\t\n", 1, "empty: expected a JSON object"),
        ("truncated.json", '{"%s": [[[1,', 1, "line 1, column {END}: the JSON ends too early"),
        ("trailing.json", '{"%s": [[[1]]]}}', 1,
         "line 1, column {LAST}: unexpected text after the JSON value"),
        ("trailing2.json", '{"%s": [[[1]]]} {}', 1,
         "line 1, column {LAST2}: unexpected text after the JSON value"),
        ("inf.json", '{"%s": [[[1, Infinity]]]}', 1,
         "line 1, column {Inf}: Infinity is not a JSON number (NaN and Infinity are not allowed)"),
        ("ninf.json", '{"%s": [[[-Infinity]]]}', 1,
         "line 1, column {-Inf}: -Infinity is not a JSON number (NaN and Infinity are not "
         "allowed)"),
        ("nan.json", '{"%s": [[[NaN, 1]]]}', 1,
         "line 1, column {NaN}: NaN is not a JSON number (NaN and Infinity are not allowed)"),
        ("1e400.json", '{"%s": [[[1e400]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got inf"),
        ("m1e400.json", '{"%s": [[[-1e400]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got -inf"),
        ("4e38.json", '{"%s": [[[4e38]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got 4e+38"),
        ("string.json", '{"%s": [[["1"]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a number, got a string"),
        ("bool.json", '{"%s": [[[false, 1]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a number, got a boolean"),
        ("null.json", '{"%s": [[[1, null]]], "num_heads": 1}', 1,
         "$.%s[0][0][1]: expected a number, got null"),
        ("obj.json", '{"%s": [[{"a": 1}]], "num_heads": 1}', 1,
         "$.%s[0][0]: expected a number, got an object"),
        ("toplevel_null.json", '{"%s": null}', 1,
         "$.%s: expected an array of numbers, got null"),
        ("toplevel_num.json", '{"%s": 3}', 1, "$.%s: expected an array of numbers, got a number"),
        ("ragged.json", '{"%s": [[[1, 2], [3]]], "num_heads": 1}', 1,
         "$.%s[0][1]: expected 2 numbers, got 1"),
        ("ragged2.json", '{"%s": [[[1]], [[1], [2]]], "num_heads": 1}', 1,
         "$.%s[1]: expected 1 arrays, got 2"),
        ("mixed.json", '{"%s": [[[1], 2]], "num_heads": 1}', 1,
         "$.%s[0][1]: expected an array of 1 numbers, got a number"),
        ("empty1.json", '{"%s": [], "num_heads": 1}', 1, "$.%s: an empty array"),
        ("empty2.json", '{"%s": [[]], "num_heads": 1}', 1, "$.%s: an empty array inside"),
        ("empty3.json", '{"%s": [[[]]], "num_heads": 1}', 1, "$.%s: an empty array inside"),
        ("dup.json", '{"%s": [[[1]]], "num_heads": 1, "num_heads": 1}', 1,
         "$.num_heads: the key appears twice"),
        ("heads_bool.json", '{"%s": [[[1]]], "num_heads": true}', 1,
         "$.num_heads: expected an integer, got a boolean"),
        ("heads_null.json", '{"%s": [[[1]]], "num_heads": null}', 1,
         "$.num_heads: expected an integer, got null"),
        ("heads_str.json", '{"%s": [[[1]]], "num_heads": "1"}', 1,
         "$.num_heads: expected an integer, got a string"),
        ("heads_frac.json", '{"%s": [[[1]]], "num_heads": 0.5}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got 0.5"),
        ("heads_neg.json", '{"%s": [[[1]]], "num_heads": -1}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got -1"),
        ("heads_big.json", '{"%s": [[[1]]], "num_heads": 1e400}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got inf"),
        ("heads_div.json", '{"%s": [[[1, 2, 3]]], "num_heads": 2}', 2,
         "num_hiddens 3 (the width of $.%s) is not divisible by num_heads 2 ($.num_heads)"),
        ("vl_empty.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": []}', 1,
         "$.valid_lens: expected a non-empty array of integers, got an empty array"),
        ("vl_empty2.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [[]]}', 1,
         "$.valid_lens[0]: an empty array"),
        ("vl_bool.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": true}', 1,
         "$.valid_lens: expected a non-empty array of integers, got a boolean"),
        ("vl_num.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": 1}', 1,
         "$.valid_lens: expected a non-empty array of integers, got a number"),
        ("vl_null_item.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [null]}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got null"),
        ("vl_true_item.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [true]}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got a boolean"),
        ("vl_huge.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [1e400]}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got inf"),
        ("vl_long.json", '{"%s": [[[1]], [[2]]], "num_heads": 1, "valid_lens": [1, 1, 1]}', 1,
         "$.valid_lens: expected 2 lengths (one per example) or a (2, 1) array, got 3"),
        ("vl_short2d.json", '{"%s": [[[1], [2]]], "num_heads": 1, "valid_lens": [[1]]}', 1,
         "$.valid_lens: expected shape (1,) or (1, 2), got (1, 1)"),
        ("vl_ragged.json",
         '{"%s": [[[1], [2]]], "num_heads": 1, "valid_lens": [[1, 2], [1]]}', 1,
         "$.valid_lens[1]: expected 2 integers, got 1"),
        ("sd_null.json", '{"%s": [[[1]]], "num_heads": 1, "state_dict": null}', 1,
         "$.state_dict: expected an object, got null"),
        ("sd_empty_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [], "W_k.weight": [[1]],'
         ' "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_q.weight"]: an empty array'),
        ("sd_null_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[null]], '
         '"W_k.weight": [[1]], "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_q.weight"][0][0]: expected a number, got null'),
        ("sd_inf_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1]], '
         '"W_k.weight": [[1e39]], "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_k.weight"][0][0]: expected a finite float32 number, got 1e+39'),
        ("sd_dup.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1]], '
         '"W_q.weight": [[1]]}}', 1, '$.state_dict["W_q.weight"]: the key appears twice'),
    ]
    for cmd, key in [("multihead", "queries"), ("selfattn", "X")]:
        P = "attn %s: " % cmd
        for name, text, code, msg in common:
            if isinstance(text, str) and "%s" in text:
                text = text % key
            if "%s" in msg:
                msg = msg % key
            if "{" in msg:  # {MARK}: the column of MARK in the text, {END}: past its end
                mark = msg[msg.index("{") + 1:msg.index("}", msg.index("{") + 2)]
                col = {"END": len(text) + 1, "LAST": len(text), "LAST2": len(text) - 1}.get(
                    mark) or text.index(mark) + 1
                msg = msg.replace("{%s}" % mark, str(col), 1)
            path = jfile(cmd + "_" + name, text)
            expect([cmd, "--input", path], code, err=P + "%s: %s" % (path, msg))
        # the same through stdin
        expect([cmd, "--input", "-"], 1, stdin=b'{"%s": [[[1,' % key.encode(),
               err=P + "-: line 1, column %d: the JSON ends too early" % (11 + len(key)))
        expect([cmd, "--input", "-"], 1, stdin=bytes(range(256)),
               err=P + "-: line 1, column 1: a NUL byte: not a JSON text")
        expect([cmd, "--input", "-"], 1, stdin=b"", err=P + "-: empty: expected a JSON object")
        expect([cmd, "--input", "-"], 1, stdin=deep.encode(),
               err=P + "-: line 1, column 1001: arrays and objects nested deeper than 1000 "
                       "levels")
        # not a file: missing, a directory; a file over the input limit of --max-mem
        missing = os.path.join(tmp, "no", "such.json")
        expect([cmd, "--input", missing], 1,
               err=P + "%s: cannot open: No such file or directory" % missing)
        expect([cmd, "--input", tmp], 1, err=P + "%s: cannot read: Is a directory" % tmp)
        path = jfile(cmd + "_big.json", '{"%s": [[[%s1]]], "num_heads": 1}' % (key, "0" * 200))
        expect([cmd, "--input", path, "--max-mem", "1K"], 1,
               err=P + "%s: larger than 128 B, the input limit for --max-mem" % path)
    # cross attention's own shapes
    M = "attn multihead: "
    for name, text, msg in [
        ("keys_empty.json", '{"queries": [[[1]]], "keys": [], "num_heads": 1}',
         "$.keys: an empty array"),
        ("values_empty.json", '{"queries": [[[1]]], "keys": [[[1]]], "values": [[[]]], '
         '"num_heads": 1}', "$.values: an empty array inside"),
        ("keys_bool.json", '{"queries": [[[1]]], "keys": [[[true]]], "num_heads": 1}',
         "$.keys[0][0][0]: expected a number, got a boolean"),
        ("keys_batch.json", '{"queries": [[[1]]], "keys": [[[1]], [[1]]], "num_heads": 1}',
         "$.keys: expected batch 1 like $.queries (1, 1, 1), got shape (2, 1, 1)"),
        ("values_len.json", '{"queries": [[[1]]], "keys": [[[1], [2]]], "values": [[[1]]], '
         '"num_heads": 1}',
         "$.values: expected shape (1, 2, value_size) to pair with $.keys (1, 2, 1), got "
         "(1, 1, 1)"),
        ("qtok.json", '{"queries": [[[1]]], "query_tokens": [1], "num_heads": 1}',
         "$.query_tokens[0]: expected a string, got a number"),
        ("ktok.json", '{"queries": [[[1]]], "key_tokens": [], "num_heads": 1}',
         "$.key_tokens: expected a non-empty array of strings, got an empty array"),
    ]:
        path = jfile(name, text)
        expect(["multihead", "--input", path], 1, err=M + "%s: %s" % (path, msg))

    # ---- outputs that cannot be written, for multihead and complexity
    ok = jfile("ok.json", '{"queries": [[[1, 2], [3, 4]]], "num_heads": 1}')
    tiny = ["--measure", "--sweep", "2:4", "--measure-dim", "2", "--reps", "1"]
    missing = os.path.join(tmp, "no", "such", "out")
    for cmd, base, P in [("multihead", ["multihead", "--input", ok], M),
                         ("selfattn", ["selfattn", "--hiddens", "4", "--heads", "1"],
                          "attn selfattn: "),
                         ("complexity", ["complexity"] + tiny, "attn complexity: ")]:
        for opt in ["--json", "--png"]:
            expect(base + [opt, missing], 1,
                   err=P + "%s: cannot create: No such file or directory" % missing)
            expect(base + [opt, tmp], 1, err=P + "%s: cannot write: Is a directory" % tmp)
            expect(base + [opt, "/dev/full"], 1,
                   err=P + "/dev/full: cannot write: No space left on device")
            if os.geteuid() != 0:
                ro = os.path.join(tmp, "ro")
                os.makedirs(ro, 0o555, exist_ok=True)
                expect(base + [opt, os.path.join(ro, "x")], 1,
                       err=P + "%s: cannot create: Permission denied" % os.path.join(ro, "x"))
        with open("/dev/full", "w") as full:
            rc, out, errtext = run(base, stdout=full)
        check(rc == 1 and errtext == P + "write error on standard output: No space left on "
              "device\n", "%s > /dev/full: exit 1 and a message (%d %r)" % (cmd, rc, errtext))
        with open("/dev/full", "w") as full:
            rc, out, errtext = run(base + ["--json", "-"], stdout=full)
        check(rc == 1 and errtext == P + "write error on standard output: No space left on "
              "device\n", "%s --json - > /dev/full (%d %r)" % (cmd, rc, errtext))
    check(not os.path.exists(os.path.join(tmp, "no")), "nothing created for a missing folder")
    # a closed pipe: quiet on SIGPIPE or exit 1 with a message, never a crash
    for args in ["multihead --json -", "complexity --json -", "posenc --steps 3000 --json -",
                 "selfattn --queries 300 --json -"]:
        with tempfile.TemporaryFile() as errf:
            p = subprocess.Popen(VALGRIND + [ATTN] + args.split(), stdout=subprocess.PIPE,
                                 stderr=errf)
            head = subprocess.run(["head", "-c", "1"], stdin=p.stdout, stdout=subprocess.PIPE)
            p.stdout.close()
            rc = p.wait(timeout=1200)
            errf.seek(0)
            err = errf.read().decode("utf-8", "replace")
        msg = "attn %s: write error on standard output: Broken pipe\n" % args.split()[0]
        check(head.stdout == b"{" and (rc, err) in [(0, ""), (-signal.SIGPIPE, ""), (1, msg)],
              "%s | head -c 1: exit 0, quiet on SIGPIPE or exit 1 with a message, never a "
              "crash (exit %d, %r)" % (args, rc, err))

    # ---- nothing lost: a failed run leaves an existing file untouched and
    # no temporary file; the input is never written
    keep_json, keep_png = os.path.join(tmp, "keep.json"), os.path.join(tmp, "keep.png")
    for f in [keep_json, keep_png]:
        with open(f, "wb") as fh:
            fh.write(b"old contents")
    bad = os.path.join(tmp, "multihead_ragged.json")
    for args in [["multihead", "--input", bad, "--json", keep_json, "--png", keep_png],
                 ["selfattn", "--input", os.path.join(tmp, "selfattn_deep.json"),
                  "--json", keep_json],
                 ["multihead", "--queries", "100000", "--kv", "100000", "--hiddens", "8",
                  "--heads", "8", "--batch", "8", "--json", keep_json, "--png", keep_png],
                 ["complexity", "--measure", "--max-mem", "1M", "--json", keep_json,
                  "--png", keep_png],
                 ["posenc", "--steps", "100000", "--similarity", keep_png, "--json", keep_json],
                 ["multihead", "--input", ok, "--json", keep_json, "--png",
                  os.path.join(tmp, "no", "x.png")]]:
        rc, out, errtext = run(args)
        check(rc == 1, "%s: exit 1 (%d %r)" % (" ".join(args), rc, errtext))
        if "x.png" not in args[-1]:
            check(open(keep_json, "rb").read() == b"old contents" and
                  open(keep_png, "rb").read() == b"old contents",
                  "%s: the existing files are untouched" % " ".join(args))
    # (the last: the JSON was written before the PNG failed; it is complete)
    check(json.load(open(keep_json))["command"] == "multihead",
          "a file written before a later failure is complete")
    left = [n for n in os.listdir(tmp) if n.startswith(("keep.", ".keep")) and
            n not in ("keep.json", "keep.png")]
    check(left == [], "no temporary files left behind: %r" % left)
    # an output naming the input is refused; the input is never written
    for opt in ["--json", "--png"]:
        expect(["multihead", "--input", ok, opt, ok], 2,
               err=M + "%s %s is the --input file, which attn never overwrites" % (opt, ok))
    alias = os.path.join(tmp, "alias.json")
    os.symlink(ok, alias)
    expect(["multihead", "--input", ok, "--json", alias], 2,
           err=M + "--json %s is the --input file, which attn never overwrites" % alias)
    # inputs near float32's limits: finite weights summing to 1, finite outputs
    rnd = random.Random(5)
    X = [[[rnd.choice([-3e38, 3e38, 1e30, -1e30]) for _ in range(4)] for _ in range(5)]]
    path = jfile("limits.json", json.dumps({"X": X, "num_heads": 2}))
    for extra in [[], ["--naive"], ["--stream"], ["--causal"]]:
        rc, out, _ = expect(["selfattn", "--input", path, "--json", "-"] + extra, 0, err="")
        doc = json.loads(out)
        outs = [x for r in doc["output"][0] for x in r]
        check(all(math.isfinite(x) for x in outs), "%s: finite outputs" % extra)
        if doc["attention_weights"] is not None:
            rows = [r for h in doc["attention_weights"][0] for r in h]
            check(all(math.isfinite(x) for r in rows for x in r) and
                  all(abs(sum(r) - 1) <= 1e-6 for r in rows),
                  "%s: weights finite, each row sums to 1" % extra)
    check(all(sha(p) == h for p, h in inputs.items()),
          "every input file is unchanged after all the runs that read it")
    check(len(inputs) >= 100, "the catalogue has its inputs (%d)" % len(inputs))


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


TOUR_STEPS = ["multihead", "selfattn", "context", "scaling", "complexity", "order",
              "posenc", "binary", "relative", "rope", "learned"]
TOUR_FIGURES = {
    "multihead": ["01-multihead-weights.png"],
    "selfattn": ["02-selfattn-weights.png"],
    "context": ["03-apple-context.png"],
    "scaling": ["04-scale-sweep.png"],
    "complexity": ["05-complexity-loglog.png"],
    "order": ["06-permute.png", "06-permute-posenc.png"],
    "posenc": ["07-posenc-columns.png", "07-posenc-heatmap.png"],
    "binary": [],
    "relative": ["09-posenc-similarity.png"],
    "rope": ["10-posenc-concat.png", "10-rope-scores.png"],
    "learned": ["11-train-reverse.png", "11-train-reverse-no-posenc.png",
                "11-train-apple.png"],
}


def group_tour(tmp):
    # --list: every step in order, with the commands it runs
    rc, out, _ = expect(["tour", "--list"], 0, err="")
    lines = [l for l in out.splitlines() if l[:2].strip().isdigit()]
    check([l.split()[1] for l in lines] == TOUR_STEPS,
          "tour --list: the steps in the chapter's order: %r" % lines)
    for fig in sum(TOUR_FIGURES.values(), []):
        check("@" + fig in out, "tour --list names %s" % fig)
    expect(["tour", "--help"], 0, err="", out_has=["usage: attn tour", "Examples:",
                                                    "attn tour --out figs"])
    expect(["help", "tour"], 0, err="", out_has=["usage: attn tour"])

    # usage errors
    for args, msg in [
            (["--step", "0"], "attn tour: --step: expected an integer from 1 to 11, got '0'"),
            (["--step", "12"], "attn tour: --step: expected an integer from 1 to 11, got '12'"),
            (["--step", "poem"], "attn tour: --step: expected a number from 1 to 11 or a "
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
        out_dir = os.path.join(tmp, "step-%d" % (i + 1), "figs")
        step = str(i + 1) if i % 2 else name
        # attn train prints its progress on stderr, as lines when not a terminal
        rc, out, err = expect(["tour", "--step", step, "--out", out_dir, "--color", "never"],
                              0, err=None if name == "learned" else "")
        check(all(re.fullmatch(r"step \d+/\d+: loss .*", l) for l in err.splitlines()),
              "tour step %s: nothing but progress on stderr: %r" % (name, err[-300:]))
        head = "Step %d of 11 · " % (i + 1)
        check(out.startswith(head), "tour step %s starts with %r: %r" % (name, head, out[:60]))
        check("\033[" not in out, "tour step %s --color never: no escapes" % name)
        want = [os.path.join(out_dir, f) for f in TOUR_FIGURES[name]]
        check(tour_figures(out) == want, "tour step %s names %r, want %r"
              % (name, tour_figures(out), want))
        check(sorted(os.listdir(out_dir)) == sorted(TOUR_FIGURES[name]),
              "tour step %s: the folder holds %r" % (name, os.listdir(out_dir)))
        for path in want:
            check_figure(path, "tour step %s" % name)
        # what each step must show, from the chapter
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
        if name == "complexity":
            check("self-attention" in out and "Growth exponent" in out,
                  "tour complexity: the table and the fitted exponents")

    # the whole tour into one folder (skipped under valgrind: each step ran above)
    if heavy("the whole tour"):
        return
    out_dir = os.path.join(tmp, "whole")
    rc, out, _ = expect(["tour", "--out", out_dir, "--color", "always"], 0)
    check(out.count("Step ") >= 11 and "\033[1mStep 1 of 11" in out,
          "tour --color always: bold headings for every step")
    named = tour_figures(out)
    check(len(named) == len(set(named)) == len(sum(TOUR_FIGURES.values(), [])),
          "the whole tour names each figure once: %r" % named)
    check(sorted(os.listdir(out_dir)) == sorted(sum(TOUR_FIGURES.values(), [])),
          "the whole tour writes exactly its figures: %r" % os.listdir(out_dir))
    check(out.rstrip().endswith("every figure above is in %s/." % out_dir),
          "the tour ends by naming the folder")


# Debian's fonts-dejavu-core, which scripts/setup.sh installs (attn embeds
# it at build time).
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
# No CJK font reachable: $ATTN_FONT names no file and the search list
# ($ATTN_FONT_SEARCH, see src/render/text.h) is empty.
NO_CJK = {"ATTN_FONT": "/nonexistent/font.ttf", "ATTN_FONT_SEARCH": ""}


def fc_config(path, font_dir=None):
    """Write a fontconfig configuration that sees the fonts of font_dir
    only (None: no fonts at all), with its cache beside it; its path."""
    d = os.path.dirname(path)
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<fontconfig>\n%s  <cachedir>%s</cachedir>\n'
                '</fontconfig>\n' % ("  <dir>%s</dir>\n" % font_dir if font_dir else "",
                                      os.path.join(d, "fc-cache")))
    return path


def font_note(cmd, label):
    return ("attn %s: note: no font found has the glyphs of '%s', so the positions are "
            "numbered (install fonts-wqy-microhei or pass --font FILE)" % (cmd, label))


def same_bytes(a, b):
    """Whether files a and b both exist and hold the same bytes."""
    return os.path.exists(a) and os.path.exists(b) and sha(a) == sha(b)


def png_ok(path):
    """Whether path is a valid PNG (signature, CRCs) of a sensible size."""
    try:
        w, h, ctype = png_info(path)
    except (OSError, AssertionError, struct.error):
        return False
    return w >= 100 and h >= 100 and ctype == 2


def group_fonts(tmp):
    """--font FILE for every command that draws figures, and token labels
    in scripts no font here has: numbered positions and one note."""
    zh = "苹果 发布 了 新的 产品"
    sa = ["--hiddens", "16", "--heads", "2"]
    runs = {"selfattn": ["--tokens", zh] + sa, "multihead": [],
            "posenc": ["--dim", "8", "--steps", "10"], "complexity": ["--n", "5"]}
    for cmd in runs:
        expect([cmd, "--help"], 0, err="", out_has=["      --font FILE          font (.ttf"])

    # a missing file, a directory, a file that is not a font: exit 1, the
    # file named, no figure written
    missing = os.path.join(tmp, "missing.ttf")
    junk = write(tmp, "junk.ttf", "This is a text file, not a font, but long enough.\n")
    empty = write(tmp, "empty.ttf", "")
    for cmd, args in runs.items():
        png = os.path.join(tmp, cmd + "-bad.png")
        figure = ["--png", png] if cmd != "complexity" else []
        expect([cmd] + args + figure + ["--font", missing], 1,
               err="attn %s: --font: %s: cannot read: No such file or directory" % (cmd, missing))
        expect([cmd] + args + figure + ["--font", junk], 1,
               err="attn %s: --font: %s: not a TrueType font" % (cmd, junk))
        check(not os.path.exists(png), "%s: a bad --font writes no figure" % cmd)
    expect(["selfattn", "--font", tmp], 1,
           err="attn selfattn: --font: %s: cannot read: Is a directory" % tmp)
    expect(["posenc", "--font=" + empty], 1,
           err="attn posenc: --font: %s: not a TrueType font" % empty)
    expect(["multihead", "--font", junk, "--font", junk], 2,
           err="attn multihead: option '--font' given twice")
    expect(["complexity", "--font"], 2, err="attn complexity: option '--font' needs a value")

    # no CJK font: the labels become numbered positions, one note on
    # stderr, exit 0, a valid PNG
    numbered = os.path.join(tmp, "numbered.png")
    expect(["selfattn", "--tokens", zh, "--png", numbered] + sa, 0,
           err=font_note("selfattn", "苹果"), out_has=["wrote %s: " % numbered], env=NO_CJK)
    check(png_ok(numbered), "no CJK font: a valid PNG")
    # $ATTN_FONT naming a font without CJK
    check(os.path.exists(DEJAVU), "%s (fonts-dejavu-core, which scripts/setup.sh installs) "
          "is missing" % DEJAVU)
    expect(["selfattn", "--tokens", zh, "--png", os.path.join(tmp, "dv.png")] + sa, 0,
           err=font_note("selfattn", "苹果"),
           env={"ATTN_FONT": DEJAVU, "ATTN_FONT_SEARCH": ""})
    check(same_bytes(numbered, os.path.join(tmp, "dv.png")),
          "$ATTN_FONT without CJK: the same numbered figure")
    # the numbered figure is the figure drawn without labels, byte for byte
    rnd = random.Random(11)
    X = [[[rnd.uniform(-1, 1) for _ in range(8)] for _ in range(5)]]
    plain = write(tmp, "plain.json", json.dumps({"X": X, "num_heads": 2}))
    labelled = write(tmp, "labelled.json", json.dumps(
        {"X": X, "num_heads": 2, "tokens": zh.split()}))
    a, b = os.path.join(tmp, "plain.png"), os.path.join(tmp, "labelled.png")
    expect(["selfattn", "--input", plain, "--png", a], 0, err="", env=NO_CJK)
    expect(["selfattn", "--input", labelled, "--png", b], 0,
           err=font_note("selfattn", "苹果"), env=NO_CJK)
    check(same_bytes(a, b), "no CJK font: labelled figure == unlabelled one")
    # both axes of a cross-attention figure numbered: still one note; a
    # label with control characters is named safely (U+FFFD)
    Q = [[[rnd.uniform(-1, 1) for _ in range(4)] for _ in range(3)]]
    K = [[[rnd.uniform(-1, 1) for _ in range(4)] for _ in range(2)]]
    cross = write(tmp, "cross.json", json.dumps(
        {"queries": Q, "keys": K, "num_heads": 2, "query_tokens": ["a", "\x1b[1m好\n", "c"],
         "key_tokens": ["苹果", "产品"]}))
    expect(["multihead", "--input", cross, "--png", os.path.join(tmp, "cross.png")], 0,
           err=font_note("multihead", "苹果"), env=NO_CJK)
    cross_q = write(tmp, "cross_q.json", json.dumps(
        {"queries": Q, "keys": K, "num_heads": 2, "query_tokens": ["a", "\x1b[1m好\n", "c"]}))
    expect(["multihead", "--input", cross_q, "--png", os.path.join(tmp, "cross_q.png")], 0,
           err=font_note("multihead", "\ufffd[1m好\ufffd"), env=NO_CJK)
    # Latin labels need no other font: no note
    expect(["selfattn", "--tokens", "the cat sat", "--png", os.path.join(tmp, "en.png")] + sa,
           0, err="", env=NO_CJK)

    # fontconfig (no $ATTN_FONT_SEARCH) in a configuration without fonts:
    # numbered too, the same figure
    fc_none = fc_config(os.path.join(tmp, "fc-none.conf"))
    expect(["selfattn", "--tokens", zh, "--png", os.path.join(tmp, "fc-none.png")] + sa, 0,
           err=font_note("selfattn", "苹果"),
           env={"ATTN_FONT_SEARCH": None, "FONTCONFIG_FILE": fc_none})
    check(same_bytes(numbered, os.path.join(tmp, "fc-none.png")),
          "fontconfig without fonts: the same numbered figure")

    # with a CJK font, given (--font) or found (the search list, fontconfig):
    # the labels are drawn, no note, and the figure is not the numbered one
    if not check(os.path.exists(WQY), "%s (fonts-wqy-microhei, which scripts/setup.sh "
                 "installs) is missing: the cases with a CJK font cannot run" % WQY):
        return
    given = os.path.join(tmp, "given.png")
    expect(["selfattn", "--tokens", zh, "--png", given, "--font", WQY] + sa, 0, err="",
           out_has=["wrote %s: " % given], env=NO_CJK)
    check(png_ok(given), "--font: a valid PNG")
    check(not same_bytes(given, numbered),
          "--font with CJK: the figure differs from the numbered one")
    found = [os.path.join(tmp, "found%d.png" % i) for i in range(3)]
    expect(["selfattn", "--tokens", zh, "--png", found[0]] + sa, 0, err="",
           env={"ATTN_FONT_SEARCH": "/nonexistent/a.ttc:" + WQY, "ATTN_FONT": ""})
    check(same_bytes(given, found[0]), "a CJK font found by the search draws what --font draws")
    expect(["selfattn", "--tokens", zh, "--png", found[1]] + sa, 0, err="",
           env={"ATTN_FONT": WQY, "ATTN_FONT_SEARCH": ""})
    check(same_bytes(given, found[1]), "$ATTN_FONT draws what --font draws")
    # fontconfig, in a configuration that sees only a link to the font
    fc_dir = os.path.join(tmp, "fc-fonts")
    os.mkdir(fc_dir)
    os.symlink(WQY, os.path.join(fc_dir, "wqy-microhei.ttc"))
    fc_wqy = fc_config(os.path.join(tmp, "fc-wqy.conf"), fc_dir)
    expect(["selfattn", "--tokens", zh, "--png", found[2]] + sa, 0, err="",
           env={"ATTN_FONT": "", "ATTN_FONT_SEARCH": None, "FONTCONFIG_FILE": fc_wqy})
    check(same_bytes(given, found[2]), "fontconfig finds %s: what --font draws" % WQY)
    expect(["multihead", "--input", cross, "--png", os.path.join(tmp, "cross.png"),
            "--font", WQY], 0, err="", env=NO_CJK)
    # sentences of a batch label their own row of panels: drawn with the
    # font, numbered (one note) without it
    two = "苹果 很 好吃|苹果 发布 了 新的 产品"
    rows_font, rows_num = os.path.join(tmp, "rows-font.png"), os.path.join(tmp, "rows-num.png")
    expect(["selfattn", "--tokens", two, "--png", rows_font, "--font", WQY] + sa, 0, err="",
           env=NO_CJK)
    expect(["selfattn", "--tokens", two, "--png", rows_num] + sa, 0,
           err=font_note("selfattn", "苹果"), env=NO_CJK)
    w_font, h_font, _ = png_info(rows_font)
    w_num, h_num, _ = png_info(rows_num)
    check(h_font > h_num, "a sentence per row: tick labels under each row (%d > %d px)"
          % (h_font, h_num))
    # figures without other scripts look the same with --font: it only
    # adds glyphs DejaVu Sans lacks
    p0, p1 = os.path.join(tmp, "p0.png"), os.path.join(tmp, "p1.png")
    expect(["posenc", "--png", p0], 0, err="")
    expect(["posenc", "--png", p1, "--font", WQY], 0, err="")
    check(same_bytes(p0, p1), "posenc --font: the same figure")
    if not heavy("complexity --measure with --font"):
        expect(["complexity", "--measure", "--sweep", "8:32", "--measure-dim", "4", "--reps",
                "1", "--png", p1, "--font", WQY], 0, err="")
        check(png_ok(p1), "complexity --font: a valid PNG")


def rope_py(x, m, base, concat):
    """RoPE(x, m) worked out here: each pair (2j, 2j+1), or (j, j+D/2) for
    concat, turned by m / base^(2j/D)."""
    D, y = len(x), list(x)
    for j in range(D // 2):
        a, b = (j, j + D // 2) if concat else (2 * j, 2 * j + 1)
        t = m / base ** (2 * j / D)
        y[a] = x[a] * math.cos(t) - x[b] * math.sin(t)
        y[b] = x[a] * math.sin(t) + x[b] * math.cos(t)
    return y


def group_posenc_layouts(tmp):
    """--layout interleaved|concat and --rope: exact errors, the relative
    checks below 1e-5, JSON values against math worked out here, PNGs."""
    P = "attn posenc: "
    png = os.path.join(tmp, "p.png")
    # ---- usage errors (exit 2) and the memory limit (exit 1)
    expect(["posenc", "--layout", "foo"], 2,
           err=P + "--layout: expected interleaved or concat, got 'foo'")
    expect(["posenc", "--layout", ""], 2,
           err=P + "--layout: expected interleaved or concat, got ''")
    expect(["posenc", "--layout"], 2, err=P + "option '--layout' needs a value")
    expect(["posenc", "--layout", "concat", "--layout=concat"], 2,
           err=P + "option '--layout' given twice")
    expect(["posenc", "--rope", "--dim", "31"], 2,
           err=P + "--rope turns dimensions in pairs and needs an even --dim, got 31")
    expect(["posenc", "--rope", "--dim", "1"], 2,
           err=P + "--rope turns dimensions in pairs and needs an even --dim, got 1")
    for extra in [["--plot", png], ["--cols", "6-9"], ["--binary", "8"],
                  ["--similarity", png], ["--naive"]]:
        expect(["posenc", "--rope"] + extra, 2,
               err=P + "%s is for the encoding P and cannot be used with --rope" % extra[0])
    check(not os.path.exists(png), "a refused --rope run wrote no file")
    expect(["posenc", "--rope", "--rope"], 2, err=P + "option '--rope' given twice")
    expect(["posenc", "--seed", "3"], 2,
           err=P + "--seed draws the query and key of --rope, which is not given")
    expect(["posenc", "--rope", "--seed", "-1"], 2,
           err=P + "--seed: expected an integer from 0 to 2147483647, got '-1'")
    expect(["posenc", "--rope", "--seed", "2147483648"], 2,
           err=P + "--seed: expected an integer from 0 to 2147483647, got '2147483648'")
    expect(["posenc", "--rope", "--check-relative", "60"], 2,
           err=P + "--check-relative: offsets must lie between -59 and 59 for --steps 60")
    expect(["posenc", "--rope", "--steps", "100000", "--png", png], 1,
           err=P + "--steps 100000 --dim 32 with --rope needs about 37.3 GiB, more than "
                   "--max-mem 4 GiB")
    expect(["posenc", "--rope", "--steps", "10000", "--max-mem", "100M"], 1,
           err=P + "--steps 10000 --dim 32 with --rope needs about 416 MiB, more than "
                   "--max-mem 100 MiB")
    check(not os.path.exists(png), "a refused --rope run wrote no file")
    expect(["posenc", "--help"], 0, err="",
           out_has=["--layout L", "--rope", "--seed N", "Layouts.", "RoPE.",
                    "P·Pᵀ is the same in both layouts", "attn posenc --layout concat",
                    "attn posenc --rope"])

    # ---- concat: P[i][j] = sin, P[i][h+j] = cos, worked out here
    rc, out, _ = expect(["posenc", "--dim", "7", "--steps", "5", "--layout", "concat",
                         "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(doc["layout"] == "concat" and doc["dim"] == 7 and doc["steps"] == 5,
          "concat JSON header")
    worst = 0.0
    for i in range(5):
        for j in range(4):                       # h = 4 sin columns, then 3 cos
            w = i / 10000 ** (2 * j / 7)
            worst = max(worst, abs(doc["P"][i][j] - math.sin(w)))
            if j < 3:
                worst = max(worst, abs(doc["P"][i][4 + j] - math.cos(w)))
    check(worst <= 1e-7, "concat JSON within 1e-7 of the formula (worst %g)" % worst)
    # the layouts are column permutations of each other, with and without --naive
    docs = {}
    for layout in ["interleaved", "concat"]:
        for naive in [[], ["--naive"]]:
            rc, out, _ = expect(["posenc", "--dim", "33", "--steps", "300", "--layout",
                                 layout, "--json", "-"] + naive, 0, err="")
            docs[layout, bool(naive)] = json.loads(out)
    check(docs["interleaved", False]["layout"] == "interleaved", "interleaved JSON layout")
    for naive in [False, True]:
        pi, pc = docs["interleaved", naive]["P"], docs["concat", naive]["P"]
        check(all(pi[i][c] == pc[i][c // 2 if c % 2 == 0 else 17 + c // 2]
                  for i in range(300) for c in range(33)),
              "interleaved column 2j is concat column j, 2j+1 is h+j (naive %s)" % naive)
    d = max(abs(a - b) for ra, rb in zip(docs["concat", False]["P"], docs["concat", True]["P"])
            for a, b in zip(ra, rb))
    check(d <= 1.2e-7, "concat: the rotation fill and --naive agree to float32 (%g)" % d)
    # the printed view follows the layout
    expect(["posenc", "--dim", "4", "--steps", "3", "--layout", "concat"], 0, err="",
           out_has=["concat layout (h = 2 sin columns, then 2 cos columns)",
                    "P[i, h+j] = cos(i / 10000^(2j/4))   j < 2",
                    "[[ 0.0000,  0.0000,  1.0000,  1.0000],",
                    " [ 0.8415,  0.0100,  0.5403,  0.9999],",
                    " [ 0.9093,  0.0200, -0.4161,  0.9998]]"])

    # ---- the relative-position check on (P[i,j], P[i,h+j]), even and odd D
    for dim in ["32", "33"]:
        rc, out, _ = expect(["posenc", "--dim", dim, "--steps", "100", "--layout", "concat",
                             "--check-relative", "1:50"], 0, err="",
                            out_has=["(P[i,j], P[i,h+j]) = (P[i+δ,j], P[i+δ,h+j])"])
        vals = [float(l.rsplit("=", 1)[1]) for l in out.splitlines() if l.startswith("  δ = ")]
        check(len(vals) == 50 and max(vals) < 1e-5,
              "concat --dim %s check-relative 1:50 below 1e-5 (%s)" % (dim, max(vals)))
    expect(["posenc", "--dim", "33", "--layout", "concat", "--check-relative", "3"], 0,
           out_has=["(column 16, a sin without its cos, is not part of a pair)",
                    "δ = 3    57 positions × 16 pairs"])

    # ---- figures: the heatmap follows the layout; P·Pᵀ does not depend on it
    rc, out, _ = expect(["posenc", "--dim", "32", "--steps", "60", "--layout", "concat",
                         "--png", png], 0, err="",
                        out_has=["wrote %s: heatmap of P (concat layout), 60 × 32, " % png])
    w, h, ctype = png_info(png)
    check(ctype == 2 and 400 <= w <= 1600 and 400 <= h <= 1600,
          "concat PNG is RGB and of sensible size (%dx%d)" % (w, h))
    inter = os.path.join(tmp, "inter.png")
    expect(["posenc", "--dim", "32", "--steps", "60", "--png", inter], 0)
    check(open(png, "rb").read() != open(inter, "rb").read(), "the layouts draw different P")
    made, stored = os.path.join(tmp, "made.png"), os.path.join(tmp, "stored.png")
    expect(["posenc", "--dim", "64", "--steps", "3000", "--layout", "concat", "--png", made], 0)
    expect(["posenc", "--dim", "64", "--steps", "3000", "--layout", "concat", "--png", stored,
            "--check-relative", "1"], 0)
    check(open(made, "rb").read() == open(stored, "rb").read(),
          "concat: the heatmap of rows made on demand equals that of the stored P")
    sims = []
    for layout in ["interleaved", "concat"]:
        sims.append(os.path.join(tmp, "sim_%s.png" % layout))
        expect(["posenc", "--steps", "100", "--layout", layout, "--similarity", sims[-1]], 0,
               err="")
        png_info(sims[-1])
    check(open(sims[0], "rb").read() == open(sims[1], "rb").read(),
          "P·Pᵀ draws the same figure for both layouts")
    plot = os.path.join(tmp, "cols.png")
    expect(["posenc", "--layout", "concat", "--plot", plot, "--cols", "15-17"], 0, err="",
           out_has=["wrote %s: 3 columns of P against position" % plot])
    png_info(plot)

    # ---- RoPE: the printed worst errors, both pair layouts
    for layout in ["interleaved", "concat"]:
        rc, out, _ = expect(["posenc", "--rope", "--layout", layout, "--steps", "100",
                             "--check-relative", "1:50"], 0, err="",
                            out_has=["layout %s" % layout])
        line = [l for l in out.splitlines() if l.startswith("offset only: ")]
        err_a = float(line[0].rsplit("=", 1)[1]) if line else 1.0
        check(err_a < 1e-5, "--rope %s: offset-only score error below 1e-5 (%g)" % (layout, err_a))
        vals = [float(l.rsplit("=", 1)[1]) for l in out.splitlines() if l.startswith("  δ = ")]
        check(len(vals) == 50 and max(vals) < 1e-5,
              "--rope %s: check-relative 1:50 below 1e-5" % layout)
        check("worst over δ = 1 … 50:" in out, "--rope check-relative range summary")
    expect(["posenc", "--rope", "--dim", "8", "--steps", "6", "--numbers"], 0, err="",
           out_has=["S[m, n] = RoPE(q, m) · RoPE(k, n) in float32: torch.Size([6, 6])",
                    "S (rows: query position m, columns: key position n):"])

    # ---- RoPE JSON: q, k of length 1, scores against rotations worked out here
    for layout in ["interleaved", "concat"]:
        rc, out, errtext = expect(["posenc", "--rope", "--layout", layout, "--dim", "16",
                                   "--steps", "40", "--base", "100", "--seed", "7",
                                   "--json", "-"], 0)
        doc = json.loads(out)
        check("offset only: " in errtext, "with --json -, the RoPE report goes to stderr")
        check(doc["command"] == "posenc" and doc["rope"] is True and doc["layout"] == layout
              and doc["dim"] == 16 and doc["steps"] == 40 and doc["base"] == 100 and
              doc["seed"] == 7, "--rope JSON header (%s)" % layout)
        q, k, S = doc["q"], doc["k"], doc["scores"]
        check(len(q) == 16 and len(k) == 16 and len(S) == 40 and all(len(r) == 40 for r in S),
              "--rope JSON shapes")
        check(abs(sum(x * x for x in q) - 1) < 1e-6 and abs(sum(x * x for x in k) - 1) < 1e-6,
              "q and k have length 1")
        concat = layout == "concat"
        qr = [rope_py(q, m, 100.0, concat) for m in range(40)]
        kr = [rope_py(k, n, 100.0, concat) for n in range(40)]
        worst = max(abs(S[m][n] - sum(a * b for a, b in zip(qr[m], kr[n])))
                    for m in range(40) for n in range(40))
        check(worst < 1e-6, "--rope %s scores = RoPE(q, m)·RoPE(k, n) (worst %g)"
              % (layout, worst))
        off = {d: sum(a * b for a, b in zip(q, rope_py(k, d, 100.0, concat)))
               for d in range(-39, 40)}
        mine = max(abs(S[m][n] - off[n - m]) for m in range(40) for n in range(40))
        check(mine < 1e-5 and abs(mine - doc["max_offset_error"]) < 1e-9,
              "max_offset_error %g is the offset-only error worked out here %g"
              % (doc["max_offset_error"], mine))
        check(all(-1 <= x <= 1 for r in S for x in r), "scores lie in [-1, 1]")
    # the seed decides q and k, byte for byte
    one = run(["posenc", "--rope", "--seed", "5", "--json", "-"])[1]
    check(one == run(["posenc", "--rope", "--seed", "5", "--json", "-"])[1],
          "--rope --seed 5 twice: the same JSON")
    check(json.loads(one)["q"] != json.loads(run(["posenc", "--rope", "--json", "-"])[1])["q"],
          "--seed 5 and --seed 0 draw different q")

    # ---- RoPE heatmap
    rope = os.path.join(tmp, "rope.png")
    rc, out, _ = expect(["posenc", "--rope", "--layout", "concat", "--png", rope], 0, err="",
                        out_has=["wrote %s: heatmap of the RoPE scores S, 60 × 60, " % rope])
    w, h, ctype = png_info(rope)
    check(ctype == 2 and 300 <= w <= 1600 and 250 <= h <= 1600,
          "RoPE PNG is RGB and of sensible size (%dx%d)" % (w, h))
    jpath = os.path.join(tmp, "rope.json")
    expect(["posenc", "--rope", "--steps", "300", "--png", rope, "--json", jpath], 0, err="",
           out_has=["wrote %s: RoPE's q, k and scores as JSON, 300 × 300" % jpath,
                    "wrote %s: heatmap of the RoPE scores S, 300 × 300" % rope])
    png_info(rope)
    with open(jpath) as f:
        check(len(json.load(f)["scores"]) == 300, "--rope --json FILE has the scores")


def demo_rng_normals(seed, d, count):
    """demo_attention.c's q then k for one d, worked out here: SplitMix64
    seeded with seed ^ (0x9e3779b97f4a7c15 · d), Marsaglia's polar method,
    each number rounded to float32."""
    M = (1 << 64) - 1
    state = [(seed ^ (0x9e3779b97f4a7c15 * d)) & M]

    def uniform():
        state[0] = (state[0] + 0x9e3779b97f4a7c15) & M
        z = state[0]
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
        return ((z ^ (z >> 31)) >> 11) * 2.0 ** -53

    f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
    out = []
    for half in range(2):                       # q, then k
        xs = []
        while len(xs) < count:
            while True:
                u, v = 2 * uniform() - 1, 2 * uniform() - 1
                s = u * u + v * v
                if 0 < s < 1:
                    break
            f = math.sqrt(-2 * math.log(s) / s)
            xs += [f32(u * f), f32(v * f)]
        out.append(xs[:count])
    return out


def demo_sweep_expect(seed, d, S, n):
    """The six statistics of one d of --scale-sweep, from the formulas:
    row r's softmax over q_r·k_j, j = r … r+n−1 (mod S); variances over all
    S·n scores (divided by S·n − 1)."""
    qs, ks = demo_rng_normals(seed, d, S * d)
    q = [qs[r * d:(r + 1) * d] for r in range(S)]
    k = [ks[r * d:(r + 1) * d] for r in range(S)]
    stats = {}
    for name, c in (("raw", 1.0), ("scaled", 1 / math.sqrt(d))):
        scores, peak, ent = [], 0.0, 0.0
        for r in range(S):
            row = [c * sum(a * b for a, b in zip(q[r], k[(r + j) % S])) for j in range(n)]
            scores += row
            e = [math.exp(x - max(row)) for x in row]
            w = [x / sum(e) for x in e]
            peak += max(w)
            ent -= sum(x * math.log(x) for x in w if x > 0)
        mean = sum(scores) / len(scores)
        stats["var_" + name] = sum((x - mean) ** 2 for x in scores) / (len(scores) - 1)
        stats["max_weight_" + name] = peak / S
        stats["entropy_" + name] = ent / S
    return stats


def group_demos_attention(tmp):
    """attn selfattn --permute (order blindness) and --scale-sweep (why
    divide by √d): the printed numbers, the JSON against values worked out
    here, exact errors and exit codes, the figures."""
    S = "attn selfattn: "

    def printed(out, start):
        """The number after the first ': ' of the line starting with start."""
        lines = [l for l in out.splitlines() if l.startswith(start)]
        check(len(lines) == 1, "one line starts with %r" % start)
        return float(lines[0].split(": ", 1)[1].split()[0]) if lines else float("nan")

    def perm_line(out):
        line = [l for l in out.splitlines() if l.startswith("π = [")][0]
        return [int(x) for x in line[5:line.index("]")].split(", ")]

    def is_perm(p, n):
        return sorted(p) == list(range(n))

    # ---- --permute: order blindness, without and with positional encoding
    rc, out, _ = expect(["selfattn", "--permute"], 0, err="",
                        out_has=["Order blindness (--permute): X (2, 4, 100), standard normal "
                                 "(--fill random, --permute's default: rows of ones are all "
                                 "alike)\n", "the same layer on X and on π·X: num_hiddens 100 = "
                                 "5 heads × 20, scaled dot-product, fast loops\n",
                                 "no positional encoding\n",
                                 "Equal up to float32 rounding"])
    p = perm_line(out)
    check(is_perm(p, 4) and p != [0, 1, 2, 3], "π is a permutation of 0 … 3, not the "
          "identity: %s" % p)
    dout, dw = printed(out, "largest |f(π·X) − π·f(X)|"), printed(out, "largest |A(π·X) − π·A(X)·πᵀ|")
    check(dout < 1e-5 and dw < 1e-5, "without posenc the differences are rounding (%g, %g)"
          % (dout, dw))
    rc, out2, _ = expect(["selfattn", "--permute", "--posenc"], 0, err="",
                         out_has=["positional encoding P added after permuting",
                                  "Not equal: with the encoding"])
    check(perm_line(out2) == p, "--posenc draws the same π from the same --seed")
    dout = printed(out2, "largest |f(π·X + P) − π·f(X + P)|")
    dw = printed(out2, "largest |A(π·X + P) − π·A(X + P)·πᵀ|")
    check(dout > 1e-2 and dw > 1e-2, "with posenc the differences are clearly not zero "
          "(%g, %g)" % (dout, dw))
    # the reference loops, additive scoring and biases are blind to order too
    for extra in [["--naive"], ["--score", "additive", "--bias"], ["--no-proj"]]:
        rc, out3, _ = expect(["selfattn", "--permute", "--batch", "3", "--queries", "9",
                              "--hiddens", "12", "--heads", "3"] + extra, 0, err="")
        check(printed(out3, "largest |f(π·X) − π·f(X)|") < 1e-5 and
              printed(out3, "largest |A(π·X) − π·A(X)·πᵀ|") < 1e-5,
              "%s: without posenc the differences are rounding" % extra)
    # inputs of ones: nothing moves at all
    rc, out3, _ = expect(["selfattn", "--permute", "--fill", "ones"], 0, err="",
                         out_has=["Order blindness (--permute): X (2, 4, 100), ones\n",
                                  "Equal: the rows of X are all alike"])
    check(printed(out3, "largest |f(π·X) − π·f(X)|") == 0, "ones: exactly no difference")

    # ---- --json: the fields, and both runs recomputed from them here
    rc, out, _ = expect(["selfattn", "--permute", "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(doc["command"] == "selfattn" and doc["demo"] == "permute" and doc["posenc"] is False
          and doc["shape"] == [2, 4, 100] and doc["num_heads"] == 5 and doc["seed"] == 0,
          "--permute JSON header")
    P = doc["permutation"]
    check(P == p, "the JSON's permutation is the printed π")
    O, Op = doc["output"], doc["output_permuted"]
    W, Wp = doc["attention_weights"], doc["attention_weights_permuted"]
    want = max(abs(Op[b][i][c] - O[b][P[i]][c]) for b in range(2) for i in range(4)
               for c in range(100))
    check(abs(doc["max_output_diff"] - want) <= 1e-9 + 1e-6 * want and want < 1e-5,
          "max_output_diff is max |f(π·X) − π·f(X)| (%g, here %g)" % (doc["max_output_diff"], want))
    want = max(abs(Wp[b][h][i][j] - W[b][h][P[i]][P[j]]) for b in range(2) for h in range(5)
               for i in range(4) for j in range(4))
    check(abs(doc["max_weight_diff"] - want) <= 1e-9 + 1e-6 * want and want < 1e-5,
          "max_weight_diff is max |A(π·X) − π·A(X)·πᵀ| (%g, here %g)" % (doc["max_weight_diff"], want))
    check(all(abs(sum(r) - 1) < 1e-6 for b in Wp for h in b for r in h),
          "every row of A(π·X) sums to 1")

    # --no-proj: f(X) = softmax(X Xᵀ/√d) X, computed here for X and π·X, with P added
    # after permuting (X from the plain run with the same seed and options)
    base = ["--no-proj", "--hiddens", "6", "--heads", "1", "--queries", "5", "--batch", "1",
            "--seed", "11"]
    X = json.loads(run(["selfattn", "--fill", "random", "--valid-lens", "none", "--json", "-"]
                       + base)[1])["X"][0]

    def attend(Z):
        out = []
        for zq in Z:
            s = [sum(a * b for a, b in zip(zq, zk)) / math.sqrt(6) for zk in Z]
            e = [math.exp(x - max(s)) for x in s]
            out.append([sum(e[k] / sum(e) * Z[k][c] for k in range(5)) for c in range(6)])
        return out

    for posenc in [False, True]:
        rc, out, _ = expect(["selfattn", "--permute", "--permutation", "4,2,0,1,3", "--json",
                             "-"] + base + (["--posenc"] if posenc else []), 0, err="")
        doc = json.loads(out)
        pe = [[(math.sin(i / 10000 ** (2 * (c // 2) / 6)) if c % 2 == 0 else
                math.cos(i / 10000 ** (2 * (c // 2) / 6))) if posenc else 0.0
               for c in range(6)] for i in range(5)]
        perm = [4, 2, 0, 1, 3]
        f = attend([[X[i][c] + pe[i][c] for c in range(6)] for i in range(5)])
        fp = attend([[X[perm[i]][c] + pe[i][c] for c in range(6)] for i in range(5)])
        worst = max(max(abs(doc["output"][0][i][c] - f[i][c]),
                        abs(doc["output_permuted"][0][i][c] - fp[i][c]))
                    for i in range(5) for c in range(6))
        check(worst < 1e-5, "--no-proj%s: f(X) and f(π·X) as computed here (worst %g)"
              % (" --posenc" if posenc else "", worst))
        want = max(abs(fp[i][c] - f[perm[i]][c]) for i in range(5) for c in range(6))
        check(abs(doc["max_output_diff"] - want) < 1e-5 and
              (want > 1e-2 if posenc else want < 1e-9),
              "--no-proj%s: max_output_diff %g, here %g" % (" --posenc" if posenc else "",
                                                         doc["max_output_diff"], want))
        check(doc["permutation"] == perm and doc["posenc"] is posenc,
              "--permutation is used as given")

    # tokens: the labels move with the rows
    zh = ["--tokens", "我 爱 吃 苹果", "--hiddens", "16", "--heads", "2"]
    expect(["selfattn", "--permute", "--permutation", "3,0,2,1"] + zh, 0, err="",
           out_has=["Order blindness (--permute): X (1, 4, 16), token embeddings\n",
                    "π = [3, 0, 2, 1] (--permutation): row i of π·X is row π[i] of X\n",
                    "tokens: 我 爱 吃 苹果  →  π·X: 苹果 我 吃 爱\n"])
    doc = json.loads(run(["selfattn", "--permute", "--permutation", "3,0,2,1", "--json", "-"]
                         + zh)[1])
    check(doc["tokens"] == [["我", "爱", "吃", "苹果"]] and
          doc["permuted_tokens"] == [["苹果", "我", "吃", "爱"]] and
          doc["inputs"] == "token embeddings", "--tokens: labels permuted in the JSON")
    # the same seed, the same bytes; another seed, another π
    a = run(["selfattn", "--permute", "--queries", "8", "--json", "-"])[1]
    b = run(["selfattn", "--permute", "--queries", "8", "--json", "-"])[1]
    c = run(["selfattn", "--permute", "--queries", "8", "--seed", "1", "--json", "-"])[1]
    check(a == b and json.loads(a)["permutation"] != json.loads(c)["permutation"],
          "--seed makes --permute reproducible and chooses π")
    check(is_perm(json.loads(a)["permutation"], 8), "π of 8 positions is a permutation")
    # --input: a file without valid_lens
    x_path = os.path.join(tmp, "x.json")
    with open(x_path, "w") as fh:
        json.dump({"X": X, "num_heads": 2}, fh)
    rc, out, _ = expect(["selfattn", "--permute", "--input", x_path], 0, err="",
                        out_has=["X (1, 5, 6), from the file\n"])
    check(printed(out, "largest |f(π·X) − π·f(X)|") < 1e-5, "--input: equal up to rounding")

    # ---- --permute --png: three panels side by side, with and without posenc
    for extra, name in [([], "perm.png"), (["--posenc"], "perm_pe.png"),
                        (zh + ["--posenc"], "perm_zh.png")]:
        png = os.path.join(tmp, name)
        rc, out, _ = expect(["selfattn", "--permute", "--png", png] + extra, 0, err="",
                            out_has=["wrote %s: π·A·πᵀ, A(π·X) and their difference, example 0, "
                                     "head 1" % png, "largest |A("])
        w, h, ctype = png_info(png)
        check(ctype == 2 and 600 <= w <= 2000 and 200 <= h <= 800 and w > 2 * h,
              "%s: three panels in a row (%dx%d)" % (name, w, h))
    both = os.path.join(tmp, "both.json")
    expect(["selfattn", "--permute", "--png", png, "--json", both], 0, err="",
           out_has=["wrote %s: the permutation, both runs and their differences" % both])
    check(json.load(open(both))["demo"] == "permute", "--json FILE with --png")

    # ---- --permute: errors
    for args, code, msg in [
        (["--permute", "--scale-sweep"], 2,
         "--permute and --scale-sweep are two different demos; give one"),
        (["--permutation", "1,0"], 2, "--permutation is for --permute"),
        (["--permute", "--causal"], 2,
         "--causal cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--stream"], 2,
         "--stream cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--train"], 2,
         "--train cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--explain"], 2,
         "--explain cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--permutation", "3,0,2"], 2,
         "--permutation: has 3 positions, but the sequence has 4 (a permutation of 0 … 3; 1 is "
         "missing)"),
        (["--permute", "--permutation", "3,0,2,4"], 2,
         "--permutation: 4 is not a position of the sequence of 4 (0 … 3)"),
        (["--permute", "--permutation", "3,0,2,2"], 2,
         "--permutation: 2 appears twice (a permutation lists each of 0 … 3 once)"),
        (["--permute", "--permutation", "3,0,2,1,4"], 2,
         "--permutation: has more than 4 positions, but the sequence has 4 (a permutation of "
         "0 … 3)"),
        (["--permute", "--permutation", "3,x,2,1"], 2,
         "--permutation: expected positions separated by commas, like 3,0,2,1, got '3,x,2,1'"),
        (["--permute", "--queries", "1"], 2,
         "--permute: a sequence of one position has no other order (give --queries 2 or more)"),
        (["--permute", "--valid-lens", "3,2"], 2,
         "--permute: valid_len 3 (from --valid-lens) is shorter than the sequence of 4: padding "
         "does not move with the tokens, so every valid_len must cover the sequence"),
        (["--permute", "--tokens", "a b c | d e"], 2,
         "--permute: valid_len 2 (the length of a shorter --tokens sentence) is shorter than "
         "the sequence of 3: padding does not move with the tokens, so every valid_len must "
         "cover the sequence"),
        (["--permute", "--queries", "3000", "--hiddens", "64", "--heads", "8", "--batch", "4",
          "--max-mem", "300M"], 1,
         "--permute (two runs of batch 4 × 8 heads × 3000 queries × 3000 keys) needs about "
         "2.26 GiB, more than --max-mem 300 MiB"),
    ]:
        expect(["selfattn"] + args, code, err=S + msg)
    expect(["selfattn", "--permute", "--valid-lens", "4,5"], 0, err="")  # lengths that cover
    lens_path = os.path.join(tmp, "lens.json")
    with open(lens_path, "w") as fh:
        json.dump({"X": X, "num_heads": 2, "valid_lens": [3]}, fh)
    expect(["selfattn", "--permute", "--input", lens_path], 2,
           err=S + "--permute: valid_len 3 (from the file's valid_lens) is shorter than the "
                   "sequence of 5: padding does not move with the tokens, so every valid_len "
                   "must cover the sequence")
    bad = os.path.join(tmp, "bad.png")
    expect(["selfattn", "--permute", "--permutation", "0,0,1,2", "--png", bad], 2)
    check(not os.path.exists(bad), "a refused --permute writes no figure")

    # ---- --scale-sweep: the default sweep, printed and as JSON
    if not heavy("the default --scale-sweep (d = 1 … 1024, 10000 samples)"):
        rc, out, _ = expect(["selfattn", "--scale-sweep"], 0, err="",
                            out_has=["Why divide by √d (--scale-sweep)",
                                     "10000 samples per d (--samples), softmax over n = 16 keys",
                                     "softmax(QKᵀ/√d)·V.\n"])
        table = [l for l in out.splitlines() if len(l.split()) == 7 and l.split()[0].isdigit()]
        rows = [l.split() for l in table]
        check([int(r[0]) for r in rows] == [2 ** i for i in range(11)], "a row per d = 1 … 1024")
        head = [l for l in out.splitlines() if l.strip().startswith("d ")]
        check(len(head) == 1 and head[0].split() == ["d", "q·k", "q·k/√d", "q·k", "q·k/√d",
                                                     "q·k", "q·k/√d"], "the table's header line")
        for r in rows:
            d, vr, vs, mr, ms, er, es = int(r[0]), *map(float, r[1:])
            check(abs(vr - d) <= 0.1 * d and abs(vs - 1) <= 0.1,
                  "d = %d: var(q·k) %g ≈ d, var(q·k/√d) %g ≈ 1" % (d, vr, vs))
            check(0.15 < ms < 0.35 and 2.1 < es < 2.6,
                  "d = %d: scaled softmax keeps its shape (%g, %g)" % (d, ms, es))
        check(float(rows[-1][3]) > 0.9 and float(rows[-1][5]) < 0.2,
              "d = 1024: the raw softmax is near one-hot (%s, %s)" % (rows[-1][3], rows[-1][5]))
        # aligned: every row as long as the header line
        check(len({len(l) for l in head + table}) == 1,
              "the table's columns are aligned")
        jpath = os.path.join(tmp, "sweep.json")
        png = os.path.join(tmp, "sweep.png")
        rc, out, _ = expect(["selfattn", "--scale-sweep", "--json", jpath, "--png", png], 0,
                            err="", out_has=["wrote %s: variances, largest weights and entropies "
                                             "against d" % jpath,
                                             "wrote %s: the softmax's largest weight and the "
                                             "variance of the scores against d, " % png])
        doc = json.load(open(jpath))
        check(doc["command"] == "selfattn" and doc["demo"] == "scale-sweep" and
              doc["dims"] == [2 ** i for i in range(11)] and doc["samples"] == 10000 and
              doc["keys"] == 16 and doc["seed"] == 0, "--scale-sweep JSON header")
        for key in ["var_raw", "var_scaled", "max_weight_raw", "max_weight_scaled",
                    "entropy_raw", "entropy_scaled"]:
            check(len(doc[key]) == 11, "%s has one number per d" % key)
        for i, d in enumerate(doc["dims"]):
            vr, vs = doc["var_raw"][i], doc["var_scaled"][i]
            check(abs(vr - d) <= 0.1 * d and abs(vs - 1) <= 0.1 and
                  abs(vr - d * vs) <= 1e-6 * vr, "JSON d = %d: variances %g, %g" % (d, vr, vs))
            check(abs(doc["max_weight_raw"][i] - float(rows[i][3])) < 1e-4,
                  "JSON and table agree at d = %d" % d)
        check(doc["max_weight_raw"][-1] > 0.9 and doc["entropy_raw"][-1] < 0.2 and
              doc["max_weight_raw"][0] == doc["max_weight_scaled"][0],
              "JSON: one-hot at d = 1024, the two alike at d = 1")
        w, h, ctype = png_info(png)
        check(ctype == 2 and w == 900 and 600 <= h <= 1000, "sweep PNG: two plots stacked "
              "(%dx%d)" % (w, h))

    # a small sweep recomputed entirely here: the same numbers to 1e-6
    small = ["--samples", "40", "--kv", "5", "--dims", "1:8", "--seed", "3"]
    rc, out, _ = expect(["selfattn", "--scale-sweep", "--json", "-"] + small, 0, err="")
    doc = json.loads(out)
    check(doc["dims"] == [1, 2, 4, 8] and doc["samples"] == 40 and doc["keys"] == 5 and
          doc["seed"] == 3, "small sweep: header")
    for i, d in enumerate(doc["dims"]):
        want = demo_sweep_expect(3, d, 40, 5)
        worst = max(abs(doc[k][i] - v) / max(1.0, abs(v)) for k, v in want.items())
        check(worst < 1e-6, "d = %d: every statistic as computed here (worst %g)" % (d, worst))
    # --kv changes the softmax, not the variance's law; --dims a single d
    doc = json.loads(run(["selfattn", "--scale-sweep", "--kv", "4", "--samples", "4000",
                          "--dims", "16:16", "--json", "-"])[1])
    check(doc["dims"] == [16] and 0.25 < doc["max_weight_scaled"][0] < doc["max_weight_raw"][0]
          and doc["entropy_scaled"][0] < math.log(4), "--kv 4 --dims 16:16: %s" % doc)
    png = os.path.join(tmp, "one.png")
    expect(["selfattn", "--scale-sweep", "--dims", "4:4", "--samples", "100", "--png", png], 0,
           err="")
    png_info(png)

    # ---- --scale-sweep: errors
    takes = ("(it takes --dims, --samples, --kv, --seed, --png, --json, --font, --max-mem)")
    for args, code, msg in [
        (["--scale-sweep", "--hiddens", "8"], 2,
         "--hiddens cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--scale-sweep", "--input", "x.json"], 2,
         "--input cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--scale-sweep", "--posenc"], 2,
         "--posenc cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--scale-sweep", "--tokens", "a b"], 2,
         "--tokens cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--dims", "1:8"], 2, "--dims is for --scale-sweep"),
        (["--samples", "10"], 2, "--samples is for --scale-sweep"),
        (["--kv", "3"], 2,
         "--kv is for --scale-sweep (in self-attention the keys are the queries: --queries)"),
        (["--scale-sweep", "--dims", "3:8"], 2,
         "--dims: 3 is not a power of two (1, 2, 4, …, 1048576)"),
        (["--scale-sweep", "--dims", "8:2"], 2, "--dims: FROM must not exceed TO, got '8:2'"),
        (["--scale-sweep", "--dims", "1024"], 2,
         "--dims: expected FROM:TO like 1:1024 (powers of two), got '1024'"),
        (["--scale-sweep", "--dims", "0:8"], 2,
         "--dims: expected an integer from 1 to 1048576, got '0'"),
        (["--scale-sweep", "--kv", "1"], 2,
         "--kv: a softmax over one key is always 1; --scale-sweep needs 2 or more keys"),
        (["--scale-sweep", "--kv", "20", "--samples", "10"], 2,
         "--kv 20 needs at least as many --samples, got 10: each softmax row takes --kv "
         "different keys from the samples"),
        (["--scale-sweep", "--samples", "1"], 2,
         "--samples: expected an integer from 2 to 100000000, got '1'"),
        (["--scale-sweep", "--max-mem", "1M"], 1,
         "--scale-sweep --samples 10000 --dims 1:1024 needs about 78.1 MiB, more than "
         "--max-mem 1 MiB"),
        (["--scale-sweep", "--samples", "100000000", "--dims", "1:1048576"], 1,
         "--scale-sweep --samples 100000000 --dims 1:1048576 needs about 763 TiB, more than "
         "--max-mem 4 GiB"),
    ]:
        expect(["selfattn"] + args, code, err=S + msg)
    # --color (which attn tour passes to every step) is accepted, and changes nothing
    for demo in [["--permute"], ["--scale-sweep", "--dims", "1:2", "--samples", "20"]]:
        plain = run(["selfattn"] + demo)[1]
        expect(["selfattn"] + demo + ["--color", "always"], 0, err="")
        check(run(["selfattn"] + demo + ["--color", "always"])[1] == plain,
              "%s --color always prints the same" % demo[0])
    bad = os.path.join(tmp, "sweep_bad.png")
    expect(["selfattn", "--scale-sweep", "--max-mem", "1K", "--png", bad], 1)
    check(not os.path.exists(bad), "a refused sweep writes no figure")
    expect(["selfattn", "--help"], 0, err="",
           out_has=["      --permute            demo: order blindness (below)\n",
                    "      --scale-sweep        demo: why the scores are divided by √d (below)\n",
                    "Order blindness (--permute).", "Why divide by √d (--scale-sweep).",
                    "  attn selfattn --permute --tokens", "  attn selfattn --scale-sweep --png"])


GROUPS = {
    "general": group_general,
    "posenc_options": group_posenc_options,
    "posenc_outputs": group_posenc_outputs,
    "posenc_files": group_posenc_files,
    "attention_errors": group_attention_errors,
    "attention_options": group_attention_options,
    "attention_outputs": group_attention_outputs,
    "complexity": group_complexity,
    "bad_options": group_bad_options,
    "bad_inputs": group_bad_inputs,
    "tour": group_tour,
    "fonts": group_fonts,
    "posenc_layouts": group_posenc_layouts,
    "demos_attention": group_demos_attention,
    "train": group_train,
}


def main():
    global ATTN
    if len(sys.argv) != 3 or sys.argv[2] not in GROUPS:
        sys.exit("usage: cli_test.py ATTN {%s}" % ",".join(GROUPS))
    ATTN = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="attn-cli-") as tmp:
        # fontconfig sees no fonts unless a case says otherwise
        FONTS_ENV["FONTCONFIG_FILE"] = fc_config(os.path.join(tmp, "fc-default.conf"))
        # the figures with 苹果 need the set-up's CJK font: say so once, up front
        if sys.argv[2] in ("tour", "demos_attention", "fonts"):
            check(os.path.exists(WQY), "%s is missing: install Debian's fonts-wqy-microhei "
                  "(scripts/setup.sh does); the 苹果 figures cannot be labelled" % WQY)
        GROUPS[sys.argv[2]](tmp)
    print("%s: %d checks, %d failed" % (sys.argv[2], COUNT, len(FAILED)))
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
