#!/usr/bin/python3
"""Reference values of attn pool (d2l zh 10.2, d2l.ai 11.2) from PyTorch.

Run with Debian's python (apt-get install python3-torch), given attn:
    /usr/bin/python3 scripts/gen_pool_ref.py build-dev/attn tests/ref/pool

For each case, attn writes its data and starting w (`attn pool ... --json
-`: x_train, y_train, x_test, y_truth and w_init, all float32 values); this
script then re-implements the section in plain torch, float64:
  - average pooling: every weight 1/n;
  - nonparametric: u = (x_test - x_i) / sigma, the Gaussian as
    softmax(-u^2/2), boxcar (|u| < 1), constant, Epanechikov
    max(0, 1 - |u|), each normalised to sum 1;
  - d2l's NWKernelRegression: softmax(-((q - k) * w)^2 / 2) over the keys,
    the training run of the section (each training point's keys and
    values the other n - 1, MSELoss(reduction='none') summed, SGD, one
    full-batch step an epoch), recording w, the loss and autograd's dL/dw
    at every step; then the test inputs with every training point as keys.
It stores the inputs, every prediction, the weight rows of every 5th test
input, the losses, the steps and the learned w; tests/test_pool.c
recomputes them with src/nn/attention/pool.c and compares (1e-5).

--method additive (ADDITIVE_CASES, files additive_*.json): attn gives its
data and the start of W_k.weight, W_q.weight and w_v.weight (`--epochs 0
--json -`); the same pooling is built from nn.Linear layers, d2l's
AdditiveAttention's on inputs of size 1, loaded with that start and
trained as parametric is, recording at each epoch the loss, every
parameter before the step and autograd's gradient of each; then the test
inputs' predictions and weight rows with every training point as keys.
"""
import json
import os
import subprocess
import sys

import torch

torch.set_default_dtype(torch.float64)

CASES = [
    # name, attn's options (data, w_init), nonparametric (kernel, sigma), epochs, lr
    ("zh_default", ["--seed", "0"],
     [("gaussian", 1.0), ("gaussian", 0.1), ("boxcar", 0.5), ("constant", 0.5),
      ("epanechikov", 0.5), ("gaussian", 0.5)], 5, 0.5),
    ("en_seed3", ["--edition", "en", "--seed", "3"],
     [("gaussian", 0.2), ("boxcar", 0.2), ("epanechikov", 1.0)], 8, 0.3),
    ("zh_n20_w2", ["--seed", "7", "--n-train", "20", "--w-init", "2"],
     [("boxcar", 0.1)], 5, 0.5),
]
ROWS_EVERY = 5

# --method additive: name, attn's options (data and the start), h, epochs, lr
ADDITIVE_CASES = [
    ("additive_zh_h8", ["--seed", "0"], 8, 6, 0.5),
    ("additive_en_h3", ["--edition", "en", "--seed", "3", "--n-train", "15"], 3, 8, 0.05),
    ("additive_zh_h5", ["--seed", "11", "--n-train", "23"], 5, 7, 0.01),
]


def kernel_weights(name, x_test, x_train, sigma):
    u = (x_test.reshape(-1, 1) - x_train.reshape(1, -1)) / sigma  # (m, n)
    if name == "gaussian":
        return torch.softmax(-u ** 2 / 2, dim=1)
    if name == "boxcar":
        k = (u.abs() < 1).double()
    elif name == "constant":
        k = torch.ones_like(u)
    else:
        k = torch.clamp(1 - u.abs(), min=0)
    s = k.sum(dim=1, keepdim=True)
    return torch.where(s > 0, k / torch.where(s > 0, s, torch.ones_like(s)), k)


class NWKernelRegression(torch.nn.Module):
    def __init__(self, w0):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([float(w0)]))

    def forward(self, queries, keys, values):
        # queries (m,), keys and values (m, k): each query its own keys
        scores = -((queries.reshape(-1, 1) - keys) * self.w) ** 2 / 2
        self.attention_weights = torch.softmax(scores, dim=1)
        return (self.attention_weights * values).sum(dim=1)


def leave_one_out(v):
    n = v.shape[0]
    keep = ~torch.eye(n, dtype=torch.bool)
    return v.repeat((n, 1))[keep].reshape(n, n - 1)


def train_steps(net, x, y, epochs, lr, record):
    """The section's training run: each training point's keys and values
    the other n - 1, the squared errors summed, SGD, one full-batch step
    an epoch; record(net, loss) of every step, before it."""
    keys, values = leave_one_out(x), leave_one_out(y)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    steps = []
    for _ in range(epochs):
        opt.zero_grad()
        loss = ((net(x, keys, values) - y) ** 2).sum()
        loss.backward()
        steps.append(record(net, loss))
        opt.step()
    return steps


