import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App, type AppDeps } from '../../components/wizard/App.js';
import { frame, listening, standInDeps } from '../helpers/ink.js';
import { importLines } from '../../src/wizard/review.js';
import { slurmFieldProblem } from '../../components/wizard/run.js';
import { checkOptions } from '../../src/slurm/launch.js';
import { requirePartition } from '../../src/slurm/preflight.js';
import { parseShapeFlag } from '../../src/slurm/shape.js';
import { importAccelerateConfig } from '../../src/setups/import.js';
import { findPreset } from '../../src/setups/presets.js';
import type { Setup } from '../../src/config/setup.js';
import { carryOut, diffLines, planWrite, summaryLines } from '../../src/wizard/finish.js';
import { FINISH_START, finishEffect, finishItems, finishReducer } from '../../src/wizard/finishState.js';

const PGDN = '\x1b[6~';

/** A config zerowiz did not write: four keys it does not model (kept), one it moves into the JSON. */
function foreignConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'zw-finish-'));
  writeFileSync(
    join(dir, 'ds.json'),
    JSON.stringify({
      zero_optimization: { stage: 3, round_robin_gradients: true },
      steps_per_print: 50,
      optimizer: { type: 'AdamW', params: { lr: 'auto' } },
    }),
  );
  writeFileSync(
    join(dir, 'a.yaml'),
    'distributed_type: DEEPSPEED\nnum_processes: 4\ngpu_ids: all\nmixed_precision: bf16\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero3_init_flag: true\n',
  );
  return dir;
}

