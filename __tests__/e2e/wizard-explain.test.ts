/**
 * The explain view in a real terminal: an imported accelerate YAML opens on the review, which lists what the
 * import changed or kept; `e` shows every value each step will use with its source (the same lines as
 * `zerowiz explain`), scrolls, and Esc returns to the review.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, KEYS, ROOT } from '../helpers/pty.js';
import { settled, startWizard } from '../helpers/wizard-pty.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

describe('the explain view', () => {
  it('e on the review of an import: every value with its source, scrolled with the keys, Esc back to the review', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-explain-'));
    writeFileSync(join(dir, 'ds.json'), JSON.stringify({ zero_optimization: { stage: 3 }, bf16: { enabled: true } }));
    const yaml = join(dir, 'acc.yaml');
    writeFileSync(
      yaml,
      `distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ${join(dir, 'ds.json')}\n`,
    );
    const { s } = startWizard({ cols: 100, rows: 30, args: ['--config', yaml] });
    await settled(s, 'Review: choose an answer');
    // The review says what the import changed: the absent accumulation became the 1 accelerate uses.
    expect(s.screen()).toMatch(/Changed or kept on import/);
    expect(s.screen()).toMatch(/gradient_accumulation_steps: \(absent\) -> 1/);
    s.write('e');
    await s.waitFor(/Explain · lines 1-\d+ of \d+/);
    await s.waitFor(/zero_optimization\.stage = 3 +\(the preset: your answers: mode 3\)/);
    expect(s.screen()).toContain('step train');
    // End shows the batch identity at the bottom; Home goes back up.
    s.write('\x1b[F');
    await s.waitFor(/batch: train_batch_size/);
    s.write('\x1b[H');
    await s.waitFor(/Explain · lines 1-/);
    s.write(KEYS.esc);
    await s.waitFor((x) => x.includes('Review: choose an answer') && !x.includes('Explain ·'));
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
  });
});
