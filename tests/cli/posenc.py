"""attn posenc: its options and their errors (posenc_options), what it
prints and draws (posenc_outputs), files it cannot write, full devices and
closed pipes (posenc_files), and --layout and --rope (posenc_layouts)."""
import json
import math
import os
import subprocess

from . import common
from .common import check, expect, heavy, png_info, run


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
           err=P + "--cols chooses columns for --plot or --html, neither of which is given")
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
    p = subprocess.Popen("%s posenc --dim 512 --steps 10000 --json - | head -c 10" % common.ATTN,
                         shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    check(out == b'{\n  "comma', "head -c 10 got the start of the JSON")
    check(b"Sanitizer" not in err and b"Segmentation" not in err, "no crash on a closed pipe")


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
