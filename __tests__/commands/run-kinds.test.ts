/**
 * A third kind of run is one module and one registration: a small kind made here ("box": its steps run through a
 * local supervisor, its records carry a `box` block with a label) is registered with one call, and `zerowiz launch
 * --box`, `runs`, `attach` and `stop` work with it through the CLI's own entry (src/main.ts, in this process). Its
 * flags come from it (and are refused without `--box`), and so do its record block, its column and its JSON.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/main.js';
import {
  registerRunKind,
  type LaunchFrom,
  type RunKindEntry,
  type RunKindModule,
} from '../../src/commands/run-kinds.js';
import type { LaunchFlags } from '../../src/commands/launch-flags.js';
import { localKind, localRunControl, preparedOfRecord, type RunKind } from '../../src/launch/index.js';
import { type RunJson, type RunRecord, setupOfRecord } from '../../src/records/index.js';
import { FAKE_ACCELERATE, oneStepCheckout } from '../helpers/launch.js';

/** A box run's block of run.json. */
const labelOf = (json: RunJson): string | undefined =>
  (Object.getOwnPropertyDescriptor(json, 'box')?.value as { label?: string } | undefined)?.label;

/** The box kind at run time: the local run, its records marked with the box's label. */
function boxKind(label: string): RunKind {
  const local = localKind();
  return {
    ...local,
    name: 'box',
    open: (prepared, ctx) => local.open({ ...prepared, recordBlock: { box: { label } } }, ctx),
  };
}

const BOX_MODULE: RunKindModule = {
  async launchKind(from: LaunchFrom, flags: LaunchFlags) {
    // The flag, else (--last) the label of the box rerun.
    const was = from.record ? labelOf(from.record.json) : undefined;
    return boxKind(typeof flags.boxLabel === 'string' ? flags.boxLabel : (was ?? 'plain'));
  },
  async attach(rec: RunRecord) {
    return {
      kind: boxKind(labelOf(rec.json)!),
      prepared: preparedOfRecord(rec, setupOfRecord(rec)),
      intro: `attaching to box ${labelOf(rec.json)} (run ${rec.json.id})`,
    };
  },
  async stop(rec, _flags, say) {
    const control = localRunControl(rec);
    control.stop();
    while (control.alive()) await new Promise((r) => setTimeout(r, 50));
    say(`box ${labelOf(rec.json)} stopped`);
    return 0;
  },
  refresh: async () => null,
  column: (rec) => `  box ${labelOf(rec.json)}`,
  summary: (rec) => ({ box: { label: labelOf(rec.json) } }),
};

const BOX: RunKindEntry = {
  name: 'box',
  choose: { flags: '--box', description: 'run the steps in a box' },
  flags: [{ flags: '--box-label <label>', description: "the box's label" }],
  chooseHint: 'add --box to run the steps in a box',
  help: ['With --box the steps run in a box.'],
  aliases: (json) => [labelOf(json) ?? ''],
  loadCheck: async () => (json) => (typeof labelOf(json) === 'string' ? null : 'box.label: not a string'),
  load: async () => BOX_MODULE,
};

/** Everything this process wrote to stdout and stderr while the tests ran (one capture: calls may overlap). */
const written = { out: '', err: '' };

/** The CLI in this process: its exit code, and what was written while it ran (another call's lines included). */
async function zerowiz(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const from = { out: written.out.length, err: written.err.length };
  const code = await main(args, { runWizard: async () => 0, runLogPane: async () => 0 });
  return { code, out: written.out.slice(from.out), err: written.err.slice(from.err) };
}

const RUN = ['--no-tui', '--accelerate', FAKE_ACCELERATE];
let unregister: () => void;
let cwd0: string;
const env0 = { ...process.env };
beforeAll(() => {
  unregister = registerRunKind(BOX);
  vi.spyOn(process.stdout, 'write').mockImplementation((c) => {
    written.out += String(c);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((c) => {
    written.err += String(c);
    return true;
  });
});
afterAll(() => {
  unregister();
  vi.restoreAllMocks();
});
beforeEach(() => {
  cwd0 = process.cwd();
  process.chdir(oneStepCheckout('zw-box-'));
  process.env.FAKE_ACCELERATE_STEP_MS = '0';
});
afterEach(() => {
  process.chdir(cwd0);
  process.env = { ...env0 };
});

/** The run records of this directory, oldest first. */
const records = () =>
  readdirSync(join('.zerowiz', 'runs'))
    .sort()
    .map((id) => JSON.parse(readFileSync(join('.zerowiz', 'runs', id, 'run.json'), 'utf8')) as RunJson);

describe('a kind registered with one call', () => {
  it('launches with its flags, keeps its block in the record, and is listed and attached as itself', async () => {
    const help = await zerowiz('launch', '--help');
    expect(help.out).toMatch(/--box-label <label>\s+the box's label/);
    expect(help.out).toContain('With --box the steps run in a box.');

    const alone = await zerowiz('launch', 'p.yaml', '--box-label', 'blue', ...RUN);
    expect(alone.code).toBe(2);
    expect(alone.err).toContain('--box-label only apply with --box');
    expect(alone.err).toContain('hint: add --box to run the steps in a box');

    const r = await zerowiz('launch', 'p.yaml', '--box', '--box-label', 'blue', ...RUN);
    expect(r.code, r.err).toBe(0);
    const [json] = records();
    expect(labelOf(json!)).toBe('blue');
    expect(json!.ended).toBe('succeeded');

    const runs = await zerowiz('runs', '--json');
    expect(JSON.parse(runs.out)[0]).toMatchObject({ kind: 'box', box: { label: 'blue' } });
    expect(JSON.parse(runs.out)[0].supervisor).toBeUndefined();
    expect((await zerowiz('runs')).out).toMatch(/succeeded .* box blue/);

    const attach = await zerowiz('attach', 'blue', '--no-tui');
    expect(attach.code, attach.err).toBe(0);
    expect(attach.err).toContain(`attaching to box blue (run ${json!.id})`);
  });

  it('`launch --last` of its run runs as it again; `stop` stops a running one through it', async () => {
    process.env.FAKE_ACCELERATE_HANG = '1';
    const running = zerowiz('launch', 'p.yaml', '--box', '--box-label', 'red', ...RUN);
    for (let i = 0; i < 400; i++) {
      const started = (() => {
        try {
          return records()[0]?.steps[0]?.status === 'running';
        } catch {
          return false;
        }
      })();
      if (started) break;
      await new Promise((res) => setTimeout(res, 25));
    }
    const stop = await zerowiz('stop', 'red');
    expect(stop.code, stop.err).toBe(0);
    expect(stop.err).toContain('box red stopped');
    expect((await running).code).toBe(130);
    expect(records()[0]!.ended).toBe('interrupted');

    delete process.env.FAKE_ACCELERATE_HANG;
    const again = await zerowiz('launch', '--last', ...RUN);
    expect(again.code, again.err).toBe(0);
    expect(records().map((j) => [labelOf(j), j.ended])).toEqual([
      ['red', 'interrupted'],
      ['red', 'succeeded'],
    ]);
  });
});
