"""The runner's machinery, shared by every group of tests/cli_test.py.

run() runs attn (under valgrind when ATTN_VALGRIND is set), check() counts
one check, expect() runs attn and checks its exit code, its exact stderr
and what its stdout holds; then PNG headers, writing and hashing files,
and the font environment every run sees. A group imports what it uses by
name; ATTN is set at start-up, after the imports, so read it as
common.ATTN.
"""
import hashlib
import os
import struct
import subprocess
import time
import zlib

# The source tree (this file is tests/cli/common.py): the docs the tests read.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Set by tests/cli_test.py: the attn binary, as an absolute path; read and
# updated by check(): the failed checks and the number of checks.
ATTN = None
FAILED = []
COUNT = 0


# `meson test --setup=valgrind` sets ATTN_VALGRIND: every attn run is then
# wrapped in valgrind, and a memory error or a definite or indirect leak
# exits 99, which no exact exit-code check accepts (libgomp's still-reachable
# blocks are not errors). The slowest cases are skipped there (heavy()).
# (--read-inline-info=no: a report names the function, not the inlined
# one within it; each of the leg's thousands of runs starts 16% sooner)
VALGRIND = ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
            "--read-inline-info=no",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect"] if os.environ.get("ATTN_VALGRIND") else []


def slow_build(what):
    """True (and says so) when a training-heavy case is skipped under valgrind
    or in an unoptimized build (the sanitizers', ATTN_OPTIMIZED=0)."""
    if VALGRIND or os.environ.get("ATTN_OPTIMIZED") == "0":
        print("skipped under valgrind or in an unoptimized build (too slow there): %s" % what)
        return True
    return False


def heavy(what):
    """True (and says so) when a slow case is skipped under valgrind."""
    if VALGRIND:
        print("skipped under valgrind (too slow there): %s" % what)
    return bool(VALGRIND)


# The fonts every run sees, whatever the machine has: no $ATTN_FONT, the
# search list naming only the CJK font scripts/setup.sh installs (Debian's
# fonts-wqy-microhei), and fontconfig reading a configuration without fonts
# (FONTS_ENV["FONTCONFIG_FILE"] is set by tests/cli_test.py). A case's env
# overrides these; a value None removes the variable (ATTN_FONT_SEARCH:
# None lets attn ask fontconfig).
WQY = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
FONTS_ENV = {"ATTN_FONT": None, "ATTN_FONT_SEARCH": WQY}


def run(args, env=None, stdout=subprocess.PIPE, cwd=None, stdin=None):
    """Run attn; stdin may be bytes to feed it."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    # English, whatever the tester's locale (a case's env may choose
    # another: tests/cli/i18n.py)
    for k in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        e.pop(k, None)
    e["COLUMNS"] = "80"
    for k, v in list(FONTS_ENV.items()) + list((env or {}).items()):
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    start = time.monotonic()
    p = subprocess.run(VALGRIND + [ATTN] + args, stdout=stdout, stderr=subprocess.PIPE,
                       input=stdin, env=e, cwd=cwd, timeout=1200 if VALGRIND else 120)
    took = time.monotonic() - start
    if took > 10:
        # where a slow leg's time goes (the valgrind leg's above all)
        print("%.0f s: attn %s" % (took, " ".join(args)))
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    errtext = p.stderr.decode("utf-8", "replace")
    if VALGRIND:
        check(p.returncode != 99, "attn %s: valgrind reports errors or leaks:\n%s"
              % (" ".join(args), errtext))
    return p.returncode, out, errtext


def check(cond, what):
    """Count a check, report it when it fails; cond, for chaining."""
    global COUNT
    COUNT += 1
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)
    return cond


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


def png_ok(path):
    """Whether path is a valid PNG (signature, CRCs) of a sensible size."""
    try:
        w, h, ctype = png_info(path)
    except (OSError, AssertionError, struct.error):
        return False
    return w >= 100 and h >= 100 and ctype == 2


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def same_bytes(a, b):
    """Whether files a and b both exist and hold the same bytes."""
    return os.path.exists(a) and os.path.exists(b) and sha(a) == sha(b)


# Debian's fonts-dejavu-core, which scripts/setup.sh installs (attn embeds
# it at build time).
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
# No CJK font reachable: $ATTN_FONT names no file and the search list
# ($ATTN_FONT_SEARCH, see src/render/text.h) is empty.
NO_CJK = {"ATTN_FONT": "/nonexistent/font.ttf", "ATTN_FONT_SEARCH": ""}


def fc_config(path, font_dir=None):
    """Write a fontconfig configuration that sees the fonts of font_dir
    only (None: no fonts at all), with its cache beside it; its path."""
    d = os.path.dirname(path)
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<fontconfig>\n%s  <cachedir>%s</cachedir>\n'
                '</fontconfig>\n' % ("  <dir>%s</dir>\n" % font_dir if font_dir else "",
                                      os.path.join(d, "fc-cache")))
    return path


def need_cjk_font():
    """A check, first in the groups whose figures label 苹果: the set-up's
    CJK font is there (say so once, up front, rather than in every case)."""
    check(os.path.exists(WQY), "%s is missing: install Debian's fonts-wqy-microhei "
          "(scripts/setup.sh does); the 苹果 figures cannot be labelled" % WQY)
