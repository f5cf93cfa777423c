/** The launch fixtures (the stand-in accelerate, the two-step preset) and the log pane started over them. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './cli.js';
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

/**
 * A fresh directory holding a stand-in training script and `p.yaml`, a preset of one step that runs it with the
 * setup's own config (ZeRO-2 offload on one process; `answers` adds answers, as YAML lines).
 */
export function oneStepCheckout(prefix = 'zw-one-', answers: string[] = []): string {
  const d = tempDir(prefix);
  mkdirSync(join(d, 'cfg'));
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  const lines = ['name: p', 'answers:', '  num_processes: 1', '  mode: 2-offload', ...answers.map((a) => `  ${a}`)];
  lines.push('files:', '  accelerate_config: cfg/a.yaml', '  ds_config: cfg/d.json');
  lines.push('steps:', '  - name: train', '    uses_config: true', '    args: [train.py]', '');
  writeFileSync(join(d, 'p.yaml'), lines.join('\n'));
  return d;
}
