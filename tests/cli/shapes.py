"""attn multihead --explain-shapes: d2l's transpose_qkv, transpose_output
and repeat_interleave walked on labelled entries (SPEC §15). The --json
index maps against PyTorch's own functions on arange tensors
(tests/ref/shapes/, scripts/gen_shapes_ref.py), the printed walk, the check
against --explain's heads, and every refusal with its exact line."""
import json
import os

from .common import ROOT, check, expect, run

P = "attn multihead: "
REF = os.path.join(ROOT, "tests", "ref", "shapes")


def lens_arg(lens):
    if isinstance(lens[0], list):
        return ";".join(",".join(str(v) for v in row) for row in lens)
    return ",".join(str(v) for v in lens)


def ref_checks():
    """Each fixture's sizes and lengths through --json: the maps equal
    PyTorch's, the heads put back equal --explain's (max_diff 0), and a
    wrong layout differs."""
    for name in sorted(os.listdir(REF)):
        with open(os.path.join(REF, name)) as f:
            ref = json.load(f)
        args = ["multihead", "--explain-shapes", "--batch", str(ref["B"]), "--queries",
                str(ref["Nq"]), "--kv", str(ref["Nk"]), "--hiddens", str(ref["H"]), "--heads",
                str(ref["num_heads"]), "--json", "-", "--valid-lens",
                lens_arg(ref["valid_lens"]) if ref["valid_lens"] else "none"]
        rc, out, err = run(args)
        check(rc == 0 and err == "", "%s: exit %d, %r" % (name, rc, err))
        if rc != 0:
            continue
        doc = json.loads(out)
        for key in ("transpose_qkv", "reshape_only", "transpose_output", "valid_lens"):
            check(doc[key] == ref[key], "%s: %s %r, torch %r" % (name, key, doc[key], ref[key]))
        for key in ("repeat_interleave", "repeat"):
            check(doc[key] == ref.get(key), "%s: %s %r, torch %r"
                  % (name, key, doc[key], ref.get(key)))
        check(doc["max_diff"] == 0, "%s: max_diff %r" % (name, doc["max_diff"]))
        many = ref["num_heads"] > 1 and ref["Nq"] > 1
        check((doc["max_diff_no_permute"] > 1e-3) == many,
              "%s: max_diff_no_permute %r" % (name, doc["max_diff_no_permute"]))
        # the layout by its formula: slice b·h + j, row t, column c holds
        # X[b, t, j·p + c]
        B, N, H, h = ref["B"], ref["Nq"], ref["H"], ref["num_heads"]
        p = H // h
        want = [[[(b * N + t) * H + j * p + c for c in range(p)] for t in range(N)]
                for b in range(B) for j in range(h)]
        check(doc["transpose_qkv"] == want, "%s: transpose_qkv by the formula" % name)


def text_checks():
    rc, out, err = run(["multihead", "--explain-shapes"])
    check(rc == 0 and err == "", "--explain-shapes: exit %d, %r" % (rc, err))
    lines = out.split("\n")
    check(max(len(line) for line in lines) <= 80, "--explain-shapes: a line over 80 columns")
    for want in ["  reshape(B·h, N, H/h)  (4, 3, 2)      slice b·2 + h: example b, head h",
                 "  [1]  b0 t0 h1 c0..1  b0 t1 h1 c0..1  b0 t2 h1 c0..1",
                 "  [0]  b0 t0 h0 c0..1  b0 t0 h1 c0..1  b0 t1 h0 c0..1  ← t0..1, h0..1",
                 "4 of 4 slices mix tokens and heads: a \"query\" of such a head is a piece of",
                 "  [1]  b0 h1   3 (b0)              2 (b1)  ← masks key 2 too",
                 "  [2]  b1 h0   2 (b1)              3 (b0)  ← leaves key 2 unmasked",
                 "repeat would mask 2 of 4 slices wrongly, with another example's lengths",
                 "  b1 t2 ← [2] row 2 | [3] row 2",
                 "  largest difference 0 (the same bits)"]:
        check(want in lines, "--explain-shapes lacks %r" % want)
    # wider: every line within 80 columns, long slices wrapped
    rc, out, _ = run(["multihead", "--explain-shapes", "--batch", "12", "--queries", "9",
                      "--hiddens", "24", "--heads", "3"])
    check(rc == 0 and max(len(line) for line in out.split("\n")) <= 80,
          "--explain-shapes at 12 × 9 × 24: a line over 80 columns")
    check("  … 36 slices in all (--json has every one)" in out, "36 slices: %r" % out[-400:])
    # one head: nothing moves
    expect(["multihead", "--explain-shapes", "--heads", "1"], 0, err="",
           out_has=["With one head the permute moves nothing: both layouts agree.",
                    "  with a reshape without the permute: 0 (the permute moves nothing here)"])
    # --causal and per-query lengths are checked the same way
    rc, out, _ = run(["multihead", "--explain-shapes", "--causal", "--valid-lens",
                      "1,2,3;3,0,2", "--json", "-"])
    doc = json.loads(out) if rc == 0 else {}
    check(doc.get("max_diff") == 0 and doc.get("repeat") == [[1, 2, 3], [3, 0, 2]] * 2 and
          doc.get("repeat_interleave") == [[1, 2, 3]] * 2 + [[3, 0, 2]] * 2,
          "--causal --valid-lens 2-D: %r" % doc)
    # from a file: the chapter's sizes
    expect(["multihead", "--explain-shapes", "--input",
            os.path.join(ROOT, "data", "chapter_multihead.json")], 0, err="",
           out_has=["queries (2, 4, 100), keys and values (2, 6, 100); num_hiddens 100 = 5 "
                    "heads × 20", "  largest difference 0 (the same bits)"])


def error_checks(tmp):
    takes = (", which walks the heads' layout in eval mode (it takes the sizes, --input, "
             "--valid-lens, --causal, --fill, --seed, --bias, --json, --max-mem, --color)")
    for opt in (["--explain"], ["--describe"], ["--stream"], ["--png", "x.png"],
                ["--train"], ["--threads", "2"]):
        expect(["multihead", "--explain-shapes"] + opt, 2,
               err=P + opt[0] + " cannot be used with --explain-shapes" + takes)
    expect(["multihead", "--explain-shapes", "--score", "additive"], 2,
           err=P + "--explain-shapes follows d2l's DotProductAttention; --score additive "
           "splits the heads the same way, but is not walked")
    expect(["multihead", "--explain-shapes", "--hiddens", "6", "--heads", "4"], 2,
           err=P + "--hiddens 6 is not divisible by --heads 4")
    expect(["multihead", "--explain-shapes", "--valid-lens", "1,2,3"], 2,
           err=P + "--valid-lens: expected 2 lengths (one per example), got 3")
    expect(["multihead", "--explain-shapes", "--batch", "10", "--queries", "1000",
            "--max-mem", "1M"], 1,
           err=P + "batch 10 × 2 heads × 1000 queries × 1000 keys needs about 315 MiB, more "
           "than --max-mem 1 MiB")
    expect(["selfattn", "--explain-shapes"], 2,
           err="attn selfattn: unknown option '--explain-shapes' (see attn selfattn --help)")
    out = os.path.join(tmp, "maps.json")
    expect(["multihead", "--explain-shapes", "--json", out], 0, err="",
           out_has=["wrote %s: the index maps as JSON" % out])
    check(os.path.exists(out), "--json FILE: no file")


def group_explain_shapes(tmp):
    ref_checks()
    text_checks()
    error_checks(tmp)
