/**
 * The `versions` check: the config the launch writes against what is installed. The installed DeepSpeed's
 * own zero_optimization model judges the block (unknown keys are errors, deprecated ones are logged; asked by
 * probe.ts); zerowiz's table of what changed when covers what that model cannot say: defaults that changed
 * (the config leaves the key to DeepSpeed), keys an older DeepSpeed ignores silently, and what the installed
 * accelerate needs from DeepSpeed or lacks. Each row cites where it was read (deepspeedai/DeepSpeed and
 * huggingface/accelerate history).
 */
import { isPlainObject } from '../config/index.js';
import type { CheckPlan } from './plan.js';
import type { ProbeResult } from './probe.js';
import { pipInstall } from './python.js';
import { type CheckResult, failed, passed, skipped, warned } from './types.js';
import { compareDotted } from './gpu.js';

/** A DeepSpeed default that changed: a config that leaves the key out gets `before` below `since`. */
export interface DefaultChange {
  path: readonly string[];
  since: string;
  before: unknown;
  after: unknown;
  /** Where the change was read (DeepSpeed's PR and file). */
  source: string;
}

/** Defaults that changed in DeepSpeed (what zerowiz's estimate and preview assume is `after`). */
export const DS_DEFAULT_CHANGES: readonly DefaultChange[] = [
  {
    path: ['zero_optimization', 'offload_optimizer', 'pin_memory'],
    since: '0.19.5',
    before: false,
    after: true,
    source: 'DeepSpeed #8207 (offload_config.py)',
  },
  {
    path: ['zero_optimization', 'offload_param', 'pin_memory'],
    since: '0.19.5',
    before: false,
    after: true,
    source: 'DeepSpeed #8207 (offload_config.py)',
  },
  {
    path: ['gradient_clipping'],
    since: '0.19.3',
    before: 0,
    after: 1,
    source: 'DeepSpeed #8068 (runtime/constants.py)',
  },
];

/** Keys DeepSpeed reads only since a version; older ones ignore them without a word (no schema there). */
export const DS_KEYS_SINCE: readonly { path: readonly string[]; since: string; instead?: string }[] = [
  { path: ['log_level'], since: '0.19.3' },
  { path: ['aio', 'intra_op_parallelism'], since: '0.16.4', instead: 'aio.thread_count' },
  { path: ['aio', 'use_gds'], since: '0.15.0' },
];

/** The oldest DeepSpeed accelerate takes (accelerator.py: "DeepSpeed version must be >= 0.9.3"). */
export const ACCELERATE_MIN_DEEPSPEED = '0.9.3';
/** accelerate's nossh and slurm multi-node launchers (accelerate #3329, first in v1.6.0). */
export const ACCELERATE_NOSSH_SLURM_SINCE = '1.6.0';
/** DeepSpeed for the nossh launcher (accelerate utils/launch.py: "nossh launcher requires DeepSpeed >= 0.14.5"). */
export const DEEPSPEED_NOSSH_SINCE = '0.14.5';
/** DeepSpeed for MoE leaf modules (accelerate dataclasses.py set_moe_leaf_modules). */
export const DEEPSPEED_MOE_SINCE = '0.14.0';
/** DeepSpeed from which accelerate compiles the engine with torch.compile (accelerator.py: engine.compile()). */
export const DEEPSPEED_COMPILE_SINCE = '0.14.4';

function valueAt(obj: Record<string, unknown>, path: readonly string[]): { present: boolean; parent: boolean } {
  let cur: unknown = obj;
  for (let i = 0; i < path.length; i++) {
    if (!isPlainObject(cur)) return { present: false, parent: false };
    if (i === path.length - 1) return { present: path[i]! in cur, parent: true };
    cur = cur[path[i]!];
  }
  return { present: false, parent: false };
}

/** A version without a local or pre-release suffix: `0.19.6+cu124` -> `0.19.6`. */
export function baseVersion(v: string): string {
  return (/^\d+(\.\d+)*/.exec(v) ?? ['0'])[0];
}

function older(installed: string, since: string): boolean {
  return compareDotted(baseVersion(installed), since) < 0;
}

