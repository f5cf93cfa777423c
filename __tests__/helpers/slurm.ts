/**
 * A real Slurm cluster for tests: Debian's slurmctld, two slurmd emulating two nodes on this host, and a
 * private munged, all under one temporary directory, as root, without systemd. `slurmAvailability()`
 * says whether it can run here (installing the packages when root and apt-get allow) and why not;
 * `startCluster()` brings it up (about a second) and `stop()` cancels every job and ends every daemon,
 * job step and task it started.
 *
 * The cluster: SlurmctldHost=localhost, SlurmUser=root, proctrack/linuxproc, task/none, no accounting
 * storage (sacct answers "accounting storage is disabled", as on many small clusters), a long MinJobAge
 * (scontrol still knows finished jobs), KillWait=2 s, two nodes `n1` and `n2` (NodeAddr 127.0.0.1, each
 * slurmd on its own port, one CPU and two GPUs each: `Gres=gpu:2`, each GPU's File a symlink to /dev/null
 * in the test directory, as Slurm drops file-less GPUs and wants a device; no mknod, so no CAP_MKNOD
 * needed) and the partitions `debug` (default) and
 * `short` (MaxTime 1 minute).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The Debian packages the cluster needs. */
export const SLURM_PACKAGES = ['slurmctld', 'slurmd', 'slurm-client', 'munge'] as const;
/** The programs the cluster runs (from those packages). */
const PROGRAMS = ['slurmctld', 'slurmd', 'munged', 'sbatch', 'squeue', 'scontrol', 'sinfo', 'scancel', 'srun'];
/** Node names of the emulated nodes, in order. */
export const NODE_NAMES = ['n1', 'n2'] as const;
/** GPUs each emulated node declares (GRES). */
export const GPUS_PER_NODE = 2;
/** KillWait of the test cluster: seconds between SIGTERM and SIGKILL when a job is cancelled. */
export const KILL_WAIT_S = 2;
/** How long the cluster may take to come up (nodes idle) before start fails. */
const START_TIMEOUT_MS = 30_000;
/** Every process the cluster starts carries this variable: the sweep at stop() finds them by it. */
const MARK_VAR = 'ZW_SLURM_TEST_DIR';

/** Whether the cluster can run here, and if not, why. */
export type SlurmAvailability = { ok: true } | { ok: false; reason: string };

