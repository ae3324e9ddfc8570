"""attn selfattn --depth N: one self-attention layer applied N times with
the same weights, alone, with a residual connection, and with the
residual and LayerNorm (SPEC §15, d2l 10.6's exercise). Every depth's
spread and rank-1 residual recomputed here with the test's own loops from
the X and state_dict that --json writes; the collapse of attention alone;
the table, the plot, and every refusal with its exact line."""
import json
import math
import os

from .common import check, expect, png_info, run, write

P = "attn selfattn: "


def linear(x, w, b=None):
    """x (n, in) · wᵀ (+ b)."""
    return [[sum(xi * wi for xi, wi in zip(row, wrow)) + (b[o] if b else 0.0)
             for o, wrow in enumerate(w)] for row in x]


def mha(X, sd, heads, causal):
    """d2l's MultiHeadAttention in eval mode on one example X (N, H), dot
    scoring: the heads by their columns, softmax(QKᵀ/√p)·V, then W_o."""
    Q = linear(X, sd["W_q.weight"], sd.get("W_q.bias"))
    K = linear(X, sd["W_k.weight"], sd.get("W_k.bias"))
    V = linear(X, sd["W_v.weight"], sd.get("W_v.bias"))
    N, H = len(X), len(Q[0])
    p = H // heads
    concat = [[0.0] * H for _ in range(N)]
    for h in range(heads):
        cols = range(h * p, h * p + p)
        for q in range(N):
            s = [sum(Q[q][c] * K[k][c] for c in cols) / math.sqrt(p) for k in range(N)]
            if causal:
                s = [v if k <= q else -1e6 for k, v in enumerate(s)]
            m = max(s)
            e = [math.exp(v - m) for v in s]
            total = sum(e)
            for c in cols:
                concat[q][c] = sum(e[k] / total * V[k][c] for k in range(N))
    return linear(concat, sd["W_o.weight"], sd.get("W_o.bias"))


def layer_norm(x):
    out = []
    for row in x:
        m = sum(row) / len(row)
        var = sum((v - m) ** 2 for v in row) / len(row)
        out.append([(v - m) / math.sqrt(var + 1e-5) for v in row])
    return out


def measures(X):
    """(spread, rank-1 residual) of one example's tokens X (N, H)."""
    N, H = len(X), len(X[0])
    mean = [sum(X[i][j] for i in range(N)) / N for j in range(H)]
    dist = [math.sqrt(sum((X[i][j] - mean[j]) ** 2 for j in range(H))) for i in range(N)]
    off = sum(d * d for d in dist)
    total = sum(v * v for row in X for v in row)
    return sum(dist) / N, math.sqrt(off / total) if total > 0 else 0.0


def recompute(doc, depth, causal):
    """{kind: [(spread, rank-1) for depth 0 … depth]}, averaged over the examples."""
    sd, heads = doc["state_dict"], doc["num_heads"]
    result = {}
    for kind in ("attention", "residual", "addnorm"):
        per_depth = [[0.0, 0.0] for _ in range(depth + 1)]
        for X in doc["X"]:
            for d in range(depth + 1):
                s, r = measures(X)
                per_depth[d][0] += s / len(doc["X"])
                per_depth[d][1] += r / len(doc["X"])
                A = mha(X, sd, heads, causal)
                if kind == "attention":
                    X = A
                else:
                    Z = [[x + a for x, a in zip(xr, ar)] for xr, ar in zip(X, A)]
                    X = Z if kind == "residual" else layer_norm(Z)
        result[kind] = per_depth
    return result


def near(a, b):
    return abs(a - b) <= 1e-5 + 1e-4 * abs(b)


def value_checks():
    for args, causal in ((["--batch", "2", "--queries", "4", "--hiddens", "8", "--heads", "2"],
                          False),
                         (["--batch", "1", "--queries", "5", "--hiddens", "6", "--heads", "3",
                           "--causal", "--seed", "4"], True),
                         (["--batch", "3", "--queries", "3", "--hiddens", "4", "--heads", "1",
                           "--bias", "--seed", "9"], False)):
        rc, out, err = run(["selfattn", "--depth", "3", "--json", "-"] + args)
        check(rc == 0 and err == "", "--depth 3 %s: exit %d, %r" % (args, rc, err))
        if rc != 0:
            continue
        doc = json.loads(out)
        want = recompute(doc, 3, causal)
        check(len(doc["depths"]) == 4 and doc["depth"] == 3, "--depth 3: %d depths"
              % len(doc["depths"]))
        for d, row in enumerate(doc["depths"]):
            for kind in ("attention", "residual", "addnorm"):
                got = row[kind]
                s, r = want[kind][d]
                check(near(got["spread"], s) and near(got["rank1_residual"], r),
                      "--depth 3 %s: depth %d %s: %r, by hand %.9g %.9g"
                      % (args, d, kind, got, s, r))


