/**
 * vitest's global setup: every run starts on a hostile host (hostile-host.ts), unless ZW_TEST_HOST=as-is
 * asks to run on this machine exactly as it is; then the seal's shadow PATH is built (seal.ts) from the
 * host's PATH. The workers inherit both; setup-env.ts seals each test file. The teardown fails the run when
 * any call reached a host program.
 */
import { rmSync } from 'node:fs';
import { buildHostileHost, hostCalls, type HostileHost } from './hostile-host.js';
import { buildSeal } from './seal.js';

let host: HostileHost | null = null;
let sealDir: string | null = null;

/** Builds the hostile host, puts the process (and so the workers) on it, and builds the seal. */
export function setup(): void {
  if (process.env.ZW_TEST_HOST !== 'as-is') {
    host = buildHostileHost(process.env.PATH ?? '/usr/bin:/bin');
    Object.assign(process.env, host.env);
  }
  sealDir = buildSeal(process.env.PATH ?? '/usr/bin:/bin');
}

/** Fails the run when a test reached one of the host's programs; removes the host and the seal. */
export function teardown(): void {
  if (sealDir) rmSync(sealDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  if (!host) return;
  const calls = hostCalls(host);
  if (calls.length > 0) {
    process.stderr.write(
      `\nSEAL BROKEN: ${calls.length} call(s) reached the host's programs (a test is not sealed from the machine):\n${calls.map((c) => `  ${c}`).join('\n')}\n`,
    );
    process.exitCode = 1;
  }
  rmSync(host.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
