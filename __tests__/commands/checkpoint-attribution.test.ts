/**
 * A checkpoint belongs to a run by time, not by folder: every run of a preset writes into one --output_path,
 * and a run owns what was written there while its steps ran. `zerowiz runs` (text and --json) and
 * `zerowiz export weights` name everything else in the folder as another run's, or as unknown.
 */
import { existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';
import { writeRunRecord } from '../helpers/run-record.js';
import { diffsynthLora, writeSafetensors } from '../helpers/safetensors.js';

const SCRIPT = 'examples/qwen_image/model_training/train.py';
const LORA = diffsynthLora(2, { to_q: [3072, 3072, 60] });
const ANSWERS = { model_name: 'qwen-image', fine_tuning: 'lora' as const, lora_rank: 2, lora_targets: 'to_q' };
const STEPS = [
  { name: 'train', usesConfig: true, args: [SCRIPT, '--output_path', './models/out', '--task', 'sft:train'] },
];
const MIN_MS = 60_000;
/** A fixed hour, in the past: the runs below happen minutes apart from it. */
const T0 = Date.parse('2026-11-30T10:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * MIN_MS);

/** A checkpoint file written at `when`. */
function checkpoint(cwd: string, name: string, when: Date): string {
  const p = join(cwd, 'models', 'out', name);
  writeSafetensors(p, LORA);
  utimesSync(p, when, when);
  return p;
}

/**
 * Two runs of one preset into one folder: `refused` (10:00, its only pass refused by the checks before it: it
 * never trained) and `trained` (started 10:00:30, after the fix, trained until 10:20, saved epoch-0 at 10:01:00,
 * inside a minute of the refused run's end), and a file nobody's run wrote (11:00, no run was training).
 */
function twoRuns() {
  const box = sandbox();
  writeRunRecord(box.cwd, {
    id: '20261130-100000-refused',
    name: 'qwen',
    answers: ANSWERS,
    steps: STEPS,
    startedAt: at(0),
    endedAt: new Date(T0 + 1_000),
    extra: { ended: 'failed', exitCode: 1 },
    stepFields: [{ status: 'failed', exitCode: null, refused: true, durationMs: 0 }],
  });
  writeRunRecord(box.cwd, {
    id: '20261130-100030-trained',
    name: 'qwen',
    answers: ANSWERS,
    steps: STEPS,
    startedAt: new Date(T0 + 30_000),
    endedAt: at(20),
  });
  const epoch0 = checkpoint(box.cwd, 'epoch-0.safetensors', at(1));
  const stray = checkpoint(box.cwd, 'epoch-9.safetensors', at(60));
  return { box, epoch0, stray };
}

interface RunJsonOut {
  id: string;
  checkpoints: { path: string; verdict: string }[];
  otherFiles: { path: string; writtenAt: string; owners: string[] }[];
}

describe('checkpoints belong to a run by the time they were written', () => {
  it("runs --json: the refused run owns nothing; the file is the other run's; a file no run wrote is unknown", () => {
    const { box, epoch0, stray } = twoRuns();
    const r = runCli(['runs', '--json'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const runs = JSON.parse(r.stdout) as RunJsonOut[];
    const refused = runs.find((x) => x.id.endsWith('refused'))!;
    const trained = runs.find((x) => x.id.endsWith('trained'))!;
    expect(refused.checkpoints).toEqual([]);
    expect(refused.otherFiles).toEqual([
      { path: epoch0, writtenAt: at(1).toISOString(), owners: ['20261130-100030-trained'] },
      { path: stray, writtenAt: at(60).toISOString(), owners: [] },
    ]);
    expect(trained.checkpoints.map((c) => [c.path, c.verdict])).toEqual([[epoch0, 'ok']]);
    expect(trained.otherFiles).toEqual([{ path: stray, writtenAt: at(60).toISOString(), owners: [] }]);
  });

  it('runs: each run lists its own checkpoints, then names the others in its folder', () => {
    const { box } = twoRuns();
    const r = runCli(['runs'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const block = (id: string) => {
      const lines = r.stdout.split('\n');
      const i = lines.findIndex((l) => l.startsWith(id));
      const end = lines.findIndex((l, j) => j > i && /^\S/.test(l));
      return lines.slice(i + 1, end < 0 ? undefined : end).join('\n');
    };
    const refused = block('20261130-100000-refused');
    expect(refused).not.toMatch(/checkpoint .* ok/);
    expect(refused).toContain(
      "  not this run's: models/out/epoch-0.safetensors (written 2026-11-30 10:01 UTC by run 20261130-100030-trained)",
    );
    expect(refused).toContain(
      "  not this run's: models/out/epoch-9.safetensors (written 2026-11-30 11:00 UTC while no run here was training: unknown)",
    );
    expect(block('20261130-100030-trained')).toContain('  checkpoint models/out/epoch-0.safetensors ok');
  });

  it("export weights of the refused run exports nothing and names whose the folder's files are", () => {
    const { box } = twoRuns();
    const r = runCli(['export', 'weights', '20261130-100000-refused', '--out', 'w'], { cwd: box.cwd, env: box.env });
    expectOneLineError(r, /run 20261130-100000-refused saved no checkpoint: its steps never trained/);
    expect(r.stderr).toContain('models/out/epoch-0.safetensors is run 20261130-100030-trained');
    expect(r.stderr).toContain('zerowiz export weights 20261130-100030-trained --out w');
    expect(existsSync(join(box.cwd, 'w'))).toBe(false);
    const ok = runCli(['export', 'weights', '20261130-100030-trained', '--out', 'w'], { cwd: box.cwd, env: box.env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/from models\/out\/epoch-0\.safetensors \(ok/);
  });

  it('a run that ended without its steps being closed (its supervisor killed) owns only what came before its log stopped', () => {
    const box = sandbox();
    const dir = writeRunRecord(box.cwd, {
      id: '20261130-100000-killed',
      name: 'qwen',
      answers: ANSWERS,
      steps: STEPS,
      startedAt: at(0),
      extra: { ended: 'interrupted', endedAt: null, exitCode: null },
      stepFields: [{ status: 'running', endedAt: null, durationMs: null }],
    });
    const log = join(dir, '01-train.log');
    writeSafetensors(log, LORA);
    utimesSync(log, at(5), at(5));
    const mine = checkpoint(box.cwd, 'epoch-0.safetensors', at(4));
    const later = checkpoint(box.cwd, 'epoch-1.safetensors', at(30));
    const r = runCli(['runs', '--json'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const [run] = JSON.parse(r.stdout) as RunJsonOut[];
    expect(run!.checkpoints.map((c) => c.path)).toEqual([mine]);
    expect(run!.otherFiles.map((f) => [f.path, f.owners])).toEqual([[later, []]]);
  });
});
