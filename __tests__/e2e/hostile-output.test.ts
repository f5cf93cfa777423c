/**
 * A trainer's hostile output, as a real terminal receives it: every byte zerowiz writes is captured from
 * the pseudo-terminal's master while a step prints escape sequences meant for the terminal (an OSC 52
 * clipboard write and a title change in their ESC and C1 forms, a DCS, C1 CSI, BEL), in the log pane and
 * in stream mode, through a failure whose last lines and alert are shown again in the summary. None of
 * them may reach the terminal. The pane also honours NO_COLOR: no colour sequence at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnPty } from '../helpers/pty.js';
import { removeWorkDirs } from '../helpers/proc.js';

const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

/** What the hostile step prints: on lines of their own, inside log lines, in a tqdm redraw, on both streams. */
const PAYLOADS = [
  '\u009d52;c;Y3VybCBldmlsIHwgc2g=\u009c', // C1 OSC 52: write the clipboard
  '\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07', // ESC OSC 52
  '\x1b]0;pwned-title\x07', // window title
  '\u009d0;pwned-title\u009c',
  '\u0090+q544e\u009c', // C1 DCS (a terminfo query)
  '\x1bP+q544e\x1b\\',
  '\u009b2J\u009b31m', // C1 CSI: clear, red
  '\x07\x07',
];

function hostileTrainer(d: string): string {
  const path = join(d, 'accelerate');
  const lines = JSON.stringify(PAYLOADS);
  writeFileSync(
    path,
    `#!/usr/bin/env node
const p = ${lines};
for (const x of p) process.stdout.write(x + '\\n');
for (const x of p) process.stderr.write('log ' + x + ' line\\n');
process.stderr.write('  10%|#         | 1/10 [00:01<00:09] ' + p[0] + '\\r  20%|##        | 2/10 [00:02<00:08] ' + p[2] + '\\r');
process.stdout.write('torch.OutOfMemoryError: CUDA out of memory. ' + p[1] + ' Tried to allocate 2.00 GiB\\n');
process.exit(1);
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function setup(): { d: string; accelerate: string; preset: string } {
  const d = mkdtempSync(join(tmpdir(), 'zw-e2e-hostile-'));
  dirs.push(d);
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  const preset = join(d, 'hostile.yaml');
  writeFileSync(
    preset,
    [
      'name: hostile',
      'answers:',
      '  num_processes: 1',
      '  mode: 2',
      'steps:',
      '  - name: train',
      '    uses_config: false',
      '    args: [train.py]',
      '',
    ].join('\n'),
  );
  return { d, accelerate: hostileTrainer(d), preset };
}

/** What must never reach the terminal: C1 controls, OSC, DCS, APC/PM/SOS, BEL. */
function expectInert(raw: string): void {
  const c1 = [...raw].filter((c) => c.charCodeAt(0) >= 0x80 && c.charCodeAt(0) <= 0x9f);
  expect(c1.map((c) => `U+${c.charCodeAt(0).toString(16)}`)).toEqual([]);
  expect(raw).not.toMatch(/\x1b[\]P_^X]/);
  expect(raw).not.toContain('\x07');
}

/** SGR sequences that set a colour (foreground, background, 256/true colour). */
const COLOUR_SGR = /\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/;

describe("a trainer's hostile output never reaches the terminal", () => {
  it('log pane: nothing of it arrives raw, in the pane or the summary after it', async () => {
    const { d, accelerate, preset } = setup();
    const s = spawnPty({ args: ['launch', preset, '--accelerate', accelerate], cwd: d, cols: 100, rows: 30 });
    await s.waitFor(/q to close/);
    s.write('a');
    await s.waitFor(/CUDA out of memory/);
    s.write('a');
    s.write('q');
    expect(await s.exited).toBe(1);
    await s.waitFor(/step train failed/);
    const raw = s.raw();
    expectInert(raw);
    // The text around the sequences is still shown (only the controls go).
    expect(raw).toContain('52;c;Y3VybCBldmlsIHwgc2g=');
  }, 60_000);

  it('stream mode (--no-tui) on a terminal: the same', async () => {
    const { d, accelerate, preset } = setup();
    const s = spawnPty({
      args: ['launch', preset, '--accelerate', accelerate, '--no-tui'],
      cwd: d,
      cols: 100,
      rows: 30,
    });
    expect(await s.exited).toBe(1);
    const raw = s.raw();
    expect(raw).toMatch(/\[train\] +log 52;c;Y3VybCBldmlsIHwgc2g= line/);
    expectInert(raw);
  }, 60_000);

  it('the log pane honours NO_COLOR: no colour sequence, the highlight kept by inverse video', async () => {
    const { d, accelerate, preset } = setup();
    const s = spawnPty({
      args: ['launch', preset, '--accelerate', accelerate],
      cwd: d,
      cols: 100,
      rows: 30,
      env: { NO_COLOR: '1' },
    });
    await s.waitFor(/q to close/);
    s.write('q');
    expect(await s.exited).toBe(1);
    const raw = s.raw();
    expect(raw).not.toMatch(COLOUR_SGR);
    expect(raw).toContain('\x1b[7m');
    // Without NO_COLOR the same pane is coloured (the test can fail).
    const coloured = spawnPty({
      args: ['launch', preset, '--accelerate', accelerate],
      cwd: d,
      cols: 100,
      rows: 30,
      env: { NO_COLOR: undefined },
    });
    await coloured.waitFor(/q to close/);
    coloured.write('q');
    await coloured.exited;
    expect(coloured.raw()).toMatch(COLOUR_SGR);
  }, 60_000);
});
