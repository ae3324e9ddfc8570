"""Group vit: `attn vit` (SPEC §16), one image through a saved Vision
Transformer: a model trained here on the small IDX files train_vit writes,
then its usage errors, pictures that cannot be read, each test image's
prediction against the one `train --png` draws for it, the probabilities
and the attention's shape and sums, a test image written as a PNG (grey,
RGB, inverted) giving --index's probabilities, and a larger picture
resized. Under valgrind fewer images (each run reads the model)."""
import json
import os
import struct

from . import common
from .common import check, expect, png_info
from .train_vit import write_set


def png_bytes(w, h, rows, color_type=0):
    """A PNG of 8-bit rows (each a bytes of w samples, or 4·w for RGBA)."""
    import zlib

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type,
                                                                0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def group_vit(tmp):
    V = "attn vit: "
    good = os.path.join(tmp, "good")
    write_set(good)
    model = os.path.join(tmp, "vit.json")
    expect(["train", "--data", good, "--task", "vit", "--epochs", "1", "--batch-size", "8",
            "--save", model], 0)
    expect(["vit", "--help"], 0, err="", out_has=["--index I", "--image FILE", "--invert"])
    for args, code, msg in [
            (["--index", "0"], 2, "--input MODEL is required (attn train --task vit --save "
             "MODEL writes one)"),
            (["--input", model], 2, "give --index I (a test image), --image FILE or --pixels LIST"),
            (["--input", model, "--index", "0", "--image", "a.png"], 2,
             "--index and --image name two images; give one"),
            (["--input", model, "--index", "0", "--invert"], 2, "--invert is for --image FILE"),
            (["--input", model, "--index", "20", "--data", good], 2,
             "--index: 20, but the test set holds 20 images (0 to 19)"),
            (["--input", model, "--image", model], 1,
             model + ": not an image attn reads (PNG or JPEG): unknown image type")]:
        expect(["vit"] + args, code, err=V + msg)

    # pictures that cannot be read: exit 1, the file named and why
    full = png_bytes(40, 30, [bytes(40)] * 30)
    for name, data, why in [
            ("empty.png", b"", "not an image attn reads (PNG or JPEG): unknown image type"),
            ("cut.png", full[:60], "cannot be decoded: truncated or corrupt"),
            ("wide.png", png_bytes(20000, 1, [bytes(20000)]),
             "20000 × 1 pixels: each side must be 1 to 16384")]:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        expect(["vit", "--input", model, "--image", path], 1, err=V + path + ": " + why)
    missing = os.path.join(tmp, "nothing.png")
    expect(["vit", "--input", model, "--image", missing], 1,
           err=V + missing + ": cannot open: No such file or directory")
    expect(["vit", "--input", model, "--image", tmp], 1,
           err=V + tmp + ": cannot read: Is a directory")

    # the predictions of the first 8 test images agree with the ones
    # train --png draws (read back through ATTN_FIGURE_TEXT)
    texts = os.path.join(tmp, "look_texts.txt")
    expect(["train", "--data", good, "--task", "vit", "--load", model, "--epochs", "0",
            "--png", os.path.join(tmp, "look.png")], 0, env={"ATTN_FIGURE_TEXT": texts})
    with open(texts, encoding="utf-8") as f:
        captions = [ln for ln in f.read().splitlines() if ln.startswith("true: ")]
    check(len(captions) == 8, "vit: 8 captions in train --png: %r" % captions)
    # under valgrind the first 2 (each run reads the model and the images)
    captions = captions[:2] if common.VALGRIND else captions
    labels = ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker",
              "bag", "ankle boot"]
    docs = []
    for i, cap in enumerate(captions):
        out_json = os.path.join(tmp, "look%d.json" % i)
        rc, out, _ = expect(["vit", "--input", model, "--data", good, "--index", str(i),
                             "--json", out_json], 0,
                            out_has=["test image %d: %s" % (i, labels[(3 * i) % 10])])
        with open(out_json) as f:
            doc = json.load(f)
        docs.append(doc)
        check(cap == "true: %s   predicted: %s" % (doc["label"], doc["prediction"]),
              "vit --index %d: %r against train --png's %r" % (i, doc["prediction"], cap))
        p = doc["probabilities"]
        check(abs(sum(p) - 1) < 1e-6 and doc["prediction"] == labels[p.index(max(p))]
              and "prediction: %s (%.4f)" % (doc["prediction"], max(p)) in out,
              "vit --index %d: probabilities %r" % (i, p))
        att = doc["cls_attention"]
        check(len(att) == 2 and all(len(b) == 4 and all(len(h) == 17 and abs(sum(h) - 1) < 1e-5
                                                          for h in b) for b in att)
              and len(doc["rollout"]) == 17 and abs(sum(doc["rollout"]) - 1) < 1e-6,
              "vit --index %d: cls_attention (2, 4, 17), rows and rollout summing to 1" % i)

    # test image 0 as a PNG of one's own: grey, and as RGB; inverted and
    # --invert: the same probabilities as --index 0
    images = write_set(os.path.join(tmp, "again"))[2]
    px = images[16:16 + 28 * 28]
    rows = [px[28 * y:28 * (y + 1)] for y in range(28)]
    cases = [("grey.png", png_bytes(28, 28, rows), []),
             ("rgb.png", png_bytes(28, 28, [bytes(v for v in r for _ in range(3)) for r in rows],
                                   2), []),
             ("inv.png", png_bytes(28, 28, [bytes(255 - v for v in r) for r in rows]),
              ["--invert"])]
    for name, data, extra in cases[:1] if common.VALGRIND else cases:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        out_json = os.path.join(tmp, name + ".json")
        expect(["vit", "--input", model, "--image", path, "--json", out_json] + extra, 0,
               out_has=["image %s: 28 × 28, grey%s, resized to 28 × 28"
                        % (path, ", inverted" if extra else "")])
        with open(out_json) as f:
            doc = json.load(f)
        worst = max(abs(a - b) for a, b in zip(doc["probabilities"], docs[0]["probabilities"]))
        check(worst < 1e-6 and doc["label"] is None and doc["prediction"] == docs[0]["prediction"],
              "vit --image %s: probabilities %g from --index 0's" % (name, worst))

    # a larger picture is resized: 56 × 42 (stretched, as Resize((S, S)))
    big = os.path.join(tmp, "big.png")
    with open(big, "wb") as f:
        f.write(png_bytes(56, 42, [bytes((x * 4 + y) % 256 for x in range(56)) for y in range(42)]))
    png = os.path.join(tmp, "look_one.png")
    expect(["vit", "--input", model, "--image", big, "--png", png], 0,
           out_has=["image %s: 56 × 42, grey, resized to 28 × 28" % big,
                    "the <cls> query's attention over the 4 × 4 patches",
                    "block 2, head 4 (<cls> ", "rollout over the 2 blocks (<cls> "])
    # one row: image, 4 heads, rollout
    check(png_info(png)[:2] == (742, 26 + 22 + 112 + 10), "vit --png: size %r" % (png_info(png),))
