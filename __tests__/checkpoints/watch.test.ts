import { mkdirSync, mkdtempSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseWords } from 'shell-quote';
import { describe, expect, it } from 'vitest';
import { AlertEngine } from '../../src/observe/alerts.js';
import { NO_EXPECTATION } from '../../src/checkpoints/expect.js';
import { CheckpointWatcher, checkpointAlert, type WatchedStep } from '../../src/checkpoints/watch.js';
import { checkpointsOf, formatCheckpointLines, recordCheckpoints } from '../../src/checkpoints/runs.js';
import type { RunRecord } from '../../src/records/record.js';
import { writeDeepSpeedTag } from '../helpers/deepspeed-ckpt.js';
import { writeSafetensors } from '../helpers/safetensors.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'zw-ckw-'));
const lora = [
  { name: 'a.to_q.lora_A.default.weight', shape: [2, 8] },
  { name: 'a.to_q.lora_B.default.weight', shape: [8, 2] },
];
const SETTLE_MS = 2000;

/** A watcher on one step's output folder, with a clock the test moves. */
function watcher(root: string, since = 0, worldSize: number | null = 2) {
  let now = Date.now();
  const steps: WatchedStep[] = [{ index: 1, name: 'train', roots: [root], expect: { ...NO_EXPECTATION, worldSize } }];
  const w = new CheckpointWatcher({
    steps,
    since,
    settleMs: SETTLE_MS,
    now: () => now,
    fix: { setupRef: 'qwen-image-lora-lowvram', runId: '20261201-101010-qwen-image-lora-lowvram' },
  });
  return { w, tick: (ms = SETTLE_MS) => (now += ms) };
}

describe('the checkpoint watcher: new files in the steps output folders become verdicts as they are saved', () => {
  it('verifies a new file once it has stopped changing, once', () => {
    const root = tmp();
    const { w, tick } = watcher(root);
    expect(w.poll()).toEqual([]);
    writeSafetensors(join(root, 'epoch-0.safetensors'), lora);
    expect(w.poll()).toEqual([]); // just seen: it may still be written
    tick();
    const ev = w.poll();
    expect(ev.map((e) => [e.step, e.verdict.verdict, e.verdict.path])).toEqual([
      [1, 'ok', join(root, 'epoch-0.safetensors')],
    ]);
    tick();
    expect(w.poll()).toEqual([]);
    expect(w.verdicts().map((v) => v.step)).toEqual([1]);
  });

  it('waits while a file grows, and reports a file cut short once it has been still', () => {
    const root = tmp();
    const { w, tick } = watcher(root);
    const f = join(root, 'epoch-0.safetensors');
    writeSafetensors(f, lora);
    truncateSync(f, 40);
    w.poll();
    tick(500);
    writeSafetensors(f, lora);
    truncateSync(f, 60); // still growing
    expect(w.poll()).toEqual([]);
    tick();
    const ev = w.poll();
    expect(ev).toHaveLength(1);
    expect(ev[0]!.verdict.cause).toBe('truncated');
    expect(ev[0]!.alert).toMatchObject({ title: expect.stringMatching(/epoch-0\.safetensors is unusable/) });
  });

  it('ignores checkpoints written before the run started (an earlier run left them)', () => {
    const root = tmp();
    writeSafetensors(join(root, 'epoch-0.safetensors'), lora);
    const old = (Date.now() - 3_600_000) / 1000;
    utimesSync(join(root, 'epoch-0.safetensors'), old, old);
    const { w, tick } = watcher(root, Date.now() - 1000);
    w.poll();
    tick();
    expect(w.poll()).toEqual([]);
  });

  it('a DeepSpeed tag is judged once `latest` names it (DeepSpeed writes it after every rank), or at the step end', () => {
    const root = tmp();
    const { w, tick } = watcher(root);
    writeDeepSpeedTag(root, { stage: 3, worldSize: 2, latest: false, skipRanks: [1] });
    w.poll();
    tick();
    expect(w.poll()).toEqual([]); // rank 1 is still writing, for all the watcher knows
    writeDeepSpeedTag(root, { stage: 3, worldSize: 2 });
    w.poll();
    tick();
    expect(w.poll().map((e) => e.verdict.verdict)).toEqual(['ok']);

    const root2 = tmp();
    const b = watcher(root2);
    writeDeepSpeedTag(root2, { tag: 'global_step20', stage: 2, worldSize: 2, latest: false, skipRanks: [1] });
    b.w.poll();
    b.tick();
    expect(b.w.poll()).toEqual([]);
    const end = b.w.finish(1);
    expect(end.map((e) => e.verdict.cause)).toEqual(['ds-missing-ranks']);
  });

  it('the alert of a bad save: its cause and a fix that runs as printed, once per checkpoint', () => {
    const root = tmp();
    const { w, tick } = watcher(root);
    writeSafetensors(
      join(root, 'epoch-3.safetensors'),
      lora.map((t) => ({ ...t, shape: [0] })),
    );
    w.poll();
    tick();
    const [ev] = w.poll();
    const engine = new AlertEngine();
    const a = engine.checkpoint(ev!.step, ev!.alert!);
    expect(a).toMatchObject({ id: 'checkpoint-bad', step: 1, fatal: false });
    expect(a!.title).toMatch(/epoch-3\.safetensors is unusable: its tensors are empty/);
    // The command in the fix parses as a shell would read it and names the flag that fixes the cause.
    const cmd = /`([^`]+)`/.exec(a!.fix)![1]!;
    expect(parseWords(cmd)).toEqual([
      'zerowiz',
      'preset',
      'save',
      'qwen-image-lora-lowvram',
      '--preset',
      'qwen-image-lora-lowvram',
      '--zero3-save-16bit-model',
      'yes',
    ]);
    expect(engine.checkpoint(ev!.step, ev!.alert!)).toBeNull();
  });

  it('points `latest` back at the last whole tag when the newest lacks a rank', () => {
    const root = tmp();
    const { w, tick } = watcher(root);
    writeDeepSpeedTag(root, { tag: 'global_step10', stage: 2, worldSize: 2 });
    w.poll();
    tick();
    w.poll();
    writeDeepSpeedTag(root, { tag: 'global_step20', stage: 2, worldSize: 2, skipRanks: [1] });
    w.poll();
    tick();
    const [ev] = w.poll();
    expect(ev!.verdict.cause).toBe('ds-missing-ranks');
    const cmd = /`([^`]+)`/.exec(ev!.alert!.fix)![1]!;
    expect(parseWords(cmd)).toEqual(['echo', 'global_step10', { op: '>' }, join(root, 'latest')]);
  });
});

