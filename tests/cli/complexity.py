"""Group complexity: attn complexity's table, JSON and figure against the
costs worked out here, and its errors."""
import json
import math
import os

from .common import check, expect, png_info, run


def cx_expect(n, d, k, r):
    """The figures of `attn complexity` for (n, d, k, r), worked out here by
    enumerating taps and keys and by the closed forms of the path lengths."""
    half = (k - 1) // 2
    taps = sum(1 for t in range(n) for j in range(k) if 0 <= t + j - half < n)
    keys = sum(1 for t in range(n) for s in range(n) if -((r - 1) // 2) <= s - t <= r // 2)
    layers = 0
    while k ** layers < n:
        layers += 1
    ceil_div = lambda a, b: -(-a // b)
    return {
        "convolution": (d * d * taps, ceil_div(n - 1, k - 1), 1),
        "recurrent": (n * (d * d + d * d), n - 1, n),
        "self_attention": (2 * n * n * d + 3 * n * d * d, 1 if n > 1 else 0, 1),
        "restricted_self_attention": (2 * d * keys + 3 * n * d * d, ceil_div(n - 1, r - 1), 1),
        "dilated_convolution": (d * d * taps, layers, 1),
    }


def cx_first_costlier(d, k, other, proj):
    """The first n from which self-attention costs more than the other
    layer, by brute force up to well past k·d."""
    def conv(n):
        half = (k - 1) // 2
        return d * d * sum(1 for t in range(n) for j in range(k) if 0 <= t + j - half < n)
    first = None
    for n in range(1, 4 * k * d + 8):
        attn = 2 * n * n * d + (3 * n * d * d if proj else 0)
        cost = 2 * n * d * d if other == "rnn" else conv(n)
        if attn > cost:
            first = first or n
        else:
            first = None
    return first


def cx_estimate(N, d, k, n=100):
    """--max-mem's estimate: the --measure buffers at the largest n (X, Y with
    h_0, Q, K, V, the N×N weights, every weight and bias) and 3·n bytes of
    path sets, in the format of cli_format_bytes."""
    floats = 5 * N * d + d + N * N + d * d * (k + 5) + 2 * d
    b = 4 * floats + 3 * n
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while b >= 1024 and u + 1 < len(units):
        b /= 1024
        u += 1
    return "%.3g %s" % (b, units[u])


def group_complexity(tmp):
    C = "attn complexity: "
    expect(["complexity", "--help"], 0, err="",
           out_has=["usage: attn complexity", "Examples:", "--measure", "n = 100"])
    # the default table: the counts of these layers, worked by hand
    # (n = 100, d = 512, k = 3: 298 taps in range; r = 9: 880 keys in the windows)
    expect(["complexity"], 0, err="",
           out_has=["O(k·n·d²)     78,118,912", "O(n·d²)       52,428,800",
                    "O(n²·d)       88,883,200", "O(r·n·d)      79,544,320",
                    "512²·298 = 78,118,912", "k·n·d² = 78,643,200",
                    "n²·d + n²·d = 10,240,000", "2·512·880 = 901,120",
                    "50 layers", "99 steps", "13 layers", "⌈log_3 n⌉ = 5",
                    "n > d: n >= 513", "n > k·d: n >= 1537",
                    "QKᵀ and A·V only: n >= 768"])
    # every count and path length against the enumeration above
    for n, d, k, r in [(100, 512, 3, 9), (5, 2, 3, 3), (9, 4, 3, 2), (17, 3, 5, 4),
                       (1, 3, 3, 2), (10, 8, 4, 5), (28, 2, 3, 9), (12, 5, 2, 30)]:
        args = ["complexity", "--n", str(n), "--d", str(d), "--k", str(k), "--r", str(r),
                "--json", "-"]
        rc, out, _ = expect(args, 0, err="")
        doc = json.loads(out)
        check(doc["command"] == "complexity" and [doc["n"], doc["d"], doc["k"], doc["r"]] ==
              [n, d, k, r] and doc["measure"] is None, "%s: JSON header" % args)
        want = cx_expect(n, d, k, r)
        got = {l["layer"]: (l["multiply_adds"], l["path_measured"],
                            l["sequential_operations_value"]) for l in doc["layers"]}
        check(got == want, "n=%d d=%d k=%d r=%d: counts, paths, sequential ops %r, want %r"
              % (n, d, k, r, got, want))
        check(all(l["path_formula_value"] == l["path_measured"] for l in doc["layers"]),
              "n=%d k=%d: measured path lengths equal the formulas" % (n, k))
        sa = doc["layers"][2]
        check(sa["multiply_adds_without_projections"] == 2 * n * n * d and
              sa["projection_multiply_adds"] == 3 * n * d * d, "self-attention's two parts")
    # the chapter's figure and the cases: x_1 and x_n connected after
    for n, k, layers in [(5, 3, 2), (9, 3, 4), (17, 5, 4), (2, 3, 1), (5, 2, 4)]:
        doc = json.loads(run(["complexity", "--n", str(n), "--k", str(k), "--json", "-"])[1])
        check(doc["layers"][0]["path_measured"] == layers,
              "convolution k=%d, n=%d: %d layers" % (k, n, layers))
    rc, out, _ = expect(["complexity", "--n", "5"], 0,
                        out_has=["convolution, k = 3            2 layers",
                                 "recurrent (tanh)              4 steps",
                                 "self-attention                1 layer "])
    # where self-attention becomes costlier, against brute force
    for d, k in [(8, 3), (5, 4), (3, 7)]:
        doc = json.loads(run(["complexity", "--d", str(d), "--k", str(k), "--json", "-"])[1])
        c = doc["self_attention_costlier"]
        got = [c["than_recurrent"]["big_o_n"], c["than_recurrent"]["exact_without_projections_n"],
               c["than_recurrent"]["exact_with_projections_n"], c["than_convolution"]["big_o_n"],
               c["than_convolution"]["exact_without_projections_n"],
               c["than_convolution"]["exact_with_projections_n"]]
        want = [d + 1, cx_first_costlier(d, k, "rnn", False), cx_first_costlier(d, k, "rnn", True),
                k * d + 1, cx_first_costlier(d, k, "conv", False),
                cx_first_costlier(d, k, "conv", True)]
        check(got == want, "d=%d k=%d: crossovers %r, want %r" % (d, k, got, want))
    # without --measure the JSON is the same every run
    check(run(["complexity", "--json", "-"])[1] == run(["complexity", "--json", "-"])[1],
          "complexity JSON is deterministic")

    # bad input: each refused with its reason, before any work
    expect(["complexity", "--n", "0"], 2,
           err=C + "--n: expected an integer from 1 to 1000000, got '0'")
    expect(["complexity", "--k", "1"], 2,
           err=C + "--k 1: a kernel of one position never connects two positions (output t "
                   "reads only input t), so no stack of layers ever connects x_1 and x_n; use "
                   "--k 2 or more")
    expect(["complexity", "--r", "1"], 2,
           err=C + "--r 1: a window of one position lets each query see only itself, so no "
                   "stack of layers ever connects x_1 and x_n; use --r 2 or more")
    expect(["complexity", "--k", "0"], 2,
           err=C + "--k: expected an integer from 2 to 1000, got '0'")
    expect(["complexity", "--k", "1001"], 2,
           err=C + "--k: expected an integer from 2 to 1000, got '1001'")
    expect(["complexity", "--d", "65537"], 2,
           err=C + "--d: expected an integer from 1 to 65536, got '65537'")
    expect(["complexity", "--measure", "--sweep", "4096:64"], 2,
           err=C + "--sweep: FROM must be less than TO, got '4096:64'")
    expect(["complexity", "--measure", "--sweep", "64:64"], 2,
           err=C + "--sweep: FROM must be less than TO, got '64:64'")
    for bad in ["64", "64:", ":64", ""]:
        expect(["complexity", "--measure", "--sweep", bad], 2,
               err=C + "--sweep: expected FROM:TO like 64:4096, got '%s'" % bad)
    expect(["complexity", "--measure", "--sweep", "0:64"], 2,
           err=C + "--sweep: expected an integer from 1 to 1000000, got '0'")
    expect(["complexity", "--sweep", "64:128"], 2,
           err=C + "--sweep is for --measure, which is not given")
    expect(["complexity", "--png", os.path.join(tmp, "x.png")], 2,
           err=C + "--png is for --measure, which is not given")
    expect(["complexity", "--measure", "--clock", "sundial"], 2,
           err=C + "--clock: expected cpu or wall, got 'sundial'")
    expect(["complexity", "--measure", "--reps", "0"], 2,
           err=C + "--reps: expected an integer from 1 to 101, got '0'")
    expect(["complexity", "--n", "5", "--n", "6"], 2, err=C + "option '--n' given twice")
    expect(["complexity", "--frob"], 2,
           err=C + "unknown option '--frob' (see attn complexity --help)")
    expect(["complexity", "--n"], 2, err=C + "option '--n' needs a value")
    expect(["complexity", "extra"], 2,
           err=C + "unexpected argument 'extra' (see attn complexity --help)")
    # buffers beyond --max-mem: refused up front with the estimate, no file written
    png = os.path.join(tmp, "refused.png")
    expect(["complexity", "--measure", "--sweep", "64:65536", "--png", png], 1,
           err=C + "--measure --sweep 64:65536 --measure-dim 64 needs about %s, more than "
                   "--max-mem 4 GiB" % cx_estimate(65536, 64, 3))
    check(not os.path.exists(png), "a refused run writes no PNG")
    expect(["complexity", "--measure", "--max-mem", "1M"], 1,
           err=C + "--measure --sweep 64:4096 --measure-dim 64 needs about %s, more than "
                   "--max-mem 1 MiB" % cx_estimate(4096, 64, 3))
    expect(["complexity", "--n", "1000000", "--max-mem", "1M"], 1,
           err=C + "--n 1000000 needs about 2.86 MiB, more than --max-mem 1 MiB")

    # a tiny measured sweep: its structure and counts (never its timings)
    jpath, ppath = os.path.join(tmp, "cx.json"), os.path.join(tmp, "cx.png")
    rc, out, _ = expect(["complexity", "--measure", "--sweep", "5:12", "--measure-dim", "4",
                         "--reps", "3", "--k", "3", "--r", "2", "--json", jpath, "--png", ppath],
                        0, err="",
                        out_has=["Growth exponent in n", "over n = 10 … 12",
                                 "wrote %s: table, path lengths, crossovers and measurements"
                                 % jpath,
                                 "wrote %s: time against n, log-log, 4 layers, 900×600 px"
                                 % ppath])
    m = json.load(open(jpath))["measure"]
    check(m["n"] == [5, 10, 12] and m["fit_n"] == [10, 12] and m["d"] == 4 and m["reps"] == 3
          and m["clock"] == "cpu", "measure header: sweep 5, 10, 12; fit on 10, 12")
    names = ["convolution", "recurrent", "self_attention", "restricted_self_attention"]
    check([l["layer"] for l in m["layers"]] == names, "measured layers")
    for l in m["layers"]:
        want = [cx_expect(n, 4, 3, 2)[l["layer"]][0] for n in m["n"]]
        check(l["multiply_adds"] == want, "%s: multiply-adds %r, want %r"
              % (l["layer"], l["multiply_adds"], want))
        slope = math.log(want[2] / want[1]) / math.log(12 / 10)
        check(abs(l["count_slope"] - slope) < 1e-12, "%s: count slope %r, want %r"
              % (l["layer"], l["count_slope"], slope))
        check(l["seconds"] == l["cpu_seconds"] and len(l["wall_seconds"]) == 3 and
              all(s > 0 for s in l["seconds"] + l["wall_seconds"]), "%s: times" % l["layer"])
        check(all(isinstance(l[s], (int, float)) for s in ["slope", "cpu_slope", "wall_slope"]),
              "%s: fitted slopes are numbers" % l["layer"])
    check([l["theory"] for l in m["layers"]] == [1, 1, 2, 1], "theory exponents")
    w, h, ctype = png_info(ppath)
    check((w, h, ctype) == (900, 600, 2), "log-log PNG 900x600 RGB (%dx%d)" % (w, h))
    # --json - keeps stdout pure JSON; the report of the PNG goes to stderr
    rc, out, errtext = expect(["complexity", "--measure", "--sweep", "2:4", "--measure-dim", "2",
                               "--reps", "1", "--clock", "wall", "--json", "-", "--png", ppath], 0)
    doc = json.loads(out)
    check(doc["measure"]["clock"] == "wall" and
          doc["measure"]["layers"][0]["seconds"] == doc["measure"]["layers"][0]["wall_seconds"],
          "--clock wall chooses the seconds shown")
    check(errtext.startswith("wrote %s" % ppath), "with --json -, reports go to stderr")
    # n = 1: nothing to connect
    doc = json.loads(run(["complexity", "--n", "1", "--json", "-"])[1])
    check(all(l["path_measured"] == 0 for l in doc["layers"]), "n = 1: every path is 0 steps")
