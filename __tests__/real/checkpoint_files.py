"""Checkpoint files written by the real torch + safetensors + peft, as DiffSynth-Studio writes them.

`python checkpoint_files.py write OUT` writes, and prints a JSON report of what it wrote:

- OUT/real/epoch-0.safetensors: a LoRA of Qwen-Image's DiT at the catalog's shapes (60 blocks, the seed's 12
  targets), rank 1. The DiT's Linear layers are built on the meta device (20B parameters are not needed to
  name and shape an adapter); peft's `inject_adapter_in_model(LoraConfig(r, lora_alpha=r, target_modules))`, the
  call DiffSynth's `add_lora_to_model` makes, adds the adapters, which are then given values. Saved as
  ModelLogger.save_model does: the trainable parameters (export_trainable_state_dict) through
  `accelerator.save(state_dict, path, safe_serialization=True)`, i.e. safetensors' save_file with
  {"format": "pt"}.
- OUT/tiny/epoch-0.safetensors: the same module names at a tiny scale (hidden 16, 2 blocks, rank 4), the
  adapter really trained for a few steps on the CPU (lora_B no longer zero), saved the same way.
- OUT/broken/*.safetensors: what broken saves leave: `zero3.safetensors` (every tensor an empty placeholder,
  shape [0], as a ZeRO-3 state dict taken without the 16-bit gather), `empty.safetensors` (no tensors),
  `truncated.safetensors` (the tiny file cut short), `nan.safetensors` (a diverged adapter).

`python checkpoint_files.py compare A B MAP [B2 MAP2 ...]` loads A and each B with safetensors and checks that B
holds every tensor of A, equal, under the names its MAP (a JSON file {name in A: name in B}) gives; prints one
JSON line with "same" and each B's metadata.
"""
import json
import os
import sys

import torch
from peft import LoraConfig, inject_adapter_in_model
from safetensors import safe_open
from safetensors.torch import save_file

# The seed's --lora_target_modules (presets/qwen-image-lora-lowvram.yaml).
TARGETS = ["to_q", "to_k", "to_v", "add_q_proj", "add_k_proj", "add_v_proj", "to_out.0", "to_add_out",
           "img_mlp.net.2", "img_mod.1", "txt_mlp.net.2", "txt_mod.1"]


class Attention(torch.nn.Module):
    """DiffSynth's QwenDoubleStreamAttention's Linear layers (diffsynth/models/qwen_image_dit.py)."""

    def __init__(self, d):
        super().__init__()
        for n in ["to_q", "to_k", "to_v", "add_q_proj", "add_k_proj", "add_v_proj", "to_add_out"]:
            setattr(self, n, torch.nn.Linear(d, d))
        self.to_out = torch.nn.Sequential(torch.nn.Linear(d, d))


class FeedForward(torch.nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.net = torch.nn.ModuleList([torch.nn.Linear(d, f), torch.nn.GELU(), torch.nn.Linear(f, d)])


class Block(torch.nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.attn = Attention(d)
        self.img_mod = torch.nn.Sequential(torch.nn.SiLU(), torch.nn.Linear(d, 6 * d))
        self.txt_mod = torch.nn.Sequential(torch.nn.SiLU(), torch.nn.Linear(d, 6 * d))
        self.img_mlp = FeedForward(d, f)
        self.txt_mlp = FeedForward(d, f)


class DiT(torch.nn.Module):
    def __init__(self, d, f, layers):
        super().__init__()
        self.transformer_blocks = torch.nn.ModuleList([Block(d, f) for _ in range(layers)])


def lora_model(model, rank):
    # DiffSynth's add_lora_to_model: lora_alpha defaults to the rank.
    return inject_adapter_in_model(LoraConfig(r=rank, lora_alpha=rank, target_modules=TARGETS), model)


def trainable_state_dict(model):
    # ModelLogger.save_model -> export_trainable_state_dict: the parameters that require grad.
    return {n: p.detach().contiguous() for n, p in model.named_parameters() if p.requires_grad}


def save(state_dict, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    save_file(state_dict, path, metadata={"format": "pt"})


def write(out):
    report = {}
    torch.manual_seed(0)
    with torch.device("meta"):
        real = DiT(3072, 12288, 60)
    real = lora_model(real, 1)
    sd = {n: torch.randn(tuple(p.shape)).mul_(0.01).to(torch.bfloat16)
          for n, p in real.named_parameters() if p.requires_grad}
    save(sd, os.path.join(out, "real", "epoch-0.safetensors"))
    report["real"] = {n: list(t.shape) for n, t in sd.items()}

    tiny = lora_model(DiT(16, 32, 2), 4)
    for n, p in tiny.named_parameters():
        p.requires_grad = "lora_" in n
    opt = torch.optim.AdamW([p for p in tiny.parameters() if p.requires_grad], lr=1e-2)
    x = torch.randn(8, 16)
    for _ in range(3):
        h = x
        for b in tiny.transformer_blocks:
            h = h + b.attn.to_out(b.attn.to_q(h)) + b.img_mlp.net[2](b.img_mlp.net[0](h))
            h = h + b.txt_mlp.net[2](b.txt_mlp.net[0](h)) + b.img_mod(h)[:, :16] + b.txt_mod(h)[:, :16]
            h = h + b.attn.to_k(h) + b.attn.to_v(h) + b.attn.add_q_proj(h) + b.attn.add_k_proj(h)
            h = h + b.attn.add_v_proj(h) + b.attn.to_add_out(h)
        loss = h.pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    tsd = {n: t.to(torch.bfloat16) for n, t in trainable_state_dict(tiny).items()}
    tiny_path = os.path.join(out, "tiny", "epoch-0.safetensors")
    save(tsd, tiny_path)
    report["tiny"] = {n: list(t.shape) for n, t in tsd.items()}
    report["tiny_lora_b_nonzero"] = all(t.abs().sum().item() > 0 for n, t in tsd.items() if "lora_B" in n)

    save({n: torch.empty(0, dtype=torch.bfloat16) for n in tsd}, os.path.join(out, "broken", "zero3.safetensors"))
    save({}, os.path.join(out, "broken", "empty.safetensors"))
    with open(tiny_path, "rb") as f:
        data = f.read()
    with open(os.path.join(out, "broken", "truncated.safetensors"), "wb") as f:
        f.write(data[: len(data) - 100])
    nan = dict(tsd)
    first = sorted(nan)[0]
    nan[first] = torch.full_like(nan[first], float("nan"))
    save(nan, os.path.join(out, "broken", "nan.safetensors"))
    print(json.dumps(report))


def compare(a, pairs):
    metas = []
    for b, map_path in pairs:
        with open(map_path) as f:
            names = json.load(f)
        with safe_open(a, framework="pt") as fa, safe_open(b, framework="pt") as fb:
            keys_b = set(fb.keys())
            assert keys_b == set(names.values()), sorted(keys_b ^ set(names.values()))[:5]
            for k in fa.keys():
                assert torch.equal(fa.get_tensor(k), fb.get_tensor(names[k])), k
            metas.append(fb.metadata())
    print(json.dumps({"same": True, "metadata": metas}))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        rest = sys.argv[3:]
        compare(sys.argv[2], list(zip(rest[0::2], rest[1::2])))
