/**
 * The Slurm pieces that need no cluster: the sbatch script (checked by bash and run with srun and
 * scontrol stand-ins that behave like them from outside), the shape and its fit re-check, what Slurm's
 * commands print (lines captured from Slurm 22.05.8), storage checks, how a job's end settles its steps.
 * The real cluster tests are in e2e/slurm.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/pty.js';
import { loadPreset } from '../../src/setups/presets.js';
import type { Setup } from '../../src/config/setup.js';
import {
  describeJob,
  isFinalPhase,
  parseSacct,
  parseScontrolJob,
  pendingHint,
  phaseOf,
  slurmSeconds,
  slurmTime,
  timeoutHint,
  type JobInfo,
} from '../../src/slurm/job.js';
import {
  checkSbatchArg,
  hostfileText,
  parseStepMark,
  perNodeCommands,
  sbatchScript,
  type ScriptSpec,
} from '../../src/slurm/script.js';
import { shapeOfSetup, slurmFindings, slurmSetup } from '../../src/slurm/shape.js';
import {
  nodeLocalReason,
  parseMountinfo,
  parseSinfo,
  requirePartition,
  storageOf,
  storageWarnings,
} from '../../src/slurm/preflight.js';
import { createSlurmRecord, jobEnding, recordSubmitted } from '../../src/slurm/record.js';
import { SlurmFollower } from '../../src/slurm/follow.js';
import { checkOptions, planSlurmLaunch, submitSlurm } from '../../src/slurm/launch.js';
import { UsageError } from '../../src/text/errors.js';
import { presetSource } from '../../src/config/source.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-slurm-unit-'));
  dirs.push(d);
  return d;
}

// What Slurm 22.05.8 printed on the test cluster (`scontrol -o show job`, one line each; shortened only
// where marked by the fields that are left out).
const SCONTROL_DONE =
  'JobId=1 JobName=zwtest UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=COMPLETED Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-11-30T16:45:08 EligibleTime=2026-11-30T16:45:08 AccrueTime=2026-11-30T16:45:08 StartTime=2026-11-30T16:45:09 EndTime=2026-11-30T16:45:09 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-30T16:45:09 Scheduler=Main Partition=debug AllocNode:Sid=localhost:14408 ReqNodeList=(null) ExcNodeList=(null) NodeList=n[1-2] BatchHost=n1 NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,node=2,billing=2 Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/tmp/zwslurm-y2jy/work/job.sh WorkDir=/tmp/zwslurm-y2jy/work StdErr=/tmp/zwslurm-y2jy/work/slurm-1.out StdIn=/dev/null StdOut=/tmp/zwslurm-y2jy/work/slurm-1.out Power= TresPerNode=gres:gpu:2 \n';
const SCONTROL_PENDING =
  'JobId=4 JobName=zerowiz-qwen-image-lora-lowvram UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901756 Nice=0 Account=(null) QOS=(null) JobState=PENDING Reason=BeginTime Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-11-30T16:59:20 EligibleTime=2026-11-30T17:59:20 Partition=debug AllocNode:Sid=localhost:20313 ReqNodeList=(null) ExcNodeList=(null) NodeList=(null) NumNodes=2-2 NumCPUs=2 NumTasks=2 CPUs/Task=1 TresPerNode=gres:gpu:1\n';

describe('what Slurm says about a job', () => {
  it('reads scontrol: state, phase, reason, nodes, exit code', () => {
    expect(parseScontrolJob(SCONTROL_DONE)).toEqual({
      jobId: '1',
      state: 'COMPLETED',
      phase: 'done',
      final: true,
      reason: null,
      nodeList: 'n[1-2]',
      exitCode: 0,
      signal: 0,
      timeLimit: 'UNLIMITED',
      source: 'scontrol',
    });
    expect(parseScontrolJob(SCONTROL_PENDING)).toMatchObject({
      state: 'PENDING',
      phase: 'pending',
      final: false,
      reason: 'BeginTime',
      nodeList: null,
    });
    expect(parseScontrolJob('slurm_load_jobs error: Invalid job id specified\n')).toBeNull();
    const failed = parseScontrolJob(
      SCONTROL_DONE.replace('JobState=COMPLETED', 'JobState=FAILED').replace('ExitCode=0:0', 'ExitCode=3:0'),
    );
    expect(failed).toMatchObject({ phase: 'failed', exitCode: 3 });
    expect(describeJob(failed!)).toBe('failed (exit 3)');
  });

  it('reads sacct (parsable), including "CANCELLED by UID"', () => {
    const j = parseSacct('12|CANCELLED by 0|0:15|n[1-2]|None\n', '12');
    expect(j).toMatchObject({ state: 'CANCELLED', phase: 'cancelled', final: true, signal: 15, source: 'sacct' });
    expect(parseSacct('13|COMPLETED|0:0|n1|None\n', '12')).toBeNull();
  });

  it('a job that ran into its time limit: the limit is named, and the hint asks for twice the time', () => {
    const timedOut = parseScontrolJob(
      SCONTROL_DONE.replace('JobState=COMPLETED', 'JobState=TIMEOUT')
        .replace('TimeLimit=UNLIMITED', 'TimeLimit=00:45:00')
        .replace('ExitCode=0:0', 'ExitCode=0:15'),
    )!;
    expect(timedOut).toMatchObject({ phase: 'timeout', final: true, timeLimit: '00:45:00' });
    expect(describeJob(timedOut)).toBe('timeout (time limit 00:45:00)');
    expect(timeoutHint(timedOut)).toBe(
      'it ran out of time: submit it again with more, e.g. `zerowiz launch --last --time 01:30:00` (resuming from the last checkpoint is up to the training script)',
    );
    const fromSacct = parseSacct('14|TIMEOUT|0:0|n[1-2]|TimeLimit|1-12:00:00\n', '14')!;
    expect(fromSacct).toMatchObject({ phase: 'timeout', timeLimit: '1-12:00:00' });
    expect(timeoutHint(fromSacct)).toContain('--time 3-00:00:00');
    // A limit it cannot read: no made-up figure.
    expect(timeoutHint({ ...fromSacct, timeLimit: 'UNLIMITED' })).toContain('--time HH:MM:SS');
    expect(slurmSeconds('2-03:04:05')).toBe(2 * 86400 + 3 * 3600 + 4 * 60 + 5);
    expect(slurmSeconds('UNLIMITED')).toBeNull();
    expect(slurmTime(59)).toBe('00:01:00'); // Slurm counts whole minutes
    expect(slurmTime(86400 + 61)).toBe('1-00:01:01');
  });

  it("names every phase the issue lists, Slurm's own state kept when it says more", () => {
    expect(phaseOf('OUT_OF_MEMORY')).toBe('failed');
    expect(phaseOf('NODE_FAIL')).toBe('failed');
    expect(phaseOf('TIMEOUT')).toBe('timeout');
    expect(phaseOf('COMPLETING')).toBe('completing');
    expect(phaseOf('CONFIGURING')).toBe('running');
    expect(isFinalPhase('completing')).toBe(false);
    const base: JobInfo = {
      jobId: '9',
      state: 'RUNNING',
      phase: 'running',
      final: false,
      reason: null,
      nodeList: 'n[1-2]',
      exitCode: null,
      signal: null,
      source: 'scontrol',
    };
    expect(describeJob(base)).toBe('running on n[1-2]');
    expect(describeJob({ ...base, state: 'PENDING', phase: 'pending', reason: 'Resources', nodeList: null })).toBe(
      'pending (Resources)',
    );
    expect(describeJob({ ...base, state: 'OUT_OF_MEMORY', phase: 'failed', final: true })).toBe(
      'failed [OUT_OF_MEMORY]',
    );
    expect(describeJob({ ...base, state: 'COMPLETED', phase: 'done', final: true })).toBe('done');
    expect(pendingHint('Resources')).toMatch(/waiting for nodes/);
    expect(pendingHint('PartitionTimeLimit')).toMatch(/shorter --time/);
    expect(pendingHint('ReqNodeNotAvail,_UnavailableNodes:n1')).toMatch(/down, drained or reserved/);
    expect(pendingHint('SomethingNew')).toBeNull();
  });
});

/** A script for the seed's two passes, 2 nodes x 2 GPUs, logs in `dir`. */
async function seedSpec(dir: string, over: Partial<ScriptSpec> = {}): Promise<ScriptSpec> {
  const setup = await loadPreset('qwen-image-lora-lowvram');
  return {
    jobName: 'zerowiz-seed',
    shape: { nodes: 2, gpusPerNode: 2 },
    options: { partition: 'gpu', time: '02:00:00', account: 'lab', qos: 'normal', extra: ['--exclusive'] },
    cwd: dir,
    accelerate: FAKE,
    configFile: join(dir, 'cfg.yaml'),
    steps: setup.steps,
    logDir: dir,
    jobOutput: 'job-%j.out',
    stepLogs: ['01-data_process.log', '02-train.log'],
    notes: ['a note'],
    ...over,
  };
}

