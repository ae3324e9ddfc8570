"""Group window: --window R for selfattn and multihead (SPEC §16, the
restricted self-attention): bad R refused (exit 2, one line), the
options it cannot be used with, and the weights it gives: zero exactly
outside the R keys centred on each query (or ending at it, with
--causal), positive inside, every row summing to 1; --naive's reference
loops and the fast path giving the same weights."""
import json
import os

from .common import check, expect, run

TOKENS = ["--tokens", "a b c d e f g", "--hiddens", "8", "--heads", "2", "--seed", "3"]


def refused(tmp):
    for cmd in ("selfattn", "multihead"):
        T = "attn %s: " % cmd
        for r in ("0", "-1", "x"):
            expect([cmd, "--window", r], 2,
                   err=T + "--window: expected an integer from 1 to 1000000000000, got '%s'" % r)
        for r in ("2", "4"):
            expect([cmd, "--window", r], 2,
                   err=T + "--window %s: give an odd R (the R positions centred on the query)"
                   % r)
        for opt in (["--explain"], ["--stream"], ["--describe"],
                    ["--html", os.path.join(tmp, "w.html")]):
            expect([cmd, "--window", "3"] + opt, 2,
                   err=T + "%s cannot be used with --window (the restricted attention runs the "
                   "layer's forward pass: its output, weights, --png, --json)" % opt[0])
    for opt in (["--depth", "3"], ["--permute"]):
        expect(["selfattn", "--window", "3"] + opt, 2,
               err="attn selfattn: %s cannot be used with --window (the restricted attention "
               "runs the layer's forward pass: its output, weights, --png, --json)" % opt[0])
    check(not os.path.exists(os.path.join(tmp, "w.html")), "--window refused: nothing written")


def weights(args):
    rc, out, err = run(args + ["--json", "-"])
    check(rc == 0, "attn %s: exit 0 (%r)" % (" ".join(args), err))
    return json.loads(out)["attention_weights"] if rc == 0 else []


def inside(i, j, R, causal, length):
    """By hand: key j is seen by query i."""
    if j >= length:
        return False
    if causal:
        return j <= i and i - j <= R - 1
    return abs(i - j) <= (R - 1) // 2


def pattern(tmp):
    for R in (1, 3, 5):
        for causal in (0, 1):
            for lens in ("none", "5"):
                args = ["selfattn"] + TOKENS + ["--window", str(R), "--valid-lens", lens] + \
                    (["--causal"] if causal else [])
                what = "selfattn --window %d%s --valid-lens %s" % (R, " --causal" * causal, lens)
                w = weights(args)
                length = 7 if lens == "none" else 5
                ok_zero, ok_sum = True, True
                for head in (w[0] if w else []):
                    for i, row in enumerate(head):
                        seen = [inside(i, j, R, causal, length) for j in range(7)]
                        if not any(seen):  # every key masked: uniform, as d2l's −1e6
                            ok_zero &= all(abs(x - 1 / 7) < 1e-6 for x in row)
                        else:
                            ok_zero &= all((x > 0) if s else (x == 0) for x, s in zip(row, seen))
                        ok_sum &= abs(sum(row) - 1) <= 1e-6
                check(w != [] and ok_zero, "%s: zero exactly outside the window" % what)
                check(w != [] and ok_sum, "%s: every row sums to 1" % what)
                naive = weights(args + ["--naive"])
                check(len(naive) == len(w) and all(
                    abs(a - b) <= 1e-6 for ex, ey in zip(w, naive) for hx, hy in zip(ex, ey)
                    for rx, ry in zip(hx, hy) for a, b in zip(rx, ry)),
                    "%s: --naive's weights are the fast path's" % what)
    # R = 1: each query sees itself only, weight 1
    w = weights(["selfattn"] + TOKENS + ["--window", "1", "--valid-lens", "none"])
    check(w != [] and all(row[i] == 1 for head in w[0] for i, row in enumerate(head)),
          "selfattn --window 1: the identity")
    # a window wider than the sequence: the same weights as none
    wide = weights(["selfattn"] + TOKENS + ["--window", "15", "--valid-lens", "none"])
    full = weights(["selfattn"] + TOKENS + ["--valid-lens", "none"])
    check(wide == full and wide != [], "selfattn --window 15 over 7 tokens: every key seen")
    # multihead (cross-attention, 4 queries, 6 keys): query i sees keys i−1 … i+1
    w = weights(["multihead", "--queries", "4", "--kv", "6", "--hiddens", "8", "--heads", "2",
                 "--fill", "random", "--valid-lens", "none", "--window", "3"])
    check(w != [] and all((x > 0) == (abs(i - j) <= 1) for ex in w for head in ex
                          for i, row in enumerate(head) for j, x in enumerate(row)),
          "multihead --window 3: the band |i − j| ≤ 1 over 4 queries and 6 keys")
    expect(["selfattn"] + TOKENS + ["--window", "5"], 0,
           out_has=("window R = 5: query i sees keys j with |i - j| <= 2\n",))
    expect(["selfattn"] + TOKENS + ["--window", "5", "--causal"], 0,
           out_has=("window R = 5, causal: query i sees keys i - 4 … i\n",))
    expect(["selfattn"] + TOKENS, 0, out_not=("window",))
    png = os.path.join(tmp, "w.png")
    rc, _, err = run(["selfattn"] + TOKENS + ["--window", "3", "--png", png])
    check(rc == 0 and os.path.getsize(png) > 0, "selfattn --window 3 --png (%r)" % err)


