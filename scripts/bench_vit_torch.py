#!/usr/bin/python3
"""PyTorch's side of attn train --task vit's timing: d2l.ai 11.8's ViT
(scripts/gen_vit_ref.py's modules, imported, not copied) at attn's default
sizes (28 × 28 images, patches of 7, d 64, MLP 128, 4 heads, 2 blocks,
dropout 0.1), in float32, trained as attn trains it: batches of 128,
cross-entropy, Adam at lr 0.001 (attn's default; --sgd: d2l's SGD at lr
0.1).

    bench_vit_torch.py [--steps N] [--warmup W] [--threads T (default 2)]
                       [--batch B] [--sgd] [--seed S]

The images: Debian's Fashion-MNIST training set (the gzip'd IDX file under
/usr/share/datasets/fashion-mnist), as attn reads it (pixels ÷ 255); each
step takes the next batch of a shuffled order. --warmup steps first, not
timed; then --steps timed (default 40).

Prints one JSON object: the median and mean milliseconds per step, the
loop's seconds (wall, and CPU summed over the threads), the first and last
timed loss.
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_vit_ref import ViT  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"


def idx(path):
    """An IDX file's array (gzip'd): its dimensions from the header."""
    raw = gzip.open(path).read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--sgd", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    images = idx(os.path.join(DATA, "train-images-idx3-ubyte.gz")).float().div(255).unsqueeze(1)
    labels = idx(os.path.join(DATA, "train-labels-idx1-ubyte.gz")).long()
    net = ViT(28, 7, 64, 128, 4, 2, 0.1, 0.1).to(torch.float32)
    net.train()
    opt = (torch.optim.SGD(net.parameters(), lr=0.1) if a.sgd
           else torch.optim.Adam(net.parameters(), lr=0.001))
    order = torch.randperm(images.shape[0])
    at = [0]

    def step():
        idx_b = order[at[0]:at[0] + a.batch]
        at[0] += a.batch
        loss = torch.nn.functional.cross_entropy(net(images[idx_b]), labels[idx_b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    times, losses = [], []
    t_all, cpu_all = time.perf_counter(), time.process_time()
    for _ in range(a.steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
    total = time.perf_counter() - t_all
    cpu = time.process_time() - cpu_all
    print(json.dumps({"task": "vit", "steps": a.steps, "warmup": a.warmup,
                      "threads": a.threads, "batch": a.batch,
                      "ms_per_step_median": 1e3 * statistics.median(times),
                      "ms_per_step_mean": 1e3 * total / a.steps,
                      "loop_seconds": total, "loop_cpu_seconds": cpu,
                      "first_loss": losses[0], "last_loss": losses[-1]}))


if __name__ == "__main__":
    main()
