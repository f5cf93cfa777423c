/**
 * DiffSynth-Studio training steps and their loss log. DiffSynth's training loop prints a bare
 * `tqdm(dataloader)` (no loss); the loss reaches a file only with `--enable_csv_log`, as
 * `<--output_path>/loss.csv` (modelscope/DiffSynth-Studio diffsynth/diffusion/logger.py CSVLogger, the flag
 * in diffsynth/diffusion/parsers.py add_logger_config, added 2026-08-19 in #1618; output_path defaults to
 * ./models). A step is a DiffSynth training step when its script is an `examples/<model>/model_training/*.py`
 * of a DiffSynth checkout and its `--task` is a training task (`sft`, the default, `sft:train`,
 * `direct_distill`, ...; not `...:data_process`, which trains nothing and logs no loss).
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { trainingScript } from './argv.js';

/** The flag that turns DiffSynth's CSV loss log on. */
export const CSV_LOG_FLAG = '--enable_csv_log';
/** DiffSynth's own default for --output_path. */
export const DIFFSYNTH_DEFAULT_OUTPUT_PATH = './models';
/** Where DiffSynth declares its flags, relative to the checkout. */
const PARSERS_FILE = join('diffsynth', 'diffusion', 'parsers.py');

const SCRIPT_RE = /(?:^|\/)examples\/[^/]+\/model_training\/[^/]+\.py$/;

/** What zerowiz can do about a step's loss log. */
export type CsvLogPlan =
  /** Not a DiffSynth training step: nothing to offer. */
  | { kind: 'not-diffsynth' }
  /** A DiffSynth step that does not train (the data_process pass). */
  | { kind: 'not-training'; task: string }
  /** The step already passes --enable_csv_log: follow `csvPath`. */
  | { kind: 'enabled'; csvPath: string; outputPath: string }
  /**
   * Offer to add --enable_csv_log: `args` are the step's args with it. `certain` is false when the checkout's
   * parsers.py could not be read (an installed diffsynth package): an older DiffSynth exits with "unrecognized
   * arguments: --enable_csv_log".
   */
  | { kind: 'offer'; args: string[]; csvPath: string; outputPath: string; certain: boolean }
  /** This checkout predates the flag: adding it would stop the step. */
  | { kind: 'unsupported'; reason: string };

/** The value of `--name VALUE` or `--name=VALUE` among a script's arguments (the last one wins, as argparse). */
function optionValue(args: readonly string[], name: string): string | null {
  let value: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === name && i + 1 < args.length) value = args[i + 1]!;
    else if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
  }
  return value;
}

/** The arguments after the training script (the script's own), or null when the step runs no script. */
function scriptArgs(args: readonly string[]): { script: string; rest: string[] } | null {
  const script = trainingScript(args);
  if (script === null) return null;
  const at = args.indexOf(script);
  return { script, rest: args.slice(at + 1) };
}

/** Whether `args` run a DiffSynth-Studio example training script (any task). */
export function isDiffSynthStep(args: readonly string[]): boolean {
  const s = scriptArgs(args);
  return s !== null && SCRIPT_RE.test(s.script);
}

/** The step's --output_path as written (DiffSynth's default when absent), or null for a non-DiffSynth step. */
export function diffSynthOutputPath(args: readonly string[]): string | null {
  const s = scriptArgs(args);
  if (!s || !SCRIPT_RE.test(s.script)) return null;
  return optionValue(s.rest, '--output_path') ?? DIFFSYNTH_DEFAULT_OUTPUT_PATH;
}

/** Whether the checkout in `cwd` knows --enable_csv_log: true, false, or null when it cannot tell. */
export function checkoutSupportsCsvLog(
  cwd: string,
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): boolean | null {
  try {
    return read(join(cwd, PARSERS_FILE)).includes(CSV_LOG_FLAG);
  } catch {
    return null;
  }
}

/**
 * Decides what to do about a step's loss log. `cwd` is where the step runs (the DiffSynth checkout).
 * Never changes `args`; an offer carries the new args (the flag appended: it takes no value).
 */
export function planCsvLog(args: readonly string[], cwd: string, read?: (path: string) => string): CsvLogPlan {
  const s = scriptArgs(args);
  if (!s || !SCRIPT_RE.test(s.script)) return { kind: 'not-diffsynth' };
  const task = optionValue(s.rest, '--task') ?? 'sft';
  if (task.endsWith(':data_process')) return { kind: 'not-training', task };
  const outputPath = optionValue(s.rest, '--output_path') ?? DIFFSYNTH_DEFAULT_OUTPUT_PATH;
  const csvPath = join(isAbsolute(outputPath) ? outputPath : resolve(cwd, outputPath), 'loss.csv');
  if (s.rest.includes(CSV_LOG_FLAG)) return { kind: 'enabled', csvPath, outputPath };
  const supported = checkoutSupportsCsvLog(cwd, read);
  if (supported === false) {
    return {
      kind: 'unsupported',
      reason: `this DiffSynth-Studio checkout has no ${CSV_LOG_FLAG} (added 2026-08-19): update it (git pull) to see the loss`,
    };
  }
  return { kind: 'offer', args: [...args, CSV_LOG_FLAG], csvPath, outputPath, certain: supported === true };
}

