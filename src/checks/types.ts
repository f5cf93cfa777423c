/**
 * The checks before a pass: their ids in the order a user should fix them, what one result says (status,
 * what was measured, what is needed, the fix), and the verdict over all of them. Pure: the measuring lives
 * in the other modules of this folder, each judged by a pure function into a CheckResult.
 */
import { UsageError } from '../text/index.js';

/**
 * Every check, in the order a user should fix what fails: the Python environment and the driver first (nothing
 * else can be judged without them), then what DeepSpeed builds and reads, then the machine's room, then the
 * run's inputs, and the port last (it is free or taken at the moment the pass starts).
 */
export const CHECK_IDS = [
  'python',
  'cuda-driver',
  'gpus',
  'deepspeed-ops',
  'versions',
  'host-memory',
  'shm',
  'nvme',
  'nvme-speed',
  'disk',
  'inputs',
  'models',
  'port',
] as const;

/** One check's id (`--skip-check ID`, the JSON's `id`). */
export type CheckId = (typeof CHECK_IDS)[number];

/** What each check looks at, as one phrase (the text report and `zerowiz check --help`). */
export const CHECK_TITLES: Readonly<Record<CheckId, string>> = {
  python: 'the Python that runs accelerate: torch, accelerate and deepspeed importable, their versions',
  'cuda-driver': "the torch wheel's CUDA against the driver's (nvidia-smi)",
  gpus: 'GPUs per node for the processes, bf16 support, memory other processes hold',
  'deepspeed-ops': 'the DeepSpeed ops the mode needs, prebuilt or buildable (what ds_report knows)',
  versions: 'the config against the installed DeepSpeed and accelerate: unknown keys, deprecations, changed defaults',
  'host-memory': "host RAM and the cgroup's memory limit against the CPU memory per node of the estimate",
  shm: '/dev/shm against the processes per node (NCCL, DataLoader workers)',
  port: 'the main process port free on this host',
  nvme: 'the NVMe offload path: exists, writable, room for the offloaded states, O_DIRECT',
  'nvme-speed': 'a short O_DIRECT write and read at the NVMe path against the speed the estimate assumes',
  disk: "room in each pass's output path for what it writes (checkpoints, the cache, logs)",
  inputs: "each pass's script, dataset folder and metadata",
  models: 'the models a DiffSynth pass loads, present locally or to be downloaded',
};

/** A check's verdict. `skip`: skipped by the user, or not checkable because a check it needs failed. */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

/** One check's result, as `zerowiz check`, the wizard's finish screen and a node's pass check show it. */
export interface CheckResult {
  id: CheckId;
  status: CheckStatus;
  /** What was measured here (versions, sizes, paths), one or a few sentences. */
  measured: string;
  /** What the setup needs. */
  need: string;
  /** The fix, as a command when there is one (null when nothing needs fixing). */
  fix: string | null;
  /** Milliseconds this check's measuring took (shared measurements count once, on the first check using them). */
  ms?: number;
}

/** Is `text` a check id? */
export function isCheckId(text: string): text is CheckId {
  return (CHECK_IDS as readonly string[]).includes(text);
}

/** A result of each status. */
export function passed(id: CheckId, measured: string, need: string): CheckResult {
  return { id, status: 'pass', measured, need, fix: null };
}
/** A warning: the pass can start, but something is likely to hurt. */
export function warned(id: CheckId, measured: string, need: string, fix: string): CheckResult {
  return { id, status: 'warn', measured, need, fix };
}
/** A failure: the pass would fail or waste its time. */
export function failed(id: CheckId, measured: string, need: string, fix: string): CheckResult {
  return { id, status: 'fail', measured, need, fix };
}
/** Not checked, and why. */
export function skipped(id: CheckId, why: string, need = ''): CheckResult {
  return { id, status: 'skip', measured: why, need, fix: null };
}

