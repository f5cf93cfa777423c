/**
 * The finish step as plain async functions: where the files go, what would change (a diff against files
 * that exist), and the write itself (backup of differing content, atomic rename; never a partial file).
 */
import { dirname, join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { withFiles } from '../config/index.js';
import type { CsvLogOffer } from '../config/index.js';
import { clip, plural, softWrap, UsageError } from '../text/index.js';
import { expandPath } from '../fs/index.js';
import { accelerateDefaultConfig } from '../fs/index.js';
import { readUserFile } from '../fs/index.js';
import { launchLines, MODE_INFO, type Setup } from '../config/index.js';
import { formatWrite, type WriteResult } from '../fs/index.js';
import { launchEstimate, setupRun } from '../rules/index.js';
import { formatDuration } from '../text/index.js';
import { formatBand } from '../estimate/index.js';
import { modeDevice, rowLabel } from '../config/index.js';
import type { MeasuredRun, ModelEntry } from '../estimate/index.js';
import { inReportOrder, launchConfigFiles, setupFiles, setupInDir, writeConfigFiles } from '../config/index.js';

/**
 * Where to write: accelerate's default config location, a directory, or where the setup's own paths say (what
 * a launch writes before it runs: launchConfigFiles).
 */
export type WriteTarget = { kind: 'default' } | { kind: 'dir'; dir: string } | { kind: 'launch' };

/** One file to write: its path, its current content (null if absent) and the new text. */
export interface PlannedFile {
  path: string;
  old: string | null;
  text: string;
  /** A unified diff (old -> new); empty when the file does not exist or is unchanged. */
  patch: string;
}

/** A planned write. */
export interface WritePlan {
  setup: Setup;
  files: PlannedFile[];
  /** True when some existing file would change (the user confirms first). */
  changesExisting: boolean;
}

/**
 * The directory a typed target stands for, as a shell would read it (`~`, `$VAR`; relative to `cwd`), or a
 * UsageError saying what is wrong (an unset variable, an unknown user).
 */
export function targetDir(dir: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const x = expandPath(dir, { env, cwd });
  if (!x.ok) throw new UsageError(x.error, x.hint);
  return x.value;
}

/** The setup re-pointed at the target: accelerate's default_config.yaml (JSON beside it) or DIR/. */
export function setupForTarget(
  setup: Setup,
  target: WriteTarget,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): Setup {
  if (target.kind === 'launch') return setup;
  if (target.kind === 'default') {
    const yaml = accelerateDefaultConfig(env);
    return withFiles(setup, { accelerateConfig: yaml, dsConfig: join(dirname(yaml), 'ds_config.json') });
  }
  return setupInDir(setup, targetDir(target.dir, env, cwd));
}

/** The current content of a target, for the diff; null when absent or not a readable regular file (the write then says why). */
function readOrNull(path: string): string | null {
  try {
    return readUserFile(path, 'config');
  } catch {
    return null;
  }
}

/** Plans the write: the texts of every file the setup writes (setupFiles), and diffs against files that exist. */
export function planWrite(
  setup: Setup,
  target: WriteTarget,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): WritePlan {
  const s = setupForTarget(setup, target, env, cwd);
  const all = target.kind === 'launch' ? launchConfigFiles(s, cwd) : setupFiles(s, cwd);
  // Shown YAML first, then the JSON, then the rest (they are written together all the same).
  const order = { accelerate: 0, deepspeed: 1, noDeepSpeed: 2 } as const;
  const files = [...all]
    .sort((a, b) => order[a.role] - order[b.role])
    .map(({ path, text }): PlannedFile => {
      const old = readOrNull(path);
      const patch =
        old === null || old === text
          ? ''
          : createTwoFilesPatch(path, path, old, text, 'on disk', 'zerowiz', { context: 2 });
      return { path, old, text, patch };
    });
  return { setup: s, files, changesExisting: files.some((f) => f.old !== null && f.old !== f.text) };
}

/** One line of the overwrite diff as the finish screen shows it. */
export interface DiffLine {
  /** `old`/`new`: a file's header (text is its path); `hunk`: `@@ ... @@`; `add`/`del`/`same`: content. */
  kind: 'old' | 'new' | 'hunk' | 'add' | 'del' | 'same';
  text: string;
}

/**
 * The plan's diffs as lines to show: per changed file, an `old` and a `new` header line carrying the
 * path (the view labels them "on disk" and "zerowiz"), then the hunks. The unified diff's `Index:` and
 * `====` lines are left out: they repeat the path and take rows.
 */
export function diffLines(files: readonly PlannedFile[]): DiffLine[] {
  const out: DiffLine[] = [];
  for (const f of files) {
    if (f.patch === '') continue;
    for (const line of f.patch.split('\n')) {
      if (line.startsWith('Index: ') || /^=+$/.test(line) || line === '' || line.startsWith('\\ No newline')) continue;
      if (line.startsWith('--- ')) out.push({ kind: 'old', text: f.path });
      else if (line.startsWith('+++ ')) out.push({ kind: 'new', text: f.path });
      else if (line.startsWith('@@')) out.push({ kind: 'hunk', text: line });
      else if (line.startsWith('+')) out.push({ kind: 'add', text: line });
      else if (line.startsWith('-')) out.push({ kind: 'del', text: line });
      else out.push({ kind: 'same', text: line });
    }
  }
  return out;
}

/** Carries out a plan: every file of the setup in one transaction (backups, atomic renames, JSON first). */
export async function carryOut(plan: WritePlan, cwd = process.cwd()): Promise<WriteResult[]> {
  return writeConfigFiles(plan.setup, cwd);
}

/** What to print after writing: one line per file and the exact launch command(s). */
export function summaryLines(results: WriteResult[], setup: Setup): string[] {
  const out = results.map((r) => formatWrite(r));
  out.push('run:');
  for (const line of launchLines(setup)) out.push(`  ${line}`);
  return out;
}

/** The description a preset saved from the wizard gets. */
export function presetDescription(setup: Setup): string {
  const a = setup.answers;
  const steps = setup.steps.length === 0 ? 'no steps' : setup.steps.map((s) => s.name).join(' + ');
  return `${MODE_INFO[a.mode].label} on ${plural(a.num_processes, 'GPU')}, ${a.mixed_precision}, ${steps}; saved from the zerowiz wizard`;
}

/**
 * The finish menu's loss-log entry for a DiffSynth training step (`--enable_csv_log`, src/config/diffsynth.ts):
 * on for the steps `on` names, off with what Enter does, or why it is not available; null when no step has one.
 */
export function csvLogLabel(offer: CsvLogOffer | null, on: readonly { name: string }[]): string | null {
  if (!offer) return null;
  if (offer.steps.length === 0) return offer.note ? `Loss log: not available (${offer.note})` : null;
  if (on.length > 0)
    return `Loss log in the pane: ON (Launch adds --enable_csv_log to ${on.map((x) => x.name).join(', ')}; not saved in presets)`;
  const unsure = offer.steps.some((x) => !x.certain) ? "; this checkout's DiffSynth may not know it" : '';
  return `Loss log in the pane: off (Enter: add --enable_csv_log to ${offer.steps.map((x) => x.name).join(', ')} at launch${unsure})`;
}

/**
 * Where a launch of `setup` writes its config files, said before it starts: `Launch writes cfg/a.yaml and
 * cfg/ds.json in /work` (as the setup names them; relative ones are in the directory zerowiz runs in); null when
 * it writes none.
 */
export function launchWritesNote(setup: Setup, cwd = process.cwd()): string | null {
  const named = inReportOrder(launchConfigFiles(setup, cwd)).map((f) => f.named);
  if (named.length === 0) return null;
  const list = named.length === 1 ? named[0]! : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
  const relative = named.some((n) => !n.startsWith('/'));
  return `Launch writes ${list}${relative ? ` in ${cwd}` : ''} first (a file that would change is shown first).`;
}

/**
 * The question a Launch asks before it starts (it spends GPU hours, and sits one row from harmless entries): what
 * runs, where, and with how many processes.
 */
export function launchQuestion(setup: Setup): string {
  const a = setup.answers;
  const n = setup.steps.length;
  const procs = a.num_processes * Math.max(1, a.num_machines);
  const where =
    a.num_machines > 1
      ? `this machine as rank ${a.machine_rank} of ${a.num_machines}`
      : `this machine (${procs} process${procs === 1 ? '' : 'es'})`;
  return `Launch ${n === 1 ? 'the step' : `the ${n} steps`} now? Training starts at once on ${where} and runs until it ends; the log pane follows it.`;
}

/** Check lines shown above the finish menu; more are counted. */
export const FINISH_CHECK_LINES = 4;

/**
 * The machine checks above the finish menu, as rows of `width`: the count, the first thing to fix whole (wrapped:
 * it is what to do first), the next ones a row each, and how many more `zerowiz check` shows.
 */
export function finishCheckRows(
  checks: { summary: string; lines: string[] } | null | undefined,
  width: number,
): string[] {
  if (!checks) return [];
  const [first, ...rest] = checks.lines;
  const shown = rest.slice(0, FINISH_CHECK_LINES - 1);
  const more = checks.lines.length - 1 - shown.length;
  return [
    checks.summary,
    ...(first === undefined ? [] : softWrap(first, width)),
    ...shown.map((l) => clip(l, width)),
    ...(more > 0 ? [`+${more} more: zerowiz check shows every one with its fix`] : []),
  ];
}

/**
 * What the finish screen says of the run before it starts, in two short lines (a launch's first lines say it
 * whole): the setup's mode and step time with what bounds it, then the ETA, its GPU-hours and price, or why the
 * run's length is unknown. Empty without a model size.
 */
export function finishEstimateLines(
  setup: Setup,
  cwd: string,
  models: readonly ModelEntry[],
  measured: readonly MeasuredRun[] = [],
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  // No models (the catalog not loaded yet): the catalog file, as a launch reads it.
  const catalog = models.length > 0 ? models : undefined;
  const e = launchEstimate(setup, catalog, setup.name, cwd, undefined, env)?.json ?? null;
  if (!e?.step) return [];
  const a = setup.answers;
  const bound = e.step.bound === 'hostOptimizer' ? 'the CPU optimizer' : e.step.bound;
  const out = [
    `Run: ${rowLabel(a.mode, modeDevice(a.mode, a.offload_device))} ${formatBand(e.step)} (${bound} bounds it; ${e.step.gpu}, ${e.step.link})`,
  ];
  const { pipeline: p, schedule } = setupRun(setup, e.step, cwd, measured, catalog);
  if (!p) return [...out, `ETA unknown: ${schedule.why}`];
  const d = (s: number) => formatDuration(s * 1000);
  const price = p.price === null ? '' : `, ${p.price.toFixed(2)} at ${p.gpuHourPrice}/GPU-hour`;
  const data = p.dataSeconds === null ? '' : ` + data pass ${d(p.dataSeconds)}`;
  // Cut to the screen's width: what it costs first, where the count comes from last.
  out.push(
    `ETA ${d(p.trainSeconds)} (${d(p.trainLow)}-${d(p.trainHigh)})${data}, ${p.gpuHours.toFixed(1)} GPU-hours${price}: ${p.steps} steps (${schedule.why})`,
  );
  return out;
}
