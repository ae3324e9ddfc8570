"""Group pool_exercises: the exercises of zh 10.2 and d2l.ai 11.2 on attn
pool (SPEC §15): --n-train LIST, the learned w as a width, --sigma auto,
--method additive, --keep-self, --kernels-png; each output checked against
values computed here from the formulas (or from attn's own single runs),
and every bad input with its exit code and exact message."""
import json
import os

from .common import check, expect

P = "attn pool: "


def mse(yhat, truth):
    """The mean squared error over the test inputs that have a prediction."""
    pairs = [(a, b) for a, b in zip(yhat, truth) if a is not None]
    return sum((a - b) ** 2 for a, b in pairs) / len(pairs) if pairs else None


def near(a, b, tol=1e-6):
    return abs(a - b) <= tol * (1 + abs(b))


def pool_json(args):
    return json.loads(expect(["pool"] + args + ["--json", "-"], 0, err="")[1])


def n_train_lists(tmp):
    # one size: today's output, byte for byte
    check(expect(["pool", "--n-train", "50"], 0)[1] == expect(["pool"], 0)[1],
          "--n-train 50 is the default run")
    check(expect(["pool", "--n-train", "20", "--json", "-"], 0)[1]
          == expect(["pool", "--n-train=20", "--json", "-"], 0)[1], "one size: --json as before")
    sizes = [10, 20, 50, 100, 200]
    rc, out, _ = expect(["pool", "--n-train", "10,20,50,100,200"], 0, err="",
                        out_has=["MSE against the truth on the 50 test inputs, by training-set "
                                 "size:", "n_train     average  gaussian, σ = 1  parametric"
                                 "     learned w  σ = 1/|w|\n"])
    rows = [l.split() for l in out.splitlines() if l.strip().split(" ")[0].isdigit()]
    check([int(r[0]) for r in rows] == sizes, "a row per size, in order: %r" % rows)
    doc = pool_json(["--n-train", "10,20,50,100,200", "--seed", "3"])
    check(doc["n_train"] == sizes and len(doc["x_test"]) == 50
          and [r["method"] for r in doc["results"]] == ["average", "nonparametric", "parametric"],
          "the sweep's document")
    # each size is the single run of that size: its MSE recomputed here from
    # that run's predictions and truth
    for s, n in enumerate(sizes):
        one = pool_json(["--n-train", str(n), "--seed", "3"])
        check(one["x_test"] == doc["x_test"] and one["y_truth"] == doc["y_truth"],
              "the same test inputs for n = %d" % n)
        for k, r in enumerate(one["results"]):
            want = mse(r["y_hat"], one["y_truth"])
            check(near(doc["results"][k]["mse"][s], want, 1e-7),
                  "n = %d, %s: MSE %r, by hand %r" % (n, r["method"], doc["results"][k]["mse"][s],
                                                      want))
        p = one["results"][2]
        check(doc["results"][2]["w"][s] == p["w"] and doc["results"][2]["w_init"][s] == p["w_init"],
              "n = %d: the learned w of the single run" % n)
    # the table prints the document's numbers
    out = expect(["pool", "--n-train", "10,20,50,100,200", "--seed", "3"], 0)[1]
    rows = [l.split() for l in out.splitlines() if l.strip().split(" ")[0].isdigit()]
    for s in range(5):
        check(all(abs(float(rows[s][1 + k]) - doc["results"][k]["mse"][s]) < 5e-7
                  for k in range(3)), "row %d as --json says" % s)
    # a narrow boxcar: test inputs without a prediction are marked
    rc, out, _ = expect(["pool", "--n-train", "5,200", "--method", "nonparametric", "--kernel",
                         "boxcar", "--sigma", "0.05"], 0, err="",
                        out_has=["* over the test inputs some training point reaches"])
    for bad in ["0", "10,0", "10,-5", "-5", "10,,20", "10,", ",10", "1e2", "abc", "10, 20",
                "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "2000000001"]:
        expect(["pool", "--n-train=" + bad], 2,
               err=P + "--n-train: expected a size from 1 to 2000000000, or a list of them "
               "(comma-separated, at most 16), got '%s'" % bad)
    expect(["pool", "--n-train", "10,20,10"], 2, err=P + "--n-train: 10 given twice in '10,20,10'")
    expect(["pool", "--n-train", "10,1"], 2,
           err=P + "--n-train 1: parametric pooling needs at least 2 training points (each "
           "one's keys are the other n - 1)")
    check(expect(["pool", "--n-train", "10,1", "--method", "average,nonparametric"], 0)[0] == 0,
          "a size 1 without parametric")
    for opt in ["png", "weights-png", "plot", "html"]:
        expect(["pool", "--n-train", "10,20", "--" + opt, os.path.join(tmp, "x")], 2,
               err=P + "--%s draws one run; --n-train with 2 sizes prints a table of MSEs "
               "(give one size for --%s)" % (opt, opt))
    expect(["pool", "--n-train", "10,100000000"], 1,
           err=P + "100000000 training and 50 test inputs with 3 results needs about 107 PiB, "
           "more than --max-mem 4 GiB")


def learned_width():
    rc, out, _ = expect(["pool"], 0, err="")
    line = [l for l in out.splitlines() if l.startswith("  learned w ")][0]
    w = float(line.split()[2].rstrip(":"))
    check(line == "  learned w %.6f: the Gaussian of width σ = 1/|w| = %.6f" % (w, 1 / abs(w)),
          "the learned w and its width: %r" % line)
    for seed in ["0", "5"]:
        doc = pool_json(["--method", "parametric", "--seed", seed])
        p = doc["results"][0]
        check(near(p["sigma_w"], 1 / abs(p["w"]), 1e-8), "sigma_w = 1/|w|")
        # the Gaussian of that width is the same attention: nonparametric at
        # --sigma sigma_w gives parametric's weights and predictions
        q = pool_json(["--method", "nonparametric", "--seed", seed, "--sigma",
                       repr(p["sigma_w"])])["results"][0]
        diff = max(abs(a - b) for ra, rb in zip(p["attention_weights"], q["attention_weights"])
                   for a, b in zip(ra, rb))
        check(diff < 1e-6, "seed %s: nonparametric at σ = 1/|w| is parametric (%g)" % (seed, diff))
        check(all(near(a, b, 1e-6) for a, b in zip(p["y_hat"], q["y_hat"])), "the same ŷ")
    # w = 0: an infinite width, every weight equal; null in JSON
    p = pool_json(["--method", "parametric", "--w-init", "0", "--epochs", "0"])["results"][0]
    check(p["w"] == 0 and p["sigma_w"] is None
          and all(v == 1 / 50 for v in p["attention_weights"][7]), "w = 0: sigma_w null")
    expect(["pool", "--method", "parametric", "--w-init", "0", "--epochs", "0"], 0,
           out_has=["  learned w 0: σ = 1/|w| is infinite, every weight equal\n"])
    doc = pool_json(["--n-train", "20,40", "--method", "parametric"])
    check(all(near(s, 1 / abs(w), 1e-8) for s, w in zip(doc["results"][0]["sigma_w"],
                                                        doc["results"][0]["w"])),
          "the sweep's sigma_w")


def loo(x, y, kernel, sigma):
    """Leave-one-out by hand: (mean squared error over the points reached,
    how many are not)."""
    import math
    errs, miss = [], 0
    for i, xi in enumerate(x):
        ks = []
        for j, xj in enumerate(x):
            u = (xi - xj) / sigma
            if j == i:
                continue
            ks.append((math.exp(-u * u / 2) if kernel == "gaussian" else
                       (1.0 if abs(u) < 1 else 0.0) if kernel == "boxcar" else
                       max(0.0, 1 - abs(u)) if kernel == "epanechikov" else 1.0, y[j]))
        if kernel == "gaussian":  # a softmax: relative to the largest score
            top = max(-((xi - xj) / sigma) ** 2 / 2 for j, xj in enumerate(x) if j != i)
            ks = [(math.exp(-((xi - xj) / sigma) ** 2 / 2 - top), y[j])
                  for j, xj in enumerate(x) if j != i]
        tot = sum(k for k, _ in ks)
        if tot == 0:
            miss += 1
            continue
        errs.append((sum(k * v for k, v in ks) / tot - y[i]) ** 2)
    return (sum(errs) / len(errs) if errs else None), miss


def sigma_auto(tmp):
    kernels = ["gaussian", "boxcar", "constant", "epanechikov"]
    doc = pool_json(["--method", "nonparametric", "--sigma", "auto", "--kernel", ",".join(kernels),
                     "--seed", "2"])
    au = doc["sigma_auto"]
    grid = [10 ** (i / 10 - 2) for i in range(31)]
    check(len(au["grid"]) == 31 and all(near(a, b, 1e-8) for a, b in zip(au["grid"], grid)),
          "the grid 10^(i/10 - 2)")
    for k, kern in enumerate(kernels):
        a = au["kernels"][k]
        check(a["kernel"] == kern, "kernel order")
        best = None
        for i, s in enumerate(grid):
            want, miss = loo(doc["x_train"], doc["y_train"], kern, s)
            got = a["loo_mse"][i]
            check(a["unreached"][i] == miss and (got is None) == (miss > 0)
                  and (got is None or near(got, want, 2e-8)),
                  "%s at σ = %g: %r, by hand %r (%d unreached)" % (kern, s, got, want, miss))
            if miss == 0 and (best is None or want < best[0] - 1e-12):
                best = (want, au["grid"][i])
        check(a["sigma"] == best[1], "%s: the least error's width %r, chosen %r"
              % (kern, best[1], a["sigma"]))
        r = doc["results"][k]
        check(r["kernel"] == kern and r["sigma"] == a["sigma"], "%s's result at its width" % kern)
        # the same as asking for that width
        q = pool_json(["--method", "nonparametric", "--sigma", repr(a["sigma"]), "--kernel", kern,
                       "--seed", "2"])["results"][0]
        check(all(near(u, v, 1e-6) for u, v in zip(q["y_hat"], r["y_hat"]))
              and near(q["mse"], r["mse"], 1e-6), "%s: --sigma auto is --sigma %r"
              % (kern, a["sigma"]))
    # parametric's loss is n times the Gaussian's leave-one-out error at σ = 1/|w|
    g = au["kernels"][0]
    for i in (12, 15, 20):
        p = pool_json(["--method", "parametric", "--seed", "2", "--epochs", "1", "--w-init",
                       repr(1 / au["grid"][i])])["results"][0]
        check(near(p["losses"][0] / 50, g["loo_mse"][i], 1e-6),
              "parametric's loss / n at w = 1/%g: %r, the LOO error %r"
              % (au["grid"][i], p["losses"][0] / 50, g["loo_mse"][i]))
    rc, out, _ = expect(["pool", "--method", "nonparametric", "--sigma", "auto", "--seed", "2"],
                        0, err="", out_has=["the mean squared error (leave-one-out) at each width "
                                            "of the grid 10^(i/10 - 2), i = 0, ..., 30 (0.01 to "
                                            "10, ten a decade):\n        σ        gaussian\n",
                                            "gaussian: σ = %g, the least leave-one-out error"
                                            % au["kernels"][0]["sigma"]])
    check(sum(l.endswith("*") for l in out.splitlines()) == 1, "one width marked")
    png = os.path.join(tmp, "loo.png")
    expect(["pool", "--sigma", "auto", "--sigma-png", png], 0, err="",
           out_has=["wrote %s: the leave-one-out error against σ" % png])
    pts = os.path.join(tmp, "far.json")
    with open(pts, "w") as f:
        f.write('{"x_train": [0, 100, 200], "y_train": [1, 2, 3], "x_test": [1]}')
    one = os.path.join(tmp, "one.json")
    with open(one, "w") as f:
        f.write('{"x_train": [0], "y_train": [1], "x_test": [1]}')
    expect(["pool", "--input", pts, "--sigma", "auto", "--kernel", "gaussian,boxcar"], 1,
           err=P + "--sigma auto: no width from 0.01 to 10 lets the boxcar kernel predict every "
           "training point from the others with a finite error; give --sigma")
    huge = os.path.join(tmp, "huge.json")
    with open(huge, "w") as f:
        f.write('{"x_train": [-1e308, 1e308, 0], "y_train": [1e308, 1e308, 1], "x_test": [0]}')
    expect(["pool", "--input", huge, "--method", "nonparametric", "--sigma", "auto"], 1,
           err=P + "--sigma auto: no width from 0.01 to 10 lets the gaussian kernel predict "
           "every training point from the others with a finite error; give --sigma")
    expect(["pool", "--input", one, "--method", "nonparametric", "--sigma", "auto"], 1,
           err=P + one + ": $.x_train: --sigma auto's leave-one-out needs at least 2 training "
           "points, got 1")
    for args, msg in [
        (["--sigma", "auto,1"], "--sigma: auto chooses one width by leave-one-out; give it "
                                "alone, not in a list ('auto,1')"),
        (["--sigma", "0.5,auto"], "--sigma: auto chooses one width by leave-one-out; give it "
                                  "alone, not in a list ('0.5,auto')"),
        (["--sigma", "Auto"], "--sigma: expected widths greater than 0 (at most 16, "
                              "comma-separated), got 'Auto'"),
        (["--sigma-png", png], "--sigma-png draws the leave-one-out error of --sigma auto, "
                               "which is not given"),
        (["--sigma", "0.5", "--sigma-png", png], "--sigma-png draws the leave-one-out error of "
                                                 "--sigma auto, which is not given"),
        (["--sigma", "auto", "--n-train", "20,50"],
         "--sigma auto chooses a width for one training set; --n-train with 2 sizes would "
         "choose one per size (give one size)"),
        (["--sigma", "auto", "--method", "average,parametric"],
         "--sigma auto chooses the nonparametric width, and --method nonparametric is not "
         "asked"),
        (["--sigma", "auto", "--method", "parametric"],
         "--sigma shapes the nonparametric results; --method parametric alone uses the "
         "Gaussian softmax with a learned w"),
        (["--sigma", "auto", "--method", "nonparametric", "--n-train", "1"],
         "--n-train 1: --sigma auto's leave-one-out needs at least 2 training points"),
    ]:
        expect(["pool"] + args, 2, err=P + msg)
    expect(["pool", "--sigma", "auto", "--sigma-png", os.path.join(tmp, "no", "x.png")], 1,
           err=P + "--sigma-png %s: cannot create: No such file or directory"
           % os.path.join(tmp, "no", "x.png"))


def additive_forward(sd, q, keys, values, skip=None):
    """ŷ and the weights of query q over keys by 10.3's additive score, by hand."""
    import math
    wk = [r[0] for r in sd["W_k.weight"]]
    wq = [r[0] for r in sd["W_q.weight"]]
    wv = sd["w_v.weight"][0]
    scores = [None if i == skip else
              sum(v * math.tanh(a * q + b * k) for v, a, b in zip(wv, wq, wk))
              for i, k in enumerate(keys)]
    top = max(s for s in scores if s is not None)
    ex = [0.0 if s is None else math.exp(s - top) for s in scores]
    tot = sum(ex)
    att = [e / tot for e in ex]
    return sum(a * v for a, v in zip(att, values)), att


def additive(tmp):
    doc = pool_json(["--method", "additive", "--seed", "4"])
    r = doc["results"][0]
    check(r["method"] == "additive" and r["kernel"] is None and r["sigma"] is None
          and r["score_hiddens"] == 8 and len(r["losses"]) == 5, "additive's result")
    for key in ("state_dict_init", "state_dict"):
        sd = r[key]
        check(list(sd) == ["W_k.weight", "W_q.weight", "w_v.weight"]
              and len(sd["W_k.weight"]) == 8 and all(len(v) == 1 for v in sd["W_k.weight"])
              and len(sd["W_q.weight"]) == 8 and len(sd["w_v.weight"]) == 1
              and len(sd["w_v.weight"][0]) == 8, "%s: nn.Linear's shapes" % key)
    sd0 = r["state_dict_init"]
    check(all(abs(v[0]) < 1 for v in sd0["W_k.weight"] + sd0["W_q.weight"])
          and all(abs(v) < 8 ** -0.5 for v in sd0["w_v.weight"][0]), "nn.Linear's bounds")
    check(r["state_dict"] != sd0, "trained")
    # the loss before the first step, by hand from the start: each point from the others
    x, y = doc["x_train"], doc["y_train"]
    loss = sum((additive_forward(sd0, xi, x, y, skip=i)[0] - y[i]) ** 2 for i, xi in enumerate(x))
    check(near(r["losses"][0], loss, 1e-7), "the first loss %r, by hand %r" % (r["losses"][0], loss))
    # the test inputs from the learned parameters, every training point a key
    for j in (0, 17, 49):
        yh, att = additive_forward(r["state_dict"], doc["x_test"][j], x, y)
        check(near(r["y_hat"][j], yh, 1e-7)
              and max(abs(a - b) for a, b in zip(att, r["attention_weights"][j])) < 1e-8,
              "test input %d by hand" % j)
    check(near(r["mse"], mse(r["y_hat"], doc["y_truth"]), 1e-7), "its MSE")
    # its start is drawn after w's: asking for parametric too changes neither
    both = pool_json(["--method", "parametric,additive", "--seed", "4"])["results"]
    check(both[1]["state_dict_init"] == sd0 and both[1]["y_hat"] == r["y_hat"], "the same start")
    check(both[0] == pool_json(["--method", "parametric", "--seed", "4"])["results"][0],
          "parametric as without additive")
    h3 = pool_json(["--method", "additive", "--score-hiddens", "3", "--epochs", "2", "--lr",
                    "0.05"])["results"][0]
    check(h3["score_hiddens"] == 3 and len(h3["state_dict"]["w_v.weight"][0]) == 3
          and len(h3["losses"]) == 2, "--score-hiddens 3")
    rc, out, _ = expect(["pool", "--method", "additive", "--seed", "4"], 0, err="",
                        out_has=["\nadditive\n  a(q, k) = w_v · tanh(W_q q + W_k k), 8 hidden "
                                 "units; W_k.weight (8, 1), W_q.weight (8, 1) and w_v.weight "
                                 "(1, 8) start as nn.Linear's (from the seed); SGD, lr 0.5, 5 "
                                 "epochs; each training point's keys and values are the other 49",
                                 "epoch 1, loss %.6f\n" % r["losses"][0],
                                 "  w_v.weight " + " ".join("%.6f" % v for v in
                                                           r["state_dict"]["w_v.weight"][0])])
    f, w, l = (os.path.join(tmp, n) for n in ("afits.png", "aw.png", "aloss.png"))
    expect(["pool", "--method", "parametric,additive", "--png", f, "--weights-png", w, "--plot",
            l], 0, err="", out_has=["wrote %s" % f, "wrote %s" % w, "wrote %s" % l])
    doc = pool_json(["--n-train", "20,50", "--method", "average,additive"])
    check([r["method"] for r in doc["results"]] == ["average", "additive"]
          and len(doc["results"][1]["mse"]) == 2, "additive in the sweep")
    for v in ["0", "-1", "4097", "x", ""]:
        expect(["pool", "--method", "additive", "--score-hiddens=" + v], 2,
               err=P + "--score-hiddens: expected an integer from 1 to 4096, got '%s'" % v)
    for args, msg in [
        (["--score-hiddens", "4"], "--score-hiddens is for --method additive, which is not asked"),
        (["--method", "additive", "--w-init", "1"],
         "--w-init is for --method parametric, which is not asked"),
        (["--method", "additive", "--kernel", "boxcar"],
         "--kernel shapes the nonparametric results; --method additive alone learns its scores"),
        (["--method", "additive", "--n-train", "1"],
         "--n-train 1: additive pooling needs at least 2 training points (each one's keys are "
         "the other n - 1)"),
        (["--method", "average,nonparametric", "--lr", "0.1"],
         "--lr is for --method parametric or additive, neither of which is asked"),
        (["--method", "additive,multiplicative"],
         "--method: expected a list of average, nonparametric, parametric, additive "
         "(comma-separated), got 'additive,multiplicative'"),
    ]:
        expect(["pool"] + args, 2, err=P + msg)
    one = os.path.join(tmp, "one.json")
    expect(["pool", "--input", one, "--method", "additive"], 1,
           err=P + one + ": $.x_train: additive pooling needs at least 2 training points (each "
           "one's keys are the other n - 1), got 1")


def gauss_loss(x, y, w, keep_self):
    """parametric's training loss at w, by hand: each point from the others,
    or from all (itself too) with --keep-self."""
    import math
    loss = 0.0
    for i, xi in enumerate(x):
        js = [j for j in range(len(x)) if keep_self or j != i]
        sc = [-((xi - x[j]) * w) ** 2 / 2 for j in js]
        top = max(sc)
        ex = [math.exp(v - top) for v in sc]
        loss += (sum(e * y[j] for e, j in zip(ex, js)) / sum(ex) - y[i]) ** 2
    return loss


def keep_self(tmp):
    doc = pool_json(["--method", "parametric,additive", "--keep-self", "--epochs", "3",
                     "--lr", "0.05"])
    res = doc["results"]
    check([(r["method"], r.get("keep_self")) for r in res]
          == [("parametric", None), ("parametric", True), ("additive", None), ("additive", True)],
          "each trained result, then the same keeping self")
    plain = pool_json(["--method", "parametric,additive", "--epochs", "3", "--lr", "0.05"])
    check(res[0] == plain["results"][0] and res[2] == plain["results"][1],
          "the defaults as without --keep-self")
    x, y = doc["x_train"], doc["y_train"]
    p, k = res[0], res[1]
    check(k["w_init"] == p["w_init"], "the same start")
    check(near(k["losses"][0], gauss_loss(x, y, k["w_init"], True), 1e-7)
          and near(p["losses"][0], gauss_loss(x, y, p["w_init"], False), 1e-7),
          "the first losses by hand, with and without self")
    check(near(k["losses"][1], gauss_loss(x, y, k["w_init"] - 0.05 * (
        (gauss_loss(x, y, k["w_init"] + 1e-6, True) - gauss_loss(x, y, k["w_init"] - 1e-6, True))
        / 2e-6), True), 1e-5), "one SGD step keeping self, by central differences")
    a, ak = res[2], res[3]
    check(ak["state_dict_init"] == a["state_dict_init"], "additive: the same start")
    loss = sum((additive_forward(a["state_dict_init"], xi, x, y)[0] - y[i]) ** 2
               for i, xi in enumerate(x))
    check(near(ak["losses"][0], loss, 1e-7), "additive keeping self: the first loss by hand")
    # the exercise's numbers: trained long, keeping self memorises
    doc = pool_json(["--method", "parametric", "--keep-self", "--epochs", "500"])
    p, k = doc["results"]
    check(k["losses"][-1] < p["losses"][-1] / 3 and k["w"] > 5 * p["w"]
          and k["sigma_w"] < p["sigma_w"] / 5 and k["mse"] > 3 * p["mse"],
          "keep-self: a lower loss, a larger w, a narrower σ, a larger test error: %r %r"
          % ((p["losses"][-1], p["w"], p["mse"]), (k["losses"][-1], k["w"], k["mse"])))
    out = expect(["pool", "--method", "parametric", "--keep-self", "--epochs", "500"], 0,
                 err="", out_has=["\nparametric, keep-self\n", "keys and values are all 50, "
                                  "itself too (--keep-self)\n",
                                  "\nparametric: the default against --keep-self (each training "
                                  "point also its own key)\n"
                                  "                                default      keep-self\n"
                                  "  epoch 1, loss          %14.6f %14.6f\n"
                                  % (p["losses"][0], k["losses"][0]),
                                  "  learned w              %14.6f %14.6f\n" % (p["w"], k["w"]),
                                  "  σ = 1/|w|              %14.6f %14.6f\n"
                                  % (p["sigma_w"], k["sigma_w"]),
                                  "  MSE against the truth  %14.6f %14.6f\n"
                                  % (p["mse"], k["mse"])])[1]
    block = out.split("default against --keep-self")[1]
    check([l.split(",")[0].split()[-1] for l in block.splitlines() if "epoch" in l]
          == ["1", "2", "5", "10", "20", "50", "100", "200", "500"], "epochs 1, 2, 5, … 500")
    doc = pool_json(["--n-train", "20,50", "--method", "parametric", "--keep-self"])
    check([r.get("keep_self") for r in doc["results"]] == [None, True], "keep-self in the sweep")
    expect(["pool", "--n-train", "20,50", "--method", "parametric", "--keep-self"], 0, err="",
           out_has=["n_train  parametric  parametric, keep-self     learned w  σ = 1/|w|  "
                    "w, keep-self  σ = 1/|w|\n"])
    for args in (["--method", "average,nonparametric"], ["--method", "nonparametric"]):
        expect(["pool", "--keep-self"] + args, 2,
               err=P + "--keep-self is for --method parametric or additive, neither of which "
               "is asked")
    expect(["pool", "--keep-self=1"], 2,
           err=P + "option '--keep-self' takes no value, got '--keep-self=1'")


def png_pixels(path):
    """(width, height, rows): an RGB PNG decoded (8 bits, no interlace),
    each row a bytes of width * 3."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype == 2 and interlace == 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * 3), w * 3
    for y in range(h):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], prev[i - 3] if i >= 3 else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p_ = a + b - c
                pa, pb, pc = abs(p_ - a), abs(p_ - b), abs(p_ - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows


def kernels_png(tmp):
    png = os.path.join(tmp, "kernels.png")
    expect(["pool", "--method", "average", "--kernels-png", png], 0, err="",
           out_has=["wrote %s: the four kernels on [-2.5, 2.5], as d2l.ai 11.2 draws them, "
                    "1320×300 px" % png])
    w, h, rows = png_pixels(png)
    check(w == 4 * 330 and h == 300, "four panels of 330 × 300 in a row")

    def blue(panel):
        """The rows and columns of the line's pixels (matplotlib's blue) in panel."""
        pts = []
        for y, row in enumerate(rows):
            for x in range(panel * 330, (panel + 1) * 330):
                r, g, b = row[3 * x:3 * x + 3]
                if abs(r - 31) < 40 and abs(g - 119) < 40 and abs(b - 180) < 40 and b > r + 80:
                    pts.append((y, x - panel * 330))
        return pts
    g, box, const, epa = (blue(k) for k in range(4))
    top = lambda pts: min(y for y, _ in pts)
    bottom = lambda pts: max(y for y, _ in pts)
    # one y range: each kernel's 1 on the same row, boxcar's and Epanechikov's 0 too
    check(abs(top(g) - top(const)) <= 1 and abs(top(box) - top(const)) <= 1
          and abs(top(epa) - top(const)) <= 1, "the peaks at 1 on one row: %d %d %d %d"
          % (top(g), top(box), top(const), top(epa)))
    check(abs(bottom(box) - bottom(epa)) <= 1 and bottom(const) - top(const) <= 2,
          "the zeros on one row, the constant flat")
    check(bottom(g) < bottom(box) - 5, "the Gaussian stays above 0 on [-2.5, 2.5] (exp(-3.125))")
    # the constant's line spans the panel's plot; the Epanechikov's peak is narrow
    xs = lambda pts, row: sorted(x for y, x in pts if abs(y - row) <= 1)
    check(len(xs(const, top(const))) > 200, "the constant across the axes")
    peak = xs(epa, top(epa))
    check(peak and peak[-1] - peak[0] < 12, "Epanechikov's single peak")
    box_top = xs(box, top(box))
    third = (box_top[-1] - box_top[0]) / (xs(const, top(const))[-1] - xs(const, top(const))[0])
    check(0.35 < third < 0.45, "boxcar's top is |x| < 1 of the 5 wide axis: %.3f" % third)
    doc_out = expect(["pool", "--n-train", "10,20", "--kernels-png", png], 0, err="")[1]
    check("wrote %s: the four kernels" % png in doc_out, "--kernels-png with a sweep")
    expect(["pool", "--kernels-png", os.path.join(tmp, "no", "k.png")], 1,
           err=P + "--kernels-png %s: cannot create: No such file or directory"
           % os.path.join(tmp, "no", "k.png"))
    expect(["pool", "--kernels-png"], 2, err=P + "option '--kernels-png' needs a value")


def group_pool_exercises(tmp):
    n_train_lists(tmp)
    learned_width()
    sigma_auto(tmp)
    additive(tmp)
    keep_self(tmp)
    kernels_png(tmp)
