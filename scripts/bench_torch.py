#!/usr/bin/python3
"""PyTorch's side of scripts/bench: the chapter's MultiHeadAttention, written
from its formulas with torch ops, and the measurements attn is compared with.

    bench_torch.py cell                      the chapter's cell, as a learner runs it
    bench_torch.py import                    import torch and stop (start-up floor)
    bench_torch.py layer --n N --d D --heads H [--batch B] [--runs R] [--warmup W]
                          [--budget SECONDS]
                                             one self-attention layer, timed in-process
    bench_torch.py sgemm [--size S] [--runs R]
                                             numpy float32 S×S @ S×S (the BLAS peak)

Debian's torch is built with BLAS_INFO=generic: every nn.Linear and bmm ends
in sgemm_ of whatever libblas.so.3 the dynamic linker finds. scripts/bench
chooses it per process with LD_LIBRARY_PATH; `layer` and `sgemm` print the
library that was really mapped (/proc/self/maps) and, for OpenBLAS, its
configuration and the kernel it chose. Threads: torch.set_num_threads(THREADS)
here, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS in the environment (the bench
sets them to 2). `layer`, `sgemm` print one JSON object on stdout.
"""
import math
import sys

THREADS = 2


def chapter_module():
    """The chapter's MultiHeadAttention (d2l's, with its DotProductAttention,
    masked_softmax and sequence_mask inlined, as d2l defines them)."""
    import torch
    from torch import nn

    def sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32,
                            device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    def masked_softmax(X, valid_lens):
        if valid_lens is None:
            return nn.functional.softmax(X, dim=-1)
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)

    class DotProductAttention(nn.Module):
        def __init__(self, dropout, **kwargs):
            super().__init__(**kwargs)
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    def transpose_qkv(X, num_heads):
        X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(X, num_heads):
        X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    class MultiHeadAttention(nn.Module):
        def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout,
                     bias=False, **kwargs):
            super().__init__(**kwargs)
            self.num_heads = num_heads
            self.attention = DotProductAttention(dropout)
            self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
            self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
            self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
            self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

        def forward(self, queries, keys, values, valid_lens):
            queries = transpose_qkv(self.W_q(queries), self.num_heads)
            keys = transpose_qkv(self.W_k(keys), self.num_heads)
            values = transpose_qkv(self.W_v(values), self.num_heads)
            if valid_lens is not None:
                valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
            output = self.attention(queries, keys, values, valid_lens)
            output_concat = transpose_output(output, self.num_heads)
            return self.W_o(output_concat)

    return MultiHeadAttention


def cell():
    """The chapter's multi-head cell, the way a learner's notebook runs it
    (without d2l, which is not packaged: its import would add to the wait)."""
    import torch
    torch.set_num_threads(THREADS)
    MultiHeadAttention = chapter_module()
    num_hiddens, num_heads = 100, 5
    attention = MultiHeadAttention(num_hiddens, num_hiddens, num_hiddens, num_hiddens,
                                   num_heads, 0.5)
    print(attention.eval())
    batch_size, num_queries = 2, 4
    num_kvpairs, valid_lens = 6, torch.tensor([3, 2])
    X = torch.ones((batch_size, num_queries, num_hiddens))
    Y = torch.ones((batch_size, num_kvpairs, num_hiddens))
    print(attention(X, Y, Y, valid_lens).shape)


def blas_info():
    """The BLAS / LAPACK libraries mapped into this process, and OpenBLAS's
    own account of itself when it is one of them."""
    import ctypes
    import os
    libs = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = os.path.basename(path)
            if path.startswith("/") and any(k in name for k in ("blas", "lapack", "mkl")) \
                    and path not in libs:
                libs.append(path)
    info = {"libs": libs, "kind": "unknown"}
    openblas = [p for p in libs if os.path.basename(p).startswith("libopenblas")]
    if openblas:
        lib = ctypes.CDLL(openblas[0])  # already mapped: the same handle, no second copy
        lib.openblas_get_config.restype = ctypes.c_char_p
        lib.openblas_get_corename.restype = ctypes.c_char_p
        info.update(kind="OpenBLAS", config=lib.openblas_get_config().decode(),
                    corename=lib.openblas_get_corename().decode(),
                    threads=lib.openblas_get_num_threads())
    elif any(os.path.basename(p).startswith("libblas.so") for p in libs):
        info["kind"] = "reference BLAS (netlib)" if "/blas/" in " ".join(libs) else "libblas.so.3"
    return info


def maxrss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def layer_flop(batch, n, d):
    """Multiply-adds × 2 of the four projections, QKᵀ and weights·V (all
    heads): the formula attn --time uses (self-attention, n queries = n keys)."""
    return 2.0 * (batch * 4.0 * n * d * d + 2.0 * batch * n * n * d)


def median(xs):
    xs = sorted(xs)
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else 0.5 * (xs[m - 1] + xs[m])


def layer(argv):
    import argparse
    import json
    import time
    p = argparse.ArgumentParser(prog="bench_torch.py layer")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--d", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--budget", type=float, default=0.0,
                   help="stop after this many seconds of timed runs (at least 2 runs)")
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    MultiHeadAttention = chapter_module()
    attention = MultiHeadAttention(a.d, a.d, a.d, a.d, a.heads, 0.5).eval()
    X = torch.randn(a.batch, a.n, a.d)
    times = []
    with torch.no_grad():
        for i in range(a.warmup + a.runs):
            t = time.perf_counter()
            out = attention(X, X, X, None)  # self-attention, no valid_lens: all keys
            t = time.perf_counter() - t
            if i >= a.warmup:
                times.append(t)
                if a.budget and len(times) >= 2 and sum(times) >= a.budget:
                    break
    assert tuple(out.shape) == (a.batch, a.n, a.d)
    flop = layer_flop(a.batch, a.n, a.d)
    med = median(times)
    json.dump({"torch": torch.__version__, "torch_threads": torch.get_num_threads(),
               "batch": a.batch, "n": a.n, "d": a.d, "heads": a.heads,
               "warmup": a.warmup, "runs": len(times), "times_ms": [t * 1e3 for t in times],
               "median_ms": med * 1e3, "flop": flop, "gflops": flop / med * 1e-9,
               "maxrss_mb": maxrss_mb(), "blas": blas_info()}, sys.stdout)
    print()


def sgemm(argv):
    import argparse
    import json
    import time
    p = argparse.ArgumentParser(prog="bench_torch.py sgemm")
    p.add_argument("--size", type=int, default=2048)
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args(argv)
    import numpy as np
    rng = np.random.default_rng(0)
    A = rng.standard_normal((a.size, a.size), dtype=np.float32)
    B = rng.standard_normal((a.size, a.size), dtype=np.float32)
    C = A @ B  # warm-up: threads started, pages touched
    times = []
    for _ in range(a.runs):
        t = time.perf_counter()
        np.matmul(A, B, out=C)
        times.append(time.perf_counter() - t)
    flop = 2.0 * a.size ** 3
    json.dump({"numpy": np.__version__, "size": a.size, "runs": a.runs,
               "times_ms": [t * 1e3 for t in times], "flop": flop,
               "best_gflops": flop / min(times) * 1e-9,
               "median_gflops": flop / median(times) * 1e-9,
               "blas": blas_info()}, sys.stdout)
    print()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "cell":
        cell()
    elif mode == "import":
        import torch  # noqa: F401
    elif mode == "layer":
        layer(sys.argv[2:])
    elif mode == "sgemm":
        sgemm(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
