import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset } from '../../src/setups/presets.js';
import { withDefaults } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import { toDeepSpeedJson } from '../../src/config/emit.js';
import {
  compareTopology,
  installedVersions,
  pythonOfAccelerate,
  relaunchTopologyChecks,
  setAside,
  topologyOfSetup,
  withLoadUniversal,
  type Topology,
} from '../../src/checkpoints/topology.js';
import { ptBytes, writeDeepSpeedTag } from '../helpers/deepspeed-ckpt.js';
import { findCheckpoints } from '../../src/checkpoints/find.js';
import { ROOT } from '../helpers/paths.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'zw-topo-'));
const STANDIN = join(ROOT, '__tests__', 'fixtures', 'deepspeed-standin');
const PYTHON3 = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0) ?? null;

const hf = (answers: Parameters<typeof withDefaults>[0]): Setup => ({
  name: 'hf',
  answers: withDefaults({ model_params: 1_000_000, ...answers }),
  files: { ...DEFAULT_FILES },
  steps: [{ name: 'train', usesConfig: true, args: ['train.py', '--output_dir', 'out'] }],
});
const versions = { python: '3.11.7', accelerate: '1.15.0', deepspeed: '0.19.6', torch: '2.13.0+cpu' };
const topo = (t: Partial<Topology>): Topology => ({
  stage: 3,
  offloadOptimizer: 'none',
  offloadParam: 'none',
  worldSize: 8,
  nodes: 1,
  precision: 'bf16',
  versions,
  versionsProblem: null,
  ...t,
});

describe('the topology a checkpoint is written with', () => {
  it('from a setup: stage, offload devices, processes, nodes and the precision accelerate hands DeepSpeed', async () => {
    const seed = await loadPreset('qwen-image-lora-lowvram', { XDG_CONFIG_HOME: tmp() });
    // The seed leaves precision to `--mixed_precision`, which its steps do not pass: fp32 (zerowiz warns).
    expect(topologyOfSetup(seed)).toEqual({
      stage: 3,
      offloadOptimizer: 'cpu',
      offloadParam: 'cpu',
      worldSize: 1,
      nodes: 1,
      precision: 'fp32',
    });
    expect(topologyOfSetup(hf({ mode: '2', num_processes: 16, num_machines: 2, mixed_precision: 'bf16' }))).toEqual({
      stage: 2,
      offloadOptimizer: 'none',
      offloadParam: 'none',
      worldSize: 16,
      nodes: 2,
      precision: 'bf16',
    });
  });

  it("finds the Python of accelerate's entry point from its first line, as pip writes it", () => {
    const d = tmp();
    const write = (name: string, text: string) => {
      writeFileSync(join(d, name), text);
      return join(d, name);
    };
    expect(pythonOfAccelerate(write('a', '#!/opt/venv/bin/python3.11\nimport sys\n'))).toEqual({
      python: '/opt/venv/bin/python3.11',
    });
    expect(pythonOfAccelerate(write('b', '#!/usr/bin/env python3\n'))).toEqual({ python: 'python3' });
    // pip's form for an interpreter path too long (or with spaces) for a #! line.
    expect(
      pythonOfAccelerate(write('c', "#!/bin/sh\n'''exec' '/very long/venv/bin/python' \"$0\" \"$@\"\n' '''\n")),
    ).toEqual({ python: '/very long/venv/bin/python' });
    const node = pythonOfAccelerate(write('d', '#!/usr/bin/env node\nconsole.log(1)\n'));
    expect('problem' in node && node.problem).toMatch(/not a Python entry point/);
    expect('problem' in pythonOfAccelerate(join(d, 'missing'))).toBe(true);
  });

  it('asks that Python once for the installed accelerate, DeepSpeed and torch versions', async () => {
    const d = tmp();
    const fake = join(d, 'python');
    writeFileSync(
      fake,
      `#!/bin/sh\necho "$@" > "${join(d, 'argv')}"\necho '{"python": "3.11.7", "accelerate": "1.15.0", "deepspeed": null, "torch": "2.13.0"}'\n`,
    );
    chmodSync(fake, 0o755);
    const v = await installedVersions(fake);
    expect(v).toEqual({ versions: { python: '3.11.7', accelerate: '1.15.0', deepspeed: null, torch: '2.13.0' } });
    expect(readdirSync(d)).toContain('argv');
    const broken = join(d, 'broken');
    writeFileSync(broken, '#!/bin/sh\necho oops >&2\nexit 3\n');
    chmodSync(broken, 0o755);
    const b = await installedVersions(broken);
    expect('problem' in b && b.problem).toMatch(/exited with code 3: oops/);
  });

  it.skipIf(PYTHON3 === null)(
    'with a real Python: the versions come from the packages metadata (the DeepSpeed stand-in is 0.19.6)',
    async () => {
      const v = await installedVersions(PYTHON3!, { ...process.env, PYTHONPATH: STANDIN });
      expect('versions' in v && v.versions.deepspeed).toBe('0.19.6');
      expect('versions' in v && v.versions.python).toMatch(/^3\./);
    },
  );
  if (PYTHON3 === null) console.log('skipped the real-Python versions test: no python3 on PATH');

  it('a different stage (3 against 1-2), process count or precision blocks a resume; offload, nodes and versions are told', () => {
    const d = compareTopology(topo({}), topo({ stage: 2, worldSize: 4, offloadOptimizer: 'cpu', nodes: 2 }));
    expect(d.map((x) => [x.key, x.blocking])).toEqual([
      ['stage', true],
      ['worldSize', true],
      ['offloadOptimizer', false],
      ['nodes', false],
    ]);
    expect(compareTopology(topo({ stage: 1 }), topo({ stage: 2 })).filter((x) => x.blocking)).toEqual([]);
    expect(compareTopology(topo({ precision: 'bf16' }), topo({ precision: 'fp16' }))[0]).toMatchObject({
      key: 'precision',
      blocking: true,
    });
    const v = compareTopology(topo({}), topo({ versions: { ...versions, deepspeed: '0.20.0' } }));
    expect(v).toEqual([expect.objectContaining({ key: 'deepspeed', blocking: false, saved: '0.19.6', now: '0.20.0' })]);
  });
});

