/**
 * The printed commands (the dry run, commands.sh, generate's `run:` lines) are pasted into bash, dash and
 * zsh. Each line is run by the real shells here, against a stand-in executable that prints its argv, and
 * the argv must come back exactly. zsh and dash are installed with apt-get when missing (as root); without
 * them the test says why it skipped.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { shellJoin, shellWord } from '../../src/text/quote.js';

const SHELLS: Array<{ name: string; argv: string[] }> = [
  { name: 'bash', argv: ['bash', '-c'] },
  { name: 'dash', argv: ['dash', '-c'] },
  { name: 'zsh', argv: ['zsh', '-c'] },
  { name: 'zsh', argv: ['zsh', '-o', 'extendedglob', '-o', 'magicequalsubst', '-c'] },
];

const have = (sh: string) => spawnSync('sh', ['-c', `command -v ${sh}`]).status === 0;

/** Installs the missing shells with apt-get when root; returns why a shell is still missing. */
function ensureShells(): Map<string, string> {
  const missing = new Map<string, string>();
  const need = ['bash', 'dash', 'zsh'].filter((s) => !have(s));
  if (need.length > 0 && process.getuid?.() === 0) {
    const opts = {
      stdio: 'ignore' as const,
      timeout: 300_000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    };
    if (spawnSync('apt-get', ['install', '-y', '-q', ...need], opts).status !== 0) {
      spawnSync('apt-get', ['update', '-q'], opts);
      spawnSync('apt-get', ['install', '-y', '-q', ...need], opts);
    }
  }
  for (const s of ['bash', 'dash', 'zsh'])
    if (!have(s))
      missing.set(s, process.getuid?.() === 0 ? `apt-get could not install ${s}` : `${s} is missing and not root`);
  return missing;
}

let missing = new Map<string, string>();
let dir = '';
beforeAll(() => {
  missing = ensureShells();
  dir = tempDir('zw-quote-');
  // A stand-in `accelerate` at a path whose first word holds `=` (X=1/acc): it prints its arguments.
  for (const exe of [join(dir, 'X=1', 'acc'), join(dir, 'bin', 'accelerate')]) {
    mkdirSync(join(exe, '..'), { recursive: true });
    writeFileSync(exe, '#!/bin/sh\nfor a in "$@"; do printf "%s\\0" "$a"; done\n');
    chmodSync(exe, 0o755);
  }
}, 320_000);

/** Words a preset, a path or a user can put in a command. */
const WORDS = [
  'sft:train',
  '--learning_rate',
  '1e-4',
  '=equals-first',
  'a=b',
  '--x=~/home',
  '~user',
  '^caret',
  'x^y',
  '%job',
  "it's",
  'two words',
  '$HOME',
  '`id`',
  '!bang',
  '#hash',
  'a#b',
  '*.safetensors',
  'model*.safetensors,more',
  '{a,b}',
  '[ab]',
  'tab\there',
  '',
  'é',
  '-',
  '@at',
  'a:b,c+d',
];

describe('printed commands run the same in bash, dash and zsh', () => {
  for (const sh of SHELLS) {
    it(`${sh.argv.join(' ')}: every word comes back as argv`, (ctx) => {
      if (missing.has(sh.name)) {
        console.log(`skipped ${sh.name}: ${missing.get(sh.name)}`);
        ctx.skip();
        return;
      }
      for (const first of ['X=1/acc', join(dir, 'bin', 'accelerate')]) {
        const line = shellJoin([first, 'launch', ...WORDS]);
        const r = spawnSync(sh.argv[0]!, [...sh.argv.slice(1), line], { cwd: dir, encoding: 'utf8' });
        expect(r.stderr).toBe('');
        expect(r.stdout.split('\0').slice(0, -1)).toEqual(['launch', ...WORDS]);
      }
    });
  }

  it('leaves plain words unquoted (the seed commands stay readable)', () => {
    expect(shellJoin(['accelerate', 'launch', '--task', 'sft:train', '--lr', '1e-4', 'a,b'])).toBe(
      'accelerate launch --task sft:train --lr 1e-4 a,b',
    );
    expect(shellWord('=x')).toBe("'=x'");
    expect(shellJoin(['X=1/acc', 'a=b'])).toBe("'X=1/acc' a=b");
  });
});
