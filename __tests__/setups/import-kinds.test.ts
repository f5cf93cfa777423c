/**
 * An import keeps or says: configs of the kinds people import (__tests__/fixtures/import-kinds/, written for
 * these tests in the shape of DeepSpeed's unit-test configs, transformers' Trainer configs, accelerate's
 * templates, LLaMA-Factory/ms-swift JSONs and a commented JSON), imported the way users do, with
 * `zerowiz generate --from FILE --print json` on the built bin. Each case is one item of issue 20's part 2: what
 * the import cannot keep it refuses or says, naming the key and both values; deprecated keys are migrated.
 */
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { expectOneLineError, runCli } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

const KINDS = join(ROOT, '__tests__', 'fixtures', 'import-kinds');

beforeAll(() => {
  const b = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
  expect(b.status, b.stderr).toBe(0);
});

/** The fixtures copied into a temp dir (the YAMLs name their JSON relative to it). */
function kinds(): string {
  const dir = mkdtempSync(join(tmpdir(), 'zw-kinds-'));
  cpSync(KINDS, dir, { recursive: true });
  return dir;
}

/** A written DeepSpeed JSON as the tests read it (nested objects of unknown values). */
// biome-ignore lint/suspicious/noExplicitAny: the tests index into the parsed JSON at known paths.
type Json = Record<string, any>;

/** `zerowiz generate --from FILE [flags] --print json` in the fixtures' directory. */
function importJson(file: string, flags: string[] = []) {
  const dir = kinds();
  const r = runCli(['generate', '--from', file, ...flags, '--print', 'json'], { cwd: dir });
  return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as Json) : null };
}

describe('an import keeps what the config means, or says what it changed', () => {
  it('DeepSpeed unit-test shape: an absent accumulation is written as the 1 accelerate uses, and said; an absent clipping stays absent; a fixed train_batch_size gains no "auto" micro batch', () => {
    const r = importJson('ds-test-batch16.yaml');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.gradient_accumulation_steps).toBe(1);
    expect(r.stderr).toMatch(/gradient_accumulation_steps: \(absent\) -> 1/);
    expect('gradient_clipping' in r.json!).toBe(false);
    expect(r.json!.train_batch_size).toBe(16);
    expect('train_micro_batch_size_per_gpu' in r.json!).toBe(false);
  });

  it("accelerate's fp16 template without a JSON keeps the fp16.auto_cast: true accelerate's plugin adds, and says so", () => {
    const r = importJson('fp16-no-json.yaml');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.fp16).toMatchObject({ enabled: true, auto_cast: true });
    expect(r.stderr).toMatch(/fp16\.auto_cast: \(absent\) -> true/);
  });

  it('offload and save keys in the YAML beside a JSON that says otherwise: refused as accelerate refuses it, naming each key with both values', () => {
    const r = importJson('offload-in-yaml.yaml');
    expectOneLineError(
      r,
      /offload_optimizer_device cpu.*none.*offload_param_device cpu.*none.*zero3_save_16bit_model true.*false/,
    );
  });

  it('keys in the YAML that agree with the JSON (or fill its "auto") are moved into it, and said', () => {
    const r = importJson('agree-in-yaml.yaml');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.zero_optimization.stage).toBe(3);
    expect(r.json!.gradient_accumulation_steps).toBe(4);
    expect(r.stderr).toMatch(/deepspeed_config\.gradient_accumulation_steps 4 .*gradient_accumulation_steps "auto"/);
  });

  it("transformers' ZeRO-3 Trainer config: the deprecated stage3_gather_fp16_weights_on_model_save is migrated to one key, the new name, and said", () => {
    const r = importJson('trainer-zero3.yaml');
    expect(r.code, r.stderr).toBe(0);
    const zero = r.json!.zero_optimization;
    expect(zero.stage3_gather_16bit_weights_on_model_save).toBe(true);
    expect('stage3_gather_fp16_weights_on_model_save' in zero).toBe(false);
    expect(r.stderr).not.toMatch(/has both/);
    expect(r.stderr).toMatch(
      /stage3_gather_fp16_weights_on_model_save.*deprecated.*stage3_gather_16bit_weights_on_model_save/,
    );
  });

  it('a legacy cpu_offload: true becomes offload_optimizer cpu, so a later --mode 3 no longer offloads the optimizer', () => {
    const kept = importJson('legacy-cpu-offload.yaml');
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.json!.zero_optimization.offload_optimizer.device).toBe('cpu');
    expect('cpu_offload' in kept.json!.zero_optimization).toBe(false);
    expect(kept.stderr).toMatch(/cpu_offload.*deprecated.*offload_optimizer/);
    const three = importJson('legacy-cpu-offload.yaml', ['--mode', '3']);
    expect(three.code, three.stderr).toBe(0);
    expect(three.json!.zero_optimization.stage).toBe(3);
    expect('cpu_offload' in three.json!.zero_optimization).toBe(false);
    expect('offload_optimizer' in three.json!.zero_optimization).toBe(false);
  });

  it('transformers\' ZeRO-2 Trainer config is not refused for its "auto" betas and eps: the HF Trainer fills them, and the warning says which launcher fills what', () => {
    const r = importJson('trainer-zero2.yaml');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: .*optimizer\.params\.betas.*HF Trainer/);
    expect(r.stderr).toMatch(/accelerate/);
  });

  it('an "auto" where DeepSpeed needs a whole number, which nobody fills, is refused naming the key', () => {
    const r = importJson('auto-int.yaml');
    // The rule's own words (src/config/accept.ts auto-unfilled), as `explain` says them.
    expectOneLineError(r, /"auto" at zero_optimization\.stage3_max_live_parameters is not filled in by accelerate/);
  });

  it('a fixed train_batch_size 7 beside an "auto" micro batch and accumulation is kept, and the batch identity DeepSpeed asserts is said', () => {
    const r = importJson('batch7.yaml');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.train_batch_size).toBe(7);
    expect(r.stderr).toMatch(/warning: train_batch_size 7 is fixed.*micro batch x accumulation x 1/);
  });

  it("a DeepSpeed JSON with // comments is refused, as accelerate's json.load refuses it: JSON does not allow comments", () => {
    const r = importJson('commented.yaml');
    expectOneLineError(r, /commented\.json.*JSON does not allow comments \(line 2\)/);
  });
});
