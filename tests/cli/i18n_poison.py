"""Group i18n_poison: no sentence a person reads is left unmarked (SPEC.md
§17). A pseudo-catalogue wraps every message of po/attn.pot in ⟦…⟧, line
by line, and a copy of attn runs with it in place of zh_CN's: --help of
every command, the tour's list, the commands' explanations and reports, and
a catalogue of bad inputs. Whatever English is left outside the brackets
was printed without passing through gettext: three English words in a row
fail the check, unless they are what SPEC keeps in English (the book's and
PyTorch's printouts, option names, commands, data). Git's poison test
works the same way."""
import json
import os
import re
import shutil
import subprocess

from . import common
from .common import ROOT, check, write

OPEN, CLOSE = "⟦", "⟧"


def _pot_entries(path):
    """[(msgid, msgid_plural or None)] of a .pot file."""
    entries, cur, field = [], None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r'^(msgid_plural|msgid|msgstr(?:\[\d\])?) (".*")$', line)
            if m:
                field = m.group(1)
                if field == "msgid":
                    cur = {"msgid": "", "msgid_plural": None}
                    entries.append(cur)
                if field in ("msgid", "msgid_plural"):
                    cur[field] = json.loads(m.group(2))
                continue
            if line.startswith('"') and field in ("msgid", "msgid_plural"):
                cur[field] += json.loads(line)
    return [(e["msgid"], e["msgid_plural"]) for e in entries if e["msgid"]]


# a printf directive: what a message's arguments fill in; "%%" (a percent
# sign) is one too, kept whole outside the brackets (else its second "%"
# and the text after it could read as another directive: "%% from")
DIRECTIVE = re.compile(r"%%|%(?:\d+\$)?[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcsp]")


