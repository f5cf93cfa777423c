/**
 * One output module for the plain commands (src/commands/output.ts): no command writes to stdout or stderr
 * itself; colour only on a terminal and never under NO_COLOR; a table cut to the terminal's width, whole on a
 * pipe; --quiet leaves out notes and hints, never data or warnings; a stdout that cannot be written is one
 * line and exit 2 for every command. The built bin, on a pipe and in a real pseudo-terminal.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, sandbox } from '../helpers/cli.js';
import { ROOT, spawnPty } from '../helpers/pty.js';
import { colorLevels, styleFor } from '../../src/commands/output.js';

const ESC = '\x1b';

describe('the commands print through one module', () => {
  it('no file of src/commands/ but output.ts writes to stdout or stderr', () => {
    const dir = join(ROOT, 'src', 'commands');
    const writers = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && f !== 'output.ts')
      .flatMap((f) =>
        readFileSync(join(dir, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${f}:${i + 1}`, line }))
          .filter((x) => /process\.(stdout|stderr)\.write|\bwrite(Out|Err)\b|console\.|askLine\(/.test(x.line)),
      )
      // A question the user answers (terminal.ts askLine: the csv-log offer, the topology change) is a prompt,
      // not output.
      .filter((x) => !/\baskLine\(/.test(x.line) || !/^(csv-log|topology-offer)\.ts:/.test(x.where));
    expect(writers).toEqual([]);
  });

  it('decides colour once: a terminal and no NO_COLOR (or a dumb terminal)', () => {
    const tty = { isTTY: true, columns: 100 };
    expect(styleFor({}, { stdout: tty, stderr: tty }).color).toEqual({ stdout: true, stderr: true });
    expect(styleFor({ NO_COLOR: '1' }, { stdout: tty, stderr: tty }).color).toEqual({ stdout: false, stderr: false });
    expect(styleFor({ NO_COLOR: '' }, { stdout: tty, stderr: tty }).color.stderr).toBe(true);
    expect(styleFor({ TERM: 'dumb' }, { stdout: tty, stderr: tty }).color.stderr).toBe(false);
    expect(styleFor({}, { stdout: {}, stderr: tty })).toMatchObject({ color: { stdout: false }, width: null });
    expect(colorLevels('zerowiz: warning: x\n  fix: y\n', true)).toBe(
      `zerowiz: ${ESC}[33mwarning${ESC}[39m: x\n  ${ESC}[36mfix${ESC}[39m: y\n`,
    );
  });
});

describe('as users meet it', () => {
  const warnArgs = ['generate', '--print', 'yaml', '--main-process-ip', '10.0.0.1'];

  it('colours the warning on a terminal, not under NO_COLOR, not on a pipe', async () => {
    const box = sandbox();
    const colored = spawnPty({ args: warnArgs, cwd: box.cwd, env: { ...box.env, NO_COLOR: undefined } });
    expect(await colored.exited).toBe(0);
    expect(colored.raw()).toContain(`zerowiz: ${ESC}[33mwarning${ESC}[39m: --main-process-ip does not apply`);
    const plain = spawnPty({ args: warnArgs, cwd: box.cwd, env: { ...box.env, NO_COLOR: '1' } });
    expect(await plain.exited).toBe(0);
    expect(plain.raw()).toContain('zerowiz: warning: --main-process-ip does not apply');
    expect(plain.raw()).not.toContain(`${ESC}[3`);
    const piped = runCli(warnArgs, { env: { ...box.env, NO_COLOR: undefined }, cwd: box.cwd });
    expect(piped.stderr).toContain('zerowiz: warning: --main-process-ip does not apply');
    expect(piped.stderr).not.toContain(ESC);
  });

  it('cuts the preset table to an 80-column terminal, and gives a pipe every character', async () => {
    const box = sandbox();
    const s = spawnPty({ args: ['preset', 'list'], cwd: box.cwd, env: box.env, cols: 80 });
    expect(await s.exited).toBe(0);
    const rows = s
      .raw()
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '');
    expect(rows.some((l) => l.startsWith('zero3 ') && l.endsWith('…'))).toBe(true);
    for (const l of rows) expect(l.length).toBeLessThanOrEqual(80);
    const piped = runCli(['preset', 'list'], { env: box.env, cwd: box.cwd });
    expect(piped.stdout).toContain(
      "(DiffSynth-Studio's accelerate_config_zero3.yaml). Replace train.py with your script.",
    );
  });

  it('--quiet leaves out the notes and hints, never the data or the warnings', () => {
    const box = sandbox();
    const args = ['launch', 'qwen-image-lora-lowvram', '--dry-run'];
    const loud = runCli(args, { env: box.env, cwd: box.cwd });
    const quiet = runCli(['--quiet', ...args], { env: box.env, cwd: box.cwd });
    const after = runCli([...args, '-q'], { env: box.env, cwd: box.cwd });
    expect(loud.stderr).toMatch(/^zerowiz: hint: /m);
    expect(loud.stderr).toMatch(/^zerowiz: note: /m);
    for (const r of [quiet, after]) {
      expect(r.code).toBe(loud.code);
      expect(r.stdout).toBe(loud.stdout);
      expect(r.stderr).not.toMatch(/^zerowiz: (hint|note): /m);
      expect(r.stderr).toMatch(/^zerowiz: warning: fp16\/bf16 are "auto"/m);
    }
  });

  it('a stdout that cannot be written is one line and exit 2, for every command', () => {
    const box = sandbox();
    for (const args of [['runs'], ['preset', 'list'], ['generate', '--preset', 'zero3', '--print', 'yaml']]) {
      const sh = spawnFull(args, box);
      expect(sh.code).toBe(2);
      expect(sh.stderr).toMatch(/^zerowiz: cannot write to stdout: no space left on device\n {2}hint: /);
    }
  });
});

/** `zerowiz ARGS > /dev/full`: stdout on a full device. */
function spawnFull(args: string[], box: ReturnType<typeof sandbox>) {
  const fd = openSync('/dev/full', 'w');
  try {
    const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'zerowiz.js'), ...args], {
      cwd: box.cwd,
      env: { ...process.env, ...box.env, NO_COLOR: '1' },
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
    });
    return { code: r.status, stderr: r.stderr };
  } finally {
    closeSync(fd);
  }
}

