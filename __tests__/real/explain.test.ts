/**
 * `zerowiz explain` against the real accelerate 1.15.0: each source explain names is flipped in turn (a value
 * in the accelerate YAML, in the DeepSpeed JSON, a launch flag, an ACCELERATE_* variable of the environment,
 * accelerate's default config file, the script's Accelerator(...) arguments and DataLoader, a preset's answer),
 * and what the real accelerate hands deepspeed.initialize (recorded by the DeepSpeed stand-in, through
 * harness.py: accelerate's loader, its launch parser and launcher's environment builder, then Accelerator() +
 * prepare()) must change exactly as explain predicted: the whole dict equals explain's for both sides, the
 * flipped key differs between them, and explain names the flipped source for it.
 *
 * DeepSpeed's own defaults (for keys the dict leaves out) are DeepSpeed's, which cannot run here: for them the
 * tier proves that accelerate leaves the key out, which is where explain says the default applies.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { dumpYaml } from '../../src/config/emit.js';
import { explainCommand, explainSetup } from '../../src/explain/explain.js';
import type { ScriptContext, Source, StepExplanation } from '../../src/explain/provenance.js';
import { withDefaults, type Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES, toLaunchCommands, type Setup } from '../../src/config/setup.js';
import { asRecorded, runHarness, tempDir, writeSetup, type HarnessCase, type HarnessResult } from './real.js';

/** What the probe script does unless a case changes it. */
const PROBE = { accum: 2, micro: 4, hidden: 16, mixed: null as ScriptContext['mixedPrecision'] };

interface Side {
  id: string;
  /** The accelerate YAML (null: the step passes no --config_file). */
  yaml: Record<string, unknown> | null;
  /** The DeepSpeed JSON the YAML names (absent: none). */
  json?: Record<string, unknown>;
  args?: string[];
  env?: Record<string, string>;
  probe?: Partial<typeof PROBE>;
  /** A preset's setup instead of files (written as zerowiz writes them; its one step's argv). */
  setup?: Setup;
}

interface Flip {
  source: Source;
  key: string;
  a: Side;
  b: Side;
  /** Which default config file the harness process reads (accelerate fixes its path at import). */
  home?: 'one' | 'two';
}

const AUTO_JSON = {
  fp16: { enabled: 'auto' },
  bf16: { enabled: 'auto' },
  zero_optimization: { stage: 'auto', offload_optimizer: { device: 'auto' } },
  gradient_accumulation_steps: 'auto',
  gradient_clipping: 'auto',
  train_batch_size: 'auto',
  train_micro_batch_size_per_gpu: 'auto',
};
const acc = (ds: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
  compute_environment: 'LOCAL_MACHINE',
  distributed_type: 'DEEPSPEED',
  num_machines: 1,
  num_processes: 1,
  deepspeed_config: { zero3_init_flag: false, ...ds },
  ...top,
});
const withJson = (ds: Record<string, unknown> = {}, top: Record<string, unknown> = {}) =>
  acc({ deepspeed_config_file: 'JSON', ...ds }, top);
const preset = (given: Partial<Answers>): Setup => ({
  name: 'flip',
  answers: withDefaults({ num_processes: 1, ...given }),
  files: { ...DEFAULT_FILES },
  steps: [{ name: 'train', args: ['train.py'], usesConfig: true }],
});