/** The loss-log offer for a whole setup: which steps get `--enable_csv_log`, and what to tell the user. */
export interface CsvLogOffer {
  /**
   * The steps to add the flag to, with their new args (empty: nothing to offer); `certain` when the checkout
   * in the launch directory is known to have the flag; `outputPath` as the step gives it (loss.csv goes there).
   */
  steps: { index: number; name: string; args: string[]; certain: boolean; outputPath: string }[];
  /** One line when a step cannot have it (an older checkout), else null. */
  note: string | null;
}

/** What planCsvLog says for each step of a setup, gathered: the offers and the first reason one is not possible. */
export function csvLogOffer(
  steps: readonly { name: string; args: readonly string[] }[],
  cwd: string,
  read?: (path: string) => string,
): CsvLogOffer {
  const out: CsvLogOffer = { steps: [], note: null };
  steps.forEach((s, index) => {
    const plan = planCsvLog(s.args, cwd, read);
    if (plan.kind === 'offer')
      out.steps.push({ index, name: s.name, args: plan.args, certain: plan.certain, outputPath: plan.outputPath });
    else if (plan.kind === 'unsupported' && out.note === null) out.note = `step ${s.name}: ${plan.reason}`;
  });
  return out;
}

/**
 * Whether the loss log is on: what the user chose, else (`auto`) on where the checkout is known to have the
 * flag (an older DiffSynth stops at once on an unknown flag, so an unsure offer waits for a yes).
 */
export type CsvLogChoice = boolean | 'auto';

/** The steps the flag goes to under `choice`. */
export function csvLogSteps(offer: CsvLogOffer, choice: CsvLogChoice): CsvLogOffer['steps'] {
  if (choice === false) return [];
  return choice === true ? offer.steps : offer.steps.filter((s) => s.certain);
}

/** The steps with the offered flag added (for this run only: the setup itself is left as it is). */
export function withCsvLog<S extends { steps: { name: string; args: string[]; usesConfig: boolean }[] }>(
  setup: S,
  offer: CsvLogOffer,
  choice: CsvLogChoice = true,
): S {
  const chosen = csvLogSteps(offer, choice);
  if (chosen.length === 0) return setup;
  return {
    ...setup,
    steps: setup.steps.map((s, i) => {
      const o = chosen.find((x) => x.index === i);
      return o ? { ...s, args: [...o.args] } : s;
    }),
  };
}

/** What a DiffSynth step says of its run's length: --num_epochs, --dataset_repeat and where the samples are listed. */
export interface DiffSynthSchedule {
  /** --num_epochs (DiffSynth's default 1). */
  epochs: number;
  /** --dataset_repeat (DiffSynth's default 1): each epoch goes over the dataset this many times. */
  repeat: number;
  /** --dataset_metadata_path as written, or null (a cache folder of a data pass lists its own samples). */
  metadataPath: string | null;
  /** --dataset_base_path as written, or null. */
  basePath: string | null;
}

/** The schedule of a DiffSynth training step's args, or null for another step. */
export function diffSynthSchedule(args: readonly string[]): DiffSynthSchedule | null {
  const s = scriptArgs(args);
  if (!s || !SCRIPT_RE.test(s.script)) return null;
  const int = (name: string, fallback: number) => {
    const v = optionValue(s.rest, name);
    return v !== null && /^\d+$/.test(v) && Number(v) >= 1 ? Number(v) : fallback;
  };
  return {
    epochs: int('--num_epochs', 1),
    repeat: int('--dataset_repeat', 1),
    metadataPath: optionValue(s.rest, '--dataset_metadata_path'),
    basePath: optionValue(s.rest, '--dataset_base_path'),
  };
}

/** Metadata files larger than this are not counted (the samples stay unknown). */
export const METADATA_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Samples a DiffSynth metadata file lists: a CSV's rows after its header, a JSON array's entries, a JSONL's lines;
 * null when it cannot be read or counted.
 */
export function metadataRows(
  path: string,
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): number | null {
  let text: string;
  try {
    text = read(path);
  } catch {
    return null;
  }
  if (text.length > METADATA_MAX_BYTES) return null;
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (/\.jsonl$/i.test(path)) return lines.length;
  if (/\.json$/i.test(path)) {
    try {
      const v = JSON.parse(text) as unknown;
      return Array.isArray(v) ? v.length : null;
    } catch {
      return null;
    }
  }
  return Math.max(0, lines.length - 1);
}
