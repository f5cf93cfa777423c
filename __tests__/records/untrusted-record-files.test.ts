/**
 * Everything a run leaves is read back as untrusted input: a run.json, events.jsonl, live.json or Slurm output
 * that is a FIFO, a link (to /dev/zero), huge, a folder or another user's file is named and skipped at once by
 * every command that reads records (`runs`, `attach`, `stop`, `launch --last`, a preset's launch, `explain
 * --since-last`); text from a record never reaches the terminal raw; an events file's values are checked, so
 * no exit code outside the README's list comes out of one. Driven through the built bin, as a user (or a
 * neighbour who planted the files) would.
 */
import { spawnSync } from 'node:child_process';
import {
  chownSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/pty.js';
import { sandbox } from '../helpers/cli.js';
import { writeRunRecord } from '../helpers/run-record.js';

/** How long a command may take on a hostile record before the test calls it a hang (it takes ~0.3 s). */
const HANG_MS = 20_000;
/** Exit codes the README lists. */
const LISTED_CODES = [0, 1, 2, 130];

interface Ran {
  code: number | null;
  out: string;
  err: string;
  hung: boolean;
}

function zerowiz(args: string[], cwd: string, env: Record<string, string>): Ran {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: '1' },
    input: '',
    encoding: 'utf8',
    timeout: HANG_MS,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, out: r.stdout ?? '', err: r.stderr ?? '', hung: r.error !== undefined };
}

const PRESET = `name: run
answers:
  num_processes: 1
  mode: "2"
steps:
  - name: train
    uses_config: true
    args: [train.py]
`;

/** A user's folder with a preset `run` and one record whose run.json `plant` replaced. */
function withRecord(plant: (runJson: string) => void): { cwd: string; env: Record<string, string>; id: string } {
  const box = sandbox();
  writeFileSync(join(box.cwd, 'run.yaml'), PRESET);
  writeFileSync(join(box.cwd, 'train.py'), '# stand-in\n');
  const id = '20260101-000000-run';
  const dir = writeRunRecord(box.cwd, {
    id,
    name: 'run',
    steps: [{ name: 'train', args: ['train.py'], usesConfig: true }],
  });
  const path = join(dir, 'run.json');
  rmSync(path);
  plant(path);
  return { cwd: box.cwd, env: box.env, id };
}

const PLANTS: [string, (p: string) => void, RegExp][] = [
  ['a FIFO', (p) => spawnSync('mkfifo', [p]), /FIFO/],
  ['a link to /dev/zero', (p) => symlinkSync('/dev/zero', p), /symbolic link/],
  [
    'a 40 MiB file',
    (p) => {
      const fd = openSync(p, 'w');
      ftruncateSync(fd, 40 * 2 ** 20);
      closeSync(fd);
    },
    /larger than/,
  ],
  ['a folder', (p) => mkdirSync(p), /not a regular file|a directory/],
  [
    "another user's file",
    (p) => {
      writeFileSync(p, '{}');
      chownSync(p, 65534, 65534);
    },
    /belongs to user nobody/,
  ],
];

describe('a run.json that is not a file zerowiz wrote is named and skipped, never read', () => {
  for (const [what, plant, problem] of PLANTS) {
    describe(`run.json is ${what}`, () => {
      const w = withRecord(plant);

      it('zerowiz runs names it and lists the rest', () => {
        const r = zerowiz(['runs'], w.cwd, w.env);
        expect(r.hung).toBe(false);
        expect(r.code).toBe(0);
        expect(r.err).toMatch(/skipped a damaged run record: .*20260101-000000-run/);
        expect(r.err).toMatch(problem);
      });

      it('attach, stop, launch --last, a launch of the preset and explain --since-last answer at once', () => {
        for (const args of [
          ['attach', '--no-tui'],
          ['stop', w.id],
          ['launch', '--last', '--dry-run'],
          ['explain', 'run.yaml', '--since-last'],
        ]) {
          const r = zerowiz(args, w.cwd, w.env);
          expect(r.hung, args.join(' ')).toBe(false);
          expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(2);
          expect(r.err).not.toMatch(/unexpected error|\n\s+at /);
        }
        const dry = zerowiz(['launch', 'run.yaml', '--dry-run', '--accelerate', '/bin/true'], w.cwd, w.env);
        expect(dry.hung).toBe(false);
        expect(dry.code, dry.err).toBe(0);
      });
    });
  }
});

