/**
 * Output promises: a reader that closes early ends zerowiz quietly; nothing read from a file reaches the
 * terminal raw (control bytes are shown escaped); the yaml library's own warnings never reach stderr.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/pty.js';
import { runCli, sandbox } from '../helpers/cli.js';
import { printable } from '../../src/text/printable.js';

/** Runs `zerowiz ARGS | true` in bash: the reader is gone before zerowiz writes. */
function intoClosedPipe(args: string[], env: Record<string, string> = {}) {
  const quoted = args.map((a) => `'${a}'`).join(' ');
  const r = spawnSync('bash', ['-c', `set -o pipefail; "$NODE" "$BIN" ${quoted} | true; echo "status=$?" >&2`], {
    env: { ...process.env, ...env, NODE: process.execPath, BIN },
    encoding: 'utf8',
  });
  return r.stderr;
}

describe('a reader that closes early (EPIPE)', () => {
  const box = sandbox();
  for (const args of [
    ['preset', 'list'],
    ['--help'],
    ['generate', '--help'],
    ['preset', 'show', 'zero3'],
    ['generate', '--preset', 'qwen-image-lora-lowvram', '--print', 'yaml'],
    ['estimate', '--params', '7B', '--gpus-per-node', '8', '--gpu-memory', '80GiB'],
    ['--version'],
    ['runs'],
  ]) {
    it(`zerowiz ${args.join(' ')} | true: exits 0 with no error`, () => {
      const stderr = intoClosedPipe(args, box.env);
      expect(stderr).toMatch(/status=0\n$/);
      expect(stderr).not.toMatch(/EPIPE|Error|\n\s+at |unexpected/);
    });
  }
});

describe('text from files is sanitized before it is printed', () => {
  it('printable() escapes C0, C1 and DEL, and keeps the rest', () => {
    expect(printable('a\x1b[2Jb\x07c\x9bd\x7fé')).toBe('a\\x1b[2Jb\\x07c\\x9bd\\x7fé');
    expect(printable('line\nnext\ttab')).toBe('line\\nnext\\ttab');
  });

  it('a preset description with ESC and BEL does not reach the terminal raw', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(join(box.presets, 'evil.yaml'), 'description: "clear\\e[2J\\e[Hbell\\a"\n');
    for (const args of [
      ['preset', 'list'],
      ['preset', 'show', 'evil'],
      ['preset', 'list', '--json'],
    ]) {
      const r = runCli(args, { env: box.env });
      expect(r.code).toBe(0);
      expect(r.stdout + r.stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
    }
    expect(runCli(['preset', 'list'], { env: box.env }).stdout).toContain('clear\\x1b[2J\\x1b[Hbell\\x07');
  });

  it('a file name and a YAML error with control bytes are escaped in the one-line error', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(join(box.presets, 'bad.yaml'), 'answers:\n  mode: "\\e]0;pwned\\a"\n');
    const r = runCli(['preset', 'show', 'bad'], { env: box.env });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it("the yaml library's warnings never reach stderr raw", () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(join(box.presets, 'tagged.yaml'), 'description: !mytag hello\n');
    const yamlWithTag = join(box.cwd, 'acc.yaml');
    writeFileSync(yamlWithTag, 'distributed_type: !weird DEEPSPEED\nnum_processes: 8\n');
    for (const args of [
      ['preset', 'list'],
      ['generate', '--from', yamlWithTag, '--print', 'yaml'],
    ]) {
      const r = runCli(args, { env: box.env, cwd: box.cwd });
      expect(r.stderr).not.toMatch(/YAMLWarning|Unresolved tag|\(node:\d+\)/);
    }
  });
});

describe('answers with control characters never reach a config file', () => {
  it('a preset whose free-text answer holds ESC/BEL is reported and skipped; a flag with one is refused', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(
      join(box.presets, 'evil.yaml'),
      'name: evil\nanswers:\n  mode: 3-offload\n  offload_device: nvme\n  nvme_path: "/nvme\\e[2J\\a"\n',
    );
    const list = runCli(['preset', 'list'], { cwd: box.cwd, env: box.env });
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/skipped .*evil\.yaml: answers\.nvme_path: .*contains a control character/);
    const gen = runCli(['generate', '--preset', 'evil', '--print', 'json'], { cwd: box.cwd, env: box.env });
    expect(gen.code).toBe(2);
    expect(gen.stdout).toBe('');
    const flag = runCli(
      ['generate', '--mode', '3-offload', '--offload-device', 'nvme', '--nvme-path', '/nvme\x1b[2J', '--print', 'json'],
      {
        cwd: box.cwd,
        env: box.env,
      },
    );
    expect(flag.code).toBe(2);
    expect(flag.stdout).toBe('');
    expect(flag.stderr).not.toContain('\x1b');
  });
});
