"""Group train_vit: attn train --task vit (d2l.ai 11.8's Vision Transformer,
SPEC §16) on small IDX files written here (gzip'd and not): the options'
errors with their exact lines, missing data (exit 1 with the apt-get
line), bad IDX files named by file and byte, the --json document's shape
(history, accuracy, the confusion matrix that agrees with it), the same
bytes on 1 and 2 threads, and --save / --load (d2l's state_dict names)
giving back the trained run's numbers."""
import gzip
import json
import os
import random
import struct

from .common import check, expect, png_info, run

BASES = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
         "t10k-labels-idx1-ubyte"]


def idx_images(n, side, rnd):
    return struct.pack(">IIII", 0x803, n, side, side) + bytes(
        rnd.randrange(256) for _ in range(n * side * side))


def idx_labels(labels):
    return struct.pack(">II", 0x801, len(labels)) + bytes(labels)


def write_set(d, n_train=40, n_test=20, side=28, gz=True, seed=5):
    """Four IDX files in folder d: random pixels, labels i mod 10."""
    rnd = random.Random(seed)
    os.makedirs(d, exist_ok=True)
    files = [idx_images(n_train, side, rnd), idx_labels([i % 10 for i in range(n_train)]),
             idx_images(n_test, side, rnd), idx_labels([(3 * i) % 10 for i in range(n_test)])]
    for base, data in zip(BASES, files):
        if gz:
            with gzip.open(os.path.join(d, base + ".gz"), "wb") as f:
                f.write(data)
        else:
            with open(os.path.join(d, base), "wb") as f:
                f.write(data)
    return files


