#!/usr/bin/python3
"""numpy + matplotlib's side of scripts/bench for `attn posenc --png`:
the positional encoding P (steps × dim) as d2l's PositionalEncoding builds
it, drawn as the chapter's heatmap (d2l's show_heatmaps: imshow with the
Blues colormap, axis labels, a colour bar) and saved as a PNG with the Agg
backend.

    bench_posenc_mpl.py --steps N --dim D --png FILE [--size WxH]

--size: the PNG's size in pixels (scripts/bench passes the size attn's
figure has, so both draw the same number of pixels); default d2l's
figsize (3.5, 4) at 100 dpi.
"""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def positional_encoding(steps, dim, base=10000.0):
    """d2l's PositionalEncoding.P[0, :steps, :dim] in float32."""
    P = np.zeros((steps, dim), dtype=np.float32)
    X = np.arange(steps, dtype=np.float32).reshape(-1, 1) / np.power(
        np.float32(base), np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))
    P[:, 0::2] = np.sin(X)
    P[:, 1::2] = np.cos(X[:, :dim // 2])
    return P


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--png", required=True)
    p.add_argument("--size", default=None, help="WxH in pixels")
    a = p.parse_args()
    dpi = 100
    if a.size:
        w, h = (int(v) for v in a.size.lower().replace("×", "x").split("x"))
        figsize = (w / dpi, h / dpi)
    else:
        figsize = (3.5, 4)
    P = positional_encoding(a.steps, a.dim)
    fig, ax = plt.subplots(1, 1, figsize=figsize, dpi=dpi, squeeze=True)
    pcm = ax.imshow(P, cmap="Blues")
    ax.set_xlabel("Column (encoding dimension)")
    ax.set_ylabel("Row (position)")
    ax.set_title("Positional encoding (%d × %d)" % (a.steps, a.dim))
    fig.colorbar(pcm, ax=ax, shrink=0.6)
    fig.savefig(a.png, dpi=dpi)
    print("wrote %s: heatmap of P, %d × %d" % (a.png, a.steps, a.dim), file=sys.stderr)


if __name__ == "__main__":
    main()
