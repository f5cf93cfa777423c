import {
  ACCELERATE_KEYS_REFUSED_WITH_DS_FILE,
  CONFIG_KEYS,
  DEPRECATED_JSON_KEYS,
  autoRule,
  keysIn,
  mustKey,
  onlyTrainerFills,
} from './keys.js';
import { LAUNCHERS } from './questions.js';
import { isPlainObject } from './emit.js';

import { err, warn, type Finding } from './finding.js';

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

/**
 * What DeepSpeed would reject or silently ignore in this config (as consumed through accelerate): a pipeline of
 * the checks below, in the order their findings are said.
 */
export function checkDeepSpeedConfig(cfg: Record<string, unknown>, opts: { worldSize?: number } = {}): Finding[] {
  const zero = cfg.zero_optimization;
  if (!isPlainObject(zero))
    return [
      err(
        'ds-no-zero',
        'the DeepSpeed JSON has no zero_optimization block; accelerate refuses it ("Please specify the ZeRO optimization config")',
        'add "zero_optimization": {"stage": 2}',
      ),
    ];
  const stage = zeroStage(zero.stage);
  return [
    ...unknownKeys(zero, ZERO_KEYS, 'zero_optimization'),
    ...deprecatedKeys(zero),
    ...stage.findings,
    ...zeroTypes(zero),
    ...offloadBlocks(zero, stage.num),
    ...precisionBlocks(cfg),
    ...masterWeightFindings(
      cfg,
      stage.num,
      isPlainObject(zero.offload_optimizer) ? String(zero.offload_optimizer.device ?? 'none') : 'none',
    ),
    ...autoFindings(cfg, zero.stage),
    ...(cfg.gradient_allreduce_op === 'sum' && stage.num === 3
      ? [err('ds-allreduce-sum-stage3', 'gradient_allreduce_op "sum" is refused at stage 3', 'remove it or use "mean"')]
      : []),
    ...batchFindings(cfg, opts.worldSize),
  ];
}

/** Keys of `obj` DeepSpeed's schema does not know (it forbids extra keys). */
function unknownKeys(obj: Record<string, unknown>, known: ReadonlySet<string>, where: string): Finding[] {
  const bad = Object.keys(obj)
    .filter((k) => !known.has(k))
    .sort();
  return bad.length > 0
    ? [
        err(
          'ds-unknown-keys',
          `DeepSpeed rejects unknown keys in ${where}: ${bad.join(', ')}`,
          `remove them (its schema forbids extra keys)`,
        ),
      ]
    : [];
}

/** Deprecated zero_optimization keys: a warning, or an error beside the key that replaces them. */
function deprecatedKeys(zero: Record<string, unknown>): Finding[] {
  const out: Finding[] = [];
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
  return out;
}

/** The ZeRO stage DeepSpeed runs (an "auto" becomes 2, none 0), and what is wrong with the value written. */
function zeroStage(stage: unknown): { num: number; findings: Finding[] } {
  if (stage === 'auto') return { num: 2, findings: [] };
  if (stage === undefined)
    return {
      num: 0,
      findings: [
        warn(
          'ds-stage-missing',
          'zero_optimization has no stage, so DeepSpeed uses stage 0 (no ZeRO)',
          'set "stage" to 1, 2 or 3',
          ['mode'],
        ),
      ],
    };
  if (typeof stage !== 'number' || ![0, 1, 2, 3].includes(stage))
    return {
      num: 0,
      findings: [
        err('ds-stage', `zero_optimization.stage ${JSON.stringify(stage)} is not 0, 1, 2 or 3`, 'use 1, 2 or 3', [
          'mode',
        ]),
      ],
    };
  return { num: stage, findings: [] };
}

/** zero_optimization's whole-number and boolean keys as pydantic reads them (lax: a warning; else refused). */
function zeroTypes(zero: Record<string, unknown>): Finding[] {
  const out: Finding[] = [];
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
  return out;
}

/** The offload blocks: their shape, devices and NVMe paths, then what the stage makes of them. */
function offloadBlocks(zero: Record<string, unknown>, stageNum: number): Finding[] {
  const out: Finding[] = [];
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
    out.push(...unknownKeys(block, known, `zero_optimization.${name}`));
    devices[name] = String(block.device ?? 'none');
    out.push(...offloadBlock(name, block, stageNum));
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
  return out;
}

/** One offload block's device, its NVMe path, and a partial optimizer offload below stage 3. */
function offloadBlock(name: string, block: Record<string, unknown>, stageNum: number): Finding[] {
  const out: Finding[] = [];
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
  return out;
}

