#!/usr/bin/env python3
"""tests/wasm/compare.py ATTN MODULE — the pages' WebAssembly module
(SPEC §14) prints what the attn binary prints, byte for byte.

Each command below needs no file: it is run by the binary and by the
module under Node with the pages' own WASI shim (tests/wasm/run.cjs,
src/render/page/wasi.js), and their standard output, standard error and
exit status must be equal: text, --json -, the errors of bad input, and
training (SPEC §12's one order of operations, carried into WebAssembly).
scripts/reproducible's wasm leg runs its catalogue's file-free entries
the same way.
"""
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

COMMANDS = [
    # the chapter's cells, text and --json -
    "multihead", "multihead --json -", "multihead --fill random --causal --bias --json -",
    "multihead --score additive --heads 2 --hiddens 8 --valid-lens 1,2;3,3,3,3 --json -",
    "multihead --explain --batch 1 --queries 2 --kv 3 --hiddens 4 --heads 2 --fill random",
    "multihead --fill random --queries 300 --kv 260 --hiddens 96 --heads 4 --json -",
    "multihead --fill random --stream --json -", "multihead --describe",
    "multihead --explain --json -", "multihead --explain --valid-lens 2,3 --json -",
    "selfattn --explain --score additive --valid-lens 2,3 --causal --fill random --json -",
    "selfattn --tokens '我 爱 苹果 。' --posenc --json -", "selfattn --permute",
    "selfattn --scale-sweep --dims 1:64 --samples 500", "selfattn --no-proj --explain",
    "posenc", "posenc --json -", "posenc --dim 33 --steps 10 --layout concat --json -",
    "posenc --binary 8", "posenc --check-relative 1:50", "posenc --rope --check-relative 3 --json -",
    "complexity", "complexity --n 1000 --d 64 --k 5 --r 8 --json -",
    "heatmap --eye 6 --json -", "heatmap --eye 3",
    "pool", "pool --json -", "pool --edition en --method nonparametric --kernel boxcar,laplace "
    "--sigma 0.1,1 --json -", "pool --method parametric --epochs 20 --lr 0.3 --json -",
    "score", "score --json -", "score --masked-softmax", "score --score dot --explain",
    "cells", "cells --edition en --json -", "cells 10.9",
    "score --valid-lens 1;3 --score-hiddens 4 --seed 2 --json -", "score --valid-lens none",
    "score --explain --keys random --queries 2 --valid-lens 1,3;0,11 --json -", "score --explain --score general --json -",
    # training, in the module as in the binary
    "train --task reverse --steps 40 --json -", "train --task previous --steps 30 --no-posenc --json -",
    "train --task apple --steps 30 --json -", "train --task induction --steps 10 --json -",
    "train --task translate --steps 4 --log-every 2 --json -",
    # errors: one line, the same exit status
    "multihead --hiddens 100 --heads 3", "multihead --bogus", "posenc --dim 0",
    "pool --method nope", "train --task nope", "selfattn --valid-lens 9,9 --json -",
    "score --valid-lens 1,2,3",
]

# With a model on standard input (--input -)
STDIN_COMMANDS = [
    "translate --input - --json - 'the big red dog sees a cat .'",
    "translate --input - --all --reference 'le chat voit un chien .' --json - 'the cat sees a dog .'",
]

# What the module cannot do, by design: it has no files, no PNG and no
# page; it says so in attn's one line, exit status 1.
REFUSED = [
    ("heatmap missing.json", "attn heatmap: missing.json: cannot open: Capabilities insufficient\n"),
    ("multihead --html page.html", "attn multihead: --html page.html: cannot create: Capabilities insufficient\n"),
    ("multihead --png figure.png", "attn multihead: figure.png: figures are drawn by the page, not by its WebAssembly module\n"),
]


def run(argv, stdin=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, input=stdin,
                       env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")})
    return p.returncode, p.stdout, p.stderr


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare.py ATTN MODULE")
    attn, module = sys.argv[1], sys.argv[2]
    failed = 0
    for c in COMMANDS:
        args = shlex.split(c)
        native = run([attn] + args)
        wasm = run(["node", os.path.join(HERE, "run.cjs"), module] + args)
        if native == wasm:
            print("ok   attn %s (%d bytes, exit %d)" % (c, len(native[1]), native[0]))
            continue
        failed += 1
        what = [n for n, a, b in zip(("exit status", "stdout", "stderr"), native, wasm) if a != b]
        print("FAIL attn %s: %s differ" % (c, ", ".join(what)))
        for n, a, b in zip(("exit status", "stdout", "stderr"), native, wasm):
            if a != b and n != "exit status":
                off = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                print("  %s: first difference at byte %d: %r vs %r" % (n, off, a[off:off + 60], b[off:off + 60]))
            elif a != b:
                print("  exit %d vs %d" % (a, b))
    # a model on standard input, as a translation page gives its module one
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.json")
        subprocess.run([attn, "train", "--task", "translate", "--steps", "10", "--save", model],
                       stdout=subprocess.DEVNULL, check=True)
        with open(model, "rb") as f:
            text = f.read()
        for c in STDIN_COMMANDS:
            args = shlex.split(c)
            native = run([attn] + args, text)
            wasm = run(["node", os.path.join(HERE, "run.cjs"), "--stdin", model, module] + args)
            ok = native == wasm and native[0] == 0
            failed += not ok
            print("%s attn %s < model.json (%d bytes)" % ("ok  " if ok else "FAIL", c, len(native[1])))
        total_stdin = len(STDIN_COMMANDS)
    for c, line in REFUSED:
        code, out, err = run(["node", os.path.join(HERE, "run.cjs"), module] + shlex.split(c))
        ok = code == 1 and err.decode() == line
        failed += not ok
        print("%s attn %s in the module: %s" % ("ok  " if ok else "FAIL", c, err.decode().strip()))
    total = len(COMMANDS) + total_stdin + len(REFUSED)
    print("%d of %d checks passed" % (total - failed, total))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