/**
 * Stand-ins on PATH for running a batch script outside Slurm: `srun` starts its command once per node with
 * that node's SLURM_NODEID and SLURM_PROCID (as srun --ntasks-per-node=1 does), and waits for all of
 * them; `scontrol show hostnames` expands `n[1-2]`.
 */
function slurmStandIns(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'srun'),
    `#!/bin/bash
while [[ "$1" == -* ]]; do shift; done
pids=()
for ((i = 0; i < SLURM_NNODES; i++)); do SLURM_NODEID=$i SLURM_PROCID=$i "$@" & pids+=($!); done
rc=0
for p in "\${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
`,
  );
  writeFileSync(join(bin, 'scontrol'), '#!/bin/sh\n[ "$1 $2" = "show hostnames" ] && printf "n1\\nn2\\n"\n');
  chmodSync(join(bin, 'srun'), 0o755);
  chmodSync(join(bin, 'scontrol'), 0o755);
  return bin;
}

describe('the sbatch script', () => {
  it("is valid bash with the job's directives, in order, before any command", async () => {
    const d = tmp();
    const text = sbatchScript(await seedSpec(d));
    expect(spawnSync('bash', ['-n'], { input: text }).status).toBe(0);
    const directives = text.split('\n').filter((l) => l.startsWith('#SBATCH'));
    expect(directives).toEqual([
      '#SBATCH --job-name=zerowiz-seed',
      '#SBATCH --nodes=2',
      '#SBATCH --ntasks-per-node=1',
      '#SBATCH --gres=gpu:2',
      '#SBATCH --partition=gpu',
      '#SBATCH --time=02:00:00',
      '#SBATCH --account=lab',
      '#SBATCH --qos=normal',
      `#SBATCH --chdir=${d}`,
      `#SBATCH --output=${d}/job-%j.out`,
      '#SBATCH --exclusive',
    ]);
    const firstCommand = text.split('\n').findIndex((l) => l !== '' && !l.startsWith('#'));
    expect(firstCommand).toBeGreaterThan(text.split('\n').lastIndexOf(directives.at(-1)!));
    expect(text).toContain('export PYTHONUNBUFFERED=1');
    expect(text.match(/srun -u --ntasks-per-node=1/g)).toHaveLength(2);
    // The rank is expanded by each task, inside single quotes, never by the batch shell.
    expect(text).toContain(`bash -c 'exec "$0" launch --machine_rank "$SLURM_NODEID" "$@"'`);
    const outsideQuotes = text
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .join('\n')
      .replace(/'[^']*'/g, "''");
    expect(outsideQuotes).not.toContain('SLURM_NODEID');
  });

  it('runs each pass on every node with its own rank, the first host as main process, one free port, nodes x GPUs processes; pass 2 only after pass 1 succeeded', async () => {
    const d = tmp();
    const bin = slurmStandIns(d);
    const log = join(d, 'calls.jsonl');
    writeFileSync(join(d, 'job.sh'), sbatchScript(await seedSpec(d)));
    const run = (extra: Record<string, string>) =>
      spawnSync('bash', [join(d, 'job.sh')], {
        cwd: d,
        encoding: 'utf8',
        env: {
          ...process.env,
          PATH: `${bin}:${process.env.PATH}`,
          SLURM_JOB_ID: '4242',
          SLURM_NNODES: '2',
          SLURM_JOB_NODELIST: 'n[1-2]',
          // The batch shell itself runs on the first node.
          SLURM_NODEID: '0',
          FAKE_ACCELERATE_LOG: log,
          FAKE_ACCELERATE_STEP_MS: '0',
          ...extra,
        },
      });
    const r = run({});
    expect(r.status, r.stderr).toBe(0);
    const calls = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; env: Record<string, string> });
    expect(calls).toHaveLength(4);
    const at = (c: { argv: string[] }, f: string) => c.argv[c.argv.indexOf(f) + 1];
    for (const c of calls) {
      expect(at(c, '--machine_rank')).toBe(c.env.SLURM_NODEID);
      expect(at(c, '--num_machines')).toBe('2');
      expect(at(c, '--num_processes')).toBe('4');
      expect(at(c, '--main_process_ip')).toBe('n1');
      expect(Number(at(c, '--main_process_port'))).toBe(20_000 + (4242 % 10_000));
      expect(c.env.PYTHONUNBUFFERED).toBe('1');
    }
    expect(calls.map((c) => at(c, '--machine_rank')).sort()).toEqual(['0', '0', '1', '1']);
    // The logs per pass, and the marks zerowiz follows.
    expect(readFileSync(join(d, '02-train.log'), 'utf8')).toContain('task sft:train: finished');
    const marks = r.stdout
      .split('\n')
      .map(parseStepMark)
      .filter((m) => m !== null);
    expect(marks.map((m) => `${m.step}:${m.kind}${m.kind === 'exit' ? m.code : ''}`)).toEqual([
      '0:start',
      '0:exit0',
      '1:start',
      '1:exit0',
    ]);

    // A failing first pass: the second never starts, the job ends with that exit code.
    rmSync(log);
    const failed = run({ FAKE_ACCELERATE_EXIT: '3', FAKE_ACCELERATE_FAIL_TASK: 'sft:data_process' });
    expect(failed.status).toBe(3);
    expect(failed.stdout).toContain('pass 1/2 data_process failed (exit 3); the next pass does not start');
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('keeps arguments as written, quoted only where the shell would misread them', async () => {
    const d = join(tmp(), 'dir with space');
    mkdirSync(d);
    const text = sbatchScript(await seedSpec(d));
    expect(text).toContain(`#SBATCH '--chdir=${d}'`);
    expect(text).toContain(
      "'Qwen/Qwen-Image:text_encoder/model*.safetensors,Qwen/Qwen-Image:vae/diffusion_pytorch_model.safetensors'",
    );
    expect(text).toContain('--learning_rate 1e-4');
    expect(spawnSync('bash', ['-n'], { input: text }).status).toBe(0);
  });

  it('refuses sbatch options zerowiz sets itself, and what is not an option', () => {
    expect(checkSbatchArg('--exclusive')).toBeNull();
    expect(checkSbatchArg('--mem=0')).toBeNull();
    expect(checkSbatchArg('--output=x.log')).toMatch(/set by zerowiz/);
    expect(checkSbatchArg('-J')).toMatch(/set by zerowiz/);
    expect(checkSbatchArg('exclusive')).toMatch(/not an sbatch option/);
    expect(checkSbatchArg('--comment=a\nb')).toMatch(/span lines/);
    expect(() => checkOptions({ time: '2h', extra: [] })).toThrow(UsageError);
    for (const t of ['30', '02:00:00', '1-12:00:00', '1-12', 'infinite'])
      expect(() => checkOptions({ time: t, extra: [] })).not.toThrow();
    expect(() => checkOptions({ partition: 'gpu;rm', extra: [] })).toThrow(/not a Slurm name/);
  });

  it("per-node commands carry each node's rank; the hostfile one row per node", async () => {
    const setup = await loadPreset('qwen-image-lora-lowvram');
    const nodes = perNodeCommands({
      steps: setup.steps,
      accelerate: 'accelerate',
      configFile: '/c/cfg.yaml',
      hosts: ['gpu01', 'gpu02'],
      gpusPerNode: 8,
      port: 29500,
    });
    expect(nodes.map((n) => [n.rank, n.host])).toEqual([
      [0, 'gpu01'],
      [1, 'gpu02'],
    ]);
    expect(nodes[1]!.lines[1]).toMatch(
      /^accelerate launch --machine_rank 1 --config_file \/c\/cfg\.yaml --num_machines 2 --num_processes 16 --main_process_ip gpu01 --main_process_port 29500 examples\/qwen_image\/model_training\/train\.py /,
    );
    expect(nodes[0]!.lines[0]).not.toContain('--config_file');
    expect(hostfileText(['gpu01', 'gpu02'], 8)).toBe('gpu01 slots=8\ngpu02 slots=8\n');
  });
});