const FLIPS: Flip[] = [
  {
    source: 'accelerate-yaml',
    key: 'zero_optimization.stage',
    a: { id: 'yaml stage 1', yaml: acc({ zero_stage: 1 }) },
    b: { id: 'yaml stage 3', yaml: acc({ zero_stage: 3 }) },
  },
  {
    source: 'accelerate-yaml',
    key: 'gradient_accumulation_steps',
    a: { id: 'yaml accumulation 1', yaml: acc({ zero_stage: 2, gradient_accumulation_steps: 1 }) },
    b: { id: 'yaml accumulation 4', yaml: acc({ zero_stage: 2, gradient_accumulation_steps: 4 }) },
  },
  {
    source: 'deepspeed-json',
    key: 'zero_optimization.stage',
    a: { id: 'json stage 1', yaml: withJson(), json: { ...AUTO_JSON, zero_optimization: { stage: 1 } } },
    b: { id: 'json stage 3', yaml: withJson(), json: { ...AUTO_JSON, zero_optimization: { stage: 3 } } },
  },
  {
    source: 'deepspeed-json',
    key: 'gradient_accumulation_steps',
    a: {
      id: 'json accumulation 2 (the script says 2)',
      yaml: withJson(),
      json: { ...AUTO_JSON, gradient_accumulation_steps: 2 },
    },
    b: {
      id: "json accumulation 4 over the script's 2",
      yaml: withJson(),
      json: { ...AUTO_JSON, gradient_accumulation_steps: 4 },
    },
  },
  {
    source: 'launch-flag',
    key: 'zero_optimization.stage',
    a: { id: '--zero_stage 1 into "auto"', yaml: withJson(), json: AUTO_JSON, args: ['--zero_stage', '1'] },
    b: { id: '--zero_stage 3 into "auto"', yaml: withJson(), json: AUTO_JSON, args: ['--zero_stage', '3'] },
  },
  {
    source: 'launch-flag',
    key: 'fp16.enabled',
    a: { id: '--mixed_precision bf16', yaml: withJson(), json: AUTO_JSON, args: ['--mixed_precision', 'bf16'] },
    b: { id: '--mixed_precision fp16', yaml: withJson(), json: AUTO_JSON, args: ['--mixed_precision', 'fp16'] },
  },
  {
    source: 'launch-flag',
    key: 'launch.num_processes',
    a: { id: 'yaml num_processes 1', yaml: acc({ zero_stage: 2 }) },
    b: { id: '--num_processes 2 over the yaml', yaml: acc({ zero_stage: 2 }), args: ['--num_processes', '2'] },
  },
  {
    source: 'environment',
    key: 'gradient_accumulation_steps',
    a: {
      id: 'ACCELERATE_GRADIENT_ACCUMULATION_STEPS=3',
      yaml: withJson(),
      json: AUTO_JSON,
      env: { ACCELERATE_GRADIENT_ACCUMULATION_STEPS: '3' },
    },
    b: {
      id: 'ACCELERATE_GRADIENT_ACCUMULATION_STEPS=5',
      yaml: withJson(),
      json: AUTO_JSON,
      env: { ACCELERATE_GRADIENT_ACCUMULATION_STEPS: '5' },
    },
  },
  {
    source: 'environment',
    key: 'zero_optimization.offload_optimizer.device',
    a: {
      id: 'ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE=none',
      yaml: withJson(),
      json: AUTO_JSON,
      env: { ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE: 'none' },
    },
    b: {
      id: 'ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE=cpu',
      yaml: withJson(),
      json: AUTO_JSON,
      env: { ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE: 'cpu' },
    },
  },
  {
    source: 'default-config',
    key: 'zero_optimization.stage',
    home: 'two',
    a: { id: 'no --config_file, default config one', yaml: null },
    b: { id: 'no --config_file, default config two', yaml: null },
  },
  {
    source: 'script',
    key: 'gradient_accumulation_steps',
    a: { id: 'Accelerator(gradient_accumulation_steps=2)', yaml: withJson(), json: AUTO_JSON },
    b: { id: 'Accelerator(gradient_accumulation_steps=3)', yaml: withJson(), json: AUTO_JSON, probe: { accum: 3 } },
  },
  {
    source: 'script',
    key: 'train_micro_batch_size_per_gpu',
    a: { id: 'DataLoader(batch_size=4)', yaml: withJson(), json: AUTO_JSON },
    b: { id: 'DataLoader(batch_size=2)', yaml: withJson(), json: AUTO_JSON, probe: { micro: 2 } },
  },
  {
    source: 'script',
    key: 'bf16.enabled',
    a: { id: "Accelerator(mixed_precision='fp16')", yaml: withJson(), json: AUTO_JSON, probe: { mixed: 'fp16' } },
    b: {
      id: "Accelerator(mixed_precision='bf16') over --mixed_precision fp16",
      yaml: withJson(),
      json: AUTO_JSON,
      args: ['--mixed_precision', 'fp16'],
      probe: { mixed: 'bf16' },
    },
  },
  {
    source: 'script',
    key: 'zero_optimization.reduce_bucket_size',
    a: {
      id: 'model.config.hidden_size 16',
      yaml: withJson(),
      json: { ...AUTO_JSON, zero_optimization: { stage: 2, reduce_bucket_size: 'auto' } },
    },
    b: {
      id: 'model.config.hidden_size 8',
      yaml: withJson(),
      json: { ...AUTO_JSON, zero_optimization: { stage: 2, reduce_bucket_size: 'auto' } },
      probe: { hidden: 8 },
    },
  },
  {
    source: 'accelerate-default',
    key: 'gradient_accumulation_steps',
    a: { id: 'json accumulation 3', yaml: withJson(), json: { ...AUTO_JSON, gradient_accumulation_steps: 3 } },
    b: {
      id: 'json without accumulation (accelerate writes 1)',
      yaml: withJson(),
      json: Object.fromEntries(Object.entries(AUTO_JSON).filter(([k]) => k !== 'gradient_accumulation_steps')),
    },
  },
  {
    source: 'preset',
    key: 'zero_optimization.stage',
    a: { id: 'preset mode 2', yaml: null, setup: preset({ mode: '2' }) },
    b: { id: 'preset mode 3', yaml: null, setup: preset({ mode: '3' }) },
  },
];

