// One busy CPU neighbour for the benches that measure under load, so every bench means the same by it.
import { spawn } from 'node:child_process';

/**
 * A busy CPU neighbour (`node -e 'for(;;);'`, which checks now and then whether the bench is still there:
 * a bench killed mid-run must not leave it spinning, skewing every measurement after it) while `f` runs.
 */
export async function withBusyNeighbour(f) {
  const spin = 'let i = 0; for (;;) if (++i % 5e7 === 0 && process.ppid === 1) process.exit();';
  const busy = spawn(process.execPath, ['-e', spin], { stdio: 'ignore' });
  try {
    return await f();
  } finally {
    busy.kill('SIGKILL');
  }
}
