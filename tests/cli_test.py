#!/usr/bin/env python3
"""CLI tests for attn: exit codes, exact error lines, outputs and files.

usage: cli_test.py ATTN GROUP

Each group is one meson test. A case runs attn with arguments and checks
the exit status, the exact stderr line for errors, what stdout contains,
and which files exist afterwards. Meson's should_fail cannot check an exact
exit code, hence this runner. Only the standard library is used.
"""
import hashlib
import json
import math
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

ATTN = None
FAILED = []
COUNT = 0

# `meson test --setup=valgrind` sets ATTN_VALGRIND: every attn run is then
# wrapped in valgrind, and a memory error or a definite or indirect leak
# exits 99, which no exact exit-code check accepts (libgomp's still-reachable
# blocks are not errors). The slowest cases are skipped there (heavy()).
VALGRIND = ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect"] if os.environ.get("ATTN_VALGRIND") else []


def heavy(what):
    """True (and says so) when a slow case is skipped under valgrind."""
    if VALGRIND:
        print("skipped under valgrind (too slow there): %s" % what)
    return bool(VALGRIND)


def run(args, env=None, stdout=subprocess.PIPE, cwd=None, stdin=None):
    """Run attn; stdin may be bytes to feed it."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e["COLUMNS"] = "80"
    if env:
        e.update(env)
    p = subprocess.run(VALGRIND + [ATTN] + args, stdout=stdout, stderr=subprocess.PIPE,
                       input=stdin, env=e, cwd=cwd, timeout=1200 if VALGRIND else 120)
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    errtext = p.stderr.decode("utf-8", "replace")
    if VALGRIND:
        check(p.returncode != 99, "attn %s: valgrind reports errors or leaks:\n%s"
              % (" ".join(args), errtext))
    return p.returncode, out, errtext


def check(cond, what):
    global COUNT
    COUNT += 1
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)


def expect(args, code, err=None, out_has=(), out_not=(), env=None, stdin=None):
    """Run attn; check the exit code, the exact stderr (when err is given)
    and substrings of stdout."""
    rc, out, errtext = run(args, env=env, stdin=stdin)
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
    expect(["help", "complexity"], 0, err="", out_has=["usage: attn complexity", "Examples:"])
    expect(["tour", "--help"], 0, err="", out_has=["not built yet"])
    expect(["help", "multihead"], 0, err="", out_has=["usage: attn multihead", "Examples:"])
    expect(["selfattn", "--help"], 0, err="", out_has=["usage: attn selfattn", "Examples:"])
    for c in ["tour"]:
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
    p = subprocess.Popen("%s posenc --dim 512 --steps 10000 --json - | head -c 10" % ATTN,
                         shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    check(out == b'{\n  "comma', "head -c 10 got the start of the JSON")
    check(b"Sanitizer" not in err and b"Segmentation" not in err, "no crash on a closed pipe")


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def group_attention_errors(tmp):
    """Bad JSON inputs: each message names the file, the JSON path, the
    expected and the found shape."""
    M = "attn multihead: "
    eye = "[[1,0],[0,1]]"
    sd = ('"state_dict": {"W_q.weight": %s, "W_k.weight": %s, "W_v.weight": %s, '
          '"W_o.weight": %s' % (eye, eye, eye, eye))
    cases = [
        ('{"queries": [[[1,2],[3]]], "num_heads": 1}', 1,
         "$.queries[0][1]: expected 2 numbers, got 1"),
        ('{"queries": [[[1,"x"]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a number, got a string"),
        ('{"queries": [[[1,true]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a number, got a boolean"),
        ('{"queries": [[[1,2]]], "keys": [[[1,2]],[[1,2]]], "num_heads": 1}', 1,
         "$.keys: expected batch 1 like $.queries (1, 1, 2), got shape (2, 1, 2)"),
        ('{"queries": [[[1,2]]], "keys": [[[1,2],[3,4]]], "values": [[[1,2]]], "num_heads": 1}', 1,
         "$.values: expected shape (1, 2, value_size) to pair with $.keys (1, 2, 2), got (1, 1, 2)"),
        ('{"queries": [[[1,2]]], "values": [[[1,2]]], "num_heads": 1}', 1,
         '$.values: given without "keys" (values pair with keys)'),
        ('{"queries": [[[1,2,3]]], "num_heads": 2}', 2,
         "num_hiddens 3 (the width of $.queries) is not divisible by num_heads 2 ($.num_heads)"),
        ('{"queries": [[[1,2]]], "valid_lens": [-1], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got -1"),
        ('{"queries": [[[1,2]]], "valid_lens": [1.5], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got 1.5"),
        ('{"queries": [[[1,2]]], "valid_lens": ["1"], "num_heads": 1}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got a string"),
        ('{"queries": [[[1,2]]], "valid_lens": [1, 2], "num_heads": 1}', 1,
         "$.valid_lens: expected 1 length (one per example) or a (1, 1) array, got 2"),
        ('{"queries": [[[1,2],[3,4]]], "valid_lens": [[1,2,3]], "num_heads": 1}', 1,
         "$.valid_lens: expected shape (1,) or (1, 2), got (1, 3)"),
        ('{"queries": [[[1,1e400]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a finite float32 number, got inf"),
        ('{"queries": [[[1,1e39]]], "num_heads": 1}', 1,
         "$.queries[0][0][1]: expected a finite float32 number, got 1e+39"),
        ('{"queries": [[[1,2]]], "num_heads": 1, %s, "W_x.weight": [[1]]}}' % sd, 1,
         '$.state_dict["W_x.weight"]: unknown key (known: W_q.weight, W_q.bias, W_k.weight, '
         'W_k.bias, W_v.weight, W_v.bias, W_o.weight, W_o.bias, attention.W_q.weight, '
         'attention.W_k.weight, attention.w_v.weight)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1,0,0],[0,1,0]], '
         '"W_k.weight": %s, "W_v.weight": %s, "W_o.weight": %s}}' % (eye, eye, eye), 1,
         '$.state_dict["W_q.weight"]: expected shape (2, 2) (num_hiddens × query_size 2), got (2, 3)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, %s, "W_o.bias": [1,2,3]}}' % sd, 1,
         '$.state_dict["W_o.bias"]: expected shape (2,) (num_hiddens), got (3,)'),
        ('{"queries": [[[1,2]]], "num_heads": 1, "state_dict": {"W_q.weight": %s}}' % eye, 1,
         '$.state_dict: missing "W_k.weight" (W_q, W_k, W_v and W_o weights are all needed)'),
        ('{"queries": [[[1,2]]], "num_heads": 3, %s}}' % sd, 2,
         "num_hiddens 2 (the rows of W_q.weight) is not divisible by num_heads 3 ($.num_heads)"),
        ('{"queries": [[[1,2]]], "num_heads": 1, "foo": 1}', 1,
         "$.foo: unknown key (known: queries, keys, values, valid_lens, num_heads, state_dict, "
         "query_tokens, key_tokens, command, shape, output, attention_weights)"),
        ('{"queries": [[[1,2]]], "num_heads": 1, "queries": [[[3,4]]]}', 1,
         "$.queries: the key appears twice"),
        ('{"queries": [[[1,2]]], "num_heads": 0}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got 0"),
        ('{"queries": [], "num_heads": 1}', 1, "$.queries: an empty array"),
        ('{"queries": [1, 2], "num_heads": 1}', 1,
         "$.queries: expected a 2-D or deeper array of numbers, got a 1-D array"),
        ('{"queries": [[[[[1]]]]], "num_heads": 1}', 1,
         "$.queries: expected at most 3 nested arrays, found more"),
        ('{"queries": [[[1,2]]], "query_tokens": ["a", "b"], "num_heads": 1}', 1,
         "$.query_tokens: expected 1 labels, got 2"),
        ('{"queries": [[[1,2]]], "num_heads": 1', 1, "line 1, column 38: the JSON ends too early"),
        ('{"queries": [[[1,2]]],\n "num_heads": 1\n', 1, "line 3, column 1: the JSON ends too early"),
        ('{"queries": [[[1,2]]]} xx', 1, "line 1, column 24: unexpected text after the JSON value"),
        ('', 1, "empty: expected a JSON object"),
        ('[1, 2]', 1, "$: expected an object, got an array"),
        ('{"queries": [[[1,NaN]]]}', 1,
         "line 1, column 18: NaN is not a JSON number (NaN and Infinity are not allowed)"),
    ]
    for i, (text, code, msg) in enumerate(cases):
        path = write(tmp, "bad%02d.json" % i, text)
        expect(["multihead", "--input", path], code, err=M + "%s: %s" % (path, msg))
    S = "attn selfattn: "
    path = write(tmp, "self.json", '{"X": [[[1,2]]], "tokens": ["a","b"]}')
    expect(["selfattn", "--input", path], 2,
           err=S + "%s: num_hiddens 2 (the width of $.X) is not divisible by num_heads 5 "
                   "(the chapter's 5: give $.num_heads or --heads)" % path)
    expect(["selfattn", "--input", path, "--heads", "1"], 1,
           err=S + "%s: $.tokens: expected 1 labels, got 2" % path)
    path = write(tmp, "q.json", '{"queries": [[[1,2]]], "num_heads": 1}')
    expect(["selfattn", "--input", path], 1,
           err=S + '%s: $.queries: unknown key (known: X, valid_lens, num_heads, state_dict, '
                   'tokens, command, shape, output, attention_weights)' % path)
    expect(["multihead", "--input", path, "--heads", "2"], 2,
           err=M + "%s: $.num_heads is 1 but --heads is 2" % path)
    missing = os.path.join(tmp, "nosuch.json")
    expect(["multihead", "--input", missing], 1,
           err=M + "%s: cannot open: No such file or directory" % missing)
    expect(["multihead", "--input", tmp], 1, err=M + "%s: cannot read: Is a directory" % tmp)


def group_attention_options(tmp):
    M = "attn multihead: "
    S = "attn selfattn: "
    expect(["multihead", "--heads", "0"], 2,
           err=M + "--heads: expected an integer from 1 to 1000000000000, got '0'")
    expect(["multihead", "--hiddens", "100", "--heads", "3"], 2,
           err=M + "--hiddens 100 is not divisible by --heads 3")
    expect(["multihead", "--valid-lens", "3,x"], 2,
           err=M + "--valid-lens: expected integers >= 0 like 3,2 or 1,2,3,4;2,2,2,2, or none, "
                   "got '3,x'")
    expect(["multihead", "--valid-lens", "1,2;3"], 2,
           err=M + "--valid-lens: every row needs 2 lengths, row 2 has 1")
    expect(["multihead", "--valid-lens", "3,2,1"], 2,
           err=M + "--valid-lens: expected 2 lengths (one per example), got 3")
    expect(["multihead", "--valid-lens", "1,2;3,4"], 2,
           err=M + "--valid-lens: expected 2 rows of 4 (one per example and query), got 2 rows of 2")
    expect(["multihead", "--fill", "zeros"], 2, err=M + "--fill: expected ones or random, got 'zeros'")
    expect(["multihead", "--score", "cosine"], 2,
           err=M + "--score: expected dot or additive, got 'cosine'")
    expect(["multihead", "--dropout", "1.5"], 2,
           err=M + "--dropout: expected a number from 0 to 1, got '1.5'")
    expect(["multihead", "--score-hiddens", "4"], 2, err=M + "--score-hiddens is for --score additive")
    expect(["multihead", "--input", "x.json", "--batch", "2"], 2,
           err=M + "--batch makes random inputs and cannot be used with --input")
    expect(["multihead", "--tokens", "a b"], 2,
           err=M + "unknown option '--tokens' (see attn multihead --help)")
    expect(["selfattn", "--kv", "3"], 2, err=S + "unknown option '--kv' (see attn selfattn --help)")
    expect(["selfattn", "--tokens", "a b | c", "--batch", "3"], 2,
           err=S + "--batch 3 disagrees with --tokens, which has 2 sentences")
    expect(["selfattn", "--tokens", "a b |  | c"], 2, err=S + "--tokens: sentence 2 has no tokens")
    expect(["selfattn", "--no-proj", "--bias"], 2,
           err=S + "--no-proj uses identity projections without bias or additive scoring")
    expect(["multihead", "--seed", "-1"], 2,
           err=M + "--seed: expected an integer from 0 to 2147483647, got '-1'")
    expect(["multihead", "--heads", "4", "--heads", "5"], 2, err=M + "option '--heads' given twice")
    expect(["multihead", "--queries", "100000", "--kv", "100000", "--hiddens", "8",
            "--heads", "8", "--batch", "8"], 1,
           err=M + "batch 8 × 8 heads × 100000 queries × 100000 keys needs about 2.33 TiB, more "
                   "than --max-mem 4 GiB; --stream computes without storing the attention weights")
    expect(["multihead", "--stream", "--png", "x.png"], 2,
           err=M + "--stream never stores the attention weights, which --png needs")
    expect(["multihead", "--stream", "--naive"], 2,
           err=M + "--stream never stores the attention weights, which --naive needs")
    expect(["multihead", "--stream", "--score", "additive"], 2,
           err=M + "--stream computes dot-product scores only")
    expect(["multihead", "--block", "4"], 2, err=M + "--block sets the key blocks of --stream --explain")
    expect(["multihead", "--threads", "0"], 2,
           err=M + "--threads: expected an integer from 1 to 1024, got '0'")
    expect(["multihead", "--queries", "100000000", "--hiddens", "100000000", "--heads", "1"], 1,
           err=M + "the inputs and weights need about 213 PiB, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "100000000", "--queries", "100000000", "--hiddens",
            "100000000", "--heads", "1"], 1,
           err=M + "the inputs and weights need more than this machine can address, more than "
                   "--max-mem 4 GiB")


def group_attention_outputs(tmp):
    # the chapter's cells: the shape line and the module print-out
    rc, out, _ = expect(["multihead"], 0, err="",
                        out_has=["attention(queries, keys, values, valid_lens).shape\n"
                                 "torch.Size([2, 4, 100])\n"])
    rc, out, _ = expect(["selfattn"], 0, err="",
                        out_has=["attention(X, X, X, valid_lens).shape\ntorch.Size([2, 4, 100])\n"])
    rc, out, _ = expect(["multihead", "--describe"], 0, err="")
    check(out == "MultiHeadAttention(\n"
                 "  (attention): DotProductAttention(\n"
                 "    (dropout): Dropout(p=0.5, inplace=False)\n"
                 "  )\n"
                 "  (W_q): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_k): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_v): Linear(in_features=100, out_features=100, bias=False)\n"
                 "  (W_o): Linear(in_features=100, out_features=100, bias=False)\n"
                 ")\n", "--describe prints the chapter's module")
    expect(["multihead", "--describe", "--score", "additive", "--hiddens", "20", "--heads", "2",
            "--score-hiddens", "7", "--bias", "--dropout", "0"], 0,
           out_has=["  (attention): AdditiveAttention(\n"
                    "    (W_k): Linear(in_features=10, out_features=7, bias=False)\n"
                    "    (W_q): Linear(in_features=10, out_features=7, bias=False)\n"
                    "    (w_v): Linear(in_features=7, out_features=1, bias=False)\n"
                    "    (dropout): Dropout(p=0.0, inplace=False)\n  )\n",
                    "(W_o): Linear(in_features=20, out_features=20, bias=True)"])

    # ones in, uniform weights over the valid keys out, whatever the weights
    rc, out, _ = expect(["multihead", "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(doc["command"] == "multihead" and doc["shape"] == [2, 4, 100] and
          doc["valid_lens"] == [3, 2] and doc["num_heads"] == 5, "multihead JSON header")
    w = doc["attention_weights"]
    check(len(w) == 2 and len(w[0]) == 5 and len(w[0][0]) == 4 and len(w[0][0][0]) == 6,
          "attention_weights is (batch, heads, queries, keys)")
    worst = max(abs(w[b][h][q][k] - ((1 / 3 if k < 3 else 0) if b == 0 else (0.5 if k < 2 else 0)))
                for b in range(2) for h in range(5) for q in range(4) for k in range(6))
    check(worst < 1e-7, "valid_lens 3, 2 give weights 1/3 and 1/2 (worst %g)" % worst)
    # output = W_o · (W_v · 1): every head's output is a row of V
    sd = doc["state_dict"]
    v = [sum(row) for row in sd["W_v.weight"]]
    want = [sum(a * b for a, b in zip(row, v)) for row in sd["W_o.weight"]]
    worst = max(abs(doc["output"][b][q][c] - want[c]) for b in range(2) for q in range(4)
                for c in range(100))
    check(worst < 1e-5, "ones: output = W_o W_v 1 (worst %g)" % worst)
    # weights like nn.Linear's init: uniform in ±1/sqrt(100)
    flat = [x for row in sd["W_q.weight"] for x in row]
    check(max(abs(x) for x in flat) <= 0.1 and max(flat) > 0.09 and min(flat) < -0.09,
          "weights uniform in ±1/sqrt(in_features)")
    check(abs(sum(flat) / len(flat)) < 0.005, "weights centred on 0")

    # a run's output file is a complete input: feeding it back gives the same output
    first = os.path.join(tmp, "first.json")
    expect(["multihead", "--fill", "random", "--seed", "7", "--bias", "--valid-lens",
            "1,2,3,4;2,2,2,2", "--causal", "--json", first], 0)
    second = os.path.join(tmp, "second.json")
    expect(["multihead", "--input", first, "--causal", "--json", second], 0)
    a, b = json.load(open(first)), json.load(open(second))
    check(a["output"] == b["output"] and a["attention_weights"] == b["attention_weights"],
          "an output file fed back reproduces output and weights exactly")
    # the same seed, the same bytes; another seed, other weights
    r1 = run(["selfattn", "--fill", "random", "--seed", "3", "--json", "-"])[1]
    r2 = run(["selfattn", "--fill", "random", "--seed", "3", "--json", "-"])[1]
    r3 = run(["selfattn", "--fill", "random", "--seed", "4", "--json", "-"])[1]
    check(r1 == r2 and r1 != r3, "--seed makes runs byte-identical")
    # dropout: eval ignores it, --train applies it (seeded)
    ev = json.loads(run(["selfattn", "--fill", "random", "--json", "-"])[1])
    ev2 = json.loads(run(["selfattn", "--fill", "random", "--dropout", "0.9", "--json", "-"])[1])
    tr = json.loads(run(["selfattn", "--fill", "random", "--train", "--json", "-"])[1])
    check(ev["output"] == ev2["output"], "--dropout has no effect in eval mode")
    check(ev["output"] != tr["output"] and ev["attention_weights"] == tr["attention_weights"],
          "--train changes the output, not the reported weights (d2l reports them before dropout)")
    # causal: no weight on later keys
    c = json.loads(run(["selfattn", "--fill", "random", "--causal", "--valid-lens", "none",
                        "--json", "-"])[1])
    check(all(c["attention_weights"][b][h][q][k] == 0 for b in range(2) for h in range(5)
              for q in range(4) for k in range(q + 1, 4)), "--causal masks later keys")
    # --no-proj: Q = K = V = X, so each output row is a weighted mean of X's rows
    d = json.loads(run(["selfattn", "--no-proj", "--fill", "random", "--hiddens", "6", "--heads",
                        "1", "--valid-lens", "none", "--json", "-"])[1])
    X, W = d["X"][0], d["attention_weights"][0][0]
    worst = max(abs(d["output"][0][q][c] - sum(W[q][k] * X[k][c] for k in range(4)))
                for q in range(4) for c in range(6))
    check(worst < 1e-6, "--no-proj: output = softmax(X Xᵀ / sqrt(d)) X (worst %g)" % worst)
    s = 1 / math.sqrt(6)
    sc = [sum(X[0][c] * X[k][c] for c in range(6)) * s for k in range(4)]
    m = max(sc)
    e = [math.exp(x - m) for x in sc]
    check(max(abs(W[0][k] - e[k] / sum(e)) for k in range(4)) < 1e-6,
          "--no-proj weights are softmax(x_0 · x_k / sqrt(d))")
    # --posenc adds P: with --no-proj and ones, X + P differs from X by P
    p0 = json.loads(run(["selfattn", "--no-proj", "--hiddens", "4", "--heads", "1", "--posenc",
                         "--json", "-"])[1])
    check(abs(p0["X"][0][1][0] - (1 + math.sin(1))) < 1e-6 and
          abs(p0["X"][0][1][1] - (1 + math.cos(1))) < 1e-6, "--posenc adds P to X")

    # tokens: the same word, the same input, another output in another sentence
    rc, out, _ = expect(["selfattn", "--tokens", "苹果 很 好吃 | 苹果 发布 了 新的 产品",
                         "--hiddens", "16", "--heads", "2"], 0, err="",
                        out_has=["苹果: input 1.0000 (the same embedding), output "])
    doc = json.loads(run(["selfattn", "--tokens", "苹果 很 好吃 | 苹果 发布 了 新的 产品",
                          "--hiddens", "16", "--heads", "2", "--json", "-"])[1])
    check(doc["tokens"] == [["苹果", "很", "好吃", "<pad>", "<pad>"],
                            ["苹果", "发布", "了", "新的", "产品"]] and doc["valid_lens"] == [3, 5],
          "two sentences: a padded batch with their lengths as valid_lens")
    check(doc["X"][0][0] == doc["X"][1][0] and doc["output"][0][0] != doc["output"][1][0],
          "苹果 has one embedding and two contextual outputs")
    single = json.loads(run(["selfattn", "--tokens", "苹果 很 好吃", "--hiddens", "16", "--heads",
                             "2", "--json", "-"])[1])
    check(max(abs(a - b) for a, b in zip(single["output"][0][0], doc["output"][0][0])) < 1e-6,
          "a padded sentence in a batch gives the output it gives alone")

    # the fast loops, streaming, the reference loops and threads agree
    base = ["selfattn", "--fill", "random", "--queries", "70", "--hiddens", "24", "--heads", "3",
            "--valid-lens", "50,70", "--causal", "--bias", "--json", "-"]
    fast = json.loads(run(base)[1])
    naive = json.loads(run(base + ["--naive"])[1])
    stream = json.loads(run(base + ["--stream"])[1])
    one = json.loads(run(base + ["--threads", "1"])[1])
    flat = lambda t: [x for a in t for b in a for x in b]
    worst = max(abs(a - b) for a, b in zip(flat(fast["output"]), flat(naive["output"])))
    check(worst < 1e-5, "fast and reference loops agree (worst %g)" % worst)
    worst = max(abs(a - b) for a, b in zip(flat(stream["output"]), flat(naive["output"])))
    check(worst < 1e-5, "streaming and reference loops agree (worst %g)" % worst)
    check(stream["attention_weights"] is None, "--stream writes attention_weights null")
    check(one["output"] == fast["output"], "--threads 1 gives the same bytes as all threads")
    rc, out, errtext = expect(["selfattn", "--fill", "random", "--time"], 0)
    check(errtext.startswith("forward pass: ") and "GFLOP/s (fast loops, " in errtext,
          "--time reports the forward pass on stderr")
    # --stream --explain: the online softmax block by block, equal to softmax·V
    rc, out, _ = expect(["selfattn", "--stream", "--explain", "--batch", "1", "--queries", "5",
                         "--hiddens", "4", "--heads", "1", "--fill", "random", "--valid-lens",
                         "none", "--block", "2"], 0, err="",
                        out_has=["keys in blocks of 2", "keys 0-1: scores [", "keys 4-4: scores [",
                                 "rescale e^(m_old - m) = "])
    last = [l for l in out.splitlines() if l.startswith("Largest difference")][0]
    check(float(last.rsplit(":", 1)[1]) < 1e-6, "the streamed output equals softmax·V: " + last)

    # the figure
    png = os.path.join(tmp, "heads.png")
    expect(["multihead", "--png", png], 0, err="",
           out_has=["wrote %s: attention weights, 2 examples × 5 heads, " % png])
    w_, h_, _ = png_info(png)
    check(w_ > h_ >= 200, "a 2 × 5 grid is wider than tall (%dx%d)" % (w_, h_))
    # --explain: every step of a small case
    rc, out, _ = expect(["multihead", "--explain", "--batch", "1", "--queries", "2", "--kv", "3",
                         "--hiddens", "4", "--heads", "2", "--valid-lens", "2"], 0, err="")
    for step in ["Step 1. Project: Q = queries·W_qᵀ  (2, 4)", "Step 2. Split into heads: Q_1  (2, 2)",
                 "Step 3. Scores: Q_1 K_1ᵀ  (2, 3)", "Step 4. Scaled: Q_1 K_1ᵀ / sqrt(2) = / 1.4142",
                 "Step 5. Masked: keys at k >= valid_len get -1e6", "-1000000.0000",
                 "Step 6. Attention weights", "Step 7. Head output: weights · V_2  (2, 2)",
                 "Step 8. Concatenate the heads", "Step 9. Output: concat · W_oᵀ  (2, 4)"]:
        check(step in out, "--explain shows %r" % step)


def cx_expect(n, d, k, r):
    """The figures of `attn complexity` for (n, d, k, r), worked out here by
    enumerating taps and keys and by the closed forms of the path lengths."""
    half = (k - 1) // 2
    taps = sum(1 for t in range(n) for j in range(k) if 0 <= t + j - half < n)
    keys = sum(1 for t in range(n) for s in range(n) if -((r - 1) // 2) <= s - t <= r // 2)
    layers = 0
    while k ** layers < n:
        layers += 1
    ceil_div = lambda a, b: -(-a // b)
    return {
        "convolution": (d * d * taps, ceil_div(n - 1, k - 1), 1),
        "recurrent": (n * (d * d + d * d), n - 1, n),
        "self_attention": (2 * n * n * d + 3 * n * d * d, 1 if n > 1 else 0, 1),
        "restricted_self_attention": (2 * d * keys + 3 * n * d * d, ceil_div(n - 1, r - 1), 1),
        "dilated_convolution": (d * d * taps, layers, 1),
    }


def cx_first_costlier(d, k, other, proj):
    """The first n from which self-attention costs more than the other
    layer, by brute force up to well past k·d."""
    def conv(n):
        half = (k - 1) // 2
        return d * d * sum(1 for t in range(n) for j in range(k) if 0 <= t + j - half < n)
    first = None
    for n in range(1, 4 * k * d + 8):
        attn = 2 * n * n * d + (3 * n * d * d if proj else 0)
        cost = 2 * n * d * d if other == "rnn" else conv(n)
        if attn > cost:
            first = first or n
        else:
            first = None
    return first


def cx_estimate(N, d, k, n=100):
    """--max-mem's estimate: the --measure buffers at the largest n (X, Y with
    h_0, Q, K, V, the N×N weights, every weight and bias) and 3·n bytes of
    path sets, in the format of cli_format_bytes."""
    floats = 5 * N * d + d + N * N + d * d * (k + 5) + 2 * d
    b = 4 * floats + 3 * n
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while b >= 1024 and u + 1 < len(units):
        b /= 1024
        u += 1
    return "%.3g %s" % (b, units[u])


def group_complexity(tmp):
    C = "attn complexity: "
    expect(["complexity", "--help"], 0, err="",
           out_has=["usage: attn complexity", "Examples:", "--measure", "n = 100"])
    # the default table: the counts of these layers, worked by hand
    # (n = 100, d = 512, k = 3: 298 taps in range; r = 9: 880 keys in the windows)
    expect(["complexity"], 0, err="",
           out_has=["O(k·n·d²)     78,118,912", "O(n·d²)       52,428,800",
                    "O(n²·d)       88,883,200", "O(r·n·d)      79,544,320",
                    "512²·298 = 78,118,912", "k·n·d² = 78,643,200",
                    "n²·d + n²·d = 10,240,000", "2·512·880 = 901,120",
                    "50 layers", "99 steps", "13 layers", "⌈log_3 n⌉ = 5",
                    "n > d: n >= 513", "n > k·d: n >= 1537",
                    "QKᵀ and A·V only: n >= 768"])
    # every count and path length against the enumeration above
    for n, d, k, r in [(100, 512, 3, 9), (5, 2, 3, 3), (9, 4, 3, 2), (17, 3, 5, 4),
                       (1, 3, 3, 2), (10, 8, 4, 5), (28, 2, 3, 9), (12, 5, 2, 30)]:
        args = ["complexity", "--n", str(n), "--d", str(d), "--k", str(k), "--r", str(r),
                "--json", "-"]
        rc, out, _ = expect(args, 0, err="")
        doc = json.loads(out)
        check(doc["command"] == "complexity" and [doc["n"], doc["d"], doc["k"], doc["r"]] ==
              [n, d, k, r] and doc["measure"] is None, "%s: JSON header" % args)
        want = cx_expect(n, d, k, r)
        got = {l["layer"]: (l["multiply_adds"], l["path_measured"],
                            l["sequential_operations_value"]) for l in doc["layers"]}
        check(got == want, "n=%d d=%d k=%d r=%d: counts, paths, sequential ops %r, want %r"
              % (n, d, k, r, got, want))
        check(all(l["path_formula_value"] == l["path_measured"] for l in doc["layers"]),
              "n=%d k=%d: measured path lengths equal the formulas" % (n, k))
        sa = doc["layers"][2]
        check(sa["multiply_adds_without_projections"] == 2 * n * n * d and
              sa["projection_multiply_adds"] == 3 * n * d * d, "self-attention's two parts")
    # the chapter's figure and the cases: x_1 and x_n connected after
    for n, k, layers in [(5, 3, 2), (9, 3, 4), (17, 5, 4), (2, 3, 1), (5, 2, 4)]:
        doc = json.loads(run(["complexity", "--n", str(n), "--k", str(k), "--json", "-"])[1])
        check(doc["layers"][0]["path_measured"] == layers,
              "convolution k=%d, n=%d: %d layers" % (k, n, layers))
    rc, out, _ = expect(["complexity", "--n", "5"], 0,
                        out_has=["convolution, k = 3            2 layers",
                                 "recurrent (tanh)              4 steps",
                                 "self-attention                1 layer "])
    # where self-attention becomes costlier, against brute force
    for d, k in [(8, 3), (5, 4), (3, 7)]:
        doc = json.loads(run(["complexity", "--d", str(d), "--k", str(k), "--json", "-"])[1])
        c = doc["self_attention_costlier"]
        got = [c["than_recurrent"]["big_o_n"], c["than_recurrent"]["exact_without_projections_n"],
               c["than_recurrent"]["exact_with_projections_n"], c["than_convolution"]["big_o_n"],
               c["than_convolution"]["exact_without_projections_n"],
               c["than_convolution"]["exact_with_projections_n"]]
        want = [d + 1, cx_first_costlier(d, k, "rnn", False), cx_first_costlier(d, k, "rnn", True),
                k * d + 1, cx_first_costlier(d, k, "conv", False),
                cx_first_costlier(d, k, "conv", True)]
        check(got == want, "d=%d k=%d: crossovers %r, want %r" % (d, k, got, want))
    # without --measure the JSON is the same every run
    check(run(["complexity", "--json", "-"])[1] == run(["complexity", "--json", "-"])[1],
          "complexity JSON is deterministic")

    # bad input: each refused with its reason, before any work
    expect(["complexity", "--n", "0"], 2,
           err=C + "--n: expected an integer from 1 to 1000000, got '0'")
    expect(["complexity", "--k", "1"], 2,
           err=C + "--k 1: a kernel of one position never connects two positions (output t "
                   "reads only input t), so no stack of layers ever connects x_1 and x_n; use "
                   "--k 2 or more")
    expect(["complexity", "--r", "1"], 2,
           err=C + "--r 1: a window of one position lets each query see only itself, so no "
                   "stack of layers ever connects x_1 and x_n; use --r 2 or more")
    expect(["complexity", "--k", "0"], 2,
           err=C + "--k: expected an integer from 2 to 1000, got '0'")
    expect(["complexity", "--k", "1001"], 2,
           err=C + "--k: expected an integer from 2 to 1000, got '1001'")
    expect(["complexity", "--d", "65537"], 2,
           err=C + "--d: expected an integer from 1 to 65536, got '65537'")
    expect(["complexity", "--measure", "--sweep", "4096:64"], 2,
           err=C + "--sweep: FROM must be less than TO, got '4096:64'")
    expect(["complexity", "--measure", "--sweep", "64:64"], 2,
           err=C + "--sweep: FROM must be less than TO, got '64:64'")
    for bad in ["64", "64:", ":64", ""]:
        expect(["complexity", "--measure", "--sweep", bad], 2,
               err=C + "--sweep: expected FROM:TO like 64:4096, got '%s'" % bad)
    expect(["complexity", "--measure", "--sweep", "0:64"], 2,
           err=C + "--sweep: expected an integer from 1 to 1000000, got '0'")
    expect(["complexity", "--sweep", "64:128"], 2,
           err=C + "--sweep is for --measure, which is not given")
    expect(["complexity", "--png", os.path.join(tmp, "x.png")], 2,
           err=C + "--png is for --measure, which is not given")
    expect(["complexity", "--measure", "--clock", "sundial"], 2,
           err=C + "--clock: expected cpu or wall, got 'sundial'")
    expect(["complexity", "--measure", "--reps", "0"], 2,
           err=C + "--reps: expected an integer from 1 to 101, got '0'")
    expect(["complexity", "--n", "5", "--n", "6"], 2, err=C + "option '--n' given twice")
    expect(["complexity", "--frob"], 2,
           err=C + "unknown option '--frob' (see attn complexity --help)")
    expect(["complexity", "--n"], 2, err=C + "option '--n' needs a value")
    expect(["complexity", "extra"], 2,
           err=C + "unexpected argument 'extra' (see attn complexity --help)")
    # buffers beyond --max-mem: refused up front with the estimate, no file written
    png = os.path.join(tmp, "refused.png")
    expect(["complexity", "--measure", "--sweep", "64:65536", "--png", png], 1,
           err=C + "--measure --sweep 64:65536 --measure-dim 64 needs about %s, more than "
                   "--max-mem 4 GiB" % cx_estimate(65536, 64, 3))
    check(not os.path.exists(png), "a refused run writes no PNG")
    expect(["complexity", "--measure", "--max-mem", "1M"], 1,
           err=C + "--measure --sweep 64:4096 --measure-dim 64 needs about %s, more than "
                   "--max-mem 1 MiB" % cx_estimate(4096, 64, 3))
    expect(["complexity", "--n", "1000000", "--max-mem", "1M"], 1,
           err=C + "--n 1000000 needs about 2.86 MiB, more than --max-mem 1 MiB")

    # a tiny measured sweep: its structure and counts (never its timings)
    jpath, ppath = os.path.join(tmp, "cx.json"), os.path.join(tmp, "cx.png")
    rc, out, _ = expect(["complexity", "--measure", "--sweep", "5:12", "--measure-dim", "4",
                         "--reps", "3", "--k", "3", "--r", "2", "--json", jpath, "--png", ppath],
                        0, err="",
                        out_has=["Growth exponent in n", "over n = 10 … 12",
                                 "wrote %s: table, path lengths, crossovers and measurements"
                                 % jpath,
                                 "wrote %s: time against n, log-log, 4 layers, 900×600 px"
                                 % ppath])
    m = json.load(open(jpath))["measure"]
    check(m["n"] == [5, 10, 12] and m["fit_n"] == [10, 12] and m["d"] == 4 and m["reps"] == 3
          and m["clock"] == "cpu", "measure header: sweep 5, 10, 12; fit on 10, 12")
    names = ["convolution", "recurrent", "self_attention", "restricted_self_attention"]
    check([l["layer"] for l in m["layers"]] == names, "measured layers")
    for l in m["layers"]:
        want = [cx_expect(n, 4, 3, 2)[l["layer"]][0] for n in m["n"]]
        check(l["multiply_adds"] == want, "%s: multiply-adds %r, want %r"
              % (l["layer"], l["multiply_adds"], want))
        slope = math.log(want[2] / want[1]) / math.log(12 / 10)
        check(abs(l["count_slope"] - slope) < 1e-12, "%s: count slope %r, want %r"
              % (l["layer"], l["count_slope"], slope))
        check(l["seconds"] == l["cpu_seconds"] and len(l["wall_seconds"]) == 3 and
              all(s > 0 for s in l["seconds"] + l["wall_seconds"]), "%s: times" % l["layer"])
        check(all(isinstance(l[s], (int, float)) for s in ["slope", "cpu_slope", "wall_slope"]),
              "%s: fitted slopes are numbers" % l["layer"])
    check([l["theory"] for l in m["layers"]] == [1, 1, 2, 1], "theory exponents")
    w, h, ctype = png_info(ppath)
    check((w, h, ctype) == (900, 600, 2), "log-log PNG 900x600 RGB (%dx%d)" % (w, h))
    # --json - keeps stdout pure JSON; the report of the PNG goes to stderr
    rc, out, errtext = expect(["complexity", "--measure", "--sweep", "2:4", "--measure-dim", "2",
                               "--reps", "1", "--clock", "wall", "--json", "-", "--png", ppath], 0)
    doc = json.loads(out)
    check(doc["measure"]["clock"] == "wall" and
          doc["measure"]["layers"][0]["seconds"] == doc["measure"]["layers"][0]["wall_seconds"],
          "--clock wall chooses the seconds shown")
    check(errtext.startswith("wrote %s" % ppath), "with --json -, reports go to stderr")
    # n = 1: nothing to connect
    doc = json.loads(run(["complexity", "--n", "1", "--json", "-"])[1])
    check(all(l["path_measured"] == 0 for l in doc["layers"]), "n = 1: every path is 0 steps")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def group_bad_options(tmp):
    """Issue 5's catalogue, part 1: every command against bad options
    (non-numeric, negative, out of range, empty, repeated, unknown, missing
    their value, --max-mem garbage) and absurd sizes, each case with its
    exit code and exact message. Part 2 is group_bad_inputs."""
    T = 10 ** 12  # the largest size an option takes; larger products meet --max-mem
    RANGE = {"posenc": [("--dim", 1, 10 ** 9), ("--steps", 1, T)],
             "multihead": [("--batch", 1, T), ("--queries", 1, T), ("--kv", 1, T),
                           ("--hiddens", 1, T), ("--heads", 1, T)],
             "selfattn": [("--batch", 1, T), ("--queries", 1, T), ("--hiddens", 1, T),
                          ("--heads", 1, T)],
             "complexity": [("--n", 1, 1000000), ("--d", 1, 65536), ("--k", 2, 1000),
                            ("--measure-dim", 1, 4096)]}
    MEM = ("--max-mem: expected a positive size in bytes with an optional suffix K, M, G "
           "or T, got '%s'")
    # ---- options, for every command
    for cmd, opts in RANGE.items():
        P = "attn %s: " % cmd
        for opt, lo, hi in opts:
            want = P + "%s: expected an integer from %d to %d, got '%%s'" % (opt, lo, hi)
            # non-numeric, negative, out of range, empty, fractional, hex, overflowing
            # (under valgrind two of them: each runs the same parser)
            for bad in (["abc", str(hi + 1)] if VALGRIND else
                        ["abc", "-3", str(hi + 1), "", "2.5", "0x10", "1e3",
                         "99999999999999999999"]):
                expect([cmd, opt, bad], 2, err=want % bad)
            if (cmd, opt) != ("complexity", "--k"):  # --k 1 has its own message
                expect([cmd, "%s=%s" % (opt, lo - 1)], 2, err=want % (lo - 1))
            expect([cmd, opt], 2, err=P + "option '%s' needs a value" % opt)
            expect([cmd, opt, str(lo), opt + "=" + str(lo)], 2,
                   err=P + "option '%s' given twice" % opt)
        for bad in (["lots", "18446744073709551616"] if VALGRIND else
                    ["lots", "0", "-5", "1.5G", "1e9", "", "4Q", "99999999999T",
                     "18446744073709551616"]):
            expect([cmd, "--max-mem", bad], 2, err=P + MEM % bad)
        expect([cmd, "--max-mem"], 2, err=P + "option '--max-mem' needs a value")
        expect([cmd, "--max-mem", "1G", "--max-mem", "2G"], 2,
               err=P + "option '--max-mem' given twice")
        for bad in ["--frob", "--frob=1", "-Z", "---x"]:
            expect([cmd, bad], 2, err=P + "unknown option '%s' (see attn %s --help)"
                   % (bad, cmd))
        expect([cmd, "stray"], 2, err=P + "unexpected argument 'stray' (see attn %s --help)"
               % cmd)
        expect([cmd, "--json"], 2, err=P + "option '--json' needs a value")
        if cmd != "complexity":
            expect([cmd, "--color", "purple"], 2,
                   err=P + "--color: expected auto, always or never, got 'purple'")
    # the memory limit, refused up front with the estimate (exit 1)
    expect(["posenc", "--max-mem", "1K"], 1,
           err="attn posenc: --steps 60 --dim 32 needs about 32 MiB, more than --max-mem 1 KiB")
    expect(["multihead", "--max-mem", "1K"], 1,
           err="attn multihead: the inputs and weights need about 169 KiB, more than "
               "--max-mem 1 KiB")
    expect(["selfattn", "--max-mem", "1K"], 1,
           err="attn selfattn: the inputs and weights need about 159 KiB, more than "
               "--max-mem 1 KiB")
    expect(["complexity", "--max-mem", "100"], 1,
           err="attn complexity: --n 100 needs about 300 B, more than --max-mem 100 B")

    # ---- absurd sizes: dimensions of 10^9, and products that overflow 64 bits,
    # are refused up front by --max-mem with the estimate (exit 1), never
    # allocated; complexity's counts keep their own range (exit 2)
    M, S = "attn multihead: ", "attn selfattn: "
    expect(["multihead", "--queries", "1000000000"], 1,
           err=M + "the inputs and weights need about 745 GiB, more than --max-mem 4 GiB")
    expect(["selfattn", "--hiddens", "1000000000"], 1,
           err=S + "the inputs and weights need about 13.9 EiB, more than --max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000"], 1,
           err="attn posenc: --steps 1000000000 --dim 32 needs about 119 GiB, more than "
               "--max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000", "--png", os.path.join(tmp, "huge.png")], 1,
           err="attn posenc: --steps 1000000000 --dim 32 needs about 119 GiB, more than "
               "--max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000000", "--dim", "1000000000"], 1,
           err="attn posenc: --steps 1000000000000 --dim 1000000000 needs more memory than "
               "this machine can address, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "1000000000000", "--queries", "1000000000000"], 1,
           err=M + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["complexity", "--n", "1000000000"], 2,
           err="attn complexity: --n: expected an integer from 1 to 1000000, got '1000000000'")
    big = ["--batch", "100000000", "--queries", "100000000", "--hiddens", "100000000",
           "--heads", "1"]
    expect(["multihead"] + big + ["--kv", "100000000"], 1,
           err=M + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn"] + big, 1,
           err=S + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn"] + big + ["--stream"], 1,
           err=S + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn", "--queries", "100000000", "--hiddens", "8", "--heads", "8"], 1,
           err=S + "the inputs and weights need about 5.96 GiB, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "100", "--queries", "100000", "--kv", "100000",
            "--hiddens", "8", "--heads", "8"], 1,
           err=M + "batch 100 × 8 heads × 100000 queries × 100000 keys needs about 29.1 TiB, "
                   "more than --max-mem 4 GiB; --stream computes without storing the "
                   "attention weights")
    expect(["posenc", "--steps", "100000000", "--dim", "1000000", "--similarity",
            os.path.join(tmp, "s.png")], 1,
           err="attn posenc: --steps 100000000 --dim 1000000 with --similarity needs about "
               "35.9 PiB, more than --max-mem 4 GiB")

    if VALGRIND:
        print("under valgrind: 2 bad values per option and for --max-mem, not all")


def group_bad_inputs(tmp):
    """Issue 5's catalogue, part 2: bad JSON for multihead and selfattn
    (from files and stdin), outputs that cannot be written, closed pipes.
    Input files are never written (checksums before and after), and a
    failed run leaves no file behind and an existing file untouched."""
    M = "attn multihead: "
    # ---- bad JSON, for multihead and selfattn
    inputs = {}  # every input file and its checksum when written

    def jfile(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        inputs[path] = sha(path)
        return path

    deep = "[" * 100000 + "]" * 100000
    deep_obj = '{"a":' * 100000 + "1" + "}" * 100000
    common = [  # (file name, text, {cmd: (exit code, message)}); None: same for both
        ("binary.json", bytes(range(256)), 1,
         "line 1, column 1: a NUL byte: not a JSON text"),
        ("binary1.json", bytes(range(1, 256)), 1,
         "line 2, column 23: invalid JSON at '!'"),
        ("high.json", bytes(range(0x80, 0x100)), 1,
         "line 1, column 1: invalid JSON at byte 0x80"),
        ("deep.json", deep, 1,
         "line 1, column 1001: arrays and objects nested deeper than 1000 levels"),
        ("deep_obj.json", deep_obj, 1,
         "line 1, column 5001: arrays and objects nested deeper than 1000 levels"),
        ("empty.json", "", 1, "empty: expected a JSON object"),
        ("blank.json", " \n\t\n", 1, "empty: expected a JSON object"),
        ("truncated.json", '{"%s": [[[1,', 1, "line 1, column {END}: the JSON ends too early"),
        ("trailing.json", '{"%s": [[[1]]]}}', 1,
         "line 1, column {LAST}: unexpected text after the JSON value"),
        ("trailing2.json", '{"%s": [[[1]]]} {}', 1,
         "line 1, column {LAST2}: unexpected text after the JSON value"),
        ("inf.json", '{"%s": [[[1, Infinity]]]}', 1,
         "line 1, column {Inf}: Infinity is not a JSON number (NaN and Infinity are not allowed)"),
        ("ninf.json", '{"%s": [[[-Infinity]]]}', 1,
         "line 1, column {-Inf}: -Infinity is not a JSON number (NaN and Infinity are not "
         "allowed)"),
        ("nan.json", '{"%s": [[[NaN, 1]]]}', 1,
         "line 1, column {NaN}: NaN is not a JSON number (NaN and Infinity are not allowed)"),
        ("1e400.json", '{"%s": [[[1e400]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got inf"),
        ("m1e400.json", '{"%s": [[[-1e400]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got -inf"),
        ("4e38.json", '{"%s": [[[4e38]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got 4e+38"),
        ("string.json", '{"%s": [[["1"]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a number, got a string"),
        ("bool.json", '{"%s": [[[false, 1]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a number, got a boolean"),
        ("null.json", '{"%s": [[[1, null]]], "num_heads": 1}', 1,
         "$.%s[0][0][1]: expected a number, got null"),
        ("obj.json", '{"%s": [[{"a": 1}]], "num_heads": 1}', 1,
         "$.%s[0][0]: expected a number, got an object"),
        ("toplevel_null.json", '{"%s": null}', 1,
         "$.%s: expected an array of numbers, got null"),
        ("toplevel_num.json", '{"%s": 3}', 1, "$.%s: expected an array of numbers, got a number"),
        ("ragged.json", '{"%s": [[[1, 2], [3]]], "num_heads": 1}', 1,
         "$.%s[0][1]: expected 2 numbers, got 1"),
        ("ragged2.json", '{"%s": [[[1]], [[1], [2]]], "num_heads": 1}', 1,
         "$.%s[1]: expected 1 arrays, got 2"),
        ("mixed.json", '{"%s": [[[1], 2]], "num_heads": 1}', 1,
         "$.%s[0][1]: expected an array of 1 numbers, got a number"),
        ("empty1.json", '{"%s": [], "num_heads": 1}', 1, "$.%s: an empty array"),
        ("empty2.json", '{"%s": [[]], "num_heads": 1}', 1, "$.%s: an empty array inside"),
        ("empty3.json", '{"%s": [[[]]], "num_heads": 1}', 1, "$.%s: an empty array inside"),
        ("dup.json", '{"%s": [[[1]]], "num_heads": 1, "num_heads": 1}', 1,
         "$.num_heads: the key appears twice"),
        ("heads_bool.json", '{"%s": [[[1]]], "num_heads": true}', 1,
         "$.num_heads: expected an integer, got a boolean"),
        ("heads_null.json", '{"%s": [[[1]]], "num_heads": null}', 1,
         "$.num_heads: expected an integer, got null"),
        ("heads_str.json", '{"%s": [[[1]]], "num_heads": "1"}', 1,
         "$.num_heads: expected an integer, got a string"),
        ("heads_frac.json", '{"%s": [[[1]]], "num_heads": 0.5}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got 0.5"),
        ("heads_neg.json", '{"%s": [[[1]]], "num_heads": -1}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got -1"),
        ("heads_big.json", '{"%s": [[[1]]], "num_heads": 1e400}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got inf"),
        ("heads_div.json", '{"%s": [[[1, 2, 3]]], "num_heads": 2}', 2,
         "num_hiddens 3 (the width of $.%s) is not divisible by num_heads 2 ($.num_heads)"),
        ("vl_empty.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": []}', 1,
         "$.valid_lens: expected a non-empty array of integers, got an empty array"),
        ("vl_empty2.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [[]]}', 1,
         "$.valid_lens[0]: an empty array"),
        ("vl_bool.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": true}', 1,
         "$.valid_lens: expected a non-empty array of integers, got a boolean"),
        ("vl_num.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": 1}', 1,
         "$.valid_lens: expected a non-empty array of integers, got a number"),
        ("vl_null_item.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [null]}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got null"),
        ("vl_true_item.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [true]}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got a boolean"),
        ("vl_huge.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [1e400]}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got inf"),
        ("vl_long.json", '{"%s": [[[1]], [[2]]], "num_heads": 1, "valid_lens": [1, 1, 1]}', 1,
         "$.valid_lens: expected 2 lengths (one per example) or a (2, 1) array, got 3"),
        ("vl_short2d.json", '{"%s": [[[1], [2]]], "num_heads": 1, "valid_lens": [[1]]}', 1,
         "$.valid_lens: expected shape (1,) or (1, 2), got (1, 1)"),
        ("vl_ragged.json",
         '{"%s": [[[1], [2]]], "num_heads": 1, "valid_lens": [[1, 2], [1]]}', 1,
         "$.valid_lens[1]: expected 2 integers, got 1"),
        ("sd_null.json", '{"%s": [[[1]]], "num_heads": 1, "state_dict": null}', 1,
         "$.state_dict: expected an object, got null"),
        ("sd_empty_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [], "W_k.weight": [[1]],'
         ' "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_q.weight"]: an empty array'),
        ("sd_null_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[null]], '
         '"W_k.weight": [[1]], "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_q.weight"][0][0]: expected a number, got null'),
        ("sd_inf_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1]], '
         '"W_k.weight": [[1e39]], "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_k.weight"][0][0]: expected a finite float32 number, got 1e+39'),
        ("sd_dup.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1]], '
         '"W_q.weight": [[1]]}}', 1, '$.state_dict["W_q.weight"]: the key appears twice'),
    ]
    for cmd, key in [("multihead", "queries"), ("selfattn", "X")]:
        P = "attn %s: " % cmd
        for name, text, code, msg in common:
            if isinstance(text, str) and "%s" in text:
                text = text % key
            if "%s" in msg:
                msg = msg % key
            if "{" in msg:  # {MARK}: the column of MARK in the text, {END}: past its end
                mark = msg[msg.index("{") + 1:msg.index("}", msg.index("{") + 2)]
                col = {"END": len(text) + 1, "LAST": len(text), "LAST2": len(text) - 1}.get(
                    mark) or text.index(mark) + 1
                msg = msg.replace("{%s}" % mark, str(col), 1)
            path = jfile(cmd + "_" + name, text)
            expect([cmd, "--input", path], code, err=P + "%s: %s" % (path, msg))
        # the same through stdin
        expect([cmd, "--input", "-"], 1, stdin=b'{"%s": [[[1,' % key.encode(),
               err=P + "-: line 1, column %d: the JSON ends too early" % (11 + len(key)))
        expect([cmd, "--input", "-"], 1, stdin=bytes(range(256)),
               err=P + "-: line 1, column 1: a NUL byte: not a JSON text")
        expect([cmd, "--input", "-"], 1, stdin=b"", err=P + "-: empty: expected a JSON object")
        expect([cmd, "--input", "-"], 1, stdin=deep.encode(),
               err=P + "-: line 1, column 1001: arrays and objects nested deeper than 1000 "
                       "levels")
        # not a file: missing, a directory; a file over the input limit of --max-mem
        missing = os.path.join(tmp, "no", "such.json")
        expect([cmd, "--input", missing], 1,
               err=P + "%s: cannot open: No such file or directory" % missing)
        expect([cmd, "--input", tmp], 1, err=P + "%s: cannot read: Is a directory" % tmp)
        path = jfile(cmd + "_big.json", '{"%s": [[[%s1]]], "num_heads": 1}' % (key, "0" * 200))
        expect([cmd, "--input", path, "--max-mem", "1K"], 1,
               err=P + "%s: larger than 128 B, the input limit for --max-mem" % path)
    # cross attention's own shapes
    M = "attn multihead: "
    for name, text, msg in [
        ("keys_empty.json", '{"queries": [[[1]]], "keys": [], "num_heads": 1}',
         "$.keys: an empty array"),
        ("values_empty.json", '{"queries": [[[1]]], "keys": [[[1]]], "values": [[[]]], '
         '"num_heads": 1}', "$.values: an empty array inside"),
        ("keys_bool.json", '{"queries": [[[1]]], "keys": [[[true]]], "num_heads": 1}',
         "$.keys[0][0][0]: expected a number, got a boolean"),
        ("keys_batch.json", '{"queries": [[[1]]], "keys": [[[1]], [[1]]], "num_heads": 1}',
         "$.keys: expected batch 1 like $.queries (1, 1, 1), got shape (2, 1, 1)"),
        ("values_len.json", '{"queries": [[[1]]], "keys": [[[1], [2]]], "values": [[[1]]], '
         '"num_heads": 1}',
         "$.values: expected shape (1, 2, value_size) to pair with $.keys (1, 2, 1), got "
         "(1, 1, 1)"),
        ("qtok.json", '{"queries": [[[1]]], "query_tokens": [1], "num_heads": 1}',
         "$.query_tokens[0]: expected a string, got a number"),
        ("ktok.json", '{"queries": [[[1]]], "key_tokens": [], "num_heads": 1}',
         "$.key_tokens: expected a non-empty array of strings, got an empty array"),
    ]:
        path = jfile(name, text)
        expect(["multihead", "--input", path], 1, err=M + "%s: %s" % (path, msg))

    # ---- outputs that cannot be written, for multihead and complexity
    ok = jfile("ok.json", '{"queries": [[[1, 2], [3, 4]]], "num_heads": 1}')
    tiny = ["--measure", "--sweep", "2:4", "--measure-dim", "2", "--reps", "1"]
    missing = os.path.join(tmp, "no", "such", "out")
    for cmd, base, P in [("multihead", ["multihead", "--input", ok], M),
                         ("selfattn", ["selfattn", "--hiddens", "4", "--heads", "1"],
                          "attn selfattn: "),
                         ("complexity", ["complexity"] + tiny, "attn complexity: ")]:
        for opt in ["--json", "--png"]:
            expect(base + [opt, missing], 1,
                   err=P + "%s: cannot create: No such file or directory" % missing)
            expect(base + [opt, tmp], 1, err=P + "%s: cannot write: Is a directory" % tmp)
            expect(base + [opt, "/dev/full"], 1,
                   err=P + "/dev/full: cannot write: No space left on device")
            if os.geteuid() != 0:
                ro = os.path.join(tmp, "ro")
                os.makedirs(ro, 0o555, exist_ok=True)
                expect(base + [opt, os.path.join(ro, "x")], 1,
                       err=P + "%s: cannot create: Permission denied" % os.path.join(ro, "x"))
        with open("/dev/full", "w") as full:
            rc, out, errtext = run(base, stdout=full)
        check(rc == 1 and errtext == P + "write error on standard output: No space left on "
              "device\n", "%s > /dev/full: exit 1 and a message (%d %r)" % (cmd, rc, errtext))
        with open("/dev/full", "w") as full:
            rc, out, errtext = run(base + ["--json", "-"], stdout=full)
        check(rc == 1 and errtext == P + "write error on standard output: No space left on "
              "device\n", "%s --json - > /dev/full (%d %r)" % (cmd, rc, errtext))
    check(not os.path.exists(os.path.join(tmp, "no")), "nothing created for a missing folder")
    # a closed pipe: quiet on SIGPIPE or exit 1 with a message, never a crash
    for args in ["multihead --json -", "complexity --json -", "posenc --steps 3000 --json -",
                 "selfattn --queries 300 --json -"]:
        with tempfile.TemporaryFile() as errf:
            p = subprocess.Popen(VALGRIND + [ATTN] + args.split(), stdout=subprocess.PIPE,
                                 stderr=errf)
            head = subprocess.run(["head", "-c", "1"], stdin=p.stdout, stdout=subprocess.PIPE)
            p.stdout.close()
            rc = p.wait(timeout=1200)
            errf.seek(0)
            err = errf.read().decode("utf-8", "replace")
        msg = "attn %s: write error on standard output: Broken pipe\n" % args.split()[0]
        check(head.stdout == b"{" and (rc, err) in [(0, ""), (-signal.SIGPIPE, ""), (1, msg)],
              "%s | head -c 1: exit 0, quiet on SIGPIPE or exit 1 with a message, never a "
              "crash (exit %d, %r)" % (args, rc, err))

    # ---- nothing lost: a failed run leaves an existing file untouched and
    # no temporary file; the input is never written
    keep_json, keep_png = os.path.join(tmp, "keep.json"), os.path.join(tmp, "keep.png")
    for f in [keep_json, keep_png]:
        with open(f, "wb") as fh:
            fh.write(b"old contents")
    bad = os.path.join(tmp, "multihead_ragged.json")
    for args in [["multihead", "--input", bad, "--json", keep_json, "--png", keep_png],
                 ["selfattn", "--input", os.path.join(tmp, "selfattn_deep.json"),
                  "--json", keep_json],
                 ["multihead", "--queries", "100000", "--kv", "100000", "--hiddens", "8",
                  "--heads", "8", "--batch", "8", "--json", keep_json, "--png", keep_png],
                 ["complexity", "--measure", "--max-mem", "1M", "--json", keep_json,
                  "--png", keep_png],
                 ["posenc", "--steps", "100000", "--similarity", keep_png, "--json", keep_json],
                 ["multihead", "--input", ok, "--json", keep_json, "--png",
                  os.path.join(tmp, "no", "x.png")]]:
        rc, out, errtext = run(args)
        check(rc == 1, "%s: exit 1 (%d %r)" % (" ".join(args), rc, errtext))
        if "x.png" not in args[-1]:
            check(open(keep_json, "rb").read() == b"old contents" and
                  open(keep_png, "rb").read() == b"old contents",
                  "%s: the existing files are untouched" % " ".join(args))
    # (the last: the JSON was written before the PNG failed; it is complete)
    check(json.load(open(keep_json))["command"] == "multihead",
          "a file written before a later failure is complete")
    left = [n for n in os.listdir(tmp) if n.startswith(("keep.", ".keep")) and
            n not in ("keep.json", "keep.png")]
    check(left == [], "no temporary files left behind: %r" % left)
    # an output naming the input is refused; the input is never written
    for opt in ["--json", "--png"]:
        expect(["multihead", "--input", ok, opt, ok], 2,
               err=M + "%s %s is the --input file, which attn never overwrites" % (opt, ok))
    alias = os.path.join(tmp, "alias.json")
    os.symlink(ok, alias)
    expect(["multihead", "--input", ok, "--json", alias], 2,
           err=M + "--json %s is the --input file, which attn never overwrites" % alias)
    # inputs near float32's limits: finite weights summing to 1, finite outputs
    rnd = random.Random(5)
    X = [[[rnd.choice([-3e38, 3e38, 1e30, -1e30]) for _ in range(4)] for _ in range(5)]]
    path = jfile("limits.json", json.dumps({"X": X, "num_heads": 2}))
    for extra in [[], ["--naive"], ["--stream"], ["--causal"]]:
        rc, out, _ = expect(["selfattn", "--input", path, "--json", "-"] + extra, 0, err="")
        doc = json.loads(out)
        outs = [x for r in doc["output"][0] for x in r]
        check(all(math.isfinite(x) for x in outs), "%s: finite outputs" % extra)
        if doc["attention_weights"] is not None:
            rows = [r for h in doc["attention_weights"][0] for r in h]
            check(all(math.isfinite(x) for r in rows for x in r) and
                  all(abs(sum(r) - 1) <= 1e-6 for r in rows),
                  "%s: weights finite, each row sums to 1" % extra)
    check(all(sha(p) == h for p, h in inputs.items()),
          "every input file is unchanged after all the runs that read it")
    check(len(inputs) >= 100, "the catalogue has its inputs (%d)" % len(inputs))


GROUPS = {
    "general": group_general,
    "posenc_options": group_posenc_options,
    "posenc_outputs": group_posenc_outputs,
    "posenc_files": group_posenc_files,
    "attention_errors": group_attention_errors,
    "attention_options": group_attention_options,
    "attention_outputs": group_attention_outputs,
    "complexity": group_complexity,
    "bad_options": group_bad_options,
    "bad_inputs": group_bad_inputs,
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
