"""Group general: --help and help for every command, --version, the
commands listed, the options the README, the man page and docs/ name, the
paths the --help texts name, unknown commands and options."""
import glob
import os
import re

from .common import ROOT, check, expect, run


# Options of other programs the documents show (meson, valgrind, perf, git):
# not attn's.
MESON_OPTIONS = {"--destdir", "--setup", "--suite", "--print-errorlogs", "--num-processes",
                 "--buildtype", "--error-exitcode", "--leak-check", "--change"}
# Options of scripts/test and scripts/reproducible (README.md,
# docs/testing.md): not attn's either.
SCRIPT_OPTIONS = {"--full", "--legs", "--only", "--keep", "--jobs", "--against"}


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
    check(commands == ["heatmap", "pool", "score", "selfattn", "multihead", "posenc", "complexity", "train", "translate",
                      "vit", "cells", "tour"],
          "attn --help lists the commands: %r" % commands)
    check("not built" not in out, "attn --help: every command is built")
    for c in commands:
        rc, text, _ = expect([c, "--help"], 0, err="", out_has=["usage: attn %s" % c])
        examples = text.split("Examples:\n")[-1].splitlines() if "Examples:\n" in text else []
        check(sum(1 for l in examples if l.strip().startswith("attn %s" % c)) >= 1,
              "attn %s --help shows at least one example" % c)
    # the man page, the README and the guide (docs/**/*.md) name only
    # options that exist; the man page and the README name every command
    helps = "".join(run([c, "--help"])[1] for c in commands)
    docs = sorted(os.path.relpath(p, ROOT) for p in
                  glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    check(len(docs) >= 9, "the guide is in docs/: %r" % docs)
    for doc in ["doc/attn.1.scd", "README.md"] + docs:
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", text))
        named -= {"--help", "--version", "--list-commands", "--list-options", "--lang"}
        named -= MESON_OPTIONS | SCRIPT_OPTIONS
        stale = sorted(o for o in named if o not in helps)
        check(not stale, "%s names options no command has: %r" % (doc, stale))
        if not doc.startswith("docs/"):
            check(all(c in text for c in commands), "%s describes every command" % doc)
    # every path of the source tree a --help names exists
    for p in sorted(set(re.findall(r"(?<![\w./-])((?:src|tests|scripts|data|doc|docs)/"
                                   r"[\w./-]*\w)", helps))):
        check(os.path.exists(os.path.join(ROOT, p)), "a --help names %s, which does not exist"
              % p)
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
