/**
 * Findings about a setup's launch steps, in the form of validate's findings (phase 2 adds them to its
 * list): the script exists or an earlier step makes it; a relative dataset path is where the steps run (or an
 * earlier step writes it); the data pass writes the cache the training pass
 * reads; DeepSpeed checkpointing is configured where a step asks for gradient checkpointing under ZeRO-3
 * offload; a step without --config_file is told which config accelerate will use instead; and a step that
 * saves through get_state_dict under ZeRO-3 has the 16-bit gather on (checkpoint-save.ts).
 *
 * Pure except for what `missingScripts` (src/config/argv.ts) looks up on disk; the caller reads
 * accelerate's default config once (readAccelerateConfigSummary) and passes it in.
 */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import {
  describeAccelerateConfig,
  extraConfigFiles,
  isZero3Offload,
  noDeepSpeedConfigPath,
  type DeepSpeedSummary,
} from '../config/index.js';
import { checkpointSaveFindings } from './checkpoint-save.js';
import { stepModelFindings } from './step-model.js';
import { compileSetup, isPlainObject } from '../config/index.js';
import { missingScripts } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { argValue, groupArgs, isDataPass, stepConfig } from '../config/index.js';
import type { StepCheckContext, StepFinding, StepFix } from './step-finding.js';
import { GRAD_CKPT_FLAGS, setupLacksCheckpointingBlock } from './validate.js';

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A script's flag that names data it reads: `--dataset_base_path`, `--dataset_metadata_path`, `--data_dir`. */
const DATA_FLAG_RE = /^--?(?:[a-z0-9]+_)*(?:dataset|data|metadata)(?:_[a-z0-9]+)*$/i;
/** A flag that names what a step writes (read back by later steps, so not looked for). */
const OUTPUT_FLAG_RE = /^--?(?:[a-z0-9]+_)*(?:output|out|save|cache)(?:_[a-z0-9]+)*$/i;

/**
 * A value that is a relative path on disk: with a `/` or a file extension, not absolute, not `~` or `$VAR`
 * (expanded when accepted), not a hub id or URL (`org/model:file`, `s3://`), not a number.
 */
function looksLikeRelativePath(v: string): boolean {
  if (v === '' || isAbsolute(v) || /^[~$]/.test(v) || v.includes(':') || /^[0-9.e+-]+$/i.test(v)) return false;
  return v.includes('/') || /\.(csv|jsonl?|txt|parquet|tsv|arrow|pt|pth)$/i.test(v);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether `a` lies inside directory `b` (both relative to `cwd` unless absolute). */
function isUnder(a: string, b: string, cwd: string): boolean {
  const abs = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p));
  return abs(a).startsWith(`${abs(b)}/`);
}

function samePath(a: string, b: string, cwd: string): boolean {
  const abs = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p));
  return abs(a) === abs(b);
}

/** The ZeRO settings a step runs with, or null when it runs without DeepSpeed (or they are not known here). */
function stepDeepSpeed(setup: Setup, i: number, ctx: StepCheckContext): DeepSpeedSummary | null {
  const c = stepConfig(setup.steps[i]!);
  if (c.kind === 'setup') {
    const j = compileSetup(setup).deepSpeedJson;
    const zero = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
    const dev = (v: unknown) => (isPlainObject(v) && typeof v.device === 'string' ? v.device : null);
    return {
      configFile: setup.files.dsConfig,
      configFileProblem: null,
      stage: typeof zero.stage === 'number' ? zero.stage : null,
      offloadOptimizer: dev(zero.offload_optimizer),
      offloadParam: dev(zero.offload_param),
      activationCheckpointing: isPlainObject(j.activation_checkpointing),
    };
  }
  if (c.kind === 'default') return ctx.defaultConfig.deepspeed;
  return null; // a pinned config: zerowiz's own has no DeepSpeed; another file is the user's to know
}