def group_train_vit(tmp):
    T = "attn train: "
    expect(["train", "--help"], 0, err="", out_has=["--epochs N", "--train-size N", "--patch P",
                                                     "vit (d2l.ai 11.8's Vision Transformer"])
    good = os.path.join(tmp, "good")
    write_set(good)
    plain = os.path.join(tmp, "plain")
    write_set(plain, gz=False)
    small = ["--task", "vit", "--epochs", "1", "--batch-size", "8"]

    # usage errors: one line, exit 2
    for args, msg in [
            (["--task", "vit", "--length", "3"], "--length is not for --task vit"),
            (["--task", "vit", "--epochs", "0", "--plot", "a.png"],
             "--plot draws the epochs: --epochs 0 trains none"),
            (["--epochs", "2"], "--epochs is for --task vit"),
            (["--task", "translate", "--train-size", "5"], "--train-size is for --task vit"),
            (["--task", "vit", "--data", good, "--patch", "5"],
             "--task vit: the patch 5 does not divide the image side 28"),
            (["--task", "vit", "--data", good, "--heads", "3"],
             "--task vit: the 3 heads do not divide the width 64"),
            (["--task", "vit", "--epochs", "-1"],
             "--epochs: expected an integer from 0 to 1000, got '-1'"),
            (["--task", "vit", "--load", "m.json", "--patch", "4"],
             "--hiddens, --heads, --layers, --ffn and --patch are read from the model file "
             "of --load")]:
        expect(["train"] + args, 2, err=T + msg)

    # missing data: exit 1
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    expect(["train", "--task", "vit", "--data", empty], 1,
           err=T + empty + ": no train-images-idx3-ubyte (or .gz): --data names a folder with "
           "Fashion-MNIST's four IDX files")
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        expect(["train", "--task", "vit"], 1,
               err=T + "no Fashion-MNIST in /usr/share/datasets/fashion-mnist: sudo apt-get "
               "install dataset-fashion-mnist (or --data DIR)")

    # bad IDX files: exit 1, the file and the place named
    def bad(name, base, data, msg):
        d = os.path.join(tmp, name)
        write_set(d, gz=False)
        with open(os.path.join(d, base), "wb") as f:
            f.write(data)
        expect(["train", "--data", d] + small, 1, err=T + os.path.join(d, base) + msg)
    labels = idx_labels([i % 10 for i in range(40)])
    images = idx_images(40, 28, random.Random(1))
    bad("magic", BASES[0], labels,
        ": byte 0: magic 00 00 08 01 is not an image file's (00 00 08 03)")
    bad("truncated", BASES[0], images[:-3],
        ": truncated: the header (byte 4) announces 31360 data bytes, the file holds 31357")
    bad("label10", BASES[1], labels[:8 + 7] + bytes([10]) + labels[16:],
        ": byte 15: label 10 of item 7 is not a class (0 … 9)")
    bad("count", BASES[1], idx_labels([1] * 39),
        ": byte 4: 39 labels, but %s holds 40 images" % os.path.join(tmp, "count", BASES[0]))
    d = os.path.join(tmp, "notgz")
    write_set(d, gz=False)
    os.rename(os.path.join(d, BASES[2]), os.path.join(d, BASES[2] + ".gz"))
    expect(["train", "--data", d] + small, 1,
           err=T + os.path.join(d, BASES[2] + ".gz") + ": not a gzip file (byte 0: no gzip "
           "magic 1f 8b)")

    # a run: the JSON's shape
    out_json = os.path.join(tmp, "run.json")
    rc, out, _ = expect(["train", "--data", good, "--task", "vit", "--epochs", "2",
                         "--batch-size", "8", "--json", out_json, "--threads", "1"], 0,
                        out_has=["attn train: vit, 28 × 28 images in 16 patches of 7 × 7, d 64, "
                                 "MLP 128, 4 heads, 2 blocks, dropout 0.1, Adam lr 0.001, batch 8; "
                                 "40 training images, 20 test",
                                 "epoch   train loss  val loss  val acc"])
    lines = [ln for ln in out.splitlines() if ln[:1] in "12"]
    check(len(lines) == 2, "train --task vit: two epoch lines: %r" % out)
    with open(out_json) as f:
        doc = json.load(f)
    check(doc["task"] == "vit" and doc["train_size"] == 40 and doc["test_size"] == 20
          and doc["parameters"] == 71562, "vit --json: task, sizes, parameters: %r"
          % {k: doc.get(k) for k in ("task", "train_size", "test_size", "parameters")})
    check([h["epoch"] for h in doc["history"]] == [1, 2]
          and all(set(h) == {"epoch", "train_loss", "val_loss", "val_acc"}
                  for h in doc["history"]), "vit --json: history %r" % doc["history"])
    conf = doc["confusion"]
    check(len(conf) == 10 and all(len(r) == 10 for r in conf)
          and sum(map(sum, conf)) == 20, "vit --json: a 10 × 10 confusion of 20: %r" % conf)
    # each row holds its class's test images (labels 3i mod 10: two each)
    check([sum(r) for r in conf] == [2] * 10, "vit --json: confusion rows %r" % conf)
    check(abs(doc["accuracy"] - sum(conf[i][i] for i in range(10)) / 20) < 1e-9
          and doc["accuracy"] == doc["history"][-1]["val_acc"],
          "vit --json: accuracy %r against the confusion's diagonal" % doc["accuracy"])
    check(doc["labels"][0] == "t-shirt" and doc["labels"][9] == "ankle boot",
          "vit --json: d2l's text_labels %r" % doc["labels"])

    # the same bytes on two threads, and from the plain (not gzip'd) files
    for extra, data in [(["--threads", "2"], good), (["--threads", "1"], plain)]:
        other = os.path.join(tmp, "other.json")
        expect(["train", "--data", data, "--task", "vit", "--epochs", "2", "--batch-size", "8",
                "--json", other] + extra, 0)
        with open(out_json, "rb") as a, open(other, "rb") as b:
            check(a.read() == b.read(), "vit: %s %s: other bytes than --threads 1" % (data, extra))

    # --png: 8 test images (here the 20's first 8) in rows, columns image,
    # 4 heads, rollout: 10 + 6 × (112 + 10) wide, 26 + 8 × (22 + 112 + 10) high
    png = os.path.join(tmp, "cls.png")
    expect(["train", "--data", good] + small + ["--png", png], 0,
           out_has=["wrote %s: the <cls> query's attention over the patches (last block's "
                    "heads, rollout), 742×1178 px" % png])
    check(png_info(png)[:2] == (742, 1178), "vit --png: size %r" % (png_info(png),))
    # 3 test images: 3 rows
    expect(["train", "--data", good] + small + ["--png", png, "--test-size", "3"], 0,
           out_has=["742×458 px"])

    # --plot: d2l's board, its three curves against the epoch; the title's
    # accuracy is the run's last (--json's), what the figure draws read
    # back through ATTN_FIGURE_TEXT
    plot_png, texts = os.path.join(tmp, "board.png"), os.path.join(tmp, "texts.txt")
    plot_json = os.path.join(tmp, "board.json")
    expect(["train", "--data", good, "--task", "vit", "--epochs", "2", "--batch-size", "8",
            "--plot", plot_png, "--json", plot_json], 0, env={"ATTN_FIGURE_TEXT": texts})
    with open(plot_json) as f:
        acc = json.load(f)["history"][-1]["val_acc"]
    with open(texts, encoding="utf-8") as f:
        drawn = f.read().splitlines()
    check("ViT on Fashion-MNIST: test accuracy %.4f after 2 epochs" % acc in drawn
          and {"train_loss", "val_loss", "val_acc", "epoch"} <= set(drawn),
          "vit --plot: title and legend %r" % drawn[:6])
    check(png_info(plot_png)[:2] == (900, 375), "vit --plot: size %r" % (png_info(plot_png),))

    # --confusion-png: one 10 × 10 heatmap; the option is vit's alone
    conf_png = os.path.join(tmp, "confusion.png")
    expect(["train", "--data", good] + small + ["--confusion-png", conf_png], 0,
           out_has=["wrote %s: the confusion matrix, " % conf_png])
    check(png_info(conf_png)[0] > 400, "vit --confusion-png: %r" % (png_info(conf_png),))
    expect(["train", "--task", "apple", "--confusion-png", conf_png], 2,
           err=T + "--confusion-png is for --task vit")

    # --batch-size 0: the whole training set a step (40 images: one step)
    rc, out, _ = expect(["train", "--data", good, "--task", "vit", "--epochs", "1",
                         "--batch-size", "0"], 0, out_has=["batch 40; 40 training images"])

    # --json - : the document on stdout, the report on stderr
    rc, out, err = run(["train", "--data", good] + small + ["--json", "-", "--train-size", "16",
                                                          "--test-size", "10"])
    check(rc == 0 and json.loads(out)["train_size"] == 16 and json.loads(out)["test_size"] == 10,
          "vit --json -: %r %r" % (out[:200], err))

    # --save, then --load --epochs 0: the same model, the same numbers
    model = os.path.join(tmp, "vit.json")
    saved = os.path.join(tmp, "saved.json")
    expect(["train", "--data", good] + small + ["--save", model, "--json", saved], 0,
           out_has=["wrote %s: the model (d2l's state_dict names)" % model])
    with open(model) as f:
        m = json.load(f)
    sd = m["state_dict"]
    names = list(sd)
    check(names[:4] == ["cls_token", "pos_embedding", "patch_embedding.conv.weight",
                        "patch_embedding.conv.bias"]
          and "blks.1.attention.W_o.weight" in sd and "blks.0.mlp.dense2.bias" in sd
          and names[-4:] == ["head.0.weight", "head.0.bias", "head.1.weight", "head.1.bias"]
          and len(names) == 4 + 2 * 12 + 4, "vit --save: state_dict names %r" % names)
    check(len(sd["patch_embedding.conv.weight"]) == 64
          and len(sd["patch_embedding.conv.weight"][0]) == 1
          and len(sd["patch_embedding.conv.weight"][0][0]) == 7
          and len(sd["pos_embedding"][0]) == 17, "vit --save: conv (64, 1, 7, 7), pos (1, 17, 64)")
    loaded = os.path.join(tmp, "loaded.json")
    expect(["train", "--data", good, "--task", "vit", "--load", model, "--epochs", "0",
            "--json", loaded], 0)
    with open(saved) as a, open(loaded) as b:
        s, l = json.load(a), json.load(b)
    check(s["accuracy"] == l["accuracy"] and s["val_loss"] == l["val_loss"]
          and s["confusion"] == l["confusion"] and l["history"] == [],
          "vit --load: %r against the saved run's %r" % ((l["accuracy"], l["val_loss"]),
                                                        (s["accuracy"], s["val_loss"])))
    # a model file of another kind, and a broken one
    expect(["train", "--data", good, "--task", "vit", "--load", saved, "--epochs", "0"], 1,
           err=T + saved + ": $.config: unknown key (a ViT model file has command, task, "
           "img_size, patch_size, num_hiddens, mlp_num_hiddens, num_heads, num_blks, channels, "
           "num_classes, labels, state_dict)")
    del m["state_dict"]["head.1.bias"]
    broken = os.path.join(tmp, "broken.json")
    with open(broken, "w") as f:
        json.dump(m, f)
    expect(["train", "--data", good, "--task", "vit", "--load", broken, "--epochs", "0"], 1,
           err=T + broken + ": $.state_dict: missing \"head.1.bias\"")

