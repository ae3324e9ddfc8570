#!/usr/bin/env python3
"""scripts/bench_baseline.py — this tree's attn against another build of it.

usage: ATTN_BASELINE=PATH scripts/bench baseline [RUNS]
       bench_baseline.py ATTN BASELINE RUNS

A change that should not touch speed (a move of files, a rewrite for
reading) is checked here: scripts/bench's attn rows, each timed for both
binaries in the same rounds, process for process, so that a drifting load
hits both alike. RUNS rounds (default 5); the table gives each row's
median for this tree and for the baseline, and their ratio (baseline ÷
this tree: above 1, this tree is faster).

Rows, each as scripts/bench times it: the forward pass of a BERT-base
layer and of a long sequence, in-process (`--time`, the median of the
process's own runs after a warm-up); whole processes: each default
training task and both translation architectures (attn train prints
its loop's time to 10 ms only), the chapter's multi-head cell, posenc
10000 × 512 with a PNG. attn --threads 2 throughout, as scripts/bench
(posenc has no threads to set).
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

THREADS = "2"


def layer(b, n, d, heads, stream):
    return ["selfattn", "--batch", str(b), "--queries", str(n), "--hiddens", str(d), "--heads",
            str(heads), "--fill", "random", "--valid-lens", "none", "--color", "never",
            "--time", "--repeat", "4"] + (["--stream"] if stream else [])


def forward_ms(p):
    m = re.search(r"forward pass: ([\d.]+) ms", p.stderr)
    return float(m.group(1)) if m else None


def train(task, *extra):
    return ["train", "--task", task, "--color", "never", "--log-every", "1000000"] + list(extra)


def rows(tmp):
    """(name, attn arguments, what to read: a function of the finished
    process, or None for its wall time)"""
    return [
        ("BERT-base layer, --stream, forward ms", layer(1, 512, 768, 12, True), forward_ms),
        ("BERT-base layer, weights stored, forward ms", layer(1, 512, 768, 12, False),
         forward_ms),
        ("long sequence 1 × 4096, d 512, --stream, forward ms", layer(1, 4096, 512, 8, True),
         forward_ms),
        ("train reverse, process ms", train("reverse"), None),
        ("train previous, process ms", train("previous"), None),
        ("train apple, process ms", train("apple"), None),
        ("train induction, process ms", train("induction"), None),
        ("train translate (Transformer), process ms", train("translate"), None),
        ("train translate --arch bahdanau, process ms",
         train("translate", "--arch", "bahdanau"), None),
        ("multihead, the chapter's cell, process ms", ["multihead", "--color", "never"], None),
        ("posenc 10000×512 → PNG, process ms",
         ["posenc", "--dim", "512", "--steps", "10000", "--png", os.path.join(tmp, "p.png")],
         None),
    ]


def run(exe, args, read):
    t = time.perf_counter()
    threads = [] if args[0] == "posenc" else ["--threads", THREADS]  # posenc has one
    p = subprocess.run([exe] + args + threads, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    took = (time.perf_counter() - t) * 1e3
    if p.returncode != 0:
        sys.exit("failed: %s %s\n%s" % (exe, " ".join(args), p.stderr))
    v = read(p) if read else took
    if v is None:
        sys.exit("%s %s printed no time:\n%s%s" % (exe, " ".join(args), p.stdout[:300],
                                                   p.stderr[:300]))
    return v


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binaries = [("this tree", sys.argv[1]), ("baseline", sys.argv[2])]
    runs = int(sys.argv[3])
    with tempfile.TemporaryDirectory(prefix="attn-bench-baseline-") as tmp:
        table = rows(tmp)
        times = {}
        for name, args, read in table:  # warm the page cache, one run each
            for _, exe in binaries:
                run(exe, args, read)
        for r in range(runs):
            for name, args, read in table:
                for label, exe in binaries:
                    times.setdefault((label, name), []).append(run(exe, args, read))
            print("round %d of %d done" % (r + 1, runs), file=sys.stderr, flush=True)
    print("| %s | this tree | baseline | ÷ |" % "row (medians of %d rounds, --threads %s)"
          % (runs, THREADS))
    print("|---|---:|---:|---:|")
    for name, _, _ in table:
        a = statistics.median(times[("this tree", name)])
        b = statistics.median(times[("baseline", name)])
        print("| %s | %.2f | %.2f | %.2f |" % (name, a, b, b / a))
    print("÷ = baseline ÷ this tree (above 1: this tree is faster); baseline: %s" % sys.argv[2])
    with open("/proc/loadavg") as f:
        print("load average at the end: %s" % " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
