/**
 * Slurm on a shared cluster, where names and answers are not zerowiz's to trust: a launch directory whose
 * name holds `$(...)`, backticks, quotes, `#`, `%`, a backslash or a newline; `--sbatch-arg` spellings that
 * would override zerowiz's own options; sbatch answering oddly after it submitted; scontrol's JobState,
 * Reason and NodeList carrying escape sequences. The job scripts are run by a real bash with srun and
 * scontrol stand-ins; sbatch's reading of `#SBATCH` lines is helpers/sbatch-directives.ts (measured
 * against the real sbatch and slurmd in e2e/slurm-hostile.test.ts).
 */
import { execFile, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectOneLineError, runCli } from '../helpers/cli.js';
import { expandPattern, sbatchArgs, sbatchOption } from '../helpers/sbatch-directives.js';
import { ROOT } from '../helpers/pty.js';
import { loadPreset } from '../../src/setups/presets.js';
import { UsageError } from '../../src/text/errors.js';
import { hasControl } from '../../src/text/printable.js';
import { cancelJob, describeJob, parseSacct, parseScontrolJob, queryJob } from '../../src/slurm/job.js';
import { checkOptions, planSlurmLaunch, submitSlurm } from '../../src/slurm/launch.js';
import { recordJobState } from '../../src/slurm/record.js';
import { checkSbatchArg, sbatchArgWarning, sbatchScript, type ScriptSpec } from '../../src/slurm/script.js';
import { presetSource } from '../../src/config/source.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-slurm-hostile-'));
  dirs.push(d);
  return d;
}