/** A config accelerate refuses (not a flip: both explain and accelerate must say no). */
const REFUSAL: Side = {
  id: 'mixed_precision beside a JSON',
  yaml: withJson({}, { mixed_precision: 'bf16' }),
  json: AUTO_JSON,
};

/** Each default config file the harness runs with: what a step without --config_file gets. */
const HOMES = {
  one: acc({ zero_stage: 1 }, { mixed_precision: 'bf16' }),
  two: acc({ zero_stage: 3 }, { mixed_precision: 'bf16' }),
};

let results = new Map<string, HarnessResult>();
const predicted = new Map<string, StepExplanation>();

function scriptOf(p: Side['probe']): ScriptContext {
  const x = { ...PROBE, ...p };
  return {
    batchSize: x.micro,
    accumulation: x.accum,
    mixedPrecision: x.mixed,
    hiddenSize: x.hidden,
    torchOptimizer: true,
  };
}

beforeAll(async () => {
  const root = tempDir('zw-explain-real-');
  const homes = Object.fromEntries(
    (['one', 'two'] as const).map((h) => {
      const hf = join(root, `hf-${h}`);
      mkdirSync(join(hf, 'accelerate'), { recursive: true });
      writeFileSync(join(hf, 'accelerate', 'default_config.yaml'), dumpYaml(HOMES[h]));
      return [h, hf];
    }),
  ) as Record<'one' | 'two', string>;
  const batches: Record<'one' | 'two', HarnessCase[]> = { one: [], two: [] };
  let n = 0;
  const runs: { a: Side; b: Side | null; home?: 'one' | 'two' }[] = [...FLIPS, { a: REFUSAL, b: null }];
  for (const f of runs) {
    for (const [which, side] of [
      ['a', f.a],
      ['b', f.b],
    ] as const) {
      if (side === null) continue;
      const dir = join(root, `c${n++}`);
      mkdirSync(dir, { recursive: true });
      const home = f.home === 'two' && which === 'b' ? 'two' : 'one';
      const env = { ...(side.env ?? {}) };
      const ctxEnv = { HF_HOME: homes[home], ...env };
      const script = scriptOf(side.probe);
      let args: string[];
      let yamlPath: string | null = null;
      if (side.setup) {
        const placed = await writeSetup(side.setup, dir);
        args = toLaunchCommands(placed)[0]!.argv.slice(1, -1);
        predicted.set(
          side.id,
          explainSetup(
            placed,
            { mode: side.setup.answers.mode },
            { kind: 'preset', name: 'flip', path: null },
            {
              cwd: dir,
              env: ctxEnv,
              script,
              worldSize: 1,
            },
          ).steps[0]!,
        );
      } else {
        if (side.json) writeFileSync(join(dir, 'ds.json'), JSON.stringify(side.json));
        if (side.yaml) {
          const y = structuredClone(side.yaml);
          const ds = y.deepspeed_config as Record<string, unknown>;
          if (ds.deepspeed_config_file === 'JSON') ds.deepspeed_config_file = join(dir, 'ds.json');
          yamlPath = join(dir, 'accelerate_config.yaml');
          writeFileSync(yamlPath, dumpYaml(y));
        }
        args = [...(yamlPath ? ['--config_file', yamlPath] : []), ...(side.args ?? [])];
        predicted.set(
          side.id,
          explainCommand([...args, 'train.py'], { cwd: dir, env: ctxEnv, script, worldSize: 1 }, side.id),
        );
      }
      const x = { ...PROBE, ...side.probe };
      batches[home].push({
        id: side.id,
        yaml: side.setup ? args[args.indexOf('--config_file') + 1]! : yamlPath,
        launch_args: side.setup
          ? args.filter((_a, i) => i !== args.indexOf('--config_file') && i !== args.indexOf('--config_file') + 1)
          : (side.args ?? []),
        prepare: true,
        record: join(dir, 'rec'),
        env,
        probe_env: {
          ZEROWIZ_PROBE_ACCUM: String(x.accum),
          ZEROWIZ_PROBE_MICRO: String(x.micro),
          ZEROWIZ_PROBE_HIDDEN: String(x.hidden),
          ...(x.mixed ? { ZEROWIZ_PROBE_MIXED_PRECISION: x.mixed } : {}),
        },
      });
    }
  }
  results = new Map([
    ...runHarness(batches.one, { HF_HOME: homes.one }),
    ...runHarness(batches.two, { HF_HOME: homes.two }),
  ]);
});

