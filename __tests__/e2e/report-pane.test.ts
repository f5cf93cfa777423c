/**
 * The log pane says where the report is: once the run has ended, the line under the pane's title names it,
 * and the summary printed after the pane closes does too (a real pseudo-terminal over the built bin).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { relative, join } from 'node:path';
import { spawnPty } from '../helpers/pty.js';
import { closeWhenDone } from '../helpers/launch.js';
import { DIFFSYNTH, diffsynthCheckout, runDirs, runEnv } from '../helpers/diffsynth-run.js';
import { removeWorkDirs } from '../helpers/proc.js';

const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

describe('the pane and the report', () => {
  it('names the report under its title when the run ends, and in the summary after it closes', async () => {
    const d = diffsynthCheckout('zw-pane-report-');
    dirs.push(d);
    const s = spawnPty({
      args: ['launch', './mine.yaml', '--csv-log', '--accelerate', DIFFSYNTH],
      cwd: d,
      cols: 120,
      rows: 30,
      env: runEnv(d),
    });
    const screen = await s.waitFor(
      /\[all steps done: q to close\][\s\S]*report: \.zerowiz\/runs\/\S+\/report\.html/,
      60_000,
    );
    const rel = relative(d, join(runDirs(d)[0]!, 'report.html'));
    expect(screen).toContain(`report: ${rel}`);
    expect(await closeWhenDone(s)).toBe(0);
    await s.waitFor(/zerowiz: report: \S+ \(open it in a browser\)/);
    expect(s.raw()).toContain(`zerowiz: report: ${rel} (open it in a browser)`);
  }, 90_000);
});