describe('a preset for fewer GPUs than this machine has', () => {
  const FAKE_BIN = join(ROOT, '__tests__', 'fixtures', 'bin-nvidia');
  it("the seed's 1 process on an 8-GPU box gets a note with the command that uses them all", () => {
    const box = sandbox();
    const env = { ...box.env, PATH: `${FAKE_BIN}:${process.env.PATH ?? ''}`, ZW_FAKE_NVIDIA_SMI: '8' };
    const r = runCli(['launch', 'qwen-image-lora-lowvram', '--dry-run'], { env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'zerowiz: note: num_processes 1 starts 1 process per machine, and this machine has 8 GPUs: 7 of them stay idle; to use them all: zerowiz preset save qwen-image-lora-lowvram-8gpu --preset qwen-image-lora-lowvram --num-processes 8',
    );
    // Eight processes on eight GPUs: nothing to say; without nvidia-smi nothing is known.
    expect(runCli(['launch', 'zero3', '--dry-run'], { env, cwd: box.cwd }).stderr).not.toMatch(/stay idle/);
    expect(
      runCli(['launch', 'qwen-image-lora-lowvram', '--dry-run'], { env: box.env, cwd: box.cwd }).stderr,
    ).not.toMatch(/stay idle/);
  });
});

describe('the warnings of a launch', () => {
  it("each says what to do from the command line (never the wizard's `here`)", () => {
    const box = sandbox();
    const r = runCli(['launch', 'qwen-image-lora-lowvram', '--dry-run', '--skip-check', 'all'], {
      cwd: box.cwd,
      env: box.env,
    });
    expect(r.code, r.stderr).toBe(0);
    const fixes = r.stderr.split('\n').filter((l) => l.startsWith('  fix: '));
    expect(fixes.length).toBeGreaterThan(0);
    for (const f of fixes) expect(f).not.toMatch(/\bhere\b/);
    expect(r.stderr).toMatch(
      /fix: answer bf16 or fp16 to the mixed precision question \(--mixed-precision bf16 in `zerowiz preset save`\)/,
    );
  });
});
