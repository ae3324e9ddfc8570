#!/usr/bin/env python3
"""The documents' examples and links, checked.

usage: docs_test.py examples ATTN    run every transcript, compare its output
       docs_test.py links            every relative link, image and path resolves

The documents are README.md and every docs/**/*.md.

Transcripts. In a fenced block whose info string is `console`, a line
`$ attn ARGS…` is a command and the lines after it, up to the next `$ `
line or the end of the block, are what it prints. The command runs in
bash, in a temporary folder that holds a copy of data/ (one folder per
document, so a later example can read a file an earlier one wrote), with
`attn` the binary under test, COLUMNS=80, no NO_COLOR and the fonts the
CLI tests see (tests/cli/common.py). What it prints must match the lines
shown:

- stdout is compared when the command succeeds (the progress lines and
  notes on stderr are not); a command shown failing ends with the line
  `[exit N]`, and then stdout followed by stderr is compared, and the
  exit status must be N;
- a line that is just `…` stands for any number of lines (none too);
- `[..]` inside a line stands for any characters on that line (for
  timings and other numbers that vary from run to run);
- trailing blank lines are ignored; everything else is compared exactly;
- a command shown without output must exit 0 (or the `[exit N]` shown);
  its output is not compared;
- a command line that ends with a backslash continues on the next line;
- `$ scripts/attn ARGS…` runs as `attn ARGS…` (the same binary);
  `$ scripts/test` is shown, not run (it runs this suite); a `$ ` line
  that starts with anything else is an error. Every attn in a pipeline
  must exit 0 in a command shown succeeding (a sanitizer's or valgrind's
  report is not hidden by the pipe).

A `$ attn` line in a fenced block of another kind is an error: it would
not be run. Under valgrind (ATTN_VALGRIND, `meson test --setup=valgrind`)
every attn runs in valgrind, except in the commands of SLOW_UNDER_VALGRIND
(trainings, the tour, measured times): those the release suite runs and
checks, and here they run (without valgrind, saying so) only when a later
command of the same document reads a file they name (a saved model).

Links. Every Markdown link and image `[text](target)`, and every HTML
`<img src="target">`, outside code whose target is not a URL names a file
or folder that exists, inside the repository; `file.md#anchor` and
`#anchor` name a heading of that file (GitHub's anchors). Every path of the source tree a document names
(src/…, tests/…, scripts/…, data/…, doc/…, docs/…, completion/…; `*`
allowed) exists, as does every such path in doc/attn.1.scd.

Both modes first check the matcher itself on known cases. The run ends
with "docs_test.py MODE: N checks, N failed" and exits 1 when a check failed.
"""
import difflib
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli import common  # noqa: E402  (the fonts and valgrind the CLI tests use)

ROOT = common.ROOT
ELIDE_LINES = "…"
ELIDE_INLINE = "[..]"
EXIT_RE = re.compile(r"^\[exit (\d+)\]$")
# Too slow under valgrind (a minute or more each): there these commands run
# without it, still checked (the CLI tests check them under valgrind on
# smaller sizes).
SLOW_UNDER_VALGRIND = [r"attn tour --out", r"attn complexity --measure",
                       r"attn train (--task (reverse|previous|apple|induction|translate|lm|vit)|--data)(?!.*--steps 0)",
                       r"attn posenc --dim 512 --steps 10000", r"attn selfattn --scale-sweep",
                       r"attn translate --input \S+ --(head-importance|prune-heads)",
                       r"attn cells .*--out"]

FAILED = []
COUNT = 0


def check(cond, what):
    global COUNT
    COUNT += 1
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)
    return cond


def documents():
    """README.md and docs/**/*.md, relative to ROOT, in a stable order."""
    docs = sorted(os.path.relpath(p, ROOT)
                  for p in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    others = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "README.*.md")))
    return ["README.md"] + others + docs


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read().split("\n")


# ---------------------------------------------------------------- parsing

FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)")


def blocks(lines):
    """Fenced code blocks: (info, first content line number (1-based),
    content lines). Unclosed blocks run to the end, as in CommonMark."""
    out, i = [], 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(2), m.group(3), i + 1
        j = start
        while j < len(lines):
            s = lines[j].strip()
            if s.startswith(fence[0] * len(fence)) and s.strip(fence[0]) == "":
                break
            j += 1
        out.append((info, start + 1, lines[start:j]))
        i = j + 1
    return out


