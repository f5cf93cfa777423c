/**
 * Reading run.json back: the record schema keeps what it does not check (a newer zerowiz's keys) and checks
 * the Slurm block like the rest, so `runs`, `attach` and `launch --last` see a Slurm run as one.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordKinds } from '../../src/commands/run-kinds.js';
import { readRunRecord as readRecord } from '../../src/records/record.js';

/** Read as every command reads a record: the kinds' blocks checked too. */
const { check } = await recordKinds();
const readRunRecord = (dir: string) => readRecord(dir, check);

function recordDir(json: Record<string, unknown>): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'zw-rec-')), 'run');
  mkdirSync(dir);
  writeFileSync(join(dir, 'run.json'), JSON.stringify(json));
  return dir;
}

const base = {
  version: 1,
  id: '20261130-120000-x',
  name: 'x',
  source: 'x',
  cwd: '/tmp',
  accelerate: { path: '/usr/bin/accelerate', display: 'accelerate' },
  startedAt: '2026-11-30T12:00:00.000Z',
  endedAt: null,
  ended: 'running',
  exitCode: null,
  configFiles: [],
  steps: [],
  setup: {},
};
const slurm = {
  jobId: '12',
  cluster: null,
  shape: { nodes: 2, gpusPerNode: 8 },
  options: { partition: 'gpu', extra: [] },
  script: 'job.sbatch',
  output: 'job-%j.out',
  changes: [],
  submittedAt: '2026-11-30T12:00:00.000Z',
  state: 'RUNNING',
  phase: 'running',
  reason: null,
  nodeList: 'n[1-2]',
  checkedAt: '2026-11-30T12:00:01.000Z',
};

describe('reading a run record back', () => {
  it('keeps the Slurm block, and keys it does not know, as written', () => {
    const r = readRunRecord(recordDir({ ...base, slurm, fromANewerZerowiz: { kept: true } }));
    expect('record' in r && r.record.json.slurm).toEqual(slurm);
    expect('record' in r && (r.record.json as unknown as Record<string, unknown>).fromANewerZerowiz).toEqual({
      kept: true,
    });
  });

  it('names a damaged Slurm block instead of taking the run for a local one', () => {
    const r = readRunRecord(recordDir({ ...base, slurm: { ...slurm, shape: { nodes: 'two' } } }));
    expect('damaged' in r && r.damaged.problem).toMatch(/^slurm\.shape\.nodes: /);
  });
});

describe("run.json's estimate and live blocks", () => {
  const step = {
    name: 'train',
    argv: [],
    usesConfig: true,
    command: 'accelerate launch train.py',
    log: '01-train.log',
    status: 'done',
    exitCode: 0,
    signal: null,
    startedAt: null,
    endedAt: null,
    durationMs: null,
  };
  const live = {
    metrics: {
      lossSource: 'csv',
      lastLoss: 'nan',
      minLoss: 0.0101,
      lossCount: 4000,
      nonFiniteLosses: 1,
      learningRate: 0.0001,
      ratePerS: 0.52,
      skippedSteps: 0,
      lossScale: null,
      dsPeakAllocatedBytes: null,
    },
    gpu: {
      telemetry: 'ok',
      reason: null,
      peaks: [{ index: 3, usedBytes: 65712160768, totalBytes: 85520809984, at: '2026-11-30T12:00:01.000Z' }],
    },
    alerts: [],
  };
  const read = (json: Record<string, unknown>) => readRunRecord(recordDir(json));

  it('keeps them as written', () => {
    const r = read({
      ...base,
      estimate: { mode: '3-offload', gpuBytesPerGpu: 62277025792 },
      steps: [{ ...step, live }],
    });
    expect('record' in r && r.record.json.estimate).toEqual({ mode: '3-offload', gpuBytesPerGpu: 62277025792 });
    expect('record' in r && r.record.json.steps[0]!.live).toEqual(live);
  });

  it('names a record whose live block is damaged, instead of reading it', () => {
    const r = read({ ...base, steps: [{ ...step, live: { ...live, gpu: { ...live.gpu, telemetry: 'maybe' } } }] });
    expect('damaged' in r && r.damaged.problem).toMatch(/^steps\.0\.live\.gpu\.telemetry: /);
    const e = read({ ...base, estimate: { mode: '1', gpuBytesPerGpu: -1 }, steps: [] });
    expect('damaged' in e && e.damaged.problem).toMatch(/^estimate\.gpuBytesPerGpu: /);
  });
});

describe('the setup a record ran, read back for `launch --last`', () => {
  it('keeps every answer as it was: a GPU memory in bytes is not read again as GiB', async () => {
    const { loadPreset } = await import('../../src/setups/presets.js');
    const { createRunRecord, readRecordSetup } = await import('../../src/records/record.js');
    const setup = await loadPreset(join(__dirname, '..', 'fixtures', 'launch', 'hf-eight.yaml'));
    const cwd = mkdtempSync(join(tmpdir(), 'zw-rec-setup-'));
    const answers = { ...setup.answers, gpu_memory: 80 * 2 ** 30, cpu_memory: 2 * 2 ** 40 };
    const rec = createRunRecord({
      cwd,
      setup: { ...setup, answers },
      source: 'test',
      commands: [],
      accelerate: { path: '/usr/bin/accelerate', display: 'accelerate' },
    });
    const back = readRecordSetup({ dir: rec.dir, json: JSON.parse(JSON.stringify(rec.json)) });
    expect(back.answers).toEqual(answers);
  });
});
