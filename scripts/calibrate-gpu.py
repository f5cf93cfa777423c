#!/usr/bin/env python3
"""GPU calibration of zerowiz's peak model (issue 23), for a session that has a GPU.

Runs one training step (forward, backward, optimizer step, zero_grad) of a small DiT-shaped transformer with
torch on a CUDA GPU, for the configurations the peak model distinguishes (pure bf16 or fp32 master weights,
torch's foreach AdamW or 8-bit-free SGD, LoRA-like frozen weights, gradient checkpointing on and off, short
and long sequences), and writes each measurement as a row in the format of
__tests__/fixtures/peak-calibration.json (family "dit", reading torch max_memory_reserved, stage 0: no
DeepSpeed). Append the rows to the fixture's "rows" and run `npx vitest run __tests__/estimate/peak-calibration.test.ts`:
the test computes zerowiz's peak for each and checks the ±25% goal. Nothing here is tuned to a row.

    python scripts/calibrate-gpu.py --out calib-rows.json            # all configurations
    python scripts/calibrate-gpu.py --out calib-rows.json --quick    # two configurations

The block is the catalog's `dit` layout (adaLN modulation, self-attention through SDPA, cross-attention to
text tokens, GELU MLP); its LoRA-like variant trains only the attention projections' low-rank factors.
"""
import argparse
import datetime
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, h, heads, ffn):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(h, elementwise_affine=False)
        self.qkv = nn.Linear(h, 3 * h)
        self.out = nn.Linear(h, h)
        self.norm3 = nn.LayerNorm(h, elementwise_affine=False)
        self.q2 = nn.Linear(h, h)
        self.kv2 = nn.Linear(h, 2 * h)
        self.out2 = nn.Linear(h, h)
        self.norm2 = nn.LayerNorm(h, elementwise_affine=False)
        self.fc1 = nn.Linear(h, ffn)
        self.fc2 = nn.Linear(ffn, h)
        self.mod = nn.Parameter(torch.randn(1, 6, h) / h**0.5)

    def attend(self, q, k, v):
        b, s, h = q.shape
        d = h // self.heads
        q, k, v = (t.view(b, -1, self.heads, d).transpose(1, 2) for t in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v)
        return o.transpose(1, 2).reshape(b, s, h)

    def forward(self, x, e, text):
        m = (self.mod + e).chunk(6, dim=1)
        y = self.norm1(x) * (1 + m[1]) + m[0]
        q, k, v = self.qkv(y).chunk(3, dim=-1)
        x = x + self.out(self.attend(q, k, v)) * m[2]
        k2, v2 = self.kv2(text).chunk(2, dim=-1)
        x = x + self.out2(self.attend(self.q2(self.norm3(x)), k2, v2))
        y = self.norm2(x) * (1 + m[4]) + m[3]
        return x + self.fc2(F.gelu(self.fc1(y), approximate="tanh")) * m[5]


class Dit(nn.Module):
    def __init__(self, layers, h, heads, ffn, ckpt):
        super().__init__()
        self.blocks = nn.ModuleList(Block(h, heads, ffn) for _ in range(layers))
        self.ckpt = ckpt

    def forward(self, x, e, text):
        for b in self.blocks:
            x = checkpoint(b, x, e, text, use_reentrant=False) if self.ckpt else b(x, e, text)
        return x


def lora_like(model, rank):
    """Freeze every weight and train a rank-r factor pair beside each attention projection (A r x in, B out x r)."""
    for p in model.parameters():
        p.requires_grad_(False)
    adapters = []
    for blk in model.blocks:
        for lin in (blk.qkv, blk.out, blk.q2, blk.kv2, blk.out2):
            a = nn.Parameter(torch.zeros(rank, lin.in_features, device=lin.weight.device, dtype=lin.weight.dtype))
            b = nn.Parameter(torch.zeros(lin.out_features, rank, device=lin.weight.device, dtype=lin.weight.dtype))
            lin.register_parameter("lora_a", a)
            lin.register_parameter("lora_b", b)
            lin.forward = (lambda l: lambda x: F.linear(x, l.weight, l.bias) + F.linear(F.linear(x, l.lora_a), l.lora_b))(lin)
            adapters += [a, b]
    return adapters


