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
                                 "   learned w  σ = 1/|w|\n"])
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


def group_pool_exercises(tmp):
    n_train_lists(tmp)
    learned_width()
