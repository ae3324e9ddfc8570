"""Group demos_attention: attn selfattn --permute (order blindness) and
--scale-sweep (why divide by √d)."""
import json
import math
import os
import struct

from .common import check, expect, heavy, need_cjk_font, png_info, run


def demo_rng_normals(seed, d, count):
    """attention_demos.c's q then k for one d, worked out here: SplitMix64
    seeded with seed ^ (0x9e3779b97f4a7c15 · d), Marsaglia's polar method,
    each number rounded to float32."""
    M = (1 << 64) - 1
    state = [(seed ^ (0x9e3779b97f4a7c15 * d)) & M]

    def uniform():
        state[0] = (state[0] + 0x9e3779b97f4a7c15) & M
        z = state[0]
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
        return ((z ^ (z >> 31)) >> 11) * 2.0 ** -53

    f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
    out = []
    for half in range(2):                       # q, then k
        xs = []
        while len(xs) < count:
            while True:
                u, v = 2 * uniform() - 1, 2 * uniform() - 1
                s = u * u + v * v
                if 0 < s < 1:
                    break
            f = math.sqrt(-2 * math.log(s) / s)
            xs += [f32(u * f), f32(v * f)]
        out.append(xs[:count])
    return out


def demo_sweep_expect(seed, d, S, n):
    """The six statistics of one d of --scale-sweep, from the formulas:
    row r's softmax over q_r·k_j, j = r … r+n−1 (mod S); variances over all
    S·n scores (divided by S·n − 1)."""
    qs, ks = demo_rng_normals(seed, d, S * d)
    q = [qs[r * d:(r + 1) * d] for r in range(S)]
    k = [ks[r * d:(r + 1) * d] for r in range(S)]
    stats = {}
    for name, c in (("raw", 1.0), ("scaled", 1 / math.sqrt(d))):
        scores, peak, ent = [], 0.0, 0.0
        for r in range(S):
            row = [c * sum(a * b for a, b in zip(q[r], k[(r + j) % S])) for j in range(n)]
            scores += row
            e = [math.exp(x - max(row)) for x in row]
            w = [x / sum(e) for x in e]
            peak += max(w)
            ent -= sum(x * math.log(x) for x in w if x > 0)
        mean = sum(scores) / len(scores)
        stats["var_" + name] = sum((x - mean) ** 2 for x in scores) / (len(scores) - 1)
        stats["max_weight_" + name] = peak / S
        stats["entropy_" + name] = ent / S
    return stats


