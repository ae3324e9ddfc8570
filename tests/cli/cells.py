"""Group cells: attn cells' sections and cells, the book's bytes for every
determined cell (tests/ref/cells/cells.json, written by PyTorch through
scripts/gen_cells_ref.py), the seeded cells, --json, --out and every
error with its exit code and exact message."""
import json
import os

from .common import ROOT, check, expect, png_ok

C = "attn cells: "

# tests/ref/cells/cells.json's key for each determined cell: (section, name)
# as attn cells --json names it
BOOK = {
    ("10.2", "n_test"): "10.2 n_test",
    ("10.2", "torch.bmm(X, Y).shape"): "10.2 torch.bmm(X, Y).shape",
    ("10.2", "torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1))"):
        "10.2 torch.bmm(weights, values)",
    ("10.4", "output.shape, len(state), state[0].shape, len(state[1]), state[1][0].shape"):
        "10.4 decoder shapes",
    ("10.3", "attention(queries, keys, values, valid_lens)  # AdditiveAttention"):
        "10.3 AdditiveAttention",
    ("10.3", "attention(queries, keys, values, valid_lens)  # DotProductAttention"):
        "10.3 DotProductAttention",
    ("10.5", "attention.eval()  # MultiHeadAttention(100, 100, 100, 100, 5, 0.5)"):
        "10.5 MultiHeadAttention",
    ("10.5", "attention(X, Y, Y, valid_lens).shape"): "10.5 attention(X, Y, Y, valid_lens).shape",
    ("10.6", "attention.eval()  # MultiHeadAttention(100, 100, 100, 100, 5, 0.5)"):
        "10.6 MultiHeadAttention",
    ("10.6", "attention(X, X, X, valid_lens).shape"): "10.6 attention(X, X, X, valid_lens).shape",
    ("10.6", "print(f'{i}的二进制是：{i:>03b}')"): "10.6 binary",
    ("10.7", "layer norm vs batch norm"): "10.7 layer norm vs batch norm",
    ("10.7", "add_norm(d2l.ones((2, 3, 4)), d2l.ones((2, 3, 4))).shape"):
        "10.7 add_norm(...).shape",
    ("10.7", "encoder_blk(X, valid_lens).shape"): "10.7 encoder_blk(X, valid_lens).shape",
    ("10.7", "encoder(d2l.ones((2, 100), dtype=torch.long), valid_lens).shape"):
        "10.7 encoder(...).shape",
    ("10.7", "decoder_blk(X, state)[0].shape"): "10.7 decoder_blk(X, state)[0].shape",
    ("10.7", "enc_attention_weights.shape"): "10.7 enc_attention_weights.shape",
    ("11.6", "print(f'{i} in binary is {i:>03b}')"): "11.6 binary",
    # en 11.8's shape checks: the shapes attn's ViT computes, PyTorch's
    ("11.8", "d2l.check_shape(patch_emb(X), (batch_size, (img_size//patch_size)**2, "
     "num_hiddens))"): "11.8 patch_emb(X).shape",
    ("11.8", "d2l.check_shape(encoder_blk(X), X.shape)"): "11.8 encoder_blk(X).shape",
}


def cells_json(args):
    rc, out, _ = expect(["cells"] + args + ["--json", "-"], 0, err="")
    return json.loads(out)["cells"] if rc == 0 else []