function realDeps(dir: string): AppDeps {
  const env = { HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache') };
  return standInDeps({
    detect: async () => ({
      env: { gpuCount: 4, gpuMemoryBytes: 80 * 2 ** 30, cpuMemoryBytes: 2 ** 40 },
      description: '4 GPUs (stand-in)',
    }),
    importConfig: (path) => importAccelerateConfig(path, dir),
    // The wizard runs in the test's directory: a typed or --config path is relative to it.
    paths: { env, cwd: dir },
    defaultConfigPath: join(dir, 'cache', 'huggingface', 'accelerate', 'default_config.yaml'),
    // "Write to a directory" proposes ".": here that is the test's directory.
    planWrite: (setup, target) => planWrite(setup, target, env, dir),
    carryOut,
    summarize: summaryLines,
  });
}

describe('the review after an import', () => {
  it('names every key the import kept and moved, not only their number', async () => {
    const dir = foreignConfig();
    const r = render(<App deps={realDeps(dir)} configPath="a.yaml" onExit={vi.fn()} />);
    const f = await frame(r, (x) => x.includes('Review:') && x.includes('Kept as imported'));
    for (const key of [
      'gpu_ids',
      'json:zero_optimization.round_robin_gradients',
      'json:steps_per_print',
      'json:optimizer',
      'mixed_precision',
    ])
      expect(f).toContain(key);
    expect(f).toMatch(/Moved into the DeepSpeed JSON.*mixed_precision →\s+fp16\.enabled \/ bf16\.enabled/s);
    // The header keeps the counts ahead of the path, so a narrow terminal cuts the path, not them.
    // ...and what it changed: the accumulation the JSON leaves out is written as accelerate's 1, the clipping stays
    // absent, the YAML's bf16 moved into the JSON's blocks.
    expect(f.split('\n')[0]).toContain(
      'imported config · review · 4 key(s) kept, 1 moved, 3 changed (listed in the review)',
    );
    r.unmount();
  });

  it('fits the notes in the rows it is given and says how many keys it could not show', () => {
    const kept = Array.from({ length: 30 }, (_, i) => `json:some.unmodelled_key_${i}`);
    const lines = importLines({ path: 'a.yaml', kept, moved: ['mixed_precision'] }, 60, 4);
    expect(lines).toHaveLength(4);
    expect(lines.every((l) => l.length <= 60)).toBe(true);
    const shown = kept.filter((k) =>
      lines
        .slice(0, 3)
        .join(' ')
        .split(/[\s,]+/)
        .includes(k),
    ).length;
    expect(lines[3]).toBe(`… ${31 - shown} more key(s) not shown (a taller terminal shows them)`);
    expect(importLines({ path: 'a.yaml', kept: [], moved: [] }, 60, 4)).toEqual([]);
  });
});

describe('finish: writing over files with other content', () => {
  it('shows the diff in every row, labelled, scrollable, with its own keys; after y the preview shows the files as written', async () => {
    const dir = foreignConfig();
    // Files with other content where the wizard will write: a long diff.
    writeFileSync(
      join(dir, 'accelerate_config.yaml'),
      `${Array.from({ length: 25 }, (_, i) => `old_key_${i}: ${i}`).join('\n')}\n`,
    );
    writeFileSync(
      join(dir, 'ds_config.json'),
      `${JSON.stringify(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`old_${i}`, i])), null, 2)}\n`,
    );
    const r = render(<App deps={realDeps(dir)} configPath="a.yaml" onExit={vi.fn()} />);
    await frame(r, (x) => x.includes('→ Finish'));
    await listening(r);
    r.stdin.write('\r'); // Finish
    await frame(r, (x) => x.includes('Write to a directory'));
    r.stdin.write('\r'); // Write to a directory…
    await frame(r, (x) => x.includes('Directory for accelerate_config.yaml'));
    r.stdin.write('\r'); // "." (the test's directory)
    // The frame once the app has handed the diff the preview's rows and its footer.
    let f = await frame(r, (x) => x.includes('Overwrite?') && x.includes('y write'));
    const lines = f.split('\n');
    const title = lines.findIndex((l) => l.includes('These files exist and would change'));
    const keys = lines.findIndex((l) => l.includes('Overwrite?'));
    // 24 rows: the header, the title, the diff, the key line, the footer: the diff has every other row.
    expect(keys - title - 1).toBeGreaterThanOrEqual(17);
    expect(f).toContain(`--- on disk: ${join(dir, 'accelerate_config.yaml')}`);
    expect(f).toContain(`+++ zerowiz: ${join(dir, 'accelerate_config.yaml')}`);
    expect(f).not.toMatch(/^(Index:|====)/m);
    expect(f).toContain('lines 1-');
    const footer = lines.slice(keys + 1).join('\n');
    expect(footer).toContain('y write');
    expect(footer).toContain('n/Esc cancel');
    expect(footer).not.toContain('q quit');
    expect(footer).not.toContain('Esc/← back');
    // The preview gives its rows to the diff.
    expect(f).not.toContain(' YAML ');

    const total = diffLines(
      planWrite(importAccelerateConfig('a.yaml', dir).setup, { kind: 'dir', dir: '.' }, {}, dir).files,
    ).length;
    r.stdin.write(PGDN);
    f = await frame(r, (x) => /lines ([2-9]|[1-9][0-9])[0-9]*-/.test(x) && !x.includes('lines 1-'));
    expect(f).toContain(`of ${total}`);
    const first = Number(/lines (\d+)-/.exec(f)![1]);
    r.stdin.write('q'); // not the wizard's quit here
    await frame(r, (x) => x.includes('q quit') === false && x.includes(`lines ${first}-`));
    r.stdin.write('\x1b[A');
    await frame(r, (x) => x.includes(`lines ${first - 1}-`) && x.includes('Overwrite?'));
    r.stdin.write('y');
    // The finish screen's preview shows the commands: with the files as written.
    f = await frame(r, (x) => x.includes('Done: exit') && x.includes(' YAML '));
    expect(f.replace(/\s+/g, '')).toContain(
      `#files:${join(dir, 'accelerate_config.yaml')},${join(dir, 'ds_config.json')}`,
    );
    r.stdin.write('\t'); // commands -> YAML
    f = await frame(r, (x) => x.includes('deepspeed_config_file:'));
    const written = readFileSync(join(dir, 'accelerate_config.yaml'), 'utf8');
    const ref = /deepspeed_config_file: (.*)/.exec(written)?.[1];
    expect(ref).toBe(join(dir, 'ds_config.json'));
    // The preview shows the setup as written, not the imported file names.
    expect(f).toContain(`deepspeed_config_file: ${ref}`);
    expect(f).not.toContain('deepspeed_config_file: ds.json');
    r.unmount();
  });
});

describe("the Slurm form's fields are checked as launch --slurm checks its flags", () => {
  const checks = { requirePartition, parseShapeFlag, checkOptions };
  const parts = [
    { name: 'debug', isDefault: true },
    { name: 'short', isDefault: false },
  ];
  const problem = (field: Parameters<typeof slurmFieldProblem>[0], value: string, p = parts) =>
    slurmFieldProblem(field, value, p, checks);

  it('a partition sinfo does not list: the same words as launch --slurm --partition', () => {
    expect(problem('partition', 'gpuz')).toBe(
      "Slurm has no partition 'gpuz'; the partitions here are: debug (default), short (sinfo); pick one with --partition, or leave it out for the default",
    );
    expect(problem('partition', 'short')).toBeNull();
    expect(problem('partition', '')).toBeNull(); // Slurm's default partition
    expect(problem('partition', 'gpuz', [])).toBeNull(); // sinfo could not tell: sbatch checks it
    expect(problem('partition', 'a b', [])).toMatch(/^--partition 'a b' is not a Slurm name/);
  });

  it('nodes and GPUs per node: whole numbers from 1, never empty', () => {
    expect(problem('nodes', '')).toMatch(/^--nodes '' is not a whole number from 1 to \d+; give the number of nodes/);
    expect(problem('gpusPerNode', '0')).toMatch(/^--gpus-per-node '0' is not a whole number/);
    expect(problem('nodes', '2')).toBeNull();
    expect(problem('gpusPerNode', '8')).toBeNull();
  });

  it('a time limit and an account: empty leaves them to Slurm, else they must read as Slurm reads them', () => {
    expect(problem('time', '')).toBeNull();
    expect(problem('time', '02:00:00')).toBeNull();
    expect(problem('time', 'soon')).toMatch(/^--time 'soon' is not a Slurm time; give HH:MM:SS/);
    expect(problem('account', '')).toBeNull();
    expect(problem('account', 'a b')).toMatch(/^--account 'a b' is not a Slurm name/);
  });
});

describe('the finish screen checks this machine (zerowiz check) on demand', () => {
  it('runs the checks of the steps and shows the count and what to fix above the menu', async () => {
    const seed = findPreset('qwen-image-lora-lowvram');
    let asked: { steps: number; cwd: string } | null = null;
    const runChecks = vi.fn(async (setup: Setup, cwd: string) => {
      asked = { steps: setup.steps.length, cwd };
      return {
        summary: 'Checks: 2 FAIL, 1 WARN, 9 PASS, 1 SKIP',
        lines: [
          'FAIL python  /venv/bin/python -m pip install deepspeed',
          'FAIL shm  docker run --shm-size=16g',
          'WARN models  download them first',
        ],
      };
    });
    const dir = mkdtempSync(join(tmpdir(), 'zw-finish-check-'));
    const r = render(
      <App
        deps={standInDeps({
          listPresets: () => ({ presets: [seed], problems: [] }),
          runChecks,
          paths: { env: {}, cwd: dir },
        })}
        onExit={vi.fn()}
      />,
    );
    await frame(r, (x) => x.includes('Start from a preset'));
    await listening(r);
    r.stdin.write('2'); // Start from a preset…
    await frame(r, (x) => x.includes('qwen-image-lora-lowvram'));
    r.stdin.write('\r');
    await frame(r, (x) => x.includes('→ Finish'));
    r.stdin.write('\r'); // Finish
    let f = await frame(r, (x) => x.includes('Check this machine'));
    const item = f.split('\n').findIndex((l) => l.includes('Check this machine'));
    const first = f.split('\n').findIndex((l) => l.includes('Write to a directory'));
    r.stdin.write(String(item - first + 1));
    f = await frame(r, (x) => x.includes('Checks: 2 FAIL, 1 WARN, 9 PASS, 1 SKIP'));
    expect(runChecks).toHaveBeenCalledTimes(1);
    expect(asked).toEqual({ steps: 2, cwd: dir });
    expect(f).toContain('FAIL python  /venv/bin/python -m pip install deepspeed');
    expect(f).toContain('FAIL shm  docker run --shm-size=16g');
    r.unmount();
  });

  it('the machine: the entry comes with steps, runs once per choice, keeps the result, says again', () => {
    const ctx = { steps: 2, defaultConfigPath: 'x', checks: true };
    expect(finishItems(FINISH_START, ctx).map((i) => i.id)).toEqual([
      'dir',
      'default',
      'preset',
      'launch',
      'check',
      'back',
      'quit',
    ]);
    expect(finishItems(FINISH_START, { ...ctx, steps: 0 }).map((i) => i.id)).not.toContain('check');
    let s = finishReducer(FINISH_START, { type: 'choose', item: 'check' });
    expect(s.step).toEqual({ step: 'checking', after: 'menu' });
    expect(finishEffect(s)).toEqual({ kind: 'check' });
    s = finishReducer(s, { type: 'checked', summary: 'Checks: 1 FAIL, 12 PASS', lines: ['FAIL shm  x'] });
    expect(s.step).toEqual({ step: 'menu' });
    expect(finishEffect(s)).toBeNull();
    expect(s.checks).toEqual({ summary: 'Checks: 1 FAIL, 12 PASS', lines: ['FAIL shm  x'] });
    expect(finishItems(s, ctx).find((i) => i.id === 'check')?.label).toBe('Check this machine again (zerowiz check)');
    const failed = finishReducer(finishReducer(s, { type: 'choose', item: 'check' }), {
      type: 'checkFailed',
      error: 'boom',
    });
    expect(failed.note).toBe('the checks could not run: boom');
  });
});

describe('the finish screen says how long the run takes', () => {
  it("gives the setup's step time and the pipeline's ETA from DiffSynth's epochs and the metadata's samples", async () => {
    const seed = findPreset('qwen-image-lora-lowvram');
    const dir = mkdtempSync(join(tmpdir(), 'zw-finish-eta-'));
    mkdirSync(join(dir, 'data', 'example_image_dataset'), { recursive: true });
    writeFileSync(
      join(dir, 'data', 'example_image_dataset', 'metadata.csv'),
      `image,prompt\n${Array.from({ length: 40 }, (_, i) => `${i}.jpg,a cat`).join('\n')}\n`,
    );
    const r = render(
      <App
        deps={standInDeps({ listPresets: () => ({ presets: [seed], problems: [] }), paths: { env: {}, cwd: dir } })}
        onExit={vi.fn()}
      />,
    );
    await frame(r, (x) => x.includes('Start from a preset'));
    await listening(r);
    r.stdin.write('2');
    await frame(r, (x) => x.includes('qwen-image-lora-lowvram'));
    r.stdin.write('\r');
    await frame(r, (x) => x.includes('→ Finish'));
    r.stdin.write('\r');
    const f = (await frame(r, (x) => x.includes('Write to a directory'))).replace(/\s*\n\s*/g, ' ');
    // 5 epochs of 40 samples x 50 (--dataset_repeat) on one GPU, one sample a step: 10,000 steps.
    expect(f).toMatch(/Run: ZeRO-3 offload [\d.]+-[\d.]+ s\/step \(offload bounds it/);
    expect(f).toMatch(
      /ETA \d+h\d+m \(\d+h\d+m-\d+h\d+m\), [\d.]+ GPU-hours: 10000 steps \(5 epochs of 40 samples x 50/,
    );
    expect(f).toContain('GPU-hours');
    r.unmount();
  });
});
