/**
 * The real questionnaire: `accelerate config` from the venv, driven in a pseudo-terminal for seven answer sets
 * (stages 0-3; offload none, cpu and nvme, with the optimizer and the parameters on different devices in two;
 * one and two machines; with and without an existing DeepSpeed JSON). Each YAML it writes is imported with
 * zerowiz and written back; both go through the real accelerate (harness.py: loader, launch builder and
 * prepare()), and what the two configs mean to DeepSpeed must be the same. The order in which accelerate
 * asked (read from the transcripts) must be the catalog's order.
 *
 * One difference is by design: accelerate never passes the NVMe paths of its own YAML on to DeepSpeed (they
 * reach DeepSpeed as the string "none"); zerowiz writes the path that was typed into the JSON.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { deepSpeedMeaning } from '../../src/explain/effective.js';
import { importAccelerateConfig, type ImportResult } from '../../src/setups/import.js';
import { QUESTIONS, type Question, type QuestionId } from '../../src/config/questions.js';
import type { Setup } from '../../src/config/setup.js';
import { validate } from '../../src/rules/validate.js';
import { configTexts } from '../../src/config/files.js';
import { ROOT } from '../helpers/paths.js';
import {
  asRecorded,
  driveAccelerateConfig,
  freePort,
  runHarness,
  tempDir,
  writeSetup,
  type ConfigSession,
  type HarnessResult,
  type QuestionStep,
} from './real.js';

const DOWN = '\x1b[B';
const UP = '\x1b[A';
/** A menu answer: move from the highlighted default to `index`, then Enter. */
const menu = (index: number, from = 0) => ({
  keys: `${index > from ? DOWN.repeat(index - from) : UP.repeat(from - index)}\r`,
  menu: true,
});
const text = (v: string) => `${v}\r`;

/** The committed copies of what the real accelerate wrote (unit tests import them without Python). */
const FIXTURES = join(ROOT, '__tests__', 'fixtures', 'accelerate-real');

interface AnswerSet {
  name: string;
  /** The file name of the committed copy. */
  fixture: string;
  steps: (ctx: { port: number; hostfile: string; json: string }) => QuestionStep[];
}

const start = (machines: QuestionStep[]): QuestionStep[] => [
  { expect: 'In which compute environment are you running?', ...menu(0) },
  { expect: 'Which type of machine are you using?', ...menu(4) },
  ...machines,
  { expect: 'Should distributed operations be checked', keys: text('no') },
  { expect: 'optimize your script with torch dynamo', keys: text('no') },
  { expect: 'Do you want to use DeepSpeed?', keys: text('yes') },
];
const oneMachine: QuestionStep[] = [{ expect: 'How many different machines', keys: text('1') }];
const twoMachines = (rank: number, port: number, sameNetwork: boolean): QuestionStep[] => [
  { expect: 'How many different machines', keys: text('2') },
  { expect: 'What is the rank of this machine?', ...menu(rank) },
  { expect: 'IP address of the machine that will host the main process', keys: text('127.0.0.2') },
  { expect: 'port you will use to communicate', keys: text(String(port)) },
  { expect: 'same local network', keys: text(sameNetwork ? 'yes' : 'no') },
  ...(sameNetwork ? [] : [{ expect: 'What rendezvous backend will you use?', keys: text('c10d') }]),
];
const noJson = (stage: number): QuestionStep[] => [
  { expect: 'json file to a DeepSpeed config', keys: text('no') },
  { expect: "DeepSpeed's ZeRO optimization stage?", ...menu(stage, 2) },
];
const offload = (optimizer: number, param: number): QuestionStep[] => [
  { expect: 'Where to offload optimizer states?', ...menu(optimizer) },
  { expect: 'Where to offload parameters?', ...menu(param) },
];
const tail = (o: { clip?: string; gas?: string; save16?: boolean; init: boolean; gpus: number; mp?: number }) => [
  { expect: 'gradient accumulation steps', keys: text(o.gas ?? '1') },
  { expect: 'use gradient clipping?', keys: text(o.clip ? 'yes' : 'no') },
  ...(o.clip ? [{ expect: 'gradient clipping value?', keys: text(o.clip) }] : []),
  ...(o.save16 !== undefined ? [{ expect: 'save 16-bit model weights', keys: text(o.save16 ? 'yes' : 'no') }] : []),
  { expect: 'deepspeed.zero.Init', keys: text(o.init ? 'yes' : 'no') },
  { expect: 'Mixture-of-Experts', keys: text('no') },
];
const gpus = (n: number, mp?: number): QuestionStep[] => [
  { expect: 'How many GPU(s) should be used for distributed training?', keys: text(String(n)) },
  ...(mp !== undefined ? [{ expect: 'Do you wish to use mixed precision?', ...menu(mp) }] : []),
];
const NO = 0;
const FP16 = 1;
const BF16 = 2;
const CPU = 1;
const NVME = 2;

