#!/usr/bin/env python3
"""CLI tests for attn: exit codes, exact error lines, outputs and files.

usage: cli_test.py ATTN GROUP

Each group is one meson test. A case runs attn with arguments and checks
the exit status, the exact stderr line for errors, what stdout contains,
and which files exist afterwards. Meson's should_fail cannot check an exact
exit code, hence this runner. Only the standard library is used.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import zlib

ATTN = None
FAILED = []
COUNT = 0


def run(args, env=None, stdout=subprocess.PIPE, cwd=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e["COLUMNS"] = "80"
    if env:
        e.update(env)
    p = subprocess.run([ATTN] + args, stdout=stdout, stderr=subprocess.PIPE,
                       env=e, cwd=cwd, timeout=120)
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    return p.returncode, out, p.stderr.decode("utf-8", "replace")


def check(cond, what):
    global COUNT
    COUNT += 1
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)


def expect(args, code, err=None, out_has=(), out_not=(), env=None):
    """Run attn; check the exit code, the exact stderr (when err is given)
    and substrings of stdout."""
    rc, out, errtext = run(args, env=env)
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


# ---- groups -------------------------------------------------------------

def group_general(tmp):
    rc, out, _ = expect(["--help"], 0, err="", out_has=["usage: attn COMMAND", "posenc",
                                                       "selfattn", "complexity", "tour"])
    expect(["help"], 0, err="", out_has=["usage: attn COMMAND"])
    expect(["--version"], 0, err="", out_has=["attn 0.1.0\n"])
    expect(["help", "posenc"], 0, err="", out_has=["usage: attn posenc", "Examples:"])
    expect(["posenc", "--help"], 0, err="", out_has=["usage: attn posenc", "--check-relative"])
    expect(["posenc", "-h"], 0, err="", out_has=["usage: attn posenc"])
    expect(["help", "complexity"], 0, err="", out_has=["not built yet"])
    expect(["tour", "--help"], 0, err="", out_has=["not built yet"])
    expect(["help", "multihead"], 0, err="", out_has=["usage: attn multihead", "Examples:"])
    expect(["selfattn", "--help"], 0, err="", out_has=["usage: attn selfattn", "Examples:"])
    for c in ["complexity", "tour"]:
        expect([c], 1, err="attn %s: not built yet in attn 0.1.0 (see attn --help)" % c)
    expect(["frobnicate"], 2, err="attn: unknown command 'frobnicate' (see attn --help)")
    expect(["help", "frobnicate"], 2, err="attn: unknown command 'frobnicate' (see attn --help)")
    expect(["--frob"], 2, err="attn: unknown option '--frob' (see attn --help)")
    rc, out, errtext = run([])
    check(rc == 2 and "usage: attn COMMAND" in errtext and out == "",
          "attn without a command: usage on stderr, exit 2")


def group_posenc_options(tmp):
    P = "attn posenc: "
    expect(["posenc", "--dim", "0"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000, got '0'")
    expect(["posenc", "--dim", "abc"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000, got 'abc'")
    expect(["posenc", "--dim", "12x"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000, got '12x'")
    expect(["posenc", "--dim="], 2,
           err=P + "--dim: expected an integer from 1 to 1000000, got ''")
    expect(["posenc", "--dim", " 5"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000, got ' 5'")
    expect(["posenc", "--dim", "99999999999999999999999"], 2,
           err=P + "--dim: expected an integer from 1 to 1000000, "
                   "got '99999999999999999999999'")
    expect(["posenc", "--steps", "-1"], 2,
           err=P + "--steps: expected an integer from 1 to 100000000, got '-1'")
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
           err=P + "--check-relative: expected an integer from -100000000 to 100000000, got 'x'")
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
    expect(["posenc", "--dim", "512", "--steps", "10000", "--png", big], 0, err="")
    w, h, _ = png_info(big)
    check(w <= 1600 and h <= 1400, "10000x512 heatmap is pooled to a sane size (%dx%d)" % (w, h))
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
    # a failed run leaves an existing file untouched
    keep = os.path.join(tmp, "keep.png")
    with open(keep, "wb") as f:
        f.write(b"old contents")
    expect(["posenc", "--png", keep, "--plot", os.path.join(tmp, "nope", "p.png")], 1)
    # (the PNG was written before the plot failed: it is complete and new)
    png_info(keep)
    with open(keep, "wb") as f:
        f.write(b"old contents")
    expect(["posenc", "--steps", "200000", "--dim", "10000", "--png", keep], 1)
    with open(keep, "rb") as f:
        check(f.read() == b"old contents", "a refused run leaves the old file untouched")
    # no temporary files are left in the folder
    left = [n for n in os.listdir(tmp) if ".png." in n or ".json." in n]
    check(left == [], "no temporary files left behind: %r" % left)
    # a closed pipe: quiet exit on SIGPIPE or exit 1 with a message, never a crash
    p = subprocess.Popen("%s posenc --dim 512 --steps 10000 --json - | head -c 10" % ATTN,
                         shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    check(out == b'{\n  "comma', "head -c 10 got the start of the JSON")
    check(b"Sanitizer" not in err and b"Segmentation" not in err, "no crash on a closed pipe")


GROUPS = {
    "general": group_general,
    "posenc_options": group_posenc_options,
    "posenc_outputs": group_posenc_outputs,
    "posenc_files": group_posenc_files,
}


def main():
    global ATTN
    if len(sys.argv) != 3 or sys.argv[2] not in GROUPS:
        sys.exit("usage: cli_test.py ATTN {%s}" % ",".join(GROUPS))
    ATTN = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="attn-cli-") as tmp:
        GROUPS[sys.argv[2]](tmp)
    print("%s: %d checks, %d failed" % (sys.argv[2], COUNT, len(FAILED)))
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
