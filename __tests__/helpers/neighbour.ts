/**
 * A second local user for the shared-machine tests: the tests run as root (as CI does), and the attacker
 * is `nobody`, reached with `setpriv --reuid=nobody --regid=nogroup --clear-groups` (a real second uid,
 * so the kernel's own permission checks apply to it). Where that cannot be done (not root, no setpriv,
 * no `nobody`), `NEIGHBOUR_SKIP` says why and the tests that need it are skipped with that reason.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The attacker's uid (`nobody`), or null when there is none. */
export const NOBODY_UID: number | null = (() => {
  const r = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) : null;
})();

/** Why the tests that need a second user cannot run here, or null when they can. */
export const NEIGHBOUR_SKIP: string | null = (() => {
  if (process.getuid?.() !== 0) return 'not root: cannot act as a second user (setpriv needs root)';
  if (spawnSync('setpriv', ['--version']).status !== 0) return 'setpriv (util-linux) is not installed';
  if (NOBODY_UID === null) return 'there is no user nobody';
  const probe = spawnSync('setpriv', [...SETPRIV_ARGS(), 'true']);
  if (probe.status !== 0) return `setpriv cannot drop to nobody here: ${String(probe.stderr).trim()}`;
  return null;
})();

function SETPRIV_ARGS(): string[] {
  return ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];
}

/** Runs `cmd args` as nobody and waits for it. */
export function asNobody(
  cmd: string,
  args: string[],
  opts: { cwd?: string; input?: string } = {},
): SpawnSyncReturns<string> {
  return spawnSync('setpriv', [...SETPRIV_ARGS(), cmd, ...args], {
    cwd: opts.cwd ?? '/',
    encoding: 'utf8',
    input: opts.input ?? '',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
}

/** Runs a small Node program as nobody and waits for it; throws with its stderr when it fails. */
export function nodeAsNobody(code: string, args: string[] = []): string {
  const r = asNobody(process.execPath, ['-e', code, '--', ...args]);
  if (r.status !== 0) throw new Error(`the program run as nobody failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** Starts a Node program as nobody in the background (an attacker racing zerowiz); kill it when done. */
export function startAsNobody(code: string, args: string[] = []): ChildProcess {
  return spawn('setpriv', [...SETPRIV_ARGS(), process.execPath, '-e', code, '--', ...args], {
    cwd: '/',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
}

/**
 * A shared scratch folder as on a GPU box: mode 1777 (anyone may create, only owners may rename or
 * remove), inside a root-owned 0755 temp folder that nobody can traverse. Returns both.
 */
export function sharedFolder(prefix = 'zw-shared-'): { root: string; shared: string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(root, 0o755);
  const shared = join(root, 'scratch');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  return { root, shared };
}
