#!/usr/bin/env python3
"""Regenerate the fuzzers' seed corpus in tests/fuzz/corpus/ (committed).

json/:    data/*.json, the "input" objects of the smaller PyTorch fixtures in
          tests/ref/attention (numbers rounded to 4 digits), and every bad
          JSON text of tests/cli/attention.py's group_attention_errors;
options/: argv lines (one word a line, the command first) from the
          commands' --help examples and the bad options of the CLI tests
          (tests/cli/);
train_data/: --data files: data/apple_train.json, those of
          tests/cli/train.py, and edge cases (TRAIN_DATA below);
nmt_data/: --data files of sentence pairs (SPEC §11): fra.txt lines
          (tests/ref/nmt/fra_small.txt and edge cases) and the JSON form,
          good and bad (NMT_DATA below);
pool/:    attn pool --input files (POOL_DATA below): valid, ragged, NaN,
          empty, mismatched lengths, far and huge numbers;
translate/: typed sentences for attn translate, and translation models
          attn train saves (no step), good and broken (TRANSLATE_*);
lm_text/: texts for attn train --task lm (LM_TEXTS below): English, Chinese,
          Japanese, emoji, a BOM, CRLF, and invalid UTF-8 of each kind
          (stray continuation, overlong, surrogates, above U+10FFFF,
          truncated, 0xF8…0xFF, a NUL);
model/:   the models attn train saves for make_dict.py's MODELS (with the
          attn of build/, which must be built), the same with a field
          broken, and the stacked models of SPEC §9 "Stacks" written by
          hand from a saved one (STACKS below; refused until attn loads
          stacks, then loaded).

Usage: python3 tests/fuzz/make_corpus.py [ATTN]   (from anywhere; ATTN
       defaults to build/attn)
"""
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

