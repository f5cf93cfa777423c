/**
 * Kinds of run, behind one interface: how a planned launch becomes a run, how a viewer follows one, how any
 * terminal stops one. The launch entry (./entry.ts) and the viewer (./viewer.ts) know a kind only through
 * this interface; each kind is one module: the local run (the module local, a supervisor process on this machine)
 * and a Slurm job (the Slurm module kind). A third (Kubernetes, say) is one more module, and one more check of its
 * record block in the kinds module.
 */
import { type LaunchSource, type Setup, sourceOfRecord } from '../config/index.js';
import type { RunEstimate } from '../rules/index.js';
import type { MeasuredRun } from '../estimate/index.js';
import type { Finding } from '../config/index.js';
import type { Alert } from '../observe/index.js';
import type { CheckId } from '../checks/index.js';
import type { RunFollower } from './follower.js';
import type { PreparedCommand } from '../config/index.js';
import type { AccelerateExe } from '../proc/index.js';
import type { RunJson, RunRecord } from '../records/index.js';
import type { TextSink } from './stream.js';
import type { TelemetryView } from '../observe/index.js';
import type { WriteResult } from '../fs/index.js';

/** Options of a launch, from its entry (the command line, `--last`, the wizard). */
export interface LaunchOptions {
  /** What is launched: a preset, `--last`, the wizard's setup. */
  source: LaunchSource;
  /** `--accelerate PATH` (else ZEROWIZ_ACCELERATE, else PATH). */
  accelerate?: string;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** `--skip-check ID` values (ids, comma-separated ids or `all`): checks left out before each pass. */
  skipCheck?: string[];
  /** false: `--no-speed-test` (the NVMe speed test is left out). */
  speedTest?: boolean;
  /** Topology warnings of a relaunch that goes on as it is: kept in the run record. */
  topologyWarnings?: { checkpoint: string; warning: string }[];
}

/** A setup checked and ready to run. */
export interface PreparedLaunch {
  setup: Setup;
  source: LaunchSource;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** null only in a dry run without accelerate. */
  exe: AccelerateExe | null;
  commands: PreparedCommand[];
  /** Warnings (errors stop the launch). */
  findings: Finding[];
  /** Dry run only: what a real launch would have refused. */
  problems: string[];
  /** The checks left out before each pass (flags and ZEROWIZ_SKIP_CHECKS). */
  skipChecks: CheckId[];
  /** What left each of them out (--skip-check, --no-speed-test, ZEROWIZ_SKIP_CHECKS), for the reports. */
  skipWhy?: Partial<Record<CheckId, string>>;
  /** Topology warnings the record keeps. */
  topologyWarnings: { checkpoint: string; warning: string }[];
  /** The first pass's checks, run before the launch started (their lines open its log); absent: not run yet. */
  firstPassLines?: string[];
  /** The block a kind keeps in run.json by its name (a kind that runs its steps through a local supervisor). */
  recordBlock?: Record<string, unknown>;
  /** The estimate of the setup's own mode (its peak and step time), computed once here and kept in the record. */
  estimate?: RunEstimate | null;
  /** The run records of `cwd` read as measurements (the peaks and steps of the same setup's runs here). */
  measured?: MeasuredRun[];
}

/** The commands of a record, as the summary and stream mode show them. */
export function recordCommands(record: RunRecord): PreparedCommand[] {
  return record.json.steps.map((s) => ({ step: s.name, argv: s.argv, usesConfig: s.usesConfig, text: s.command }));
}

/** What a viewer of an existing record needs to know of its launch (attach, or a job followed again). */
export function preparedOfRecord(
  record: RunRecord,
  setup: Setup,
  opts: { source?: LaunchSource; env?: NodeJS.ProcessEnv } = {},
): PreparedLaunch {
  const j = record.json;
  return {
    setup,
    source: opts.source ?? sourceOfRecord(j.source),
    cwd: j.cwd,
    env: opts.env ?? process.env,
    exe: { path: j.accelerate.path, display: j.accelerate.display, from: 'path' },
    commands: recordCommands(record),
    findings: [],
    problems: [],
    skipChecks: [],
    topologyWarnings: [],
  };
}

