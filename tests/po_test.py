#!/usr/bin/env python3
"""The catalogues of po/ (SPEC.md §17): every sentence the sources mark is
in po/attn.pot and translated in every language of po/LINGUAS, nothing
fuzzy, every translation's printf directives as its msgid's (msgfmt
--check), and po/attn.pot is what xgettext extracts today.

usage: po_test.py SOURCE_ROOT

xgettext runs with the keywords po/meson.build gives it (read from there,
so the two cannot part), over the files po/POTFILES names. A source file
that marks a sentence but is missing from POTFILES fails too: its
sentences would never reach the catalogue."""
import os
import re
import subprocess
import sys
import tempfile


def entries(path):
    """{msgid: [msgstr, ...]} of a .po or .pot file, and the fuzzy msgids."""
    out, fuzzy, cur, field, flags = {}, set(), None, None, ""
    def unq(s):
        return s[1:-1].encode("utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#,"):
            flags = line
        m = re.match(r'^(msgid|msgid_plural|msgstr(?:\[\d+\])?) (".*")$', line)
        if m:
            key = m.group(1)
            if key == "msgid":
                cur = {"msgid": "", "msgstr": []}
                if "fuzzy" in flags:
                    cur["fuzzy"] = True
                flags = ""
            if key.startswith("msgstr"):
                cur["msgstr"].append("")
            field = key
            val = unq(m.group(2))
            if key == "msgid":
                cur["msgid"] = val
            elif key.startswith("msgstr"):
                cur["msgstr"][-1] = val
            continue
        if line.startswith('"') and cur is not None:
            if field == "msgid":
                cur["msgid"] += unq(line)
            elif field.startswith("msgstr"):
                cur["msgstr"][-1] += unq(line)
        if line == "" and cur is not None:
            out[cur["msgid"]] = cur
            cur = None
    if cur is not None:
        out[cur["msgid"]] = cur
    fuzzy = {k for k, v in out.items() if v.get("fuzzy") and k}
    return out, fuzzy


def main():
    root = sys.argv[1]
    po = os.path.join(root, "po")
    failed = []
    def check(cond, what):
        if not cond:
            failed.append(what)
            print("FAIL:", what)
    with open(os.path.join(po, "meson.build"), encoding="utf-8") as f:
        args = re.findall(r"'(--[a-z-]+(?:=[^']*)?)'", f.read())
    check(any(a.startswith("--keyword=cli_error") for a in args), "po/meson.build's xgettext args")
    with open(os.path.join(po, "POTFILES"), encoding="utf-8") as f:
        files = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    with tempfile.TemporaryDirectory() as tmp:
        pot = os.path.join(tmp, "attn.pot")
        subprocess.run(["xgettext", "--msgid-bugs-address=-"] +
                       [a for a in args if not a.startswith("--msgid-bugs-address")] +
                       ["-o", pot, "--directory", root] + files, check=True)
        fresh, _ = entries(pot)
    committed, _ = entries(os.path.join(po, "attn.pot"))
    ids = set(fresh) - {""}
    print("%d sentences marked in %d files" % (len(ids), len(files)))
    check(len(ids) > 100, "xgettext finds the marked sentences: %d" % len(ids))
    stale = sorted(ids ^ (set(committed) - {""}))
    check(not stale, "po/attn.pot is not what xgettext extracts now (ninja -C build attn-pot): "
          "%r" % stale[:5])
    # a source that marks sentences is in POTFILES
    for dirpath, _, names in os.walk(os.path.join(root, "src")):
        for n in names:
            if not n.endswith((".c", ".h")) or n == "i18n.h":
                continue
            rel = os.path.relpath(os.path.join(dirpath, n), root)
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = f.read()
            if re.search(r"(?<![\w])N?_\(\"", text):
                check(rel in files, "%s marks sentences but po/POTFILES lacks it" % rel)
    with open(os.path.join(po, "LINGUAS"), encoding="utf-8") as f:
        langs = f.read().split()
    check(langs == ["zh_CN"], "po/LINGUAS: %r" % langs)
    for lang in langs:
        path = os.path.join(po, lang + ".po")
        p = subprocess.run(["msgfmt", "--check", "--statistics", "-o", os.devnull, path],
                           capture_output=True, text=True)
        stats = p.stderr.strip()
        print("%s: %s" % (lang, stats))
        check(p.returncode == 0, "msgfmt --check %s: %s" % (path, stats))
        check(re.fullmatch(r"\d+ translated messages?\.", stats) is not None,
              "%s: every message translated, none fuzzy: %s" % (path, stats))
        have, fuzzy = entries(path)
        missing = sorted(i for i in ids if i not in have or not all(have[i]["msgstr"]))
        check(not missing, "%s lacks translations of %r" % (path, missing[:5]))
        check(not fuzzy, "%s has fuzzy entries: %r" % (path, sorted(fuzzy)[:5]))
        extra = sorted(set(have) - ids - {""})
        check(not extra, "%s translates sentences the sources no longer have: %r"
              % (path, extra[:5]))
    print("po: %d failed" % len(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