/** The results in the fix order (CHECK_IDS), whatever order they were measured in. */
export function inFixOrder(results: readonly CheckResult[]): CheckResult[] {
  return [...results].sort((a, b) => CHECK_IDS.indexOf(a.id) - CHECK_IDS.indexOf(b.id));
}

/** The checks that stop a launch: the failures, in the fix order. */
export function failures(results: readonly CheckResult[]): CheckResult[] {
  return inFixOrder(results.filter((r) => r.status === 'fail'));
}

/** `--json`'s shape: `{checks: [{id, status, title, measured, need, fix, ms}], failed: [ids], warned: [ids]}`. */
export function checksJson(results: readonly CheckResult[]): {
  checks: (CheckResult & { title: string })[];
  failed: CheckId[];
  warned: CheckId[];
} {
  const ordered = inFixOrder(results);
  return {
    checks: ordered.map((r) => ({
      id: r.id,
      status: r.status,
      title: CHECK_TITLES[r.id],
      measured: r.measured,
      need: r.need,
      fix: r.fix,
      ...(r.ms !== undefined ? { ms: r.ms } : {}),
    })),
    failed: ordered.filter((r) => r.status === 'fail').map((r) => r.id),
    warned: ordered.filter((r) => r.status === 'warn').map((r) => r.id),
  };
}

/**
 * The checks `--skip-check ID` (repeatable, or comma-separated; `all` for every one) and `--no-speed-test`
 * leave out: the one parser for `zerowiz check` and the launch. An unknown id is bad input.
 */
export function skipChecks(values: readonly string[], speedTest = true, flag = '--skip-check'): Set<CheckId> {
  const out = new Set<CheckId>();
  for (const raw of values) {
    for (const id of raw
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '')) {
      if (id === 'all') for (const c of CHECK_IDS) out.add(c);
      else if (!isCheckId(id))
        throw new UsageError(`${flag}: there is no check '${id}'`, `the checks are: all, ${CHECK_IDS.join(', ')}`);
      else out.add(id);
    }
  }
  if (!speedTest) out.add('nvme-speed');
  return out;
}

/**
 * The environment variable a launch reads for checks to leave out before each pass, as `--skip-check` takes
 * them (`all`, or ids comma-separated): for a box whose checks cannot apply (and for tests whose accelerate is
 * a stand-in). `zerowiz check` itself ignores it: asked for, the checks run.
 */
export const SKIP_CHECKS_ENV = 'ZEROWIZ_SKIP_CHECKS';

/** The checks a launch leaves out before each pass: its --skip-check flags, --no-speed-test and the environment. */
export function launchSkips(values: readonly string[], speedTest: boolean, env: NodeJS.ProcessEnv): Set<CheckId> {
  const fromEnv = env[SKIP_CHECKS_ENV];
  const out = skipChecks(values, speedTest);
  if (fromEnv) for (const id of skipChecks([fromEnv], true, SKIP_CHECKS_ENV)) out.add(id);
  return out;
}

/**
 * What left each check out, as the report says it (`skipped by --no-speed-test`): the command line's
 * --skip-check, --no-speed-test, or the environment's ZEROWIZ_SKIP_CHECKS (the first that names it).
 */
export function skipReasons(
  values: readonly string[],
  speedTest: boolean,
  env: NodeJS.ProcessEnv = {},
): Partial<Record<CheckId, string>> {
  const out: Partial<Record<CheckId, string>> = {};
  for (const id of skipChecks(values)) out[id] = '--skip-check';
  if (!speedTest) out['nvme-speed'] ??= '--no-speed-test';
  const fromEnv = env[SKIP_CHECKS_ENV];
  if (fromEnv) for (const id of skipChecks([fromEnv], true, SKIP_CHECKS_ENV)) out[id] ??= SKIP_CHECKS_ENV;
  return out;
}

/** Whether every check is left out (no check runs before a pass, and nothing is written for them). */
export function skipsAll(skip: ReadonlySet<CheckId>): boolean {
  return CHECK_IDS.every((id) => skip.has(id));
}
