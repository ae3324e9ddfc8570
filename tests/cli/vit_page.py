"""Group vit_page: the Vision Transformer's page (attn train --task vit
--html, SPEC §16) on small IDX files written here, and what the page's
module runs for each pick: `attn vit --input - --pixels LIST` (the model
on standard input, as the page holds it: base64 float32) gives the same
probabilities and attention as `attn vit --index I` on the saved model;
--pixels' errors name the number at fault."""
import base64
import json
import os
import re

from .common import check, expect, run
from .html import page_data
from .train_vit import write_set

V = "attn vit: "
MODULE_RE = re.compile(r'<script type="application/octet-stream" id="attn-module"[^>]*>[^<]*'
                       r'</script>')


def group_vit_page(tmp):
    d = os.path.join(tmp, "d")
    write_set(d, n_train=40, n_test=30)  # 30 test images: the page keeps 24
    model = os.path.join(tmp, "vit.json")
    page = os.path.join(tmp, "vit.html")
    saved = os.path.join(tmp, "run.json")
    train = ["train", "--task", "vit", "--data", d, "--epochs", "1", "--batch-size", "8"]

    # the page is checked before the training: "-" and a missing folder
    expect(train + ["--html", "-"], 2,
           err="attn train: --html: a page is written to a file, not to standard output (-)")
    missing = os.path.join(tmp, "no", "such", "p.html")
    rc, _, err = run(train + ["--html", missing])
    check(rc == 1 and err.startswith("attn train: --html %s: cannot create" % missing)
          and "epoch" not in err, "vit --html: a page that cannot be made stops first: %r" % err)

    rc, out, _ = expect(train + ["--save", model, "--json", saved, "--html", page], 0)
    size = os.path.getsize(page)
    check(out.endswith("wrote %s: a page: pick a test image, every head's <cls> attention over "
                       "it, recomputed, %d KB\n" % (page, round(size / 1024))),
          "vit --html: the report line: %r" % out[-160:])
    html, text, data = page_data(page)
    pg = data["page"]
    with open(saved) as f:
        doc = json.load(f)
    # the --json document, then "page"
    check(all(data[k] == doc[k] for k in doc) and list(data)[-1] == "page",
          "vit --html: the data holds --json's members, then page")
    check(pg["kind"] == "vit" and pg["title"] == "attn train --task vit"
          and pg["command"].startswith("attn train --task vit --data ")
          and (pg["img_size"], pg["patch_size"], pg["num_heads"], pg["num_blks"]) == (28, 7, 4, 2),
          "vit --html: kind, title, command and sizes: %r"
          % {k: pg[k] for k in ("kind", "title", "img_size", "patch_size")})
    im = pg["images"]
    pixels = base64.b64decode(im["pixels"])
    images = write_set(os.path.join(tmp, "again"), n_train=40, n_test=30)[2][16:]
    labels = [(3 * i) % 10 for i in range(24)]
    check(im["count"] == 24 and im["labels"] == labels and pixels == images[:24 * 28 * 28],
          "vit --html: the first 24 test images, their bytes and labels (%d bytes, labels %r)"
          % (len(pixels), im["labels"]))
    # the model: the --save file's numbers, its tensors base64 float32
    with open(model) as f:
        m = json.load(f)
    pm = pg["model"]
    big = pm["state_dict"]["blks.0.attention.W_q.weight"]
    check(isinstance(big, dict) and big["dtype"] == "float32" and big["shape"] == [64, 64],
          "vit --html: the page's W_q is base64 float32 (64, 64)")
    check({k: v for k, v in pm.items() if k != "state_dict"}
          == {k: v for k, v in m.items() if k != "state_dict"}
          and list(pm["state_dict"]) == list(m["state_dict"]),
          "vit --html: the page's model has the --save file's members and tensors")
    # the page without attn's module, the model and the images (the data
    # it carries): within the budget of the other pages
    module = MODULE_RE.search(html)
    msize = len(module.group(0)) if module else 0
    model_text = len(json.dumps(pm, separators=(", ", ": ")))
    rest = size - msize - model_text - len(im["pixels"])
    check(rest < 176 * 1024, "vit --html: the page without its module, model and images is under "
          "176 KB (%d bytes; module %d, model about %d, images %d)"
          % (rest, msize, model_text, len(im["pixels"])))
    print("vit page: %d bytes: module %d, model about %d, images %d, the rest %d"
          % (size, msize, model_text, len(im["pixels"]), rest))

    # what the page's module runs for a pick: the model on standard input,
    # the image as numbers; the same numbers as --index on the saved file
    model_stdin = json.dumps(pm).encode()
    for i in (0, 2):
        lst = ",".join(str(b) for b in pixels[i * 784:(i + 1) * 784])
        rc, out, err = run(["vit", "--input", "-", "--pixels", lst, "--json", "-"],
                           stdin=model_stdin)
        check(rc == 0 and "the image of --pixels: 28 × 28" in err,
              "vit --pixels: exit %d, %r" % (rc, err[:200]))
        got = json.loads(out) if rc == 0 else {}
        rc, out, _ = run(["vit", "--input", model, "--data", d, "--index", str(i), "--json", "-"])
        want = json.loads(out)
        check(got.get("probabilities") == want["probabilities"]
              and got.get("cls_attention") == want["cls_attention"]
              and got.get("rollout") == want["rollout"]
              and got.get("prediction") == want["prediction"]
              and got.get("label", 0) is None and got.get("image") == "--pixels",
              "vit --pixels of test image %d: the same numbers as --index %d" % (i, i))
    # the numbers as a script writes them: spaces, decimals
    lst = ", ".join("%.1f" % b for b in pixels[784:2 * 784])
    rc, out, _ = run(["vit", "--input", model, "--pixels", lst, "--json", "-"])
    rc2, out2, _ = run(["vit", "--input", model, "--data", d, "--index", "1", "--json", "-"])
    check(rc == 0 and rc2 == 0
          and json.loads(out)["probabilities"] == json.loads(out2)["probabilities"],
          "vit --pixels with spaces and decimals: --index 1's probabilities")

    # --pixels' errors, each naming the number at fault
    ok = ["0"] * 784
    for args, msg in [
            (["--pixels", "1,2,3"],
             "--pixels: 3 numbers, but the model's images are 28 × 28: 784 wanted"),
            (["--pixels", ",".join(ok + ["0"])],
             "--pixels: 785 numbers, but the model's images are 28 × 28: 784 wanted"),
            (["--pixels", ",".join(ok[:9] + ["256"] + ok[10:])],
             "--pixels: number 10: 256 is not a grey value from 0 to 255"),
            (["--pixels", ",".join(["-1"] + ok[1:])],
             "--pixels: number 1: -1 is not a grey value from 0 to 255"),
            (["--pixels", ",".join(ok[:4] + ["x7"] + ok[5:])],
             "--pixels: number 5: \"x7\" is not a number"),
            (["--pixels", ",".join(ok[:4] + ["7x"] + ok[5:])],
             "--pixels: number 5: \"7x\" is not a number"),
            (["--pixels", "1,,2"], "--pixels: number 2: \"\" is not a number"),
            (["--pixels", ",".join(["nan"] + ok[1:])],
             "--pixels: number 1: \"nan\" is not a number"),
            (["--pixels", "1", "--index", "0"], "--pixels and --index name two images; give one"),
            (["--pixels", "1", "--image", "a.png"],
             "--pixels and --image name two images; give one")]:
        code = 2
        expect(["vit", "--input", model] + args, code, err=V + msg)
    # a broken base64 tensor in the model on standard input
    bad = json.loads(json.dumps(pm))
    bad["state_dict"]["blks.0.attention.W_q.weight"]["base64"] = "AAAA"
    expect(["vit", "--input", "-", "--pixels", ",".join(ok)], 1, stdin=json.dumps(bad).encode(),
           err=V + "-: $.state_dict[\"blks.0.attention.W_q.weight\"].base64: 4 characters, the "
           "shape's 4096 float32 want 21848")
    expect(["vit", "--help"], 0, err="", out_has=[
        "--pixels LIST", "the image as numbers, as a page or a script", "- for stdin"])

    # a test set smaller than 24: all its images
    small = os.path.join(tmp, "small.html")
    expect(["train", "--task", "vit", "--data", d, "--load", model, "--epochs", "0",
            "--test-size", "5", "--html", small], 0)
    pg = page_data(small)[2]["page"]
    check(pg["images"]["count"] == 5 and len(base64.b64decode(pg["images"]["pixels"])) == 5 * 784
          and pg["images"]["labels"] == labels[:5], "vit --html: 5 test images, 5 on the page")
