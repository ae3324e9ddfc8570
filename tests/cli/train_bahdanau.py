"""Group train_bahdanau: attn train --arch bahdanau (SPEC §11, d2l's Seq2Seq
with Bahdanau attention) and attn translate on its model: the options it
refuses, the model file's d2l names and shapes, a model file of the other
architecture or with a GRU weight missing, the attention of each step
(one map: rows sum to 1, nothing on the padding), and the grammar learned;
SPEC §15's --rnn lstm and --score dot: their refusals, their model files
(nn.LSTM's shapes, no additive parameters) and the files refused."""
import json
import os

from .common import check, expect, run, slow_build, write


def usage_errors():
    T = "attn train: "
    for opt, why in [("--heads", "Bahdanau's model has one attention (additive, one head)"),
                     ("--ffn", "Bahdanau's model has no FFN: its layers are GRUs"),
                     ("--dropout", "attn trains Bahdanau's model without dropout")]:
        expect(["train", "--task", "translate", "--arch", "bahdanau", opt, "0.5" if opt ==
                "--dropout" else "2"], 2,
               err=T + "%s is not used with --arch bahdanau: %s" % (opt, why))
    expect(["train", "--task", "translate", "--arch", "bahdanau", "--bias"], 2,
           err=T + "--bias is not used with --arch bahdanau: Bahdanau's attention has no "
           "biases (W_q, W_k, w_v)")


def rnn_score_errors():
    """--rnn (SPEC §15): Bahdanau's, refused elsewhere; --score (SPEC §15
    and §16) is either model's (the Transformer's: train_compare_arch.py's
    tfm_score)."""
    T = "attn train: "
    expect(["train", "--task", "translate", "--rnn", "lstm"], 2,
           err=T + "--rnn is for --arch bahdanau: the Transformer has no recurrent layers")
    expect(["train", "--task", "translate", "--arch", "transformer", "--rnn", "lstm"], 2,
           err=T + "--rnn is for --arch bahdanau, not --arch transformer: the Transformer has "
           "no recurrent layers")
    expect(["train", "--task", "translate", "--arch", "bahdanau", "--rnn", "gru1"], 2,
           err=T + "--rnn: expected gru or lstm, got 'gru1'")
    expect(["train", "--task", "translate", "--arch", "bahdanau", "--score", "mult"], 2,
           err=T + "--score: expected additive or dot, got 'mult'")
    expect(["train", "--task", "reverse", "--rnn", "lstm"], 2,
           err=T + "--rnn is for translation (--task translate, or --data of sentence pairs)")


