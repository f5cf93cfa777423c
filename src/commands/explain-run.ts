/** `zerowiz explain`'s work, loaded only when the command runs. */
import { UsageError } from '../text/index.js';
import {
  DEFAULT_SCRIPT,
  diffLines,
  diffReports,
  explainLines,
  explainRef,
  explainSetup,
  reportJson,
  type ExplainContext,
  type ExplainReport,
} from '../explain/index.js';
import type { ScriptContext } from '../explain/index.js';
import { withDefaults, type Answers, type QuestionId } from '../config/index.js';
import { listRunRecords, readRecordSetup, type RunRecord } from '../records/index.js';
import { printable } from '../text/index.js';
import * as output from './output.js';

/** Raw flag values as commander hands them over. */
export interface ExplainFlags {
  step?: string;
  sinceLast?: boolean;
  json?: boolean;
  scriptBatchSize?: string;
  scriptAccumulation?: string;
  scriptMixedPrecision?: string;
  scriptHiddenSize?: string;
}

function whole(flag: string, text: string | undefined, min: number): number | null {
  if (text === undefined) return null;
  if (!/^[0-9]+$/.test(text.trim()) || Number(text) < min)
    throw new UsageError(`${flag} '${printable(text)}' is not a whole number >= ${min}`, `e.g. ${flag} 4`);
  return Number(text);
}

/** The script as the --script-* flags describe it. */
function scriptOf(f: ExplainFlags): ScriptContext {
  const hidden =
    f.scriptHiddenSize === undefined
      ? null
      : f.scriptHiddenSize.trim().toLowerCase() === 'none'
        ? 'none'
        : whole('--script-hidden-size', f.scriptHiddenSize, 1);
  return {
    ...DEFAULT_SCRIPT,
    batchSize: whole('--script-batch-size', f.scriptBatchSize, 1),
    accumulation: whole('--script-accumulation', f.scriptAccumulation, 1),
    mixedPrecision: (f.scriptMixedPrecision as ScriptContext['mixedPrecision']) ?? null,
    hiddenSize: hidden,
  };
}

/** The run to compare with: the newest that succeeded, else the newest, of the preset (any for a YAML). */
function lastRun(report: ExplainReport, cwd: string): RunRecord {
  const { records } = listRunRecords(cwd);
  const mine = report.target.kind === 'preset' ? records.filter((r) => r.json.name === report.target.name) : records;
  const pick = mine.find((r) => r.json.ended === 'succeeded') ?? mine[0];
  if (!pick)
    throw new UsageError(
      `no run of ${report.target.kind === 'preset' ? `preset ${report.target.name}` : 'any preset'} in ${cwd}/.zerowiz/runs`,
      'run it once with `zerowiz launch`, or explain it without --since-last',
    );
  return pick;
}

/** Runs `explain`; resolves with the exit code (1 when a step would be refused). */
export async function runExplain(ref: string, flags: ExplainFlags): Promise<number> {
  const ctx: ExplainContext = {
    cwd: process.cwd(),
    env: process.env,
    script: scriptOf(flags),
    ...(flags.step !== undefined ? { step: flags.step } : {}),
  };
  const report = explainRef(ref, ctx);
  let since: { run: RunRecord; before: ExplainReport } | null = null;
  if (flags.sinceLast) {
    const run = lastRun(report, ctx.cwd);
    let setup: ReturnType<typeof readRecordSetup>;
    try {
      setup = readRecordSetup(run);
    } catch (e) {
      throw new UsageError(`the run record ${run.json.id} is damaged: ${(e as Error).message}`, 'pick another run');
    }
    // The record keeps every answer: those that differ from zerowiz's defaults are the ones it was given.
    const defaults = withDefaults({});
    const given = Object.fromEntries(
      Object.entries(setup.answers).filter(([k, v]) => defaults[k as QuestionId] !== v),
    ) as Partial<Answers>;
    const before = explainSetup(
      setup,
      given,
      { kind: 'setup', name: run.json.id, path: run.dir },
      {
        ...ctx,
        ...(flags.step !== undefined && setup.steps.some((s) => s.name === flags.step) ? {} : { step: undefined }),
      },
      `run ${run.json.id}`,
    );
    since = { run, before };
  }
  const failed = report.steps.some((s) => s.errors.length > 0);
  if (flags.json) {
    const out: Record<string, unknown> = reportJson(report);
    if (since)
      out.sinceLast = {
        run: since.run.json.id,
        ended: since.run.json.ended,
        changes: diffReports(since.before, report),
      };
    output.json(out);
    return failed ? 1 : 0;
  }
  if (since) {
    const label = `run ${since.run.json.id} (${since.run.json.ended === 'succeeded' ? 'succeeded' : `${since.run.json.ended}; no run of it succeeded`})`;
    output.lines(diffLines(diffReports(since.before, report), label));
  } else output.lines(explainLines(report));
  if (failed) output.say('accelerate or DeepSpeed would refuse a step (see the errors above)');
  return failed ? 1 : 0;
}
