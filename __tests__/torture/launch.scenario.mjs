/**
 * A two-step launch hit at a random instant, in the log pane (a real pseudo-terminal; SIGHUP there is the
 * terminal closing: the pty master is closed) or in stream mode (--no-tui), by SIGKILL, SIGINT (once or
 * twice), SIGHUP or SIGSTOP (then SIGCONT a random while later), sent to the viewer (the zerowiz the user
 * started) or to the run's supervisor (the process that owns the run). The steps are the stand-in accelerate
 * with a worker that ignores SIGINT and SIGTERM.
 * What must hold after every iteration: once the supervisor is gone no process of the run is alive (its
 * watchdog, the steps, their workers); the record is final, and says what happened (a viewer that was killed,
 * hung up or stopped changed nothing: the run succeeded; a stopped or killed supervisor: interrupted, the
 * watchdog's note after a SIGKILL); no temporary file or half file is left; the user's previous config is
 * intact or backed up.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from 'node-pty';

export const name = 'launch';

const PRESET = `name: two-step
answers:
  num_processes: 1
  mode: 3-offload
  mixed_precision: bf16
files:
  accelerate_config: cfg/accelerate_config.yaml
  ds_config: cfg/ds_config.json
steps:
  - name: data_process
    uses_config: false
    args: [train.py, --task, "sft:data_process"]
  - name: train
    uses_config: true
    args: [train.py, --task, "sft:train"]
`;
const GRACE_MS = 150;
const USER_CONFIG = '# the user own accelerate config, from before the launch\ncompute_environment: LOCAL_MACHINE\n';
/** How long a whole undisturbed run takes here (measured in setup); signals land in [0, 1.2 x that]. */
let typicalMs = 1000;
/** The config files a finished launch writes, by name. */
let expected = new Map();

function env(dir) {
  const e = {
    ...process.env,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'xdg'),
    TERM: 'xterm-256color',
    FAKE_ACCELERATE_LOG: join(dir, 'argv.jsonl'),
    FAKE_ACCELERATE_STEPS: '10',
    FAKE_ACCELERATE_STEP_MS: '15',
    FAKE_ACCELERATE_IGNORE_SIGINT: '1',
    FAKE_ACCELERATE_WORKER_IGNORE_SIGTERM: '1',
    ZEROWIZ_SIGINT_GRACE_MS: String(GRACE_MS),
    ZEROWIZ_SIGTERM_GRACE_MS: String(GRACE_MS),
    // The stand-in accelerate is no Python and there is no GPU: the checks before each pass would refuse every
    // launch (npm test sets this for the whole tier; `npm run torture` runs outside it). The checks are not what
    // this scenario tortures.
    ZEROWIZ_SKIP_CHECKS: 'all',
  };
  delete e.CI;
  delete e.CONTINUOUS_INTEGRATION;
  return e;
}

function prepare(dir) {
  writeFileSync(join(dir, 'train.py'), '# stand-in\n');
  writeFileSync(join(dir, 'two-step.yaml'), PRESET);
}

/** Starts zerowiz; resolves {code, signal} when it exited. `hit(sig)` signals it; pty mode closes the terminal for SIGHUP. */
function start(ctx, tty) {
  const args = [
    ctx.bin,
    'launch',
    join(ctx.dir, 'two-step.yaml'),
    '--accelerate',
    join(ctx.root, '__tests__', 'fixtures', 'accelerate'),
  ];
  if (tty) {
    const p = pty.spawn(process.execPath, args, { cols: 100, rows: 30, cwd: ctx.dir, env: env(ctx.dir) });
    p.onData(() => undefined); // keep the terminal read, or zerowiz blocks writing its frames
    // node-pty reports a death by signal as exitCode 0 plus the signal's number.
    const signalName = (n) => Object.keys(constants.signals).find((k) => constants.signals[k] === n) ?? String(n);
    const exited = new Promise((res) =>
      p.onExit(({ exitCode, signal }) =>
        res(signal ? { code: null, signal: signalName(signal) } : { code: exitCode, signal: null }),
      ),
    );
    return {
      pid: p.pid,
      exited,
      hit: (sig) => (sig === 'SIGHUP' ? p.destroy() : p.kill(sig)),
      // A pane whose run ended by itself stays open until q.
      close: () => {
        try {
          p.write('q');
        } catch {}
      },
    };
  }
  const c = spawn(process.execPath, [...args, '--no-tui'], { cwd: ctx.dir, env: env(ctx.dir), stdio: 'ignore' });
  const exited = new Promise((res) => c.on('exit', (code, signal) => res({ code, signal })));
  return {
    pid: c.pid,
    exited,
    hit: (sig) => {
      try {
        process.kill(c.pid, sig);
      } catch {}
    },
    close: () => undefined,
  };
}

