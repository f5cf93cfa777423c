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
import { join } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { UsageError } from '../text/index.js';
import { type Setup, sourcePreset, sourceText } from '../config/index.js';
import { capYoungGeneration } from '../proc/index.js';
import type { AlertContext, RunWatch } from '../observe/index.js';
import { binPath } from './bin.js';
import { RECORD_HINT, type StartedSupervisor, type SupervisorHello, type SupervisorPlan } from './supervisor-start.js';
import { launchEstimate, type LaunchEstimate } from '../rules/index.js';
import { findFreePort } from '../proc/index.js';
import { gracePeriods, handOffAtExit, trackGroup, untrackGroup } from '../proc/index.js';
import { ownIdentity, processStartTime } from '../proc/index.js';
import {
  createRunRecord,
  parseStoredSetup,
  RecordError,
  saveRunJson,
  stepLogPath,
  type RunRecord,
} from '../records/index.js';
import { RecordKeeper } from './record-keeper.js';
import { EVENTS_FILE, EventsWriter, type LiveSnapshot, writeLive } from '../records/index.js';
import type { PipelineOutcome } from '../observe/index.js';
import { Pipeline, gnuTeeAvailable, type StepSpec } from './runner.js';
import { GpuTelemetry, telemetryIntervalMs, visibleGpuIndices } from '../observe/index.js';
import { alertContextOf, watchOfRun } from './run-watch.js';
import { RunOutputs, stepEnvOf } from './run-outputs.js';
import { HELPER_OF_ENV, RUN_DIR_ENV } from './run-env.js';
import { Watchdog } from './watchdog.js';
import { ladderSoFar, ledgerWriter } from './ladder.js';
import { topology } from '../estimate/index.js';
import { modelCatalogOrNone } from '../estimate/index.js';
import { CHECKPOINT_POLL_INTERVAL_MS, type CheckpointEvent, CheckpointWatcher } from '../checkpoints/index.js';
import { expectationOf } from '../checkpoints/index.js';
import { outputRoots } from '../checkpoints/index.js';
import { recordCheckpoints } from '../checkpoints/index.js';
import { captureTopology, recordTopology } from '../checkpoints/index.js';
import { checkBeforePass } from '../checks/index.js';
import { checkPlan } from '../checks/index.js';
import { CHECK_IDS, type CheckId, skipsAll } from '../checks/index.js';
import { NOTIFY_ENV } from '../notify/index.js';
import { RunHealth, runEstimateSchema, type WatchedPath } from '../observe/index.js';
import { stallOptionsFromEnv } from '../observe/index.js';

/**
 * The plan the launching zerowiz hands its run's supervisor (JSON on the supervisor's stdin), as a schema: the
 * supervisor reads it back through this, so a plan cut short or of another version is refused, never run. A new
 * field is one more entry here (optional, so that a supervisor of this version still reads an older plan).
 */
const planSchema = z.object({
  version: z.literal(1),
  /** The directory the steps run in (the record goes to .zerowiz/runs/ under it). */
  cwd: z.string().check(z.minLength(1)),
  /** What was launched (config/source.ts), for the record. */
  source: z.union([
    z.object({ kind: z.literal('preset'), ref: z.string() }),
    z.object({ kind: z.literal('last'), runId: z.string() }),
    z.object({ kind: z.literal('wizard'), preset: z.nullable(z.string()) }),
  ]),
  /** The setup, checked as a record's is (records/record.ts parseStoredSetup). */
  setup: z.unknown(),
  accelerate: z.object({ path: z.string().check(z.minLength(1)), display: z.string() }),
  commands: z.array(
    z.object({ step: z.string(), argv: z.array(z.string()), usesConfig: z.boolean(), text: z.string() }),
  ),
  /** The checks left out before each pass (--skip-check, ZEROWIZ_SKIP_CHECKS); every id: no checks. */
  skipChecks: z.optional(z.array(z.enum(CHECK_IDS))),
  /** What left each of them out, for the pass logs. */
  skipWhy: z.optional(z.partialRecord(z.enum(CHECK_IDS), z.string())),
  /** Topology warnings of a relaunch that went on without asking (kept in run.json). */
  topologyWarnings: z.optional(z.array(z.object({ checkpoint: z.string(), warning: z.string() }))),
  /** A kind's block of run.json, by the kind's name. */
  recordBlock: z.optional(z.record(z.string(), z.unknown())),
  /** The first pass's checks as the launch ran them before it started (all passed). */
  firstPassLines: z.optional(z.array(z.string())),
  /** The estimate the launch made of the setup's mode (its peak and step time), for the record; absent: made here. */
  estimate: z.optional(runEstimateSchema),
  /** The notification targets (ZEROWIZ_NOTIFY's text; null: none), set by startSupervisor. */
  notify: z.optional(z.nullable(z.string())),
});

