#!/usr/bin/env python3
"""The fuzz harnesses' dictionaries and generated seeds, made from attn
itself each time scripts/fuzz (or scripts/test's smoke run) starts, so that
they follow the code without anyone remembering to update them.

usage: make_dict.py ATTN FUZZDIR OUTDIR NAME...

For each harness NAME, OUTDIR/NAME.dict (libFuzzer's -dict) holds:
  options: every command (`ATTN --list-commands`) and, for each, every
           option, short name and choice word of `ATTN CMD --list-options`
           (the option tables of src/cmd), then FUZZDIR/options.dict (values:
           numbers, file names);
  model:   every key of the models attn train saves for MODELS below, then
           FUZZDIR/model.dict (the keys of SPEC §9, stacks included); the
           models themselves go to OUTDIR/seeds/model/ for the corpus. A
           configuration attn train refuses today (--layers and --ffn before
           stacks exist) is left out and joins once attn saves it;
  others:  FUZZDIR/NAME.dict when there is one, else an empty dictionary.
"""
import json
import os
import subprocess
import sys
import tempfile

# Small models attn train saves (d.json: token targets, l.json: labels).
MODELS = [
    ("plain", "d.json", ["--hiddens", "4", "--heads", "2"]),
    ("bias-addnorm", "d.json", ["--hiddens", "4", "--heads", "2", "--bias", "--addnorm"]),
    ("no-posenc", "d.json", ["--hiddens", "2", "--heads", "1", "--no-posenc"]),
    ("labels", "l.json", ["--hiddens", "4", "--heads", "1", "--bias"]),
    # SPEC §9 "Stacks": d2l's TransformerEncoder names (blks.blockN.…)
    ("stack2", "d.json", ["--layers", "2", "--hiddens", "4", "--heads", "2"]),
    ("stack2-ffn", "d.json", ["--layers", "2", "--ffn", "3", "--hiddens", "4", "--heads", "2",
                              "--bias"]),
    ("stack1-ffn", "l.json", ["--ffn", "2", "--hiddens", "2", "--heads", "1"]),
    # a learned P (SPEC §15, --pos-embedding learned): "pos_embedding" (1, max_len, d)
    ("learned", "d.json", ["--hiddens", "4", "--heads", "2", "--pos-embedding", "learned"]),
    ("learned-stack2-ffn", "l.json", ["--layers", "2", "--ffn", "3", "--hiddens", "4",
                                      "--heads", "2", "--pos-embedding", "learned"]),
]

DATA = {
    "d.json": {"sequences": [["a", "b", "c"], ["c", "b", "a"], ["b", "c"]],
               "targets": [["c", "b", "a"], ["a", "b", "c"], ["c", None]]},
    "l.json": {"sequences": [["x", "苹果", "y"], ["苹果", "z"]],
               "labels": ["fruit", "company"], "label_at": "苹果"},
}


def entry(text):
    """A libFuzzer dictionary entry: "…" with \\", \\\\ and \\xNN escapes."""
    out = []
    for b in text.encode():
        c = chr(b)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append("\\x%02x" % b)
    return '"' + "".join(out) + '"'


def run(attn, args):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", NO_COLOR="1", OMP_NUM_THREADS="1")
    return subprocess.run([attn] + args, capture_output=True, text=True, env=env)


def options_dict(attn):
    words = []
    r = run(attn, ["--list-commands"])
    if r.returncode != 0:
        sys.exit("make_dict.py: %s --list-commands failed: %s" % (attn, r.stderr))
    for cmd in r.stdout.split():
        words.append(entry(cmd + "\n"))
        r = run(attn, [cmd, "--list-options"])
        if r.returncode != 0:
            sys.exit("make_dict.py: %s %s --list-options failed" % (attn, cmd))
        for line in r.stdout.splitlines():
            # "--long -s ARG KIND [CHOICE…]"
            f = line.split()
            words.append(entry("\n" + f[0] + "\n"))
            words.append(entry(f[0] + "="))
            if f[1] != "-":
                words.append(entry("\n" + f[1] + "\n"))
            words += [entry(c) for c in f[4:]]
    return words


def keys_of(doc, out):
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.add(k)
            keys_of(v, out)


def model_dict(attn, outdir):
    seeds = os.path.join(outdir, "seeds", "model")
    os.makedirs(seeds, exist_ok=True)
    keys = set()
    with tempfile.TemporaryDirectory() as tmp:
        for name, doc in DATA.items():
            with open(os.path.join(tmp, name), "w") as f:
                json.dump(doc, f, ensure_ascii=False)
        for name, data, args in MODELS:
            model = os.path.join(tmp, name + ".json")
            r = run(attn, ["train", "--data", os.path.join(tmp, data), "--steps", "1",
                           "--save", model] + args)
            if r.returncode != 0:
                continue  # not a configuration attn train has (yet)
            with open(model, "rb") as f:
                text = f.read()
            with open(os.path.join(seeds, "gen-" + name + ".json"), "wb") as f:
                f.write(text)
            keys_of(json.loads(text), keys)
    return [entry('"%s":' % k) for k in sorted(keys)] + [entry('"%s"' % k) for k in sorted(keys)]


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    attn, fuzzdir, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[4:]:
        words = []
        if name == "options":
            words = options_dict(attn)
        elif name == "model":
            words = model_dict(attn, outdir)
        lines = ["# made by tests/fuzz/make_dict.py from %s" % attn]
        seen = set()
        for w in words:
            if w not in seen:
                seen.add(w)
                lines.append(w)
        static = os.path.join(fuzzdir, name + ".dict")
        if os.path.exists(static):
            with open(static) as f:
                lines.append(f.read().rstrip("\n"))
        with open(os.path.join(outdir, name + ".dict"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
