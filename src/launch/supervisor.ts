/**
 * A local run's supervisor: the process that owns the run, so that no terminal does. The launching zerowiz
 * (the pane, stream mode, the wizard's Launch) validates the setup, writes its config files, then starts
 * `node <bin> __zerowiz-supervise` in its own session with the run's plan on stdin, and becomes a viewer: it
 * follows the run's files as `attach` does (./follower.ts). The supervisor:
 *
 * - creates the run record and answers its launcher with one line on stdout (the record, or why there is
 *   none), then never writes to a terminal or a pipe again;
 * - starts the watchdog (./watchdog.ts) before the first step: a `kill -9` of the supervisor still stops
 *   every step with the ladder and ends the record as `interrupted`;
 * - runs the steps (./runner.ts: each writes through `tee` into its log, so nothing any reader does can
 *   hold the training up), GPU telemetry, the stop ladder (SIGINT or SIGTERM to the supervisor; SIGUSR2
 *   kills at once);
 * - reads the logs at its own pace for the record's metrics and alerts (./watch.ts), and writes what the
 *   viewers need: events.jsonl and live.json (./run-files.ts), run.json (./record-keeper.ts).
 *
 * A viewer that is stopped, slow, paused, killed, or whose terminal hangs, changes nothing here. Without a bin
 * (unit tests run from the sources) the same supervisor runs inside the launching process, without a watchdog.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { UsageError } from '../text/index.js';
import type { Setup } from '../config/index.js';
import { capYoungGeneration } from '../proc/index.js';
import type { AlertContext } from '../observe/index.js';
import { binPath, SUPERVISOR_ARG } from './bin.js';
import { launchEstimate } from '../rules/index.js';
import type { RunEstimate } from '../rules/index.js';
import { findFreePort } from '../proc/index.js';
import { gracePeriods, handOffAtExit, trackGroup, untrackGroup } from '../proc/index.js';
import { ownIdentity, processStartTime } from '../proc/index.js';
import type { PreparedCommand } from '../config/index.js';
import { createRunRecord, RecordError, saveRunJson, stepLogPath, type RunRecord } from '../records/index.js';
import { RecordKeeper } from './record-keeper.js';
import { EVENTS_FILE, EventsWriter, type LiveSnapshot, writeLive } from '../records/index.js';
import type { PipelineOutcome } from '../observe/index.js';
import { Pipeline, type StepSpec } from './runner.js';
import { GpuTelemetry, telemetryIntervalMs, visibleGpuIndices } from '../observe/index.js';
import { RunWatch, watchStepOf } from '../observe/index.js';
import { HELPER_OF_ENV, RUN_DIR_ENV, Watchdog } from './watchdog.js';
import { topology } from '../estimate/index.js';
import { modelCatalogOrNone } from '../estimate/index.js';
import { CHECKPOINT_POLL_INTERVAL_MS, type CheckpointEvent, CheckpointWatcher } from '../checkpoints/index.js';
import { expectationOf } from '../checkpoints/index.js';
import { outputRoots } from '../checkpoints/index.js';
import { recordCheckpoints } from '../checkpoints/index.js';
import { captureTopology, recordTopology } from '../checkpoints/index.js';
import { checkBeforePass } from '../checks/index.js';
import { checkPlan } from '../checks/index.js';
import { type CheckId, skipsAll } from '../checks/index.js';
import { RunHealth, type WatchedPath } from '../observe/index.js';
import { stallOptionsFromEnv } from '../observe/index.js';

/** What the launching zerowiz hands its run's supervisor (JSON on the supervisor's stdin). */
export interface SupervisorPlan {
  version: 1;
  /** The directory the steps run in (the record goes to .zerowiz/runs/ under it). */
  cwd: string;
  /** What was launched, for the record. */
  source: string;
  setup: Setup;
  accelerate: { path: string; display: string };
  commands: PreparedCommand[];
  /** The checks left out before each pass (--skip-check, ZEROWIZ_SKIP_CHECKS); every id: no checks. */
  skipChecks?: CheckId[];
  /** Topology warnings of a relaunch that went on without asking (kept in run.json). */
  topologyWarnings?: { checkpoint: string; warning: string }[];
  /** The estimate the launch made of the setup's mode (its peak and step time), for the record; absent: made here. */
  estimate?: RunEstimate | null;
}

