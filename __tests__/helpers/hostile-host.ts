/**
 * The machine the tool is for, as the test suite meets it: a GPU box and Slurm login node whose user has
 * run `accelerate config`. Every `vitest run` starts inside one (vitest's global setup builds it, see
 * global-setup.ts), so a test that reaches past the seal (seal.ts) into the host fails here, on every
 * machine, rather than on the user's box only:
 * - `nvidia-smi` on PATH answering 8 x H100 80GB (the fixtures' stand-in, 8-GPU answers, whatever ZW_FAKE_*
 *   says),
 * - the site's Slurm clients (`sbatch`, `srun`, `squeue`, ...), `accelerate`, `deepspeed`, `torchrun` and
 *   `py-spy` on PATH: each records that it was called and fails loudly (a site sbatch would submit to the
 *   site's real cluster),
 * - accelerate's default config (ZeRO-3 with optimizer and parameter offload, 8 processes, bf16, as
 *   `accelerate config` leaves it) in `~/.cache/huggingface/accelerate/default_config.yaml` and in `$HF_HOME`,
 * - a user preset in `~/.config/zerowiz/presets`, and the variables such a box has: `CUDA_VISIBLE_DEVICES`,
 *   a Slurm allocation's `SLURM_*`, `ACCELERATE_*`, `DIFFSYNTH_*` and the user's own `ZEROWIZ_*` settings.
 * Every call that reaches a host stand-in is written to `calls.log`; the global setup's teardown fails the
 * run when there is any.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './paths.js';

/** The programs the host has that no test may reach: each host copy records its call and fails. */
export const HOST_ONLY_PROGRAMS = [
  'nvidia-smi',
  'sbatch',
  'srun',
  'squeue',
  'scontrol',
  'scancel',
  'sacct',
  'sinfo',
  'salloc',
  'sstat',
  'accelerate',
  'deepspeed',
  'torchrun',
  'py-spy',
] as const;

/** accelerate's default config as `accelerate config` writes it for ZeRO-3 with offload on 8 GPUs. */
export const HOST_DEFAULT_CONFIG_YAML = `compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  gradient_accumulation_steps: 1
  offload_optimizer_device: cpu
  offload_param_device: cpu
  zero3_init_flag: true
  zero3_save_16bit_model: true
  zero_stage: 3
distributed_type: DEEPSPEED
downcast_bf16: 'no'
enable_cpu_affinity: false
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 8
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
`;

/** A user preset the host's user saved earlier (a `preset list` that reads the host would show it). */
const HOST_USER_PRESET_YAML = `name: host-users-flux
description: saved by the host's user, never seen by a test
answers:
  mode: '3-offload'
`;

/** The host's environment variables beyond PATH and HOME (values a GPU box and a Slurm allocation set). */
function hostVariables(dir: string, bin: string): Record<string, string> {
  const hf = join(dir, 'hf-home');
  return {
    HF_HOME: hf,
    CUDA_VISIBLE_DEVICES: '0,1,2,3,4,5,6,7',
    SLURM_JOB_ID: '4242',
    SLURM_JOB_NODELIST: 'gpu-node-[01-02]',
    SLURM_CONF: join(dir, 'site-slurm.conf'),
    ACCELERATE_MIXED_PRECISION: 'fp16',
    ACCELERATE_USE_DEEPSPEED: 'true',
    DIFFSYNTH_MODEL_BASE_PATH: join(dir, 'models'),
    DIFFSYNTH_DOWNLOAD_SOURCE: 'huggingface',
    ZEROWIZ_ACCELERATE: join(bin, 'accelerate'),
    ZEROWIZ_SKIP_CHECKS: 'nvme-speed',
    ZEROWIZ_SLURM_POLL_MS: '30000',
  };
}

/** A host program that records its call in `log` and fails (or, for nvidia-smi, answers 8 GPUs). */
function hostProgram(name: string, log: string): string {
  const record = `printf '%s\\n' "${name} $* (pid $$, cwd $PWD)" >> '${log}'`;
  if (name === 'nvidia-smi') {
    const standIn = join(ROOT, '__tests__', 'fixtures', 'bin-nvidia', 'nvidia-smi');
    return `#!/bin/sh\n${record}\nunset ZW_FAKE_GPU_USED_MIB ZW_FAKE_GPU_UTIL ZW_FAKE_NVIDIA_SMI_LOOPS ZW_FAKE_NVIDIA_SMI_END\nZW_FAKE_NVIDIA_SMI=8 exec '${standIn}' "$@"\n`;
  }
  return `#!/bin/sh\n${record}\necho "${name}: the HOST's ${name} was called from the test suite (on a login node this reaches the site's real cluster or GPUs): the test is not sealed" >&2\nexit 97\n`;
}

/** The host as built: its folder, the call log, and the variables to run the suite under. */
export interface HostileHost {
  dir: string;
  callsLog: string;
  env: Record<string, string>;
}

/** Builds a hostile host in a new temp folder; `hostPath` is the real PATH the host's bin is put before. */
export function buildHostileHost(hostPath: string): HostileHost {
  const dir = mkdtempSync(join(tmpdir(), 'zw-hostile-host-'));
  const bin = join(dir, 'site-bin');
  const home = join(dir, 'home');
  const callsLog = join(dir, 'calls.log');
  writeFileSync(callsLog, '');
  chmodSync(callsLog, 0o666);
  mkdirSync(bin);
  for (const name of HOST_ONLY_PROGRAMS) writeFileSync(join(bin, name), hostProgram(name, callsLog), { mode: 0o755 });
  const vars = hostVariables(dir, bin);
  const env: Record<string, string> = { ...vars, HOME: home, PATH: `${bin}:${hostPath}` };
  for (const cfg of [join(home, '.cache', 'huggingface', 'accelerate'), join(vars.HF_HOME!, 'accelerate')]) {
    mkdirSync(cfg, { recursive: true });
    writeFileSync(join(cfg, 'default_config.yaml'), HOST_DEFAULT_CONFIG_YAML);
  }
  const presets = join(home, '.config', 'zerowiz', 'presets');
  mkdirSync(presets, { recursive: true });
  writeFileSync(join(presets, 'host-users-flux.yaml'), HOST_USER_PRESET_YAML);
  writeFileSync(vars.SLURM_CONF!, 'ClusterName=site\nSlurmctldHost=login-01(10.0.0.1)\n');
  mkdirSync(vars.DIFFSYNTH_MODEL_BASE_PATH!);
  return { dir, callsLog, env };
}

/** The calls that reached the host's programs (empty when the seal held). */
export function hostCalls(host: HostileHost): string[] {
  return readFileSync(host.callsLog, 'utf8').split('\n').filter(Boolean);
}