/** Judges the config against the installed DeepSpeed and accelerate. */
export function judgeVersions(
  plan: CheckPlan,
  probe: ProbeResult | null,
  setup: { dynamoBackend: string; moeLayerClsNames: string },
): CheckResult {
  const id = 'versions';
  const need = 'a DeepSpeed and an accelerate that accept the config and mean by it what zerowiz shows';
  if (!plan.deepspeed) return passed(id, 'no pass runs DeepSpeed', 'none');
  const ds = probe?.packages.deepspeed;
  if (!probe || !ds?.importable || !ds.version)
    return skipped(id, 'not checked: deepspeed could not be imported (see python)', need);
  const dsV = ds.version;
  const accV = probe.packages.accelerate.version ?? '0';
  const py = probe.python.executable;
  const fails: string[] = [];
  const warns: string[] = [];
  const upgradeDs = pipInstall(py, ['-U', 'deepspeed']);
  const upgradeAcc = pipInstall(py, ['-U', 'accelerate']);
  const fixes = new Set<string>();
  if (older(dsV, ACCELERATE_MIN_DEEPSPEED)) {
    fails.push(`accelerate refuses DeepSpeed older than ${ACCELERATE_MIN_DEEPSPEED}`);
    fixes.add(upgradeDs);
  }
  const zc = probe.deepspeed?.zeroConfig;
  if (zc && zc.errors.length > 0) {
    fails.push(
      `DeepSpeed ${dsV} rejects the zero_optimization block: ${zc.errors.join(' ').replace(/\s+/g, ' ').slice(0, 400)}`,
    );
    fixes.add(`${upgradeDs}, or remove the key it names from the preset's extra JSON`);
  }
  for (const w of zc?.warnings ?? []) warns.push(`DeepSpeed ${dsV} says: ${w}`);
  if (zc?.unavailable) warns.push(`its zero_optimization model could not be asked (${zc.unavailable})`);
  for (const c of DS_DEFAULT_CHANGES) {
    const at = valueAt(plan.dsConfig, c.path);
    if (!at.parent || at.present) continue;
    if (older(dsV, c.since))
      warns.push(
        `${c.path.join('.')} is left to DeepSpeed, whose default is ${JSON.stringify(c.before)} before ${c.since} (${c.source}): DeepSpeed ${dsV} uses ${JSON.stringify(c.before)}, zerowiz assumed ${JSON.stringify(c.after)}`,
      );
  }
  for (const k of DS_KEYS_SINCE) {
    if (!valueAt(plan.dsConfig, k.path).present || !older(dsV, k.since)) continue;
    warns.push(
      `DeepSpeed ${dsV} ignores ${k.path.join('.')} (read since ${k.since}${k.instead ? `; it reads ${k.instead}` : ''})`,
    );
    fixes.add(upgradeDs);
  }
  if (plan.numMachines > 1 && (plan.launcher === 'nossh' || plan.launcher === 'slurm')) {
    if (older(accV, ACCELERATE_NOSSH_SLURM_SINCE)) {
      fails.push(`accelerate ${accV} has no ${plan.launcher} launcher (since ${ACCELERATE_NOSSH_SLURM_SINCE})`);
      fixes.add(upgradeAcc);
    }
    if (plan.launcher === 'nossh' && older(dsV, DEEPSPEED_NOSSH_SINCE)) {
      fails.push(`the nossh launcher needs DeepSpeed ${DEEPSPEED_NOSSH_SINCE} (accelerate raises otherwise)`);
      fixes.add(upgradeDs);
    }
  }
  if (setup.moeLayerClsNames !== '' && older(dsV, DEEPSPEED_MOE_SINCE)) {
    fails.push(`MoE leaf modules need DeepSpeed ${DEEPSPEED_MOE_SINCE} (accelerate raises otherwise)`);
    fixes.add(upgradeDs);
  }
  if (setup.dynamoBackend !== 'no' && older(dsV, DEEPSPEED_COMPILE_SINCE)) {
    warns.push(
      `torch.compile (dynamo ${setup.dynamoBackend}) is ignored under DeepSpeed older than ${DEEPSPEED_COMPILE_SINCE}`,
    );
    fixes.add(upgradeDs);
  }
  const measured = `DeepSpeed ${dsV}, accelerate ${accV}, torch ${probe.packages.torch.version ?? '?'}`;
  if (fails.length > 0)
    return failed(id, `${measured}: ${[...fails, ...warns].join('; ')}`, need, [...fixes].join('; '));
  if (warns.length > 0)
    return warned(id, `${measured}: ${warns.join('; ')}`, need, fixes.size > 0 ? [...fixes].join('; ') : upgradeDs);
  return passed(
    id,
    `${measured}: DeepSpeed accepts the zero_optimization block${zc && !zc.unavailable ? '' : ' (not asked)'}`,
    need,
  );
}