/** The run's supervisor (started by the viewer, in its own session): its pid, or null when it is not (yet) there. */
function supervisorOf(dir) {
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (!readFileSync(`/proc/${n}/cmdline`, 'utf8').includes('__zerowiz-supervise')) continue;
      if (readlinkSync(`/proc/${n}/cwd`) === dir) return Number(n);
    } catch {}
  }
  return null;
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {}
}

/** The processes of this iteration's run: anything whose command line or environment names its folder. */
function runProcesses(dir) {
  const out = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8');
      const envText = readFileSync(`/proc/${n}/environ`, 'utf8');
      if (cmd.includes(dir) || envText.includes(`${dir}/`))
        out.push(`${n} (${cmd.replace(/\0/g, ' ').trim().slice(0, 80)})`);
    } catch {}
  }
  return out;
}

async function until(pred, ms) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function walk(dir, out = []) {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    out.push(p);
    if (statSync(p).isDirectory()) walk(p, out);
  }
  return out;
}

export async function setup(ctx) {
  // One undisturbed run: how long it takes, and the config files it writes.
  const dir = join(tmpdir(), `zw-torture-launch-setup-${process.pid}`);
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  mkdirSync(dir, { recursive: true });
  try {
    prepare(dir);
    const t0 = Date.now();
    const r = await start({ ...ctx, dir }, false).exited;
    typicalMs = Date.now() - t0;
    if (r.code !== 0) throw new Error(`an undisturbed launch exited ${r.code}`);
    expected = new Map(
      ['accelerate_config.yaml', 'ds_config.json'].map((n) => [n, readFileSync(join(dir, 'cfg', n), 'utf8')]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

export async function iteration(ctx) {
  const problems = [];
  const { dir, rng } = ctx;
  prepare(dir);
  const userConfig = rng() < 0.5;
  if (userConfig) {
    mkdirSync(join(dir, 'cfg'));
    writeFileSync(join(dir, 'cfg', 'accelerate_config.yaml'), USER_CONFIG);
  }
  const tty = rng() < 0.5;
  const kind = ['SIGKILL', 'SIGINT', 'SIGINT-twice', 'SIGHUP', 'SIGSTOP'][Math.floor(rng() * 5)];
  const target = rng() < 0.5 ? 'viewer' : 'supervisor';
  const atMs = Math.floor(rng() * typicalMs * 1.2);
  const stopMs = Math.floor(rng() * 1500);
  ctx.log(
    `${tty ? 'pane' : '--no-tui'}, ${kind} to the ${target} at ${atMs} ms${kind === 'SIGSTOP' ? ` for ${stopMs} ms` : ''}${userConfig ? ', over a user config' : ''}`,
  );

  const z = start(ctx, tty);
  let done = false;
  let exit = null;
  z.exited.then((e) => {
    done = true;
    exit = e;
  });
  await new Promise((r) => setTimeout(r, atMs));
  // The supervisor as it is at that instant (none yet: the signal goes to nobody, as a user's would miss).
  const sup = target === 'supervisor' ? supervisorOf(dir) : null;
  const hit = (sig) => {
    if (target === 'viewer') {
      if (!done) z.hit(sig);
    } else if (sup !== null) signal(sup, sig);
  };
  let hitAt = null;
  if (!done && (target === 'viewer' || sup !== null)) {
    hitAt = kind;
    if (kind === 'SIGSTOP') {
      hit('SIGSTOP');
      await new Promise((r) => setTimeout(r, stopMs));
      hit('SIGCONT');
    } else {
      hit(kind === 'SIGINT-twice' ? 'SIGINT' : kind);
      if (kind === 'SIGINT-twice') {
        await new Promise((r) => setTimeout(r, Math.floor(rng() * 2 * GRACE_MS)));
        hit('SIGINT');
      }
    }
  }
  // The run ends by itself, or by the stop; the viewer exits then (a pane whose run ended by itself once q
  // is pressed; a killed or hung-up viewer is gone already).
  const runEnded = () => {
    const [r] = recordNames(dir);
    if (!r) return done;
    try {
      return JSON.parse(readFileSync(join(dir, '.zerowiz', 'runs', r, 'run.json'), 'utf8')).ended !== 'running';
    } catch {
      return false;
    }
  };
  if (!(await until(runEnded, 20_000))) problems.push(`the run did not end within 20 s of ${kind} to the ${target}`);
  if (!(await until(() => supervisorOf(dir) === null, 10_000))) problems.push('the supervisor is still running');
  if (!done) {
    if (!(await until(() => done, 3_000))) z.close();
    if (!(await until(() => done, 10_000))) {
      problems.push(`zerowiz (the viewer) did not exit once the run had ended (${kind} to the ${target})`);
      z.hit('SIGKILL');
      await z.exited;
    }
  }
  // The run's processes (a killed zerowiz's watchdog runs the ladder: up to 2 x GRACE_MS, plus a Node start).
  if (!(await until(() => runProcesses(dir).length === 0, 10_000))) {
    const left = runProcesses(dir);
    problems.push(`processes of the run still alive: ${left.join(', ')}`);
    for (const p of left) {
      try {
        process.kill(Number.parseInt(p, 10), 'SIGKILL');
      } catch {}
    }
  }

  // No temporary file, no half file; the user's config intact or backed up. (The config folder's own write
  // transaction, whose leftovers after a SIGKILL the next writer there clears, is the generate-out
  // scenario's subject: here its two files must be whole, and the user's old one kept.)
  const files = walk(dir).map((p) => p.slice(dir.length + 1));
  for (const f of files) {
    if (!f.startsWith('cfg/') && /\.tmp|\.space-reserve|\.journal|\.lock/.test(f)) problems.push(`left behind: ${f}`);
  }
  const cfg = files.filter((f) => f.startsWith('cfg/')).map((f) => f.slice(4));
  for (const n of cfg.filter((x) => expected.has(x))) {
    const text = readFileSync(join(dir, 'cfg', n), 'utf8');
    if (text !== expected.get(n) && !(n === 'accelerate_config.yaml' && text === USER_CONFIG))
      problems.push(`cfg/${n} is neither what zerowiz writes nor the user's (a half file)`);
  }
  if (userConfig) {
    const kept = cfg.some(
      (n) => n === 'accelerate_config.yaml' && readFileSync(join(dir, 'cfg', n), 'utf8') === USER_CONFIG,
    );
    const backedUp = cfg.some(
      (n) => n.startsWith('accelerate_config.yaml.bak-') && readFileSync(join(dir, 'cfg', n), 'utf8') === USER_CONFIG,
    );
    if (!kept && !backedUp)
      problems.push("the user's previous accelerate_config.yaml is neither in place nor backed up");
  }

  // The records: each parses and ended the way the run did.
  const runsDir = join(dir, '.zerowiz', 'runs');
  const records = files.filter((f) => /^\.zerowiz\/runs\/[^/]+$/.test(f));
  if (records.length > 1) problems.push(`${records.length} records for one launch`);
  const started = readLog(dir);
  for (const r of records) {
    let j;
    try {
      j = JSON.parse(readFileSync(join(dir, r, 'run.json'), 'utf8'));
    } catch (e) {
      problems.push(`${r}/run.json does not parse: ${e.message}`);
      continue;
    }
    const expectNames = new Set([
      'run.json',
      'events.jsonl',
      'live.json',
      'commands.sh',
      'accelerate_config.yaml',
      'ds_config.json',
      '01-data_process.log',
      '02-train.log',
      // The series the supervisor keeps for the report, and the report (src/report/).
      'losses.csv',
      'progress.csv',
      'gpu.csv',
      'report.html',
    ]);
    for (const n of readdirSync(join(runsDir, r.split('/').pop())))
      if (!expectNames.has(n)) problems.push(`${r}: stray file ${n}`);
    problems.push(...checkRecord(j, exit, started, { kind: hitAt, target }).map((p) => `${r}: ${p}`));
  }
  if (exit?.code === 0 && records.length === 0) problems.push('zerowiz exited 0 without a run record');
  return { problems };
}

function recordNames(dir) {
  try {
    return readdirSync(join(dir, '.zerowiz', 'runs')).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
}

function readLog(dir) {
  try {
    return (
      readFileSync(join(dir, 'argv.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        // Launches only: the stand-in also logs events (a worker's SIGTERM, an end), which have no argv.
        .filter((x) => Array.isArray(x.argv))
    );
  } catch {
    return [];
  }
}

/**
 * What a final run.json must say, given what hit whom (`hit.kind` null: nothing landed), how the viewer exited
 * and which steps the stand-in saw start.
 */
function checkRecord(j, exit, started, hit) {
  const p = [];
  const statuses = j.steps.map((s) => s.status);
  if (j.ended === 'running') return [`still says running (steps: ${statuses.join(', ')})`];
  if (statuses.includes('running')) p.push(`ended ${j.ended} with a step still running`);
  if (j.ended === 'succeeded' && statuses.some((s) => s !== 'done'))
    p.push(`succeeded with steps ${statuses.join(', ')}`);
  if (j.ended === 'failed') p.push(`failed, though no step can fail here (steps: ${statuses.join(', ')})`);
  if (exit?.code === 0 && j.ended !== 'succeeded') p.push(`zerowiz exited 0 but the record says ${j.ended}`);
  if (exit?.code === 130 && j.ended !== 'interrupted') p.push(`zerowiz exited 130 but the record says ${j.ended}`);
  // The run belongs to no terminal: whatever was done to the viewer but a stop (SIGINT to a viewer that
  // stops runs on a signal) changed nothing; a SIGSTOP or SIGHUP to the supervisor changed nothing either.
  const harmless =
    hit.kind === null ||
    hit.kind === 'SIGSTOP' ||
    (hit.target === 'viewer' && (hit.kind === 'SIGKILL' || hit.kind === 'SIGHUP')) ||
    (hit.target === 'supervisor' && hit.kind === 'SIGHUP');
  if (harmless && j.ended !== 'succeeded')
    p.push(`${hit.kind ?? 'nothing'} to the ${hit.target} changed the run: it ended ${j.ended}`);
  // A killed supervisor's record was ended by its watchdog, which says so.
  if (
    hit.target === 'supervisor' &&
    hit.kind === 'SIGKILL' &&
    j.ended === 'interrupted' &&
    !/watchdog/.test(j.note ?? '')
  )
    p.push('a killed supervisor left the record interrupted without the watchdog note');
  // After a stopped step nothing ran; before it everything finished.
  const stopped = statuses.indexOf('stopped');
  if (stopped >= 0) {
    if (statuses.slice(0, stopped).some((s) => s !== 'done'))
      p.push(`steps before the stopped one: ${statuses.join(', ')}`);
    if (statuses.slice(stopped + 1).some((s) => s !== 'pending'))
      p.push(`steps after the stopped one: ${statuses.join(', ')}`);
    // The launcher obeys SIGINT and its worker ignores SIGINT and SIGTERM: a stop ends with SIGINT (no
    // worker yet, or no more) or SIGKILL, never SIGTERM; and a stop always names its signal.
    const step = j.steps[stopped];
    if (!['SIGINT', 'SIGKILL'].includes(step.stopSignal) && !step.warning)
      p.push(`step ${step.name} stopped, but the record says ${step.stopSignal ?? 'no signal'}`);
  }
  // The record and the stand-in agree on which steps started.
  for (const s of j.steps) {
    const ran = started.some((x) => x.argv.includes(`sft:${s.name}`));
    if (ran && s.status === 'pending') p.push(`step ${s.name} ran but the record says pending`);
  }
  return p;
}
