/**
 * Two small promises of the run records: a run can be named by its directory from anywhere (`zerowiz stop
 * /abs/path/.zerowiz/runs/ID`, or relative, as the README says), and the 64 KiB space reserve kept beside a
 * running record is private (0600) and gone once the run has ended, a Slurm job's and a record settled after
 * its supervisor died included.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox } from '../helpers/cli.js';
import { BIN } from '../helpers/pty.js';
import { writeRunRecord } from '../helpers/run-record.js';

function zerowiz(args: string[], cwd: string, env: Record<string, string>) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('a run named by its directory, from another folder', () => {
  const box = sandbox();
  const id = '20260101-000000-run';
  const dir = writeRunRecord(box.cwd, {
    id,
    name: 'run',
    steps: [{ name: 'train', args: ['train.py'], usesConfig: true }],
  });
  writeFileSync(join(dir, '01-train.log'), 'hello\n');
  const elsewhere = join(box.home, 'elsewhere');
  mkdirSync(elsewhere);

  for (const [what, ref] of [
    ['an absolute path', dir],
    ['an absolute path with a trailing slash', `${dir}/`],
    ['a relative path', relative(elsewhere, dir)],
  ] as const) {
    it(`stop and attach take ${what}`, () => {
      const stop = zerowiz(['stop', ref], elsewhere, box.env);
      expect(stop.code, stop.err).toBe(0);
      expect(stop.err).toMatch(new RegExp(`run ${id} has already ended`));
      const attach = zerowiz(['attach', ref, '--no-tui'], elsewhere, box.env);
      expect(attach.code, attach.err).toBe(0);
      expect(attach.out).toContain('hello');
    });
  }

  it('a directory that holds no run record is named as such (exit 2)', () => {
    const r = zerowiz(['stop', elsewhere], elsewhere, box.env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no run record in .*elsewhere/);
  });
});

describe('the space reserve', () => {
  it('is private while the run goes, and gone once a Slurm job has ended', () => {
    const box = sandbox();
    const bin = join(box.home, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'scontrol'),
      '#!/bin/sh\necho "JobId=12 JobName=job JobState=COMPLETED Reason=None ExitCode=0:0 NodeList=n1 TimeLimit=01:00:00"\n',
      { mode: 0o755 },
    );
    const dir = writeRunRecord(box.cwd, {
      id: '20260101-000000-job',
      name: 'job',
      steps: [{ name: 'train', args: ['train.py'], usesConfig: true }],
      extra: {
        ended: 'running',
        endedAt: null,
        exitCode: null,
        slurm: {
          jobId: '12',
          cluster: null,
          shape: { nodes: 1, gpusPerNode: 1 },
          options: { extra: [] },
          script: 'job.sbatch',
          output: 'job-%j.out',
          changes: [],
          submittedAt: '2026-01-01T00:00:00.000Z',
          state: 'RUNNING',
          phase: 'running',
          reason: null,
          nodeList: 'n1',
          checkedAt: '2026-01-01T00:00:01.000Z',
        },
      },
    });
    // What createRunRecord leaves in a Slurm record while the job goes.
    writeFileSync(join(dir, '.space-reserve'), Buffer.alloc(64 * 1024));
    writeFileSync(join(dir, 'job-12.out'), 'zerowiz-step 1 start 1767225600000\nzerowiz-step 1 exit 0 1767225660000\n');
    const r = zerowiz(['runs'], box.cwd, { ...box.env, PATH: `${bin}:${process.env.PATH}` });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/20260101-000000-job\s+succeeded/);
    expect(readdirSync(dir)).not.toContain('.space-reserve');
  });

  it('is created 0600 with a record, whatever the umask', async () => {
    const { createRunRecord } = await import('../../src/records/record.js');
    const box = sandbox();
    const old = process.umask(0o022);
    try {
      const rec = createRunRecord({
        cwd: box.cwd,
        setup: {
          name: 'r',
          answers: (await import('../../src/config/questions.js')).withDefaults({}),
          files: { accelerateConfig: 'a.yaml', dsConfig: 'd.json' },
          steps: [],
        },
        source: 'r',
        commands: [],
        accelerate: { path: '/usr/bin/accelerate', display: 'accelerate' },
      });
      const reserve = join(rec.dir, '.space-reserve');
      expect(existsSync(reserve)).toBe(true);
      expect(statSync(reserve).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(old);
    }
  });
});