OPTIONS = [
    # attn cells: a section, the en edition with JSON, an unknown section
    "cells 10.7 --seed 3",
    "cells 11.3 --edition en --json o.json",
    "cells 10.9",
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
    "multihead --explain-shapes",
    "multihead --explain-shapes --batch 3 --queries 5 --kv 4 --hiddens 12 --heads 3 --causal --json -",
    "multihead --explain-shapes --valid-lens 1,2,3;0,3,1 --heads 1",
    "multihead --explain-shapes --explain",
    "multihead --explain-shapes --score additive",
    "multihead --input in.json --json out.json",
    "multihead --input in.json --png w.png --cmap gray --causal",
    "multihead --score additive --score-hiddens 3 --hiddens 4 --heads 2 --explain",
    "multihead --stream --explain --block 3 --batch 1 --queries 3 --kv 5 --hiddens 4 --heads 1",
    "multihead --fill random --seed 7 --bias --train --dropout 0.3 --json -",
    "multihead --valid-lens 1,2,3,4;2,2,2,2 --naive --threads 2",
    "multihead --query-size 3 --key-size 5 --value-size 2 --hiddens 6 --heads 3 --json o.json",
    "selfattn",
    "selfattn --tokens 苹果 发布 了 新的 产品 --hiddens 16 --heads 2",
    "selfattn --tokens 我爱北京天安门|こんにちは。 --hiddens 8 --heads 2",
    "selfattn --tokens 我爱NLP | 안녕하세요 --queries 3",
    "selfattn --input x.json --png apple.png",
    "selfattn --stream --explain --batch 1 --queries 5 --hiddens 4 --heads 1 --fill random --valid-lens none",
    "selfattn --tokens a b | c d --posenc --no-proj --explain",
    "selfattn --input x.json --heads 2 --causal --json -",
    "selfattn --depth 8 --plot depth.png",
    "selfattn --depth 3 --batch 1 --queries 3 --hiddens 4 --heads 2 --causal --bias --json -",
    "selfattn --depth 2 --input x.json",
    "selfattn --depth 0",
    "selfattn --depth 1001",
    "selfattn --depth 3 --tokens a b c|d e",
    "selfattn --depth 2 --valid-lens 3,2",
    "selfattn --plot p.png",
    "heatmap --random 10 --softmax --png softmax.png",
    "heatmap --random 4 --seed 3 --softmax --json -",
    "heatmap --eye 4 --softmax",
    "heatmap --random 0",
    "heatmap --random 3 --eye 3",
    "heatmap --seed 3 --eye 3",
    "complexity",
    "complexity --n 5 --k 3",
    "complexity --n 4096 --d 64 --json table.json",
    "complexity -n 17 -k 5 -r 3 --json -",
    "pool --n-train 10,20,50,100,200",
    "pool --n-train 10,20 --json -",
    "pool --sigma auto --kernel gaussian,boxcar --sigma-png out.png",
    "pool --sigma auto,1",
    "pool --method additive --score-hiddens 3 --epochs 2 --json -",
    "pool --method average,additive --score-hiddens 0",
    "pool --method parametric --keep-self --epochs 20",
    "pool --method average --keep-self",
    "pool --method average --kernels-png out.png",
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
    # train (the harness caps --steps at 2) and tour (its fast steps)
    "train",
    "train --task apple --hiddens 4 --heads 2",
    "train --task previous --length 4 --vocab 3 --hiddens 4 --heads 1 --addnorm --bias --causal --dropout 0.1",
    "train --data d.json --json o.json --png out.png --plot p.png --save s.json",
    "train --load m.json --steps 0",
    "train --task previous --pos-embedding learned --compare-posenc --pos-png p.png --steps 2",
    "train --no-posenc --pos-embedding learned",
    "train --load m.json --data d.json --steps 1 --optimizer sgd --lr 0.5",
    "train --compare-posenc --length 3 --vocab 2",
    "train --batch-size 1 --log-every 1 --seed 3 --no-posenc --json -",
    "train --task poem",
    "train --lr 0",
    "train --lr nan",
    "train --hiddens 30 --heads 4",
    "train --task apple --length 5",
    "train --data d.json --task apple",
    "train --load m.json --heads 2",
    "train --compare-posenc --save m.json",
    "train --steps -1",
    "train --steps=1 --threads=2",
    "selfattn --input m.json --tokens a b c|b c",
    "selfattn --input m.json --tokens a zz",
    "selfattn --input m.json",
    "tour --list",
    "tour --step 2 --out t",
    "tour --step multihead --color never",
    "tour -s 2",
    "tour --step 99",
    "tour --list --step 3",
    "tour --step cross --html --out t",
    "selfattn --scale-sweep --dims 1:8 --samples 50 --html s.html",
    "selfattn --tokens a b|b a|a --json -",
]

# --data files (SPEC §9) besides data/apple_train.json and tests/cli/train.py's
TRAIN_DATA = [
    {"sequences": [["a", "b"], ["b", "a"]], "targets": [["b", "a"], ["a"]]},
    {"sequences": [["苹果", "甜"], ["很", "甜"]], "labels": ["fruit", "fruit"],
     "label_at": "苹果"},
    {"sequences": [["a", "b", "c"], ["c", "b", "a"], ["b", "c"]],
     "targets": [["c", "b", "a"], ["a", "b", "c"], ["c", None]]},
    {"sequences": [["a", "b"]], "targets": [["b", "zz"]]},
    {"sequences": [["x", "苹果", "y"], ["苹果", "z"], ["w", "苹果"]],
     "labels": ["fruit", "company", "fruit"], "label_at": "苹果",
     "heldout": {"sequences": [["苹果", "x"]], "labels": ["company"]}},
    {"sequences": [["a", "c"]], "targets": [[None, None]],
     "heldout": {"sequences": [["c", "a", "b"]], "targets": [["b", None, "a"]]}},
    {"sequences": [["<pad>"]], "targets": [["a"]]},
    {"sequences": [[""]], "targets": [["a"]]},
    {"sequences": [], "targets": []},
    {"sequences": [[]], "targets": [[]]},
    {"sequences": [["a"]], "labels": ["x"]},
    {"sequences": [["a"]], "labels": ["x"], "label_at": "a", "targets": [["a"]]},
    {"sequences": [["a"] * 513], "targets": [["a"] * 513]},
    {"sequences": [["a", "b"]], "targets": [["a", "b"]], "extra": 1},
    [["a"]],
]

