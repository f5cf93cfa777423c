/**
 * Answer flags that are wrong or do not apply get a clear error or warning, the same in `generate` and
 * `preset save` (the wizard uses the same question parsers and findings: see wizard-files tests).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, sandbox, tempDir } from '../helpers/cli.js';
import { question, withDefaults } from '../../src/config/questions.js';
import { answerFindings } from '../../src/rules/validate.js';
import { previewOf } from '../../src/wizard/preview.js';
import { DEFAULT_FILES } from '../../src/config/setup.js';

const VERBS: Array<[string, (box: ReturnType<typeof sandbox>) => string[]]> = [
  ['generate', () => ['generate', '--print', 'yaml']],
  ['preset save', () => ['preset', 'save', 'p']],
];

describe.each(VERBS)('%s', (_verb, base) => {
  const run = (args: string[]) => {
    const box = sandbox();
    return { box, r: runCli([...base(box), ...args], { env: box.env, cwd: box.cwd }) };
  };

  it('warns that --main-process-ip does not apply on one machine', () => {
    const { r } = run(['--main-process-ip', '10.0.0.1']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: --main-process-ip does not apply: .*one machine/);
  });
  it('warns that --nvme-path does not apply with cpu offload', () => {
    const { r } = run(['--mode', '3-offload', '--offload-device', 'cpu', '--nvme-path', '/nvme']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: --nvme-path does not apply: .*nvme/);
  });
  it('warns that --zero3-save-16bit-model does not apply at stage 2', () => {
    const { r } = run(['--mode', '2', '--zero3-save-16bit-model']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: --zero3-save-16bit-model does not apply: .*ZeRO-3/);
  });
  it('refuses a --main-process-ip that is neither an address nor a host name', () => {
    const { r } = run(['--num-machines', '2', '--num-processes', '16', '--main-process-ip', 'node 0!']);
    expectOneLineError(r, /--main-process-ip: 'node 0!' is not an IP address or a host name/);
  });
  it('refuses --largest-layer-params above --model-params', () => {
    const { r } = run(['--model-params', '1B', '--largest-layer-params', '2B']);
    expectOneLineError(r, /largest layer .* exceeds the model/);
  });
  it('warns when --ds-config-path names a file that does not exist', () => {
    const { r } = run(['--ds-config-path', '/nowhere/ds.json']);
    expect(r.stderr).toMatch(/warning: --ds-config-path \/nowhere\/ds\.json does not exist/);
  });
});

describe('preset show', () => {
  it('warns about answers in the file that do not apply, by their key', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(join(box.presets, 'one.yaml'), "answers:\n  mode: '2'\n  main_process_ip: 10.0.0.1\n");
    const r = runCli(['preset', 'show', 'one'], { env: box.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/warning: main_process_ip does not apply: there is one machine/);
  });
});

describe('generate and the root command', () => {
  it("refuses --out ''", () => {
    const dir = tempDir();
    expectOneLineError(runCli(['generate', '--out', ''], { cwd: dir }), /--out is empty/);
  });
  it('refuses --config given with a subcommand', () => {
    const box = sandbox();
    const cfg = join(box.cwd, 'x.yaml');
    writeFileSync(cfg, 'distributed_type: DEEPSPEED\n');
    expectOneLineError(
      runCli(['--config', cfg, 'generate', '--print', 'yaml'], { env: box.env }),
      /--config opens the wizard/,
    );
  });
  it('does not warn about a --ds-config-path that exists', () => {
    const box = sandbox();
    writeFileSync(join(box.cwd, 'mine.json'), '{}\n');
    const r = runCli(['generate', '--print', 'yaml', '--ds-config-path', 'mine.json'], { env: box.env, cwd: box.cwd });
    expect(r.stderr).not.toMatch(/ds-config-path/);
    expect(existsSync(join(box.cwd, 'mine.json'))).toBe(true);
  });
});

describe('the rules behind them (one definition for flags, presets and the wizard)', () => {
  it('the main IP question takes IPv4, IPv6 and host names, and nothing else', () => {
    const a = withDefaults({ num_machines: 2 });
    const p = (t: string) => question('main_process_ip').parse(t, a).ok;
    for (const good of ['10.0.0.1', 'fe80::1', '::1', 'node-0', 'node0.cluster.local', '']) expect(p(good)).toBe(true);
    for (const bad of ['node 0', '10.0.0.1:29500', '-node', 'a..b', '999.1.1.1', 'x\x1b[2J'])
      expect(p(bad)).toBe(false);
  });
  it('answers given for questions that are not asked are warnings naming the flag', () => {
    const a = withDefaults({ mode: '2' });
    const f = answerFindings(a, ['zero3_save_16bit_model', 'num_processes'], 'flag');
    expect(f.map((x) => [x.level, x.rule])).toEqual([['warning', 'answer-not-applicable']]);
  });
  it("the wizard's preview shows the same findings: a missing ds_config_path, a layer above the model", () => {
    const setup = (given: Parameters<typeof withDefaults>[0]) => ({
      name: 'x',
      answers: withDefaults(given),
      files: { ...DEFAULT_FILES },
      steps: [],
    });
    const rules = (given: Parameters<typeof withDefaults>[0]) => previewOf(setup(given)).findings.map((f) => f.rule);
    expect(rules({ ds_config_path: '/nowhere/ds.json' })).toContain('ds-config-path-missing');
    expect(rules({ model_params: 1e9, largest_layer_params: 2e9 })).toContain('largest-layer-above-params');
    expect(rules({})).not.toContain('ds-config-path-missing');
  });
});
