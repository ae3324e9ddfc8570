#!/usr/bin/python3
"""PyTorch's side of attn train's timing: the same model (scripts/
gen_train_ref.py's Model: embedding·√d + P, d2l's MultiHeadAttention, the
head), the same task, batch and steps, Adam, 2 threads.

    bench_train_torch.py TASK [--steps S] [--batch B] [--length N]
                         [--hiddens D] [--heads H] [--lr LR] [--seed S]
                         [--layers L] [--ffn H] [--threads N (default 2)]

TASK is reverse or previous (random digit sequences, drawn by torch),
induction (gen_train_ref.py's Stack: --layers 2 blocks of d2l's
TransformerEncoderBlock, causal, attention only unless --ffn; sequences of
--length distinct tokens out of --vocab: a filler, a segment A of n/4 …
n/2 tokens, A again, the target the next token in the second copy), or
apple (data/apple_train.json, or --corpus FILE: batches of --batch
sentences through shuffled epochs, as attn's --data batches; --steps 200
for it as for attn, unless given).
Prints one JSON object: the median and mean milliseconds per step (batch
drawing, forward, backward, Adam update), the whole loop's seconds (wall,
and CPU summed over the threads), and
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
from gen_train_ref import Model, Stack  # noqa: E402


def induction_batch(B, n, V):
    """B induction sequences of n tokens out of 1 … V (0 is <pad>), as attn
    train --task induction draws them."""
    x = torch.zeros(B, n, dtype=torch.long)
    y = torch.full((B, n), -1, dtype=torch.long)
    seg = torch.randint(n // 4, n // 2 + 1, (B,))
    for b in range(B):
        s = int(seg[b])
        f = n - 2 * s
        pool = torch.randperm(V)[: f + s] + 1
        x[b, : f + s] = pool
        x[b, f + s:] = pool[f:]
        y[b, f + s: n - 1] = x[b, f + s + 1:]
    return x, y


def apple_corpus(path):
    """The training sentences of the 苹果 corpus as attn reads them: the
    vocabulary "<pad>" then tokens in order of first appearance, padding,
    the label as the target at the first 苹果."""
    doc = json.load(open(path, encoding="utf-8"))
    vocab, classes = {"<pad>": 0}, {}
    for s in doc["sequences"]:
        for w in s:
            vocab.setdefault(w, len(vocab))
    for part in [doc.get("heldout", {"sequences": []})]:
        for s in part["sequences"]:
            for w in s:
                vocab.setdefault(w, len(vocab))
    for label in doc["labels"]:
        classes.setdefault(label, len(classes))
    seqs = doc["sequences"]
    T = max(len(s) for s in seqs)
    tokens = torch.zeros(len(seqs), T, dtype=torch.long)
    targets = torch.full((len(seqs), T), -1)
    for i, s in enumerate(seqs):
        tokens[i, :len(s)] = torch.tensor([vocab[w] for w in s])
        targets[i, s.index(doc["label_at"])] = classes[doc["labels"][i]]
    return {"V": len(vocab), "C": len(classes), "tokens": tokens, "targets": targets,
            "lens": torch.tensor([len(s) for s in seqs])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["reverse", "previous", "apple", "induction"])
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "data", "apple_train.json"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=None)
    ap.add_argument("--vocab", type=int, default=None)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--ffn", type=int, default=0)
    ap.add_argument("--hiddens", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    ind = a.task == "induction"
    if a.steps is None:
        a.steps = {"reverse": 400, "previous": 300, "apple": 200, "induction": 800}[a.task]
    if a.length is None:
        a.length = 20 if ind else 8
    if a.vocab is None:
        a.vocab = 32 if ind else 10
    if a.lr is None:
        a.lr = 5e-3 if ind else 1e-2
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    V = C = a.vocab + 1  # "<pad>" and the digits, as attn's vocabulary
    if a.task == "apple":
        corpus = apple_corpus(a.corpus)
        V, C = corpus["V"], corpus["C"]
        order, cursor = None, 0
    if ind:
        model = Stack(V, C, a.hiddens, a.heads, a.layers, a.ffn, True, False, True)
    else:
        model = Model(V, C, a.hiddens, a.heads, True, False, False, False)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    times, acc = [], 0.0
    t_all, cpu_all = time.perf_counter(), time.process_time()
    for _ in range(a.steps):
        t0 = time.perf_counter()
        lens = None
        if a.task == "apple":
            n = corpus["tokens"].shape[0]
            idx = []
            while len(idx) < min(a.batch, n):
                if order is None or cursor == n:
                    order, cursor = torch.randperm(n), 0
                idx.append(int(order[cursor]))
                cursor += 1
            x, lens, y = corpus["tokens"][idx], corpus["lens"][idx], corpus["targets"][idx]
        elif ind:
            x, y = induction_batch(a.batch, a.length, a.vocab)
        else:
            x = torch.randint(1, V, (a.batch, a.length))
        if a.task == "reverse":
            y = x.flip(1)
        elif a.task == "previous":
            y = torch.cat([torch.full((a.batch, 1), -1), x[:, :-1]], 1)
        logits, _ = model(x, lens)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, C), y.reshape(-1),
                                                 ignore_index=-1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        mask = y >= 0
        acc = (logits.argmax(-1)[mask] == y[mask]).float().mean().item()
    total = time.perf_counter() - t_all
    cpu = time.process_time() - cpu_all  # every thread's CPU time
    print(json.dumps({"task": a.task, "steps": a.steps, "threads": a.threads,
                      "ms_per_step_median": 1e3 * statistics.median(times),
                      "ms_per_step_mean": 1e3 * total / a.steps,
                      "loop_seconds": total, "loop_cpu_seconds": cpu,
                      "last_batch_accuracy": acc}))


if __name__ == "__main__":
    main()
