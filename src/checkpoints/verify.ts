/**
 * The verdict on one checkpoint: `ok`, or `bad` with the cause. What is checked (each against the format's or
 * DeepSpeed's own rules; see safetensors.ts and deepspeed.ts):
 *
 * - a weights file (`*.safetensors`: DiffSynth's `epoch-N` / `step-N`, HF's `model*.safetensors`,
 *   `adapter_model.safetensors`): a header that parses and tiles the file, at least one tensor, no tensor with a
 *   0 in its shape (what ZeRO-3 leaves when the 16-bit gather is off: its parameters are empty placeholders),
 *   no NaN or infinity in the values read (VALUE_SCAN_MAX_BYTES), for a LoRA the tensor count and every shape of
 *   rank r on the catalog's targets, for full weights at least half the model's parameters;
 * - a DeepSpeed tag (`global_stepN/`, accelerate's `pytorch_model/`): model and optimizer states of every
 *   data-parallel rank (0..N-1, N the run's process count when known), each a complete zip archive (torch.save),
 *   the optimizer states at least half the 12 bytes per trainable parameter they hold;
 * - a checkpoint folder (HF's `checkpoint-N`, accelerate's `checkpoint_N`): its weights files, its sharded
 *   index, its DeepSpeed tag (the one `latest` names) and HF's `trainer_state.json`, written last.
 *
 * Pure but for reading the files; never throws.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { printable } from '../text/index.js';
import { formatBytesShort, formatCount } from '../text/index.js';
import { isCompleteZip, LATEST_FILE, looksLikeTag, readLatest, readTag, type DeepSpeedTag } from './deepspeed.js';
import type { Expectation, LoraExpectation } from './expect.js';
import { readSafetensorsHeader, scanValues, VALUE_SCAN_MAX_BYTES, type SafetensorsHeader } from './safetensors.js';

/** What a checkpoint is. */
export type CheckpointKind = 'weights' | 'deepspeed' | 'hf-checkpoint' | 'accelerate-checkpoint';

/** Why a checkpoint is bad (one word per cause; the alert's fix follows from it). */
export type VerdictCause =
  | 'unreadable'
  | 'not-safetensors'
  | 'truncated'
  | 'no-tensors'
  | 'empty-tensors'
  | 'non-finite'
  | 'lora-mismatch'
  | 'too-small'
  | 'index-mismatch'
  | 'ds-missing-ranks'
  | 'ds-truncated'
  | 'ds-too-small'
  | 'ds-unfinished'
  | 'unfinished'
  /** A symbolic link in the run's outputs: named, never followed. */
  | 'link';

/** The LoRA key layouts zerowiz tells apart (see lora-layout.ts). */
export type LoraLayout = 'diffsynth' | 'peft' | 'comfyui' | 'diffusers';

/** What the files say about how a DeepSpeed tag was written. */
export interface TagFacts {
  tag: string;
  stage: 3 | '1-2' | null;
  worldSize: number;
  bf16: boolean;
}

/** The verdict on one checkpoint. */
export interface CheckpointVerdict {
  /** The file or folder, absolute. */
  path: string;
  kind: CheckpointKind;
  verdict: 'ok' | 'bad';
  /** One sentence: what was found (ok) or what is wrong (bad). */
  reason: string;
  cause: VerdictCause | null;
  /** Bytes on disk (a folder: its files that were checked). */
  bytes: number;
  /** The newest modification time among what was checked (ms since the epoch). */
  mtimeMs: number;
  /** For weights: the tensors and, for a LoRA, the key layout. */
  tensors?: number;
  loraLayout?: LoraLayout | null;
  /** For DeepSpeed states: how they were sharded. */
  deepspeed?: TagFacts | null;
  /** Whether 16-bit or fp32 weights a tool can load are in it (false: only ZeRO shards, zero_to_fp32 needed). */
  hasWeights: boolean;
}

const LORA_KEY_RE = /^(.*)\.lora_([AB])(\.[^.]+)?\.weight$/;

/** A LoRA key split: the module, A or B, and the adapter name (`default` for DiffSynth's, null for peft's saved). */
export function splitLoraKey(key: string): { module: string; which: 'A' | 'B'; adapter: string | null } | null {
  const m = LORA_KEY_RE.exec(key);
  if (!m) return null;
  return { module: m[1]!, which: m[2] as 'A' | 'B', adapter: m[3] ? m[3].slice(1) : null };
}