const SETS: AnswerSet[] = [
  {
    name: 'stage 0, one machine, no mixed precision',
    fixture: 'stage0.yaml',
    steps: () => [...start(oneMachine), ...noJson(0), ...tail({ init: false, gpus: 2 }), ...gpus(2, NO)],
  },
  {
    name: 'stage 1, bf16, 4 accumulation steps, clipping 0.5',
    fixture: 'stage1-bf16.yaml',
    steps: () => [
      ...start(oneMachine),
      ...noJson(1),
      ...tail({ gas: '4', clip: '0.5', init: false, gpus: 8 }),
      ...gpus(8, BF16),
    ],
  },
  {
    name: 'stage 2, optimizer on cpu, fp16, two machines with pdsh (rank 0)',
    fixture: 'stage2-cpu-pdsh.yaml',
    steps: ({ port, hostfile }) => [
      ...start(twoMachines(0, port, true)),
      ...noJson(2),
      ...offload(CPU, 0),
      ...tail({ init: false, gpus: 16 }),
      { expect: 'Which Type of launcher do you want to use?', ...menu(0) },
      { expect: 'Please specify the location of hostfile', keys: text(hostfile) },
      { expect: 'specify exclusion filter string?', keys: text('no') },
      { expect: 'specify inclusion filter string?', keys: text('no') },
      ...gpus(16, FP16),
    ],
  },
  {
    name: 'stage 3, optimizer on cpu and parameters on nvme (split), bf16, zero.Init, 16-bit save',
    fixture: 'stage3-split-cpu-nvme.yaml',
    steps: () => [
      ...start(oneMachine),
      ...noJson(3),
      ...offload(CPU, NVME),
      { expect: 'Nvme Path to offload parameters?', keys: text('/local_nvme') },
      ...tail({ gas: '4', save16: true, init: true, gpus: 8 }),
      ...gpus(8, BF16),
    ],
  },
  {
    name: 'stage 3, parameters on cpu and the optimizer on the GPUs (split), fp16',
    fixture: 'stage3-params-cpu.yaml',
    steps: () => [
      ...start(oneMachine),
      ...noJson(3),
      ...offload(NO, CPU),
      ...tail({ save16: false, init: true, gpus: 4 }),
      ...gpus(4, FP16),
    ],
  },
  {
    name: 'stage 3, everything on nvme, two machines with the standard launcher (rank 1, not on one network)',
    fixture: 'stage3-nvme-standard.yaml',
    steps: ({ port }) => [
      ...start(twoMachines(1, port, false)),
      ...noJson(3),
      ...offload(NVME, NVME),
      { expect: 'Nvme Path to offload parameters?', keys: text('/local_nvme') },
      { expect: 'Nvme Path to offload optimizer states?', keys: text('/local_nvme') },
      ...tail({ save16: true, init: false, gpus: 16 }),
      { expect: 'Which Type of launcher do you want to use?', ...menu(1) },
      ...gpus(16, BF16),
    ],
  },
  {
    name: 'an existing DeepSpeed JSON (bf16 on, fp16 "auto"), zero.Init',
    fixture: 'with-json.yaml',
    steps: ({ json }) => [
      ...start(oneMachine),
      { expect: 'json file to a DeepSpeed config', keys: text('yes') },
      { expect: 'path to the json DeepSpeed config file', keys: text(json) },
      { expect: 'deepspeed.zero.Init', keys: text('yes') },
      { expect: 'Mixture-of-Experts', keys: text('no') },
      ...gpus(8),
    ],
  },
];

