/**
 * Validation: every rule gives an error or a warning with the reason and the fix. Three layers:
 * - checkAccelerateConfig: what accelerate rejects when it loads or launches a YAML
 *   (shared/reference/accelerate-config.md §3);
 * - checkDeepSpeedConfig: what DeepSpeed's pydantic schema rejects or silently ignores
 *   (shared/reference/deepspeed-zero.md §1-2);
 * - validate(setup): the rules about the answers themselves, plus both checks on the emitted files.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { MODE_INFO, modeDevice, rowLabel, type OffloadDevice, type Placement } from './modes.js';
import { EstimateInputError, estimateModes, estimatePlacement, normalizeInput } from '../estimate/estimate.js';
import type { EstimateInput, EstimateReport, ModeEstimate } from '../estimate/estimate.js';
import { estimateInputFromSetup } from '../estimate/input.js';
import { modelCatalogOrNone } from '../estimate/models.js';
import type { ModelEntry } from '../estimate/models.js';
import { formatBytes, formatCount } from '../units.js';
import {
  ACCELERATE_KEYS_REFUSED_WITH_DS_FILE,
  CONFIG_KEYS,
  DEPRECATED_JSON_KEYS,
  autoRule,
  keysIn,
  mustKey,
  onlyTrainerFills,
} from './keys.js';
import {
  LAUNCHERS,
  flagName,
  optimizerOffloadDevice,
  paramOffloadDevice,
  question,
  type Answers,
  type QuestionId,
} from './questions.js';
import { accelerateConfigObject, deepSpeedConfigObject, isPlainObject, plainJson } from './emit.js';
import { launchMixedPrecision } from './effective.js';
import type { Setup } from './setup.js';

/** One finding of a rule. */
export interface Finding {
  level: 'error' | 'warning';
  /** A stable rule id, e.g. `offload-param-needs-stage-3`. */
  rule: string;
  /** What is wrong and why. */
  message: string;
  /** How to fix it. */
  fix: string;
  /** The questions that change it, for the wizard to jump to. */
  questions?: QuestionId[];
}

const err = (rule: string, message: string, fix: string, questions?: QuestionId[]): Finding => ({
  level: 'error',
  rule,
  message,
  fix,
  ...(questions ? { questions } : {}),
});
const warn = (rule: string, message: string, fix: string, questions?: QuestionId[]): Finding => ({
  level: 'warning',
  rule,
  message,
  fix,
  ...(questions ? { questions } : {}),
});

// ---------------------------------------------------------------------------------------------
// accelerate

/** Top-level keys accelerate's ClusterConfig knows (plus the legacy keys process_config rewrites): the key table's. */
export const ACCELERATE_KEYS: ReadonlySet<string> = keysIn('yaml', '');
/** The deepspeed_config keys `accelerate launch` understands (its --deepspeed args): the key table's. */
export const ACCELERATE_DS_KEYS: ReadonlySet<string> = keysIn('yaml', 'deepspeed_config');
/** deepspeed_config keys accelerate refuses next to a deepspeed_config_file (from the key table). */
export const FORBIDDEN_WITH_DS_FILE: readonly string[] = ACCELERATE_KEYS_REFUSED_WITH_DS_FILE.filter((k) =>
  k.startsWith('deepspeed_config.'),
).map((k) => k.slice('deepspeed_config.'.length));
const DISTRIBUTED_TYPES = mustKey('yaml', 'distributed_type').values as readonly string[];
const PRECISION_VALUES = mustKey('yaml', 'mixed_precision').values as readonly string[];
const LAUNCHER_VALUES: readonly string[] = LAUNCHERS;