describe('each cause has a title and a fix', () => {
  it('names the checkpoint and the cause; fixes with a command quote paths as a shell reads them', () => {
    const causes = [
      'unreadable',
      'not-safetensors',
      'truncated',
      'no-tensors',
      'empty-tensors',
      'non-finite',
      'lora-mismatch',
      'too-small',
      'index-mismatch',
      'ds-missing-ranks',
      'ds-truncated',
      'ds-too-small',
      'ds-unfinished',
      'unfinished',
    ] as const;
    for (const cause of causes) {
      const a = checkpointAlert(
        {
          path: "/runs/it's here/epoch-2.safetensors",
          kind: 'weights',
          verdict: 'bad',
          reason: 'x',
          cause,
          bytes: 0,
          mtimeMs: 0,
          hasWeights: false,
        },
        { setupRef: './my preset.yaml', runId: 'r1' },
      );
      expect(a.title, cause).toMatch(/^checkpoint epoch-2\.safetensors is unusable: \w/);
      expect(a.fix.length, cause).toBeGreaterThan(40);
      for (const m of a.fix.matchAll(/`([^`]+)`/g)) {
        const words = parseWords(m[1]!);
        expect(
          words.every((w) => typeof w === 'string'),
          `${cause}: ${m[1]}`,
        ).toBe(true);
      }
      if (cause === 'truncated')
        expect(parseWords(/`(df [^`]+)`/.exec(a.fix)![1]!)).toEqual(['df', '-h', "/runs/it's here"]);
      if (cause === 'empty-tensors')
        expect(a.fix).toContain("zerowiz preset save 'my preset' --preset './my preset.yaml'");
    }
  });
});

describe('text from the files never reaches a terminal raw', () => {
  it('a tensor or file name holding control characters is escaped in the verdict and the alert', () => {
    const root = tmp();
    const name = 'epoch-\x1b[2J.safetensors';
    writeSafetensors(join(root, name), [{ name: 'a.\x07\x1b]0;pwned\x07.lora_A.default.weight', shape: [0] }]);
    const { w, tick } = watcher(root);
    w.poll();
    tick();
    const [ev] = w.poll();
    expect(ev!.verdict.reason).toMatch(/\\x07\\x1b\]0;pwned/);
    for (const text of [ev!.verdict.reason, ev!.alert!.title, ev!.alert!.fix])
      expect(/[\u0000-\u001f\u007f-\u009f]/.test(text), text).toBe(false);
  });
});