export type { SupervisorPlan } from './supervisor-start.js';

/** Reads a plan (the supervisor's stdin) through its schema; throws an Error naming what is wrong. */
export function parsePlan(text: string): SupervisorPlan {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`the plan is not JSON (${(e as Error).message})`);
  }
  const r = z.safeParse(planSchema, data);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`the plan's ${i?.path.map(String).join('.') || 'value'}: ${i?.message ?? 'damaged'}`);
  }
  const plan: SupervisorPlan = { ...r.data, setup: parseStoredSetup(r.data.setup) };
  return plan;
}

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

/** What one run of a supervisor is made of, once assembled (each part named, each closed at the end). */
interface RunParts {
  rec: RunRecord;
  events: EventsWriter;
  telemetry: GpuTelemetry;
  alertContext: AlertContext;
  watch: RunWatch;
  /** The series, notifications and report of the run (./run-outputs.ts). */
  outputs: RunOutputs;
  pipeline: Pipeline;
  keeper: RecordKeeper;
  /** Stops the timers the run started (checkpoint polling, the health watch). */
  timers: ReturnType<typeof setInterval>[];
}

/** One local run, owned. */
export class Supervisor {
  record: RunRecord | null = null;
  private pipeline: Pipeline | null = null;
  private stopAsked = false;
  private killAsked = false;
  /** What zerowiz estimated for the setup (computed once: the record and the alerts' fixes take it). */
  private readonly estimate: LaunchEstimate | null;
  /** Aborted at the run's end: a helper still asking (the topology's Python) ends with it. */
  private readonly helpers = new AbortController();

  constructor(
    readonly plan: SupervisorPlan,
    private readonly opts: SupervisorOptions,
  ) {
    // The launch's estimate travels in the plan; the setup is estimated again only when a step runs out of memory.
    this.estimate = launchEstimate(plan.setup, undefined, sourcePreset(plan.source), plan.cwd, plan.estimate, opts.env);
  }

  /** Creates the record (its directory told to the watchdog first). Throws RecordError. */
  open(): RunRecord {
    const { plan } = this;
    const rec = createRunRecord({
      cwd: plan.cwd,
      setup: plan.setup,
      source: sourceText(plan.source),
      commands: plan.commands,
      accelerate: plan.accelerate,
      onDir: (dir) => this.opts.guard?.recordDir(dir),
    });
    const guard = this.opts.guard;
    rec.json.supervisor = {
      ...ownIdentity(),
      watchdog: guard ? { pid: guard.pid, startTime: processStartTime(guard.pid) } : null,
    };
    rec.json.estimate = this.estimate?.json ?? null;
    if (plan.recordBlock) Object.assign(rec.json, plan.recordBlock);
    if (plan.topologyWarnings && plan.topologyWarnings.length > 0) rec.json.topologyWarnings = plan.topologyWarnings;
    // The checks the command line left out: `launch --last` leaves them out again (as it keeps --pin-step).
    const given = Object.entries(plan.skipWhy ?? {}).filter(([, why]) => why !== 'ZEROWIZ_SKIP_CHECKS');
    if (given.length > 0)
      rec.json.skippedChecks = {
        ids: given.filter(([, why]) => why === '--skip-check').map(([id]) => id),
        speedTest: !given.some(([, why]) => why === '--no-speed-test'),
      };
    saveRunJson(rec);
    this.record = rec;
    return rec;
  }