def transcripts(lines):
    """The commands of every console block: dicts with line (of the $),
    cmd, shown (output lines, each (line number, text)), exit code."""
    items = []
    for info, first, body in blocks(lines):
        if info != "console":
            continue
        k = 0
        while k < len(body):
            text = body[k]
            if not text.startswith("$ "):
                items.append({"line": first + k, "error": "output before any $ line: %r" % text})
                k += 1
                continue
            line, cmd = first + k, text[2:]
            while cmd.endswith("\\") and k + 1 < len(body):
                k += 1
                cmd = cmd[:-1].rstrip() + " " + body[k].strip()
            k += 1
            shown = []
            while k < len(body) and not body[k].startswith("$ "):
                shown.append((first + k, body[k]))
                k += 1
            while shown and not shown[-1][1].strip():
                shown.pop()
            code = 0
            if shown and EXIT_RE.match(shown[-1][1]):
                code = int(EXIT_RE.match(shown[-1][1]).group(1))
                shown.pop()
            items.append({"line": line, "cmd": cmd, "shown": shown, "exit": code})
    return items


def stray_commands(lines):
    """`$ attn` lines in fenced blocks that are not console blocks."""
    return [(first + k, t) for info, first, body in blocks(lines) if info != "console"
            for k, t in enumerate(body) if re.match(r"^\$ (scripts/)?attn\b", t)]


# ---------------------------------------------------------------- matching

def line_regex(shown):
    """A shown line as a regex: literal, with [..] for any characters."""
    return ".*".join(re.escape(p) for p in shown.split(ELIDE_INLINE))


def matches(shown, actual):
    """Whether the actual lines match the shown ones (… and [..] marks)."""
    parts = []
    for s in shown:
        parts.append(r"(?:[^\n]*\n)*?" if s == ELIDE_LINES else line_regex(s) + r"\n")
    text = "".join(a + "\n" for a in actual)
    return re.fullmatch("".join(parts), text) is not None


def first_difference(shown, actual):
    """(index into shown, index into actual) of the first line that does
    not match, walking greedily (an elision takes lines up to the next
    shown line); for the failure message only."""
    i = j = 0
    while i < len(shown):
        s = shown[i]
        if s == ELIDE_LINES:
            if i + 1 == len(shown):
                return None
            nxt = line_regex(shown[i + 1])
            while j < len(actual) and not re.fullmatch(nxt, actual[j]):
                j += 1
            i += 1
            continue
        if j >= len(actual) or not re.fullmatch(line_regex(s), actual[j]):
            return i, j
        i += 1
        j += 1
    return (i, j) if j < len(actual) else None


def selftest():
    """The matcher on cases whose answers are known."""
    cases = [
        (["a", "b"], ["a", "b"], True),
        (["a", "b"], ["a", "c"], False),
        (["a"], ["a", "b"], False),
        (["a", "b"], ["a"], False),
        (["a", "…"], ["a", "b", "c"], True),
        (["a", "…"], ["a"], True),
        (["…", "c"], ["a", "b", "c"], True),
        (["a", "…", "c"], ["a", "c"], True),
        (["a", "…", "c"], ["a", "b", "b"], False),
        (["a", "…", "c", "d"], ["a", "c", "x", "c", "d"], True),
        (["in [..] s"], ["in 0.21 s"], True),
        (["in [..] s"], ["in 0.21 ms"], False),
        (["1 … 50: 6.9e-08"], ["1 … 50: 6.9e-08"], True),
        (["1 … 50: 6.9e-08"], ["1 2 50: 6.9e-08"], False),
        (["x.y"], ["xzy"], False),
        (["[1, 2]"], ["[1, 2]"], True),
    ]
    for shown, actual, want in cases:
        check(matches(shown, actual) == want,
              "matcher: %r against %r should be %s" % (shown, actual, want))
    check(first_difference(["a", "b", "c"], ["a", "x", "c"]) == (1, 1), "first difference")
    check(first_difference(["a", "…", "d"], ["a", "b", "c"]) == (2, 3), "first difference")
    lines = ["```console", "$ attn posenc \\", "    --dim 4", "out", "", "$ scripts/test",
             "$ attn x", "err", "[exit 2]", "```", "```sh", "$ attn y", "```"]
    t = transcripts(lines)
    check([(x["line"], x["cmd"], x["exit"], [s for _, s in x["shown"]]) for x in t] ==
          [(2, "attn posenc --dim 4", 0, ["out"]), (6, "scripts/test", 0, []),
           (7, "attn x", 2, ["err"])], "transcripts parsed: %r" % t)
    check(stray_commands(lines) == [(12, "$ attn y")], "a $ attn line outside console")
    check(slug("Why divide by √d: `--scale-sweep`") == "why-divide-by-d---scale-sweep"
          and slug("苹果 in context") == "苹果-in-context", "GitHub's anchors")


# ---------------------------------------------------------------- examples

WRAPPER = """#!/bin/sh
# attn under test, as the documents' transcripts call it: every exit status
# is logged, so that a failure inside a pipeline is not hidden.
if [ -n "$ATTN_DOCS_NATIVE" ]; then
    "%s" "$@"
else
    %s "%s" "$@"
fi
rc=$?
echo "$rc $*" >> "%s"
exit $rc
"""


