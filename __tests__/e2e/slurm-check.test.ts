/**
 * The checks as the first command of a Slurm pass, on a real two-node cluster (helpers/slurm.ts): the lines
 * of src/checks/slurm-lines.ts in a job script run `zerowiz check --node-report` on both nodes into the
 * pass's log; a FAIL ends the job before the pass with the reason in the job's output (and the pass log's
 * FAIL line raises the check-failed alert); a node that cannot run zerowiz lets the pass start unchecked.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AlertEngine } from '../../src/observe/alerts.js';
import { parseNodeCheckLine } from '../../src/checks/format.js';
import { nodeCheckLines, nodeCheckPreamble } from '../../src/checks/slurm-lines.js';
import type { CheckId } from '../../src/checks/types.js';
import { BIN } from '../helpers/pty.js';
import { type SlurmCluster, slurmAvailability, startCluster } from '../helpers/slurm.js';

const availability = slurmAvailability();
if (!availability.ok) console.log(`Slurm check tests skipped: ${availability.reason}`);

/** No Python environment or GPUs on the test nodes: those checks are the tier's and checks-cli's to prove. */
const SKIP: CheckId[] = ['python', 'cuda-driver', 'gpus', 'deepspeed-ops', 'versions', 'nvme-speed', 'host-memory'];

describe.skipIf(!availability.ok)('the checks before a Slurm pass, on every node', { timeout: 90_000 }, () => {
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

  /** A job of one pass with the check lines before it; returns the job id and the folder. */
  function submit(opts: { node?: string; script?: boolean } = {}): { dir: string; job: string } {
    const dir = mkdtempSync(join(tmpdir(), 'zw-slurm-check-'));
    dirs.push(dir);
    if (opts.script !== false) writeFileSync(join(dir, 'train.py'), '# stand-in\n');
    const setup = join(dir, 'setup.yaml');
    writeFileSync(
      setup,
      'name: job\nanswers:\n  num_machines: 2\n  num_processes: 2\n  main_process_ip: n1\n  mode: "2"\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py]\n',
    );
    const script = [
      '#!/bin/bash',
      '#SBATCH --job-name=zw-check',
      '#SBATCH --nodes=2',
      '#SBATCH --ntasks-per-node=1',
      `#SBATCH --chdir=${dir}`,
      `#SBATCH --output=${dir}/job-%j.out`,
      'set -uo pipefail',
      `LOG_DIR=${dir}`,
      'zw_mark() { echo "zerowiz-step $* $(date +%s%3N)"; }',
      ...nodeCheckPreamble({ node: opts.node ?? process.execPath, bin: BIN, setupFile: setup }),
      'MAIN_PORT=29671',
      'zw_mark 1 start',
      ...nodeCheckLines({ k: 1, total: 1, name: 'train', logPath: '"$LOG_DIR"/01-train.log', skip: SKIP }),
      'echo "the pass runs" >> "$LOG_DIR"/01-train.log',
      'zw_mark 1 exit 0',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'job.sbatch'), script);
    chmodSync(join(dir, 'job.sbatch'), 0o755);
    const r = cluster.run('sbatch', ['--parsable', join(dir, 'job.sbatch')], { NO_COLOR: '1' });
    expect(r.code, r.stderr).toBe(0);
    return { dir, job: r.stdout.trim().split(';')[0]! };
  }

  const ended = (job: string) =>
    cluster.waitFor(
      () => {
        const s = /JobState=(\S+)/.exec(cluster.run('scontrol', ['-o', 'show', 'job', job]).stdout)?.[1];
        return s && ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'].includes(s) ? s : null;
      },
      80_000,
      `job ${job} to end`,
    );

  it('both nodes check into the pass log; rank 0 checks the port, rank 1 does not; the pass then runs', async () => {
    const { dir, job } = submit();
    expect(await ended(job)).toBe('COMPLETED');
    const log = readFileSync(join(dir, '01-train.log'), 'utf8').trim().split('\n');
    const lines = log.map(parseNodeCheckLine);
    const byNode = (n: string) => lines.filter((x) => x?.host === n);
    for (const n of ['n1', 'n2']) {
      expect(byNode(n).filter((x) => x!.kind === 'check')).toHaveLength(13);
      expect(byNode(n).some((x) => x!.kind === 'done')).toBe(true);
    }
    const port = (n: string) => byNode(n).find((x) => x!.kind === 'check' && x!.id === 'port');
    expect(port('n1')).toMatchObject({ status: 'pass', measured: 'port 29671 is free' });
    expect(port('n2')).toMatchObject({
      status: 'pass',
      measured: 'this is node 1: the main node (rank 0) binds the port',
    });
    expect(log[log.length - 1]).toBe('the pass runs');
  });

  it('a FAIL on the nodes ends the job before the pass, with the reason in its output and an alert from the log', async () => {
    const { dir, job } = submit({ script: false });
    expect(await ended(job)).toBe('FAILED');
    const out = readFileSync(join(dir, `job-${job}.out`), 'utf8');
    expect(out).toMatch(
      /zerowiz: pass 1\/1 train: the checks on the nodes failed \(exit 2\); the pass does not start: n[12] FAIL inputs: in /,
    );
    expect(out).toMatch(/^zerowiz-step 1 exit 2 \d+$/m);
    const log = readFileSync(join(dir, '01-train.log'), 'utf8');
    expect(log).not.toContain('the pass runs');
    // srun's own words go to the job's output: in the log they once landed inside n1's FAIL line, cutting its fix.
    expect(log).not.toMatch(/srun: error/);
    expect(out).toMatch(/srun: error: n[12]: task \d: Exited with exit code 2/);
    const fail = log.split('\n').find((l) => /^zerowiz-check n1 FAIL inputs: /.test(l))!;
    expect(fail).toContain('train: the script train.py does not exist');
    const [alert] = new AlertEngine().line(0, fail);
    expect(alert).toMatchObject({ id: 'check-failed', fatal: true });
    expect(alert!.title).toMatch(/^check inputs failed on n1 before the pass: in \//);
    expect(alert!.fix).toContain('run zerowiz in the folder the passes run from');
  });

  it('a node that cannot run zerowiz: the pass starts unchecked, and the job says so', async () => {
    const { dir, job } = submit({ node: '/nonexistent/node' });
    expect(await ended(job)).toBe('COMPLETED');
    const out = readFileSync(join(dir, `job-${job}.out`), 'utf8');
    expect(out).toContain("zerowiz: pass 1/1 train: the nodes cannot run zerowiz's checks (exit 127");
    expect(readFileSync(join(dir, '01-train.log'), 'utf8')).toContain('the pass runs');
  });
});