function withAnswers(s: Setup, a: Partial<Setup['answers']>): Setup {
  return { ...s, answers: { ...s.answers, ...a } };
}

describe('the Slurm shape decides the process count', () => {
  it('a one-GPU preset sent to 2 nodes x 2 GPUs: 4 processes, the per-node launcher, and zerowiz says so', async () => {
    const seed = await loadPreset('qwen-image-lora-lowvram');
    expect(shapeOfSetup(seed)).toEqual({ nodes: 1, gpusPerNode: 1 });
    const { setup, changes } = slurmSetup(seed, { nodes: 2, gpusPerNode: 2 });
    expect(setup.answers).toMatchObject({
      num_machines: 2,
      num_processes: 4,
      multinode_launcher: 'standard',
      machine_rank: 0,
    });
    expect(changes.map((c) => `${c.key} ${c.from} -> ${c.to}`)).toEqual([
      'num_machines 1 -> 2',
      'num_processes 1 -> 4',
      'multinode_launcher pdsh (the default) -> standard',
    ]);
    // The input is not changed.
    expect(seed.answers.num_processes).toBe(1);
    // The same shape as the setup's: nothing to say.
    expect(slurmSetup(seed, { nodes: 1, gpusPerNode: 1 }).changes).toEqual([]);
  });

  it('a pdsh setup with a hostfile, its own IP and port: converted to standard, each change named', async () => {
    const base = await loadPreset('zero3');
    const pdsh = withAnswers(base, {
      num_machines: 2,
      num_processes: 16,
      multinode_launcher: 'pdsh',
      hostfile: '/etc/hosts.ds',
      main_process_ip: '10.0.0.1',
      main_process_port: 29501,
      ds_config_path: '/shared/ds.json',
    });
    const { setup, changes } = slurmSetup(pdsh, { nodes: 2, gpusPerNode: 8 });
    expect(changes.map((c) => c.key)).toEqual([
      'multinode_launcher',
      'main_process_ip',
      'main_process_port',
      'ds_config_path',
    ]);
    expect(changes[0]!.why).toContain('the hostfile /etc/hosts.ds is not used');
    expect(setup.answers).toMatchObject({
      multinode_launcher: 'standard',
      main_process_ip: '',
      main_process_port: null,
      ds_config_path: '',
    });
    // The script supplies the main address and the port: those findings are not raised for the job.
    const { findings } = slurmFindings(setup);
    expect(findings.filter((f) => f.rule.startsWith('multinode'))).toEqual([]);
    expect(findings.filter((f) => f.level === 'error')).toEqual([]);
  });

  it('re-checks the fit for the shape: ZeRO-3 of a 20B model fits 8 GPUs of 80 GiB, not one', async () => {
    const base = withAnswers(await loadPreset('zero3'), {
      model_params: 20.4e9,
      largest_layer_params: 57e6,
      gpu_memory: 80 * 2 ** 30,
      cpu_memory: 2 ** 40,
    });
    expect(slurmFindings(slurmSetup(base, { nodes: 1, gpusPerNode: 8 }).setup).fit).toEqual([]);
    const one = slurmFindings(slurmSetup(base, { nodes: 1, gpusPerNode: 1 }).setup).fit;
    expect(one.map((f) => f.rule)).toEqual(['mode-does-not-fit']);
    expect(one[0]!.message).toMatch(/peaks at .* per GPU, over the .* usable of 80/);
  });
});

