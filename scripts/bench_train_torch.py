#!/usr/bin/python3
"""PyTorch's side of scripts/bench's training rows: attn train's model
(SPEC.md §9), its batches' shapes and its number of steps, in PyTorch.

    bench_train_torch.py reverse|previous|apple [--steps N] [--corpus FILE]

The model, as attn's: X = embedding(tokens)·√d + P (embedding ~ N(0, 1/d)),
d2l's MultiHeadAttention (4 heads, d 32, no biases, valid_lens masking the
padding), a linear head, mean cross-entropy over the positions with a target
(ignore_index), Adam lr 1e-2 (PyTorch's defaults otherwise); batches of 64
(reverse and previous: 8 random digits; apple: the corpus of
data/apple_train.json, shuffled each epoch), the held-out accuracy at step
1, every 20 steps and the last, as attn logs it. The batches are drawn by
torch's generator, not attn's: the same shapes and amount of work, other
numbers. Threads: torch.set_num_threads(2).

Prints one JSON object: the task, steps, the loop's seconds (training and
held-out evaluation, as attn's "N steps in S s"), milliseconds per step and
the final held-out accuracy.
"""
import json
import math
import sys
import time

import torch
from torch import nn

THREADS = 2
D, HEADS, BATCH, LENGTH, DIGITS, HELDOUT, LOG_EVERY = 32, 4, 64, 8, 10, 500, 20
STEPS = {"reverse": 400, "previous": 300, "apple": 200}


def posenc(n, d):
    """d2l's P: P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(…)."""
    P = torch.zeros(n, d)
    X = torch.arange(n, dtype=torch.float32).reshape(-1, 1) / torch.pow(
        10000, torch.arange(0, d, 2, dtype=torch.float32) / d)
    P[:, 0::2] = torch.sin(X)
    P[:, 1::2] = torch.cos(X[:, : d // 2])
    return P


class Model(nn.Module):
    def __init__(self, V, C, T):
        super().__init__()
        self.embedding = nn.Embedding(V, D)
        nn.init.normal_(self.embedding.weight, 0.0, 1.0 / math.sqrt(D))
        self.W_q = nn.Linear(D, D, bias=False)
        self.W_k = nn.Linear(D, D, bias=False)
        self.W_v = nn.Linear(D, D, bias=False)
        self.W_o = nn.Linear(D, D, bias=False)
        self.head = nn.Linear(D, C)
        self.register_buffer("P", posenc(T, D))

    def forward(self, tokens, valid_lens):
        B, T = tokens.shape
        p = D // HEADS
        X = self.embedding(tokens) * math.sqrt(D) + self.P[:T]

        def split(Z):  # (B, T, D) → (B·NH, T, p), d2l's transpose_qkv
            return Z.reshape(B, T, HEADS, p).permute(0, 2, 1, 3).reshape(B * HEADS, T, p)

        Q, K, V = split(self.W_q(X)), split(self.W_k(X)), split(self.W_v(X))
        S = torch.bmm(Q, K.transpose(1, 2)) / math.sqrt(p)
        keys = torch.arange(T)[None, None, :]
        mask = keys >= valid_lens.repeat_interleave(HEADS)[:, None, None]
        A = torch.softmax(S.masked_fill(mask, -1e6), dim=-1)
        O = torch.bmm(A, V).reshape(B, HEADS, T, p).permute(0, 2, 1, 3).reshape(B, T, D)
        return self.head(self.W_o(O))


def digits_task(task, n):
    tokens = torch.randint(1, DIGITS + 1, (n, LENGTH))
    if task == "reverse":
        targets = tokens.flip(1)
    else:
        targets = torch.full_like(tokens, -1)
        targets[:, 1:] = tokens[:, :-1]
    return tokens, torch.full((n,), LENGTH), targets


def corpus(path):
    doc = json.load(open(path, encoding="utf-8"))
    vocab, classes = {"<pad>": 0}, {}
    for part in (doc, doc["heldout"]):
        for s in part["sequences"]:
            for w in s:
                vocab.setdefault(w, len(vocab))
        for label in part["labels"]:
            classes.setdefault(label, len(classes))

    def encode(part):
        seqs = part["sequences"]
        T = max(len(s) for s in seqs)
        tokens = torch.zeros(len(seqs), T, dtype=torch.long)
        targets = torch.full((len(seqs), T), -1)
        for i, s in enumerate(seqs):
            tokens[i, : len(s)] = torch.tensor([vocab[w] for w in s])
            targets[i, s.index(doc["label_at"])] = classes[part["labels"][i]]
        return tokens, torch.tensor([len(s) for s in seqs]), targets

    return len(vocab), len(classes), encode(doc), encode(doc["heldout"])


def accuracy(model, data):
    tokens, lens, targets = data
    with torch.no_grad():
        logits = model(tokens, lens)
    keep = targets >= 0
    return (logits.argmax(-1)[keep] == targets[keep]).float().mean().item()


def main():
    args = sys.argv[1:]
    if not args or args[0] not in STEPS:
        sys.exit(__doc__)
    task = args[0]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else STEPS[task]
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    if task == "apple":
        path = args[args.index("--corpus") + 1]
        V, C, train, heldout = corpus(path)
        T = train[0].shape[1]
    else:
        V, C, T = DIGITS + 1, DIGITS + 1, LENGTH
        heldout = digits_task(task, HELDOUT)
    model = Model(V, C, max(T, heldout[0].shape[1]))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss(ignore_index=-1)
    order, cursor = None, None

    t0 = time.perf_counter()
    for s in range(1, steps + 1):
        if s == 1 or s == steps or s % LOG_EVERY == 0:
            accuracy(model, heldout)
        if task == "apple":  # batches of 64 through shuffled epochs
            idx = []
            while len(idx) < min(BATCH, train[0].shape[0]):
                if order is None or cursor == len(order):
                    order, cursor = torch.randperm(train[0].shape[0]), 0
                idx.append(order[cursor].item())
                cursor += 1
            tokens, lens, targets = (x[idx] for x in train)
        else:
            tokens, lens, targets = digits_task(task, BATCH)
        logits = model(tokens, lens)
        loss = loss_fn(logits.reshape(-1, C), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    loop = time.perf_counter() - t0
    print(json.dumps({"task": task, "steps": steps, "loop_s": loop,
                      "step_ms": 1000.0 * loop / steps,
                      "heldout_accuracy": accuracy(model, heldout),
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