def run(cfg, device):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    dtype = torch.bfloat16 if cfg["master"] == "none" else torch.float32
    model = Dit(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["ffn"], cfg["ckpt"]).to(device, dtype)
    trained = lora_like(model, cfg["rank"]) if cfg["method"] == "lora" else list(model.parameters())
    if cfg["optimizer"] == "adamw":
        opt = torch.optim.AdamW(trained, lr=1e-5, foreach=True)
    else:
        opt = torch.optim.SGD(trained, lr=1e-5)
    x = torch.randn(1, cfg["tokens"], cfg["hidden"], device=device, dtype=dtype)
    text = torch.randn(1, cfg["text"], cfg["hidden"], device=device, dtype=dtype)
    e = torch.randn(1, 6, cfg["hidden"], device=device, dtype=dtype)
    # The first step allocates the optimizer's states; the second is the steady one measured.
    for _ in range(2):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cfg["master"] == "fp32"):
            loss = F.mse_loss(model(x, e, text).float(), x.float())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    stats = {
        "maxAllocated": torch.cuda.max_memory_allocated(device),
        "maxReserved": torch.cuda.max_memory_reserved(device),
    }
    params = sum(p.numel() for p in model.parameters())
    del model, opt, x, text, e
    return params, sum(p.numel() for p in trained), stats


CONFIGS = [
    dict(method="full", master="none", optimizer="adamw", ckpt=True, tokens=2688),
    dict(method="full", master="none", optimizer="adamw", ckpt=True, tokens=16384),
    dict(method="full", master="fp32", optimizer="adamw", ckpt=True, tokens=2688),
    dict(method="full", master="none", optimizer="sgd", ckpt=True, tokens=2688),
    dict(method="full", master="none", optimizer="adamw", ckpt=False, tokens=2688),
    dict(method="lora", master="none", optimizer="adamw", ckpt=True, tokens=16384, rank=64),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    args = ap.parse_args()
    assert torch.cuda.is_available(), "this calibration needs a CUDA GPU"
    device = torch.device("cuda:0")
    gpu = torch.cuda.get_device_name(device)
    rows = []
    for cfg in CONFIGS[:2] if args.quick else CONFIGS:
        cfg = dict(cfg, layers=args.layers, hidden=args.hidden, heads=args.heads, ffn=4 * args.hidden, text=128)
        cfg.setdefault("rank", 0)
        params, trained, stats = run(cfg, device)
        name = f"gpu-dit-{cfg['method']}-{cfg['master']}-{cfg['optimizer']}-{'ckpt' if cfg['ckpt'] else 'nockpt'}-{cfg['tokens']}"
        rows.append(
            {
                "id": name,
                "family": "dit",
                "source": f"scripts/calibrate-gpu.py on {gpu}, torch {torch.__version__}, {datetime.date.today()}",
                "quote": json.dumps(stats),
                "setup": "one measured step (the second) of a DiT-shaped model, batch 1, no DeepSpeed",
                "reading": "torch max_memory_reserved: compared with the peak less the CUDA context and NCCL",
                "comparable": "peak",
                "measured": {"gib": round(stats["maxReserved"] / 2**30, 3), "bytesPerGpu": round(round(stats["maxReserved"] / 2**30, 3) * 2**30)},
                "workload": {
                    "model": {
                        "name": name,
                        "params": params,
                        "largestLayer": cfg["hidden"] * cfg["ffn"] + cfg["ffn"],
                        "block": "dit",
                        "layers": cfg["layers"],
                        "hidden": cfg["hidden"],
                        "heads": cfg["heads"],
                        "kvHeads": cfg["heads"],
                        "ffn": cfg["ffn"],
                        "vocab": 0,
                        "loraModules": {},
                    },
                    "method": cfg["method"],
                    "trainableParams": trained,
                    "precision": "bf16",
                    "microBatch": 1,
                    "tokens": cfg["tokens"],
                    "crossTokens": cfg["text"],
                    "gradientCheckpointing": cfg["ckpt"],
                    "gpusPerNode": 1,
                    "nodes": 1,
                    "zero": {"stage": 0, "optimizer": "none", "param": "none", "zeroInit": False},
                    "optimizer": {"kind": cfg["optimizer"], "fused": False, "master": cfg["master"]},
                    "knobs": {"reduceBucketElems": 50000000, "overlapComm": False, "contiguousGradients": True,
                              "prefetchBucketElems": 50000000, "maxLiveParams": 1000000000, "subGroupElems": 1000000000},
                },
            }
        )
        print(f"{name}: {params} params, {trained} trained, {stats}", flush=True)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"wrote {len(rows)} rows to {args.out}: append them to __tests__/fixtures/peak-calibration.json rows")


if __name__ == "__main__":
    main()
