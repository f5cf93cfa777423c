/**
 * Reading run.json back: the record schema keeps what it does not check (a newer zerowiz's keys) and checks
 * the Slurm block like the rest, so `runs`, `attach` and `launch --last` see a Slurm run as one.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRunRecord } from '../src/launch/record.js';

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
