/** The launch fixtures (the stand-in accelerate, the two-step preset) and the log pane started over them. */
import { join } from 'node:path';
import { ROOT, spawnPty, type PtySession } from './pty.js';

/** The stand-in for `accelerate` (see its header for the FAKE_ACCELERATE_* switches). */
export const FAKE_ACCELERATE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
/** A data pass without config, then a training pass with the generated config. */
export const TWO_STEP = join(ROOT, '__tests__', 'fixtures', 'launch', 'two-step.yaml');

/** `zerowiz launch TWO_STEP` in the log pane of a 100x24 pseudo-terminal, in `cwd`. */
export function paneLaunch(cwd: string, env: Record<string, string>): PtySession {
  return spawnPty({ args: ['launch', TWO_STEP, '--accelerate', FAKE_ACCELERATE], cwd, cols: 100, rows: 24, env });
}

/**
 * A pane whose run succeeded stays open until q, so its end can be read: waits for that, presses q, and
 * resolves with the exit code.
 */
export async function closeWhenDone(s: PtySession, timeoutMs = 30_000): Promise<number> {
  await s.waitFor(/\[all steps done: q to close\]/, timeoutMs);
  s.write('q');
  return s.exited;
}
