/**
 * The accelerate configs a step can run with besides the one zerowiz writes for the setup:
 * - accelerate's default config (what `accelerate launch` reads when a step passes no --config_file):
 *   read and summarised, so a finding can say what it holds;
 * - a plain multi-GPU (or single-process) config without DeepSpeed, written by zerowiz, that a step can be
 *   pinned to so a DeepSpeed default cannot hijack it (DiffSynth-Studio#1107: the data-process pass breaks
 *   under DeepSpeed). Emitted as `accelerate config` writes it for "multi-GPU" (or "No distributed
 *   training" for one process), no to DeepSpeed, FSDP and Megatron-LM (shared/reference/accelerate-config.md).
 */
import { readFileSync } from 'node:fs';
import { NearMiss } from '../text/index.js';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { dumpYaml, isPlainObject, machineKeys } from './emit.js';
import type { Answers } from './questions.js';
import type { Setup, SetupFiles } from './setup.js';
import { stepConfig, withStepConfig } from './step-args.js';

/** What an accelerate config file holds, as far as a step run with it cares. */
export interface AccelerateConfigSummary {
  path: string;
  exists: boolean;
  /** Why it could not be read (unreadable, not YAML, not a mapping), or null. */
  problem: string | null;
  /** `distributed_type` as written (`DEEPSPEED`, `MULTI_GPU`, `NO`, ...), or null. */
  distributedType: string | null;
  numProcesses: number | null;
  numMachines: number | null;
  mixedPrecision: string | null;
  /** For DeepSpeed configs: the ZeRO settings in force (from its JSON when it names one), else null. */
  deepspeed: DeepSpeedSummary | null;
}

