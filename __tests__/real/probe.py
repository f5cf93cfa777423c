"""The training script of zerowiz's real accelerate tier: what `accelerate launch --config_file Y probe.py` runs.

It does what a training script does with accelerate: `Accelerator()`, then `prepare()` of a tiny model whose
`config.hidden_size` lets accelerate fill the hidden-size "auto"s, an AdamW optimizer and a DataLoader, then
one training step. The DeepSpeed stand-in (__tests__/fixtures/deepspeed-standin) records the config dict
accelerate hands to `deepspeed.initialize`; this script writes what the Accelerator itself ended up with
(ZEROWIZ_PROBE_OUT/rank<N>.probe.json).

Inputs (environment): ZEROWIZ_PROBE_MICRO (the DataLoader batch size, 4), ZEROWIZ_PROBE_ACCUM (the script's
Accelerator(gradient_accumulation_steps=...), 1), ZEROWIZ_PROBE_HIDDEN (hidden_size, 16),
ZEROWIZ_PROBE_MIXED_PRECISION (the script's Accelerator(mixed_precision=...); not passed when unset),
ZEROWIZ_PROBE_OPTIMIZER (the script's optimizer: adamw, the default; adafactor, transformers' Adafactor with its
defaults; sgd, torch's SGD with weight decay).
The CPU has no NCCL: the process group is gloo (InitProcessGroupKwargs), as a CPU user would write it.
"""
import json
import math
import os
import sys
import types

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs


class TinyModel(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.config = types.SimpleNamespace(hidden_size=hidden)
        self.inner = torch.nn.Linear(hidden, hidden)
        self.head = torch.nn.Linear(hidden, 1)

    def forward(self, x):
        return self.head(torch.relu(self.inner(x)))


def make_optimizer(name, params):
    """The optimizer a training script would build, by the name of zerowiz's optimizer question."""
    if name == "adafactor":
        from transformers.optimization import Adafactor

        return Adafactor(params)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3, weight_decay=0.01)
    return torch.optim.AdamW(params, lr=1e-3)


def main(end_training=True):
    micro = int(os.environ.get("ZEROWIZ_PROBE_MICRO", "4"))
    accum = int(os.environ.get("ZEROWIZ_PROBE_ACCUM", "1"))
    hidden = int(os.environ.get("ZEROWIZ_PROBE_HIDDEN", "16"))
    mixed = os.environ.get("ZEROWIZ_PROBE_MIXED_PRECISION")
    accelerator = Accelerator(
        gradient_accumulation_steps=accum,
        kwargs_handlers=[InitProcessGroupKwargs(backend="gloo")],
        **({"mixed_precision": mixed} if mixed else {}),
    )
    plugin = accelerator.state.deepspeed_plugin
    try:
        from transformers.integrations import is_deepspeed_zero3_enabled

        zero3_for_transformers = bool(is_deepspeed_zero3_enabled())
    except ImportError:
        zero3_for_transformers = None
    torch.manual_seed(0)
    model = TinyModel(hidden)
    optimizer = make_optimizer(os.environ.get("ZEROWIZ_PROBE_OPTIMIZER", "adamw"), model.parameters())
    data = torch.utils.data.TensorDataset(torch.randn(micro * 8, hidden), torch.randn(micro * 8, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=micro)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    losses = []
    for x, y in loader:
        with accelerator.accumulate(model):
            loss = torch.nn.functional.mse_loss(model(x.float()).float(), y.float())
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        losses.append(loss.item())
        if len(losses) >= accum:
            break
    report = {
        "distributed_type": str(accelerator.distributed_type),
        "num_processes": accelerator.num_processes,
        "process_index": accelerator.process_index,
        "mixed_precision": accelerator.mixed_precision,
        "gradient_accumulation_steps": accelerator.gradient_accumulation_steps,
        "zero3_init_flag": plugin.zero3_init_flag if plugin is not None else None,
        "zero3_for_transformers": zero3_for_transformers,
        "losses_finite": all(math.isfinite(v) for v in losses),
        "steps": len(losses),
    }
    out = os.environ.get("ZEROWIZ_PROBE_OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"rank{accelerator.process_index}.probe.json"), "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
    print(f"probe rank {accelerator.process_index}/{accelerator.num_processes}: ok, {len(losses)} step(s)", flush=True)
    if end_training:
        # As a training script ends: without it, a live gloo group can abort the interpreter at exit
        # ("terminate called without an active exception").
        accelerator.wait_for_everyone()
        accelerator.end_training()
    return report


if __name__ == "__main__":
    main()
    # The report is written and the group destroyed; leave without the interpreter's teardown. Even after
    # end_training, torch's gloo threads can still abort a rank at exit under load ("terminate called
    # without an active exception", SIGABRT: seen once in CI on a 2-core machine, after both ranks had
    # printed "ok"), and what a training script does after its last step is not what this probe checks.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
