/**
 * A viewer behind a flood catches up in slices: between two slices of the step's log the event loop turns, so
 * the pane answers keys and draws frames while it reads a backlog. Reading the whole backlog at the step's end
 * in one go held the pane for hundreds of milliseconds (the bench's pane keypress p95 during the 1M-line flood:
 * 296 ms idle, 496 ms beside a busy neighbour, against a goal of 100 ms).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FOLLOW_SLICE_BYTES, LocalFollower } from '../../src/launch/follower.js';
import type { RunJson } from '../../src/records/record.js';
import { EVENTS_FILE } from '../../src/records/run-files.js';
import { removeWorkDirs } from '../helpers/proc.js';

const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

/** A finished one-step run whose log holds `lines` lines, as its supervisor leaves it. */
function finishedRun(lines: number): { dir: string; json: RunJson; bytes: number } {
  const dir = mkdtempSync(join(tmpdir(), 'zw-follow-slices-'));
  dirs.push(dir);
  const log = Array.from(
    { length: lines },
    (_, k) => `step ${k} of the flood, loss=0.1234, a line of about 80 bytes..`,
  );
  const text = `${log.join('\n')}\n`;
  writeFileSync(join(dir, '01-train.log'), text);
  const at = Date.now();
  const r = { status: 'done', exitCode: 0, signal: null, startedAt: at, endedAt: at + 1 };
  writeFileSync(
    join(dir, EVENTS_FILE),
    [
      { t: 'stepStart', i: 0, at, pid: null, freePort: null, csvOffset: null },
      { t: 'stepEnd', i: 0, r },
      { t: 'end', o: { outcome: 'succeeded', exitCode: 0, failedStep: null }, at: at + 2 },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n')
      .concat('\n'),
  );
  const json = {
    steps: [{ name: 'train', log: '01-train.log', status: 'done', exitCode: 0, signal: null }],
    ended: 'succeeded',
  } as unknown as RunJson;
  return { dir, json, bytes: Buffer.byteLength(text) };
}

describe('a viewer catching up on a backlog', () => {
  it('reads it in slices with the event loop turning between them, and delivers every line before the end', async () => {
    const { dir, json, bytes } = finishedRun(100_000);
    expect(bytes).toBeGreaterThan(20 * FOLLOW_SLICE_BYTES);
    const f = new LocalFollower({
      dir,
      json,
      control: { stop: () => null, killNow: () => null, alive: () => true },
      pollMs: 5,
    });
    let lines = 0;
    let turnsBeforeEnd = -1;
    let turns = 0;
    f.subscribe({
      line: () => {
        lines++;
      },
      lines: (_i, text) => {
        lines += text.split('\n').length;
      },
      needsLines: () => false,
      stepEnd: () => {
        turnsBeforeEnd = turns;
      },
    });
    // What a key or a frame would be: a callback waiting for the event loop's next turn.
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const outcome = await f.run();
    ticking = false;
    expect(outcome.outcome).toBe('succeeded');
    expect(lines).toBe(100_000);
    // One turn at least per slice of the log (the whole backlog in one read gave the loop no turn at all).
    expect(turnsBeforeEnd).toBeGreaterThanOrEqual(Math.floor(bytes / FOLLOW_SLICE_BYTES) - 1);
  });
});