  /** The watchdog died and another took its place: the record names the new one. */
  watchdogReplaced(pid: number): void {
    const rec = this.record;
    if (!rec?.json.supervisor) return;
    rec.json.supervisor.watchdog = { pid, startTime: processStartTime(pid) };
    saveRunJson(rec);
  }

  /**
   * Stops the run with the ladder (before the first step: nothing starts). Asking again joins the stop under
   * way: only killNow() (SIGUSR2, `zerowiz stop --now`) cuts it short.
   */
  stop(): void {
    if (this.stopAsked) return;
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
    const parts = this.assemble(rec);
    this.watchTopology(parts);
    this.watchCheckpoints(parts);
    this.watchHealth(parts);
    this.tellEvents(parts);
    this.pipeline = parts.pipeline;
    if (this.stopAsked) void parts.pipeline.stop();
    if (this.killAsked) parts.pipeline.killNow();
    parts.telemetry.start();
    parts.keeper.start();
    try {
      const o = await parts.pipeline.run();
      await this.finish(parts, o);
      return o;
    } finally {
      this.helpers.abort();
      for (const t of parts.timers) clearInterval(t);
      parts.keeper.close();
      parts.events.close();
    }
  }

  /** The run's parts: events.jsonl, the GPU telemetry, the watch, the pipeline of steps, the record keeper. */
  private assemble(rec: RunRecord): RunParts {
    const events = new EventsWriter(join(rec.dir, EVENTS_FILE));
    const { env } = this.opts;
    const outputs = new RunOutputs({ record: rec, env, telemetryIntervalMs: telemetryIntervalMs(env) });
    const telemetry = this.telemetryOf(rec, outputs);
    const alertContext = alertContextOf(this.plan.setup, this.estimate);
    const watch = watchOfRun(this.plan, alertContext, {
      telemetry,
      onAlert: (a) => events.write({ t: 'alert', a }),
      onLoss: outputs.onLoss,
    });
    const pipeline = this.pipelineOf(rec, events);
    const keeper = new RecordKeeper({ record: rec, watch, run: pipeline, env });
    return { rec, events, telemetry, alertContext, watch, outputs, pipeline, keeper, timers: [] };
  }

