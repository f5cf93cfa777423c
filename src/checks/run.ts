/**
 * Runs the checks of a setup: measures what each needs at the same time (the Python probe, nvidia-smi,
 * /dev/shm, the memory cgroup, the port, the NVMe folder and its speed, the disks, the inputs), judges each
 * against the plan, and returns the results in the fix order. The one entry for `zerowiz check`, the wizard's
 * finish screen, a local launch before each pass and a Slurm job's node before each pass.
 */
import { rememberNvmeSpeed } from '../machine/index.js';
import { UsageError } from '../text/index.js';
import type { Setup } from '../config/index.js';
import { launchEstimate } from '../rules/index.js';
import { findFreePort } from '../proc/index.js';
import { resolveAccelerate } from '../proc/index.js';
import { judgeCudaDriver, judgeGpus, measureDriver, type DriverInfo } from './gpu.js';
import { judgeHostMemory, judgePort, judgeShm, measureMemory, measurePort, measureShm } from './host.js';
import { judgeInputs, judgeModels } from './inputs.js';
import { judgeOps } from './ops.js';
import { type CheckPlan, checkPlan, type PassFilter } from './plan.js';
import { fileHead, interpreterOf, looksLikePython, type ProbeRequest, type ProbeRun, runProbe } from './probe.js';
import { cleanAnswer, loadProbe, probeCacheDir, probeCacheKey, saveProbe } from './probe-cache.js';
import { judgePython, type PythonFound } from './python.js';
import {
  diskPaths,
  judgeDisk,
  judgeNvme,
  judgeNvmeSpeed,
  measureDisk,
  measureNvme,
  measureNvmeSpeed,
  nvmeUsable,
} from './storage.js';
import { type CheckId, type CheckResult, inFixOrder, skipped } from './types.js';
import { judgeVersions } from './versions.js';

/** How to run the checks. */
export interface CheckOptions {
  /** The folder the passes run in (default: the current one). */
  cwd?: string;
  /** The environment the passes get (PATH finds accelerate and nvidia-smi; default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** `--accelerate PATH` (else ZEROWIZ_ACCELERATE, else PATH). */
  accelerate?: string;
  /** Checks not to run (`--skip-check ID`); each is reported as skipped. */
  skip?: ReadonlySet<CheckId>;
  /** What left each of them out (skipReasons), for the report; default `--skip-check`. */
  skipWhy?: Partial<Record<CheckId, string>>;
  /** Which passes (default: all). */
  filter?: PassFilter;
  /** The port the pass will use (a Slurm pass picks its own), over the setup's. */
  port?: number;
  /** The node's rank of a multi-node run (a Slurm node), over the setup's machine_rank. */
  machineRank?: number;
  /** Ask the interpreter again, not the answer remembered from the last clean check (probe-cache.ts). */
  fresh?: boolean;
  /** Aborted when the run is stopped during its checks: the children they started end then. */
  signal?: AbortSignal;
}

/** What a run of the checks found. */
export interface CheckReport {
  plan: CheckPlan;
  /** Every check, in the fix order. */
  results: CheckResult[];
  /** Wall time of the whole run. */
  ms: number;
}

/** Times a measurement. */
async function timed<T>(f: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await f();
  return { value, ms: Math.round(performance.now() - t0) };
}

/** The fix for a taken port: a pass's own flag on one machine, the setup's answer on several. */
function portFix(plan: CheckPlan, setup: Setup): (port: number) => string {
  return (port) =>
    plan.numMachines > 1
      ? `zerowiz preset save ${setup.name} --preset ${setup.name} --main-process-port ${port}`
      : `add --main_process_port ${port} before the script in each pass's arguments (the steps screen, or the preset's steps)`;
}

/** Finds accelerate, its interpreter, and runs the probe there (null when no Python check is wanted). */
async function measurePython(plan: CheckPlan, opts: CheckOptions, env: NodeJS.ProcessEnv): Promise<PythonFound> {
  let exe: string;
  try {
    exe = resolveAccelerate(opts.accelerate, env, plan.cwd).path;
  } catch (e) {
    return { kind: 'no-accelerate', reason: e instanceof UsageError ? e.message : String(e) };
  }
  const interpreter = interpreterOf(exe, fileHead(exe), env);
  if (!interpreter.ok) return { kind: 'found', accelerate: exe, interpreter, run: null };
  if (!looksLikePython(interpreter.python))
    return {
      kind: 'found',
      accelerate: exe,
      interpreter: { ok: false, reason: `${exe} is run by ${interpreter.python}, not by Python` },
      run: null,
    };
  const zero = plan.dsConfig.zero_optimization;
  const req: ProbeRequest = {
    ops: plan.ops.map((o) => ({ name: o.name, builder: o.builder, cuda: o.cuda })),
    zero: plan.deepspeed && zero && typeof zero === 'object' ? (zero as Record<string, unknown>) : null,
    deepspeed: plan.deepspeed,
  };
  const t0 = performance.now();
  const dir = probeCacheDir(env);
  const key = probeCacheKey(interpreter.python, req, env);
  const kept = opts.fresh ? null : loadProbe(dir, key);
  if (kept)
    return {
      kind: 'found',
      accelerate: exe,
      interpreter,
      run: { ok: true, result: kept.result, ms: Math.round(performance.now() - t0), cachedAt: kept.at },
    };
  const run: ProbeRun = await runProbe(interpreter.python, req, { env, cwd: plan.cwd, signal: opts.signal });
  if (run.ok && cleanAnswer(run.result, req)) saveProbe(dir, key, interpreter.python, run.result);
  return { kind: 'found', accelerate: exe, interpreter, run };
}

