"""One Python process that puts many accelerate configs through accelerate's own code.

Usage: harness.py CASES.json RESULTS.json. Each case: {"id", "yaml", "launch_args": [...], "prepare": bool,
"record": dir, "probe_env": {...}, "env": {...}}. "yaml" null passes no --config_file (accelerate then reads its
default config file, from the HF_HOME this process started with); "env" is the environment `accelerate launch`
runs in (ACCELERATE_* variables a user exported). For each case, with the real accelerate 1.15.0:
  1. load: accelerate's loader (load_config_from_file -> ClusterConfig), as `accelerate launch` reads it;
  2. launch: accelerate's own launch-argument parser, `_validate_launch_command`, then the launcher's command
     and environment builder (`prepare_deepspeed_cmd_env`) -- per machine rank for multi-node YAMLs -- and, for
     torchrun, the arguments accelerate hands torchrun (`_filter_args` with torchrun's own parser);
  3. prepare (when asked): with exactly the environment that builder made plus what torchrun gives a rank
     (LOCAL_RANK, RANK, WORLD_SIZE=1, MASTER_*), probe.main(): Accelerator() + prepare() + one step, in this
     process; the DeepSpeed stand-in records the config dict handed to deepspeed.initialize.
The only lines not run from accelerate itself are the four of `launch_command` that turn the YAML's
deepspeed_config keys into `deepspeed_fields_from_accelerate_config` (copied below, marked).
Every stage's error is caught and reported per case as "<Type>: <message>".
"""
import copy
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch.distributed.run as distrib_run  # noqa: E402
from accelerate.commands.config.config_args import load_config_from_file  # noqa: E402
from accelerate.commands.launch import _validate_launch_command, launch_command_parser  # noqa: E402
from accelerate.state import AcceleratorState  # noqa: E402
from accelerate.utils.launch import _filter_args, prepare_deepspeed_cmd_env  # noqa: E402

import probe  # noqa: E402

BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("ACCELERATE_")}
PROBE = os.path.join(HERE, "probe.py")


def plain(value):
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "value") and not isinstance(value, (str, int, float, bool)):
        return plain(value.value)  # enums
    return value


def err(e):
    return f"{type(e).__name__}: {e}"


def which_launcher(args):
    if args.use_deepspeed and not args.cpu:
        return "deepspeed"
    if args.multi_gpu and not args.cpu:
        return "multi_gpu"
    return "simple"


def launch(case, out):
    parser = launch_command_parser()
    config = ["--config_file", case["yaml"]] if case.get("yaml") else []
    args = parser.parse_args([*config, *case.get("launch_args", []), PROBE])
    args, defaults, mp_from_config_flag = _validate_launch_command(args)
    out["launcher"] = which_launcher(args)
    if out["launcher"] != "deepspeed":
        return None
    # --- copied from accelerate.commands.launch.launch_command (1.15.0) ---
    args.deepspeed_fields_from_accelerate_config = list(defaults.deepspeed_config.keys()) if defaults else []
    if mp_from_config_flag:
        args.deepspeed_fields_from_accelerate_config.append("mixed_precision")
    args.deepspeed_fields_from_accelerate_config = ",".join(args.deepspeed_fields_from_accelerate_config)
    # --- end of the copy ---
    cmd, env = prepare_deepspeed_cmd_env(args)
    out["cmd"] = cmd
    out["launch"] = {
        k: getattr(args, k, None)
        for k in ("num_processes", "num_machines", "machine_rank", "main_process_ip", "main_process_port",
                  "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_endpoint",
                  "rdzv_backend", "standalone", "mixed_precision", "deepspeed_multinode_launcher",
                  "deepspeed_hostfile", "debug")
    }
    out["env"] = {k: v for k, v in env.items() if k.startswith("ACCELERATE_")}
    if cmd is None:
        targs = _filter_args(
            copy.deepcopy(args),
            distrib_run.get_args_parser(),
            ["--training_script", args.training_script, "--training_script_args", args.training_script_args],
        )
        out["torchrun"] = {
            k: getattr(targs, k, None)
            for k in ("nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_endpoint",
                      "rdzv_backend", "standalone", "training_script")
        }
        # torchrun's own reading of those arguments: how many nodes and processes, and where to meet.
        config, _, _ = distrib_run.config_from_args(targs)
        out["torchrun_config"] = {
            "min_nodes": config.min_nodes,
            "max_nodes": config.max_nodes,
            "nproc_per_node": config.nproc_per_node,
            "rdzv_backend": config.rdzv_backend,
            "rdzv_endpoint": config.rdzv_endpoint,
            "rank": config.rdzv_configs.get("rank"),
        }
    return env


def prepare(case, env, out):
    os.environ.clear()
    os.environ.update(BASE_ENV)
    os.environ.update({k: v for k, v in env.items() if k.startswith("ACCELERATE_")})
    os.environ.update({"LOCAL_RANK": "0", "RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1",
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": case.get("master_port", "29500")})
    os.environ.update(case.get("probe_env", {}))
    os.environ["ZEROWIZ_DS_RECORD"] = case["record"]
    os.environ["ZEROWIZ_PROBE_OUT"] = case["record"]
    AcceleratorState._reset_state(True)
    try:
        out["probe"] = probe.main(end_training=False)  # one process group for every case of this process
    finally:
        AcceleratorState._reset_state(True)
        os.environ.clear()
        os.environ.update(BASE_ENV)
    path = os.path.join(case["record"], "rank0.json")
    if os.path.exists(path):
        with open(path) as f:
            out["record"] = json.load(f)


def run_case(case):
    out = {"id": case["id"]}
    try:
        out["loaded"] = plain(load_config_from_file(case.get("yaml")).to_dict())
    except Exception as e:  # noqa: BLE001
        out["load_error"] = err(e)
        return out
    # The environment `accelerate launch` runs in: the launcher's builder copies it.
    saved = dict(os.environ)
    os.environ.update(case.get("env", {}))
    try:
        env = launch(case, out)
    except Exception as e:  # noqa: BLE001
        out["launch_error"] = err(e)
        return out
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if case.get("prepare") and env is not None:
        try:
            prepare(case, env, out)
        except Exception as e:  # noqa: BLE001
            out["prepare_error"] = err(e)
            out["prepare_trace"] = traceback.format_exc(limit=4)
    return plain(out)


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    results = [run_case(c) for c in cases]
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
    with open(sys.argv[2], "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    print(f"harness: {len(results)} case(s)", flush=True)


if __name__ == "__main__":
    main()