def run_examples(attn):
    attn = os.path.abspath(attn)
    count = skipped = slow_skipped = 0
    base = tempfile.mkdtemp(prefix="attn-docs-")
    try:
        bindir = os.path.join(base, "bin")
        os.mkdir(bindir)
        status_log = os.path.join(base, "status.log")
        vg = " ".join(common.VALGRIND)
        with open(os.path.join(bindir, "attn"), "w") as f:
            f.write(WRAPPER % (attn, vg, attn, status_log))
        os.chmod(os.path.join(bindir, "attn"), 0o755)
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        # English unless a transcript says --lang zh, whatever the tester's locale
        for k in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
            env.pop(k, None)
        env["COLUMNS"] = "80"
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env["FONTCONFIG_FILE"] = common.fc_config(os.path.join(base, "fc.conf"))
        for k, v in common.FONTS_ENV.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        for doc in documents():
            lines = read(doc)
            for line, text in stray_commands(lines):
                check(False, "%s:%d: %r is in a code block that is not ```console, so it is "
                      "never run" % (doc, line, text))
            items = transcripts(lines)
            if not items:
                continue
            work = os.path.join(base, doc.replace("/", "_"))
            # a document in Chinese (NAME.zh-CN.md) is read under LANG=zh_CN.UTF-8
            doc_env = dict(env, LANG="zh_CN.UTF-8") if doc.endswith(".zh-CN.md") else env
            shutil.copytree(os.path.join(ROOT, "data"), os.path.join(work, "data"))
            for n, it in enumerate(items):
                where = "%s:%d" % (doc, it["line"])
                if "error" in it:
                    check(False, "%s: %s" % (where, it["error"]))
                    continue
                cmd = it["cmd"]
                if cmd.startswith("scripts/test"):
                    skipped += 1
                    continue
                if cmd.startswith("scripts/attn "):
                    cmd = cmd[len("scripts/"):]
                if not re.match(r"attn( |$)", cmd):
                    check(False, "%s: a transcript runs attn, scripts/attn or scripts/test, "
                          "not %r" % (where, cmd))
                    continue
                native = common.VALGRIND and any(re.match(s, cmd) for s in SLOW_UNDER_VALGRIND)
                if native and not read_later(cmd, items[n + 1:]):
                    # the release build runs it and checks its output; here it
                    # would only be run again without valgrind
                    print("not run under valgrind (too slow there; the release suite checks it): "
                          "%s: %s" % (where, cmd))
                    slow_skipped += 1
                    continue
                if native:
                    print("without valgrind (too slow there; a later command reads what it "
                          "writes): %s: %s" % (where, cmd))
                count += 1
                run_one(where, cmd, it, work,
                        dict(doc_env, ATTN_DOCS_NATIVE="1") if native else doc_env, status_log)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("%d commands run, %d shown but not run (scripts/test)%s" % (
        count, skipped, ", %d left to the release suite (slow under valgrind)" % slow_skipped
        if slow_skipped else ""))
    check(count > 0, "the documents hold transcripts")


def read_later(cmd, later):
    """Whether a later transcript of the same document names a file that
    cmd names (a model it saves, a JSON it writes), and so needs it run."""
    def words(c):
        try:
            return shlex.split(c)
        except ValueError:
            return c.split()
    ws = words(cmd)
    names = {w for w in ws if not w.startswith("-") and re.search(r"\.[A-Za-z]+$", w)}
    names |= {d for o, d in zip(ws, ws[1:]) if o == "--out"}  # the tour's folder
    def read_words(c):  # what a later command reads: not the folder it writes into
        ws = words(c)
        return [w for i, w in enumerate(ws) if i == 0 or ws[i - 1] != "--out"]
    later_words = (w for it in later if "cmd" in it for w in read_words(it["cmd"]))
    return any(w in names or any(w.startswith(n + "/") for n in names) for w in later_words)


