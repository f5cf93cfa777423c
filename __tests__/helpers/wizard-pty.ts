/**
 * The wizard in a real pseudo-terminal, in a sandbox: a temp HOME/XDG/cwd and a stand-in nvidia-smi; sessions
 * and temp dirs are cleaned up after each test. Shared by the e2e wizard tests.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { KEYS, spawnPty, type PtySession } from './pty.js';

/** A temp HOME/XDG/cwd and a stand-in nvidia-smi reporting `gpus` x 80 GB. */
export function sandbox(gpus = 8) {
  const dir = mkdtempSync(join(tmpdir(), 'zw-e2e-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const lines = Array.from({ length: gpus }, (_, i) => `${i}, NVIDIA H100 80GB HBM3, 81559`).join('\\n');
  writeFileSync(join(bin, 'nvidia-smi'), `#!/bin/sh\nprintf '${lines}\\n'\n`);
  chmodSync(join(bin, 'nvidia-smi'), 0o755);
  const cwd = join(dir, 'work');
  mkdirSync(cwd);
  const env = {
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    HF_HOME: undefined,
    NO_COLOR: '1',
    PATH: `${bin}:${process.env.PATH ?? ''}`,
  };
  return { dir, cwd, env };
}

const sessions: PtySession[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

export function startWizard(
  opts: { cols?: number; rows?: number; gpus?: number; env?: Record<string, string | undefined>; args?: string[] } = {},
) {
  const box = sandbox(opts.gpus);
  dirs.push(box.dir);
  const s = spawnPty({
    cwd: box.cwd,
    env: { ...box.env, ...opts.env },
    cols: opts.cols ?? 80,
    rows: opts.rows ?? 24,
    ...(opts.args ? { args: opts.args } : {}),
  });
  sessions.push(s);
  return { s, ...box };
}

/** Resolves once the screen holds `text` and has not changed for a short while (Ink subscribes a new list's keys just after drawing it). */
export async function settled(s: PtySession, text: string | RegExp) {
  let last = await s.waitFor(text);
  for (;;) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const now = await s.waitFor(text);
    if (now === last) return now;
    last = now;
  }
}
/** How long a screen must stay the same to count as settled. */
export const SETTLE_MS = 40;

/** Waits for `text` on a settled screen, then presses `key`. */
export async function at(s: PtySession, text: string | RegExp, key: string = KEYS.enter) {
  await settled(s, text);
  s.write(key);
}

/** Walks from the start screen to the ZeRO mode question with the detected defaults and Qwen-Image. */
export async function walkToMode(s: PtySession) {
  await s.waitFor('H100'); // detection done: defaults come from it
  await at(s, 'New setup');
  await at(s, 'How many machines');
  await at(s, 'Check distributed operations');
  await at(s, 'torch dynamo');
  await at(s, 'How many parameters'); // the model catalog: Qwen-Image first
  await at(s, 'largest single layer');
  await at(s, 'Memory of one GPU');
  await at(s, 'CPU memory (RAM)');
  // The workload, from the catalog's defaults: full fine-tuning, micro-batch 1, a 1024x1024 image.
  await at(s, 'Train every parameter, or LoRA');
  await at(s, 'Micro-batch per GPU');
  await at(s, 'Largest image in pixels');
  await at(s, 'gradient checkpointing');
  await at(s, 'Which optimizer'); // AdamW
  await s.waitFor('Which ZeRO mode');
}

/** The screen once it has not changed for SETTLE_MS: a frame can reach the pty in pieces (the list's row before the panel). */
export async function still(s: PtySession) {
  let last = s.screen();
  for (;;) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const now = s.screen();
    if (now === last) return now;
    last = now;
  }
}

/**
 * Moves the mode highlight down (the list wraps) until the panel explains `label`. Each look is at a still screen:
 * judging a half-drawn frame pressed one key too many (the highlight one row past, then Enter on the wrong mode).
 */
export async function highlight(s: PtySession, label: string) {
  for (let i = 0; i < 8; i++) {
    const now = await still(s);
    if (now.includes(`▸ ${label}:`)) return;
    s.write(KEYS.down);
    await s.waitFor((x) => x !== now);
  }
  await s.waitFor(`▸ ${label}:`, 1000);
}

/** The highlighted line (the list's `❯` row). */
export const marked = (s: PtySession) => s.lines().find((l) => l.startsWith('❯ ')) ?? '';

/** Columns of the wizard's own side: where the preview's tab line starts when it is beside it, else all. */
function ownColumns(rows: readonly string[]): number {
  const tabs = rows.find((l) => l.includes(' YAML  JSON  commands')) ?? '';
  const at = tabs.indexOf(' YAML ');
  return at > 0 ? at : Number.POSITIVE_INFINITY;
}

/**
 * Presses `key` until the highlighted line matches `line` (lists wrap, so it gets there), one key per move. Each
 * key waits for its own move: when the entry it moves to is in view (the row below or above the highlight), for
 * the highlight on exactly that entry (on its row, or on the same row when the window scrolls); a screen that
 * only stopped changing can be a frame behind under load, and a key pressed on it lands one row off. When the
 * screen the key was judged on is gone (it was the screen before), any move of the highlight will do.
 */
export async function moveTo(s: PtySession, line: RegExp, key: string = KEYS.down, max = 60) {
  for (let i = 0; i < max; i++) {
    await still(s);
    const rows = s.lines();
    const at = rows.findIndex((l) => l.startsWith('❯ '));
    const now = rows[at] ?? '';
    if (line.test(now)) return;
    const w = ownColumns(rows);
    const beside = key === KEYS.down ? rows[at + 1] : key === KEYS.up ? rows[at - 1] : undefined;
    const next =
      at >= 0 && beside !== undefined && /^ {2}[^\s↑↓]/.test(beside) ? `❯ ${beside.slice(2, w)}`.trimEnd() : null;
    const left = (l: string) => l.slice(0, w).trimEnd();
    const was = `  ${left(now).slice(2)}`;
    s.write(key);
    await s.waitFor(() => {
      const m = marked(s);
      if (next !== null && left(m) === next) return true;
      // Another screen than the one the key was judged on (it was a frame behind): any move will do.
      const sameList = s.lines().some((l) => left(l) === was || l === now);
      return (next === null || !sameList) && m !== now;
    });
  }
  throw new Error(`never reached ${line}:\n${s.screen()}`);
}

/** On the finish menu with Launch highlighted: chooses it and answers the launch question yes. */
export async function launchFromFinish(s: PtySession) {
  await moveTo(s, /^❯ Launch the/);
  s.write(KEYS.enter);
  await settled(s, /Launch (the step|the \d+ steps) now\?/);
  s.write('y');
}