def predict(net, xt, x, y):
    """The test inputs xt, every training point (x, y) a key and value."""
    return net(xt, x.repeat((len(xt), 1)), y.repeat((len(xt), 1)))


def train(x, y, w0, epochs, lr):
    net = NWKernelRegression(w0)
    steps = train_steps(net, x, y, epochs, lr, lambda net, loss: {
        "w": net.w.item(), "loss": loss.item(), "dw": net.w.grad.item()})
    return net, steps


def case(attn, name, opts, nonparam, epochs, lr):
    args = [attn, "pool", "--method", "average,nonparametric,parametric",
            "--epochs", "0", "--json", "-"] + opts
    data = json.loads(subprocess.run(args, check=True, capture_output=True).stdout)
    x, y = torch.tensor(data["x_train"]), torch.tensor(data["y_train"])
    xt = torch.tensor(data["x_test"])
    w0 = data["results"][-1]["w_init"]
    rows = list(range(0, len(xt), ROWS_EVERY))
    out = {"case": name, "attn_options": opts, "x_train": data["x_train"],
           "y_train": data["y_train"], "x_test": data["x_test"], "w_init": w0,
           "epochs": epochs, "lr": lr, "rows": rows, "results": []}
    for kname, sigma in nonparam:
        a = kernel_weights(kname, xt, x, sigma)
        yhat = [v if a[j].sum() > 0 else None for j, v in enumerate((a @ y).tolist())]
        out["results"].append({"kernel": kname, "sigma": sigma, "y_hat": yhat,
                               "weights": a[rows].tolist()})
    net, steps = train(x, y, w0, epochs, lr)
    with torch.no_grad():
        n = len(x)
        yhat = predict(net, xt, x, y)
        out["parametric"] = {"steps": steps, "w": net.w.item(), "y_hat": yhat.tolist(),
                             "weights": net.attention_weights[rows].tolist()}
        out["average"] = {"y_hat": y.mean().item(), "weight": 1.0 / n}
    return out


class AdditivePool(torch.nn.Module):
    """10.3's additive score as the pooling's attention, q and k scalars:
    a(q, k) = w_v^T tanh(W_q q + W_k k), d2l's AdditiveAttention's layers
    (W_k, W_q, w_v, no biases) on inputs of size 1."""

    def __init__(self, h):
        super().__init__()
        self.W_k = torch.nn.Linear(1, h, bias=False)
        self.W_q = torch.nn.Linear(1, h, bias=False)
        self.w_v = torch.nn.Linear(h, 1, bias=False)

    def forward(self, queries, keys, values):
        # queries (m,), keys and values (m, K): each query its own keys
        features = torch.tanh(self.W_q(queries.reshape(-1, 1, 1)) + self.W_k(keys.unsqueeze(-1)))
        scores = self.w_v(features).squeeze(-1)  # (m, K)
        self.attention_weights = torch.softmax(scores, dim=1)
        return (self.attention_weights * values).sum(dim=1)


def state(net):
    return {k: v.tolist() for k, v in net.state_dict().items()}


def additive_case(attn, name, opts, h, epochs, lr):
    """attn's data and start, then the training step by step in autograd:
    the loss, every parameter before the step and its gradient."""
    args = [attn, "pool", "--method", "additive", "--score-hiddens", str(h), "--epochs", "0",
            "--json", "-"] + opts
    data = json.loads(subprocess.run(args, check=True, capture_output=True).stdout)
    x, y = torch.tensor(data["x_train"]), torch.tensor(data["y_train"])
    xt = torch.tensor(data["x_test"])
    start = data["results"][0]["state_dict_init"]
    net = AdditivePool(h)
    net.load_state_dict({k: torch.tensor(v) for k, v in start.items()})
    steps = train_steps(net, x, y, epochs, lr, lambda net, loss: {
        "loss": loss.item(), "state_dict": state(net),
        "grad": {k: p.grad.tolist() for k, p in net.named_parameters()}})
    rows = list(range(0, len(xt), ROWS_EVERY))
    with torch.no_grad():
        yhat = predict(net, xt, x, y)
        return {"case": name, "attn_options": opts, "x_train": data["x_train"],
                "y_train": data["y_train"], "x_test": data["x_test"], "score_hiddens": h,
                "epochs": epochs, "lr": lr, "state_dict_init": start, "steps": steps,
                "state_dict": state(net), "y_hat": yhat.tolist(), "rows": rows,
                "weights": net.attention_weights[rows].tolist()}


def main():
    attn, outdir = sys.argv[1], sys.argv[2]
    for c in CASES:
        with open(os.path.join(outdir, c[0] + ".json"), "w") as f:
            json.dump(case(attn, *c), f, indent=1)
            f.write("\n")
    for c in ADDITIVE_CASES:
        with open(os.path.join(outdir, c[0] + ".json"), "w") as f:
            json.dump(additive_case(attn, *c), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