/** The key layout of a LoRA's tensor names, or null when none is a LoRA key. */
export function loraLayoutOf(names: readonly string[]): LoraLayout | null {
  const keys = names.map(splitLoraKey).filter((k) => k !== null);
  if (keys.length === 0) return null;
  if (keys.some((k) => k.adapter !== null)) return 'diffsynth';
  if (names.some((n) => n.startsWith('diffusion_model.'))) return 'comfyui';
  if (names.some((n) => n.startsWith('transformer.'))) return 'diffusers';
  return 'peft';
}

function stat(path: string): { bytes: number; mtimeMs: number } | null {
  try {
    const s = statSync(path);
    return { bytes: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return null;
  }
}

/** The LoRA check: every key on an expected target, every target's count, every shape. Null when all match. */
function loraMismatch(header: SafetensorsHeader, l: LoraExpectation): string | null {
  const expectedTotal = 2 * l.targets.reduce((a, t) => a + t.count, 0);
  const byTarget = new Map(l.targets.map((t) => [t.name, { a: 0, b: 0 }]));
  const names = [...l.targets].sort((x, y) => y.name.length - x.name.length);
  let loraKeys = 0;
  for (const t of header.tensors) {
    const k = splitLoraKey(t.name);
    if (!k) continue;
    loraKeys++;
    const target = names.find((x) => k.module === x.name || k.module.endsWith(`.${x.name}`));
    if (!target)
      return `${t.name} is on a module that is none of the targets (${l.targets.map((x) => x.name).join(', ')})`;
    const want = k.which === 'A' ? [l.rank, target.in] : [target.out, l.rank];
    if (t.shape.length !== 2 || t.shape[0] !== want[0] || t.shape[1] !== want[1])
      return `${t.name} is ${JSON.stringify(t.shape)}, not [${want.join(', ')}] (lora_${k.which} of rank ${l.rank} on ${target.name}: ${target.in} -> ${target.out})`;
    const c = byTarget.get(target.name)!;
    if (k.which === 'A') c.a++;
    else c.b++;
  }
  for (const t of l.targets) {
    const c = byTarget.get(t.name)!;
    if (c.a !== t.count || c.b !== t.count)
      return `expected ${expectedTotal} LoRA tensors (rank ${l.rank} on ${l.targets.length} targets of ${l.model}, lora_A and lora_B for each match); ${t.name} has ${c.a} lora_A and ${c.b} lora_B of ${t.count} (${loraKeys} LoRA tensors in all)`;
  }
  return null;
}

function tooSmall(what: string, numel: number, params: number): string {
  return `${what} holds ${formatCount(numel)} parameters where the model has ${formatCount(params)}: a partial save (one rank's ZeRO-3 shard, or weights taken outside the gather)`;
}

/** The verdict on one safetensors file; `part`: one file of a set (its size is judged over the set). */
function verifyWeightsFileRaw(
  path: string,
  expect: Expectation,
  opts: { kind?: CheckpointKind; scanBytes?: number; part?: boolean } = {},
): CheckpointVerdict {
  const kind = opts.kind ?? 'weights';
  const st = stat(path);
  const base = {
    path,
    kind,
    bytes: st?.bytes ?? 0,
    mtimeMs: st?.mtimeMs ?? 0,
    hasWeights: false,
  };
  const bad = (cause: VerdictCause, reason: string, extra: Partial<CheckpointVerdict> = {}): CheckpointVerdict => ({
    ...base,
    verdict: 'bad',
    cause,
    reason,
    ...extra,
  });
  if (!st) return bad('unreadable', `${basename(path)} cannot be read`);
  const h = readSafetensorsHeader(path);
  if (!h.ok)
    return bad(
      h.truncated ? 'truncated' : h.problem.includes('cannot be read') ? 'unreadable' : 'not-safetensors',
      `${basename(path)}: ${h.problem}`,
    );
  const header = h.header;
  const names = header.tensors.map((t) => t.name);
  const layout = loraLayoutOf(names);
  const facts = { tensors: header.tensors.length, loraLayout: layout };
  if (header.tensors.length === 0)
    return bad(
      'no-tensors',
      `${basename(path)} holds no tensors (${formatBytesShort(st.bytes)}): nothing was saved; under ZeRO-3 a state dict taken without the 16-bit gather is empty`,
      facts,
    );
  const empty = header.tensors.filter((t) => t.numel === 0);
  if (empty.length > 0)
    return bad(
      'empty-tensors',
      `${empty.length} of ${header.tensors.length} tensors are empty (${empty[0]!.name} has shape ${JSON.stringify(empty[0]!.shape)}): the ZeRO-3 partitions' placeholders were saved instead of the gathered weights (stage3_gather_16bit_weights_on_model_save off, or a state dict taken outside the gather)`,
      facts,
    );
  let shapeNote = '';
  if (layout !== null && expect.lora) {
    const m = loraMismatch(header, expect.lora);
    if (m) return bad('lora-mismatch', `${basename(path)}: ${m}`, facts);
    shapeNote = `; LoRA rank ${expect.lora.rank} on ${expect.lora.targets.length} targets of ${expect.lora.model}: every shape as expected`;
  } else if (layout !== null && expect.loraUnknown) {
    shapeNote = `; LoRA shapes not checked: ${expect.loraUnknown}`;
  }
  const numel = header.tensors.reduce((a, t) => a + t.numel, 0);
  if (layout === null && expect.modelParams !== null && numel < expect.modelParams / 2 && !opts.part)
    return bad('too-small', tooSmall(basename(path), numel, expect.modelParams), facts);
  const scan = scanValues(path, header, opts.scanBytes ?? VALUE_SCAN_MAX_BYTES);
  if (scan.nonFinite.length > 0)
    return bad(
      'non-finite',
      `${scan.nonFinite.length} tensor(s) hold NaN or infinity (${scan.nonFinite[0]}): the training diverged before this save`,
      facts,
    );
  const zeroB = layout !== null && header.tensors.filter((t) => splitLoraKey(t.name)?.which === 'B');
  const allZeroB = zeroB && zeroB.length > 0 && zeroB.every((t) => scan.allZero.includes(t.name));
  const scanned = scan.complete ? '' : `; values checked in the first ${formatBytesShort(scan.bytesRead)}`;
  return {
    ...base,
    ...facts,
    verdict: 'ok',
    cause: null,
    hasWeights: true,
    reason: `${header.tensors.length} tensors, ${formatCount(numel)} parameters, ${formatBytesShort(st.bytes)}${shapeNote}${scanned}${allZeroB ? '; every lora_B is zero: the adapter has not learned yet (saved before the first optimizer step?)' : ''}`,
  };
}

/** The facts of a tag's files. */
export function tagFacts(t: DeepSpeedTag): TagFacts {
  return { tag: t.tag, stage: t.stage, worldSize: t.optimRanks.length, bf16: t.bf16 };
}

function rangeGaps(ranks: readonly number[], n: number): number[] {
  const have = new Set(ranks);
  const out: number[] = [];
  for (let r = 0; r < n; r++) if (!have.has(r)) out.push(r);
  return out;
}

/**
 * Verifies one DeepSpeed tag folder. `saveDir` is the folder holding the tags and `latest`; `complete` says
 * whether the save is known to be over (`latest` names this tag or a newer one).
 */
function verifyDeepSpeedTagRaw(
  tagDir: string,
  expect: Expectation,
  opts: { saveDir?: string; kind?: CheckpointKind } = {},
): CheckpointVerdict {
  const tag = basename(tagDir);
  const t = readTag(tagDir, tag);
  const kind = opts.kind ?? 'deepspeed';
  const files = t?.files ?? [];
  const bytes = files.reduce((a, f) => a + f.bytes, 0);
  let mtimeMs = 0;
  for (const f of files) mtimeMs = Math.max(mtimeMs, stat(join(tagDir, f.name))?.mtimeMs ?? 0);
  const facts = t ? tagFacts(t) : null;
  const base = { path: tagDir, kind, bytes, mtimeMs, deepspeed: facts, hasWeights: false };
  const bad = (cause: VerdictCause, reason: string): CheckpointVerdict => ({ ...base, verdict: 'bad', cause, reason });
  if (!t) return bad('unreadable', `${tag} cannot be listed`);
  const saveDir = opts.saveDir;
  const latest = saveDir ? readLatest(saveDir) : null;
  const fixLatest = saveDir ? ` (${LATEST_FILE} names ${latest ?? 'nothing'})` : '';
  if (t.optimRanks.length === 0 && t.stage === null)
    return bad('ds-unfinished', `${tag} holds no model or optimizer states yet${fixLatest}`);
  const n = expect.worldSize ?? Math.max(t.optimRanks.length, t.modelRanks.length, ...t.optimRanks.map((r) => r + 1));
  const missingOptim = rangeGaps(t.optimRanks, n);
  const missingModel = t.stage === 3 ? rangeGaps(t.modelRanks, n) : [];
  if (t.optimRanks.length > 0 || t.stage === 3) {
    const missing = [...new Set([...missingOptim, ...missingModel])].sort((a, b) => a - b);
    if (missing.length > 0)
      return bad(
        'ds-missing-ranks',
        `${tag} lacks the states of rank${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${n}: ${missing.length > 1 ? 'they' : 'it'} did not finish writing (a rank died or the disk filled during the save); zero_to_fp32 and load_checkpoint refuse it`,
      );
    const extra = t.optimRanks.filter((r) => r >= n);
    if (extra.length > 0)
      return bad(
        'ds-missing-ranks',
        `${tag} holds states of ${Math.max(...t.optimRanks) + 1} ranks, the run had ${n}: files of another run are mixed in`,
      );
  }
  if (t.stage === null)
    return bad('ds-unfinished', `${tag} has optimizer states but no model states: the save did not finish`);
  const empty = t.files.find((f) => f.bytes === 0);
  if (empty) return bad('ds-truncated', `${tag}/${empty.name} is empty: the save was cut short`);
  const cut = t.files.find((f) => !isCompleteZip(join(tagDir, f.name)));
  if (cut)
    return bad(
      'ds-truncated',
      `${tag}/${cut.name} is not a complete torch archive (cut short): the save did not finish`,
    );
  const optimBytes = t.files.filter((f) => f.name.endsWith('_optim_states.pt')).reduce((a, f) => a + f.bytes, 0);
  if (expect.trainableParams !== null && t.optimRanks.length > 0 && optimBytes < (12 * expect.trainableParams) / 2)
    return bad(
      'ds-too-small',
      `${tag}'s optimizer states are ${formatBytesShort(optimBytes)}, where ${formatCount(expect.trainableParams)} trainable parameters need ${formatBytesShort(12 * expect.trainableParams)} (fp32 weights and Adam's two moments): a partial save`,
    );
  if (saveDir && latest === null)
    return bad(
      'ds-unfinished',
      `${tag} has every rank's states but ${LATEST_FILE} is missing beside it: DeepSpeed writes it last, so the save did not finish (or was saved with save_latest=False)`,
    );
  return {
    ...base,
    verdict: 'ok',
    cause: null,
    reason: `DeepSpeed states of ${n} rank(s), ZeRO stage ${t.stage === 3 ? '3' : '1 or 2'}${t.bf16 ? ', bf16' : ''}, ${formatBytesShort(bytes)}`,
  };
}

/** Weights files a checkpoint folder holds (what a tool loads), in name order. */
function weightsFiles(dir: string, names: readonly string[]): string[] {
  return names
    .filter((n) => n.endsWith('.safetensors'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((n) => join(dir, n));
}

/** A sharded safetensors index's problem (a shard missing, a tensor not in its shard), or null. */
function indexProblem(dir: string, indexName: string, headers: Map<string, Set<string>>): string | null {
  let index: unknown;
  try {
    index = JSON.parse(readFileSync(join(dir, indexName), 'utf8'));
  } catch {
    return `${indexName} is not JSON`;
  }
  const map = (index as { weight_map?: unknown }).weight_map;
  if (typeof map !== 'object' || map === null) return `${indexName} has no weight_map`;
  for (const [tensor, file] of Object.entries(map as Record<string, unknown>)) {
    const keys = headers.get(String(file));
    if (!keys) return `${indexName} names ${String(file)}, which is not there`;
    if (!keys.has(tensor)) return `${indexName} puts ${tensor} in ${String(file)}, which does not hold it`;
  }
  return null;
}

/**
 * Verifies a checkpoint folder: HF's `checkpoint-N` (complete once `trainer_state.json` is written) or
 * accelerate's `save_state` folder. `names`: its entries (read here when not given).
 */
function verifyCheckpointDirRaw(
  dir: string,
  kind: 'hf-checkpoint' | 'accelerate-checkpoint',
  expect: Expectation,
  opts: { scanBytes?: number } = {},
): CheckpointVerdict {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return {
      path: dir,
      kind,
      verdict: 'bad',
      cause: 'unreadable',
      reason: `${basename(dir)} cannot be listed`,
      bytes: 0,
      mtimeMs: 0,
      hasWeights: false,
    };
  }
  const parts: CheckpointVerdict[] = [];
  const headers = new Map<string, Set<string>>();
  // Full weights may be sharded: their size is checked over the set, below.
  let fullNumel = 0;
  for (const f of weightsFiles(dir, names)) {
    const v = verifyWeightsFile(f, expect, {
      kind,
      part: true,
      ...(opts.scanBytes !== undefined ? { scanBytes: opts.scanBytes } : {}),
    });
    parts.push(v);
    const h = readSafetensorsHeader(f);
    if (h.ok) {
      headers.set(basename(f), new Set(h.header.tensors.map((t) => t.name)));
      if (v.loraLayout === null) fullNumel += h.header.tensors.reduce((a, t) => a + t.numel, 0);
    }
  }
  const latest = readLatest(dir);
  let ds: CheckpointVerdict | null = null;
  const tagName = latest ?? names.find((n) => looksLikeTag(join(dir, n))) ?? null;
  if (tagName !== null) {
    ds = verifyDeepSpeedTag(join(dir, tagName), expect, { saveDir: dir, kind });
    parts.push(ds);
  }
  const bytes = parts.reduce((a, p) => a + p.bytes, 0);
  const mtimeMs = parts.reduce((a, p) => Math.max(a, p.mtimeMs), stat(dir)?.mtimeMs ?? 0);
  const hasWeights = parts.some((p) => p.kind !== 'deepspeed' && p.hasWeights);
  const base = { path: dir, kind, bytes, mtimeMs, deepspeed: ds?.deepspeed ?? null, hasWeights };
  const firstBad = parts.find((p) => p.verdict === 'bad');
  const name = basename(dir);
  if (firstBad)
    return {
      ...base,
      verdict: 'bad',
      cause: firstBad.cause,
      reason: firstBad.reason.startsWith(name) ? firstBad.reason : `${name}/${firstBad.reason}`,
    };
  const full = parts.filter((p) => p.kind !== 'deepspeed' && p.loraLayout === null);
  if (full.length > 0 && expect.modelParams !== null && fullNumel < expect.modelParams / 2)
    return {
      ...base,
      verdict: 'bad',
      cause: 'too-small',
      reason: tooSmall(`${name}'s weights`, fullNumel, expect.modelParams),
    };
  const index = names.find((n) => n.endsWith('.safetensors.index.json'));
  if (index) {
    const p = indexProblem(dir, index, headers);
    if (p) return { ...base, verdict: 'bad', cause: 'index-mismatch', reason: `${name}: ${p}` };
  }
  if (kind === 'hf-checkpoint' && !names.includes('trainer_state.json'))
    return {
      ...base,
      verdict: 'bad',
      cause: 'unfinished',
      reason: `${name} has no trainer_state.json: the Trainer writes it last, so the save did not finish`,
    };
  if (parts.length === 0)
    return {
      ...base,
      verdict: 'bad',
      cause: 'no-tensors',
      reason: `${name} holds neither weights (*.safetensors) nor DeepSpeed states`,
    };
  const what = [
    hasWeights
      ? `weights: ${parts
          .filter((p) => p.kind !== 'deepspeed' && p.hasWeights)
          .map((p) => basename(p.path))
          .join(', ')}`
      : 'no 16-bit weights: only ZeRO shards (zerowiz export weights runs zero_to_fp32 on them)',
    ds ? `${basename(ds.path)}: ${ds.reason}` : null,
  ].filter((x) => x !== null);
  return { ...base, verdict: 'ok', cause: null, reason: `${name}: ${what.join('; ')}` };
}

/** A verdict whose reason is safe to print: names from the files (tensors, files) may hold control characters. */
function clean(v: CheckpointVerdict): CheckpointVerdict {
  return { ...v, reason: printable(v.reason) };
}

/** Verifies one safetensors file against what the run should save (see verifyWeightsFileRaw). */
export function verifyWeightsFile(
  path: string,
  expect: Expectation,
  opts: { kind?: CheckpointKind; scanBytes?: number; part?: boolean } = {},
): CheckpointVerdict {
  return clean(verifyWeightsFileRaw(path, expect, opts));
}

/** Verifies one DeepSpeed tag folder (see verifyDeepSpeedTagRaw). */
export function verifyDeepSpeedTag(
  tagDir: string,
  expect: Expectation,
  opts: { saveDir?: string; kind?: CheckpointKind } = {},
): CheckpointVerdict {
  return clean(verifyDeepSpeedTagRaw(tagDir, expect, opts));
}

/** Verifies a checkpoint folder, HF's checkpoint-N or accelerate's save_state folder (see verifyCheckpointDirRaw). */
export function verifyCheckpointDir(
  dir: string,
  kind: 'hf-checkpoint' | 'accelerate-checkpoint',
  expect: Expectation,
  opts: { scanBytes?: number } = {},
): CheckpointVerdict {
  return clean(verifyCheckpointDirRaw(dir, kind, expect, opts));
}
