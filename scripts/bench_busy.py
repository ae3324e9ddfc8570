#!/usr/bin/env python3
"""scripts/bench_busy.py — attn on an idle machine and on a busy one.

usage: scripts/bench busy [RUNS]        (scripts/bench builds build/attn first)
       bench_busy.py ATTN RUNS [BASELINE]

A learner's machine is rarely idle: a browser, an editor, a build. This
bench runs a few whole attn processes (the default trainings, shortened,
and the streaming forward pass at BERT's size) with the threads default and
with --threads 1 and 2, first on the machine as it is ("idle"), then while
two busy loops (two processes that only spin, one per core of a 2-core
machine) compete for the cores ("busy"). RUNS rounds (default 5), each
round every case idle and then every case busy, so that a drifting load
hits both alike; the table gives each case's median wall time and the
ratio busy ÷ idle. A second binary BASELINE (say, attn built from an
earlier commit) runs beside the first in the same rounds, process for
process, and gets its own columns.
"""
import os
import statistics
import subprocess
import sys
import time

CASES = [
    ("train reverse, 300 steps", ["train", "--task", "reverse", "--steps", "300"]),
    ("train translate, 150 steps", ["train", "--task", "translate", "--steps", "150"]),
    ("train induction, 200 steps", ["train", "--task", "induction", "--steps", "200"]),
    ("selfattn --stream, 1 × 512, d 768, 12 heads",
     ["selfattn", "--stream", "--queries", "512", "--hiddens", "768", "--heads", "12",
      "--batch", "1", "--fill", "random"]),
]
THREADS = [None, 1, 2]  # None: attn's default


def wall(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr.decode(errors="replace")))
    return took


def spinners(n):
    """n processes that only spin (the 'busy loops')."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    binaries = [("attn", sys.argv[1])] + ([("baseline", sys.argv[3])] if len(sys.argv) == 4 else [])
    runs = int(sys.argv[2])
    cores = os.cpu_count() or 1
    times = {}  # (binary, case, threads, state) -> [seconds]

    def round_of(state):
        for name, args in CASES:
            for th in THREADS:
                for label, exe in binaries:
                    cmd = [exe] + args + ([] if th is None else ["--threads", str(th)])
                    times.setdefault((label, name, th, state), []).append(wall(cmd))

    for r in range(runs):
        round_of("idle")
        loops = spinners(2)
        try:
            time.sleep(0.2)  # the loops on the cores before the first case
            round_of("busy")
        finally:
            for p in loops:
                p.kill()
                p.wait()
        print("round %d of %d done" % (r + 1, runs), file=sys.stderr, flush=True)

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    print("attn idle and busy: %s, %d cores; %d rounds, medians of whole-process wall times; "
          "busy: two busy loops (processes that only spin) running" % (cpu, cores, runs))
    head = "%-44s %-9s" % ("case", "threads")
    for label, _ in binaries:
        head += " %10s %10s %7s" % (label + " idle", "busy", "ratio")
    print(head)
    for name, _ in CASES:
        for th in THREADS:
            line = "%-44s %-9s" % (name, "default" if th is None else str(th))
            for label, _ in binaries:
                idle = statistics.median(times[(label, name, th, "idle")])
                busy = statistics.median(times[(label, name, th, "busy")])
                line += " %8.2f s %8.2f s %6.1f×" % (idle, busy, busy / idle)
            print(line)
    with open("/proc/loadavg") as f:
        print("load average at the end: %s" % " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