describe('on relaunch: a checkpoint in the output folder written with another topology', () => {
  it('warns naming both topologies, and gives the ways forward: Universal Checkpointing, zero_to_fp32, or fresh', () => {
    const cwd = tmp();
    writeDeepSpeedTag(join(cwd, 'out'), { tag: 'global_step500', stage: 3, worldSize: 8, bf16: true });
    const setup = hf({ mode: '3', num_processes: 4, mixed_precision: 'bf16' });
    const checks = relaunchTopologyChecks(
      setup,
      cwd,
      { ...topologyOfSetup(setup), versions, versionsProblem: null },
      '/venv/bin/python',
    );
    expect(checks).toHaveLength(1);
    const c = checks[0]!;
    expect(c.checkpoint).toBe(join(cwd, 'out', 'global_step500'));
    expect(c.diffs.map((x) => x.key)).toEqual(['worldSize']);
    expect(c.warning).toMatch(
      /global_step500 .* was written with ZeRO-3, 8 processes, bf16 \(read from its files\); this launch runs ZeRO-3, 4 processes on 1 node, bf16, DeepSpeed 0\.19\.6/,
    );
    expect(c.warning).toMatch(/DeepSpeed#2898/);
    expect(c.universal.map((s) => s.argv)).toEqual([
      [
        '/venv/bin/python',
        '-m',
        'deepspeed.checkpoint.ds_to_universal',
        '--input_folder',
        join(cwd, 'out', 'global_step500'),
        '--output_folder',
        join(cwd, 'out', 'global_step500_universal'),
        '--inject_missing_state',
      ],
    ]);
    expect(c.fp32.argv).toEqual([
      '/venv/bin/python',
      '-m',
      'deepspeed.utils.zero_to_fp32',
      join(cwd, 'out'),
      join(cwd, 'out', 'global_step500_fp32'),
      '--safe_serialization',
      '--tag',
      'global_step500',
    ]);
    expect(c.fresh).toEqual([join(cwd, 'out', 'global_step500'), join(cwd, 'out', 'latest')]);
    // The same topology: nothing to say.
    const same = hf({ mode: '3', num_processes: 8, mixed_precision: 'bf16' });
    expect(
      relaunchTopologyChecks(same, cwd, { ...topologyOfSetup(same), versions, versionsProblem: null }, null),
    ).toEqual([]);
  });

  it('the warning escapes control characters in the paths it names', () => {
    const cwd = tmp();
    const out = 'out\x1b[2J';
    writeDeepSpeedTag(join(cwd, out), { tag: 'global_step1', stage: 3, worldSize: 8, bf16: true });
    const setup: Setup = {
      ...hf({ mode: '3', num_processes: 4, mixed_precision: 'bf16' }),
      steps: [{ name: 'train', usesConfig: true, args: ['train.py', '--output_dir', out] }],
    };
    const [c] = relaunchTopologyChecks(
      setup,
      cwd,
      { ...topologyOfSetup(setup), versions, versionsProblem: null },
      null,
    );
    expect(c!.warning).toContain('out\\x1b[2J');
    expect(/[\u0000-\u001f]/.test(c!.warning)).toBe(false);
  });

  it('prefers the topology a zerowiz run record kept for that checkpoint (versions included)', () => {
    const cwd = tmp();
    const tag = writeDeepSpeedTag(join(cwd, 'out'), { tag: 'global_step5', stage: 2, worldSize: 2 });
    const setup = hf({ mode: '2', num_processes: 2, mixed_precision: 'fp16' });
    const saved = topo({ stage: 2, worldSize: 2, precision: 'fp16', versions: { ...versions, deepspeed: '0.18.0' } });
    const record = {
      json: { topology: { ...saved, capturedAt: '2026-12-01T00:00:00.000Z' }, checkpoints: [{ path: tag }] },
    };
    const checks = relaunchTopologyChecks(
      setup,
      cwd,
      { ...topologyOfSetup(setup), versions, versionsProblem: null },
      null,
      [record as never],
    );
    expect(checks).toEqual([]); // only the DeepSpeed version differs: told in the record, no warning
    const other = hf({ mode: '3', num_processes: 2, mixed_precision: 'fp16' });
    const [c] = relaunchTopologyChecks(
      other,
      cwd,
      { ...topologyOfSetup(other), versions, versionsProblem: null },
      null,
      [record as never],
    );
    expect(c!.warning).toMatch(
      /was written with ZeRO-2, 2 processes on 1 node, fp16, DeepSpeed 0\.18\.0 \(zerowiz run record\)/,
    );
    expect(c!.universal[0]!.argv[0]).toBe('python3'); // no accelerate Python known: the one on PATH
  });

  it('after the conversion, a setup with load_universal resumes from latest_universal: no warning, and the universal folder is no bad tag', () => {
    const cwd = tmp();
    const tag = writeDeepSpeedTag(join(cwd, 'out'), { tag: 'global_step500', stage: 3, worldSize: 8, bf16: true });
    // What ds_to_universal leaves: TAG_universal/ with zero/ and the model states copied, latest_universal beside.
    mkdirSync(join(`${tag}_universal`, 'zero'), { recursive: true });
    for (let r = 0; r < 8; r++)
      writeFileSync(join(`${tag}_universal`, `zero_pp_rank_${r}_mp_rank_00_model_states.pt`), ptBytes(64));
    writeFileSync(join(cwd, 'out', 'latest_universal'), 'global_step500_universal');
    expect(findCheckpoints(join(cwd, 'out')).map((c) => c.name)).toEqual(['global_step500']);
    const setup = withLoadUniversal(hf({ mode: '3', num_processes: 4, mixed_precision: 'bf16' }));
    const now = { ...topologyOfSetup(setup), versions, versionsProblem: null };
    expect(relaunchTopologyChecks(setup, cwd, now, null)).toEqual([]);
    // Without load_universal the old tag is what a resume loads: warned.
    const plain = hf({ mode: '3', num_processes: 4, mixed_precision: 'bf16' });
    expect(relaunchTopologyChecks(plain, cwd, now, null)).toHaveLength(1);
  });

  it('load_universal goes into the DeepSpeed JSON; starting fresh moves the old checkpoint aside, deleting nothing', () => {
    const json = JSON.parse(toDeepSpeedJson(withLoadUniversal(hf({ mode: '3' })))) as Record<string, unknown>;
    expect(json.checkpoint).toEqual({ load_universal: true });
    const cwd = tmp();
    const tag = writeDeepSpeedTag(join(cwd, 'out'), { tag: 'global_step5', stage: 2, worldSize: 2 });
    const moved = setAside([tag, join(cwd, 'out', 'latest')], new Date('2026-12-01T10:20:30Z'));
    expect(moved.map((m) => m.to.slice(cwd.length))).toEqual([
      expect.stringMatching(/^\/out\/global_step5\.set-aside-\d{8}-\d{6}$/),
      expect.stringMatching(/^\/out\/latest\.set-aside-\d{8}-\d{6}$/),
    ]);
    expect(existsSync(tag)).toBe(false);
    for (const m of moved) expect(existsSync(m.to)).toBe(true);
    mkdirSync(tag);
    const again = setAside([tag], new Date('2026-12-01T10:20:30Z'));
    expect(again[0]!.to).toMatch(/-1$/); // never over an earlier one
  });
});
