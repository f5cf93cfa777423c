/**
 * The kinds of run at the command line's edges: each kind other than the local one (a supervisor on this machine,
 * the default) is one module that says what `launch`, `attach`, `stop` and `runs` need of it: its flags, when a
 * launch is of it, its block of run.json, how a record of it is followed, stopped and listed. Adding a kind is that
 * module and one line in RUN_KINDS; nothing else at the edges names a kind. The run itself goes through the one
 * launch entry and viewer, as a RunKind (src/launch/kind.ts) the module hands over.
 */
import { Option } from 'commander';
import type { RunJson, RunRecord } from '../records/index.js';
import { UsageError } from '../text/index.js';
import type { LaunchFlags } from './launch-flags.js';
import type { KindFlag, RunKindEntry, RunKindModule } from './kind-entry.js';
import { SLURM_RUN_KIND } from './slurm-kind.js';

export type { KindFlag, LaunchFrom, RunKindEntry, RunKindModule } from './kind-entry.js';

/** The kinds besides the local one. A new kind is one more entry here. */
const RUN_KINDS: RunKindEntry[] = [SLURM_RUN_KIND];

/** Every kind besides the local one. */
export function runKinds(): readonly RunKindEntry[] {
  return RUN_KINDS;
}

/** Adds a kind (a test's own kind; the shipped ones are in RUN_KINDS); returns its removal. */
export function registerRunKind(kind: RunKindEntry): () => void {
  RUN_KINDS.push(kind);
  return () => {
    const i = RUN_KINDS.indexOf(kind);
    if (i >= 0) RUN_KINDS.splice(i, 1);
  };
}

/** The kind of a record by its block (null: a local run). */
export function kindOfRecord(json: RunJson): RunKindEntry | null {
  return RUN_KINDS.find((k) => Object.hasOwn(json, k.name)) ?? null;
}

/** What the readers of records need of the kinds. */
export interface RecordKinds {
  /**
   * Why a record's blocks of other parts are damaged (a kind's `slurm.shape.nodes: ...`, the checkpoint guard's
   * `topologyWarnings.0: ...`), or null: what every reader of records passes.
   */
  check(json: RunJson): string | null;
  /** The other names of a record (its kind's aliases). */
  aliases(json: RunJson): string[];
  /** The behaviour of a record's kind, loaded (null: a local run). */
  of(json: RunJson): Promise<RunKindModule | null>;
}

/** Loads every kind's record check, for reading records. */
export async function recordKinds(): Promise<RecordKinds> {
  const checks = new Map<RunKindEntry, (json: RunJson) => string | null>();
  for (const k of RUN_KINDS) checks.set(k, await k.loadCheck());
  // The checkpoint guard's blocks, loaded with the records (the command line's start never needs them).
  const { checkpointBlocksProblem } = await import('../checkpoints/record-blocks.js');
  return {
    check: (json) => {
      const k = kindOfRecord(json);
      return (k ? checks.get(k)!(json) : null) ?? checkpointBlocksProblem(json as unknown as Record<string, unknown>);
    },
    aliases: (json) => kindOfRecord(json)?.aliases(json) ?? [],
    of: async (json) => (await kindOfRecord(json)?.load()) ?? null,
  };
}

/** The commander attribute of a flag (`--gpus-per-node <n>` -> gpusPerNode). */
function attributeOf(f: KindFlag): string {
  return new Option(f.flags).attributeName();
}

/** Whether a flag was given. */
function given(flags: LaunchFlags, f: KindFlag): boolean {
  const v = (flags as Record<string, unknown>)[attributeOf(f)];
  return Array.isArray(v) ? v.length > 0 : v !== undefined && v !== false;
}

/** The flag of the kind the command line chose (`--slurm`), or null. */
export function chosenKindFlag(flags: LaunchFlags): string | null {
  const k = RUN_KINDS.find((x) => given(flags, x.choose));
  return k ? k.choose.flags.split(' ')[0]! : null;
}

/**
 * The kind a launch runs as: the one whose flag was given, else (with --last) the newest record's; null for a local
 * run. A kind's shaping flags without its own flag are bad input.
 */
export function kindOfLaunch(flags: LaunchFlags, record: RunRecord | null): RunKindEntry | null {
  const chosen = RUN_KINDS.find((k) => given(flags, k.choose)) ?? (record ? kindOfRecord(record.json) : null);
  for (const k of RUN_KINDS) if (k !== chosen && k.flags.some((f) => given(flags, f))) throw shapingAlone(k);
  return chosen;
}

/** The refusal of a kind's shaping flags without its own. */
function shapingAlone(k: RunKindEntry): UsageError {
  const names = k.flags.map((f) => f.flags.split(/[ ,]/)[0]!);
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0];
  return new UsageError(`${list} only apply with ${k.choose.flags.split(' ')[0]}`, k.chooseHint);
}

/** The launch command's options of every kind: its flag, then the flags that shape its runs. */
export function kindOptions(): Option[] {
  const option = (f: KindFlag) => {
    const o = new Option(f.flags, f.description);
    return f.repeatable ? o.argParser((v: string, prev: string[] = []) => [...prev, v]).default([]) : o;
  };
  return RUN_KINDS.flatMap((k) => [option(k.choose), ...k.flags.map(option)]);
}