/**
 * Runs every check of `setup` not skipped. Throws UsageError for a pass that does not exist; everything else
 * is a result (a check that cannot measure says so).
 */
export async function runChecks(setup: Setup, opts: CheckOptions = {}): Promise<CheckReport> {
  const t0 = performance.now();
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const skip = opts.skip ?? new Set<CheckId>();
  let plan: CheckPlan;
  try {
    plan = checkPlan(setup, { cwd, filter: opts.filter });
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(e.message, 'passes are numbered from 1, in the order they run');
    throw e;
  }
  if (opts.port !== undefined) plan = { ...plan, port: opts.port, portFromSetup: true };
  if (opts.machineRank !== undefined) plan = { ...plan, machineRank: opts.machineRank };
  const wants = (...ids: CheckId[]) => ids.some((id) => !skip.has(id));

  const python = wants('python', 'cuda-driver', 'deepspeed-ops', 'versions', 'port')
    ? timed(() => measurePython(plan, opts, env))
    : null;
  const driver = wants('cuda-driver', 'gpus') ? timed(() => measureDriver(env)) : null;
  const shm = wants('shm') ? timed(() => measureShm()) : null;
  const memory = wants('host-memory') ? timed(() => measureMemory()) : null;
  const port = wants('port') ? timed(() => measurePort(plan.port)) : null;
  const nvme =
    plan.nvme && wants('nvme', 'nvme-speed')
      ? timed(async () => {
          const n = await measureNvme(plan.nvme!.path);
          const speed =
            !skip.has('nvme-speed') && nvmeUsable(n)
              ? await timed(() => measureNvmeSpeed(plan.nvme!.path, n.freeBytes))
              : null;
          // The estimate's NVMe term takes the drive's measured speed from now on (src/machine/nvme-speed.ts).
          if (speed?.value.ok) rememberNvmeSpeed(plan.nvme!.path, speed.value, env);
          return { n, speed };
        })
      : null;
  const disk = wants('disk') ? timed(() => measureDisk(diskPaths(plan))) : null;

  const results: CheckResult[] = [];
  const add = (id: CheckId, r: () => CheckResult, ms?: number) => {
    if (skip.has(id)) results.push(skipped(id, `skipped by ${opts.skipWhy?.[id] ?? '--skip-check'}`));
    else results.push(ms === undefined ? r() : { ...r(), ms });
  };

  const py = python ? await python : null;
  const found = py?.value ?? null;
  const probe = found?.kind === 'found' && found.run?.ok ? found.run.result : null;
  const probeMs = found?.kind === 'found' && found.run ? found.run.ms : py?.ms;
  add('python', () => judgePython(plan, found ?? { kind: 'no-accelerate', reason: 'not asked' }), probeMs);
  const drv = driver ? await driver : null;
  const d: DriverInfo = drv?.value ?? {
    found: false,
    reason: 'not asked',
    driver: null,
    cuda: null,
    gpus: [],
    visible: null,
    visibleEnv: null,
  };
  add('cuda-driver', () => judgeCudaDriver(d, probe), drv?.ms);
  add('gpus', () => judgeGpus(plan, d));
  add('deepspeed-ops', () => judgeOps(plan, probe));
  add('versions', () =>
    judgeVersions(plan, probe, {
      dynamoBackend: setup.answers.dynamo_backend,
      moeLayerClsNames: setup.answers.moe_layer_cls_names,
    }),
  );
  const mem = memory ? await memory : null;
  add(
    'host-memory',
    // A mode needing less CPU is advice only when the estimate knows the GPU it must also fit.
    () =>
      judgeHostMemory(
        plan,
        mem!.value,
        plan.estimate && setup.answers.gpu_memory !== null
          ? (limit: number) => launchEstimate(setup)?.hostWhatFits(limit) ?? null
          : null,
      ),
    mem?.ms,
  );
  const s = shm ? await shm : null;
  add('shm', () => judgeShm(plan, s!.value), s?.ms);
  const nv = nvme ? await nvme : null;
  add('nvme', () => judgeNvme(plan, nv?.value.n ?? null), nv ? nv.ms - (nv.value.speed?.ms ?? 0) : undefined);
  add(
    'nvme-speed',
    () => judgeNvmeSpeed(plan, nv?.value.n ?? null, nv?.value.speed?.value ?? null),
    nv?.value.speed?.ms,
  );
  const dk = disk ? await disk : null;
  add('disk', () => judgeDisk(plan, dk!.value), dk?.ms);
  const inputs = await timed(() => judgeInputs(plan));
  add('inputs', () => inputs.value, inputs.ms);
  const models = await timed(() => judgeModels(plan, env));
  add('models', () => models.value, models.ms);
  const pt = port ? await port : null;
  let free: number | null = null;
  if (pt && !pt.value.free) free = await findFreePort().catch(() => null);
  add(
    'port',
    () => judgePort(plan, pt!.value, probe?.packages.accelerate.version ?? null, free, portFix(plan, setup)),
    pt?.ms,
  );
  return { plan, results: inFixOrder(results), ms: Math.round(performance.now() - t0) };
}