def run_one(where, cmd, it, work, env, status_log):
    open(status_log, "w").close()
    start = time.monotonic()
    try:
        p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           timeout=1200 if common.VALGRIND else 300)
    except subprocess.TimeoutExpired:
        check(False, "%s: %s: timed out" % (where, cmd))
        return
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    one_line = " ".join(cmd.split())
    took = time.monotonic() - start
    if took > 10:
        print("%s: %s: %.0f s" % (where, one_line, took))
    if not check(p.returncode == it["exit"], "%s: %s: exit %d, the document shows %d\n%s"
                 % (where, one_line, p.returncode, it["exit"], err.rstrip())):
        return
    with open(status_log) as f:
        statuses = [l.split(" ", 1) for l in f.read().splitlines()]
    if it["exit"] == 0:
        bad = [s for s in statuses if s[0] != "0"]
        if not check(not bad, "%s: %s: attn %s exited %s inside the command\n%s"
                     % (where, one_line, bad[0][1] if bad else "", bad[0][0] if bad else "",
                        err.rstrip())):
            return
    if not it["shown"]:
        return
    text = out if it["exit"] == 0 else out + err
    actual = text.split("\n")
    if actual and actual[-1] == "":
        actual.pop()
    while actual and not actual[-1].strip():
        actual.pop()
    shown = [s for _, s in it["shown"]]
    if matches(shown, actual):
        check(True, "")
        return
    diff = first_difference(shown, actual)
    at = ""
    if diff is not None:
        i, j = diff
        line = it["shown"][i][0] if i < len(shown) else it["shown"][-1][0] + 1
        if i < len(shown) and i > 0 and shown[i - 1] == ELIDE_LINES and j >= len(actual):
            at = ("\n  first difference at line %d of the document: %r is not in what attn "
                  "printed after the lines the … stands for" % (line, shown[i]))
        else:
            at = ("\n  first difference at line %d of the document: shown %r, got %r"
                  % (line, shown[i] if i < len(shown) else "(nothing more)",
                     actual[j] if j < len(actual) else "(nothing more)"))
    udiff = list(difflib.unified_diff(shown, actual, "shown in the document",
                                      "printed by attn", lineterm="", n=2))
    udiff = "\n".join(udiff[:60] + (["(%d more lines of difference)" % (len(udiff) - 60)]
                                    if len(udiff) > 60 else []))
    check(False, "%s: %s: the output differs from the document%s\n%s"
          % (where, one_line, at, udiff))


# ---------------------------------------------------------------- links

def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped
    (letters, digits, _ and - kept, in any script), spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*|\[|\]\([^)]*\)", "", heading.strip().lower())
    text = "".join(c for c in text if c.isalnum() or c in " -_" or c.isspace())
    return text.replace(" ", "-")


def anchors(lines):
    found, seen = set(), {}
    in_code = {i for _, first, body in blocks(lines)
               for i in range(first - 2, first + len(body))}
    for n, l in enumerate(lines):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", l)
        if m and n not in in_code:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            found.add(s if k == 0 else "%s-%d" % (s, k))
    return found


LINK_RE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMG_RE = re.compile(r"<img\s[^>]*\bsrc=\"([^\"]+)\"")
REF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
PATH_RE = re.compile(r"(?<![\w./-])((?:src|tests|scripts|data|doc|docs|completion)/[\w./*-]*[\w*])")


def prose(lines):
    """(line number, text) outside fenced blocks, inline code removed."""
    in_code = set()
    for _, first, body in blocks(lines):
        in_code.update(range(first - 2, first + len(body)))
    for n, l in enumerate(lines):
        if n not in in_code:
            yield n + 1, re.sub(r"`[^`]*`", "", l)


def check_links():
    count = 0
    for doc in documents():
        lines = read(doc)
        here = os.path.dirname(os.path.join(ROOT, doc))
        for n, text in prose(lines):
            targets = LINK_RE.findall(text) + IMG_RE.findall(text)
            m = REF_RE.match(text)
            if m:
                targets.append(m.group(1))
            for t in targets:
                if re.match(r"^[a-z][a-z0-9+.-]*:", t):  # https:, mailto:
                    continue
                count += 1
                path, _, frag = t.partition("#")
                full = os.path.normpath(os.path.join(here, path)) if path else \
                    os.path.join(ROOT, doc)
                where = "%s:%d: %s" % (doc, n, t)
                if not check(os.path.exists(full), "%s: no such file" % where):
                    continue
                check(os.path.commonpath([full, ROOT]) == ROOT, "%s: outside the repository"
                      % where)
                if frag:
                    if check(full.endswith(".md"), "%s: an anchor into a file that is not "
                             "Markdown" % where):
                        with open(full, encoding="utf-8") as f:
                            check(frag in anchors(f.read().split("\n")),
                                  "%s: no heading with that anchor" % where)
    print("%d links checked" % count)
    check(count > 0, "the documents hold links")
    # every path of the source tree the documents and the man page name
    paths = 0
    for doc in documents() + ["doc/attn.1.scd", "doc/attn.zh_CN.1.scd"]:
        for n, l in enumerate(read(doc)):
            for p in PATH_RE.findall(l):
                paths += 1
                check(glob.glob(os.path.join(ROOT, p)) != [],
                      "%s:%d: names %s, which does not exist" % (doc, n + 1, p))
    print("%d paths checked" % paths)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "examples" and len(sys.argv) == 3:
        selftest()
        run_examples(sys.argv[2])
    elif mode == "links" and len(sys.argv) == 2:
        selftest()
        check_links()
    else:
        sys.exit(__doc__.split("\n\n")[1])
    print("docs_test.py %s: %d checks, %d failed" % (mode, COUNT, len(FAILED)))
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