/** The ZeRO settings of a DeepSpeed config. */
export interface DeepSpeedSummary {
  /** The JSON it names (as written), or null when the YAML holds the settings itself. */
  configFile: string | null;
  /** Why that JSON could not be read, or null. */
  configFileProblem: string | null;
  stage: number | null;
  offloadOptimizer: string | null;
  offloadParam: string | null;
  /** Whether an `activation_checkpointing` block is configured (false without a JSON: accelerate writes none). */
  activationCheckpointing: boolean;
  /**
   * Whether ZeRO-3 gathers 16-bit weights on save (stage3_gather_16bit_weights_on_model_save; "auto" and absent
   * are false, as accelerate fills and DeepSpeed defaults them); absent where not read.
   */
  gather16bitOnSave?: boolean;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
function num(v: unknown): number | null {
  return typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : null;
}
function device(v: unknown): string | null {
  return isPlainObject(v) ? str(v.device) : null;
}
/** A yes/no as accelerate's YAML or DeepSpeed's JSON writes it (true, "true"); anything else is false. */
function yes(v: unknown): boolean {
  return v === true || (typeof v === 'string' && v.toLowerCase() === 'true');
}

/**
 * The summary of a parsed accelerate config (`yaml`) and, for DeepSpeed, of the parsed JSON it names
 * (`json`, null when there is none or it could not be read: `jsonProblem` then says why).
 */
export function summarizeAccelerateConfig(
  path: string,
  yaml: unknown,
  json: unknown = null,
  jsonProblem: string | null = null,
): AccelerateConfigSummary {
  if (!isPlainObject(yaml)) {
    return {
      path,
      exists: true,
      problem: 'it does not hold a mapping of keys',
      distributedType: null,
      numProcesses: null,
      numMachines: null,
      mixedPrecision: null,
      deepspeed: null,
    };
  }
  // PyYAML reads an unquoted `NO` as false (YAML 1.1); accelerate then runs it like NO (nothing matches).
  const distributedType = yaml.distributed_type === false ? 'NO' : str(yaml.distributed_type);
  let deepspeed: DeepSpeedSummary | null = null;
  if (distributedType === 'DEEPSPEED') {
    const ds = isPlainObject(yaml.deepspeed_config) ? yaml.deepspeed_config : {};
    const file = str(ds.deepspeed_config_file);
    const configFile = file !== null && file !== 'none' ? file : null;
    if (configFile !== null) {
      const j = isPlainObject(json) ? json : {};
      const zero = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
      deepspeed = {
        configFile,
        configFileProblem: jsonProblem,
        stage: num(zero.stage),
        offloadOptimizer: device(zero.offload_optimizer),
        offloadParam: device(zero.offload_param),
        activationCheckpointing: isPlainObject(j.activation_checkpointing),
        gather16bitOnSave: yes(
          zero.stage3_gather_16bit_weights_on_model_save ?? zero.gather_16bit_weights_on_model_save,
        ),
      };
    } else {
      // accelerate builds the JSON from these keys; its default stage is 2.
      deepspeed = {
        configFile: null,
        configFileProblem: null,
        stage: num(ds.zero_stage) ?? 2,
        offloadOptimizer: str(ds.offload_optimizer_device),
        offloadParam: str(ds.offload_param_device),
        activationCheckpointing: false,
        gather16bitOnSave: yes(ds.zero3_save_16bit_model),
      };
    }
  }
  return {
    path,
    exists: true,
    problem: null,
    distributedType,
    numProcesses: num(yaml.num_processes),
    numMachines: num(yaml.num_machines),
    mixedPrecision: str(yaml.mixed_precision),
    deepspeed,
  };
}

/** True when a summary's DeepSpeed settings offload anything at ZeRO stage 3. */
export function isZero3Offload(ds: DeepSpeedSummary | null): boolean {
  const off = (d: string | null) => d !== null && d !== 'none';
  return ds !== null && ds.stage === 3 && (off(ds.offloadOptimizer) || off(ds.offloadParam));
}

/** One line on what a config holds: `DEEPSPEED, ZeRO-3, offload optimizer cpu + params cpu, 8 processes`. */
export function describeAccelerateConfig(s: AccelerateConfigSummary): string {
  if (!s.exists) return 'no such file';
  if (s.problem) return `unreadable: ${s.problem}`;
  const parts = [`distributed_type ${s.distributedType ?? '(none)'}`];
  const ds = s.deepspeed;
  if (ds) {
    parts.push(`ZeRO-${ds.stage ?? '?'}`);
    const off = [
      ds.offloadOptimizer && ds.offloadOptimizer !== 'none' ? `optimizer ${ds.offloadOptimizer}` : '',
      ds.offloadParam && ds.offloadParam !== 'none' ? `params ${ds.offloadParam}` : '',
    ].filter(Boolean);
    if (off.length) parts.push(`offload ${off.join(' + ')}`);
    if (ds.configFile) parts.push(`from ${ds.configFile}${ds.configFileProblem ? ` (${ds.configFileProblem})` : ''}`);
  }
  if (s.numProcesses !== null) parts.push(`${s.numProcesses} process${s.numProcesses === 1 ? '' : 'es'}`);
  return parts.join(', ');
}

function readParsed(path: string): { data: unknown; problem: string | null; exists: boolean } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { data: null, problem: 'no such file', exists: false };
    return { data: null, problem: `cannot read it (${code ?? (e as Error).message})`, exists: true };
  }
  try {
    // accelerate reads YAML (and the JSON text `accelerate config default` writes) with PyYAML: YAML 1.1.
    return { data: parseYaml(text, { version: '1.1' }), problem: null, exists: true };
  } catch (e) {
    return { data: null, problem: `not YAML/JSON: ${(e as Error).message.split('\n')[0]}`, exists: true };
  }
}

/**
 * Reads an accelerate config file and the DeepSpeed JSON it names (resolved against `cwd`, the directory
 * the step runs in, as accelerate opens it). Never throws: a missing or broken file is described.
 */
export function readAccelerateConfigSummary(path: string, cwd: string): AccelerateConfigSummary {
  const y = readParsed(path);
  if (!y.exists)
    return {
      path,
      exists: false,
      problem: null,
      distributedType: null,
      numProcesses: null,
      numMachines: null,
      mixedPrecision: null,
      deepspeed: null,
    };
  if (y.problem !== null) {
    return { ...summarizeAccelerateConfig(path, {}), problem: y.problem };
  }
  const first = summarizeAccelerateConfig(path, y.data);
  const file = first.deepspeed?.configFile;
  if (!file) return first;
  const j = readParsed(isAbsolute(file) ? file : resolve(cwd, file));
  return summarizeAccelerateConfig(path, y.data, j.data, j.problem);
}