# A saved model's state_dict renamed as SPEC §9 "Stacks" names a stack of
# TransformerEncoderBlocks (blks.blockN.…), with num_layers and
# ffn_num_hiddens: (name, layers, ffn, bias)
STACKS = [("stack2-ffn3-bias", 2, 3, True), ("stack2", 2, 0, False),
          ("stack1-ffn2", 1, 2, False), ("stack3-ffn1", 3, 1, True)]

# --data files of sentence pairs for fuzz_nmt_data (SPEC §11): fra.txt
# text and JSON, each one good or with one error of s2s_corpus.h.
NMT_DATA = [
    "Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #1158250 (Wittydev)\n"
    "Hi.\tSalut !\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123 (CM) & #509819 (Aiji)\n",
    "Run!\tCours\u202f!\nWow!\t\u00c7a alors\u00a0!\n\nI'm OK.\t\u00c7a va.\r\n",
    "Help me,  please.\tAidez-moi, s'il vous pla\u00eet.\n.Hi\t\u00c9coute, \u0152uvre \u00c0 \u0178.\n",
    "a\tb\nno tab here\n",
    "a\tb\n\t.\n",
    "Go.\t \u00a0\n",
    "\n\n \r\n",
    '{"pairs": [["the red car", "la voiture rouge"], ["a  big dog .", "un grand chien ."]], '
    '"heldout": {"pairs": [["the <unk> car", "la voiture"]]}}',
    '{"pairs": [["a", "b"], ["a", 3]]}',
    '{"pairs": [["a", "b", "c"]], "heldout": null}',
    '{"pairs": [], "colour": 1}',
    '{"pairs": [["a", "  "]]}',
]

# fuzz_pool: --input files (SPEC §13), good and with each error of
# pool_input.h, and numbers far apart or huge enough to overflow a square
# or a sum. Text, since JSON cannot write NaN.
POOL_DATA = [
    '{"x_train": [0.3, 1.2, 2.5, 4.1], "y_train": [1.1, 2.6, 1.9, 0.4], "x_test": [0, 1, 2, 3, 4]}',
    '{"x_train": [3, 1, 2.5, 0.2], "y_train": [1, 2, 0.5, 1.5], "x_test": [0, 1, 2, 9], '
    '"y_truth": [1, 2, 1, 0]}',
    '{"x_train": [1], "y_train": [2], "x_test": [0, 1]}',
    '{"x_train": [1, 1, 1], "y_train": [1, 2, 3], "x_test": [1, 1]}',
    '{"x_train": [-5e-324, 5e-324], "y_train": [0, -0], "x_test": [0]}',
    '{"x_train": [0, 1], "y_train": [1, 2], "x_test": [1e200, 0.5]}',
    '{"x_train": [-1e308, 1e308], "y_train": [1e308, 1e308], "x_test": [1e308, -1e308, 0]}',
    '{"x_train": [0, 1e6], "y_train": [-1e6, 1e6], "x_test": [5e5], "y_truth": [0]}',
    '{"x_train": [[1, 2], [3]], "y_train": [1, 2], "x_test": [1]}',
    '{"x_train": [1, 2], "y_train": [1, NaN], "x_test": [1]}',
    '{"x_train": [1, 2], "y_train": [1, 2], "x_test": [NaN]}',
    '{"x_train": [1, 1e999], "y_train": [1, 2], "x_test": [1]}',
    '{"x_train": [], "y_train": [], "x_test": [1]}',
    '{"x_train": [1, 2], "y_train": [1, 2], "x_test": []}',
    '{"x_train": [1, 2], "y_train": [1], "x_test": [1]}',
    '{"x_train": [1, 2], "y_train": [1, 2], "x_test": [1], "y_truth": [1, 2]}',
    '{"x_train": [1, 2], "y_train": [1, "a"], "x_test": [1]}',
    '{"x_train": [1, 2], "y_train": [1, 2], "x_test": [1], "y_truth": null}',
    '{"x_train": [1, 2], "y_train": [1, 2]}',
    '{"x_train": "1, 2", "y_train": [1, 2], "x_test": [1]}',
    '[1]',
    '{"x_train": [1, 2], "y_train": [1, 2], "x_test": [1], "x_train": [3]}',
    '{"x_train": [1, 2, 3',
]