describe('pre-flight', () => {
  it('lists partitions from sinfo, the default marked, one entry per partition', () => {
    const parts = parseSinfo('debug*|up|infinite|2|gpu:2\nshort|up|1:00|1|gpu:2\nshort|up|1:00|1|gpu:a100:4(S:0-1)\n');
    expect(parts).toEqual([
      { name: 'debug', isDefault: true, avail: 'up', timeLimit: 'infinite', nodes: 2, gres: ['gpu:2'] },
      {
        name: 'short',
        isDefault: false,
        avail: 'up',
        timeLimit: '1:00',
        nodes: 2,
        gres: ['gpu:2', 'gpu:a100:4(S:0-1)'],
      },
    ]);
    expect(requirePartition(parts, 'short').name).toBe('short');
    expect(() => requirePartition(parts, 'gpu')).toThrow(/no partition 'gpu'/);
    try {
      requirePartition(parts, 'gpu');
    } catch (e) {
      expect((e as UsageError).hint).toContain('debug (default), short');
    }
  });

  it('knows shared from node-local storage', () => {
    const mounts = parseMountinfo(
      [
        '22 1 0:21 / / rw,relatime - ext4 /dev/vda rw',
        '40 22 0:50 / /home rw,relatime - nfs4 fs:/home rw',
        '41 22 0:51 / /lustre rw,relatime - lustre mds@o2ib:/fs rw',
        '42 22 0:52 / /scratch\\040space rw - xfs /dev/sdb rw',
      ].join('\n'),
    );
    expect(storageOf('/home/ada/run', mounts)?.fsType).toBe('nfs4');
    expect(storageOf('/scratch space/x', mounts)?.fsType).toBe('xfs');
    expect(nodeLocalReason('/home/ada/run', mounts)).toBeNull();
    expect(nodeLocalReason('/lustre/ada', mounts)).toBeNull();
    expect(nodeLocalReason('/srv/data', mounts)).toMatch(/local ext4 file system/);
    expect(nodeLocalReason('/tmp/x', mounts)).toMatch(/under \/tmp/);
  });

  it("warns when the run directory or a pass output is node-local, naming the data pass's cache", async () => {
    const seed = await loadPreset('qwen-image-lora-lowvram');
    // A run directory of its own: the checkout may itself lie under /tmp (a CI clone), which is node-local.
    const cwd = '/home/ada/DiffSynth-Studio';
    const local = parseMountinfo('1 1 0:1 / / rw - ext4 /dev/vda rw');
    const shared = parseMountinfo('1 1 0:1 / / rw - nfs4 fs:/ rw');
    const w = storageWarnings(seed, cwd, local);
    expect(w).toHaveLength(1);
    expect(w[0]).toContain('./models/train/Qwen-Image_lora-splited-cache');
    expect(storageWarnings(seed, cwd, shared)).toEqual([]);
    const cacheInTmp = {
      ...seed,
      steps: seed.steps.map((s) => ({
        ...s,
        args: s.args.map((a) => (a === './models/train/Qwen-Image_lora-splited-cache' ? '/tmp/cache' : a)),
      })),
    };
    expect(storageWarnings(cacheInTmp, cwd, shared)).toEqual([
      expect.stringMatching(/^\/tmp\/cache, written by a pass .* under \/tmp/),
    ]);
  });
});

