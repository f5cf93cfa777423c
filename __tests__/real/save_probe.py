"""A training script that saves as accelerate users do: `accelerate launch --config_file Y save_probe.py --output_dir OUT`.

Accelerator(project_config=ProjectConfiguration(OUT, automatic_checkpoint_naming=True)), prepare() of a tiny
model, an AdamW and a DataLoader, two training steps, then `accelerator.save_state()`: under DeepSpeed that is
the engine's save_checkpoint (OUT/checkpoints/checkpoint_0/pytorch_model/... and `latest`; the stand-in writes
DeepSpeed 0.19.6's files). Rank 0 then writes the model's final fp32 weights beside OUT (final.safetensors), for the
test to compare with what `zerowiz export weights` consolidates. gloo: the CPU has no NCCL.
"""
import argparse
import os
import types

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs, ProjectConfiguration
from safetensors.torch import save_file


class TinyModel(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.config = types.SimpleNamespace(hidden_size=hidden)
        self.inner = torch.nn.Linear(hidden, hidden)
        self.head = torch.nn.Linear(hidden, 1)

    def forward(self, x):
        return self.head(torch.relu(self.inner(x)))


def main(out):
    accelerator = Accelerator(
        project_config=ProjectConfiguration(project_dir=out, automatic_checkpoint_naming=True),
        kwargs_handlers=[InitProcessGroupKwargs(backend="gloo")],
    )
    torch.manual_seed(0)
    model = TinyModel(16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    data = torch.utils.data.TensorDataset(torch.randn(32, 16), torch.randn(32, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x.float()).float(), y.float())
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if i == 1:
            break
    accelerator.save_state()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        weights = {n: p.detach().float().contiguous() for n, p in accelerator.unwrap_model(model).named_parameters()}
        save_file(weights, os.path.join(os.path.dirname(os.path.abspath(out)), "final.safetensors"))
    accelerator.end_training()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", required=True)
    main(parser.parse_args().output_dir)