def pool_corpus(folder):
    """fuzz_pool's seeds into folder: POOL_DATA and a generated set."""
    for text in POOL_DATA:
        save(folder, text.encode())
    xs = [round(5 * ((i * 37) % 50) / 50, 4) for i in range(50)]
    xs.sort()
    doc = {"x_train": xs, "y_train": [round(x * 0.8 + (i % 3) * 0.1, 4) for i, x in enumerate(xs)],
           "x_test": [round(0.1 * j, 1) for j in range(50)]}
    save(folder, json.dumps(doc).encode())


# fuzz_translate: typed sentences (after a tab, a reference), and the
# translation models attn train saves without a step (TRANSLATE_MODELS,
# on TRANSLATE_PAIRS), each also with one field broken.
TRANSLATE_SENTENCES = [
    "the big red dog sees a cat .",
    "The big red dog sees a cat.\tle grand chien rouge voit un chat .",
    "Tom sees the small apple!",
    "TOM  sees\u00a0the zebra\u202f?\t",
    "the big red dog sees a cat and the small cat sees it and more words than fit",
    "<pad> <pad>",
    "<unk> <eos> <bos>",
    "\u00c0 \u0130stanbul, \u0152uvre \u00e7a va .",
    "苹果 很 好吃",
    "   ",
    ".\t.",
    "a\x1b[31m b",
    # after a second tab, --prune-heads' list (d2l 10.5's exercise)
    "the big red dog sees a cat .\t\tenc1.1,cross1.2",
    "\t\tenc1.1,dec1.2,cross1.1,cross1.2,enc1.2,dec1.1",
    "\t\tenc1.1,enc1.1",
    "a cat\t\tdec2.9",
    "\t\tfoo,",
    "\t\tcross01.1",
]
TRANSLATE_PAIRS = {"pairs": [["the big red dog sees a cat .", "le grand chien rouge voit un chat ."],
                             ["Tom sees the small apple !", "Tom voit la petite pomme !"]]}
TRANSLATE_MODELS = [
    ("plain", ["--hiddens", "4", "--heads", "2", "--layers", "1", "--ffn", "4"]),
    ("bias-2layers", ["--hiddens", "4", "--heads", "1", "--layers", "2", "--ffn", "2", "--bias",
                      "--num-steps", "4"]),
    ("bahdanau", ["--arch", "bahdanau", "--hiddens", "4"]),
    ("bahdanau-2layers", ["--arch", "bahdanau", "--hiddens", "3", "--layers", "2",
                          "--num-steps", "4"]),
    # SPEC §15's --rnn lstm and --score dot
    ("bahdanau-lstm", ["--arch", "bahdanau", "--rnn", "lstm", "--hiddens", "4"]),
    ("bahdanau-lstm-dot-2layers", ["--arch", "bahdanau", "--rnn", "lstm", "--score", "dot",
                                   "--hiddens", "3", "--layers", "2", "--num-steps", "4"]),
]