describe("how a job's end settles its passes", () => {
  const job = (state: string): JobInfo => ({
    jobId: '1',
    state,
    phase: phaseOf(state),
    final: true,
    reason: null,
    nodeList: 'n1',
    exitCode: 0,
    signal: 0,
    source: 'scontrol',
  });
  const marks = (...m: string[]) => m.map((x) => parseStepMark(x)!);

  it('done: every pass exited 0 and Slurm says COMPLETED', () => {
    const e = jobEnding(
      2,
      marks(
        'zerowiz-step 1 start 1000',
        'zerowiz-step 1 exit 0 2000',
        'zerowiz-step 2 start 2100',
        'zerowiz-step 2 exit 0 3000',
      ),
      job('COMPLETED'),
      4000,
    );
    expect(e).toMatchObject({ outcome: 'succeeded', exitCode: 0, failedStep: null });
    expect(e.steps.map((s) => [s.status, s.startedAt, s.endedAt])).toEqual([
      ['done', 1000, 2000],
      ['done', 2100, 3000],
    ]);
  });

  it('cancelled during pass 1: it was stopped, pass 2 never started, exit 130', () => {
    const e = jobEnding(2, marks('zerowiz-step 1 start 1000'), job('CANCELLED'), 5000);
    expect(e).toMatchObject({ outcome: 'interrupted', exitCode: 130, failedStep: 0 });
    expect(e.steps.map((s) => s.status)).toEqual(['stopped', 'pending']);
  });

  it('a pass that failed, a timeout, a node failure: failed (exit 1)', () => {
    expect(jobEnding(2, marks('zerowiz-step 1 start 1', 'zerowiz-step 1 exit 7 2'), job('FAILED'), 3)).toMatchObject({
      outcome: 'failed',
      exitCode: 1,
      failedStep: 0,
    });
    const t = jobEnding(
      2,
      marks('zerowiz-step 1 start 1', 'zerowiz-step 1 exit 0 2', 'zerowiz-step 2 start 3'),
      job('TIMEOUT'),
      9,
    );
    expect(t.steps.map((s) => s.status)).toEqual(['done', 'stopped']);
    expect(t.outcome).toBe('failed');
    expect(jobEnding(1, marks('zerowiz-step 1 start 1'), job('NODE_FAIL'), 9).steps[0]!.status).toBe('failed');
  });

  it('a pass whose shell wrote its exit mark as the time limit or scancel hit it was stopped, not failed', () => {
    const t = jobEnding(2, marks('zerowiz-step 1 start 1', 'zerowiz-step 1 exit 143 5'), job('TIMEOUT'), 9);
    expect(t.steps.map((s) => [s.status, s.exitCode, s.endedAt])).toEqual([
      ['stopped', 143, 5],
      ['pending', null, null],
    ]);
    expect(t).toMatchObject({ outcome: 'failed', exitCode: 1, failedStep: 0 });
    const c = jobEnding(2, marks('zerowiz-step 1 start 1', 'zerowiz-step 1 exit 143 5'), job('CANCELLED'), 9);
    expect(c.steps.map((s) => s.status)).toEqual(['stopped', 'pending']);
    expect(c.outcome).toBe('interrupted');
    // A pass that failed by itself before the job failed stays failed.
    const f = jobEnding(2, marks('zerowiz-step 1 start 1', 'zerowiz-step 1 exit 143 5'), job('FAILED'), 9);
    expect(f.steps[0]!.status).toBe('failed');
  });

  it('the follower: a pass whose exit mark came with the time limit ends stopped, in the outcome and the record', async () => {
    const d = tmp();
    const setup = await loadPreset('qwen-image-lora-lowvram');
    const rec = createSlurmRecord({
      cwd: d,
      setup,
      slurmSetup: setup,
      source: 'test',
      accelerate: { path: FAKE, display: 'accelerate' },
      shape: { nodes: 1, gpusPerNode: 1 },
      options: { extra: [] },
      changes: [],
      commandTexts: ['a', 'b'],
    });
    recordSubmitted(rec, '7', null);
    // What the batch shell wrote before Slurm's SIGTERM reached it: pass 1 started, srun ended 143.
    writeFileSync(
      join(rec.dir, rec.json.slurm!.output.replace('%j', '7')),
      'zerowiz-step 1 start 1000\nzerowiz: pass 1/2 data_process failed (exit 143)\nzerowiz-step 1 exit 143 5000\n',
    );
    const bin = join(d, 'bin');
    mkdirSync(bin);
    const line = SCONTROL_DONE.replace('JobId=1 ', 'JobId=7 ')
      .replace('JobState=COMPLETED', 'JobState=TIMEOUT')
      .replace('Reason=None', 'Reason=TimeLimit')
      .replace('TimeLimit=UNLIMITED', 'TimeLimit=00:01:00')
      .replace('ExitCode=0:0', 'ExitCode=0:15');
    writeFileSync(join(bin, 'scontrol'), `#!/bin/sh\nprintf '%s' '${line.trim()}'\n`);
    chmodSync(join(bin, 'scontrol'), 0o755);
    const f = new SlurmFollower({
      record: rec,
      ctx: { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, cwd: d },
      stateMs: 10,
      tailMs: 10,
    });
    const o = await f.run();
    expect(f.job?.phase).toBe('timeout');
    expect(o).toMatchObject({ outcome: 'failed', exitCode: 1, failedStep: 0 });
    expect(o.results.map((r) => r && [r.status, r.exitCode])).toEqual([['stopped', 143], null]);
    const saved = JSON.parse(readFileSync(join(rec.dir, 'run.json'), 'utf8')) as { steps: { status: string }[] };
    expect(saved.steps.map((s) => s.status)).toEqual(['stopped', 'pending']);
  });

  it('reads only well-formed marks', () => {
    expect(parseStepMark('zerowiz-step 2 exit 1 1700000000000')).toEqual({
      step: 1,
      kind: 'exit',
      code: 1,
      at: 1700000000000,
    });
    expect(parseStepMark('zerowiz-step 2 start 5 1700000000000')).toBeNull();
    expect(parseStepMark('zerowiz-step 2 exit 1700000000000')).toBeNull();
    expect(parseStepMark('  zerowiz-step 1 start 1')).toBeNull();
  });
});