/** What accelerate would reject or silently mishandle in this config object. */
export function checkAccelerateConfig(cfg: Record<string, unknown>): Finding[] {
  const out: Finding[] = [];
  const unknown = Object.keys(cfg)
    .filter((k) => !ACCELERATE_KEYS.has(k))
    .sort();
  if (unknown.length > 0) {
    out.push(
      err(
        'accelerate-unknown-keys',
        `accelerate refuses unknown top-level keys: ${unknown.join(', ')}`,
        'remove them, or upgrade accelerate if they are new keys',
      ),
    );
  }
  const dt = cfg.distributed_type;
  if (dt === undefined)
    out.push(
      err(
        'accelerate-distributed-type',
        'the config has no distributed_type; accelerate refuses it',
        'add distributed_type: DEEPSPEED',
      ),
    );
  else if (typeof dt === 'string' && !DISTRIBUTED_TYPES.includes(dt))
    out.push(
      err(
        'accelerate-distributed-type',
        `'${dt}' is not a valid distributed_type`,
        `use one of ${DISTRIBUTED_TYPES.join(', ')}`,
      ),
    );
  else if (dt !== 'DEEPSPEED')
    out.push(
      warn(
        'accelerate-not-deepspeed',
        `distributed_type is ${String(dt)}, so accelerate will not use DeepSpeed`,
        'set distributed_type: DEEPSPEED',
      ),
    );
  const ce = cfg.compute_environment;
  if (ce !== undefined && ce !== 'LOCAL_MACHINE' && ce !== 'AMAZON_SAGEMAKER')
    out.push(
      err('accelerate-compute-environment', `'${String(ce)}' is not a valid compute_environment`, 'use LOCAL_MACHINE'),
    );
  const mp = cfg.mixed_precision;
  if (mp !== undefined && mp !== null && (typeof mp !== 'string' || !PRECISION_VALUES.includes(mp.toLowerCase()))) {
    out.push(
      err(
        'accelerate-mixed-precision',
        `'${String(mp)}' is not a mixed_precision accelerate launches with`,
        `use one of ${PRECISION_VALUES.join(', ')}`,
        ['mixed_precision'],
      ),
    );
  }
  const np = cfg.num_processes;
  if (np === undefined || np === -1)
    out.push(
      err(
        'accelerate-num-processes',
        'num_processes is not set; accelerate launch then needs --num_processes',
        'set num_processes to the total number of GPUs',
        ['num_processes'],
      ),
    );
  else if (typeof np !== 'number' || !Number.isInteger(np) || np < 1)
    out.push(
      err(
        'accelerate-num-processes',
        `num_processes ${String(np)} is not a positive whole number`,
        'set it to the total number of GPUs',
        ['num_processes'],
      ),
    );
  const nm = typeof cfg.num_machines === 'number' ? cfg.num_machines : 1;
  if (typeof np === 'number' && np > 0 && nm > 0 && np % nm !== 0) {
    out.push(
      err(
        'processes-divisible-by-machines',
        `num_processes ${np} is not divisible by num_machines ${nm}; the launcher starts ${Math.floor(np / nm)} per node and the rest never run`,
        `make num_processes a multiple of ${nm} (it is the TOTAL over all nodes, e.g. ${nm * Math.max(1, Math.round(np / nm))})`,
        ['num_processes', 'num_machines'],
      ),
    );
  }
  if (nm > 1) {
    const rank = cfg.machine_rank;
    if (typeof rank !== 'number' || rank < 0 || rank >= nm)
      out.push(
        err(
          'machine-rank-range',
          `machine_rank ${String(rank)} is outside 0..${nm - 1}`,
          `give this node a rank from 0 to ${nm - 1}`,
          ['machine_rank'],
        ),
      );
    const dsc = isPlainObject(cfg.deepspeed_config) ? cfg.deepspeed_config : {};
    const launcher = typeof dsc.deepspeed_multinode_launcher === 'string' ? dsc.deepspeed_multinode_launcher : 'pdsh';
    const ip = cfg.main_process_ip;
    if (typeof ip !== 'string' || ip.trim() === '') {
      // torchrun ('standard') gets no master address at all, and nossh cannot fall back to ssh; the other
      // DeepSpeed launchers ask the first host of the hostfile over ssh (deepspeed launcher/runner.py).
      if (launcher === 'standard' || launcher === 'nossh') {
        out.push(
          err(
            'multinode-needs-ip',
            `multi-node training with the ${launcher} launcher needs the main process IP address`,
            'set main_process_ip to the address of node 0',
            ['main_process_ip'],
          ),
        );
      } else {
        out.push(
          warn(
            'multinode-needs-ip',
            `no main_process_ip: DeepSpeed's ${launcher} launcher will ask the first host of the hostfile for its address over ssh`,
            'set main_process_ip to the address of node 0 to skip that',
            ['main_process_ip'],
          ),
        );
      }
    }
    const hostfile = dsc.deepspeed_hostfile;
    if (launcher !== 'standard' && (typeof hostfile !== 'string' || hostfile.trim() === '')) {
      // accelerate always passes --hostfile; with an empty one DeepSpeed "will proceed with training with
      // local resources only" and, given no --num_nodes, the other nodes are silently left out.
      out.push(
        err(
          'multinode-hostfile',
          `the ${launcher} launcher has no hostfile, so DeepSpeed would train on this node only and silently leave the others out`,
          'give the path of a hostfile with one row per node, like `node1 slots=8`',
          ['hostfile'],
        ),
      );
    }
    const port = cfg.main_process_port;
    if (
      port !== undefined &&
      port !== null &&
      (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    ) {
      out.push(
        err('port-range', `main_process_port ${String(port)} is not a port (1-65535)`, 'pick a free port, e.g. 29500', [
          'main_process_port',
        ]),
      );
    } else if (port === undefined || port === null) {
      out.push(
        warn(
          'multinode-port',
          'no main_process_port: accelerate uses 29500, which must then be free and open on node 0',
          'set main_process_port explicitly',
          ['main_process_port'],
        ),
      );
    }
  }
  const ds = cfg.deepspeed_config;
  if (isPlainObject(ds)) {
    const strays = Object.keys(ds)
      .filter((k) => !ACCELERATE_DS_KEYS.has(k))
      .sort();
    if (strays.length > 0)
      out.push(
        warn(
          'accelerate-unknown-ds-keys',
          `accelerate launch does not know deepspeed_config keys ${strays.join(', ')}; they are ignored`,
          'remove them or move them into the DeepSpeed JSON',
        ),
      );
    if (
      typeof ds.deepspeed_config_file === 'string' &&
      ds.deepspeed_config_file !== '' &&
      ds.deepspeed_config_file !== 'none'
    ) {
      const clash: string[] = FORBIDDEN_WITH_DS_FILE.filter((k) => k in ds);
      if (mp !== undefined && mp !== null) clash.push('mixed_precision');
      if (clash.length > 0) {
        out.push(
          err(
            'forbidden-next-to-ds-file',
            `accelerate refuses ${clash.join(', ')} next to deepspeed_config_file ("the following accelerate config variables will be ignored")`,
            clash.includes('mixed_precision')
              ? 'remove them from the YAML; set the precision in the JSON (fp16/bf16 "enabled") or pass --mixed_precision to accelerate launch, and the other values in the JSON'
              : 'remove them from the YAML and set them in the DeepSpeed JSON',
            ['mixed_precision'],
          ),
        );
      }
    }
    const launcher = ds.deepspeed_multinode_launcher;
    if (launcher !== undefined && (typeof launcher !== 'string' || !LAUNCHER_VALUES.includes(launcher))) {
      out.push(
        err(
          'multinode-launcher',
          `'${String(launcher)}' is not a DeepSpeed multi-node launcher`,
          `use one of ${LAUNCHER_VALUES.join(', ')}`,
          ['multinode_launcher'],
        ),
      );
    }
  } else if (dt === 'DEEPSPEED') {
    out.push(
      warn(
        'accelerate-no-ds-config',
        'distributed_type is DEEPSPEED but there is no deepspeed_config; accelerate uses ZeRO-2 with its defaults',
        'add deepspeed_config with a deepspeed_config_file',
      ),
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// DeepSpeed

/** zero_optimization fields, aliases and deprecated names (DeepSpeedZeroConfig; unknown keys are errors). */
export const ZERO_KEYS: ReadonlySet<string> = keysIn('json', 'zero_optimization');
const zeroKeysOf = (type: 'int' | 'bool') =>
  CONFIG_KEYS.filter(
    (k) =>
      k.file === 'json' &&
      k.path === `zero_optimization.${k.path.split('.')[1]}` &&
      k.type === type &&
      (type === 'bool' || k.min === 0),
  ).flatMap((k) => [k.path.split('.')[1]!, ...(k.alias ? [k.alias] : [])]);
/** Whole-number zero_optimization keys (>= 0), by both names. */
const INT_ZERO_KEYS = zeroKeysOf('int');
/** Boolean zero_optimization keys, by both names. */
const BOOL_ZERO_KEYS = zeroKeysOf('bool');
/** The name of a zero_optimization key in messages (`offload_optimizer`, not its dotted path). */
const zeroName = (path: string) => path.replace(/^zero_optimization\./, '');

function findAutos(v: unknown, path: string, out: string[]): void {
  if (v === 'auto') out.push(path);
  else if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) findAutos(x, path ? `${path}.${k}` : k, out);
}

const isWholeNonNeg = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** What DeepSpeed would reject or silently ignore in this config (as consumed through accelerate). */
export function checkDeepSpeedConfig(cfg: Record<string, unknown>, opts: { worldSize?: number } = {}): Finding[] {
  const out: Finding[] = [];
  const zero = cfg.zero_optimization;
  if (!isPlainObject(zero)) {
    out.push(
      err(
        'ds-no-zero',
        'the DeepSpeed JSON has no zero_optimization block; accelerate refuses it ("Please specify the ZeRO optimization config")',
        'add "zero_optimization": {"stage": 2}',
      ),
    );
    return out;
  }
  const unknownIn = (obj: Record<string, unknown>, known: ReadonlySet<string>, where: string) => {
    const bad = Object.keys(obj)
      .filter((k) => !known.has(k))
      .sort();
    if (bad.length > 0)
      out.push(
        err(
          'ds-unknown-keys',
          `DeepSpeed rejects unknown keys in ${where}: ${bad.join(', ')}`,
          `remove them (its schema forbids extra keys)`,
        ),
      );
  };
  unknownIn(zero, ZERO_KEYS, 'zero_optimization');
  for (const dep of DEPRECATED_JSON_KEYS) {
    const name = zeroName(dep.path);
    if (!dep.deprecated || !(name in zero)) continue;
    const repl = mustKey('json', dep.deprecated.use);
    const replName = zeroName(repl.path);
    const replTop = replName.split('.')[0]!;
    // DeepSpeed asserts only where it carries the value over (cpu_offload_use_pin_memory just warns).
    if (dep.deprecated.carries !== 'nothing' && (replTop in zero || (repl.alias !== undefined && repl.alias in zero)))
      out.push(
        err(
          'ds-deprecated-and-new',
          `zero_optimization has both the deprecated ${name} and ${replName}; DeepSpeed refuses that`,
          `keep only ${replName}`,
        ),
      );
    else out.push(warn('ds-deprecated', `zero_optimization.${name} is deprecated`, `use ${replName} instead`));
  }
  const stage = zero.stage;
  let stageNum = 0;
  if (stage === 'auto') {
    stageNum = 2;
  } else if (stage === undefined) {
    out.push(
      warn(
        'ds-stage-missing',
        'zero_optimization has no stage, so DeepSpeed uses stage 0 (no ZeRO)',
        'set "stage" to 1, 2 or 3',
        ['mode'],
      ),
    );
  } else if (typeof stage !== 'number' || ![0, 1, 2, 3].includes(stage)) {
    out.push(
      err('ds-stage', `zero_optimization.stage ${JSON.stringify(stage)} is not 0, 1, 2 or 3`, 'use 1, 2 or 3', [
        'mode',
      ]),
    );
  } else {
    stageNum = stage;
  }
  for (const k of INT_ZERO_KEYS) {
    const v = zero[k];
    // pydantic's lax mode takes "5e7"-like strings; a negative or fractional number is refused.
    if (v !== undefined && v !== 'auto' && !isWholeNonNeg(v)) {
      const lax = typeof v === 'string' && isWholeNonNeg(Number(v)) && v.trim() !== '';
      out.push(
        (lax ? warn : err)(
          'ds-type',
          `zero_optimization.${k} must be a whole number >= 0, not ${JSON.stringify(v)}`,
          'write a count of elements such as 5e7',
        ),
      );
    }
  }
  for (const k of BOOL_ZERO_KEYS) {
    const v = zero[k];
    // pydantic's lax mode takes "true"/"yes"/1 and their opposites; anything else is refused.
    if (v !== undefined && v !== 'auto' && v !== null && typeof v !== 'boolean') {
      const lax = [0, 1, 'true', 'false', 'yes', 'no', 'on', 'off', '1', '0', 't', 'f', 'y', 'n'].includes(
        typeof v === 'string' ? v.toLowerCase() : (v as number),
      );
      out.push(
        (lax ? warn : err)(
          'ds-type',
          `zero_optimization.${k} must be true or false, not ${JSON.stringify(v)}`,
          'write true or false',
        ),
      );
    }
  }
  const devices: Record<string, string> = {};
  for (const [name, known] of [
    ['offload_optimizer', keysIn('json', 'zero_optimization.offload_optimizer')],
    ['offload_param', keysIn('json', 'zero_optimization.offload_param')],
  ] as const) {
    const block = zero[name];
    if (block === undefined || block === null) continue;
    if (!isPlainObject(block)) {
      out.push(err('ds-type', `zero_optimization.${name} must be an object`, `write "${name}": {"device": "cpu"}`));
      continue;
    }
    unknownIn(block, known, `zero_optimization.${name}`);
    const device = block.device ?? 'none';
    if (device !== 'auto' && !['none', 'cpu', 'nvme'].includes(String(device))) {
      out.push(
        err(
          'ds-offload-device',
          `zero_optimization.${name}.device ${JSON.stringify(device)} is not none, cpu or nvme`,
          'use cpu or nvme',
          ['offload_device'],
        ),
      );
    }
    devices[name] = String(device);
    if (device === 'nvme' && (typeof block.nvme_path !== 'string' || block.nvme_path === '')) {
      out.push(
        err(
          'nvme-needs-path',
          `zero_optimization.${name} offloads to NVMe but has no nvme_path`,
          'set nvme_path to a directory on a local NVMe drive',
          ['nvme_path'],
        ),
      );
    }
    if (name === 'offload_optimizer' && typeof block.ratio === 'number' && block.ratio < 1 && stageNum !== 3) {
      out.push(
        err(
          'ds-partial-offload-stage',
          'offload_optimizer.ratio < 1 (partial offload) needs ZeRO stage 3; DeepSpeed asserts',
          'use stage 3 or remove ratio',
          ['mode'],
        ),
      );
    }
  }
  if (devices.offload_param && devices.offload_param !== 'none' && stageNum < 3) {
    out.push(
      warn(
        'offload-param-needs-stage-3',
        `offload_param is only used by ZeRO stage 3; at stage ${stageNum} DeepSpeed silently ignores it`,
        'remove offload_param, or use stage 3 (ZeRO-3 offload)',
        ['mode'],
      ),
    );
  }
  if (stageNum < 3 && (devices.offload_optimizer === 'nvme' || devices.offload_param === 'nvme')) {
    out.push(
      warn(
        'nvme-needs-stage-3',
        `NVMe offload only works at ZeRO stage 3; at stage ${stageNum} DeepSpeed does a plain CPU offload`,
        'use ZeRO-3 offload for NVMe, or offload to cpu',
        ['mode', 'offload_device'],
      ),
    );
  }
  for (const [name, known] of [
    ['fp16', keysIn('json', 'fp16')],
    ['bf16', keysIn('json', 'bf16')],
  ] as const) {
    const block = cfg[name];
    if (isPlainObject(block)) unknownIn(block, known, name);
  }
  const fp16 = cfg.fp16;
  const bf16 = isPlainObject(cfg.bf16) ? cfg.bf16 : cfg.bfloat16;
  if (isPlainObject(fp16) && isPlainObject(bf16) && fp16.enabled === true && bf16.enabled === true) {
    out.push(
      err('fp16-and-bf16', 'fp16 and bf16 are both enabled; DeepSpeed refuses that', 'enable only one of them', [
        'mixed_precision',
      ]),
    );
  }
  const autos: string[] = [];
  findAutos(cfg, '', autos);
  const nvmeAuto = autos.filter((p) => p.endsWith('.nvme_path'));
  if (nvmeAuto.length > 0) {
    out.push(
      err(
        'auto-nvme-path',
        `"auto" at ${nvmeAuto.join(', ')} is filled with the string "none" (accelerate never passes the YAML's NVMe paths on), so DeepSpeed would swap to ./none`,
        'write the NVMe directory itself',
        ['nvme_path'],
      ),
    );
  }
  // Who fills each "auto" (the key table): accelerate always, accelerate under a condition, or nobody.
  const rule = (p: string) => autoRule(p);
  const conditional = autos.filter((p) => rule(p)?.accelerate?.when !== undefined);
  if (conditional.length > 0) {
    out.push(
      warn(
        'auto-conditional',
        `"auto" at ${conditional.join(', ')} is filled only when ${[...new Set(conditional.map((p) => rule(p)!.accelerate!.when!))].join('; and when ')}`,
        'write concrete values if that does not hold for your script',
      ),
    );
  }
  const trainerOnly = autos.filter((p) => onlyTrainerFills(p));
  if (trainerOnly.length > 0) {
    out.push(
      warn(
        'auto-trainer-only',
        `"auto" at ${trainerOnly.join(', ')} is filled only by the HF Trainer (from ${trainerOnly.map((p) => rule(p)!.trainer).join('; ')}): accelerate fills it nowhere, so a script that calls accelerate itself raises "not found in kwargs" at prepare()`,
        'keep it for a Trainer script; for a plain accelerate script write the value there',
      ),
    );
  }
  const unfilled = autos.filter(
    (p) => rule(p)?.accelerate === undefined && !onlyTrainerFills(p) && !p.endsWith('.nvme_path'),
  );
  if (unfilled.length > 0) {
    out.push(
      err(
        'auto-unfilled',
        `"auto" at ${unfilled.join(', ')} is not filled in by accelerate, which then raises "not found in kwargs" at prepare() (DeepSpeed alone would silently drop it)`,
        'write a concrete value there',
      ),
    );
  }
  if (stage === 'auto') {
    out.push(
      warn(
        'auto-stage',
        'zero_optimization.stage "auto" is filled from the YAML\'s zero_stage, which cannot sit next to a JSON file, so it becomes 2',
        'write the stage you want (1, 2 or 3)',
        ['mode'],
      ),
    );
  }
  if (cfg.gradient_allreduce_op === 'sum' && stageNum === 3)
    out.push(
      err('ds-allreduce-sum-stage3', 'gradient_allreduce_op "sum" is refused at stage 3', 'remove it or use "mean"'),
    );
  const tbs = cfg.train_batch_size;
  const micro = cfg.train_micro_batch_size_per_gpu;
  const gas = cfg.gradient_accumulation_steps;
  if (
    opts.worldSize &&
    typeof tbs === 'number' &&
    typeof micro === 'number' &&
    typeof gas === 'number' &&
    tbs !== micro * gas * opts.worldSize
  ) {
    out.push(
      err(
        'ds-batch-size',
        `train_batch_size ${tbs} != micro batch ${micro} x accumulation ${gas} x ${opts.worldSize} GPUs; DeepSpeed asserts`,
        'set train_batch_size to "auto" or to the product',
      ),
    );
  }
  // A fixed total beside an "auto" micro batch or accumulation: accelerate fills those and leaves the total.
  const autoBatch = (
    [
      ['train_micro_batch_size_per_gpu', micro],
      ['gradient_accumulation_steps', gas],
    ] as const
  )
    .filter(([, v]) => v === 'auto')
    .map(([k]) => k);
  if (typeof tbs === 'number' && autoBatch.length > 0) {
    const ws = opts.worldSize;
    if (ws && Number.isInteger(tbs) && tbs % ws !== 0)
      out.push(
        err(
          'ds-batch-size',
          `train_batch_size ${tbs} is not a multiple of the ${ws} GPUs, so no micro batch and accumulation can make DeepSpeed's identity (${tbs} = micro batch x accumulation x ${ws}) hold`,
          'write "auto" for train_batch_size (accelerate then computes it), or a multiple of the GPUs',
        ),
      );
    else
      out.push(
        warn(
          'ds-batch-fixed',
          `train_batch_size ${tbs} is fixed while ${autoBatch.join(' and ')} ${autoBatch.length > 1 ? 'are' : 'is'} "auto": accelerate fills ${autoBatch.length > 1 ? 'them' : 'it'} from your DataLoader's batch size and Accelerator(gradient_accumulation_steps=...) and leaves train_batch_size as it is, and DeepSpeed asserts ${tbs} = micro batch x accumulation x ${ws ?? 'the GPUs'}`,
          'write "auto" for train_batch_size (accelerate then computes it), or fix the micro batch and the accumulation too',
        ),
      );
  }
  for (const [k, v] of [
    ['train_batch_size', tbs],
    ['train_micro_batch_size_per_gpu', micro],
    ['gradient_accumulation_steps', gas],
  ] as const) {
    if (v !== undefined && v !== 'auto' && (typeof v !== 'number' || !Number.isInteger(v) || v < 1))
      out.push(
        err(
          'ds-batch-size',
          `${k} must be a whole number > 0 or "auto", not ${JSON.stringify(v)}`,
          'write "auto" to let accelerate fill it',
        ),
      );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The setup

/** The flags by which DiffSynth-Studio and HF-style scripts turn on gradient checkpointing. */
export const GRAD_CKPT_FLAGS: readonly string[] = ['--use_gradient_checkpointing', '--gradient_checkpointing'];

/**
 * Whether the setup's own config is ZeRO-3 with offloaded parameters, a step that uses it asks for gradient
 * checkpointing, and the JSON gets no activation_checkpointing block (the seed's caveat): the condition of
 * validate's `zero3-offload-needs-activation-checkpointing`, which the step findings must not repeat.
 */
export function setupLacksCheckpointingBlock(setup: Setup): boolean {
  const a = setup.answers;
  const zero = (plainJson(deepSpeedConfigObject(setup)) as Record<string, unknown>).zero_optimization;
  const stage = isPlainObject(zero) && typeof zero.stage === 'number' ? zero.stage : MODE_INFO[a.mode].stage;
  const usesCkpt = setup.steps.some((s) => s.usesConfig && s.args.some((x) => GRAD_CKPT_FLAGS.includes(x)));
  return stage === 3 && paramOffloadDevice(a) !== 'none' && usesCkpt && !a.gradient_checkpointing;
}

/** Every finding for a setup: its answers, then the emitted YAML and JSON. */
export function validate(setup: Setup): Finding[] {
  const a = setup.answers;
  const info = MODE_INFO[a.mode];
  const out: Finding[] = [];
  // The rules read the JSON as it will be written (kept keys of an import included), not just the answers.
  const json = plainJson(deepSpeedConfigObject(setup)) as Record<string, unknown>;
  const zero = isPlainObject(json.zero_optimization) ? json.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : info.stage;
  const optDevice = optimizerOffloadDevice(a);
  const paramDevice = paramOffloadDevice(a);
  const offload = optDevice !== 'none' || paramDevice !== 'none';
  if ((optDevice === 'nvme' || paramDevice === 'nvme') && a.nvme_path.trim() === '') {
    out.push(
      err('nvme-needs-path', 'NVMe offload needs a path on the NVMe drive', 'type a directory such as /nvme/zero', [
        'nvme_path',
      ]),
    );
  }
  if (!offload && a.offload_device === 'nvme') {
    out.push(
      warn(
        'offload-device-unused',
        `offload to NVMe was asked for, but ${info.label} offloads nothing, so it is ignored`,
        'pick 2-offload or 3-offload to offload, or leave --offload-device out',
        ['mode', 'offload_device'],
      ),
    );
  }
  if (info.stage !== 3 && a.offload_param_device !== 'none') {
    out.push(
      warn(
        'offload-param-below-stage-3',
        `parameters offloaded to ${a.offload_param_device} has no effect with ${info.label}: DeepSpeed offloads parameters only at stage 3, so zerowiz writes no offload_param`,
        'pick a ZeRO-3 mode, or leave --offload-param-device out',
        ['offload_param_device', 'mode'],
      ),
    );
  }
  if (a.zero3_init && stage !== 3) {
    out.push(
      warn(
        'zero3-init-below-stage-3',
        `zero3_init_flag has no effect at ZeRO stage ${stage}; accelerate turns it off with a warning`,
        'answer no, or pick a ZeRO-3 mode',
        ['zero3_init', 'mode'],
      ),
    );
  }
  if (setupLacksCheckpointingBlock(setup)) {
    out.push(
      err(
        'zero3-offload-needs-activation-checkpointing',
        "ZeRO-3 offload is incompatible with PyTorch's native gradient checkpointing, and the training step asks for checkpointing but the JSON has no activation_checkpointing block",
        "answer yes to gradient checkpointing so the block is written (scripts such as DiffSynth-Studio then use DeepSpeed's checkpointing)",
        ['gradient_checkpointing'],
      ),
    );
  }
  if (stage === 0) {
    out.push(
      warn(
        'zero-stage-0',
        'the DeepSpeed JSON keeps zero_optimization.stage 0 (imported): ZeRO is off, so nothing is sharded or offloaded',
        'choose a ZeRO mode to turn ZeRO on',
        ['mode'],
      ),
    );
  } else if (a.num_processes === 1 && !offload) {
    out.push(
      warn(
        'single-gpu-no-saving',
        `with one GPU, ZeRO stage ${stage} shards over a single device and saves no memory`,
        'use an offload mode (2-offload or 3-offload) to save GPU memory, or more GPUs',
        ['mode', 'num_processes'],
      ),
    );
  }
  const enabled = (k: string) => isPlainObject(json[k]) && (json[k] as Record<string, unknown>).enabled === true;
  const jsonPrecision = enabled('fp16') ? 'fp16' : enabled('bf16') ? 'bf16' : null;
  const lp = launchMixedPrecision(setup);
  if (lp !== null && lp !== 'no' && jsonPrecision !== null && (lp === 'fp8' ? 'bf16' : lp) !== jsonPrecision) {
    out.push(
      err(
        'precision-conflict',
        `a step passes --mixed_precision ${lp} but the JSON enables ${jsonPrecision}; accelerate refuses ("--mixed_precision arg cannot be set to ${lp} when ${jsonPrecision === 'bf16' ? 'fp16' : 'bf16'} is set in the DeepSpeed config file")`,
        `pick ${lp === 'fp8' ? 'bf16' : lp} or auto here, or change the step's --mixed_precision`,
        ['mixed_precision'],
      ),
    );
  }
  if (a.mixed_precision === 'auto' && lp === null && jsonPrecision === null) {
    out.push(
      warn(
        'precision-auto-fp32',
        'fp16/bf16 are "auto" and no step passes --mixed_precision, so accelerate fills both with false: training runs in fp32 unless the script passes mixed_precision to Accelerator()',
        'pick bf16 or fp16 here, or pass --mixed_precision bf16 to accelerate launch',
        ['mixed_precision'],
      ),
    );
  }
  if (a.model_params !== null && a.largest_layer_params !== null && a.largest_layer_params > a.model_params) {
    out.push(
      err(
        'largest-layer-above-params',
        `the largest layer (${formatCount(a.largest_layer_params)} parameters) exceeds the model (${formatCount(a.model_params)}): it is one module of the model`,
        'give the parameters of the largest single layer (e.g. 120M), or leave it empty',
        ['largest_layer_params', 'model_params'],
      ),
    );
  }
  out.push(...fitFindings(setup));
  const yaml = accelerateConfigObject(setup);
  const seen = new Set(out.map((f) => f.rule));
  for (const f of [...checkAccelerateConfig(yaml), ...checkDeepSpeedConfig(json, { worldSize: a.num_processes })]) {
    if (!seen.has(f.rule)) out.push(f);
  }
  return out;
}

/** The answers' own mode through the peak model (what fitFindings checks and a launch is compared with). */
export interface OwnModeEstimate {
  /** The estimator's input for the answers (src/estimate/input.ts). */
  input: EstimateInput;
  /** Where the answers put the optimizer state and the parameters. */
  placement: Placement;
  /** The offload device of the mode (null for a mode that offloads nothing). */
  device: OffloadDevice | null;
  /** The mode's row on `input`. */
  row: ModeEstimate;
  /**
   * The mode's row in an estimate of every mode (estimateModes, on `input` or a variant of it): the report's
   * own row when it has the same placement, else computed on the report's input.
   */
  rowIn(report: EstimateReport): ModeEstimate;
}

/**
 * The estimate of the answers' own mode (src/estimate/peak.ts, on the same input as the wizard's table and `zerowiz
 * estimate`); null without a model size. Throws EstimateInputError for answers it cannot estimate (unknown
 * LoRA targets, ...), and the estimator's errors for figures beyond its range.
 */
export function ownModeEstimate(a: Setup['answers'], models?: readonly ModelEntry[]): OwnModeEstimate | null {
  const est = estimateInputFromSetup(a, { models: models ?? modelCatalogOrNone() });
  if (!est.input) return null;
  const { placement } = est;
  const mode = a.mode;
  const device = modeDevice(mode, a.offload_device);
  const same = (p: Placement) =>
    p.stage === placement.stage && p.optimizer === placement.optimizer && p.param === placement.param;
  return {
    input: est.input,
    placement,
    device,
    row: estimatePlacement(placement, normalizeInput(est.input), mode, device),
    rowIn: (report) =>
      report.modes.find((r) => r.mode === mode && r.offloadDevice === device && same(r.placement)) ??
      estimatePlacement(placement, report.input, mode, device),
  };
}

/**
 * When the model size and the GPU memory are known: does the chosen mode's peak fit (src/estimate/peak.ts, on the
 * same input as the wizard's table and `zerowiz estimate`: src/estimate/input.ts)? A warning, not an error:
 * the peak is an estimate. When the answers cannot be estimated (LoRA targets the catalog does not know,
 * ...), a warning says so.
 */
export function fitFindings(setup: Setup, models?: readonly ModelEntry[]): Finding[] {
  const a = setup.answers;
  if (a.model_params === null || a.gpu_memory === null) return [];
  let row: ModeEstimate;
  let report: EstimateReport | null = null;
  try {
    const own = ownModeEstimate(a, models);
    if (!own) return [];
    row = own.row;
    if (row.fits === false) report = estimateModes(own.input);
  } catch (err) {
    if (!(err instanceof EstimateInputError)) return [];
    return [
      warn('estimate-input', `the peak memory cannot be estimated: ${err.message}`, err.hint, [
        'fine_tuning',
        'lora_targets',
        'trainable_params',
        'model_params',
      ]),
    ];
  }
  if (row.fits !== false) return [];
  const where =
    row.gpuFits === false
      ? `peaks at ${formatBytes(row.gpuNeedBytes)} per GPU, over the ${formatBytes(a.gpu_memory * (1 - a.headroom / 100))} usable of ${formatBytes(a.gpu_memory)} (${a.headroom}% headroom)`
      : `needs ${formatBytes(row.peak.cpuBytes)} of CPU memory per node of ${formatBytes(a.cpu_memory ?? 0)}`;
  const better = report?.recommended ? `. Instead: ${report.reason}` : report ? `. ${report.reason}` : '';
  return [
    warn(
      'mode-does-not-fit',
      `${rowLabel(a.mode, modeDevice(a.mode, a.offload_device))} ${where}${better}`,
      'pick a mode that fits, turn on gradient checkpointing, lower the micro-batch, or add GPUs',
      ['mode', 'gpu_memory', 'cpu_memory', 'micro_batch', 'gradient_checkpointing'],
    ),
  ];
}

/** How an answer is named in a finding: as its flag (`--nvme-path`) or its id (`nvme_path`, in presets). */
export type AnswerNaming = 'flag' | 'answer';

function answerName(id: QuestionId, as: AnswerNaming): string {
  return as === 'flag' ? `--${flagName(id)}` : id;
}

const MULTI_NODE_IDS: ReadonlySet<QuestionId> = new Set([
  'machine_rank',
  'main_process_ip',
  'main_process_port',
  'same_network',
  'rdzv_backend',
  'multinode_launcher',
  'hostfile',
  'exclusion_filter',
  'inclusion_filter',
]);

/** Why a question is not asked for these answers (its `when` is false), in words. */
function notAskedBecause(id: QuestionId, a: Answers): string {
  const info = MODE_INFO[a.mode];
  if (MULTI_NODE_IDS.has(id) && a.num_machines <= 1) return 'there is one machine (num_machines 1)';
  if (id === 'rdzv_backend') return 'the machines are on the same network (same_network yes)';
  if (id === 'hostfile' || id === 'exclusion_filter' || id === 'inclusion_filter')
    return `the ${a.multinode_launcher} launcher takes none`;
  if (id === 'largest_layer_params' || id === 'gpu_memory' || id === 'cpu_memory')
    return 'no model size is given (model_params)';
  if (id === 'nvme_path' && (info.offloadOptimizer || info.offloadParam))
    return `the offload device is ${a.offload_device}, not nvme`;
  if (id === 'offload_device' || id === 'nvme_path' || id === 'pin_memory')
    return `${info.label} offloads nothing (only 2-offload and 3-offload do)`;
  if (info.stage !== 3) return `it is for ZeRO-3 only, and the mode is ${info.label}`;
  return 'it is not asked for these answers';
}

/**
 * Answers given (as flags or in a preset) for questions that these answers do not ask: each is a warning
 * naming it and saying why it does not apply (it is not written to the files).
 */
export function answerFindings(a: Answers, given: Iterable<QuestionId>, as: AnswerNaming): Finding[] {
  const out: Finding[] = [];
  for (const id of given) {
    if (question(id).when(a)) continue;
    const name = answerName(id, as);
    out.push(
      warn(
        'answer-not-applicable',
        `${name} does not apply: ${notAskedBecause(id, a)}; it is not written`,
        `leave ${name} out, or change the answer it depends on`,
        [id],
      ),
    );
  }
  return out;
}

/**
 * An NVMe offload whose nvme_path does not exist here (issue 23: the NVMe presets write /nvme): DeepSpeed
 * creates its swap folder under it only if it can, and a missing mount means swapping to whatever disk
 * holds the path, or failing at the first step.
 */
function nvmePathFindings(setup: Setup, as: AnswerNaming, cwd: string): Finding[] {
  const a = setup.answers;
  if (optimizerOffloadDevice(a) !== 'nvme' && paramOffloadDevice(a) !== 'nvme') return [];
  const abs = resolve(cwd, a.nvme_path);
  if (existsSync(abs)) return [];
  const name = answerName('nvme_path', as);
  return [
    warn(
      'nvme-path-missing',
      `${name} ${a.nvme_path} does not exist on this machine: DeepSpeed would swap the offloaded states to a folder that is not there`,
      `give a directory on a local NVMe drive (${as === 'flag' ? '--nvme-path /mnt/nvme' : 'the NVMe path question'}), e.g. the mount point lsblk -o NAME,MOUNTPOINT shows for the drive`,
      ['nvme_path'],
    ),
  ];
}

/**
 * Checks that need the file system (not part of validate(), which is pure): an NVMe path that does not
 * exist (nvmePathFindings); a ds_config_path that names
 * neither an existing file (resolved from `cwd`, as accelerate resolves it from the launch directory) nor
 * the JSON zerowiz writes.
 */
export function fileFindings(setup: Setup, as: AnswerNaming, cwd = process.cwd()): Finding[] {
  const out = nvmePathFindings(setup, as, cwd);
  const ref = setup.answers.ds_config_path;
  if (ref === '') return out;
  const abs = resolve(cwd, ref);
  if (abs === resolve(cwd, setup.files.dsConfig) || existsSync(abs)) return out;
  const name = answerName('ds_config_path', as);
  return [
    ...out,
    warn(
      'ds-config-path-missing',
      `${name} ${ref} does not exist (resolved from ${cwd}): the YAML would point accelerate at a missing file, and zerowiz writes the JSON to ${setup.files.dsConfig}`,
      `give the path of an existing DeepSpeed JSON (relative paths are resolved from where you launch), or leave ${name} out`,
      ['ds_config_path'],
    ),
  ];
}

/** A finding as printed by every command: `warning: message` and an indented `fix:` line. */
export function formatFinding(f: Finding): string {
  return `${f.level}: ${f.message}\n  fix: ${f.fix}`;
}

/** True when no finding is an error. */
export function isValid(findings: Finding[]): boolean {
  return findings.every((f) => f.level !== 'error');
}