def lstm_and_dot(tmp, pairs, gru_saved):
    """--rnn lstm and --score dot: trained, saved with nn.LSTM's shapes and
    "rnn", without the additive score's parameters, read back by translate
    and --load; files with an unknown rnn or score, or parameters of the
    other kind, refused (the JSON path, expected against found)."""
    X = "attn translate: "
    lstm, dot = os.path.join(tmp, "lstm.json"), os.path.join(tmp, "dot.json")
    expect(["train", "--data", pairs, "--arch", "bahdanau", "--rnn", "lstm", "--steps", "40",
            "--min-freq", "1", "--save", lstm], 0,
           out_has=["Seq2Seq with Bahdanau attention, 1 LSTM layer a side, d 32"])
    expect(["train", "--data", pairs, "--arch", "bahdanau", "--score", "dot", "--steps", "40",
            "--min-freq", "1", "--save", dot], 0,
           out_has=["Seq2Seq with Bahdanau attention, 1 GRU layer a side, d 32, dot-product "
                    "attention"])
    with open(lstm) as fh:
        ls = json.load(fh)
    with open(dot) as fh:
        ds = json.load(fh)
    shapes = {k: [len(v), len(v[0]) if isinstance(v[0], list) else None]
              for k, v in ls["state_dict"].items()}
    want = {"encoder.rnn.weight_ih_l0": [128, 32], "encoder.rnn.weight_hh_l0": [128, 32],
            "encoder.rnn.bias_ih_l0": [128, None], "decoder.rnn.weight_ih_l0": [128, 64],
            "decoder.rnn.bias_hh_l0": [128, None]}
    check(ls.get("rnn") == "lstm" and "score" not in ls and
          all(shapes.get(k) == v for k, v in want.items()),
          "train --rnn lstm --save: \"rnn\": \"lstm\", nn.LSTM's shapes (4d rows): %r"
          % {k: shapes.get(k) for k in want})
    check(ds.get("score") == "dot" and "rnn" not in ds and
          not any(k.startswith("decoder.attention.") for k in ds["state_dict"]) and
          len(ds["state_dict"]) == len(gru_saved["state_dict"]) - 3,
          "train --score dot --save: \"score\": \"dot\", no W_q, W_k, w_v")
    expect(["translate", "--input", lstm, "the big dog"], 0,
           out_has=["Seq2Seq with Bahdanau attention, 1 LSTM layer a side, d 32, num_steps"])
    expect(["translate", "--input", dot, "the big dog"], 0,
           out_has=["1 GRU layer a side, d 32, dot-product attention, num_steps"])
    expect(["train", "--data", pairs, "--load", lstm, "--steps", "0"], 0,
           out_has=["1 LSTM layer a side, d 32, from --load"])
    rc, out, err = expect(["train", "--data", pairs, "--load", lstm, "--steps", "0", "--json",
                           "-"], 0)
    doc = json.loads(out) if rc == 0 else {}
    check(doc.get("arch") == "bahdanau" and doc.get("rnn") == "lstm" and "score" not in doc,
          "train --load of an LSTM model: --json's arch and rnn: %r"
          % {k: doc.get(k) for k in ("arch", "rnn", "score")})
    expect(["train", "--data", pairs, "--load", lstm, "--rnn", "gru"], 2,
           err="attn train: --rnn is read from the model file of --load")
    bad = [(dict(ls, rnn="lstm2"), "$.rnn: expected \"gru\" or \"lstm\", got \"lstm2\""),
           (dict(ls, rnn=3), "$.rnn: expected \"gru\" or \"lstm\", got a number"),
           (dict(ls, score="mult"),
            "$.score: expected \"additive\" or \"dot\", got \"mult\""),
           (dict(gru_saved, rnn="lstm"), "$.state_dict[\"encoder.rnn.weight_ih_l0\"]: expected "
            "shape (128, 32), got (96, 32)"),
           (dict(ls, rnn="gru"), "$.state_dict[\"encoder.rnn.weight_ih_l0\"]: expected "
            "shape (96, 32), got (128, 32)"),
           (dict(gru_saved, score="dot"), "$.state_dict[\"decoder.attention.W_k.weight\"]: not "
            "a parameter of this model"),
           (dict(ds, score="additive"), "$.state_dict: missing \"decoder.attention.W_k.weight\"")]
    for i, (doc, msg) in enumerate(bad):
        path = write(tmp, "bad%d.json" % i, json.dumps(doc))
        expect(["translate", "--input", path, "the big dog"], 1, err=X + path + ": " + msg)


def model_file(tmp, model, d):
    """The saved model: SPEC §11's keys, d2l's names and PyTorch's shapes."""
    with open(model) as fh:
        saved = json.load(fh)
    sd = saved.get("state_dict", {})
    shapes = {k: [len(v), len(v[0]) if isinstance(v[0], list) else None] for k, v in sd.items()}
    check(saved.get("arch") == "bahdanau" and saved.get("num_heads") == 1
          and saved.get("num_layers") == 1 and "ffn_num_hiddens" not in saved,
          "train --arch bahdanau --save: arch, one attention, no FFN: %r"
          % {k: saved.get(k) for k in ("arch", "num_heads", "num_layers")})
    want = {"encoder.rnn.weight_ih_l0": [3 * d, d], "encoder.rnn.weight_hh_l0": [3 * d, d],
            "encoder.rnn.bias_ih_l0": [3 * d, None], "decoder.attention.W_k.weight": [d, d],
            "decoder.attention.W_q.weight": [d, d], "decoder.attention.w_v.weight": [1, d],
            "decoder.rnn.weight_ih_l0": [3 * d, 2 * d], "decoder.rnn.bias_hh_l0": [3 * d, None]}
    check(all(shapes.get(k) == v for k, v in want.items()),
          "train --arch bahdanau --save: nn.GRU's and AdditiveAttention's shapes: %r"
          % {k: shapes.get(k) for k in want})
    order = list(sd)
    check(order[:2] == ["encoder.embedding.weight", "encoder.rnn.weight_ih_l0"]
          and order[-2:] == ["decoder.dense.weight", "decoder.dense.bias"]
          and order.index("decoder.attention.W_k.weight") < order.index("decoder.embedding.weight"),
          "train --arch bahdanau --save: state_dict order %r" % order)
    return saved


def broken_models(tmp, saved, transformer_json):
    X = "attn translate: "
    nogru = dict(saved, state_dict=dict(saved["state_dict"]))
    del nogru["state_dict"]["encoder.rnn.bias_hh_l0"]
    path = write(tmp, "nogru.json", json.dumps(nogru))
    expect(["translate", "--input", path, "the big dog"], 1,
           err=X + "%s: $.state_dict: missing \"encoder.rnn.bias_hh_l0\"" % path)
    # a Transformer's file relabelled: its FFN has no place in Bahdanau's model
    other = write(tmp, "other.json", json.dumps(dict(transformer_json, arch="bahdanau")))
    expect(["translate", "--input", other, "the big dog"], 1,
           err=X + "%s: $.num_heads: 4, but Bahdanau's model (\"arch\": \"bahdanau\") has one "
           "attention"
           % other)
    unknown = write(tmp, "unknown.json", json.dumps(dict(saved, arch="lstm")))
    expect(["translate", "--input", unknown, "the big dog"], 1,
           err=X + "%s: $.arch: expected \"transformer\" or \"bahdanau\", got \"lstm\"" % unknown)