function side(id: string) {
  const r = results.get(id);
  const p = predicted.get(id);
  if (!r || !p) throw new Error(`no result for ${id}`);
  return { r, p };
}

describe('explain against the real accelerate: each source flipped in turn', () => {
  it.each(FLIPS.map((f) => [`${f.source}: ${f.key}: ${f.a.id} -> ${f.b.id}`, f] as const))('%s', (_name, f) => {
    for (const s of [f.a, f.b]) {
      const { r, p } = side(s.id);
      expect(r.load_error, s.id).toBeUndefined();
      expect(r.launch_error, s.id).toBeUndefined();
      expect({ id: s.id, error: r.prepare_error ?? null, predicted: p.errors }).toEqual({
        id: s.id,
        error: null,
        predicted: [],
      });
      // Everything accelerate hands DeepSpeed is what explain said, value for value.
      expect({ id: s.id, dict: r.record?.config }).toEqual({ id: s.id, dict: asRecorded(p.dict) });
      expect({ id: s.id, accumulation: r.probe?.gradient_accumulation_steps }).toEqual({
        id: s.id,
        accumulation: p.accumulation,
      });
      expect({ id: s.id, zeroInit: r.probe?.zero3_init_flag }).toEqual({ id: s.id, zeroInit: p.zeroInit });
    }
    const va = side(f.a.id).p.values.find((v) => v.key === f.key);
    const vb = side(f.b.id).p.values.find((v) => v.key === f.key);
    // The flip changes the value explain shows, and explain names the flipped source for it.
    expect(va?.value).not.toEqual(vb?.value);
    expect({ key: f.key, source: vb?.source }).toEqual({ key: f.key, source: f.source });
    if (!f.key.startsWith('launch.')) {
      const rec = (id: string) => {
        let cur: unknown = side(id).r.record?.config;
        for (const k of f.key.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[k];
        return cur;
      };
      expect([rec(f.a.id), rec(f.b.id)]).toEqual([va?.value, vb?.value]);
    } else {
      // accelerate's own values: the launch command the builder made.
      const launched = (id: string) => Number(side(id).r.launch?.num_processes);
      expect([launched(f.a.id), launched(f.b.id)]).toEqual([va?.value, vb?.value]);
    }
  });

  it("what explain calls DeepSpeed's default is a key accelerate leaves out of the dict", () => {
    const { r, p } = side('json stage 3');
    const defaults = p.values.filter((v) => v.source === 'deepspeed-default').map((v) => v.key);
    expect(defaults).toContain('zero_optimization.overlap_comm');
    for (const key of defaults) {
      let cur: unknown = r.record?.config;
      for (const k of key.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[k];
      expect({ key, recorded: cur }).toEqual({ key, recorded: undefined });
    }
  });

  it('a refusal explain predicts is the one accelerate raises: mixed_precision in the YAML beside a JSON', () => {
    const { r, p } = side(REFUSAL.id);
    expect(p.errors.join()).toMatch(/accelerate refuses mixed_precision/);
    expect(r.prepare_error).toMatch(/following accelerate config variables will be ignored/);
  });
});