def translate_corpus(attn, folder):
    """fuzz_translate's seeds into folder: sentences, models, broken models."""
    with tempfile.TemporaryDirectory() as tmp:
        pairs = os.path.join(tmp, "pairs.json")
        with open(pairs, "w") as f:
            json.dump(TRANSLATE_PAIRS, f)
        models = []
        for name, args in TRANSLATE_MODELS:
            path = os.path.join(tmp, name + ".json")
            subprocess.run([attn, "train", "--data", pairs, "--min-freq", "1", "--steps", "0",
                            "--save", path] + args, check=True, capture_output=True)
            with open(path) as f:
                models.append(json.load(f))
    for text in TRANSLATE_SENTENCES:
        save(folder, text.encode())
    plain = models[0]
    for m in models:
        save(folder, json.dumps(m, separators=(",", ":"), ensure_ascii=False).encode())
    broken = [("task", "reverse"), ("arch", "bahdanau"), ("num_steps", 0),
              ("num_steps", 100000), ("num_heads", 3), ("src_vocab", ["<unk>", "<pad>"]),
              ("tgt_vocab", ["<pad>", "<unk>", "<bos>", "<eos>", "x"]), ("state_dict", {}),
              ("seed", -1), ("seed", "0"), ("seed", 0)]
    for key, value in broken:
        m = dict(plain)
        m[key] = value
        save(folder, json.dumps(m, separators=(",", ":")).encode())
    m = dict(plain, state_dict=dict(plain["state_dict"]))
    m["state_dict"]["decoder.dense.bias"] = m["state_dict"]["decoder.dense.bias"][:-1]
    save(folder, json.dumps(m, separators=(",", ":")).encode())
    m = {k: v for k, v in plain.items() if k != "task"}
    m["vocab"] = ["<pad>", "a"]
    save(folder, json.dumps(m, separators=(",", ":")).encode())
    # Bahdanau's model: relabelled a Transformer, a GRU weight missing or cut
    gru = models[2]
    for key, value in [("arch", "transformer"), ("num_heads", 2), ("ffn_num_hiddens", 4)]:
        save(folder, json.dumps(dict(gru, **{key: value}), separators=(",", ":")).encode())
    m = dict(gru, state_dict=dict(gru["state_dict"]))
    del m["state_dict"]["decoder.rnn.weight_hh_l0"]
    save(folder, json.dumps(m, separators=(",", ":")).encode())
    m = dict(gru, state_dict=dict(gru["state_dict"]))
    m["state_dict"]["encoder.rnn.weight_ih_l0"] = m["state_dict"]["encoder.rnn.weight_ih_l0"][1:]
    save(folder, json.dumps(m, separators=(",", ":")).encode())
    # --rnn and --score: unknown names, a GRU's weights called an LSTM's,
    # the additive score's parameters in a dot-product model, an LSTM
    # relabelled a Transformer
    lstm, dot = models[4], models[5]
    for base, key, value in [(lstm, "rnn", "lstm2"), (lstm, "rnn", 1), (dot, "score", "mult"),
                             (gru, "rnn", "lstm"), (gru, "score", "dot"), (lstm, "rnn", "gru"),
                             (dot, "score", "additive"), (lstm, "arch", "transformer")]:
        save(folder, json.dumps(dict(base, **{key: value}), separators=(",", ":")).encode())


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


def stacked(model, layers, ffn, bias):
    """A one-layer model of attn train rewritten as a stack (SPEC §9)."""
    sd, d = model["state_dict"], model["num_hiddens"]
    out = {k: model[k] for k in ("command", "vocab", "classes", "num_hiddens", "num_heads")}
    out.update({"num_layers": layers, "ffn_num_hiddens": ffn, "posenc": True,
                "causal": False})
    new = {"embedding.weight": sd["embedding.weight"]}
    ones, zeros = [1.0] * d, [0.0] * d
    for b in range(layers):
        p = "blks.block%d." % b
        for w in ("W_q", "W_k", "W_v", "W_o"):
            new[p + "attention." + w + ".weight"] = sd[w + ".weight"]
            if bias:
                new[p + "attention." + w + ".bias"] = zeros
        new[p + "addnorm1.ln.weight"], new[p + "addnorm1.ln.bias"] = ones, zeros
        if ffn:
            new[p + "ffn.dense1.weight"] = [[0.5 if i == j else 0.0 for i in range(d)]
                                            for j in range(ffn)]
            new[p + "ffn.dense1.bias"] = [0.1] * ffn
            new[p + "ffn.dense2.weight"] = [[0.25] * ffn for _ in range(d)]
            new[p + "ffn.dense2.bias"] = zeros
            new[p + "addnorm2.ln.weight"], new[p + "addnorm2.ln.bias"] = ones, zeros
    new["head.weight"], new["head.bias"] = sd["head.weight"], sd["head.bias"]
    out["state_dict"] = new
    return out