def group_demos_attention(tmp):
    """attn selfattn --permute (order blindness) and --scale-sweep (why
    divide by √d): the printed numbers, the JSON against values worked out
    here, exact errors and exit codes, the figures."""
    need_cjk_font()
    S = "attn selfattn: "

    def printed(out, start):
        """The number after the first ': ' of the line starting with start."""
        lines = [l for l in out.splitlines() if l.startswith(start)]
        check(len(lines) == 1, "one line starts with %r" % start)
        return float(lines[0].split(": ", 1)[1].split()[0]) if lines else float("nan")

    def perm_line(out):
        line = [l for l in out.splitlines() if l.startswith("π = [")][0]
        return [int(x) for x in line[5:line.index("]")].split(", ")]

    def is_perm(p, n):
        return sorted(p) == list(range(n))

    # ---- --permute: order blindness, without and with positional encoding
    rc, out, _ = expect(["selfattn", "--permute"], 0, err="",
                        out_has=["Order blindness (--permute): X (2, 4, 100), standard normal "
                                 "(--fill random, --permute's default: rows of ones are all "
                                 "alike)\n", "the same layer on X and on π·X: num_hiddens 100 = "
                                 "5 heads × 20, scaled dot-product, fast loops\n",
                                 "no positional encoding\n",
                                 "Equal up to float32 rounding"])
    p = perm_line(out)
    check(is_perm(p, 4) and p != [0, 1, 2, 3], "π is a permutation of 0 … 3, not the "
          "identity: %s" % p)
    dout, dw = printed(out, "largest |f(π·X) − π·f(X)|"), printed(out, "largest |A(π·X) − π·A(X)·πᵀ|")
    check(dout < 1e-5 and dw < 1e-5, "without posenc the differences are rounding (%g, %g)"
          % (dout, dw))
    rc, out2, _ = expect(["selfattn", "--permute", "--posenc"], 0, err="",
                         out_has=["positional encoding P added after permuting",
                                  "Not equal: with the encoding"])
    check(perm_line(out2) == p, "--posenc draws the same π from the same --seed")
    dout = printed(out2, "largest |f(π·X + P) − π·f(X + P)|")
    dw = printed(out2, "largest |A(π·X + P) − π·A(X + P)·πᵀ|")
    check(dout > 1e-2 and dw > 1e-2, "with posenc the differences are clearly not zero "
          "(%g, %g)" % (dout, dw))
    # the reference loops, additive scoring and biases are blind to order too
    for extra in [["--naive"], ["--score", "additive", "--bias"], ["--no-proj"]]:
        rc, out3, _ = expect(["selfattn", "--permute", "--batch", "3", "--queries", "9",
                              "--hiddens", "12", "--heads", "3"] + extra, 0, err="")
        check(printed(out3, "largest |f(π·X) − π·f(X)|") < 1e-5 and
              printed(out3, "largest |A(π·X) − π·A(X)·πᵀ|") < 1e-5,
              "%s: without posenc the differences are rounding" % extra)
    # inputs of ones: nothing moves at all
    rc, out3, _ = expect(["selfattn", "--permute", "--fill", "ones"], 0, err="",
                         out_has=["Order blindness (--permute): X (2, 4, 100), ones\n",
                                  "Equal: the rows of X are all alike"])
    check(printed(out3, "largest |f(π·X) − π·f(X)|") == 0, "ones: exactly no difference")

    # ---- --json: the fields, and both runs recomputed from them here
    rc, out, _ = expect(["selfattn", "--permute", "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(doc["command"] == "selfattn" and doc["demo"] == "permute" and doc["posenc"] is False
          and doc["shape"] == [2, 4, 100] and doc["num_heads"] == 5 and doc["seed"] == 0,
          "--permute JSON header")
    P = doc["permutation"]
    check(P == p, "the JSON's permutation is the printed π")
    O, Op = doc["output"], doc["output_permuted"]
    W, Wp = doc["attention_weights"], doc["attention_weights_permuted"]
    want = max(abs(Op[b][i][c] - O[b][P[i]][c]) for b in range(2) for i in range(4)
               for c in range(100))
    check(abs(doc["max_output_diff"] - want) <= 1e-9 + 1e-6 * want and want < 1e-5,
          "max_output_diff is max |f(π·X) − π·f(X)| (%g, here %g)" % (doc["max_output_diff"], want))
    want = max(abs(Wp[b][h][i][j] - W[b][h][P[i]][P[j]]) for b in range(2) for h in range(5)
               for i in range(4) for j in range(4))
    check(abs(doc["max_weight_diff"] - want) <= 1e-9 + 1e-6 * want and want < 1e-5,
          "max_weight_diff is max |A(π·X) − π·A(X)·πᵀ| (%g, here %g)" % (doc["max_weight_diff"], want))
    check(all(abs(sum(r) - 1) < 1e-6 for b in Wp for h in b for r in h),
          "every row of A(π·X) sums to 1")

    # --no-proj: f(X) = softmax(X Xᵀ/√d) X, computed here for X and π·X, with P added
    # after permuting (X from the plain run with the same seed and options)
    base = ["--no-proj", "--hiddens", "6", "--heads", "1", "--queries", "5", "--batch", "1",
            "--seed", "11"]
    X = json.loads(run(["selfattn", "--fill", "random", "--valid-lens", "none", "--json", "-"]
                       + base)[1])["X"][0]

    def attend(Z):
        out = []
        for zq in Z:
            s = [sum(a * b for a, b in zip(zq, zk)) / math.sqrt(6) for zk in Z]
            e = [math.exp(x - max(s)) for x in s]
            out.append([sum(e[k] / sum(e) * Z[k][c] for k in range(5)) for c in range(6)])
        return out

    for posenc in [False, True]:
        rc, out, _ = expect(["selfattn", "--permute", "--permutation", "4,2,0,1,3", "--json",
                             "-"] + base + (["--posenc"] if posenc else []), 0, err="")
        doc = json.loads(out)
        pe = [[(math.sin(i / 10000 ** (2 * (c // 2) / 6)) if c % 2 == 0 else
                math.cos(i / 10000 ** (2 * (c // 2) / 6))) if posenc else 0.0
               for c in range(6)] for i in range(5)]
        perm = [4, 2, 0, 1, 3]
        f = attend([[X[i][c] + pe[i][c] for c in range(6)] for i in range(5)])
        fp = attend([[X[perm[i]][c] + pe[i][c] for c in range(6)] for i in range(5)])
        worst = max(max(abs(doc["output"][0][i][c] - f[i][c]),
                        abs(doc["output_permuted"][0][i][c] - fp[i][c]))
                    for i in range(5) for c in range(6))
        check(worst < 1e-5, "--no-proj%s: f(X) and f(π·X) as computed here (worst %g)"
              % (" --posenc" if posenc else "", worst))
        want = max(abs(fp[i][c] - f[perm[i]][c]) for i in range(5) for c in range(6))
        check(abs(doc["max_output_diff"] - want) < 1e-5 and
              (want > 1e-2 if posenc else want < 1e-9),
              "--no-proj%s: max_output_diff %g, here %g" % (" --posenc" if posenc else "",
                                                         doc["max_output_diff"], want))
        check(doc["permutation"] == perm and doc["posenc"] is posenc,
              "--permutation is used as given")

    # tokens: the labels move with the rows
    zh = ["--tokens", "我 爱 吃 苹果", "--hiddens", "16", "--heads", "2"]
    expect(["selfattn", "--permute", "--permutation", "3,0,2,1"] + zh, 0, err="",
           out_has=["Order blindness (--permute): X (1, 4, 16), token embeddings\n",
                    "π = [3, 0, 2, 1] (--permutation): row i of π·X is row π[i] of X\n",
                    "tokens: 我 爱 吃 苹果  →  π·X: 苹果 我 吃 爱\n"])
    doc = json.loads(run(["selfattn", "--permute", "--permutation", "3,0,2,1", "--json", "-"]
                         + zh)[1])
    check(doc["tokens"] == [["我", "爱", "吃", "苹果"]] and
          doc["permuted_tokens"] == [["苹果", "我", "吃", "爱"]] and
          doc["inputs"] == "token embeddings", "--tokens: labels permuted in the JSON")
    # the same seed, the same bytes; another seed, another π
    a = run(["selfattn", "--permute", "--queries", "8", "--json", "-"])[1]
    b = run(["selfattn", "--permute", "--queries", "8", "--json", "-"])[1]
    c = run(["selfattn", "--permute", "--queries", "8", "--seed", "1", "--json", "-"])[1]
    check(a == b and json.loads(a)["permutation"] != json.loads(c)["permutation"],
          "--seed makes --permute reproducible and chooses π")
    check(is_perm(json.loads(a)["permutation"], 8), "π of 8 positions is a permutation")
    # --input: a file without valid_lens
    x_path = os.path.join(tmp, "x.json")
    with open(x_path, "w") as fh:
        json.dump({"X": X, "num_heads": 2}, fh)
    rc, out, _ = expect(["selfattn", "--permute", "--input", x_path], 0, err="",
                        out_has=["X (1, 5, 6), from the file\n"])
    check(printed(out, "largest |f(π·X) − π·f(X)|") < 1e-5, "--input: equal up to rounding")

    # ---- --permute --png: three panels side by side, with and without posenc
    for extra, name in [([], "perm.png"), (["--posenc"], "perm_pe.png"),
                        (zh + ["--posenc"], "perm_zh.png")]:
        png = os.path.join(tmp, name)
        rc, out, _ = expect(["selfattn", "--permute", "--png", png] + extra, 0, err="",
                            out_has=["wrote %s: π·A·πᵀ, A(π·X) and their difference, example 0, "
                                     "head 1" % png, "largest |A("])
        w, h, ctype = png_info(png)
        check(ctype == 2 and 600 <= w <= 2000 and 200 <= h <= 800 and w > 2 * h,
              "%s: three panels in a row (%dx%d)" % (name, w, h))
    both = os.path.join(tmp, "both.json")
    expect(["selfattn", "--permute", "--png", png, "--json", both], 0, err="",
           out_has=["wrote %s: the permutation, both runs and their differences" % both])
    check(json.load(open(both))["demo"] == "permute", "--json FILE with --png")

    # ---- --permute: errors
    for args, code, msg in [
        (["--permute", "--scale-sweep"], 2,
         "--permute and --scale-sweep are two different demos; give one"),
        (["--permutation", "1,0"], 2, "--permutation is for --permute"),
        (["--permute", "--causal"], 2,
         "--causal cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--stream"], 2,
         "--stream cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--train"], 2,
         "--train cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--explain"], 2,
         "--explain cannot be used with --permute, which compares two plain eval-mode runs of "
         "the layer"),
        (["--permute", "--permutation", "3,0,2"], 2,
         "--permutation: has 3 positions, but the sequence has 4 (a permutation of 0 … 3; 1 is "
         "missing)"),
        (["--permute", "--permutation", "3,0,2,4"], 2,
         "--permutation: 4 is not a position of the sequence of 4 (0 … 3)"),
        (["--permute", "--permutation", "3,0,2,2"], 2,
         "--permutation: 2 appears twice (a permutation lists each of 0 … 3 once)"),
        (["--permute", "--permutation", "3,0,2,1,4"], 2,
         "--permutation: has more than 4 positions, but the sequence has 4 (a permutation of "
         "0 … 3)"),
        (["--permute", "--permutation", "3,x,2,1"], 2,
         "--permutation: expected positions separated by commas, like 3,0,2,1, got '3,x,2,1'"),
        (["--permute", "--queries", "1"], 2,
         "--permute: a sequence of one position has no other order (give --queries 2 or more)"),
        (["--permute", "--valid-lens", "3,2"], 2,
         "--permute: valid_len 3 (from --valid-lens) is shorter than the sequence of 4: padding "
         "does not move with the tokens, so every valid_len must cover the sequence"),
        (["--permute", "--tokens", "a b c | d e"], 2,
         "--permute: valid_len 2 (the length of a shorter --tokens sentence) is shorter than "
         "the sequence of 3: padding does not move with the tokens, so every valid_len must "
         "cover the sequence"),
        (["--permute", "--queries", "3000", "--hiddens", "64", "--heads", "8", "--batch", "4",
          "--max-mem", "300M"], 1,
         "--permute (two runs of batch 4 × 8 heads × 3000 queries × 3000 keys) needs about "
         "2.26 GiB, more than --max-mem 300 MiB"),
    ]:
        expect(["selfattn"] + args, code, err=S + msg)
    expect(["selfattn", "--permute", "--valid-lens", "4,5"], 0, err="")  # lengths that cover
    lens_path = os.path.join(tmp, "lens.json")
    with open(lens_path, "w") as fh:
        json.dump({"X": X, "num_heads": 2, "valid_lens": [3]}, fh)
    expect(["selfattn", "--permute", "--input", lens_path], 2,
           err=S + "--permute: valid_len 3 (from the file's valid_lens) is shorter than the "
                   "sequence of 5: padding does not move with the tokens, so every valid_len "
                   "must cover the sequence")
    bad = os.path.join(tmp, "bad.png")
    expect(["selfattn", "--permute", "--permutation", "0,0,1,2", "--png", bad], 2)
    check(not os.path.exists(bad), "a refused --permute writes no figure")

    # ---- --scale-sweep: the default sweep, printed and as JSON
    if not heavy("the default --scale-sweep (d = 1 … 1024, 10000 samples)"):
        rc, out, _ = expect(["selfattn", "--scale-sweep"], 0, err="",
                            out_has=["Why divide by √d (--scale-sweep)",
                                     "10000 samples per d (--samples), softmax over n = 16 keys",
                                     "softmax(QKᵀ/√d)·V.\n"])
        table = [l for l in out.splitlines() if len(l.split()) == 7 and l.split()[0].isdigit()]
        rows = [l.split() for l in table]
        check([int(r[0]) for r in rows] == [2 ** i for i in range(11)], "a row per d = 1 … 1024")
        head = [l for l in out.splitlines() if l.strip().startswith("d ")]
        check(len(head) == 1 and head[0].split() == ["d", "q·k", "q·k/√d", "q·k", "q·k/√d",
                                                     "q·k", "q·k/√d"], "the table's header line")
        for r in rows:
            d, vr, vs, mr, ms, er, es = int(r[0]), *map(float, r[1:])
            check(abs(vr - d) <= 0.1 * d and abs(vs - 1) <= 0.1,
                  "d = %d: var(q·k) %g ≈ d, var(q·k/√d) %g ≈ 1" % (d, vr, vs))
            check(0.15 < ms < 0.35 and 2.1 < es < 2.6,
                  "d = %d: scaled softmax keeps its shape (%g, %g)" % (d, ms, es))
        check(float(rows[-1][3]) > 0.9 and float(rows[-1][5]) < 0.2,
              "d = 1024: the raw softmax is near one-hot (%s, %s)" % (rows[-1][3], rows[-1][5]))
        # aligned: every row as long as the header line
        check(len({len(l) for l in head + table}) == 1,
              "the table's columns are aligned")
        jpath = os.path.join(tmp, "sweep.json")
        png = os.path.join(tmp, "sweep.png")
        rc, out, _ = expect(["selfattn", "--scale-sweep", "--json", jpath, "--png", png], 0,
                            err="", out_has=["wrote %s: variances, largest weights and entropies "
                                             "against d" % jpath,
                                             "wrote %s: the softmax's largest weight and the "
                                             "variance of the scores against d, " % png])
        doc = json.load(open(jpath))
        check(doc["command"] == "selfattn" and doc["demo"] == "scale-sweep" and
              doc["dims"] == [2 ** i for i in range(11)] and doc["samples"] == 10000 and
              doc["keys"] == 16 and doc["seed"] == 0, "--scale-sweep JSON header")
        for key in ["var_raw", "var_scaled", "max_weight_raw", "max_weight_scaled",
                    "entropy_raw", "entropy_scaled"]:
            check(len(doc[key]) == 11, "%s has one number per d" % key)
        for i, d in enumerate(doc["dims"]):
            vr, vs = doc["var_raw"][i], doc["var_scaled"][i]
            check(abs(vr - d) <= 0.1 * d and abs(vs - 1) <= 0.1 and
                  abs(vr - d * vs) <= 1e-6 * vr, "JSON d = %d: variances %g, %g" % (d, vr, vs))
            check(abs(doc["max_weight_raw"][i] - float(rows[i][3])) < 1e-4,
                  "JSON and table agree at d = %d" % d)
        check(doc["max_weight_raw"][-1] > 0.9 and doc["entropy_raw"][-1] < 0.2 and
              doc["max_weight_raw"][0] == doc["max_weight_scaled"][0],
              "JSON: one-hot at d = 1024, the two alike at d = 1")
        w, h, ctype = png_info(png)
        check(ctype == 2 and w == 900 and 600 <= h <= 1000, "sweep PNG: two plots stacked "
              "(%dx%d)" % (w, h))

    # a small sweep recomputed entirely here: the same numbers to 1e-6
    small = ["--samples", "40", "--kv", "5", "--dims", "1:8", "--seed", "3"]
    rc, out, _ = expect(["selfattn", "--scale-sweep", "--json", "-"] + small, 0, err="")
    doc = json.loads(out)
    check(doc["dims"] == [1, 2, 4, 8] and doc["samples"] == 40 and doc["keys"] == 5 and
          doc["seed"] == 3, "small sweep: header")
    for i, d in enumerate(doc["dims"]):
        want = demo_sweep_expect(3, d, 40, 5)
        worst = max(abs(doc[k][i] - v) / max(1.0, abs(v)) for k, v in want.items())
        check(worst < 1e-6, "d = %d: every statistic as computed here (worst %g)" % (d, worst))
    # --kv changes the softmax, not the variance's law; --dims a single d
    doc = json.loads(run(["selfattn", "--scale-sweep", "--kv", "4", "--samples", "4000",
                          "--dims", "16:16", "--json", "-"])[1])
    check(doc["dims"] == [16] and 0.25 < doc["max_weight_scaled"][0] < doc["max_weight_raw"][0]
          and doc["entropy_scaled"][0] < math.log(4), "--kv 4 --dims 16:16: %s" % doc)
    png = os.path.join(tmp, "one.png")
    expect(["selfattn", "--scale-sweep", "--dims", "4:4", "--samples", "100", "--png", png], 0,
           err="")
    png_info(png)

    # ---- --scale-sweep: errors
    takes = ("(it takes --dims, --samples, --kv, --seed, --png, --json, --html, --font, "
             "--max-mem)")
    for args, code, msg in [
        (["--scale-sweep", "--hiddens", "8"], 2,
         "--hiddens cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--scale-sweep", "--input", "x.json"], 2,
         "--input cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--scale-sweep", "--posenc"], 2,
         "--posenc cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--scale-sweep", "--tokens", "a b"], 2,
         "--tokens cannot be used with --scale-sweep, which draws its own q and k " + takes),
        (["--dims", "1:8"], 2, "--dims is for --scale-sweep"),
        (["--samples", "10"], 2, "--samples is for --scale-sweep"),
        (["--kv", "3"], 2,
         "--kv is for --scale-sweep (in self-attention the keys are the queries: --queries)"),
        (["--scale-sweep", "--dims", "3:8"], 2,
         "--dims: 3 is not a power of two (1, 2, 4, …, 1048576)"),
        (["--scale-sweep", "--dims", "8:2"], 2, "--dims: FROM must not exceed TO, got '8:2'"),
        (["--scale-sweep", "--dims", "1024"], 2,
         "--dims: expected FROM:TO like 1:1024 (powers of two), got '1024'"),
        (["--scale-sweep", "--dims", "0:8"], 2,
         "--dims: expected an integer from 1 to 1048576, got '0'"),
        (["--scale-sweep", "--kv", "1"], 2,
         "--kv: a softmax over one key is always 1; --scale-sweep needs 2 or more keys"),
        (["--scale-sweep", "--kv", "20", "--samples", "10"], 2,
         "--kv 20 needs at least as many --samples, got 10: each softmax row takes --kv "
         "different keys from the samples"),
        (["--scale-sweep", "--samples", "1"], 2,
         "--samples: expected an integer from 2 to 100000000, got '1'"),
        (["--scale-sweep", "--max-mem", "1M"], 1,
         "--scale-sweep --samples 10000 --dims 1:1024 needs about 78.1 MiB, more than "
         "--max-mem 1 MiB"),
        (["--scale-sweep", "--samples", "100000000", "--dims", "1:1048576"], 1,
         "--scale-sweep --samples 100000000 --dims 1:1048576 needs about 763 TiB, more than "
         "--max-mem 4 GiB"),
    ]:
        expect(["selfattn"] + args, code, err=S + msg)
    # --color (which attn tour passes to every step) is accepted, and changes nothing
    for demo in [["--permute"], ["--scale-sweep", "--dims", "1:2", "--samples", "20"]]:
        plain = run(["selfattn"] + demo)[1]
        expect(["selfattn"] + demo + ["--color", "always"], 0, err="")
        check(run(["selfattn"] + demo + ["--color", "always"])[1] == plain,
              "%s --color always prints the same" % demo[0])
    bad = os.path.join(tmp, "sweep_bad.png")
    expect(["selfattn", "--scale-sweep", "--max-mem", "1K", "--png", bad], 1)
    check(not os.path.exists(bad), "a refused sweep writes no figure")
    expect(["selfattn", "--help"], 0, err="",
           out_has=["      --permute            demo: order blindness (below)\n",
                    "      --scale-sweep        demo: why the scores are divided by √d (below)\n",
                    "Order blindness (--permute).", "Why divide by √d (--scale-sweep).",
                    "  attn selfattn --permute --tokens", "  attn selfattn --scale-sweep --png"])