/** The supervisor's one line to its launcher: the record it opened, or why it could not. */
export type SupervisorHello =
  | { ok: true; dir: string; id: string; pid: number }
  | { ok: false; message: string; hint?: string };

/** The GPUs a local run uses: the first of CUDA_VISIBLE_DEVICES (or of all GPUs), one per process of the node. */
export function runGpus(setup: Setup, env: NodeJS.ProcessEnv): number[] {
  const n = topology(setup.answers).gpusPerNode;
  const visible = visibleGpuIndices(env);
  return visible ? visible.slice(0, n) : Array.from({ length: n }, (_, i) => i);
}

/** How often the watch during a pass measures the pass's processes, memory, /dev/shm and free space. */
export const HEALTH_TICK_MS = 5_000;

/** The folders a pass's watch keeps an eye on: the NVMe offload folder and the pass's outputs. */
function spacePathsOf(setup: Setup, cwd: string, i: number): WatchedPath[] {
  try {
    const plan = checkPlan(setup, { cwd, filter: { kind: 'one', index: i }, models: [] });
    const out: WatchedPath[] = plan.nvme ? [{ path: plan.nvme.path, what: 'NVMe offload' }] : [];
    for (const s of plan.steps) for (const o of s.outputs) out.push({ path: o.path, what: `outputs of ${s.name}` });
    return out;
  } catch {
    return [];
  }
}

/** Options of a supervisor. */
export interface SupervisorOptions {
  /** The steps' environment (the launcher's, as it was). */
  env: NodeJS.ProcessEnv;
  /** The watchdog (null in process, without a bin). */
  guard: Watchdog | null;
}

/** One local run, owned. */
export class Supervisor {
  record: RunRecord | null = null;
  private pipeline: Pipeline | null = null;
  private stopAsked = false;
  private killAsked = false;

  constructor(
    readonly plan: SupervisorPlan,
    private readonly opts: SupervisorOptions,
  ) {}

  /** Creates the record (its directory told to the watchdog first). Throws RecordError. */
  open(): RunRecord {
    const { plan } = this;
    const rec = createRunRecord({
      cwd: plan.cwd,
      setup: plan.setup,
      source: plan.source,
      commands: plan.commands,
      accelerate: plan.accelerate,
      onDir: (dir) => this.opts.guard?.recordDir(dir),
    });
    const guard = this.opts.guard;
    rec.json.supervisor = {
      ...ownIdentity(),
      watchdog: guard ? { pid: guard.pid, startTime: processStartTime(guard.pid) } : null,
    };
    rec.json.estimate =
      plan.estimate !== undefined
        ? plan.estimate
        : (launchEstimate(plan.setup, undefined, plan.source, plan.cwd, undefined, this.opts.env)?.json ?? null);
    if (plan.topologyWarnings && plan.topologyWarnings.length > 0)
      (rec.json as unknown as { topologyWarnings: unknown }).topologyWarnings = plan.topologyWarnings;
    saveRunJson(rec);
    this.record = rec;
    return rec;
  }

  /** Stops the run with the ladder (before the first step: nothing starts). A second call kills at once. */
  stop(): void {
    if (this.stopAsked) {
      this.killNow();
      return;
    }
    this.stopAsked = true;
    void this.pipeline?.stop();
  }

  /** SIGKILL to the running step's group now. */
  killNow(): void {
    this.stopAsked = true;
    this.killAsked = true;
    this.pipeline?.killNow();
  }