def saved_models(attn):
    """The models attn train saves for make_dict.py's MODELS: {name: text}."""
    sys.path.insert(0, HERE)
    import make_dict  # noqa: E402
    import tempfile
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        make_dict.model_dict(attn, tmp)
        seeds = os.path.join(tmp, "seeds", "model")
        for name in sorted(os.listdir(seeds)):
            with open(os.path.join(seeds, name), "rb") as f:
                out[name] = f.read()
    return out


def idx_corpus(folder):
    """fuzz_idx's seeds into folder: IDX images and labels, plain and
    gzip'd, a wrong magic, a label 10, truncated."""
    import gzip
    import struct
    images = struct.pack(">IIII", 0x803, 2, 3, 3) + bytes(range(0, 180, 10))
    labels = struct.pack(">II", 0x801, 4) + bytes([9, 0, 3, 7])
    for data in (images, labels, images[:-2], labels[:6], labels[:-1] + bytes([10]),
                 struct.pack(">II", 0x802, 1) + b"x", b""):
        save(folder, data)
        save(folder, gzip.compress(data, mtime=0))
    save(folder, gzip.compress(images, mtime=0)[:-5])


# fuzz_lm_text's seeds: texts long enough for a few window lengths (the
# held-out last tenth needs L + 1 characters), short ones, and each kind
# of byte sequence that is not UTF-8 (RFC 3629), alone and inside a text.
LM_GOOD = [
    # The Time Machine (H. G. Wells, 1895), d2l's text for language models
    "The Time Traveller (for so it will be convenient to speak of him) was expounding a "
    "recondite matter to us. His grey eyes shone and twinkled, and his usually pale face "
    "was flushed and animated. The fire burned brightly, and the soft radiance of the "
    "incandescent lights in the lilies of silver caught the bubbles that flashed and passed "
    "in our glasses.\n",
    "The cat sat on the mat. The dog sat on the log. A cat and a dog.\n" * 3,
    "注意力机制是深度学习中的重要概念。查询、键和值共同决定注意力汇聚的输出。\n" * 2,
    "こんにちは。今日はいい天気ですね。カタカナとひらがな、そして漢字。\n" * 2,
    "emoji 😀🎉👩‍💻🇫🇷 and more 😀😀🎉 text ✓ é ñ ü\n" * 3,
    "\ufeffa text that starts with a byte order mark, read as a character.\n" * 2,
    "lines\r\nending\r\nwith\r\nCR LF\r\n" * 4,
    # long enough that at --length 1 the training cover (task->eval) is cut
    # at LM_MAX_EVAL_WINDOWS (1024) windows
    "the quick brown fox jumps over the lazy dog; 敏捷的棕色狐狸跳过了懒狗。\n" * 24,
    "", "a", "ab", "abcdefghijk", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "\U0010ffff\U00010000\u07ff\u0800\uffff\x7f\x01" * 5,
]