def wrap(text):
    """Each line's words in ⟦…⟧, but the directives (%s, %zu …) outside, so
    that what fills them is checked too (an English phrase passed as an
    argument); a line's leading and trailing blanks (and \\r) stay outside,
    an empty line stays empty."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"^([\r ]*)(.*?)( *)$", line, re.S)
        lead, body, tail = m.groups()
        pieces, at = [], 0
        for d in DIRECTIVE.finditer(body):
            if d.start() > at:
                pieces.append(OPEN + body[at:d.start()] + CLOSE)
            pieces.append(d.group(0))
            at = d.end()
        if at < len(body):
            pieces.append(OPEN + body[at:] + CLOSE)
        out.append(lead + "".join(pieces) + tail)
    return "\n".join(out)


def _po_string(s):
    return json.dumps(s, ensure_ascii=False)


def poison_po(pot):
    """The pseudo-catalogue's text: every message wrapped, but "en" (the
    code i18n_language reads: the poisoned run stays an English one)."""
    parts = ['msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n'
             'Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n']
    for msgid, plural in _pot_entries(pot):
        if msgid == "en":
            continue
        if plural is None:
            parts.append("msgid %s\nmsgstr %s\n" % (_po_string(msgid), _po_string(wrap(msgid))))
        else:
            parts.append("msgid %s\nmsgid_plural %s\nmsgstr[0] %s\nmsgstr[1] %s\n"
                         % (_po_string(msgid), _po_string(plural), _po_string(wrap(msgid)),
                            _po_string(wrap(plural))))
    return "\n".join(parts)


def strip_marked(text):
    """text without its ⟦…⟧ spans, innermost first (a message may hold
    another: "attention weights, ⟦2 examples⟧ × ⟦5 heads⟧")."""
    inner = re.compile(OPEN + "[^" + OPEN + CLOSE + "]*" + CLOSE)
    while True:
        t = inner.sub(" ", text)
        if t == text:
            return t
        text = t


# What SPEC keeps in English, removed before the check: PyTorch's and the
# book's printouts, the commands a run shows ($ attn …, attn … lines),
# attn's name before a message, and paths.
KEEP = [r"^\s*\$ .*$", r"^\s*attn [a-z].*$", r"attn [a-z-]+:", r"/[\w./-]+",
        r"torch\.Size\(.*?\)", r"tensor\(.*?\)",
        r"^\s*(MultiHeadAttention|DotProductAttention|AdditiveAttention|Linear|Dropout)\(.*$",
        r"^\s*\(\w+\): .*$", r"^\s*\)$", r"attention\((queries|X), .*\)(\.shape)?",
        # a section's heading in cells: the zh title, then d2l.ai's own words
        r"^1[01]\.\d .*$",
        # data: sentences as token lists, and d2l's "source => translation" line
        r"^.*<eos>.*$", r"^.* => .*$",
        # the colormaps' names
        r"Reds, Blues, viridis, gray"]
# three English words in a row (a word: letters, maybe an apostrophe)
SENTENCE = re.compile(r"\b[A-Za-z][a-z']+(?:,? [A-Za-z][a-z']+){2,}\b")


def leftovers(text):
    """The English sentences of text printed without gettext."""
    t = strip_marked(text)
    for pat in KEEP:
        t = re.sub(pat, " ", t, flags=re.M)
    return SENTENCE.findall(t)


# The runs: every command's --help, the explanations and reports of the
# translated commands, and their bad inputs.
def _runs(tmp):
    bad_json = write(tmp, "bad.json", '{"X": [[1, 2]], "oops": 1')
    obj = write(tmp, "obj.json", '{"X": 3}')
    runs = [["--help"], ["help"], ["--version"], ["tour", "--list"], ["tour", "--help"]]
    # every step of the tour, its figures written into tmp
    # (step 18 trains a ViT on 10,000 images: minutes under valgrind or
    # without optimization, where it is left out)
    last = 17 if common.VALGRIND or os.environ.get("ATTN_OPTIMIZED") == "0" else 18
    runs += [["tour", "--step", str(k), "--out", os.path.join(tmp, "tour")]
             for k in range(1, last + 1)]
    commands = ["heatmap", "pool", "score", "multihead", "selfattn", "posenc", "complexity",
                "cells", "train", "translate", "vit", "tour"]
    runs += [[c, "--help"] for c in commands]
    runs += [
        ["pool"], ["pool", "--method", "parametric", "--epochs", "5"],
        ["score"], ["score", "--explain"], ["multihead"], ["multihead", "--explain"],
        ["multihead", "--explain-shapes"], ["multihead", "--stream", "--explain"],
        ["selfattn"], ["selfattn", "--tokens", "苹果 很 好吃 | 苹果 发布 了 新的 产品"],
        ["selfattn", "--permute"], ["selfattn", "--depth", "3"],
        ["selfattn", "--scale-sweep", "--dims", "1:8", "--samples", "100"],
        ["posenc"], ["posenc", "--binary"], ["posenc", "--relative"], ["complexity"],
        ["heatmap", "--eye", "4"], ["cells", "10.1"], ["cells", "10.3"],
        # bad inputs
        ["bogus"], ["multihead", "--bogus"], ["multihead", "--heads", "3"],
        ["multihead", "--heads", "x"], ["multihead", "--input", "/nonexistent.json"],
        ["multihead", "--input", bad_json], ["selfattn", "--input", obj],
        ["selfattn", "--permute", "--permutation", "0,0,1,2"],
        ["pool", "--sigma", "-1"], ["pool", "--input", obj], ["score", "--queries", "0"],
        ["score", "--input", bad_json], ["posenc", "--dim", "3"], ["posenc", "--cols", "9-2"],
        ["heatmap", "--input", obj], ["complexity", "--n", "0"], ["cells", "12.1"],
        ["multihead", "--png", os.path.join(tmp, "no", "such", "dir", "x.png")],
        ["train", "--task", "reverse", "--steps", "20"], ["train", "--task", "apple", "--steps", "10"],
        ["train", "--task", "induction", "--steps", "5"], ["train", "--heads", "5"],
        ["train", "--task", "translate", "--steps", "5"], ["train", "--task", "lm", "--steps", "2"],
        ["train", "--compare-posenc", "--pos-embedding", "learned", "--steps", "5", "--html",
         "cp.html"],
        ["train", "--task", "induction", "--compare-layers", "--steps", "3"],
        ["train", "--task", "lm", "--compare-causal", "--steps", "2", "--sample", "20", "--html",
         "lm.html", "--png", "lm.png"],
        ["train", "--task", "translate", "--compare-arch", "--steps", "3"],
        ["pool", "--keep-self", "--method", "parametric", "--epochs", "5"],
        ["translate"], ["translate", "--input", obj, "a cat"], ["train", "--load", bad_json],
    ]
    return runs


def group_i18n_poison(tmp):
    if not shutil.which("msgfmt"):
        check(False, "msgfmt (gettext, which scripts/setup.sh installs) is missing")
        return
    # the copy of attn and its catalogue: <its folder>/po/zh_CN/LC_MESSAGES
    pot = os.path.join(ROOT, "po", "attn.pot")
    po = os.path.join(tmp, "poison.po")
    with open(po, "w", encoding="utf-8") as f:
        f.write(poison_po(pot))
    mo_dir = os.path.join(tmp, "bin", "po", "zh_CN", "LC_MESSAGES")
    os.makedirs(mo_dir)
    subprocess.run(["msgfmt", "-o", os.path.join(mo_dir, "attn.mo"), po], check=True)
    exe = os.path.join(tmp, "bin", "attn")
    shutil.copy2(common.ATTN, exe)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "NO_COLOR")}
    env.update({"COLUMNS": "80", "ATTN_FONT_SEARCH": common.WQY})
    env.pop("ATTN_FONT", None)

    # the catalogue is read: a message of each kind comes out wrapped
    p = subprocess.run([exe, "--lang", "zh", "--help"], capture_output=True, env=env, cwd=tmp)
    out = p.stdout.decode()
    check(p.returncode == 0 and OPEN + "Options:" + CLOSE in out or OPEN in out,
          "the poisoned catalogue is read: --help comes out wrapped")
    check(wrap("a\n  b c \n\n") == "⟦a⟧\n  ⟦b c⟧ \n\n", "wrap: line by line, blanks outside")
    check(wrap("%s: got %zu%%") == "%s⟦: got ⟧%zu%%", "wrap: the directives outside")
    check(wrap("moved %.0f%% from it") == "⟦moved ⟧%.0f%%⟦ from it⟧", "wrap: %% kept whole")
    check(leftovers("⟦one ⟦two three⟧ four⟧ x") == [], "nested spans are stripped")
    check(leftovers("the sentence left here") == ["the sentence left here"],
          "an unwrapped sentence is found")

    for args in _runs(tmp):
        p = subprocess.run([exe, "--lang", "zh"] + args, capture_output=True, env=env, cwd=tmp,
                           timeout=120)
        for name, stream in (("stdout", p.stdout), ("stderr", p.stderr)):
            left = leftovers(stream.decode("utf-8", "replace"))
            check(not left, "attn %s: English on %s outside gettext: %r"
                  % (" ".join(args), name, left[:8]))

    _check_figures(exe, env, tmp)


# The figures' words (ATTN_FIGURE_TEXT: every text a PNG draws, a line
# each). What stays English in a figure: the axis labels the book's code
# writes, the book's legends and class names, option values (kernels,
# methods, tasks) and the inputs' own tokens; everything else attn writes
# itself follows the language (SPEC §17).
FIGURE_KEEP = [r"^(Keys|Queries|Key positions|Query positions|Row \(position\)|"
               r"Column \(encoding dimension\)|Sorted training inputs|Sorted testing inputs|"
               r"Truth|Pred|epoch|loss|x|y|DotProductAttention|AdditiveAttention)$",
               r"\bCol \d+\b", r"\b(gaussian|boxcar|constant|epanechikov|average|parametric|"
               r"additive|reverse|previous|induction|interleaved|concat)\b", r"\bx\d+\b", r"\b[a-zA-Z]\b",
               r"\b(q|k|d|w|n|r|log|max)\b"]
FIGURE_WORD = re.compile(r"[A-Za-z]{2,}")


def figure_leftovers(lines):
    """The figure texts that hold an English word outside gettext."""
    bad = []
    for line in lines:
        t = strip_marked(line)
        for pat in FIGURE_KEEP:
            t = re.sub(pat, " ", t)
        if FIGURE_WORD.search(t):
            bad.append(line)
    return bad


def _figure_runs():
    steps = "3" if common.VALGRIND else "20"
    return [["multihead", "--png", "f.png"], ["selfattn", "--tokens", "苹果 很 好吃", "--png", "f.png"],
            ["selfattn", "--depth", "3", "--plot", "f.png"],
            ["selfattn", "--permute", "--png", "f.png"],
            ["selfattn", "--scale-sweep", "--dims", "1:8", "--samples", "100", "--png", "f.png"],
            ["posenc", "--png", "f.png"], ["posenc", "--plot", "f.png", "--cols", "6-9"],
            ["posenc", "--rope", "--dim", "8", "--steps", "20", "--png", "f.png"],
            ["complexity", "--measure", "--n", "32", "--png", "f.png"],
            ["pool", "--png", "f.png"], ["pool", "--sigma", "auto", "--sigma-png", "f.png"],
            ["pool", "--method", "parametric", "--epochs", "5", "--plot", "f.png", "--weights-png", "g.png"],
            ["pool", "--kernels-png", "f.png"], ["score", "--png", "f.png"],
            ["heatmap", "--eye", "4", "--png", "f.png"],
            ["train", "--task", "reverse", "--steps", steps, "--png", "f.png", "--plot", "g.png"],
            ["train", "--task", "induction", "--steps", "3", "--png", "f.png", "--plot", "g.png"],
            ["train", "--task", "lm", "--compare-causal", "--steps", "3", "--length", "8", "--sample", "0",
             "--png", "f.png"]]


def _check_figures(exe, env, tmp):
    check(figure_leftovers(["⟦step⟧", "Keys", "Col 6", "gaussian, σ = 1"]) == [],
          "figures: the kept words and the wrapped ones pass")
    check(figure_leftovers(["variance", "⟦depth⟧ (layers)"]) == ["variance", "⟦depth⟧ (layers)"],
          "figures: a word outside gettext is found")
    log = os.path.join(tmp, "figure-text.txt")
    for args in _figure_runs():
        if os.path.exists(log):
            os.remove(log)
        p = subprocess.run([exe, "--lang", "zh"] + args, capture_output=True, cwd=tmp, timeout=300,
                           env=dict(env, ATTN_FIGURE_TEXT=log))
        lines = []
        if os.path.exists(log):
            with open(log, encoding="utf-8") as f:
                lines = f.read().splitlines()
        check(p.returncode == 0 and lines, "attn %s: a figure drawn (exit %d, %d texts)"
              % (" ".join(args), p.returncode, len(lines)))
        left = figure_leftovers(lines)
        check(not left, "attn %s: the figure's English outside gettext: %r"
              % (" ".join(args), left[:8]))