/** A user's existing DeepSpeed JSON, as the DeepSpeed/HF docs write them: bf16 on, fp16 left "auto". */
const EXISTING_JSON = {
  bf16: { enabled: true },
  fp16: { enabled: 'auto' },
  zero_optimization: { stage: 3, overlap_comm: true, stage3_gather_16bit_weights_on_model_save: true },
  gradient_accumulation_steps: 'auto',
  gradient_clipping: 'auto',
  train_batch_size: 'auto',
  train_micro_batch_size_per_gpu: 'auto',
};

interface Done {
  set: AnswerSet;
  session: ConfigSession;
  yamlPath: string;
  imported: ImportResult;
  written: Setup;
}

const done: Done[] = [];
let results = new Map<string, HarnessResult>();
const defaultConfig = { path: '', imported: null as ImportResult | null, written: null as Setup | null };

beforeAll(async () => {
  const dir = tempDir('zw-questionnaire-');
  const port = await freePort();
  const hostfile = join(dir, 'hostfile');
  writeFileSync(hostfile, 'node1 slots=8\nnode2 slots=8\n');
  const json = join(dir, 'ds_existing.json');
  writeFileSync(json, `${JSON.stringify(EXISTING_JSON, null, 2)}\n`);
  for (const [i, set] of SETS.entries()) {
    const yamlPath = join(dir, `accelerate-${i}.yaml`);
    const session = await driveAccelerateConfig(yamlPath, set.steps({ port, hostfile, json }));
    if (session.code !== 0)
      throw new Error(`accelerate config failed for ${set.name}:\n${session.transcript.slice(-3000)}`);
    const imported = importAccelerateConfig(yamlPath, dir);
    const written = await writeSetup(imported.setup, join(dir, `zerowiz-${i}`));
    done.push({ set, session, yamlPath, imported, written });
  }
  // `accelerate config default` on this machine (no GPU): JSON text in a .yaml file, use_cpu true.
  const { spawnSync } = await import('node:child_process');
  const { VENV_BIN, realEnv } = await import('./real.js');
  defaultConfig.path = join(dir, 'default_config.yaml');
  const r = spawnSync(join(VENV_BIN, 'accelerate'), ['config', 'default', '--config_file', defaultConfig.path], {
    env: realEnv(),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`accelerate config default failed: ${r.stderr}`);
  defaultConfig.imported = importAccelerateConfig(defaultConfig.path, dir);
  defaultConfig.written = await writeSetup(defaultConfig.imported.setup, join(dir, 'zerowiz-default'));
  const probe = { ZEROWIZ_PROBE_ACCUM: '2', ZEROWIZ_PROBE_MICRO: '4', ZEROWIZ_PROBE_HIDDEN: '16' };
  results = runHarness([
    ...done.flatMap((d, i) => [
      { id: `accelerate ${i}`, yaml: d.yamlPath, prepare: true, record: join(dir, `rec-a-${i}`), probe_env: probe },
      {
        id: `zerowiz ${i}`,
        yaml: d.written.files.accelerateConfig,
        prepare: true,
        record: join(dir, `rec-z-${i}`),
        probe_env: probe,
      },
    ]),
    { id: 'accelerate default', yaml: defaultConfig.path, record: join(dir, 'rec-default-a') },
    {
      id: 'zerowiz default',
      yaml: defaultConfig.written.files.accelerateConfig,
      prepare: true,
      record: join(dir, 'rec-default-z'),
      probe_env: probe,
    },
  ]);
});

function pair(i: number): [HarnessResult, HarnessResult] {
  const a = results.get(`accelerate ${i}`);
  const z = results.get(`zerowiz ${i}`);
  if (!a || !z) throw new Error(`no harness results for set ${i}`);
  return [a, z];
}

/** A meaning with NVMe paths set aside (accelerate's own YAML reaches DeepSpeed with "none"). */
function withoutNvmePaths(m: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(m);
  for (const k of ['offload_optimizer', 'offload_param']) delete (out[k] as Record<string, unknown>).nvme_path;
  return out;
}

describe('the real accelerate config, imported by zerowiz: the same training', () => {
  it.each(SETS.map((s, i) => [s.name, i] as const))('%s', (_name, i) => {
    const d = done[i]!;
    const [a, z] = pair(i);
    for (const r of [a, z]) {
      expect(r.load_error).toBeUndefined();
      expect(r.launch_error).toBeUndefined();
      expect(r.prepare_error, r.prepare_trace).toBeUndefined();
    }
    const ma = deepSpeedMeaning(a.record!.config);
    const mz = deepSpeedMeaning(z.record!.config);
    expect(withoutNvmePaths(mz)).toEqual(withoutNvmePaths(ma));
    // NVMe: accelerate passes "none"; zerowiz the path that was typed.
    for (const k of ['offload_optimizer', 'offload_param'] as const) {
      const dz = mz[k] as { device: string; nvme_path?: string };
      const da = ma[k] as { device: string; nvme_path?: string };
      if (dz.device === 'nvme') {
        expect(da.nvme_path).toBe('none');
        expect(dz.nvme_path).toBe('/local_nvme');
      }
    }
    expect(z.probe?.zero3_init_flag).toBe(a.probe?.zero3_init_flag);
    expect(z.probe?.gradient_accumulation_steps).toBe(a.probe?.gradient_accumulation_steps);
    // The same processes: the launcher's command (multi-node) and its torchrun arguments.
    expect(z.cmd).toEqual(a.cmd);
    expect(z.torchrun_config ?? null).toEqual(a.torchrun_config ?? null);
    expect(d.session.transcript).toContain('accelerate configuration saved at');
  });

  it('with an existing JSON, the YAML zerowiz writes is the one accelerate config wrote, but for the JSON path', () => {
    const i = SETS.findIndex((s) => s.fixture === 'with-json.yaml');
    const d = done[i]!;
    const ours = configTexts(d.written).yaml;
    const theirs = readFileSync(d.yamlPath, 'utf8').replace(
      /deepspeed_config_file: .*/,
      `deepspeed_config_file: ${d.written.files.dsConfig}`,
    );
    expect(ours).toBe(theirs);
  });

  it('each file the real accelerate wrote is the committed copy that the unit tests import (paths aside)', () => {
    if (process.env.ZEROWIZ_WRITE_FIXTURES === '1') {
      // Refreshing the copies (after an accelerate upgrade): the paths and the port become stable values.
      mkdirSync(FIXTURES, { recursive: true });
      for (const d of done)
        writeFileSync(
          join(FIXTURES, d.set.fixture),
          readFileSync(d.yamlPath, 'utf8')
            .replace(/deepspeed_hostfile: .*/, 'deepspeed_hostfile: hostfile')
            .replace(/deepspeed_config_file: .*/, 'deepspeed_config_file: ds_existing.json')
            .replace(/main_process_port: \d+/, 'main_process_port: 29500'),
        );
      writeFileSync(join(FIXTURES, 'default_config.yaml'), readFileSync(defaultConfig.path, 'utf8'));
      writeFileSync(join(FIXTURES, 'ds_existing.json'), `${JSON.stringify(EXISTING_JSON, null, 2)}\n`);
      writeFileSync(join(FIXTURES, 'hostfile'), 'node1 slots=8\nnode2 slots=8\n');
    }
    const norm = (t: string) =>
      t
        .replace(/(deepspeed_hostfile|deepspeed_config_file): .*/g, '$1: <path>')
        .replace(/main_process_port: \d+/, 'main_process_port: <port>');
    for (const d of done) {
      const committed = readFileSync(join(FIXTURES, d.set.fixture), 'utf8');
      expect({ file: d.set.fixture, text: norm(readFileSync(d.yamlPath, 'utf8')) }).toEqual({
        file: d.set.fixture,
        text: norm(committed),
      });
    }
    expect(readFileSync(defaultConfig.path, 'utf8')).toBe(readFileSync(join(FIXTURES, 'default_config.yaml'), 'utf8'));
  });
});

describe('imports of real accelerate files: the parity fixes', () => {
  it('`accelerate config default` (JSON in YAML, use_cpu: true): zerowiz does not carry use_cpu into a DeepSpeed config, and accelerate launches it with DeepSpeed', () => {
    const a = results.get('accelerate default')!;
    expect(a.loaded?.use_cpu).toBe(true);
    expect(a.launcher).toBe('simple'); // what accelerate does with the file itself: no DeepSpeed
    const yaml = configTexts(defaultConfig.written!).yaml;
    expect(yaml).toContain('use_cpu: false');
    expect(defaultConfig.imported!.kept).not.toContain('use_cpu');
    const z = results.get('zerowiz default')!;
    expect(z.launcher).toBe('deepspeed');
    expect(z.prepare_error, z.prepare_trace).toBeUndefined();
    expect(z.probe?.distributed_type).toBe('DistributedType.DEEPSPEED');
  });

  it('a stage-0 import says stage 0 and never "stage 2", and writes stage 0 back', () => {
    const i = SETS.findIndex((s) => s.fixture === 'stage0.yaml');
    const d = done[i]!;
    const findings = [...d.imported.findings, ...validate(d.imported.setup)];
    expect(findings.filter((f) => /stage 2/i.test(f.message))).toEqual([]);
    expect(findings.map((f) => f.rule)).toContain('zero-stage-0');
    expect(pair(i)[1].record!.config).toMatchObject({ zero_optimization: { stage: 0 } });
  });

  it('no "fp16/bf16 are auto" warning when the JSON zerowiz writes has bf16 on', () => {
    const i = SETS.findIndex((s) => s.fixture === 'with-json.yaml');
    const d = done[i]!;
    const json = JSON.parse(configTexts(d.written).json) as { bf16: { enabled: unknown } };
    expect(json.bf16.enabled).toBe(true);
    expect(validate(d.written).map((f) => f.rule)).not.toContain('precision-auto-fp32');
    expect(asRecorded(pair(i)[1].record!.config)).toMatchObject({ bf16: { enabled: true }, fp16: { enabled: false } });
  });
});

describe("zerowiz asks accelerate config's questions in accelerate config's order", () => {
  const withPrompt = (QUESTIONS as readonly Question[]).filter((q) => q.acceleratePrompt !== undefined);
  const order = new Map<QuestionId, number>(QUESTIONS.map((q, i) => [q.id as QuestionId, i]));

  /** The catalog questions a transcript asked, in the order accelerate asked them. */
  const asked = (transcript: string): QuestionId[] =>
    withPrompt
      .map((q) => ({ id: q.id as QuestionId, at: transcript.indexOf(q.acceleratePrompt!.trim()) }))
      .filter((x) => x.at >= 0)
      .sort((x, y) => x.at - y.at)
      .map((x) => x.id);

  it('every acceleratePrompt of the catalog is a question the real accelerate config asks', () => {
    const all = done.map((d) => d.session.transcript).join('\n');
    expect(withPrompt.filter((q) => !all.includes(q.acceleratePrompt!.trim())).map((q) => q.id)).toEqual([]);
  });

  it.each(SETS.map((s, i) => [s.name, i] as const))('%s: the order of the transcript is the catalog order', (_n, i) => {
    const ids = asked(done[i]!.session.transcript);
    expect(ids.length).toBeGreaterThan(5);
    expect(ids).toEqual([...ids].sort((x, y) => order.get(x)! - order.get(y)!));
  });
});
