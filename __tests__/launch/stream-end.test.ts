/**
 * Stream mode's own lines always reach its output. A reader that stops reading (a stuck `| tee`, `| less` left
 * open) costs zerowiz at most a bounded backlog: past it, the step's lines are dropped and counted. When that
 * reader is still stalled as the run ends, zerowiz's end (the dropped-lines note, the step's end, the summary,
 * where the record is) must still come, after the backlog, once the reader reads again.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKE_ACCELERATE } from '../helpers/launch.js';
import { until, removeWorkDirs } from '../helpers/proc.js';
import { BIN } from '../helpers/pty.js';

const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

const PRESET = `name: flood
answers:
  num_processes: 1
  mode: "2"
steps:
  - name: train
    uses_config: true
    args: [train.py]
`;

function ended(dir: string): boolean {
  const root = join(dir, '.zerowiz', 'runs');
  if (!existsSync(root)) return false;
  const id = readdirSync(root).find((n) => !n.startsWith('.'));
  if (!id) return false;
  try {
    return JSON.parse(readFileSync(join(root, id, 'run.json'), 'utf8')).ended !== 'running';
  } catch {
    return false;
  }
}

describe("stream mode's own lines reach a reader that was stalled when the run ended", () => {
  it('the dropped-lines note, the step end and the summary come after the backlog, in that order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-stream-end-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'flood.yaml'), PRESET);
    writeFileSync(join(dir, 'train.py'), '# stand-in\n');
    const z = spawn(process.execPath, [BIN, 'launch', 'flood.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE], {
      cwd: dir,
      env: { ...process.env, FAKE_ACCELERATE_FLOOD_LINES: '60000', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    z.stderr!.resume();
    const exit = new Promise<number | null>((res) => z.on('exit', (code) => res(code)));
    // Nobody reads stdout until the run has ended.
    await until(() => ended(dir), 'the run to end', 60_000);
    await new Promise((res) => setTimeout(res, 500));
    let out = '';
    z.stdout!.setEncoding('utf8');
    const closed = new Promise((res) => z.stdout!.on('close', res));
    z.stdout!.on('data', (d: string) => {
      out += d;
    });
    expect(await exit).toBe(0);
    await closed;
    const dropped = out.search(/\[zerowiz\] \d+ line\(s\) not shown here: stdout was not read fast enough/);
    const stepEnd = out.search(/\[zerowiz\] step train done in/);
    const summary = out.search(/\[zerowiz\] 1 step done/);
    const record = out.search(/\[zerowiz\] run record: /);
    expect(dropped, out.slice(-2000)).toBeGreaterThanOrEqual(0);
    expect(stepEnd).toBeGreaterThan(dropped);
    expect(summary).toBeGreaterThan(stepEnd);
    expect(record).toBeGreaterThan(summary);
  }, 90_000);
});