describe('the other files of a run directory are read with the same rule', () => {
  function finished(): { cwd: string; env: Record<string, string>; dir: string; id: string } {
    const box = sandbox();
    const id = '20260101-000000-run';
    const dir = writeRunRecord(box.cwd, {
      id,
      name: 'run',
      steps: [{ name: 'train', args: ['train.py'], usesConfig: true }],
    });
    writeFileSync(join(dir, '01-train.log'), 'step 1\nstep 2\n');
    return { cwd: box.cwd, env: box.env, dir, id };
  }

  for (const [what, plant] of [
    ['a link to /dev/zero', (p: string) => symlinkSync('/dev/zero', p)],
    ['a FIFO', (p: string) => spawnSync('mkfifo', [p])],
    [
      'a 6 GiB file',
      (p: string) => {
        const fd = openSync(p, 'w');
        ftruncateSync(fd, 6 * 2 ** 30);
        closeSync(fd);
      },
    ],
  ] as const) {
    it(`events.jsonl and live.json as ${what}: attach follows the finished run to its end`, () => {
      const w = finished();
      plant(join(w.dir, 'events.jsonl'));
      plant(join(w.dir, 'live.json'));
      const r = zerowiz(['attach', w.id, '--no-tui'], w.cwd, w.env);
      expect(r.hung).toBe(false);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain('step 2');
    });
  }

  it("a step log that is another user's file is not shown", () => {
    const w = finished();
    writeFileSync(join(w.dir, '01-train.log'), 'not yours to read\n');
    chownSync(join(w.dir, '01-train.log'), 65534, 65534);
    const r = zerowiz(['attach', w.id, '--no-tui'], w.cwd, w.env);
    expect(r.hung).toBe(false);
    expect(r.out).not.toContain('not yours to read');
  });

  function slurmRecord(plant: (p: string) => void): { cwd: string; env: Record<string, string> } {
    const box = sandbox();
    const bin = join(box.home, 'bin');
    mkdirSync(bin);
    // Slurm has forgotten the job: the record is settled from its output's marks.
    writeFileSync(
      join(bin, 'scontrol'),
      '#!/bin/sh\necho "slurm_load_jobs error: Invalid job id specified" >&2\nexit 1\n',
      {
        mode: 0o755,
      },
    );
    writeFileSync(join(bin, 'sacct'), '#!/bin/sh\necho "sacct: error: accounting storage is disabled" >&2\nexit 1\n', {
      mode: 0o755,
    });
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
    plant(join(dir, 'job-12.out'));
    return { cwd: box.cwd, env: { ...box.env, PATH: `${bin}:${process.env.PATH}` } };
  }

  for (const [what, plant] of [
    ['a link to /dev/zero', (p: string) => symlinkSync('/dev/zero', p)],
    ['a FIFO', (p: string) => spawnSync('mkfifo', [p])],
  ] as const) {
    it(`a Slurm job's output as ${what}: runs answers at once`, () => {
      const w = slurmRecord(plant);
      const r = zerowiz(['runs'], w.cwd, w.env);
      expect(r.hung).toBe(false);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain('20260101-000000-job');
    });
  }
});

describe('text from a record never reaches the terminal raw', () => {
  /** OSC 52: a write to the clipboard of the terminal that shows it. */
  const OSC52 = '\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07';

  it('a step name and an alert title holding OSC 52, in runs and attach', () => {
    const box = sandbox();
    const id = '20260101-000000-run';
    const dir = writeRunRecord(box.cwd, {
      id,
      name: 'run',
      steps: [{ name: `train${OSC52}`, args: ['train.py'], usesConfig: true }],
    });
    const json = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    json.steps[0].live = {
      metrics: {
        lossSource: 'tqdm',
        lastLoss: 0.5,
        minLoss: 0.4,
        lossCount: 3,
        nonFiniteLosses: 0,
        learningRate: null,
        ratePerS: null,
        skippedSteps: 0,
        lossScale: null,
        dsPeakAllocatedBytes: null,
      },
      gpu: { telemetry: 'unavailable', reason: `no nvidia-smi${OSC52}`, peaks: [] },
      alerts: [
        {
          id: 'nan-loss',
          step: 0,
          line: `loss=nan${OSC52}`,
          at: '2026-01-01T00:00:01.000Z',
          title: `loss is NaN${OSC52}`,
          fix: `restart${OSC52}`,
          fatal: false,
        },
      ],
    };
    writeFileSync(join(dir, 'run.json'), JSON.stringify(json));
    writeFileSync(join(dir, '01-train.log'), 'hello\n');
    writeFileSync(
      join(dir, 'events.jsonl'),
      `${JSON.stringify({ t: 'alert', a: { id: 'nan-loss', step: 0, line: 'x', title: `loss is NaN${OSC52}`, fix: `fix${OSC52}`, fatal: false, at: 1 } })}\n`,
    );
    for (const args of [['runs'], ['attach', id, '--no-tui']]) {
      const r = zerowiz(args, box.cwd, box.env);
      expect(r.hung).toBe(false);
      expect(r.err).not.toMatch(/damaged/);
      expect(r.out + r.err).toMatch(/loss is NaN/);
      expect(r.out + r.err, args.join(' ')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    }
  });
});

describe("events.jsonl is checked against its schema: no exit code outside the README's list", () => {
  for (const [what, end] of [
    ['a failed step out of range', { outcome: 'failed', exitCode: 1, failedStep: 99 }],
    ['an exit code of -5', { outcome: 'failed', exitCode: -5, failedStep: 0 }],
    ['an exit code of 300', { outcome: 'succeeded', exitCode: 300, failedStep: null }],
    ['an outcome zerowiz never writes', { outcome: 'exploded', exitCode: 1, failedStep: null }],
  ] as const) {
    it(`an end event with ${what}: attach exits with a listed code, without a crash`, () => {
      const box = sandbox();
      const id = '20260101-000000-run';
      const dir = writeRunRecord(box.cwd, {
        id,
        name: 'run',
        steps: [{ name: 'train', args: ['train.py'], usesConfig: true }],
      });
      writeFileSync(join(dir, '01-train.log'), 'hello\n');
      writeFileSync(join(dir, 'events.jsonl'), `${JSON.stringify({ t: 'end', o: end, at: Date.now() })}\n`);
      const r = zerowiz(['attach', id, '--no-tui'], box.cwd, box.env);
      expect(r.hung).toBe(false);
      expect(LISTED_CODES).toContain(r.code);
      expect(r.err).not.toMatch(/unexpected error|\n\s+at /);
    });
  }
});