/** Every finding about the steps of `setup`, in step order. */
export function stepFindings(setup: Setup, ctx: StepCheckContext): StepFinding[] {
  const out: StepFinding[] = [];
  const at = (i: number) => ({ step: i, stepName: setup.steps[i]!.name });

  // The training script exists, or an earlier step creates it.
  for (const m of missingScripts(setup, ctx.cwd)) {
    const i = setup.steps.findIndex((s) => s.name === m.step);
    out.push({
      level: 'error',
      rule: 'step-script-missing',
      message: `step ${m.step}: the script ${m.path} does not exist (relative to ${ctx.cwd}) and no earlier step writes it`,
      fix: 'correct the script path, or start zerowiz in the directory the paths are relative to',
      ...at(i),
    });
  }

  // A relative dataset path that is not where the steps run (zerowiz started in its own checkout, or anywhere
  // but the trainer's): the script would stop at its first read, after accelerate and the model loaded.
  const written: string[] = [];
  setup.steps.forEach((s, i) => {
    for (const g of groupArgs(s.args)) {
      if (g.role !== 'arg' || g.flag === null || g.value === null) continue;
      if (OUTPUT_FLAG_RE.test(g.flag)) continue;
      if (!DATA_FLAG_RE.test(g.flag) || !looksLikeRelativePath(g.value)) continue;
      if (written.some((w) => samePath(g.value!, w, ctx.cwd) || isUnder(g.value!, w, ctx.cwd))) continue;
      if (exists(resolve(ctx.cwd, g.value))) continue;
      out.push({
        level: 'warning',
        rule: 'step-path-missing',
        message: `step ${s.name}: ${g.flag} ${g.value} does not exist in ${ctx.cwd} (a relative path is read from where the steps run)`,
        fix: "start zerowiz in the checkout the paths are relative to (the trainer's, e.g. DiffSynth-Studio's, with its dataset downloaded), or give the absolute path",
        ...at(i),
      });
    }
    // What this step writes, which later steps may read (the data pass's cache).
    for (const g of groupArgs(s.args))
      if (g.flag !== null && g.value !== null && OUTPUT_FLAG_RE.test(g.flag)) written.push(g.value);
  });

  // A pinned config that nobody writes: accelerate stops with "The passed configuration file ... does not exist".
  const writtenConfigs = new Set(extraConfigFiles(setup).map((f) => f.path));
  setup.steps.forEach((s, i) => {
    const c = stepConfig(s);
    if (c.kind !== 'pinned' || writtenConfigs.has(c.path) || c.path === setup.files.accelerateConfig) return;
    if (isFile(isAbsolute(c.path) ? c.path : resolve(ctx.cwd, c.path))) return;
    out.push({
      level: 'error',
      rule: 'step-config-missing',
      message: `step ${s.name}: --config_file ${c.path} does not exist; accelerate launch stops at once`,
      fix: `pin the step to zerowiz's non-DeepSpeed config (${noDeepSpeedConfigPath(setup)}) or correct the path`,
      ...at(i),
      fixAction: { kind: 'pinConfig', step: i, path: noDeepSpeedConfigPath(setup) },
    });
  });

  // The data pass writes the cache that the training pass reads.
  const dataIdx = setup.steps.findIndex((s) => isDataPass(s.args));
  if (dataIdx >= 0) {
    const trainIdx = setup.steps.findIndex(
      (s, i) => i > dataIdx && typeof argValue(s.args, '--task') === 'string' && !isDataPass(s.args),
    );
    const cache = argValue(setup.steps[dataIdx]!.args, '--output_path');
    if (trainIdx >= 0 && typeof cache === 'string') {
      const train = setup.steps[trainIdx]!;
      const reads = argValue(train.args, '--dataset_base_path');
      const metadata = argValue(train.args, '--dataset_metadata_path');
      if (metadata !== undefined) {
        out.push({
          level: 'warning',
          rule: 'step-cache-not-read',
          message: `step ${train.name} has --dataset_metadata_path, so it reads the raw dataset and not the cache that ${setup.steps[dataIdx]!.name} writes to ${cache}`,
          fix: `remove --dataset_metadata_path from ${train.name} (without it DiffSynth-Studio loads the cached .pth files)`,
          ...at(trainIdx),
          fixAction: { kind: 'removeArg', step: trainIdx, flag: '--dataset_metadata_path' },
        });
      } else if (typeof reads !== 'string' || !samePath(reads, cache, ctx.cwd)) {
        out.push({
          level: 'error',
          rule: 'step-cache-path-mismatch',
          message: `step ${train.name} reads its cache from ${typeof reads === 'string' ? reads : '(no --dataset_base_path)'}, but ${setup.steps[dataIdx]!.name} writes it to ${cache}`,
          fix: `set ${train.name}'s --dataset_base_path to ${cache}`,
          ...at(trainIdx),
          fixAction: { kind: 'setArg', step: trainIdx, flag: '--dataset_base_path', value: cache },
        });
      }
    }
  }

  // Gradient checkpointing under ZeRO-3 offload needs DeepSpeed's activation_checkpointing block (the seed's
  // caveat). validate() already reports it for the setup's own config when the answers offload the parameters;
  // this names the step and also covers a step that runs on accelerate's default config, or on an imported
  // ZeRO-3 whose offload blocks were kept as they were.
  const validateReports = setupLacksCheckpointingBlock(setup);
  setup.steps.forEach((s, i) => {
    if (!s.args.some((x) => GRAD_CKPT_FLAGS.includes(x))) return;
    const ds = stepDeepSpeed(setup, i, ctx);
    if (!isZero3Offload(ds) || ds!.activationCheckpointing) return;
    const c = stepConfig(s);
    if (c.kind === 'setup' && validateReports) return;
    out.push({
      level: 'error',
      rule: 'step-checkpointing-zero3-offload',
      message: `step ${s.name} asks for gradient checkpointing under ZeRO-3 offload (${c.kind === 'setup' ? setup.files.dsConfig : `accelerate's default config, ${ctx.defaultConfig.path}`}), which has no activation_checkpointing block: PyTorch's own checkpointing does not work with ZeRO-3 offload`,
      fix:
        c.kind === 'setup'
          ? 'answer yes to gradient checkpointing so the block is written'
          : `pin ${s.name} to zerowiz's non-DeepSpeed config, or add the block to that JSON`,
      ...at(i),
      ...(c.kind === 'setup' ? { questions: ['gradient_checkpointing' as const] } : {}),
      ...(c.kind === 'default'
        ? { fixAction: { kind: 'pinConfig' as const, step: i, path: noDeepSpeedConfigPath(setup) } }
        : {}),
    });
  });

  // A step without --config_file runs with whatever accelerate finds.
  setup.steps.forEach((s, i) => {
    if (stepConfig(s).kind !== 'default') return;
    const d = ctx.defaultConfig;
    const pin: StepFix = { kind: 'pinConfig', step: i, path: noDeepSpeedConfigPath(setup) };
    const fix = `pin ${s.name} to zerowiz's config without DeepSpeed (${pin.path}: ${setup.answers.num_processes > 1 || setup.answers.num_machines > 1 ? `multi-GPU, ${setup.answers.num_processes} processes` : 'one process'}), so no default config can change how it runs`;
    if (!d.exists) {
      const gpus = ctx.gpuCount === null ? 'every GPU it sees' : `every GPU it sees (${ctx.gpuCount} here)`;
      out.push({
        level: 'warning',
        rule: 'step-default-config',
        message: `step ${s.name} runs without --config_file and there is no default config (${d.path}): accelerate launch then starts one process per GPU on this machine, ${gpus}, without DeepSpeed, mixed precision no`,
        fix,
        ...at(i),
        fixAction: pin,
      });
      return;
    }
    const deepspeed = d.distributedType === 'DEEPSPEED';
    const data = isDataPass(s.args);
    out.push({
      level: deepspeed && data ? 'error' : 'warning',
      rule: deepspeed ? 'step-default-config-deepspeed' : 'step-default-config',
      message: `step ${s.name} runs without --config_file, so accelerate launch uses its default config ${d.path} (${describeAccelerateConfig(d)})${
        deepspeed
          ? data
            ? `: the data pass would run under DeepSpeed, and DiffSynth-Studio's data_process fails there when DeepSpeed builds an optimizer for it (DiffSynth-Studio#1107)`
            : ': this step runs under DeepSpeed too'
          : ''
      }`,
      fix,
      ...at(i),
      fixAction: pin,
    });
  });

  // ZeRO-3 without the 16-bit gather while the step saves through get_state_dict (./checkpoint-save.ts).
  out.push(...checkpointSaveFindings(setup, ctx));
  // A step that trains another model or another kind of training than the answers (./step-model.ts).
  out.push(...stepModelFindings(setup));
  return out;
}
