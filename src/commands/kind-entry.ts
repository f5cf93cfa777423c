/**
 * What a kind of run is at the command line's edges (./run-kinds.ts holds the kinds): the types a kind's module
 * implements, apart from the registry so that a kind's module and the registry do not import each other.
 */
import type { LaunchSource, Setup } from '../config/index.js';
import type { Preset } from '../setups/index.js';
import type { PreparedLaunch, RunKind } from '../launch/index.js';
import type { RunJson, RunRecord } from '../records/index.js';
import type { LaunchFlags } from './launch-flags.js';

/** One flag a kind adds to `zerowiz launch`, as commander takes it. */
export interface KindFlag {
  /** `--partition <name>` */
  flags: string;
  description: string;
  /** The flag may be given more than once (its values collected in order). */
  repeatable?: boolean;
}

/** What a launch is made of when its kind is chosen: the setup, what was launched, the record rerun (--last). */
export interface LaunchFrom {
  setup: Setup;
  source: LaunchSource;
  record: RunRecord | null;
  /** The preset launched (null with --last): its notify list is the run's. */
  preset: Preset | null;
}

/**
 * A kind of run at the edges (see the module comment): what the command line's surface needs of it, read when the
 * CLI starts, and its behaviour, loaded when a command needs it.
 */
export interface RunKindEntry {
  /** Its name, and its key in run.json: a record with that block is one of its runs. */
  name: string;
  /** The flag that chooses it (`--slurm ...`); its other flags need it. */
  choose: KindFlag;
  /** The flags that shape its runs (given without `choose`, they are refused). */
  flags: readonly KindFlag[];
  /** The hint when its flags come without `choose`. */
  chooseHint: string;
  /** Lines for `zerowiz launch --help`, after the local run's. */
  help: readonly string[];
  /** Other names `attach` and `stop` find one of its records by (a Slurm job id). */
  aliases(json: RunJson): string[];
  /** The check of its block of a record's run.json: why it is damaged (the record is then named and skipped), or null. */
  loadCheck(): Promise<(json: RunJson) => string | null>;
  /** Its behaviour (off the start-up path). */
  load(): Promise<RunKindModule>;
}

/** What a kind does at the edges. */
export interface RunKindModule {
  /** The RunKind of a launch (its flag, or `--last` of one of its records). */
  launchKind(from: LaunchFrom, flags: LaunchFlags): Promise<RunKind>;
  /** `attach`: the record brought up to date; the kind that follows it, its launch, the line to say first. */
  attach(rec: RunRecord): Promise<{ kind: RunKind; prepared: PreparedLaunch; intro: string }>;
  /** `stop`: stops the run from any terminal; resolves with the exit code once it has ended. */
  stop(rec: RunRecord, flags: { now?: boolean }, say: (line: string) => void): Promise<number>;
  /** `runs`: brings the open records up to date first; a note when it cannot. */
  refresh(records: RunRecord[]): Promise<string | null>;
  /** `runs`: the record's column (`slurm job 12 pending (Resources)`). */
  column(rec: RunRecord): string;
  /** `runs --json`: the kind's fields beside the common ones. */
  summary(rec: RunRecord): Record<string, unknown>;
}