LM_BAD = [
    b"\x80", b"\xbf", b"a\x80b",                      # stray continuation bytes
    b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",
    b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",            # overlong
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\xa0\xbd\xed\xb8\x80",  # surrogates
    b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf7\xbf\xbf\xbf",  # above U+10FFFF
    b"\xc3", b"\xe6\xb3", b"\xf0\x9f\x98", b"\xe6\xb3a", b"\xf0\x9f\x98\x00",  # truncated
    b"\xf8\x88\x80\x80\x80", b"\xfc\x84\x80\x80\x80\x80", b"\xfe", b"\xff",
    b"\x00", b"abc\x00def",                            # a NUL
]


def lm_text_corpus(folder):
    """fuzz_lm_text's seeds into folder: LM_GOOD, LM_BAD alone and after a
    valid text (the offset of the first bad byte then > 0)."""
    for text in LM_GOOD:
        save(folder, text.encode())
    for data in LM_BAD:
        save(folder, data)
        save(folder, "注意力 attention ".encode() * 3 + data + b" tail")


def save(folder, data):
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    attn = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "attn")
    jdir = os.path.join(HERE, "corpus", "json")
    odir = os.path.join(HERE, "corpus", "options")
    tdir = os.path.join(HERE, "corpus", "train_data")
    mdir = os.path.join(HERE, "corpus", "model")
    ndir = os.path.join(HERE, "corpus", "nmt_data")
    xdir = os.path.join(HERE, "corpus", "translate")
    pdir = os.path.join(HERE, "corpus", "pool")
    idir = os.path.join(HERE, "corpus", "idx")
    ldir = os.path.join(HERE, "corpus", "lm_text")
    for d in (jdir, odir, tdir, mdir, ndir, xdir, pdir, idir, ldir):
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
    with open(os.path.join(ROOT, "data", "apple_train.json"), "rb") as f:
        save(tdir, f.read())
    for doc in TRAIN_DATA:
        save(tdir, json.dumps(doc, ensure_ascii=False).encode())
    with open(os.path.join(ROOT, "tests", "ref", "nmt", "fra_small.txt"), "rb") as f:
        save(ndir, f.read())
    for text in NMT_DATA:
        save(ndir, text.encode())
    save(ndir, b"a\tb\nca\tc\xe9t\xc3\xa9\n")  # not UTF-8
    models = saved_models(attn)
    for name, text in models.items():
        save(mdir, text)
    plain = json.loads(models["gen-plain.json"])
    broken = [("vocab", ["a", "b"]), ("vocab", ["<pad>", "a", "a"]), ("classes", []),
              ("num_hiddens", 100000), ("num_heads", 3), ("posenc", 1), ("command", "selfattn"),
              ("state_dict", [])]
    for key, value in broken:
        m = dict(plain)
        m[key] = value
        save(mdir, json.dumps(m).encode())
    m = dict(plain, state_dict=dict(plain["state_dict"]))
    m["state_dict"]["W_q.weight"] = m["state_dict"]["W_q.weight"][:-1]
    save(mdir, json.dumps(m).encode())
    for name, layers, ffn, bias in STACKS:
        save(mdir, json.dumps(stacked(plain, layers, ffn, bias)).encode())
    # a learned P broken: its kind, its shape, missing, disagreeing with posenc
    learned = json.loads(models["gen-learned.json"])
    pe = learned["state_dict"]["pos_embedding"]
    for key, value in [("pos_embedding", "learnt"), ("pos_embedding", 1), ("posenc", True),
                       ("pos_embedding", "sinusoid"), ("pos_embedding", "none")]:
        save(mdir, json.dumps(dict(learned, **{key: value})).encode())
    for shape_broken in ([[r[:2] for r in pe[0]]], pe[0], pe * 2, [pe[0][:1] * 600], None):
        m = dict(learned, state_dict=dict(learned["state_dict"]))
        if shape_broken is None:
            del m["state_dict"]["pos_embedding"]
        else:
            m["state_dict"]["pos_embedding"] = shape_broken
        save(mdir, json.dumps(m).encode())
    translate_corpus(attn, xdir)
    pool_corpus(pdir)
    idx_corpus(idir)
    lm_text_corpus(ldir)


if __name__ == "__main__":
    main()
