/** Runs the built bin as a subprocess, the way scripts and users call the plain commands. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
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
