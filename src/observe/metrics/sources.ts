/**
 * Parsers for the lines a training run prints about itself, one per source, each checked against the real
 * tool's code (see docs/run-output.md, "Metric sources"):
 * - Hugging Face Trainer: `ProgressCallback.on_log` writes `str(logs)` above its tqdm bar, a Python dict
 *   repr such as `{'loss': 1.0453, 'grad_norm': 0.52, 'learning_rate': 5e-05, 'epoch': 0.5}`
 *   (huggingface/transformers src/transformers/trainer_callback.py); the end of training logs
 *   `{'train_runtime': ..., 'train_loss': ..., 'epoch': ...}`, evaluation `{'eval_loss': ...}`.
 * - DeepSpeed `DeepSpeedEngine._report_progress`: `log_dist(f"step={step}, skipped={self.skipped_steps},
 *   lr={lr}, mom={mom}", ranks=[0])`, i.e. `[Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]`
 *   after the logger prefix (deepspeedai/DeepSpeed deepspeed/runtime/engine.py, utils/logging.py get_dist_msg).
 * - DeepSpeed `see_memory_usage` (deepspeed/runtime/utils.py): `MA 0.31 GB         Max_MA 12.99 GB         CA
 *   13.01 GB         Max_CA 13 GB ` (GiB values; the f-string's line continuations keep 8 spaces of indent).
 * - DeepSpeed fp16 overflow (deepspeed/runtime/fp16/loss_scaler.py DynamicLossScaler.update_scale, used by
 *   ZeRO 1-3): `[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768`,
 *   or `..., but hysteresis is 2. Reducing hysteresis to 1`, or no scale at all outside fp16; the non-ZeRO
 *   FP16_Optimizer (fp16/fused_optimizer.py step_fused_adam, step) prints `[deepspeed] fp16 dynamic loss scale
 *   overflow! Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0` and `Overflow detected.
 *   Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0`.
 * - DiffSynth-Studio's `loss.csv` rows (diffsynth/diffusion/logger.py CSVLogger): `step,key,value`.
 * Every parser is only reached for lines that passed a cheap check (a character or an indexOf).
 */

/** A Python float as `repr` prints it (`0.1`, `1e-05`, `nan`, `inf`, `-inf`); NaN when it is not one. */
export function pythonFloat(text: string): number {
  const t = text.trim();
  const lower = t.toLowerCase();
  if (lower === 'nan' || lower === '-nan' || lower === '+nan') return Number.NaN;
  if (lower === 'inf' || lower === '+inf' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  if (t === '' || !/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(t)) return Number.NaN;
  return Number(t);
}

/** Whether a parsed value is a real number or one of Python's non-finite floats (as opposed to garbage). */
function isNumberText(text: string): boolean {
  return /^\s*[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|infinity)\s*$/i.test(text);
}

/** What a Hugging Face Trainer log dict says. Absent keys are null. */
export interface HfLog {
  /** 'train': a logging step; 'eval': evaluation metrics; 'summary': the end-of-training summary. */
  kind: 'train' | 'eval' | 'summary';
  loss: number | null;
  gradNorm: number | null;
  learningRate: number | null;
  epoch: number | null;
  /** The summary's mean training loss (`train_loss`). */
  trainLoss: number | null;
}

// 'key': value, where value is a quoted string, a tensor(...) repr, or anything up to the next `, '` or `}`.
const HF_PAIR_RE = /'([^']+)':\s*(?:'([^']*)'|tensor\(([^,)]+)[^)]*\)|([^,}]+))/g;

/**
 * A Trainer log dict (`{'loss': 1.0453, 'grad_norm': 0.52, 'learning_rate': 5e-05, 'epoch': 0.5}`), or null
 * when the line is not one. Values may be quoted strings of numbers (some versions format them) or, in old
 * releases, `tensor(0.52, device='cuda:0')`.
 */
export function parseHfLog(line: string): HfLog | null {
  const s = line.trim();
  if (s.charCodeAt(0) !== 0x7b || s.charCodeAt(s.length - 1) !== 0x7d || !s.includes("':")) return null;
  const values = new Map<string, number>();
  HF_PAIR_RE.lastIndex = 0;
  for (let m = HF_PAIR_RE.exec(s); m !== null; m = HF_PAIR_RE.exec(s)) {
    const raw = m[2] ?? m[3] ?? m[4] ?? '';
    if (isNumberText(raw)) values.set(m[1]!, pythonFloat(raw));
  }
  if (values.size === 0) return null;
  const get = (k: string) => values.get(k) ?? null;
  const kind = values.has('train_runtime')
    ? 'summary'
    : [...values.keys()].some((k) => k.startsWith('eval_'))
      ? 'eval'
      : 'train';
  if (kind === 'train' && !values.has('loss') && !values.has('learning_rate') && !values.has('grad_norm')) return null;
  return {
    kind,
    loss: kind === 'train' ? get('loss') : null,
    gradNorm: get('grad_norm'),
    learningRate: get('learning_rate'),
    epoch: get('epoch'),
    trainLoss: get('train_loss'),
  };
}