  /** The GPU telemetry (nvidia-smi as a helper the watchdog knows), written to live.json at each sample. */
  private telemetryOf(rec: RunRecord, outputs: RunOutputs): GpuTelemetry {
    const { env, guard } = this.opts;
    return new GpuTelemetry({
      env: { ...env, [HELPER_OF_ENV]: rec.dir },
      gpus: runGpus(this.plan.setup, env),
      intervalMs: telemetryIntervalMs(env),
      onUpdate: (t) => {
        writeLive(rec.dir, snapshotOf(t, rec.json.steps.length));
        outputs.gpu(t);
      },
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
  }

  /**
   * The steps, each writing into its log; the checks before each pass (unless all are skipped); each stop's
   * signals written into events.jsonl first (the ledger a watchdog goes on from: ./ladder.ts).
   */
  private pipelineOf(rec: RunRecord, events: EventsWriter): Pipeline {
    const { plan } = this;
    const { env, guard } = this.opts;
    const specs: StepSpec[] = plan.commands.map((c, i) => ({
      name: c.step,
      file: plan.accelerate.path,
      args: c.argv,
      logPath: stepLogPath(rec, i),
      cwd: plan.cwd,
      env: { ...stepEnvOf(env), [RUN_DIR_ENV]: rec.dir },
    }));
    const skip = new Set<CheckId>(plan.skipChecks ?? []);
    return new Pipeline(specs, gracePeriods(env), {
      guard,
      ladder: (pgid) => ({ onSignal: ledgerWriter(events, pgid, 'supervisor') }),
      stoppedElsewhere: (pgid) => ladderSoFar(rec.dir).get(pgid)?.signal ?? null,
      // The checks before each pass, on this machine, at the moment it starts (./checks/gate.ts).
      beforeStep: skipsAll(skip)
        ? undefined
        : async (i, signal) =>
            i === 0 && plan.firstPassLines
              ? { start: true, logLines: plan.firstPassLines, reason: null }
              : checkBeforePass(plan.setup, i, {
                  cwd: plan.cwd,
                  env,
                  accelerate: plan.accelerate.path,
                  skip,
                  signal,
                  ...(plan.skipWhy ? { skipWhy: plan.skipWhy } : {}),
                }),
    });
  }

  /** The topology every checkpoint of this run is written with (stage, offload, processes, versions). */
  private watchTopology({ rec, keeper }: RunParts): void {
    void captureTopology(this.plan.setup, this.plan.accelerate.path, this.opts.env, this.helpers.signal).then(
      (t) => {
        recordTopology(rec, t);
        keeper.save();
      },
      () => undefined,
    );
  }

  /** Each checkpoint the steps save, verified once it is written (../checkpoints/watch.ts). */
  private watchCheckpoints(parts: RunParts): void {
    const { plan } = this;
    const { rec, keeper, watch, pipeline } = parts;
    const models = modelCatalogOrNone();
    const checkpoints = new CheckpointWatcher({
      steps: plan.setup.steps.map((st, i) => ({
        index: i,
        name: st.name,
        roots: outputRoots(st.args, plan.cwd),
        expect: expectationOf(plan.setup, i, models),
      })),
      since: Date.now(),
      fix: { setupRef: sourcePreset(plan.source), runId: rec.json.id },
    });
    const onCheckpoints = (evs: CheckpointEvent[]) => {
      if (evs.length === 0) return;
      for (const e of evs) if (e.alert) watch.alerts.checkpoint(e.step, e.alert);
      recordCheckpoints(rec, checkpoints.verdicts());
      keeper.save();
    };
    const poll = setInterval(() => onCheckpoints(checkpoints.poll()), CHECKPOINT_POLL_INTERVAL_MS);
    poll.unref();
    parts.timers.push(poll);
    pipeline.subscribe({ stepEnd: (i) => onCheckpoints(checkpoints.finish(i)) });
  }

  /** The watch during a pass: stalls, memory, /dev/shm, free space (../observe/health.ts). */
  private watchHealth(parts: RunParts): void {
    const { plan } = this;
    const { env } = this.opts;
    const { watch, pipeline } = parts;
    let health: { i: number; h: RunHealth; pgid: number | null; busy: boolean } | null = null;
    const stall = stallOptionsFromEnv(env);
    const tickMs = Math.max(250, Math.min(HEALTH_TICK_MS, (stall.minMs ?? HEALTH_TICK_MS) / 4));
    const tick = setInterval(() => {
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
    tick.unref();
    parts.timers.push(tick);
    const seen = (i: number) => {
      if (health?.i === i) health.h.line(Date.now());
    };
    pipeline.subscribe({
      stepStart: (i, info) => {
        const h = new RunHealth({ step: i, spacePaths: spacePathsOf(plan.setup, plan.cwd, i), env, stall });
        h.start(Date.now());
        health = { i, h, pgid: info.pid, busy: false };
      },
      progress: (i, p) => {
        if (health?.i === i) health.h.progress(Date.now(), p.n);
      },
      line: seen,
      lines: seen,
      stepEnd: (i) => {
        if (health?.i === i) health = null;
      },
    });
  }

  /** What the viewers read: the watch and the record keeper hear the steps; events.jsonl gets each moment. */
  private tellEvents({ pipeline, watch, keeper, outputs, telemetry, events, alertContext }: RunParts): void {
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
    pipeline.subscribe(outputs);
    outputs.start(watch, telemetry);
    pipeline.subscribe({
      stepStart: (i, info) =>
        events.write({
          t: 'stepStart',
          i,
          at: info.startedAt,
          pid: info.pid,
          freePort: null,
          csvOffset: watch.csvOffset(i),
          pidStart: info.pidStart ?? null,
        }),
      stepEnd: (i, r) => events.write({ t: 'stepEnd', i, r, csvEnd: watch.csvEnd(i) }),
      stopping: () => events.write({ t: 'stopping', at: Date.now() }),
      logError: (i, why) => events.write({ t: 'logError', i, why }),
    });
  }

  /** The run's last word: the last loss.csv rows, nvidia-smi gone, live.json and run.json final, then `end`. */
  private async finish(
    { rec, watch, telemetry, keeper, outputs, events }: RunParts,
    o: PipelineOutcome,
  ): Promise<void> {
    await watch.close();
    await telemetry.stop();
    writeLive(rec.dir, snapshotOf(telemetry, rec.json.steps.length));
    keeper.takeAllLive();
    const report = outputs.finishFiles();
    events.write({
      t: 'end',
      o: { outcome: o.outcome, exitCode: o.exitCode, failedStep: o.failedStep },
      at: Date.now(),
    });
    this.opts.guard?.finished();
    await outputs.notifyEnd(o, report);
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

/** Reads all of stdin (the plan) through its schema; why it is not a plan when it is not one; null when empty. */
async function readPlan(): Promise<SupervisorPlan | { problem: string } | null> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  // Nothing at all: a supervisor started ahead of a launch that was then refused; it ends without a word.
  if (chunks.length === 0) return null;
  try {
    return parsePlan(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    return { problem: (e as Error).message };
  }
}

/** What every run needs whatever its plan, done while the plan comes: the tee probe and the model catalog. */
async function aheadOfPlan(): Promise<void> {
  await new Promise<void>((res) => setImmediate(res));
  gnuTeeAvailable(process.env);
  modelCatalogOrNone();
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
  // SIGINT and SIGTERM stop with the ladder, however often they come (a second stop joins the first);
  // SIGUSR2 kills at once.
  const onStop = () => {
    if (sup) sup.stop();
    else pending ??= 'stop';
  };
  process.on('SIGINT', onStop);
  process.on('SIGTERM', onStop);
  process.on('SIGUSR2', () => {
    if (sup) sup.killNow();
    else pending = 'kill';
  });
  // While the plan comes (a supervisor started ahead of it waits for the launch's checks): what every run needs.
  const plan = await Promise.all([readPlan(), aheadOfPlan()]).then(([p]) => p);
  if (!plan) return;
  if ('problem' in plan) {
    // A launcher that died before handing over the whole plan is gone: the answer reaches whoever reads it.
    await sayHello({ ok: false, message: `the run could not be started: ${plan.problem}` });
    return;
  }
  capYoungGeneration();
  const env = process.env;
  // The targets as the launch had them when it handed the plan over (it may have started this process first).
  if (plan.notify === null) delete env[NOTIFY_ENV];
  else if (plan.notify !== undefined) env[NOTIFY_ENV] = plan.notify;
  const guard = Watchdog.start({
    grace: gracePeriods(env),
    bin: binPath(),
    onReplaced: (pid) => sup?.watchdogReplaced(pid),
  });
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

/** Starts a run's supervisor in this process (no bin: the unit tests run from the sources), without a watchdog. */
export function startInProcess(plan: SupervisorPlan, env: NodeJS.ProcessEnv): StartedSupervisor {
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
