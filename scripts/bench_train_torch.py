#!/usr/bin/python3
"""PyTorch's side of attn train's timing: the same model (scripts/
gen_train_ref.py's Model: embedding·√d + P, d2l's MultiHeadAttention, the
head), the same task, batch and steps, Adam, 2 threads.

    bench_train_torch.py TASK [--steps S] [--batch B] [--length N]
                         [--hiddens D] [--heads H] [--lr LR] [--seed S]

TASK is reverse or previous (random digit sequences, drawn by torch).
Prints one JSON object: the median and mean milliseconds per step (batch
drawing, forward, backward, Adam update), the whole loop's seconds, and
the last batch's accuracy, so that the run can be seen to learn.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_train_ref import Model  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["reverse", "previous"])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=10)
    ap.add_argument("--hiddens", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(a.seed)
    V = a.vocab + 1  # "<pad>" and the digits, as attn's vocabulary
    model = Model(V, V, a.hiddens, a.heads, True, False, False, False)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    times, acc = [], 0.0
    t_all = time.perf_counter()
    for _ in range(a.steps):
        t0 = time.perf_counter()
        x = torch.randint(1, V, (a.batch, a.length))
        if a.task == "reverse":
            y = x.flip(1)
        else:
            y = torch.cat([torch.full((a.batch, 1), -1), x[:, :-1]], 1)
        logits, _ = model(x, None)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1),
                                                 ignore_index=-1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        mask = y >= 0
        acc = (logits.argmax(-1)[mask] == y[mask]).float().mean().item()
    total = time.perf_counter() - t_all
    print(json.dumps({"task": a.task, "steps": a.steps, "threads": 2,
                      "ms_per_step_median": 1e3 * statistics.median(times),
                      "ms_per_step_mean": 1e3 * total / a.steps,
                      "loop_seconds": total, "last_batch_accuracy": acc}))


if __name__ == "__main__":
    main()