/** DeepSpeed's progress report (`[Rank 0] step=10, skipped=0, lr=[0.0001], mom=[...]`). */
export interface DsStepReport {
  step: number;
  skipped: number;
  /** The first parameter group's learning rate, or null. */
  lr: number | null;
}

const DS_STEP_RE = /\[Rank \d+\] step=(\d+), skipped=(\d+), lr=\[?\s*([^,\]\s]+)/;

/** DeepSpeed's `step=..., skipped=..., lr=...` report, or null. */
export function parseDsStep(line: string): DsStepReport | null {
  if (line.indexOf('[Rank ') === -1) return null;
  const m = DS_STEP_RE.exec(line);
  if (!m) return null;
  const lr = pythonFloat(m[3]!);
  return { step: Number(m[1]), skipped: Number(m[2]), lr: Number.isFinite(lr) ? lr : null };
}

/** DeepSpeed `see_memory_usage` figures, in bytes (DeepSpeed prints GiB and calls them GB). */
export interface DsMemory {
  allocatedBytes: number;
  maxAllocatedBytes: number;
  reservedBytes: number;
  maxReservedBytes: number;
}

const DS_MEMORY_RE =
  /\bMA (\d+(?:\.\d+)?) GB\s+Max_MA (\d+(?:\.\d+)?) GB\s+CA (\d+(?:\.\d+)?) GB\s+Max_CA (\d+(?:\.\d+)?) GB/;
const GIB = 2 ** 30;

/** A `see_memory_usage` line (`MA 0.31 GB  Max_MA 12.99 GB  CA 13.01 GB  Max_CA 13 GB`), or null. */
export function parseDsMemory(line: string): DsMemory | null {
  if (line.indexOf('Max_MA') === -1) return null;
  const m = DS_MEMORY_RE.exec(line);
  if (!m) return null;
  const b = (i: number) => Math.round(Number(m[i]) * GIB);
  return { allocatedBytes: b(1), maxAllocatedBytes: b(2), reservedBytes: b(3), maxReservedBytes: b(4) };
}

/** One skipped step reported by DeepSpeed's loss scaler. */
export interface DsOverflow {
  /** The loss scale that overflowed (fp16 only), or null. */
  attemptedScale: number | null;
  /** The scale after the overflow (null when hysteresis absorbed it, or outside fp16). */
  nextScale: number | null;
  /** True when DeepSpeed printed a loss scale, i.e. the run uses fp16 dynamic loss scaling. */
  fp16: boolean;
}

const DS_OVERFLOW_RE =
  /(?:OVERFLOW! Rank \d+ Skipping step\.|loss scale overflow! Skipping step\.|Overflow detected\. Skipping step\.)(?: Attempted loss scale: (\d+(?:\.\d+)?)(?:, reducing to (\d+(?:\.\d+)?))?)?/;

/** A DeepSpeed overflow ("Skipping step") line, or null. */
export function parseDsOverflow(line: string): DsOverflow | null {
  if (line.indexOf('verflow') === -1 && line.indexOf('OVERFLOW') === -1) return null;
  const m = DS_OVERFLOW_RE.exec(line);
  if (!m) return null;
  const attempted = m[1] === undefined ? null : Number(m[1]);
  return { attemptedScale: attempted, nextScale: m[2] === undefined ? null : Number(m[2]), fp16: attempted !== null };
}

/** One row of DiffSynth's loss.csv. */
export interface CsvLogRow {
  step: number;
  key: string;
  value: number;
}

/**
 * A `step,key,value` row as csv.DictWriter writes it (`12,loss,0.0123`, `13,loss,nan`), or null for the
 * header and anything else. Python's csv quotes a field only when it needs to; a quoted key is unquoted.
 */
export function parseCsvLogRow(line: string): CsvLogRow | null {
  const a = line.indexOf(',');
  const b = line.lastIndexOf(',');
  if (a <= 0 || b <= a) return null;
  const stepText = line.slice(0, a);
  if (!/^\d+$/.test(stepText)) return null;
  let key = line.slice(a + 1, b);
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1).replaceAll('""', '"');
  const valueText = line.slice(b + 1).trim();
  if (!isNumberText(valueText)) return null;
  return { step: Number(stepText), key, value: pythonFloat(valueText) };
}

const POSTFIX_LR_RE = /(?:^|[\s,])lr=([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)/;

/** The learning rate in a tqdm postfix (`loss=0.1, lr=1e-4`), or null. */
export function parsePostfixLr(postfix: string): number | null {
  if (postfix.indexOf('lr=') === -1) return null;
  const m = POSTFIX_LR_RE.exec(postfix);
  return m ? Number(m[1]) : null;
}