def collapse_checks(tmp):
    plot = os.path.join(tmp, "depth.png")
    rc, out, err = run(["selfattn", "--depth", "8", "--plot", plot])
    check(rc == 0 and err == "", "--depth 8: exit %d, %r" % (rc, err))
    lines = out.split("\n")
    check(max(len(line) for line in lines if not line.startswith("wrote ")) <= 80,
          "--depth 8: a line over 80 columns")
    rc, js, _ = run(["selfattn", "--depth", "8", "--json", "-"])
    doc = json.loads(js)
    rows = doc["depths"]
    # attention alone: the tokens become one vector (rank-1 below 1e-3 by
    # depth 2, exactly 0 in float32 from depth 3 on); with the residual
    # and LayerNorm they are still far apart after 8 layers
    check(rows[0]["attention"]["rank1_residual"] > 0.8, "depth 0: %r" % rows[0])
    check(rows[2]["attention"]["rank1_residual"] < 1e-3, "depth 2: %r" % rows[2])
    check(all(r["attention"]["rank1_residual"] == 0 and r["attention"]["spread"] == 0
              for r in rows[3:]), "attention alone, depths 3 … 8: %r" % rows[3:])
    check(rows[8]["addnorm"]["rank1_residual"] > 0.3, "addnorm at depth 8: %r" % rows[8])
    check("    2   8.58e-05   0.000203       8.74      0.833       8.33      0.834" in lines,
          "--depth 8: the row of depth 2:\n%s" % out)
    check("  attention              rank-1 0.878 → 0, spread 8.68 → 0:" in lines and
          "    the tokens collapse toward one vector" in lines, "--depth 8's summary:\n%s" % out)
    check(out.endswith("wrote %s: the rank-1 residual against the depth, 0 … 8, 900×375 px\n"
                       % plot), "--depth 8 --plot: %r" % out[-200:])
    check(png_info(plot)[:2] == (900, 375), "depth.png: %r" % (png_info(plot),))
    # rows of ones are one vector from the start
    rc, js, _ = run(["selfattn", "--depth", "2", "--fill", "ones", "--json", "-"])
    doc = json.loads(js)
    check(all(r[k]["rank1_residual"] == 0 for r in doc["depths"]
              for k in ("attention", "residual", "addnorm")), "--fill ones: %r" % doc["depths"])


def error_checks(tmp):
    expect(["selfattn", "--depth", "0"], 2,
           err=P + "--depth: expected an integer from 1 to 1000, got '0'")
    expect(["selfattn", "--depth", "1001"], 2,
           err=P + "--depth: expected an integer from 1 to 1000, got '1001'")
    expect(["selfattn", "--depth", "x"], 2,
           err=P + "--depth: expected an integer from 1 to 1000, got 'x'")
    expect(["selfattn", "--plot", "p.png"], 2,
           err=P + "--plot draws what --depth measures; give --depth N")
    takes = (" cannot be used with --depth, which applies one eval-mode layer again and "
             "again (it takes --input, --tokens, the sizes, --fill, --seed, --score, --bias, "
             "--causal, --posenc, --no-proj, --plot, --json, --font, --max-mem)")
    for opt in (["--valid-lens", "3,2"], ["--explain"], ["--png", "x.png"], ["--train"]):
        expect(["selfattn", "--depth", "2"] + opt, 2, err=P + opt[0] + takes)
    expect(["selfattn", "--depth", "2", "--permute"], 2,
           err=P + "--permute and --depth are two different demos; give one")
    expect(["selfattn", "--depth", "2", "--scale-sweep"], 2,
           err=P + "--depth cannot be used with --scale-sweep, which draws its own q and k "
           "(it takes --dims, --samples, --kv, --seed, --png, --json, --html, --font, "
             "--max-mem)")
    expect(["selfattn", "--depth", "3", "--tokens", "a b c|d e"], 1,
           err=P + "--depth measures every token, and valid_lens would leave padding among "
           "them: give sentences of one length or no valid_lens")
    narrow = write(tmp, "narrow.json", json.dumps({
        "X": [[1, 2, 3], [4, 5, 6]], "num_heads": 1,
        "state_dict": {"W_q.weight": [[1, 0, 0], [0, 1, 0]], "W_k.weight": [[1, 0, 0], [0, 1, 0]],
                       "W_v.weight": [[1, 0, 0], [0, 1, 0]], "W_o.weight": [[1, 0], [0, 1]]}}))
    expect(["selfattn", "--depth", "2", "--input", narrow], 1,
           err=P + "--depth feeds each layer's output (width num_hiddens 2) to the next, but X "
           "has width 3")
    expect(["selfattn", "--depth", "3", "--plot", "/nonexistent/x.png"], 1,
           err=P + "plot /nonexistent/x.png: cannot create: No such file or directory")
    expect(["multihead", "--depth", "2"], 2,
           err="attn multihead: unknown option '--depth' (see attn multihead --help)")
    # the same layer twice from a file: its X and weights
    rc, js, _ = run(["selfattn", "--depth", "2", "--batch", "1", "--queries", "3", "--hiddens",
                     "4", "--heads", "2", "--json", "-"])
    doc = json.loads(js)
    path = write(tmp, "run.json", json.dumps({k: doc[k] for k in ("X", "num_heads",
                                                                  "state_dict")}))
    rc2, js2, _ = run(["selfattn", "--depth", "2", "--input", path, "--json", "-"])
    check(rc == 0 and rc2 == 0 and json.loads(js)["depths"] == json.loads(js2)["depths"],
          "--depth 2 --input its own --json: other measures")


def group_selfattn_depth(tmp):
    value_checks()
    collapse_checks(tmp)
    error_checks(tmp)