def train(tmp):
    """attn train --window R: refused where a windowed model is not
    handled, and what it learns: the previous token (one key back, inside
    R 3) but not the reversal (the far keys are outside)."""
    T = "attn train: "
    expect(["train", "--task", "previous", "--window", "4"], 2,
           err=T + "--window 4: give an odd R (the R positions centred on the query)")
    expect(["train", "--task", "previous", "--window", "0"], 2,
           err=T + "--window: expected an integer from 1 to 1000000, got '0'")
    for opt in (["--save", os.path.join(tmp, "m.json")], ["--html", os.path.join(tmp, "t.html")],
                ["--compare-layers", "--layers", "2"]):
        expect(["train", "--task", "previous", "--window", "3"] + opt, 2,
               err=T + "%s cannot be used with --window (a windowed model is trained and "
               "shown, not saved or compared)" % opt[0])
    expect(["train", "--task", "translate", "--window", "3"], 2,
           err=T + "--window is not used by translation: the Transformer's encoder sees every "
           "source word and its decoder every earlier word")
    check(not os.path.exists(os.path.join(tmp, "m.json")), "train --window refused: no model")
    figures = {}
    for task in ("previous", "reverse"):
        js = os.path.join(tmp, task + ".json")
        rc, out, err = run(["train", "--task", task, "--window", "3", "--json", js])
        check(rc == 0, "train --task %s --window 3: exit 0 (%r)" % (task, err))
        if rc:
            continue
        with open(js) as fh:
            figures[task] = json.load(fh)["final"]["heldout_accuracy"]
    check(figures.get("previous", 0) >= 0.99,
          "train --task previous --window 3: learned (%r)" % figures.get("previous"))
    check(figures.get("reverse", 1) <= 0.6,
          "train --task reverse --window 3: not learned, the far keys unseen (%r)"
          % figures.get("reverse"))
    rc, out, _ = run(["train", "--task", "previous", "--window", "3", "--steps", "40"])
    lines = out.splitlines()
    check(rc == 0 and lines[0].endswith(", with P, window 3"),
          "train --window 3: the summary line %r" % lines[:1])
    # the probe's printed weights: "0.00" outside |i − j| <= 1
    rows = [l for l in lines if l.lstrip("[ ").startswith("0.") or l.lstrip("[ ").startswith("1.")]
    ok = len(rows) >= 8
    for n, l in enumerate(rows):
        i = n % 8
        cells = l.strip("[], ").split(", ")
        ok &= len(cells) == 8 and all(c == "0.00" for j, c in enumerate(cells) if abs(i - j) > 1)
    check(ok, "train --window 3: the probe's weights zero outside the window")


def group_window(tmp):
    refused(tmp)
    pattern(tmp)
    train(tmp)
