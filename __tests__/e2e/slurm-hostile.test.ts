/**
 * `zerowiz launch --slurm` from a directory whose name means something to bash, to sbatch's `#SBATCH`
 * reader and to slurmd's file name patterns, against a real Slurm 22.05 (helpers/slurm.ts): the job runs
 * in that directory, writes its output into the run record, and no part of the name is ever run. This is
 * also where helpers/sbatch-directives.ts (the unit tests' model of sbatch) is checked against the real
 * sbatch: an `--sbatch-arg` quoted for it reaches Slurm as written. Skipped, with the reason printed,
 * where the cluster cannot run (not root, no Slurm and no apt-get).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT } from '../helpers/pty.js';
import { slurmAvailability, startCluster, type SlurmCluster } from '../helpers/slurm.js';
import type { RunJson } from '../../src/records/record.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const SEED = 'qwen-image-lora-lowvram';
const SCRIPT = 'examples/qwen_image/model_training/train.py';
const NAME = `w $(touch PWNED) 'q' "dq" \`touch PWNED\` %x %% %j #h ;touch PWNED;`;

const availability = slurmAvailability();
if (!availability.ok) console.warn(`Slurm tests skipped: ${availability.reason}`);

describe.skipIf(!availability.ok)('Slurm: a hostile launch directory, on a real cluster', { timeout: 90_000 }, () => {
  let cluster: SlurmCluster;
  const dirs: string[] = [];
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterEach(async () => {
    await cluster?.reset();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }, 60_000);

  function run(
    args: string[],
    cwd: string,
    env: Record<string, string>,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((res) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        { cwd, env: { ...process.env, ...env } as Record<string, string> },
        (err, stdout, stderr) => {
          res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
        },
      );
    });
  }

  it('the job runs in the directory, writes its output into the private record, and no part of the name runs', async () => {
    const root = mkdtempSync(join(tmpdir(), 'zw-slurm-hostile-'));
    dirs.push(root);
    const d = join(root, NAME);
    mkdirSync(join(d, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(d, SCRIPT), '# stand-in\n');
    const r = await run(
      [
        'launch',
        SEED,
        '--slurm',
        '--nodes',
        '2',
        '--gpus-per-node',
        '2',
        '--accelerate',
        FAKE,
        '--no-tui',
        '--no-csv-log',
        '--sbatch-arg',
        "--comment=it's a #1 \\ job",
      ],
      d,
      {
        ...cluster.env,
        FAKE_ACCELERATE_LOG: join(root, 'calls.jsonl'),
        FAKE_ACCELERATE_STEP_MS: '1',
        ZEROWIZ_SLURM_POLL_MS: '250',
        NO_COLOR: '1',
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const [id] = readdirSync(join(d, '.zerowiz', 'runs'));
    const rec = join(d, '.zerowiz', 'runs', id!);
    const json = JSON.parse(readFileSync(join(rec, 'run.json'), 'utf8')) as RunJson;
    expect(json.ended).toBe('succeeded');
    const jobId = json.slurm!.jobId!;
    // Slurm took the directory and the output file as zerowiz meant them.
    const shown = cluster.run('scontrol', ['show', 'job', jobId]).stdout;
    expect(shown).toContain(`WorkDir=${d}`);
    expect(shown).toContain("Comment=it's a #1 \\ job");
    expect(existsSync(join(rec, `job-${jobId}.out`))).toBe(true);
    expect(readdirSync(rec)).toEqual(expect.arrayContaining(['01-data_process.log', '02-train.log']));
    // Every node's launcher ran in that directory.
    const calls = readFileSync(join(root, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { cwd: string });
    expect(calls).toHaveLength(4);
    for (const c of calls) expect(c.cwd).toBe(d);
    expect(statSync(rec).mode & 0o777).toBe(0o700);
    expect(spawnSync('find', [root, cluster.dir, '-name', 'PWNED'], { encoding: 'utf8' }).stdout).toBe('');
  });
});
