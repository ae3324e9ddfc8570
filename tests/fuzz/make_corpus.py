#!/usr/bin/env python3
"""Regenerate the fuzzers' seed corpus in tests/fuzz/corpus/ (committed).

json/:    data/*.json, the "input" objects of the smaller PyTorch fixtures in
          tests/ref/attention (numbers rounded to 4 digits), and every bad
          JSON text of tests/cli/attention.py's group_attention_errors;
options/: argv lines (one word a line, the command first) from the
          commands' --help examples and the bad options of the CLI tests
          (tests/cli/).

Usage: python3 tests/fuzz/make_corpus.py   (from anywhere)
"""
import glob
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

OPTIONS = [
    # the --help and README examples (paths inside the working folder)
    "posenc --dim 32 --steps 60 --png out.png",
    "posenc --plot cols.png --cols 6-9",
    "posenc --binary 8",
    "posenc --steps 100 --check-relative 1:50",
    "posenc --check-relative 3 --dim 7 --steps 9 --naive",
    "posenc --similarity sim.png --dim 16 --steps 20 --cmap viridis",
    "posenc --json - --dim 5 --steps 3 --base 100",
    "posenc --numbers --color always -d 4 -n 3",
    "posenc --cols 0,1,4-5 --plot p.png --dim 6",
    "multihead",
    "multihead --describe",
    "multihead --png heads.png",
    "multihead --explain --batch 1 --queries 2 --kv 3 --hiddens 4 --heads 2",
    "multihead --input in.json --json out.json",
    "multihead --input in.json --png w.png --cmap gray --causal",
    "multihead --score additive --score-hiddens 3 --hiddens 4 --heads 2 --explain",
    "multihead --stream --explain --block 3 --batch 1 --queries 3 --kv 5 --hiddens 4 --heads 1",
    "multihead --fill random --seed 7 --bias --train --dropout 0.3 --json -",
    "multihead --valid-lens 1,2,3,4;2,2,2,2 --naive --threads 2",
    "multihead --query-size 3 --key-size 5 --value-size 2 --hiddens 6 --heads 3 --json o.json",
    "selfattn",
    "selfattn --tokens 苹果 发布 了 新的 产品 --hiddens 16 --heads 2",
    "selfattn --input x.json --png apple.png",
    "selfattn --stream --explain --batch 1 --queries 5 --hiddens 4 --heads 1 --fill random --valid-lens none",
    "selfattn --tokens a b | c d --posenc --no-proj --explain",
    "selfattn --input x.json --heads 2 --causal --json -",
    "complexity",
    "complexity --n 5 --k 3",
    "complexity --n 4096 --d 64 --json table.json",
    "complexity -n 17 -k 5 -r 3 --json -",
    # the bad options of the CLI tests (tests/cli/)
    "multihead --heads 0",
    "multihead --hiddens 100 --heads 3",
    "multihead --valid-lens 3,x",
    "multihead --valid-lens 1,2;3",
    "multihead --valid-lens 3,2,1",
    "multihead --valid-lens 1,2;3,4",
    "multihead --fill zeros",
    "multihead --score cosine",
    "multihead --dropout 1.5",
    "multihead --score-hiddens 4",
    "multihead --input x.json --batch 2",
    "multihead --tokens a b",
    "selfattn --kv 3",
    "selfattn --tokens a b | c --batch 3",
    "selfattn --tokens a b |  | c",
    "selfattn --no-proj --bias",
    "multihead --seed -1",
    "multihead --heads 4 --heads 5",
    "multihead --queries 100000 --kv 100000 --hiddens 8 --heads 8 --batch 8",
    "multihead --stream --png x.png",
    "multihead --stream --naive",
    "multihead --stream --score additive",
    "multihead --block 4",
    "multihead --threads 0",
    "posenc --dim 0",
    "posenc --steps 1e3",
    "posenc --cols 9-6 --plot p.png",
    "posenc --check-relative 5:2",
    "posenc --base=-1",
    "complexity --k 1",
    "complexity --png x.png",
    "complexity --n 100000000 --d 100000000",
]


def words_line(line):
    # "a b | c d" style token lists stay one word: split on " --" options
    out, cur = [], None
    for w in line.split(" "):
        if cur is not None and not w.startswith("-"):
            cur.append(w)
            continue
        if cur is not None:
            out.append(" ".join(cur))
            cur = None
        if w == "--tokens":
            out.append(w)
            cur = []
        else:
            out.append(w)
    if cur is not None:
        out.append(" ".join(cur))
    return out


def rounded(x):
    if isinstance(x, float):
        return float("%.4g" % x)
    if isinstance(x, list):
        return [rounded(v) for v in x]
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


def bad_json_cases():
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from cli import attention  # noqa: E402
    texts = []
    attention.write = lambda tmp, name, text: texts.append(text) or name
    attention.expect = lambda *a, **k: None
    attention.group_attention_errors("/nonexistent")
    return texts


def save(folder, data):
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    jdir = os.path.join(HERE, "corpus", "json")
    odir = os.path.join(HERE, "corpus", "options")
    for d in (jdir, odir):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
    for path in sorted(glob.glob(os.path.join(ROOT, "data", "*.json"))):
        with open(path, "rb") as f:
            save(jdir, f.read())
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "ref", "attention", "*.json"))):
        if os.path.getsize(path) > 12000:
            continue
        with open(path) as f:
            inp = json.load(f)["input"]
        save(jdir, json.dumps(rounded(inp), separators=(",", ":")).encode())
    for text in bad_json_cases():
        save(jdir, text.encode())
    for line in OPTIONS:
        save(odir, ("\n".join(words_line(line)) + "\n").encode())


if __name__ == "__main__":
    main()