  /** Runs the steps to the end; resolves with the outcome once the record is final. */
  async run(): Promise<PipelineOutcome> {
    const rec = this.record ?? this.open();
    const { plan, opts } = this;
    const guard = opts.guard;
    const env = opts.env;
    const events = new EventsWriter(join(rec.dir, EVENTS_FILE));
    // The record's estimate: the setup is estimated again only when a step runs out of memory (the fixes).
    const estimate = launchEstimate(plan.setup, undefined, plan.source, plan.cwd, rec.json.estimate, env);
    const telemetry = new GpuTelemetry({
      env: { ...env, [HELPER_OF_ENV]: rec.dir },
      gpus: runGpus(plan.setup, env),
      intervalMs: telemetryIntervalMs(env),
      onUpdate: (t) => writeLive(rec.dir, snapshotOf(t, rec.json.steps.length)),
      track: {
        willSpawn: () => guard?.helperWillSpawn(),
        add: (pgid) => {
          trackGroup(pgid);
          guard?.helperSpawned(pgid);
        },
        remove: (pgid) => {
          untrackGroup(pgid);
          guard?.gone(pgid);
        },
      },
    });
    const alertContext: AlertContext = {
      precision: plan.setup.answers?.mixed_precision ?? null,
      whatFits: estimate?.whatFits,
      hostWhatFits: estimate?.hostWhatFits,
      freePort: null,
    };
    const watch = new RunWatch({
      steps: plan.commands.map((_, i) => watchStepOf(plan.setup, plan.commands, plan.cwd, i)),
      alertContext,
      telemetry,
      onAlert: (a) => events.write({ t: 'alert', a }),
    });
    const specs: StepSpec[] = plan.commands.map((c, i) => ({
      name: c.step,
      file: plan.accelerate.path,
      args: c.argv,
      logPath: stepLogPath(rec, i),
      cwd: plan.cwd,
      env: { ...env, [RUN_DIR_ENV]: rec.dir },
    }));
    const skip = new Set<CheckId>(plan.skipChecks ?? []);
    const checked = !skipsAll(skip);
    const pipeline = new Pipeline(specs, gracePeriods(env), {
      guard,
      // The checks before each pass, on this machine, at the moment it starts (./checks/gate.ts).
      beforeStep: checked
        ? (i) =>
            checkBeforePass(plan.setup, i, {
              cwd: plan.cwd,
              env,
              accelerate: plan.accelerate.path,
              skip,
            })
        : undefined,
    });
    this.pipeline = pipeline;
    const keeper = new RecordKeeper({ record: rec, watch, run: pipeline, env });
    // The topology every checkpoint of this run is written with (stage, offload, processes, versions).
    void captureTopology(plan.setup, plan.accelerate.path, env).then(
      (t) => {
        recordTopology(rec, t);
        keeper.save();
      },
      () => undefined,
    );
    // Each checkpoint the steps save, verified once it is written (./checkpoints/watch.ts).
    const models = modelCatalogOrNone();
    const checkpoints = new CheckpointWatcher({
      steps: plan.setup.steps.map((st, i) => ({
        index: i,
        name: st.name,
        roots: outputRoots(st.args, plan.cwd),
        expect: expectationOf(plan.setup, i, models),
      })),
      since: Date.now(),
      fix: { setupRef: plan.source.startsWith('--last') ? null : plan.source, runId: rec.json.id },
    });
    const onCheckpoints = (evs: CheckpointEvent[]) => {
      if (evs.length === 0) return;
      for (const e of evs) if (e.alert) watch.alerts.checkpoint(e.step, e.alert);
      recordCheckpoints(rec, checkpoints.verdicts());
      keeper.save();
    };
    const pollCheckpoints = setInterval(() => onCheckpoints(checkpoints.poll()), CHECKPOINT_POLL_INTERVAL_MS);
    pollCheckpoints.unref();
    // The watch during a pass: stalls, memory, /dev/shm, free space (./health.ts).
    let health: { i: number; h: RunHealth; pgid: number | null; busy: boolean } | null = null;
    const stall = stallOptionsFromEnv(env);
    const tickMs = Math.max(250, Math.min(HEALTH_TICK_MS, (stall.minMs ?? HEALTH_TICK_MS) / 4));
    const healthTick = setInterval(() => {
      const cur = health;
      if (!cur || cur.pgid === null || cur.busy) return;
      cur.busy = true;
      cur.h
        .tick(Date.now(), { pgid: cur.pgid })
        .then(
          (alerts) => {
            if (health === cur) for (const a of alerts) watch.addAlert(a);
          },
          () => undefined,
        )
        .finally(() => {
          cur.busy = false;
        });
    }, tickMs);
    healthTick.unref();
    pipeline.subscribe({
      stepStart: (i, info) => {
        const h = new RunHealth({ step: i, spacePaths: spacePathsOf(plan.setup, plan.cwd, i), env, stall });
        h.start(Date.now());
        health = { i, h, pgid: info.pid, busy: false };
      },
      progress: (i, p) => {
        if (health?.i === i) health.h.progress(Date.now(), p.n);
      },
      line: (i) => {
        if (health?.i === i) health.h.line(Date.now());
      },
      lines: (i) => {
        if (health?.i === i) health.h.line(Date.now());
      },
      stepEnd: (i) => {
        if (health?.i === i) health = null;
        onCheckpoints(checkpoints.finish(i));
      },
    });
    pipeline.subscribe({
      stepStart: () => {
        // A free port for the port-in-use alert's fix, found while the step starts.
        findFreePort().then(
          (p) => {
            alertContext.freePort = p;
          },
          () => undefined,
        );
      },
    });
    pipeline.subscribe(watch);
    pipeline.subscribe(keeper);
    pipeline.subscribe({
      stepStart: (i, info) =>
        events.write({
          t: 'stepStart',
          i,
          at: info.startedAt,
          pid: info.pid,
          freePort: null,
          csvOffset: watch.csvOffset(i),
        }),
      stepEnd: (i, r) => events.write({ t: 'stepEnd', i, r }),
      stopping: () => events.write({ t: 'stopping', at: Date.now() }),
      logError: (i, why) => events.write({ t: 'logError', i, why }),
    });
    if (this.stopAsked) void pipeline.stop();
    if (this.killAsked) pipeline.killNow();
    telemetry.start();
    keeper.start();
    try {
      const o = await pipeline.run();
      // The last loss.csv rows, and nvidia-smi gone, before the record's last word.
      await watch.close();
      await telemetry.stop();
      writeLive(rec.dir, snapshotOf(telemetry, rec.json.steps.length));
      keeper.takeAllLive();
      events.write({
        t: 'end',
        o: { outcome: o.outcome, exitCode: o.exitCode, failedStep: o.failedStep },
        at: Date.now(),
      });
      guard?.finished();
      return o;
    } finally {
      clearInterval(pollCheckpoints);
      clearInterval(healthTick);
      keeper.close();
      events.close();
    }
  }
}