def group_cells(tmp):
    with open(os.path.join(ROOT, "tests", "ref", "cells", "cells.json"), encoding="utf-8") as f:
        ref = json.load(f)["cells"]
    expect(["cells", "--help"], 0, err="", out_has=["usage: attn cells [SECTION]", "--edition",
                                                    "--out DIR", "Examples:"])
    # every zh cell in the book's order; the determined ones the book's bytes
    zh = cells_json([])
    check([c["section"] for c in zh] == sorted(c["section"] for c in zh), "the book's order")
    check(set(c["section"] for c in zh) == {"10.%d" % i for i in range(1, 8)}, "7 sections")
    seen = set()
    for c in cells_json([]) + cells_json(["--edition", "en"]):
        key = BOOK.get((c["section"], c["name"]))
        if key:
            seen.add(key)
            check(c["output"] == ref[key], "%s: %r, PyTorch's %r" % (key, c["output"], ref[key]))
    check(seen == set(BOOK.values()), "every determined cell seen: %r" % (set(BOOK.values()) - seen))
    # the spec's examples, printed
    rc, out, _ = expect(["cells", "10.2"], 0, err="", out_has=[
        "[10.2] torch.bmm(X, Y).shape\ntorch.Size([2, 1, 6])\n",
        "tensor([[[ 4.5000]],\n\n        [[14.5000]]])\n", "[10.2] n_test\n50\n$ attn pool\n"])
    check("10.3" not in out, "one section only")
    expect(["cells", "10.7"], 0, err="", out_has=[
        "layer norm: tensor([[-1.0000,  1.0000],\n"
        "        [-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>) \n"
        "batch norm: tensor([[-1.0000, -1.0000],\n"
        "        [ 1.0000,  1.0000]], grad_fn=<NativeBatchNormBackward0>)\n",
        "torch.Size([2, 4, 10, 10])", "grad_fn=<SelectBackward0>)",
        "(random: attn's numbers from seed 0; the notebook's will differ)"])
    # the seeded cells: attn score's numbers for the same seed; another seed, others
    rc, out, _ = expect(["score", "--masked-softmax"], 0, err="")
    ms = [c["output"] for c in zh if c["name"].startswith("masked_softmax")]
    check(len(ms) == 2 and all(m + "\n" in out for m in ms), "masked_softmax as attn score's")
    rc, out, _ = expect(["pool"], 0, err="")
    ep = [c["output"] for c in zh if c["name"].startswith("print(f'epoch")]
    check(len(ep) == 1 and ep[0] + "\n" in out, "the epochs as attn pool's")
    other = cells_json(["10.7", "--seed", "3"])
    ffn = [c["output"] for c in zh if c["name"].startswith("ffn(")]
    check(ffn and other and other[0]["output"] != ffn[0], "--seed changes the FFN's numbers")
    check([c["output"] for c in other[1:]] == [c["output"] for c in zh if c["section"] == "10.7"][1:],
          "--seed changes no determined cell")
    # the en edition: check_shape cells print the shape, and say so
    rc, out, _ = expect(["cells", "11.7", "--edition", "en"], 0, err="", out_has=[
        "(the book checks this shape and prints nothing)\ntorch.Size([2, 100, 24])\n"])
    en = cells_json(["--edition", "en"])
    check(set(c["section"] for c in en) == {"11.%d" % i for i in range(1, 9)}, "en sections")
    # 10.1 names its figure; the JSON's keys
    one = cells_json(["10.1"])
    check(len(one) == 1 and "figure" in one[0]["output"]
          and one[0]["command"] == "attn heatmap --eye 10", "10.1's figure")
    check(all(set(c) == {"section", "name", "output", "command"} for c in zh), "JSON keys")
    # the same bytes twice
    check(cells_json([]) == zh, "same output")
    # --out: the section's figures
    d = os.path.join(tmp, "figs")
    expect(["cells", "10.1", "--out", d], 0, err="",
           out_has=["$ attn heatmap --eye 10 --png %s/10.1-eye.png\n" % d])
    check(png_ok(os.path.join(d, "10.1-eye.png")), "10.1's figure written")
    j = os.path.join(tmp, "c.json")
    expect(["cells", "10.5", "--json", j], 0, err="", out_has=["wrote %s: every cell's output" % j])
    check(json.load(open(j, encoding="utf-8"))["command"] == "cells", "--json FILE")
    # errors
    zh_list = "10.1, 10.2, 10.3, 10.4, 10.5, 10.6, 10.7"
    expect(["cells", "10.8"], 2,
           err=C + "unknown section '10.8' of the zh edition: the sections are " + zh_list)
    expect(["cells", "10.2", "--edition", "en"], 2,
           err=C + "unknown section '10.2' of the en edition: the sections are "
           "11.1, 11.2, 11.3, 11.4, 11.5, 11.6, 11.7, 11.8")
    expect(["cells", "intro"], 2,
           err=C + "unknown section 'intro' of the zh edition: the sections are " + zh_list)
    expect(["cells", "10.1", "10.2"], 2, err=C + "expected one SECTION, got 2 (see attn cells --help)")
    expect(["cells", "--edition", "fr"], 2, err=None)
    expect(["cells", "--seed", "-1"], 2, err=None)
    expect(["cells", "--out", d, "--json", "-"], 2,
           err=C + "--json -: the JSON goes to standard output, where --out's commands print "
           "too; give --json FILE")
    f = os.path.join(tmp, "afile")
    open(f, "w").close()
    expect(["cells", "10.1", "--out", f], 1, err=C + "--out %s: exists and is not a folder" % f)
    expect(["cells", "10.1", "--json", os.path.join(tmp, "no", "dir", "c.json")], 1, err=None)
    check(not os.path.exists(os.path.join(tmp, "no")), "nothing left behind")