function onPath(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', cmd], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

let slurmBinDir: string | null = null;

/**
 * The folder of the test cluster's programs: links to the daemons and the Slurm clients of the same install
 * (the clients beside slurmctld or in its install's bin/). The seal (seal.ts) keeps every `sbatch` off the
 * tests' PATH, since the first one on a login node's PATH submits to the site's cluster; the cluster's
 * clients are reached through this folder only, with its SLURM_CONF.
 */
export function slurmBin(): string {
  if (slurmBinDir) return slurmBinDir;
  slurmBinDir = mkdtempSync(join(tmpdir(), 'zw-slurm-bin-'));
  chmodSync(slurmBinDir, 0o755);
  const ctld = onPath('slurmctld');
  const installs = ctld ? [dirname(ctld), join(dirname(ctld), '..', 'bin')] : [];
  for (const p of PROGRAMS) {
    const found = [...installs.map((d) => join(d, p)), onPath(p)].find((c): c is string => c !== null && isProgram(c));
    if (found) symlinkSync(found, join(slurmBinDir, p));
  }
  return slurmBinDir;
}

function isProgram(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function missingPrograms(): string[] {
  slurmBinDir = null;
  const bin = slurmBin();
  return PROGRAMS.filter((p) => !existsSync(join(bin, p)));
}

let availability: SlurmAvailability | null = null;

/**
 * Whether a real Slurm can run here: root, the programs on PATH (installed with apt-get when missing and
 * possible; `.ci/run` installs them before the tests). Computed once per test process.
 */
export function slurmAvailability(): SlurmAvailability {
  if (availability) return availability;
  availability = check();
  return availability;
}

function check(): SlurmAvailability {
  if (process.platform !== 'linux') return { ok: false, reason: 'a real Slurm cluster needs Linux' };
  if (process.getuid?.() !== 0)
    return {
      ok: false,
      reason: 'the test cluster runs slurmctld, slurmd and munged as root; these tests are not root',
    };
  let missing = missingPrograms();
  if (missing.length > 0 && onPath('apt-get') !== null) {
    const apt = (args: string[]) =>
      spawnSync('apt-get', args, {
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    const install = ['install', '-y', '--no-install-recommends', '-o', 'DPkg::Lock::Timeout=120', ...SLURM_PACKAGES];
    let r = apt(install);
    // A fresh container has no package lists yet.
    if (r.status !== 0 && apt(['update', '-qq']).status === 0) r = apt(install);
    missing = missingPrograms();
    if (missing.length > 0) {
      const why = (r.stderr || r.error?.message || '').trim().split('\n').slice(-1)[0] ?? '';
      return {
        ok: false,
        reason: `Slurm is not installed (${missing.join(', ')} missing) and apt-get install ${SLURM_PACKAGES.join(' ')} failed${why ? `: ${why}` : ''}`,
      };
    }
  }
  if (missing.length > 0)
    return {
      ok: false,
      reason: `Slurm is not installed (${missing.join(', ')} missing) and there is no apt-get to install ${SLURM_PACKAGES.join(' ')}`,
    };
  return { ok: true };
}

/** A running test cluster. */
export interface SlurmCluster {
  /** The test directory (config, state, spool, logs, munge). */
  dir: string;
  /** Variables a process needs to use this cluster (SLURM_CONF, a PATH with its clients, the mark the sweep finds). */
  env: Record<string, string>;
  /** The partitions: the default first. */
  partitions: string[];
  /** Runs a Slurm client command against this cluster (with `env` added); returns its output. */
  run(cmd: string, args: string[], env?: Record<string, string>): { code: number; stdout: string; stderr: string };
  /** Waits until `pred` holds for the output of `squeue` (or any probe); polls, never sleeps blindly. */
  waitFor<T>(probe: () => T | null | undefined | false, timeoutMs?: number, what?: string): Promise<T>;
  /**
   * Between tests: cancels every job left (a test that failed or timed out leaves its job holding the
   * nodes, and every later job would wait behind it) and waits until no job is left and both nodes are idle.
   */
  reset(): Promise<void>;
  /** Cancels every job, ends every daemon and leftover process, removes the directory. */
  stop(): Promise<void>;
}

/** Free TCP ports (bound once on all interfaces, then released). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<import('node:net').Server>((res, rej) => {
          const s = createServer();
          s.once('error', rej);
          s.listen(0, () => res(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as import('node:net').AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

async function until<T>(probe: () => T | null | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The processes whose environment carries the mark of this cluster (daemons, job steps, tasks). */
function markedProcesses(dir: string): number[] {
  const needle = `${MARK_VAR}=${dir}\0`;
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      if (`${readFileSync(`/proc/${n}/environ`, 'latin1')}\0`.includes(needle)) out.push(Number(n));
    } catch {
      // gone, or not readable
    }
  }
  return out;
}

function writeConfig(dir: string, ports: { ctld: number; nodes: number[] }): void {
  const gres = join(dir, 'dev');
  mkdirSync(gres);
  const devices: string[] = [];
  for (let g = 0; g < GPUS_PER_NODE; g++) {
    const p = join(gres, `gpu${g}`);
    // Slurm checks that a GPU's File is a device (stat follows the link); it never opens it (task/none,
    // no cgroups). With a device, Slurm sets CUDA_VISIBLE_DEVICES for the job's steps, as on a GPU node.
    symlinkSync('/dev/null', p);
    devices.push(p);
  }
  const nodeLines = NODE_NAMES.map(
    (n, i) =>
      `NodeName=${n} NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports.nodes[i]} CPUs=1 Gres=gpu:${GPUS_PER_NODE} State=UNKNOWN`,
  );
  const conf = [
    'ClusterName=zwtest',
    'SlurmctldHost=localhost',
    'SlurmUser=root',
    'SlurmdUser=root',
    `SlurmctldPort=${ports.ctld}`,
    `SlurmdPort=${ports.nodes[0]}`,
    'AuthType=auth/munge',
    `AuthInfo=socket=${join(dir, 'munge', 'munge.sock')}`,
    'CredType=cred/munge',
    `StateSaveLocation=${join(dir, 'state')}`,
    `SlurmdSpoolDir=${join(dir, 'spool', '%n')}`,
    `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(dir, 'slurmd-%n.pid')}`,
    `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
    `SlurmdLogFile=${join(dir, 'log', 'slurmd-%n.log')}`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'JobCompType=jobcomp/none',
    'MpiDefault=none',
    'SchedulerType=sched/backfill',
    'SchedulerParameters=batch_sched_delay=0',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_CPU',
    'MinJobAge=86400',
    'ReturnToService=2',
    `KillWait=${KILL_WAIT_S}`,
    'MailProg=/bin/true',
    'GresTypes=gpu',
    ...nodeLines,
    `PartitionName=debug Nodes=${NODE_NAMES.join(',')} Default=YES MaxTime=INFINITE State=UP`,
    `PartitionName=short Nodes=${NODE_NAMES.join(',')} MaxTime=1 State=UP`,
    '',
  ].join('\n');
  writeFileSync(join(dir, 'slurm.conf'), conf);
  writeFileSync(
    join(dir, 'gres.conf'),
    `NodeName=${NODE_NAMES.join(',')} Name=gpu File=${join(gres, 'gpu')}[0-${GPUS_PER_NODE - 1}]\n`,
  );
}

/** Starts the cluster; resolves once both nodes are idle. */
export async function startCluster(): Promise<SlurmCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'zw-slurm-'));
  try {
    chmodSync(dir, 0o755);
    for (const d of ['munge', 'state', 'log', 'spool', ...NODE_NAMES.map((n) => join('spool', n))])
      mkdirSync(join(dir, d), { recursive: true });
    chmodSync(join(dir, 'munge'), 0o700);
    writeFileSync(join(dir, 'munge', 'munge.key'), randomBytes(128), { mode: 0o600 });
    const [ctld, ...nodePorts] = await freePorts(1 + NODE_NAMES.length);
    writeConfig(dir, { ctld: ctld!, nodes: nodePorts });
  } catch (e) {
    // Nothing runs yet: the directory is all there is to remove.
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    throw e;
  }

  const env: Record<string, string> = {
    SLURM_CONF: join(dir, 'slurm.conf'),
    [MARK_VAR]: dir,
    PATH: `${slurmBin()}:${process.env.PATH ?? ''}`,
  };
  const childEnv = { ...process.env, ...env };
  const daemons: ChildProcess[] = [];
  const start = (cmd: string, args: string[]) => {
    const c = spawn(cmd, args, { env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr?.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    c.on('error', () => {});
    daemons.push(c);
    return () => err;
  };
  const killAll = () => {
    for (const c of daemons) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.on('exit', killAll);

  const run = (cmd: string, args: string[], more: Record<string, string> = {}) => {
    const r = spawnSync(cmd, args, { env: { ...childEnv, ...more }, encoding: 'utf8', timeout: 20_000 });
    return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  };

  const reset = async () => {
    if (run('squeue', ['-h', '-o', '%i']).stdout.trim() !== '') run('scancel', ['--user=root']);
    await until(
      () =>
        run('squeue', ['-h', '-o', '%i']).stdout.trim() === '' &&
        run('sinfo', ['-h', '-N', '-o', '%t'])
          .stdout.trim()
          .split('\n')
          .every((t) => t === 'idle'),
      30_000 + KILL_WAIT_S * 1000,
      'no job left and both nodes idle',
    );
  };

  const stop = async () => {
    if (daemons.every((c) => c.exitCode !== null || c.signalCode !== null)) return;
    run('scancel', ['--user=root']);
    // Jobs end within KillWait; wait for them so that no job step is left to the sweep.
    await until(
      () => run('squeue', ['-h', '-o', '%i']).stdout.trim() === '',
      10_000 + KILL_WAIT_S * 1000,
      'jobs to end',
    ).catch(() => true);
    for (const c of [...daemons].reverse()) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    await until(
      () => daemons.every((c) => c.exitCode !== null || c.signalCode !== null),
      10_000,
      'the daemons to exit',
    ).catch(killAll);
    // Anything else of this cluster (a slurmstepd or task that outlived its slurmd) is killed by its mark.
    for (const pid of markedProcesses(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    process.off('exit', killAll);
    if (!process.env.ZW_SLURM_KEEP) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };

  try {
    const mungeErr = start('munged', [
      '--foreground',
      '--force',
      `--socket=${join(dir, 'munge', 'munge.sock')}`,
      `--key-file=${join(dir, 'munge', 'munge.key')}`,
      `--pid-file=${join(dir, 'munge', 'munged.pid')}`,
      `--log-file=${join(dir, 'munge', 'munged.log')}`,
      `--seed-file=${join(dir, 'munge', 'munged.seed')}`,
    ]);
    await until(() => existsSync(join(dir, 'munge', 'munge.sock')), 10_000, 'munged').catch(() => {
      throw new Error(`munged did not start: ${mungeErr()}`);
    });
    const ctldErr = start('slurmctld', ['-D', '-c']);
    // slurmd registers once at start-up: the controller must answer first.
    await until(() => run('scontrol', ['ping']).stdout.includes('is UP'), START_TIMEOUT_MS, 'slurmctld').catch(() => {
      throw new Error(`slurmctld did not start: ${ctldErr()}`);
    });
    for (const n of NODE_NAMES) start('slurmd', ['-D', '-N', n]);
    await until(
      () => {
        const r = run('sinfo', ['-h', '-N', '-o', '%N %t']);
        // One row per node and partition.
        const idle = new Set(r.stdout.split('\n').flatMap((l) => (/^(\S+) idle$/.exec(l.trim()) ?? []).slice(1)));
        return NODE_NAMES.every((n) => idle.has(n));
      },
      START_TIMEOUT_MS,
      'both nodes to be idle',
    ).catch((e: Error) => {
      const log = (() => {
        try {
          return readFileSync(join(dir, 'log', 'slurmctld.log'), 'utf8')
            .split('\n')
            .slice(-15)
            .join('\n');
        } catch {
          return '';
        }
      })();
      throw new Error(`${e.message}; slurmctld: ${ctldErr()}\n${log}`);
    });
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    dir,
    env,
    partitions: ['debug', 'short'],
    run,
    waitFor: (probe, timeoutMs = 30_000, what = 'the cluster') => until(probe, timeoutMs, what),
    reset,
    stop,
  };
}