/** The telemetry snapshot of live.json. */
function snapshotOf(t: GpuTelemetry, steps: number): LiveSnapshot {
  const peaks: Record<string, ReturnType<GpuTelemetry['peaksOf']>> = {};
  for (let i = 0; i < steps; i++) {
    const p = t.peaksOf(i);
    if (p.length > 0) peaks[String(i)] = p;
  }
  return { telemetry: { state: t.state, reason: t.reason, version: t.version, latest: t.latestList, peaks } };
}

/** Reads all of stdin (the plan), or null when it ends early or is not one. */
async function readPlan(): Promise<SupervisorPlan | null> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SupervisorPlan;
    return v && v.version === 1 && Array.isArray(v.commands) ? v : null;
  } catch {
    return null;
  }
}

/** Writes the hello line to the launcher and closes stdout: from now on nothing is written to it. */
function sayHello(h: SupervisorHello): Promise<void> {
  return new Promise((res) => {
    process.stdout.on('error', () => res());
    process.stdout.end(`${JSON.stringify(h)}\n`, () => res());
  });
}

/**
 * The supervisor process (`zerowiz __zerowiz-supervise`): reads the plan, opens the record, says so, runs
 * the steps to the end. A launcher that died before handing over the whole plan leaves nothing behind.
 */
