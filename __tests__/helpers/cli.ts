/** Runs the built bin as a subprocess, the way scripts and users call the plain commands. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './pty.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A fresh temp dir. */
export function tempDir(prefix = 'zw-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Runs `zerowiz ...args` with no terminal; HOME and XDG dirs point into a temp dir unless given. */
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; input?: string } = {},
): CliResult {
  const home = tempDir('zw-home-');
  const env: Record<string, string | undefined> = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    HF_HOME: undefined,
    NO_COLOR: '1',
    ...opts.env,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? home,
    env: env as NodeJS.ProcessEnv,
    input: opts.input ?? '',
    encoding: 'utf8',
  });
  return { code: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Bad input as users see it: exit 2, one `zerowiz: ...` line (plus at most a hint line), no stack trace.
 * Warnings printed before it (`zerowiz: warning: ...` and their `fix:` line) are not counted.
 */
export function expectOneLineError(r: CliResult, pattern: RegExp): void {
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter(
      (l, i, all) =>
        !l.startsWith('zerowiz: warning: ') &&
        !(l.startsWith('  fix: ') && all[i - 1]?.startsWith('zerowiz: warning: ')),
    );
  if (r.code !== 2 || !/^zerowiz: /.test(lines[0] ?? '') || !pattern.test(lines[0] ?? '') || lines.length > 2)
    throw new Error(`expected exit 2 and one line matching ${pattern}; got exit ${r.code}, stderr:\n${r.stderr}`);
  if (/\n\s+at |unexpected error|please report/.test(r.stderr))
    throw new Error(`a stack trace or "unexpected error" in:\n${r.stderr}`);
}

/** A user's sandbox: HOME, XDG dirs and a working directory, all in one temp dir. */
export function sandbox(): { home: string; presets: string; env: Record<string, string>; cwd: string } {
  const home = tempDir('zw-box-');
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'cfg'), XDG_CACHE_HOME: join(home, 'cache') };
  const cwd = join(home, 'work');
  mkdirSync(cwd);
  return { home, presets: join(home, 'cfg', 'zerowiz', 'presets'), env, cwd };
}
