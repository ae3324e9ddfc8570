#!/usr/bin/env python3
"""The plan of src/ (docs/design.md), checked from the code itself.

The build checks which folder may include which (each folder is a Meson
library that sees only the headers below it). What a build cannot see,
this test checks:

  circles    no two files of src/ that call each other, directly or round
             a longer loop: file A uses file B when A calls a function
             (or uses an object) that B defines and exports; the
             files' uses must form no cycle
  folders    no folder holds more than FOLDER_MAX lines of C directly
             (its own .c and .h files, not its sub-folders')
  functions  every function is shorter than FUNCTION_MAX lines, from the
             line of its name to its closing brace, but the reference
             loops named in LONG_REFERENCE (a lesson is read in one piece)
  map        docs/design.md's map names every .c and .h file of src/ by
             its path below src/, and no file that is not there

usage: layout_test.py SRC_DIR DESIGN_MD [--list]
  --list  print each file's uses (A -> B: the names) and exit
Exit status 0 when all hold, 1 with every failure listed.
"""
import os
import re
import sys

FOLDER_MAX = 6000
FUNCTION_MAX = 70
# Reference loops kept whole on purpose: the chain rule of multi-head
# attention written out step by step in reverse, each step beside the
# forward step it undoes (attention.c's mha_forward, steps 9 … 1).
LONG_REFERENCE = {"mha_backward_additive"}

C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case"}


def strip_c(text):
    """The text with comments, strings and character constants blanked
    (newlines kept, so that line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


DEF_RE = re.compile(r"^(?!static\b)(?!typedef\b)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\(", re.M)
ANY_DEF_RE = re.compile(r"^(?!typedef\b)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{]*?\)\s*\{", re.M | re.S)
OBJ_RE = re.compile(r"^(?!static\b)(?!typedef\b)(?!extern\b)(?:const\s+)?[A-Za-z_][\w \t\*]*?"
                    r"\b(\w+)\s*(?:\[[^\]]*\])?\s*=", re.M)


def sources(src):
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != "third_party")
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(root, f)


def exported(path, text):
    """The functions and objects a .c file defines for other files."""
    names = set()
    for m in DEF_RE.finditer(text):
        # a definition: the parenthesis closes and a brace follows
        rest = text[m.end():]
        depth, k = 1, 0
        while k < len(rest) and depth:
            depth += {"(": 1, ")": -1}.get(rest[k], 0)
            k += 1
        if rest[k:].lstrip().startswith("{"):
            names.add(m.group(1))
    for m in OBJ_RE.finditer(text):
        names.add(m.group(1))
    return names - C_KEYWORDS


def functions(text):
    """(name, first line, last line) of every function defined in text:
    from the line of its name to the line of its closing brace."""
    out = []
    lines = text.split("\n")
    for m in ANY_DEF_RE.finditer(text):
        name = m.group(1)
        if name in C_KEYWORDS:
            continue
        first = text.count("\n", 0, m.start(1)) + 1
        depth, k = 0, m.end() - 1  # at the opening brace
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        last = text.count("\n", 0, k) + 1
        out.append((name, first, last))
    del lines
    return out


def find_cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src, design = args
    texts = {}
    for p in sources(src):
        with open(p, encoding="utf-8") as f:
            texts[os.path.relpath(p, src)] = f.read()
    stripped = {p: strip_c(t) for p, t in texts.items()}
    failures = []

    # circles: who defines what, then who uses whom
    owner = {}
    for p, t in stripped.items():
        if p.endswith(".c"):
            for name in exported(p, t):
                owner.setdefault(name, p)
    uses = {}
    for p, t in stripped.items():
        if not p.endswith(".c"):
            continue
        for tok in set(re.findall(r"\b[A-Za-z_]\w*\b", t)):
            q = owner.get(tok)
            if q and q != p:
                uses.setdefault(p, {}).setdefault(q, set()).add(tok)
    if "--list" in sys.argv:
        for p in sorted(uses):
            for q in sorted(uses[p]):
                print("%s -> %s: %s" % (p, q, ", ".join(sorted(uses[p][q]))))
        return 0
    for comp in find_cycles({p: set(q) for p, q in uses.items()}):
        detail = "; ".join("%s -> %s (%s)" % (a, b, ", ".join(sorted(uses[a][b])[:3]))
                           for a in comp for b in comp if b in uses.get(a, {}))
        failures.append("circle of %d files: %s" % (len(comp), detail))

    # folders
    per_folder = {}
    for p, t in texts.items():
        d = os.path.dirname(p) or "."
        per_folder[d] = per_folder.get(d, 0) + t.count("\n")
    for d, n in sorted(per_folder.items()):
        if n > FOLDER_MAX:
            failures.append("src/%s holds %d lines of C directly (at most %d)" % (d, n, FOLDER_MAX))

    # functions
    for p, t in sorted(stripped.items()):
        for name, first, last in functions(t):
            n = last - first + 1
            if n >= FUNCTION_MAX and name not in LONG_REFERENCE:
                failures.append("src/%s:%d: %s is %d lines (under %d)" % (
                    p, first, name, n, FUNCTION_MAX))

    # the map
    with open(design, encoding="utf-8") as f:
        doc = f.read()
    named = set(re.findall(r"`((?:base|nn|io|render|cmd|third_party)/[\w/]+\.[ch])`", doc))
    named |= set(re.findall(r"`(main\.c)`", doc))
    for p in sorted(texts):
        if p not in named and not p.startswith("third_party/"):
            failures.append("docs/design.md's map does not name src/%s" % p)
    for p in sorted(named):
        if p not in texts and not p.startswith("third_party/"):
            failures.append("docs/design.md's map names src/%s, which is not there" % p)

    for f in failures:
        print("FAIL " + f)
    nfun = sum(len(functions(t)) for t in stripped.values())
    print("%d files, %d uses between files, %d functions, %d folders: %s" % (
        len(texts), sum(len(q) for q in uses.values()), nfun, len(per_folder),
        "%d failures" % len(failures) if failures else "the plan holds"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
