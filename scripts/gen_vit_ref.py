#!/usr/bin/python3
"""The PyTorch reference of attn's Vision Transformer (src/nn/vision/vit.c):
d2l.ai 11.8's ViT written out below (PatchEmbedding, ViTMLP, ViTBlock, ViT,
with d2l's MultiHeadAttention and DotProductAttention), at tiny sizes with
dropout 0, its weights, a batch, the logits, the loss, every parameter's
gradient, and two SGD steps (d2l's Classifier: SGD, lr 0.1) into
tests/ref/vit/vit_ref.json, which tests/test_vit.c reads.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/gen_vit_ref.py
"""
import json
import math
import os
import sys

import torch
from torch import nn
from torch.nn import functional as F


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = F.softmax(scores, dim=-1)  # valid_lens None
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens=None):
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        output = self.attention(queries, keys, values, valid_lens)
        return self.W_o(transpose_output(output, self.num_heads))


class PatchEmbedding(nn.Module):
    def __init__(self, img_size, patch_size, num_hiddens, channels):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.conv = nn.Conv2d(channels, num_hiddens, kernel_size=patch_size,
                              stride=patch_size)

    def forward(self, X):
        return self.conv(X).flatten(2).transpose(1, 2)


class ViTMLP(nn.Module):
    def __init__(self, num_inputs, mlp_num_hiddens, mlp_num_outputs, dropout):
        super().__init__()
        self.dense1 = nn.Linear(num_inputs, mlp_num_hiddens)
        self.gelu = nn.GELU()
        self.dropout1 = nn.Dropout(dropout)
        self.dense2 = nn.Linear(mlp_num_hiddens, mlp_num_outputs)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout2(self.dense2(self.dropout1(self.gelu(self.dense1(x)))))


class ViTBlock(nn.Module):
    def __init__(self, num_hiddens, norm_shape, mlp_num_hiddens, num_heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(norm_shape)
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout)
        self.ln2 = nn.LayerNorm(norm_shape)
        self.mlp = ViTMLP(num_hiddens, mlp_num_hiddens, num_hiddens, dropout)

    def forward(self, X):
        X = X + self.attention(*([self.ln1(X)] * 3))
        return X + self.mlp(self.ln2(X))


class ViT(nn.Module):
    def __init__(self, img_size, patch_size, num_hiddens, mlp_num_hiddens, num_heads,
                 num_blks, emb_dropout, blk_dropout, channels=1, num_classes=10):
        super().__init__()
        self.patch_embedding = PatchEmbedding(img_size, patch_size, num_hiddens, channels)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, num_hiddens))
        num_steps = self.patch_embedding.num_patches + 1
        self.pos_embedding = nn.Parameter(torch.randn(1, num_steps, num_hiddens))
        self.dropout = nn.Dropout(emb_dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module(f"{i}", ViTBlock(num_hiddens, num_hiddens, mlp_num_hiddens,
                                                  num_heads, blk_dropout))
        self.head = nn.Sequential(nn.LayerNorm(num_hiddens), nn.Linear(num_hiddens, num_classes))

    def forward(self, X):
        X = self.patch_embedding(X)
        X = torch.cat((self.cls_token.expand(X.shape[0], -1, -1), X), 1)
        X = self.dropout(X + self.pos_embedding)
        for blk in self.blks:
            X = blk(X)
        return self.head(X[:, 0])


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "ref", "vit", "vit_ref.json")
    torch.manual_seed(11)
    cfg = dict(img=8, patch=4, hiddens=8, ffn=12, heads=2, layers=2, channels=1, classes=10,
               batch=3, lr=0.1, steps=2)
    model = ViT(cfg["img"], cfg["patch"], cfg["hiddens"], cfg["ffn"], cfg["heads"],
                cfg["layers"], 0.0, 0.0, cfg["channels"], cfg["classes"])
    # LayerNorms away from 1 and 0 and <cls> away from zeros, so that every
    # gradient formula is exercised
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("ln1.weight", "ln2.weight", "head.0.weight")):
                p.copy_(1 + 0.3 * torch.randn_like(p))
            elif name.endswith(("ln1.bias", "ln2.bias", "head.0.bias")) or name == "cls_token":
                p.copy_(0.2 * torch.randn_like(p))
    images = torch.rand(cfg["batch"], cfg["channels"], cfg["img"], cfg["img"])
    labels = torch.tensor([3, 0, 9])
    params0 = {n: flat(p) for n, p in model.named_parameters()}
    shapes = {n: list(p.shape) for n, p in model.named_parameters()}
    order = [n for n, _ in model.named_parameters()]
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    grads = {n: flat(p.grad) for n, p in model.named_parameters()}
    record = {"logits": flat(logits), "loss": float(loss)}
    # d2l's Classifier steps: SGD, lr 0.1, on the same batch
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    opt.step()
    losses = []
    for _ in range(cfg["steps"] - 1):
        opt.zero_grad()
        l2 = F.cross_entropy(model(images), labels)
        losses.append(float(l2))
        l2.backward()
        opt.step()
    after = {n: flat(p) for n, p in model.named_parameters()}
    ref = {"config": cfg, "order": order, "shapes": shapes, "params": params0,
           "images": flat(images), "labels": labels.tolist(), "logits": record["logits"],
           "loss": record["loss"], "grads": grads, "step_losses": losses,
           "params_after": after}
    with open(out, "w") as f:
        json.dump(ref, f)
        f.write("\n")


if __name__ == "__main__":
    main()
