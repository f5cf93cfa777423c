/**
 * One home per small fact: each fact below is written in one module of src/ (and components/), and these greps over
 * the sources fail when a second one appears. Each names its home and every other place that spells it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';
import { ENV_NUMBERS } from '../src/text/env.js';

/** Every source file of src/ and components/, relative to the root, with its text (comments kept). */
function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (/\.tsx?$/.test(e.name)) out.push({ file: p, text: readFileSync(join(ROOT, p), 'utf8') });
    }
  };
  walk('src');
  walk('components');
  return out;
}

const ALL = sources();

/** The files whose code (comments left out) matches `re`. */
function filesMatching(re: RegExp): string[] {
  const code = (t: string) => t.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return ALL.filter((f) => re.test(code(f.text))).map((f) => f.file);
}

describe('one home', () => {
  it("a setup's DeepSpeed and accelerate configs are emitted in config/compile.ts (and import.ts, which compares with them)", () => {
    expect(filesMatching(/\b(deepSpeedConfigObject|accelerateConfigObject)\(/)).toEqual([
      'src/config/compile.ts',
      'src/config/emit.ts',
      'src/setups/import.ts',
    ]);
  });

  it("a run's watch and its alerts' context are built in launch/run-watch.ts, for the supervisor and the viewers", () => {
    expect(filesMatching(/new RunWatch\(|: AlertContext = \{/)).toEqual(['src/launch/run-watch.ts']);
  });

  it('the numeric environment settings are read through text/env.ts (one parser, with bounds)', () => {
    const names = Object.keys(ENV_NUMBERS).join('|');
    expect(filesMatching(new RegExp(`\\benv(\\.|\\[['"])(${names})\\b`))).toEqual([]);
    expect(filesMatching(/\bNumber\((process\.)?env[.[]/)).toEqual([]);
  });

  it('sizes, counts, durations and timestamps are written by text/format.ts', () => {
    const unit = String.raw`(2\s*\*\*\s*(10|20|30|40)|[KMGT]IB)\b`;
    // A size divided into a binary unit and written as text: toFixed on it, or the quotient in a template.
    const sizeText = new RegExp(String.raw`\/\s*${unit}\s*\)\s*\.toFixed\(|\$\{[^}\x60]*\/\s*${unit}[^}\x60]*\}`);
    expect(filesMatching(sizeText)).toEqual(['src/text/format.ts']);
    // Each format of a quantity is defined there, once (a step time's seconds too).
    const formatter =
      /^export function (format\w*(Bytes|Count|Clock|Duration|GiB|Tally|Rate|Cap|Seconds)\w*|timestamp|gib\w*|\w*Bytes[A-Z]?\w*(?<!Needs?)|compact\w*)\(\w+: number[^)]*\): string/m;
    expect(filesMatching(formatter).filter((f) => f !== 'src/text/format.ts')).toEqual([]);
  });

  it("a run's directory and its step logs are named by records/record.ts (runDirName, stepLogName)", () => {
    expect(filesMatching(/\$\{timestamp\([^)]*\)\}-/)).toEqual(['src/records/record.ts']);
    expect(filesMatching(/\}\.log\x60/)).toEqual(['src/records/record.ts']);
  });

  it('a file written is said in the words of fs/write.ts formatWrite, wherever it was written', () => {
    expect(filesMatching(/[\x60'"](wrote|updated|unchanged) \$\{|previous content kept/)).toEqual(['src/fs/write.ts']);
  });

  it("both key tables (the wizard's, the pane's) run on one machinery: text/keytable.ts", () => {
    // One key-press type, one lookup of a binding on a stack, one generated table.
    expect(filesMatching(/^export (interface|type) KeyPress\b/m)).toEqual(['src/text/keytable.ts']);
    expect(filesMatching(/\]\.find\(\(\w+\) => \w+\.match\(/)).toEqual(['src/text/keytable.ts']);
    expect(filesMatching(/\| where \| key \| what it does \|/)).toEqual(['src/text/keytable.ts']);
  });

  it('what a launch ran is read from its type (config/source.ts), never sniffed from its text', () => {
    expect(filesMatching(/startsWith\(['"]--last|=== ['"]wizard['"]|\?\? ['"]wizard['"]/)).toEqual([
      'src/config/source.ts',
    ]);
  });

  it("a kind's block of run.json is read by that kind's own modules only (the edges ask commands/run-kinds.ts)", () => {
    const own = (f: string) =>
      f.startsWith('src/slurm/') || f === 'src/commands/launch-slurm-run.ts' || f === 'src/commands/slurm-kind.ts';
    // The measured runs leave Slurm jobs out (their GPUs were not this machine's): the one generic reader left.
    expect(filesMatching(/\bjson\??\.slurm\b/).filter((f) => !own(f))).toEqual(['src/records/measured-runs.ts']);
  });
});
