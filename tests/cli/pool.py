"""Group pool: attn pool's printed results, JSON, figures and every error
with its exit code and exact message."""
import json
import os

from .common import check, expect, png_info, write


def group_pool(tmp):
    P = "attn pool: "
    expect(["pool", "--help"], 0, err="", out_has=["usage: attn pool", "Examples:",
                                                   "NWKernelRegression", "--weights-png"])
    # the default run: the setup, three results, the book's five loss lines
    rc, out, _ = expect(["pool"], 0, err="",
                        out_has=["data (d2l zh 10.2): 50 training inputs", "\naverage\n",
                                 "\nnonparametric, gaussian, σ = 1\n", "\nparametric\n",
                                 "learned w ", "MSE against the truth", "mean largest weight"])
    losses = [l for l in out.splitlines() if l.startswith("epoch ")]
    check(len(losses) == 5 and losses[0].startswith("epoch 1, loss ")
          and len(losses[0].split("loss ")[1].split(".")[1]) == 6, "five loss lines %r" % losses)
    # JSON as SPEC §13: keys, shapes, rows summing to 1, the parametric sharper
    rc, out, _ = expect(["pool", "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(doc["command"] == "pool" and len(doc["x_train"]) == 50 and len(doc["x_test"]) == 50
          and len(doc["y_truth"]) == 50 and doc["x_train"] == sorted(doc["x_train"]),
          "JSON data")
    res = doc["results"]
    check([r["method"] for r in res] == ["average", "nonparametric", "parametric"], "methods")
    check(res[0]["kernel"] is None and res[0]["sigma"] is None and res[2]["sigma"] is None
          and res[2]["kernel"] == "gaussian" and res[1]["sigma"] == 1, "kernels and widths")
    check(all(abs(sum(row) - 1) < 1e-6 for r in res for row in r["attention_weights"]),
          "rows sum to 1")
    check(len(res[2]["losses"]) == 5 and res[2]["w"] != res[2]["w_init"]
          and 0 <= res[2]["w_init"] < 1, "parametric's w and losses")
    check(res[2]["mean_max_weight"] > 5 * res[1]["mean_max_weight"], "parametric sharper")
    check(res[2]["losses"][0] > res[2]["losses"][-1], "the loss falls")
    # the same command, the same bytes; another seed, other data
    check(expect(["pool", "--json", "-"], 0)[1] == out, "same bytes")
    check(expect(["pool", "--seed", "1", "--json", "-"], 0)[1] != out, "seed")
    # d2l.ai 11.2: 40 points, four kernels, four widths: 16 results
    rc, out, _ = expect(["pool", "--edition", "en", "--method", "nonparametric", "--kernel",
                         "gaussian,boxcar,constant,epanechikov", "--sigma", "0.1,0.2,0.5,1",
                         "--json", "-"], 0, err="")
    doc = json.loads(out)
    check(len(doc["x_train"]) == 40 and len(doc["results"]) == 16, "en: 40 points, 16 results")
    # a test input that no training point reaches: null, and said
    pts = write(tmp, "pts.json", '{"x_train": [0, 1], "y_train": [1, 2], "x_test": [0.5, 4]}')
    rc, out, _ = expect(["pool", "--input", pts, "--method", "nonparametric", "--kernel",
                         "boxcar", "--sigma", "1"], 0, err="",
                        out_has=["1 of 2 test inputs no training point reaches",
                                 "no truth to measure against"])
    doc = json.loads(expect(["pool", "--input", pts, "--method", "nonparametric", "--kernel",
                             "boxcar", "--json", "-"], 0)[1])
    r = doc["results"][0]
    check(r["y_hat"] == [1.5, None] and r["attention_weights"][1] == [0, 0]
          and r["mse"] is None and "y_truth" not in doc, "unreached: null")
    # figures, each at least 300 px wide
    f, w, l = (os.path.join(tmp, n) for n in ("fits.png", "w.png", "loss.png"))
    expect(["pool", "--png", f, "--weights-png", w, "--plot", l], 0, err="",
           out_has=["wrote %s" % f, "wrote %s" % w, "wrote %s" % l])
    check(all(png_info(p)[0] >= 300 for p in (f, w, l)), "figures >= 300 px wide")
    # --html: one page whose data is --json's document and "page", the same bytes again
    page = os.path.join(tmp, "pool.html")
    expect(["pool", "--html", page], 0, err="", out_has=["wrote %s: a page of the fits" % page])
    with open(page, encoding="utf-8") as fh:
        html = fh.read()
    data = json.loads(html.split('id="attn-data">', 1)[1].split("</script>", 1)[0])
    check(data["page"]["kind"] == "pool" and data["page"]["xlim"] == [0, 5]
          and {k: v for k, v in data.items() if k != "page"}
          == json.loads(expect(["pool", "--json", "-"], 0)[1]), "the page's data is --json's")
    expect(["pool", "--html", page], 0, err="")
    with open(page, encoding="utf-8") as fh:
        check(fh.read() == html, "--html: the same bytes")
    expect(["pool", "--html", "-"], 2,
           err=P + "--html: a page is written to a file, not to standard output (-)")
    expect(["pool", "--html", os.path.join(tmp, "no", "x.html"), "--json", os.path.join(tmp, "j")],
           1, err=P + "--html %s: cannot create: No such file or directory"
           % os.path.join(tmp, "no", "x.html"))
    check(not os.path.exists(os.path.join(tmp, "j")), "--html refused before any work")
    # errors: one line, exit 1 (data) or 2 (options)
    bad = [
        ('{"x_train": [1, 2], "y_train": [1]}',
         "$.y_train: expected 2 numbers (as many as $.x_train), got 1"),
        ('{"x_train": [], "y_train": [], "x_test": [1]}',
         "$.x_train: expected at least one number, got an empty list"),
        ('{"x_train": [1, 1e999], "y_train": [1, 2], "x_test": [1]}',
         "$.x_train[1]: expected a finite number"),
        ('{"x_train": [1, 2], "y_train": [1, "a"], "x_test": [1]}',
         "$.y_train[1]: expected a number, got a string"),
        ('{"x_train": [1, 2], "y_train": [1, 2]}', "$.x_test: missing"),
        ('{"x_train": [1, 2], "y_train": [1, 2], "x_test": [1], "y_truth": [1, 2]}',
         "$.y_truth: expected 1 numbers (as many as $.x_test), got 2"),
        ('[1]', "$: expected an object with x_train, y_train and x_test, got an array"),
        ('{"x_train": [1], "y_train": [1], "x_test": [1]}',
         "$.x_train: parametric pooling needs at least 2 training points (each one's keys "
         "are the other n - 1), got 1"),
    ]
    for i, (text, msg) in enumerate(bad):
        path = write(tmp, "bad%d.json" % i, text)
        expect(["pool", "--input", path], 1, err=P + path + ": " + msg)
    for args, msg in [
        (["--sigma", "0"], "--sigma: expected widths greater than 0 (at most 16, "
                           "comma-separated), got '0'"),
        (["--sigma", "1,-2"], "--sigma: expected widths greater than 0 (at most 16, "
                              "comma-separated), got '1,-2'"),
        (["--epochs", "-1"], "--epochs: expected an integer from 0 to 1000000, got '-1'"),
        (["--method", "parametric", "--kernel", "boxcar"],
         "--kernel shapes the nonparametric results; --method parametric alone uses the "
         "Gaussian softmax with a learned w"),
        (["--method", "average", "--epochs", "3"],
         "--epochs is for --method parametric or additive, neither of which is asked"),
        (["--n-train", "1"], "--n-train 1: parametric pooling needs at least 2 training "
                             "points (each one's keys are the other n - 1)"),
        (["--method", "average,average"], "--method: 'average' given twice in "
                                          "'average,average'"),
        (["--kernel", "cosine"],
         "--kernel: expected a list of gaussian, boxcar, constant, epanechikov "
         "(comma-separated), got 'cosine'"),
        (["--input", pts, "--n-train", "9"],
         "--input gives the data, so --n-train (for the section's data) does not apply"),
    ]:
        expect(["pool"] + args, 2, err=P + msg)
    expect(["pool", "--n-train", "100000000"], 1,
           err=P + "100000000 training and 50 test inputs with 3 results needs about 107 PiB, "
           "more than --max-mem 4 GiB")
    expect(["pool", "--png", os.path.join(tmp, "no", "x.png")], 1,
           err=P + "--png %s: cannot create: No such file or directory"
           % os.path.join(tmp, "no", "x.png"))