/** srun and scontrol stand-ins (one task per node, hostnames n1 n2), as slurm.test.ts uses them. */
function standIns(dir: string): string {
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

async function specFor(cwd: string, logDir: string): Promise<ScriptSpec> {
  const setup = await loadPreset('qwen-image-lora-lowvram');
  return {
    jobName: 'zerowiz-seed',
    shape: { nodes: 2, gpusPerNode: 2 },
    options: { extra: ["--comment=it's a #1 \\ job"] },
    cwd,
    accelerate: FAKE,
    configFile: join(logDir, 'accelerate_config.yaml'),
    steps: setup.steps,
    logDir,
    jobOutput: 'job-%j.out',
    stepLogs: ['01-data_process.log', '02-train.log'],
    notes: [`Written by zerowiz for 'seed' (${cwd}).`],
  };
}

/** Names that mean something to bash, to sbatch's directive reader or to slurmd's file name patterns. */
const HOSTILE_NAMES = [
  'w $(touch PWNED) x',
  'w `touch PWNED` x',
  'w \'q\' "dq" x',
  'w #h x',
  'w %x %% %j x',
  'w ;touch PWNED; x',
];

describe('a launch directory whose name means something to bash or to sbatch', () => {
  for (const name of HOSTILE_NAMES) {
    it(`${JSON.stringify(name)}: sbatch reads the directory and the output file zerowiz meant; bash runs no part of the name`, async () => {
      const root = tmp();
      const cwd = join(root, name);
      const logDir = join(cwd, '.zerowiz', 'runs', '20261201-000000-seed');
      mkdirSync(logDir, { recursive: true });
      const text = sbatchScript(await specFor(cwd, logDir));
      const args = sbatchArgs(text);
      expect(sbatchOption(args, 'chdir')).toBe(cwd);
      expect(expandPattern(sbatchOption(args, 'output')!, '4242')).toBe(join(logDir, 'job-4242.out'));
      expect(sbatchOption(args, 'comment')).toBe("it's a #1 \\ job");
      expect(sbatchOption(args, 'nodes')).toBe('2');
      // The batch shell, where the job starts: in the directory sbatch read.
      const bin = standIns(root);
      writeFileSync(join(root, 'job.sh'), text);
      const r = spawnSync('bash', [join(root, 'job.sh')], {
        input: '',
        cwd: sbatchOption(args, 'chdir'),
        encoding: 'utf8',
        env: {
          ...process.env,
          PATH: `${bin}:${process.env.PATH}`,
          SLURM_JOB_ID: '4242',
          SLURM_NNODES: '2',
          SLURM_JOB_NODELIST: 'n[1-2]',
          SLURM_NODEID: '0',
          FAKE_ACCELERATE_LOG: join(root, 'calls.jsonl'),
          FAKE_ACCELERATE_STEP_MS: '0',
        },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(readdirSync(logDir).sort()).toEqual(['01-data_process.log', '02-train.log']);
      const calls = readFileSync(join(root, 'calls.jsonl'), 'utf8').trim().split('\n');
      expect(calls).toHaveLength(4);
      for (const c of calls) expect((JSON.parse(c) as { cwd: string }).cwd).toBe(cwd);
      const found = spawnSync('find', [root, '-name', 'PWNED'], { encoding: 'utf8' }).stdout;
      expect(found).toBe('');
      expect(existsSync(join(ROOT, 'PWNED'))).toBe(false);
    });
  }

  it('a backslash in the directory the job runs in: sbatch reads it as it is (doubled in the #SBATCH line)', async () => {
    const root = tmp();
    const cwd = join(root, 'w \\b x');
    mkdirSync(cwd);
    const text = sbatchScript(await specFor(cwd, join(root, 'logs')));
    expect(sbatchOption(sbatchArgs(text), 'chdir')).toBe(cwd);
  });

  it('a name sbatch cannot carry is refused with one line before anything is written: a newline, a control character', async () => {
    for (const name of ['n\ntouch PWNED #', 'tab\tand\x1bescape']) {
      const root = tmp();
      const cwd = join(root, name);
      mkdirSync(cwd);
      expect(() => sbatchScript(plainSpec(cwd))).toThrow(UsageError);
    }
    const root = tmp();
    const cwd = join(root, 'n\ntouch PWNED #');
    mkdirSync(cwd);
    for (const args of [
      ['launch', 'qwen-image-lora-lowvram', '--slurm', '--dry-run', '--no-csv-log', '--accelerate', FAKE],
      ['export', 'slurm', 'qwen-image-lora-lowvram', '--out', join(cwd, 'out')],
    ]) {
      const r = runCli(args, { cwd });
      expectOneLineError(r, /cannot (carry|take)|newline|control character/);
      expect(r.stderr).toContain('\\n');
      expect(existsSync(join(cwd, '.zerowiz'))).toBe(false);
      expect(existsSync(join(cwd, 'out', 'qwen-image-lora-lowvram.sbatch'))).toBe(false);
    }
  });

  it('a backslash in the job output path is refused (slurmd drops it), the rest of the name is kept', async () => {
    const root = tmp();
    const cwd = join(root, 'w \\b x');
    const out = join(root, 'out \\ dir');
    const spec = await specFor(cwd, out);
    expect(() => sbatchScript(spec)).toThrow(/backslash/);
  });
});

/** A one-step script spec for `cwd`. */
function plainSpec(cwd: string): ScriptSpec {
  return {
    jobName: 'zerowiz-seed',
    shape: { nodes: 1, gpusPerNode: 1 },
    options: { extra: [] },
    cwd,
    accelerate: FAKE,
    configFile: join(cwd, 'cfg.yaml'),
    steps: [{ name: 'train', usesConfig: true, args: ['train.py'] }],
    logDir: join(cwd, 'logs'),
    jobOutput: 'job-%j.out',
    stepLogs: ['01-train.log'],
    notes: [],
  };
}

describe('--sbatch-arg: every spelling of what zerowiz sets itself', () => {
  it('refuses short forms, glued values, bundles and getopt_long abbreviations of the options zerowiz writes', () => {
    for (const a of [
      '-D/tmp',
      '-D',
      '-o/tmp/x',
      '-e/tmp/err',
      '-Jx',
      '-vo/tmp/x',
      '-Qvo/tmp/x',
      '--out=/tmp/x',
      '--outp=/tmp/x',
      '--ou=x',
      '--chd=/tmp',
      '--ch=/tmp',
      '--job=x',
      '--job-na=x',
      '--err=x',
      '--pars',
      '--output',
      '--nodes=4',
      '-N4',
      '--ntasks-per-n=2',
      '--array=1-3',
      '-a1-3',
      '--arr=1-3',
      '--wrap=hostname',
      '--wra=hostname',
      '--test-only',
      '--wait',
      '-W',
    ])
      expect(checkSbatchArg(a), a).toMatch(/zerowiz|refused|would/);
    for (const a of [
      '--exclusive',
      '--mem=0',
      '--constraint=a100',
      '-C',
      '--export=ALL',
      '--comment=x',
      '-vv',
      '-t10',
      '--cluster=x',
      '--nice=5',
    ])
      expect(checkSbatchArg(a), a).toBeNull();
  });

  it('warns, naming the option and what it changes, for --open-mode, --export other than ALL, --gres', async () => {
    expect(sbatchArgWarning('--open-mode=append')).toMatch(/--open-mode.*job-<id>\.out|output/);
    expect(sbatchArgWarning('--export=NONE')).toMatch(/--export=NONE.*environment/);
    expect(sbatchArgWarning('--export=ALL,FOO=1')).toBeNull();
    expect(sbatchArgWarning('--gres=gpu:8')).toMatch(/--gres.*GPU/);
    expect(sbatchArgWarning('--exclusive')).toBeNull();
    const d = tmp();
    writeFileSync(join(d, 'train.py'), '');
    const setup = await loadPreset(join(ROOT, '__tests__', 'fixtures', 'launch', 'two-step.yaml'));
    const plan = planSlurmLaunch(
      setup,
      { options: { extra: ['--export=NONE'] } },
      { source: presetSource('t'), accelerate: FAKE, cwd: d, env: process.env, dryRun: true },
    );
    expect(plan.findings.map((f) => f.message).join('\n')).toMatch(/--export=NONE/);
    expect(() => checkOptions({ extra: ['--outp=/tmp/x'] })).toThrow(UsageError);
  });
});

/** A stand-in sbatch on PATH that answers with `body` (sh); every call's argv goes to calls.log. */
function withSbatch(
  body: string,
  extra: Record<string, string> = {},
  dir?: string,
): { env: NodeJS.ProcessEnv; d: string; calls: () => string[] } {
  const d = dir ?? tmp();
  writeFileSync(join(d, 'train.py'), '');
  const bin = join(d, 'bin');
  mkdirSync(bin);
  const log = join(d, 'calls.log');
  const tool = (name: string, text: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*" >> '${log}'\n${text}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  tool('sbatch', body);
  for (const [k, v] of Object.entries(extra)) tool(k, v);
  return {
    d,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ZEROWIZ_SLURM_TIMEOUT_MS: '1500' },
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
  };
}

async function submitWith(body: string, extra: Record<string, string> = {}, dir?: string) {
  const box = withSbatch(body, extra, dir);
  const setup = await loadPreset(join(ROOT, '__tests__', 'fixtures', 'launch', 'two-step.yaml'));
  const plan = planSlurmLaunch(
    setup,
    { options: { extra: [] } },
    { source: presetSource('test'), accelerate: FAKE, cwd: box.d, env: box.env },
  );
  return { box, plan, run: () => submitSlurm(plan, { env: box.env, cwd: box.d }) };
}

describe('sbatch that submitted but answered oddly: the job is never lost', () => {
  it('the job id, then a hang past the timeout: recorded as submitted, with a note', async () => {
    const { run } = await submitWith('echo 4242; exec sleep 40');
    const sub = await run();
    expect(sub.jobId).toBe('4242');
    expect(sub.record.json.slurm?.jobId).toBe('4242');
    expect(sub.sbatchNotes.join('\n')).toMatch(/did not (exit|end)/);
  });

  it('`Submitted batch job 4242` (a wrapper that ignores --parsable), also with `on cluster c1`', async () => {
    expect((await (await submitWith('echo "Submitted batch job 4242"')).run()).jobId).toBe('4242');
    const sub = await (await submitWith('echo "Submitted batch job 4243 on cluster c1"')).run();
    expect(sub.jobId).toBe('4243');
    expect(sub.record.json.slurm?.cluster).toBe('c1');
  });

  it('`4242;cluster name with spaces`: the job is recorded, the cluster that is no Slurm name is not used', async () => {
    const sub = await (await submitWith('echo "4242;cluster name with spaces"')).run();
    expect(sub.jobId).toBe('4242');
    expect(sub.record.json.slurm?.cluster).toBeNull();
    expect(sub.sbatchNotes.join('\n')).toMatch(/cluster/);
  });

  it('`4242;clusterA`: scontrol, sacct and scancel are asked about that cluster (-M clusterA)', async () => {
    const { box, run } = await submitWith('echo "4242;clusterA"', {
      scontrol: 'echo "JobId=4242 JobName=x JobState=RUNNING Reason=None NodeList=n1 ExitCode=0:0"',
      scancel: 'exit 0',
      sacct: 'exit 0',
    });
    const sub = await run();
    expect(sub.record.json.slurm?.cluster).toBe('clusterA');
    const ctx = { env: box.env, cwd: box.d };
    const found = await queryJob('4242', ctx, 'clusterA');
    expect(found.found).toBe(true);
    await cancelJob('4242', 'clusterA', ctx);
    const calls = box.calls();
    expect(calls).toContain('scontrol -M clusterA -o show job 4242');
    expect(calls).toContain('scancel -M clusterA 4242');
  });

  it('`zerowiz stop` while sbatch has not answered yet waits for its answer, then cancels that job', async () => {
    const d = tmp();
    const cancelled = join(d, 'cancelled');
    const state = (st: string, code: string) =>
      `echo "JobId=4242 JobName=x JobState=${st} Reason=None NodeList=n1 ExitCode=${code}"`;
    const { box, run } = await submitWith(
      'sleep 1; echo 4242',
      {
        scontrol: `if [ -f '${cancelled}' ]; then ${state('CANCELLED', '0:15')}; else ${state('RUNNING', '0:0')}; fi`,
        scancel: `touch '${cancelled}'`,
        sacct: 'exit 0',
      },
      d,
    );
    const submitting = run();
    const root = join(d, '.zerowiz', 'runs');
    // The record is made before sbatch is asked: stop comes in that window.
    while (!existsSync(root) || readdirSync(root).length === 0) await new Promise((r) => setTimeout(r, 20));
    const [id] = readdirSync(root);
    const stop = await new Promise<{ code: number; stderr: string }>((res) =>
      execFile(
        process.execPath,
        [join(ROOT, 'dist', 'zerowiz.js'), 'stop', id!],
        { cwd: d, env: { ...box.env, ZEROWIZ_SLURM_POLL_MS: '100' } },
        (err, _out, stderr) => res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      ),
    );
    expect((await submitting).jobId).toBe('4242');
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stderr).toMatch(/cancelling Slurm job 4242/);
    expect(box.calls()).toContain('scancel 4242');
  });

  it('sbatch that exits 0 but names no job: not "refused"; the record stays for a job that may run', async () => {
    const { box, run } = await submitWith('echo "queued"');
    const err = await run().then(
      () => null,
      (e: unknown) => e as UsageError,
    );
    expect(err).toBeInstanceOf(UsageError);
    expect(err!.message).toMatch(/may have been submitted/);
    expect(err!.message).not.toMatch(/refused/);
    expect(err!.hint).toMatch(/squeue/);
    expect(readdirSync(join(box.d, '.zerowiz', 'runs'))).toHaveLength(1);
  });

  it('sbatch that refuses: its message on one line, escaped; the record removed', async () => {
    const { box, run } = await submitWith(
      'printf "sbatch: error: Batch job submission failed:\\n \\033]0;pwned\\007 bad\\n" >&2; exit 1',
    );
    const err = await run().then(
      () => null,
      (e: unknown) => e as UsageError,
    );
    expect(err!.message).toMatch(/^sbatch refused the job: sbatch: error: Batch job submission failed: .*bad$/);
    expect(hasControl(err!.message)).toBe(false);
    expect(readdirSync(join(box.d, '.zerowiz', 'runs'))).toEqual([]);
  });
});

describe("Slurm's answers are untrusted text", () => {
  const HOSTILE =
    'JobId=12 JobName=x JobState=RUNNING\x1b]0;pwned\x07 Reason=Bad\u009d52;c;eA==\u009c NodeList=n[1-2]\x1b[2J ExitCode=0:0 TimeLimit=01:00:00\x07\n';
  it('JobState, Reason and NodeList from scontrol and sacct hold no control character, as parsed, described and recorded', () => {
    const j = parseScontrolJob(HOSTILE)!;
    for (const v of [j.state, j.reason, j.nodeList, j.timeLimit, describeJob(j)])
      expect(hasControl(String(v))).toBe(false);
    expect(j.phase).toBe('running');
    const s = parseSacct('12|FAILED\x1b]0;x\x07|1:0|n1\u009b2J|Reason\x07|01:00:00\n', '12')!;
    for (const v of [s.state, s.reason, s.nodeList, describeJob(s)]) expect(hasControl(String(v))).toBe(false);
    const rec = { dir: tmp(), json: { slurm: { state: '', reason: null, nodeList: null }, steps: [] } } as never;
    recordJobState(rec, j, true);
    expect(hasControl(readFileSync(join((rec as { dir: string }).dir, 'run.json'), 'utf8').replace(/\n/g, ''))).toBe(
      false,
    );
  });
});

describe('a record that holds raw bytes', () => {
  it('written raw before (or edited since), it is read back escaped: zerowiz runs shows no control byte', async () => {
    const d = tmp();
    const { dir } = (await (await submitWith('echo 4242', {}, d)).run()).record;
    const path = join(dir, 'run.json');
    const json = JSON.parse(readFileSync(path, 'utf8')) as { slurm: Record<string, unknown>; ended: string };
    Object.assign(json.slurm, {
      state: 'COMPLETED\x1b]0;pwned\x07',
      phase: 'done',
      reason: 'R\u009b2J',
      nodeList: 'n1\x1b[2J',
    });
    json.ended = 'succeeded';
    writeFileSync(path, JSON.stringify(json));
    const r = runCli(['runs'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/slurm job 4242 done \[COMPLETED\\X1B\]0;PWNED\\X07\]/);
    expect(hasControl(r.stdout.replace(/\n/g, ''))).toBe(false);
  });
});

describe('a Slurm run record is private', () => {
  it('its folder 0700, its files 0600 (commands.sh 0700), under umask 000', async () => {
    const { run } = await submitWith('echo 4242');
    const old = process.umask(0);
    let dir: string;
    try {
      dir = (await run()).record.dir;
    } finally {
      process.umask(old);
    }
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    // The space reserve is the record code's own (empty bytes; the 0700 folder keeps it private).
    for (const f of readdirSync(dir).filter((n) => n !== '.space-reserve'))
      expect(`${f} ${(lstatSync(join(dir, f)).mode & 0o777).toString(8)}`).toBe(
        `${f} ${f === 'commands.sh' ? '700' : '600'}`,
      );
  });
});
