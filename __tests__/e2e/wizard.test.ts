import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parse as parseYaml } from 'yaml';
import { BIN, KEYS, ROOT } from '../helpers/pty.js';
import { at, highlight, moveTo, settled, startWizard as start, walkToMode } from '../helpers/wizard-pty.js';
import { checkAccelerateConfig, checkDeepSpeedConfig } from '../../src/config/accept.js';

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

describe('the wizard in a real terminal', () => {
  it('walks a newcomer from the start screen to written files for ZeRO-3 offload on 8 GPUs', async () => {
    const { s, cwd } = start();
    await walkToMode(s);
    await highlight(s, 'ZeRO-3 offload');
    s.write(KEYS.enter);
    // the row chose CPU offload: "cpu or nvme?" is not asked again
    await at(s, 'Gradient accumulation steps');
    expect(s.screen()).not.toContain('Offload to CPU memory or to an NVMe');
    await at(s, 'Gradient clipping value');
    await at(s, 'Save 16-bit model weights');
    await at(s, 'Enable deepspeed.zero.Init');
    await at(s, 'Mixture-of-Experts');
    await settled(s, 'How many GPUs in total');
    expect(s.screen()).toMatch(/❯ 8/);
    s.write(KEYS.enter);
    await at(s, 'Mixed precision');
    // The steps come before the review: one training script (the commands then name it).
    await settled(s, 'Pick the steps');
    await moveTo(s, /^❯ One training script/, KEYS.up);
    await at(s, /❯ One training script/);
    await at(s, 'Steps (the accelerate launch passes', 'r');
    await at(s, 'Review:');
    await at(s, 'Write to a directory');
    await at(s, 'Directory for accelerate_config.yaml');
    await at(s, 'Done: exit');
    expect(await s.exited).toBe(0);
    const yamlText = readFileSync(join(cwd, 'accelerate_config.yaml'), 'utf8');
    const jsonText = readFileSync(join(cwd, 'ds_config.json'), 'utf8');
    const yaml = parseYaml(yamlText) as Record<string, unknown>;
    const json = JSON.parse(jsonText) as {
      zero_optimization: { stage: number; offload_param: { device: string }; offload_optimizer: { device: string } };
      bf16: { enabled: boolean };
    };
    expect(yaml.num_processes).toBe(8);
    expect(yaml.distributed_type).toBe('DEEPSPEED');
    expect(json.zero_optimization.stage).toBe(3);
    expect(json.zero_optimization.offload_param.device).toBe('cpu');
    expect(json.zero_optimization.offload_optimizer.device).toBe('cpu');
    expect(json.bf16.enabled).toBe(true);
    // the same checks as `zerowiz generate`
    expect(checkAccelerateConfig(yaml).filter((f) => f.level === 'error')).toEqual([]);
    expect(checkDeepSpeedConfig(json, { worldSize: 8 }).filter((f) => f.level === 'error')).toEqual([]);
    // the paths and the exact command are printed after the terminal is restored
    const command = `accelerate launch --config_file ${join(cwd, 'accelerate_config.yaml')} train.py`;
    // (the line may wrap at 80 columns)
    await s.waitFor((x) => x.replace(/\s+/g, '').includes(command.replace(/\s+/g, '')));
    expect(s.screen()).toContain(join(cwd, 'accelerate_config.yaml'));
  });

  it('going back changes an earlier answer and the preview follows', async () => {
    const { s } = start({ cols: 100, rows: 40 });
    await s.waitFor('H100');
    await at(s, 'New setup');
    await at(s, 'How many machines');
    await at(s, 'Check distributed operations', KEYS.esc); // back to the number of machines
    await settled(s, 'How many machines');
    s.write(KEYS.backspace);
    await s.waitFor(/❯ \n|❯ *\n/);
    s.write('2');
    await s.waitFor('num_machines: 2');
    s.write(KEYS.enter);
    await s.waitFor('rank of this machine');
    expect(s.screen()).toContain('num_machines: 2');
  });

  it('keys typed the moment the start screen shows are not lost (before Ink reads them)', async () => {
    const { s } = start({ cols: 100, rows: 40 }); // room for the whole YAML preview
    await s.waitFor('New setup'); // painted before Ink has loaded
    s.write(`${KEYS.down}${KEYS.up}${KEYS.enter}`);
    await s.waitFor('How many machines');
    s.write(`${KEYS.backspace}2${KEYS.enter}`); // typed faster than a frame: answer 2, then Enter
    await s.waitFor('rank of this machine');
    await s.waitFor('num_machines: 2'); // the preview follows once it has loaded
  });

  it('Ctrl+C mid-way leaves no file and a sane terminal', async () => {
    const { s, cwd } = start();
    await walkToMode(s);
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
    expect(readdirSync(cwd)).toEqual([]);
    const raw = s.raw();
    const lastEnter = raw.lastIndexOf('\x1b[?1049h');
    const lastLeave = raw.lastIndexOf('\x1b[?1049l');
    expect(lastLeave).toBeGreaterThan(lastEnter);
    expect(raw.lastIndexOf('\x1b[?25h')).toBeGreaterThan(raw.lastIndexOf('\x1b[?25l'));
  });

  it('shows the whole tradeoff table at 80x24 without cut-off numbers', async () => {
    const { s } = start({ cols: 80, rows: 24 });
    await walkToMode(s);
    const screen = await s.waitFor(/^[★✗] /m);
    const lines = s.lines();
    for (const label of [
      'ZeRO-1 ',
      'ZeRO-2 ',
      'ZeRO-2 offload ',
      'ZeRO-2 offload NVMe',
      'ZeRO-3 ',
      'ZeRO-3 offload ',
      'ZeRO-3 offload NVMe',
    ]) {
      const row = lines.find((l) => l.slice(2).startsWith(label));
      expect(row, `${label} row\n${screen}`).toBeDefined();
      // GPU peak, CPU, comm, the step time (absolute: seconds per optimizer step) and the fit mark are all there
      expect(row!).toMatch(/\d(\.\d)? [KMGT]iB .*\d(\.\d)? [KMGT]iB .*(\d(\.\d+)?x|-) +([0-9.<]+s|\d+m\d\ds|-) +[✓✗?]/);
    }
    // The panel: the highlighted mode's peak beside DeepSpeed's figure, then its line items, whole.
    expect(screen).toMatch(/▸ ZeRO-.*: peak [0-9.]+ [KMGT]iB\/GPU/);
    expect(screen).toMatch(
      /^GiB\/GPU: ctx [0-9.]+, params [0-9.]+, grads [0-9.]+, optim [0-9.]+, acts [0-9.]+, buf [0-9.]+, margin [0-9.]+$/m,
    );
    expect(screen).toMatch(/^Per GPU and step: /m);
    expect(screen).toMatch(
      /DeepSpeed's\s+estimator: [0-9.]+ [KMGT]iB \(every parameter trained, model\s+states only\)\./,
    );
    expect(lines.length).toBe(24);
    expect(lines.every((l) => l.length <= 80)).toBe(true);
  });

  it('keeps the whole table at 130 columns and beside the preview at 160, and shows the whole help at 80x24', async () => {
    const { s } = start({ cols: 130, rows: 30 });
    await walkToMode(s);
    await s.waitFor(/^[★✗] /m);
    for (const label of ['ZeRO-1 ', 'ZeRO-3 offload NVMe']) {
      const row = s.lines().find((l) => l.slice(2).startsWith(label));
      expect(row, `${label} row\n${s.screen()}`).toMatch(
        /\d(\.\d)? [KMGT]iB .*\d(\.\d)? [KMGT]iB .*(\d(\.\d+)?x|-) .*[✓✗?]/,
      );
    }
    s.resize(160, 30);
    await s.waitFor((x) => x.split('\n').some((l) => l.includes('ZeRO-1 ') && /[a-z_]+:( |$)/.test(l.slice(82))));
    for (const label of ['ZeRO-1 ', 'ZeRO-3 offload NVMe']) {
      const row = s.lines().find((l) => l.slice(2).startsWith(label));
      expect(row, `${label} row\n${s.screen()}`).toMatch(
        /\d(\.\d)? [KMGT]iB .*\d(\.\d)? [KMGT]iB .*(\d(\.\d+)?x|-) .*[✓✗?]/,
      );
    }
    s.resize(80, 24);
    await s.waitFor((x) => x.split('\n').every((l) => l.length <= 80) && x.includes('Which ZeRO mode'));
    s.write('?');
    const help = await s.waitFor('(? closes this help · g: glossary)');
    expect(help).toContain('accelerate config asks');
    expect(help).toContain('Sets accelerate YAML');
  });
});

describe('the start menu while the presets are read', () => {
  it('never says "0 found": no count until they are read, then the count', async () => {
    const { s } = start();
    const screen = await s.waitFor(/Start from a preset \([1-9]\d* found\)/);
    expect(screen).not.toContain('(0 found)');
    expect(s.raw()).not.toContain('(0 found)');
  });
});
