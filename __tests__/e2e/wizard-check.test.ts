/**
 * The finish screen's machine checks in a real terminal, with the built bin: the entry runs the same checks as
 * `zerowiz check` (loaded when chosen) and shows their count and what to fix above the menu.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, KEYS, ROOT } from '../helpers/pty.js';
import { at, moveTo, startWizard } from '../helpers/wizard-pty.js';

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

describe('the finish screen checks this machine', () => {
  it('shows the checks of the seed preset: the count, python first among what fails, and its fix', async () => {
    const { s, cwd } = startWizard({ cols: 110, rows: 34, env: { ZEROWIZ_ACCELERATE: '/nonexistent/accelerate' } });
    await at(s, 'Start from a preset', KEYS.down);
    await at(s, /❯ Start from a preset/);
    await moveTo(s, /❯ qwen-image-lora-lowvram/);
    s.write(KEYS.enter);
    await at(s, '→ Finish');
    await s.waitFor('Write to a directory');
    await moveTo(s, /❯ Check this machine for the steps/);
    s.write(KEYS.enter);
    const f = await s.waitFor(/Checks: \d+ FAIL/, 30_000);
    const lines = f.split('\n');
    const head = lines.findIndex((l) => /Checks: \d+ FAIL/.test(l));
    expect(lines[head + 1]).toMatch(/^FAIL python +activate the Python environment/);
    expect(f).toMatch(/FAIL cuda-driver/);
    expect(cwd).toBeTruthy();
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
  });
});

describe('the finish screen checks at 80x24', () => {
  it('the first thing to fix reads whole (wrapped), the others a row each', async () => {
    const { s } = startWizard({ cols: 80, rows: 24, env: { ZEROWIZ_ACCELERATE: '/nonexistent/accelerate' } });
    await at(s, 'Start from a preset', KEYS.down);
    await at(s, /❯ Start from a preset/);
    await moveTo(s, /❯ qwen-image-lora-lowvram/);
    s.write(KEYS.enter);
    await at(s, '→ Finish');
    await s.waitFor('Write to a directory');
    await moveTo(s, /❯ Check this machine for the steps/);
    s.write(KEYS.enter);
    const f = await s.waitFor(/Checks: \d+ FAIL/, 30_000);
    const flat = f.replace(/\s+/g, ' ');
    // python's fix ends with how to make an environment: all of it is on the screen.
    expect(flat).toMatch(
      /FAIL python +activate the Python environment .*\/pip install torch accelerate deepspeed FAIL/,
    );
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
  });
});
