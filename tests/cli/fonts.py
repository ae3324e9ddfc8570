"""Group fonts: --font FILE for every command that draws, fonts found
through the search list and fontconfig, bad and missing fonts (the
numbered labels and their note)."""
import json
import os
import random

from .common import (DEJAVU, NO_CJK, WQY, check, expect, fc_config, heavy, need_cjk_font,
                     png_info, png_ok, same_bytes, write)


def font_note(cmd, label):
    return ("attn %s: note: no font found has the glyphs of '%s', so the positions are "
            "numbered (install fonts-wqy-microhei or pass --font FILE)" % (cmd, label))


def group_fonts(tmp):
    """--font FILE for every command that draws figures, and token labels
    in scripts no font here has: numbered positions and one note."""
    need_cjk_font()
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