/** What a kind can ask of the launch while it opens a run. */
export interface OpenContext {
  /** zerowiz's own message line. */
  say(line: string): void;
  /** Whether a stop was requested meanwhile (then nothing more is started). */
  stopRequested(): boolean;
}

/** A run opened by its kind: its record, and what was written for it. */
export interface OpenedRun {
  record: RunRecord;
  writes: WriteResult[];
  /** The launch as it turned out (e.g. the commands of a submitted job); default: unchanged. */
  prepared?: PreparedLaunch;
}

/** What a viewer gets from a kind to follow one run. */
export interface KindFollow {
  control: RunFollower;
  /** The run's GPUs as a viewer sees them, or null when they are elsewhere (noTelemetry says why). */
  telemetry: TelemetryView | null;
  /** Whether the viewer keeps the record (a Slurm job has no supervisor beside it); else read-only. */
  keepsRecord: boolean;
  /** Whether the alerts come from the run's owner (the supervisor) rather than from the viewer's own reading. */
  alertsGiven: boolean;
  /** The record as the follower last read it (a local run's changes under the viewer). */
  record(): RunRecord;
}

/** The hooks a viewer hands a kind's follower. */
export interface FollowHooks {
  /** An alert the run's owner raised (local runs). */
  onAlert(a: Alert): void;
}

/**
 * A kind of run. Every hook but `open`, `follow` and the prompts is optional; absent, the local behaviour
 * applies.
 */
export interface RunKind {
  readonly name: string;
  /** Whether the steps run on this machine (their GPUs are watched here). */
  readonly runsHere: boolean;
  /** Why there is no GPU telemetry (for a kind whose steps run elsewhere). */
  readonly noTelemetry?: string;
  /**
   * Whether SIGINT (without a terminal to ask on) and SIGTERM to a viewer stop the run (a local run: batch use
   * keeps its meaning) or only leave it (a Slurm job outlives zerowiz by nature).
   */
  readonly signalsStop: boolean;
  /**
   * Checks the setup for this kind (instead of the local checks: a Slurm job validates the setup as its shape
   * runs it); returns the launch and the lines to say. Throws UsageError with the fix.
   */
  prepare?(setup: Setup, opts: LaunchOptions): { prepared: PreparedLaunch; lines: string[] };
  /** Prints what a real launch would do (default: the commands). */
  dryRun?(prepared: PreparedLaunch, out: TextSink, say: (line: string) => void): Promise<void>;
  /**
   * Opens the run (after the config files are written): its record, and the run started; null when a stop
   * came first and nothing was started. Throws UsageError for what the user can fix.
   */
  open(prepared: PreparedLaunch, ctx: OpenContext): Promise<OpenedRun | null>;
  /** The follower a viewer follows the opened run with. */
  follow(opened: OpenedRun, prepared: PreparedLaunch, hooks: FollowHooks): KindFollow;
  /** The pane's question on q while the run goes: y stops it, d leaves it, any other key keeps watching. */
  panePrompt(record: RunJson): string;
  /** Stream mode's question on Ctrl+C (answered with a line: y, d, or Enter to keep following). */
  streamQuestion(record: RunJson): string;
  /** Stream mode's first line (default: `run ID: N step(s); record in DIR`). */
  streamIntro?(record: RunRecord, cwd: string): string;
  /** Stream mode's line when step `i` starts (default: `step i/N NAME: COMMAND`). */
  stepIntro?(record: RunRecord, i: number, commands: readonly PreparedCommand[]): string;
  /** Stream mode's line when a stop is requested. */
  stoppingNote?(record: RunRecord): string;
  /** The last lines after the summary: how to come back to a run left running, or where the logs are. */
  endLines(record: RunRecord, cwd: string, how: { left: boolean; code: number; control: RunFollower }): string[];
}