def translate_views(tmp, model):
    rc, out, err = expect(["translate", "--input", model, "the big dog"], 0,
                          out_has=["Seq2Seq with Bahdanau attention, 1 GRU layer a side, d 32",
                                   "the query s(t′−1)", "the attention:"],
                          out_not=["block 1, head 1"])
    expect(["translate", "--input", model, "--all", "the big dog"], 2,
           err="attn translate: --all: %s is Bahdanau's model, which has no self-attention "
           "(its one attention is the cross-attention shown without --all)" % model)
    rc, out, err = expect(["translate", "--input", model, "--json", "-", "the big dog"], 0)
    doc = json.loads(out) if rc == 0 else {}
    att = doc.get("cross_attention", [])
    src = doc.get("source", [])
    rows = att[0][0] if att and att[0] else []
    check(doc.get("model", {}).get("arch") == "bahdanau" and len(att) == 1 and len(att[0]) == 1
          and len(rows) == len(doc.get("target", [])) and src == ["the", "big", "dog", "<eos>"]
          and all(len(r) == 4 and abs(sum(r) - 1.0) < 1e-5 for r in rows),
          "translate --json: one attention map, target × source, rows summing to 1: %r" % doc)


def group_train_bahdanau(tmp):
    usage_errors()
    rnn_score_errors()
    pairs = write(tmp, "pairs.json", json.dumps({
        "pairs": [["the red car", "la voiture rouge"], ["a big dog", "un grand chien"],
                  ["the big car", "la grande voiture"], ["a red dog", "un chien rouge"],
                  ["the big dog", "le grand chien"]],
        "heldout": {"pairs": [["the big dog", "le grand chien"]]}}))
    model, tmodel = os.path.join(tmp, "b.json"), os.path.join(tmp, "t.json")
    expect(["train", "--data", pairs, "--arch", "bahdanau", "--steps", "40", "--min-freq", "1",
            "--save", model], 0,
           out_has=["Seq2Seq with Bahdanau attention, 1 GRU layer a side, d 32",
                    "at step t′ the query is s(t′−1)", "the big dog => "])
    expect(["train", "--data", pairs, "--arch", "bahdanau", "--load", model], 2,
           err="attn train: --arch is read from the model file of --load")
    saved = model_file(tmp, model, 32)
    expect(["train", "--data", pairs, "--steps", "2", "--min-freq", "1", "--save", tmodel], 0)
    with open(tmodel) as fh:
        broken_models(tmp, saved, json.load(fh))
    translate_views(tmp, model)
    lstm_and_dot(tmp, pairs, saved)
    # d2l's fra.txt lines train it too
    fra = write(tmp, "fra.txt", "Go.\tVa !\nHi.\tSalut !\nRun!\tCours !\nRun!\tCourez !\n")
    rc, out, err = expect(["train", "--data", fra, "--arch", "bahdanau", "--steps", "10",
                           "--min-freq", "1", "--json", "-"], 0)
    doc = json.loads(out) if rc == 0 else {}
    check(doc.get("arch") == "bahdanau" and len(doc.get("history", [])) == 2
          and doc["history"][-1]["loss"] < doc["history"][0]["loss"],
          "train --data fra.txt --arch bahdanau: a run of its own, the loss falling: %r" % doc)
    # --load continues a Bahdanau model: its arch from the file
    rc, out, err = expect(["train", "--data", pairs, "--load", model, "--steps", "0", "--json",
                           "-"], 0)
    check(rc == 0 and json.loads(out).get("arch") == "bahdanau",
          "train --load of a Bahdanau model: --json's arch")

    if slow_build("Bahdanau's model learning the grammar (600 steps)"):
        return
    rc, out, err = expect(["train", "--task", "translate", "--arch", "bahdanau", "--json", "-"],
                          0)
    f = json.loads(out)["final"] if rc == 0 else {}
    check(f.get("bleu", 0) >= 0.95 and f.get("exact", 0) >= 0.9 and f.get("alignment", 0) >= 0.6,
          "train --arch bahdanau: final %r" % f)
    outs = [run(["train", "--task", "translate", "--arch", "bahdanau", "--steps", "30",
                 "--threads", n, "--json", "-"])[1] for n in ("1", "2")]
    check(outs[0] == outs[1] and outs[0], "train --arch bahdanau: the same JSON with 1 and 2 "
          "threads")