// ---------------------------------------------------------------------------------------------
// A config without DeepSpeed

/** The file name of zerowiz's non-DeepSpeed config, written beside the setup's accelerate config. */
export const NO_DEEPSPEED_CONFIG_NAME = 'accelerate_no_deepspeed.yaml';

/** Where the setup's non-DeepSpeed config goes: beside its accelerate config. */
export function noDeepSpeedConfigPath(setup: Pick<Setup, 'files'>): string {
  const dir = dirname(setup.files.accelerateConfig);
  return dir === '.' ? NO_DEEPSPEED_CONFIG_NAME : join(dir, NO_DEEPSPEED_CONFIG_NAME);
}

/**
 * What `accelerate config` writes for "multi-GPU" with no DeepSpeed, FSDP or Megatron-LM, the setup's
 * machines and processes, all GPUs and no NUMA affinity; for a single process in all, what it writes
 * for "No distributed training" (accelerate refuses MULTI_GPU with one process on one machine).
 * mixed_precision follows the setup when it is fp16 or bf16, else `no`.
 */
export function noDeepSpeedConfigObject(a: Answers): Record<string, unknown> {
  const single = a.num_processes <= 1 && a.num_machines <= 1;
  // "No distributed training" asks no machine or debug questions: one machine, one process, debug off.
  const machines = single ? { ...a, num_machines: 1, num_processes: 1, debug: false } : a;
  return {
    ...machineKeys(machines),
    distributed_type: single ? 'NO' : 'MULTI_GPU',
    gpu_ids: 'all',
    mixed_precision: a.mixed_precision === 'fp16' || a.mixed_precision === 'bf16' ? a.mixed_precision : 'no',
  };
}

/** The non-DeepSpeed config's text, as accelerate saves YAML. */
export function toNoDeepSpeedYaml(a: Answers): string {
  return dumpYaml(noDeepSpeedConfigObject(a));
}

/** The extra files a setup needs written: its non-DeepSpeed config, when a step is pinned to it. */
export function extraConfigFiles(setup: Setup): { path: string; text: string }[] {
  const path = noDeepSpeedConfigPath(setup);
  const pinned = setup.steps.some((s) => {
    const c = stepConfig(s);
    return c.kind === 'pinned' && c.path === path;
  });
  return pinned ? [{ path, text: toNoDeepSpeedYaml(setup.answers) }] : [];
}

/**
 * The setup with its config files at `files`: steps pinned to its config without DeepSpeed are re-pinned to
 * the one beside the new accelerate config (that file is written with the setup, so it moves with it).
 */
export function withFiles<S extends Pick<Setup, 'files' | 'steps'>>(setup: S, files: SetupFiles): S {
  const before = noDeepSpeedConfigPath(setup);
  const after = noDeepSpeedConfigPath({ files });
  const steps =
    before === after
      ? setup.steps
      : setup.steps.map((s) => {
          const c = stepConfig(s);
          return c.kind === 'pinned' && c.path === before ? withStepConfig(s, { kind: 'pinned', path: after }) : s;
        });
  return { ...setup, files, steps };
}

/**
 * The setup with the named steps pinned to zerowiz's config without DeepSpeed (`--pin-step NAME`): the fix
 * the launch prints for a step that accelerate's default config would run under DeepSpeed. The pinned config
 * is written with the others; the record keeps the pinned steps, so `--last` reruns them pinned. `zerowiz launch`
 * and `zerowiz export` take it.
 */
export function pinSteps(setup: Setup, names: readonly string[]): Setup {
  if (names.length === 0) return setup;
  const known = new Set(setup.steps.map((s) => s.name));
  const unknown = names.find((n) => !known.has(n));
  if (unknown !== undefined)
    throw new NearMiss(
      `--pin-step ${unknown}: '${setup.name}' has no step of that name`,
      unknown,
      [...known],
      `its steps are: ${setup.steps.map((s) => s.name).join(', ')}`,
      '--pin-step',
    );
  const path = noDeepSpeedConfigPath(setup);
  return {
    ...setup,
    steps: setup.steps.map((s) => (names.includes(s.name) ? withStepConfig(s, { kind: 'pinned', path }) : s)),
  };
}