export async function superviseMain(): Promise<void> {
  // Its own session: no terminal's hangup or Ctrl+C reaches it. SIGHUP is ignored.
  process.on('SIGHUP', () => undefined);
  let sup: Supervisor | null = null;
  let pending: 'stop' | 'kill' | null = null;
  const onStop = () => {
    if (sup) sup.stop();
    else pending = pending === null ? 'stop' : 'kill';
  };
  process.on('SIGINT', onStop);
  process.on('SIGTERM', onStop);
  process.on('SIGUSR2', () => {
    if (sup) sup.killNow();
    else pending = 'kill';
  });
  const plan = await readPlan();
  if (!plan) return;
  capYoungGeneration();
  const env = process.env;
  const guard = Watchdog.start({ grace: gracePeriods(env), bin: binPath() });
  if (guard) handOffAtExit(() => guard.watching);
  sup = new Supervisor(plan, { env, guard });
  let rec: RunRecord;
  try {
    rec = sup.open();
  } catch (e) {
    guard?.finished();
    const msg = e instanceof RecordError ? e.message : `cannot create the run record: ${(e as Error).message}`;
    await sayHello({ ok: false, message: msg, hint: RECORD_HINT });
    return;
  }
  await sayHello({ ok: true, dir: rec.dir, id: rec.json.id, pid: process.pid });
  if (pending === 'kill') sup.killNow();
  else if (pending === 'stop') sup.stop();
  try {
    await sup.run();
  } catch (e) {
    // An unexpected error: the watchdog (told nothing is over) stops what runs and ends the record.
    process.stderr.write(`zerowiz supervisor: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(70);
  }
}

/** The hint when a record cannot be created. */
export const RECORD_HINT =
  'free some space there (or make it writable), or launch from another directory: records go to .zerowiz/runs/ under the current one';

/** A started supervisor, as its launcher holds it. */
export interface StartedSupervisor {
  dir: string;
  id: string;
  /** Resolves when the run is over: in process, when run() resolved; as a process, when it exited. */
  done: Promise<void>;
  /** In process only (no bin): stops the run the way the supervisor's signals do. */
  stop?: () => void;
  killNow?: () => void;
}

/**
 * Starts a run's supervisor: as its own process (in its own session, the plan on stdin, stdout read for the
 * hello line, its stderr into supervisor.log of the run directory once it is made) when zerowiz runs from its
 * bin; in this process otherwise. Throws UsageError when the record cannot be created.
 */
export async function startSupervisor(plan: SupervisorPlan, env: NodeJS.ProcessEnv): Promise<StartedSupervisor> {
  const bin = binPath();
  if (bin === null) {
    const sup = new Supervisor(plan, { env, guard: null });
    let rec: RunRecord;
    try {
      rec = sup.open();
    } catch (e) {
      if (e instanceof RecordError) throw new UsageError(e.message, RECORD_HINT);
      throw e;
    }
    const done = sup.run().then(() => undefined);
    return { dir: rec.dir, id: rec.json.id, done, stop: () => sup.stop(), killNow: () => sup.killNow() };
  }
  const child = spawn(process.execPath, [bin, SUPERVISOR_ARG], {
    cwd: plan.cwd,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const done = new Promise<void>((res) => {
    child.on('exit', () => res());
    child.on('error', () => res());
  });
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(JSON.stringify(plan));
  let text = '';
  child.stdout!.setEncoding('utf8');
  const hello = await new Promise<SupervisorHello | null>((res) => {
    child.stdout!.on('data', (d: string) => {
      text += d;
    });
    child.stdout!.on('close', () => {
      try {
        res(JSON.parse(text.split('\n')[0] ?? '') as SupervisorHello);
      } catch {
        res(null);
      }
    });
    child.on('error', () => res(null));
  });
  child.unref();
  if (!hello) throw new UsageError('the run could not be started: its supervisor ended at once', RECORD_HINT);
  if (!hello.ok) throw new UsageError(hello.message, hello.hint);
  return { dir: hello.dir, id: hello.id, done };
}
