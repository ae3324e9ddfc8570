#!/usr/bin/python3
"""PyTorch's side of attn train --task translate's timing: the same model,
in float32, on batches of the same shapes, the same optimizer and clipping.

    bench_translate_torch.py [--arch transformer|bahdanau]
                             [--steps N] [--warmup W] [--threads T (default 2)]
                             [--batch B] [--num-steps S] [--src-vocab VS]
                             [--tgt-vocab VT] [--hiddens D] [--heads H]
                             [--layers L] [--ffn F] [--lr LR] [--clip C]
                             [--seed S]

With --arch bahdanau the model is scripts/gen_bahdanau_ref.py's (zh.d2l.ai's
EncoderDecoder(Seq2SeqEncoder, Seq2SeqAttentionDecoder), 1 GRU layer a side
by default, d 32; --heads and --ffn unused), the rest the same.

The Transformer is scripts/gen_seq2seq_ref.py's (zh.d2l.ai's Transformer =
EncoderDecoder(TransformerEncoder, TransformerDecoder), imported, not
copied), built in float32: by default attn's --task translate model, 2
blocks a side, d 32, 4 heads, FFN 64, no biases, dropout 0, num_steps 12,
vocabularies of 37 source and 45 target entries (the grammar's, <unk>
<pad> <bos> <eos> included). The data: a pool of 2,000 random pairs drawn
once, as attn draws its 2,000 training sentences once (sources and
targets of 6 … 10 words, the grammar's lengths, + <eos>, padded to
num_steps; decoder input <bos> + target; gen_seq2seq_ref.make_batch);
each step takes a batch of 64 of them at random. A step: the batch,
forward in training mode (the decoder's causal mask), SPEC §11's loss (the
cross-entropy averaged over the target entries that are not <pad>),
backward, d2l's grad_clipping to norm 1 (gen_seq2seq_ref.grad_clipping),
Adam (lr 0.005, PyTorch's defaults otherwise). --warmup steps first, not
timed; then --steps timed (default 600, attn's default run).

Prints one JSON object: the median and mean milliseconds per step, the
loop's seconds (wall, and CPU summed over the threads), the first and last
timed loss (random pairs: it falls as the pool is memorised, so that the
run can be seen to train).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_seq2seq_ref import grad_clipping, make_batch, transformer  # noqa: E402

POOL = 2000  # attn's XRUN_TRAIN_PAIRS: the grammar's training sentences


def pool_of_pairs(g, n, Vs, Vt, T):
    """n random pairs as tensors: sources, their valid lengths, decoder
    inputs and targets (-1 at <pad>)."""
    src_words = torch.randint(6, 11, (n,), generator=g).tolist()
    tgt_words = torch.randint(6, 11, (n,), generator=g).tolist()
    b = make_batch(g, Vs, Vt, T, T, src_words, tgt_words)
    return {k: torch.tensor(v) for k, v in b.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", choices=("transformer", "bahdanau"), default="transformer")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--num-steps", type=int, default=12)
    ap.add_argument("--src-vocab", type=int, default=37)
    ap.add_argument("--tgt-vocab", type=int, default=45)
    ap.add_argument("--hiddens", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=None)
    ap.add_argument("--ffn", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    g = torch.Generator().manual_seed(a.seed)
    if a.arch == "bahdanau":
        from gen_bahdanau_ref import bahdanau  # noqa: E402
        a.layers = a.layers or 1
        net = bahdanau(a.src_vocab, a.tgt_vocab, a.hiddens, a.layers).to(torch.float32)
    else:
        a.layers = a.layers or 2
        net = transformer(a.src_vocab, a.tgt_vocab, a.hiddens, a.heads, a.layers, a.ffn,
                          False).to(torch.float32)
    net.train()  # the decoder's causal mask; dropout is 0
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    data = pool_of_pairs(g, POOL, a.src_vocab, a.tgt_vocab, a.num_steps)

    def step():
        idx = torch.randint(0, POOL, (a.batch,), generator=g)
        logits, _ = net(data["src"][idx], data["dec_in"][idx], data["src_lens"][idx])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, a.tgt_vocab),
                                                 data["targets"][idx].reshape(-1),
                                                 ignore_index=-1)
        opt.zero_grad()
        loss.backward()
        grad_clipping(net, a.clip)
        opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    assert next(net.parameters()).dtype == torch.float32
    times, losses = [], []
    t_all, cpu_all = time.perf_counter(), time.process_time()
    for _ in range(a.steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
    total = time.perf_counter() - t_all
    cpu = time.process_time() - cpu_all  # every thread's CPU time
    print(json.dumps({"task": "translate", "arch": a.arch, "steps": a.steps, "warmup": a.warmup,
                      "threads": a.threads, "batch": a.batch, "num_steps": a.num_steps,
                      "ms_per_step_median": 1e3 * statistics.median(times),
                      "ms_per_step_mean": 1e3 * total / a.steps,
                      "loop_seconds": total, "loop_cpu_seconds": cpu,
                      "first_loss": losses[0], "last_loss": losses[-1]}))


if __name__ == "__main__":
    main()