/** The precision blocks: their keys, and fp16 with bf16. */
function precisionBlocks(cfg: Record<string, unknown>): Finding[] {
  const out: Finding[] = [];
  for (const [name, known] of [
    ['fp16', keysIn('json', 'fp16')],
    ['bf16', keysIn('json', 'bf16')],
  ] as const) {
    const block = cfg[name];
    if (isPlainObject(block)) out.push(...unknownKeys(block, known, name));
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
  return out;
}

/** Each "auto" by who fills it (the key table): accelerate always, under a condition, the Trainer only, nobody. */
function autoFindings(cfg: Record<string, unknown>, stage: unknown): Finding[] {
  const out: Finding[] = [];
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
  return out;
}

/** The batch sizes: DeepSpeed's identity, a fixed total beside an "auto" part, and their types. */
function batchFindings(cfg: Record<string, unknown>, worldSize: number | undefined): Finding[] {
  const out: Finding[] = [];
  const tbs = cfg.train_batch_size;
  const micro = cfg.train_micro_batch_size_per_gpu;
  const gas = cfg.gradient_accumulation_steps;
  if (
    worldSize &&
    typeof tbs === 'number' &&
    typeof micro === 'number' &&
    typeof gas === 'number' &&
    tbs !== micro * gas * worldSize
  ) {
    out.push(
      err(
        'ds-batch-size',
        `train_batch_size ${tbs} != micro batch ${micro} x accumulation ${gas} x ${worldSize} GPUs; DeepSpeed asserts`,
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
    const ws = worldSize;
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

const MASTER_FIX =
  'keep fp32 master weights (--master-weights fp32), or drop the bf16 master-weight keys from the JSON';

/**
 * The master-weight keys, as DeepSpeed 0.19.5 checks them (runtime/config.py and ZeRO's
 * _configure_master_weights, base_optimizer.py) through accelerate 1.15 (which, with an offloaded optimizer and
 * a torch optimizer from the script, builds DeepSpeedCPUAdam(lr, weight_decay) with its default fp32 moments:
 * utils/deepspeed.py map_pytorch_optim_to_deepspeed):
 * - bf16_optimizer_states needs bf16_master_weights_and_grads, and both need ZeRO stage 1, 2 or 3;
 * - bf16 (or fp16) master weights without bf16 optimizer states need the optimizer offloaded (DeepSpeedCPUAdam);
 * - bf16 optimizer states with an offloaded optimizer need a DeepSpeedCPUAdam with bf16 moments, which only
 *   DeepSpeed builds (an `optimizer` block in the JSON), never accelerate;
 * - with bf16.enabled "auto", accelerate fills the precision from the launch: without bf16 there, the model
 *   trains in fp32 beside bf16 master weights and moments.
 */
function masterWeightFindings(cfg: Record<string, unknown>, stage: number, offload: string): Finding[] {
  const bf16 = isPlainObject(cfg.bf16) ? cfg.bf16 : isPlainObject(cfg.bfloat16) ? cfg.bfloat16 : {};
  const fp16 = isPlainObject(cfg.fp16) ? cfg.fp16 : {};
  const master = bf16.bf16_master_weights_and_grads === true;
  const states = bf16.bf16_optimizer_states === true;
  const fp16Master = fp16.fp16_master_weights_and_grads === true;
  const offloaded = offload !== 'none' && offload !== 'auto';
  const out: Finding[] = [];
  if (states && !master)
    out.push(
      err(
        'ds-bf16-states-need-master',
        'bf16.bf16_optimizer_states is on without bf16.bf16_master_weights_and_grads; DeepSpeed refuses it ("bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled.")',
        'turn bf16_master_weights_and_grads on too (--master-weights none writes both), or drop bf16_optimizer_states',
        ['master_weights'],
      ),
    );
  if ((master || states || fp16Master) && stage === 0)
    out.push(
      err(
        'ds-master-weights-stage',
        'the master-weight keys (bf16_master_weights_and_grads, bf16_optimizer_states, fp16_master_weights_and_grads) need ZeRO stage 1, 2 or 3; DeepSpeed refuses them at stage 0',
        MASTER_FIX,
        ['master_weights', 'mode'],
      ),
    );
  if ((fp16Master || (master && !states)) && !offloaded && stage > 0)
    out.push(
      err(
        'ds-master-weights-need-offload',
        `${fp16Master ? 'fp16.fp16_master_weights_and_grads' : 'bf16.bf16_master_weights_and_grads without bf16_optimizer_states'} needs the optimizer offloaded; DeepSpeed refuses it otherwise ("Master weights feature requires ZeRO Offload with DeepSpeedCPUAdam")`,
        'offload the optimizer (2-offload or 3-offload), or turn bf16_optimizer_states on too (--master-weights none writes both)',
        ['master_weights', 'mode'],
      ),
    );
  if (master && states && offloaded && !isPlainObject(cfg.optimizer))
    out.push(
      err(
        'ds-bf16-states-offload',
        'bf16.bf16_optimizer_states with an offloaded optimizer: accelerate swaps the script\'s optimizer for DeepSpeedCPUAdam with fp32 moments, and DeepSpeed refuses that ("bf16_optimizer_states with ZeRO-Offload requires DeepSpeedCPUAdam constructed with fp32_optimizer_states=False")',
        'keep fp32 master weights (--master-weights fp32) with an offload mode, or choose a mode that keeps the optimizer on the GPU (1, 2 or 3); in a JSON of your own, bf16_master_weights_and_grads alone is accepted',
        ['master_weights', 'mode'],
      ),
    );
  if ((master || states) && bf16.enabled === 'auto')
    out.push(
      warn(
        'ds-master-weights-auto-precision',
        'bf16.enabled is "auto" beside bf16 master weights: accelerate fills it from the launch\'s --mixed_precision (or the YAML\'s mixed_precision); without bf16 there, the model trains in fp32 beside bf16 master weights, gradients and moments',
        'pass --mixed_precision bf16 to accelerate launch, or choose --mixed-precision bf16',
        ['mixed_precision', 'master_weights'],
      ),
    );
  return out;
}
