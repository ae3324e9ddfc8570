#!/usr/bin/python3
"""gen_attention_grad_ref.py — PyTorch references for the backward pass of
multi-head attention with additive scoring (attention_backward.h's
mha_backward_additive), written under tests/ref/attention_grad/.

For each additive fixture of tests/ref/attention (written by
gen_attention_ref.py: inputs, weights, mask), the loss
    L = sum(output * dout),  dout (B, Nq, H) drawn from a fixed seed,
is differentiated by torch.autograd in float64 (the C backward runs in
double), giving d queries, d keys, d values and the gradient of every
weight. Run with /usr/bin/python3 (Debian's python3-torch) from the
repository's root; the tests only read the JSON.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_attention_ref import multihead  # noqa: E402

SRC = "tests/ref/attention"
DST = "tests/ref/attention_grad"
CASES = ["12_additive_nomask", "13_additive_valid_lens_1d", "14_additive_valid_lens_2d",
         "15_additive_causal_selfattn"]


def main():
    os.makedirs(DST, exist_ok=True)
    g = torch.Generator().manual_seed(42)
    for name in CASES:
        with open(os.path.join(SRC, name + ".json")) as f:
            fx = json.load(f)
        inp = fx["input"]
        self_att = fx["command"] == "selfattn"
        T = lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True)  # noqa: E731
        if self_att:
            X = T(inp["X"] if "X" in inp else inp["queries"])
            queries = keys = values = X
            leaves = {"X": X}
        else:
            queries, keys, values = T(inp["queries"]), T(inp["keys"]), T(inp["values"])
            leaves = {"queries": queries, "keys": keys, "values": values}
        sd = {k: T(v) for k, v in inp["state_dict"].items()}
        vl = inp.get("valid_lens")
        vl = torch.tensor(vl) if vl is not None else None
        out, _ = multihead(queries, keys, values, sd, inp["num_heads"], "additive",
                           fx["options"]["causal"], vl)
        dout = torch.randn(out.shape, generator=g, dtype=torch.float32).double()
        (out * dout).sum().backward()
        grads = {k: v.grad.tolist() for k, v in leaves.items()}
        grads.update({k: v.grad.tolist() for k, v in sd.items()})
        with open(os.path.join(DST, name + ".json"), "w") as f:
            json.dump({"fixture": name + ".json", "dout": dout.float().tolist(),
                       "grads": grads}, f)
        print(name, "written")


if __name__ == "__main__":
    main()
