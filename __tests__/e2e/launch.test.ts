import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_ACCELERATE as FAKE, TWO_STEP, paneLaunch } from '../helpers/launch.js';
import { KEYS, ROOT } from '../helpers/pty.js';
import { running, removeWorkDirs } from '../helpers/proc.js';

const SIGINT_GRACE_MS = 800;
const SIGTERM_GRACE_MS = 800;
const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

function setup() {
  const d = mkdtempSync(join(tmpdir(), 'zw-e2e-launch-'));
  dirs.push(d);
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  return d;
}

describe('the log pane in a real terminal', () => {
  it('stops on Ctrl+C (confirmed): no process of the tree is left, exit 130, terminal restored', async () => {
    const d = setup();
    const log = join(d, 'argv.jsonl');
    const s = paneLaunch(d, {
      FAKE_ACCELERATE_LOG: log,
      FAKE_ACCELERATE_STEPS: '100000',
      FAKE_ACCELERATE_STEP_MS: '2',
      FAKE_ACCELERATE_IGNORE_SIGINT: '1',
      ZEROWIZ_SIGINT_GRACE_MS: String(SIGINT_GRACE_MS),
      ZEROWIZ_SIGTERM_GRACE_MS: String(SIGTERM_GRACE_MS),
    });
    // The first redraw (0/100.0k ?it/s) carries no loss yet: wait for one that does.
    await s.waitFor((x) => /\d+% [\d.]+k?\/100\.0k .*it\/s ETA/.test(x) && /loss 0\.\d{4}/.test(x));
    const screen = s.screen();
    expect(screen).toMatch(/▶ 1\. data_process +running/);
    expect(screen).toMatch(/· 2\. train +pending/);
    expect(screen).toMatch(/loss 0\.\d{4}/);
    const inv = JSON.parse(readFileSync(log, 'utf8').trim()) as { pid: number; workerPid: number };
    expect(running(inv.pid) && running(inv.workerPid)).toBe(true);

    s.write(KEYS.ctrlC);
    await s.waitFor('Stop the run?');
    const t0 = Date.now();
    s.write(KEYS.ctrlC);
    const code = await s.exited;
    expect(code).toBe(130);
    expect(Date.now() - t0).toBeLessThan(SIGINT_GRACE_MS + SIGTERM_GRACE_MS + 2_000);
    expect(running(inv.pid)).toBe(false);
    expect(running(inv.workerPid)).toBe(false);
    // Only the first pass ever started.
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
    const raw = s.raw();
    expect(raw.lastIndexOf('\x1b[?1049l')).toBeGreaterThan(raw.lastIndexOf('\x1b[?1049h'));
    expect(raw.lastIndexOf('\x1b[?25h')).toBeGreaterThan(raw.lastIndexOf('\x1b[?25l'));
    // The pane turns autowrap off while it is up (rows are clipped at the edge); it is back on after.
    expect(raw).toContain('\x1b[?7l');
    expect(raw.lastIndexOf('\x1b[?7h')).toBeGreaterThan(raw.lastIndexOf('\x1b[?7l'));
    await s.waitFor(/zerowiz: step data_process stopped after .*\n.*full log:/);
  });

  it('scrolls, searches and closes after a failure with q', async () => {
    const d = setup();
    const s = paneLaunch(d, {
      FAKE_ACCELERATE_STEPS: '5',
      FAKE_ACCELERATE_STEP_MS: '1',
      FAKE_ACCELERATE_EXIT: '3',
      FAKE_ACCELERATE_FAIL_TASK: 'sft:train',
    });
    await s.waitFor(/\[failed: q to close\]/);
    expect(s.screen()).toMatch(/✔ 1\. data_process +done/);
    expect(s.screen()).toMatch(/✘ 2\. train +failed .* exit 3/);
    s.write('/');
    s.write('TorchBackend');
    s.write(KEYS.enter);
    await s.waitFor(/search "TorchBackend"/);
    expect(s.screen()).toContain('follow paused');
    s.write('G');
    await s.waitFor('follow on');
    s.write(KEYS.tab);
    await s.waitFor(/── data_process ·/);
    s.write('q');
    expect(await s.exited).toBe(1);
    await s.waitFor(/full log: \.zerowiz\/runs\/.*02-train\.log/);
    expect(s.raw()).toMatch(/last lines of train:[\s\S]*CUDA out of memory[\s\S]*step train failed after/);
    expect(existsSync(join(d, '.zerowiz'))).toBe(true);
  });

  it('falls back to stream mode when stdout is not a terminal', async () => {
    const d = setup();
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'dist', 'zerowiz.js'), 'launch', TWO_STEP, '--accelerate', FAKE],
      { cwd: d, encoding: 'utf8', env: { ...process.env, FAKE_ACCELERATE_STEP_MS: '0' } },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\[train\] +Steps: 100%/m);
    expect(r.stdout).not.toContain('\x1b[');
  });
});