describe('submitting a job', () => {
  it('writes the pinned config without DeepSpeed into the record, though no pass uses the setup config', async () => {
    const d = tmp();
    writeFileSync(join(d, 'train.py'), '');
    // A stand-in sbatch: accepts the script, answers with a job id.
    const bin = join(d, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'sbatch'), '#!/bin/sh\necho 4242\n');
    chmodSync(join(bin, 'sbatch'), 0o755);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    const seed = await loadPreset(join(ROOT, '__tests__', 'fixtures', 'launch', 'two-step.yaml'));
    // Only the data pass, pinned to the setup's config without DeepSpeed.
    const setup: Setup = {
      ...seed,
      steps: [
        {
          name: 'data_process',
          usesConfig: false,
          args: ['--config_file', 'cfg/accelerate_no_deepspeed.yaml', 'train.py', '--task', 'sft:data_process'],
        },
      ],
    };
    const plan = planSlurmLaunch(
      setup,
      { options: { extra: [] } },
      { source: presetSource('test'), accelerate: FAKE, cwd: d, env },
    );
    const sub = await submitSlurm(plan, { env, cwd: d });
    expect(sub.jobId).toBe('4242');
    const pinned = join(sub.record.dir, 'accelerate_no_deepspeed.yaml');
    expect(readFileSync(pinned, 'utf8')).toMatch(/^distributed_type: 'NO'$/m);
    expect(sub.writes.map((w) => w.path)).toEqual([pinned]);
    expect(sub.record.json.configFiles).toEqual([{ path: pinned, copy: 'accelerate_no_deepspeed.yaml' }]);
    // The pass names the file that was written; the setup's own config, unused, is not written.
    expect(sub.record.json.steps[0]!.argv).toContain(pinned);
    expect(existsSync(join(sub.record.dir, 'ds_config.json'))).toBe(false);
  });
});