describe('a run without a preset to name (a wizard setup never saved)', () => {
  it('the fix names the question instead of a preset command', () => {
    const a = checkpointAlert(
      {
        path: '/out/epoch-0.safetensors',
        kind: 'weights',
        verdict: 'bad',
        reason: 'x',
        cause: 'empty-tensors',
        bytes: 0,
        mtimeMs: 0,
        hasWeights: false,
      },
      { setupRef: null, runId: null },
    );
    expect(a.fix).toMatch(
      /answer yes to the wizard's "Save 16-bit model weights" question \(--zero3-save-16bit-model yes\)/,
    );
    expect(a.fix).not.toMatch(/preset save/);
  });
});

describe('a run record keeps its checkpoints; `runs --json` gives {path, verdict, reason}', () => {
  const record = (cwd: string, extra: Record<string, unknown> = {}): RunRecord =>
    ({
      dir: join(cwd, '.zerowiz', 'runs', 'r1'),
      json: {
        version: 1,
        id: 'r1',
        name: 'x',
        source: 'x',
        cwd,
        accelerate: { path: '/bin/true', display: 'accelerate' },
        startedAt: new Date(Date.now() - 60_000).toISOString(),
        endedAt: new Date().toISOString(),
        ended: 'succeeded',
        exitCode: 0,
        configFiles: [],
        steps: [
          {
            name: 'train',
            argv: ['launch', 'train.py', '--output_dir', 'out'],
            usesConfig: true,
            command: '',
            log: '01-train.log',
            status: 'done',
            exitCode: 0,
            signal: null,
            startedAt: null,
            endedAt: null,
            durationMs: null,
          },
        ],
        setup: {},
        ...extra,
      },
    }) as unknown as RunRecord;

  it('keeps what the watcher recorded and says when a checkpoint is gone since', () => {
    const cwd = tmp();
    mkdirSync(join(cwd, 'out'));
    writeSafetensors(join(cwd, 'out', 'epoch-0.safetensors'), lora);
    const rec = record(cwd);
    const { w, tick } = watcher(join(cwd, 'out'));
    w.poll();
    tick();
    w.poll();
    recordCheckpoints(rec, w.verdicts());
    const json = JSON.parse(JSON.stringify(rec.json)) as Record<string, unknown>;
    expect(json.checkpoints).toEqual([
      expect.objectContaining({ path: join(cwd, 'out', 'epoch-0.safetensors'), verdict: 'ok', step: 1 }),
    ]);
    expect(checkpointsOf(rec)).toEqual([
      { path: join(cwd, 'out', 'epoch-0.safetensors'), verdict: 'ok', reason: expect.stringMatching(/2 tensors/) },
    ]);
    writeFileSync(join(cwd, 'out', 'epoch-0.safetensors'), '');
    expect(checkpointsOf(rec)[0]).toMatchObject({ verdict: 'bad', reason: expect.stringMatching(/changed since/) });
  });

  it('a record without stored verdicts: the steps output folders are read, checkpoints of its time only', () => {
    const cwd = tmp();
    writeSafetensors(join(cwd, 'out', 'epoch-0.safetensors'), lora);
    writeSafetensors(
      join(cwd, 'out', 'epoch-1.safetensors'),
      lora.map((t) => ({ ...t, shape: [0] })),
    );
    writeSafetensors(join(cwd, 'out', 'epoch-9.safetensors'), lora);
    const later = (Date.now() + 3_600_000) / 1000;
    utimesSync(join(cwd, 'out', 'epoch-9.safetensors'), later, later);
    const items = checkpointsOf(record(cwd));
    expect(items.map((c) => [c.path.slice(cwd.length), c.verdict])).toEqual([
      ['/out/epoch-0.safetensors', 'ok'],
      ['/out/epoch-1.safetensors', 'bad'],
    ]);
    const lines = formatCheckpointLines(items, cwd);
    expect(lines.join('\n')).toMatch(/out\/epoch-0\.safetensors ok/);
    expect(lines.join('\n')).toMatch(/out\/epoch-1\.safetensors BAD: 2 of 2 tensors are empty/);
  });
});
