/**
 * Where a step's checkpoints go and what is there. The output folder a step names
 * (`--output_path`: DiffSynth-Studio, default ./models; `--output_dir`: HF Trainer and most scripts;
 * `--save_dir`, `--checkpoint_dir`, `--checkpointing_dir`, `--project_dir`) holds, as each tool writes it:
 *
 *   epoch-N.safetensors, step-N.safetensors   DiffSynth's ModelLogger (diffsynth/diffusion/logger.py)
 *   *.safetensors                             any other weights file
 *   checkpoint-N/                             HF Trainer (PREFIX_CHECKPOINT_DIR, `_save_checkpoint`)
 *   checkpoint_N/, checkpoints/checkpoint_N/  accelerate's save_state with automatic_checkpoint_naming
 *   latest + TAG/ (global_stepN/, ...)        DeepSpeed's save_checkpoint into the folder itself
 */
import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { isDataPass } from '../config/index.js';
import { argValue } from '../config/index.js';
import { diffSynthOutputPath } from '../config/index.js';
import { printable } from '../text/index.js';
import { isGlobalStepTag, LATEST_FILE, LATEST_UNIVERSAL_FILE, looksLikeTag, readLatest } from './deepspeed.js';
import type { Expectation } from './expect.js';
import {
  verifyCheckpointDir,
  verifyDeepSpeedTag,
  verifyWeightsFile,
  type CheckpointKind,
  type CheckpointVerdict,
} from './verify.js';

/** The flags that name where a script saves (the first one a step gives is its output folder). */
export const OUTPUT_FLAGS = [
  '--output_path',
  '--output_dir',
  '--save_dir',
  '--checkpoint_dir',
  '--checkpointing_dir',
  '--project_dir',
] as const;

/** One checkpoint found in an output folder. */
export interface FoundCheckpoint {
  path: string;
  kind: CheckpointKind;
  /** The file or folder name. */
  name: string;
  /** The training step its name carries (step-N, checkpoint-N, global_stepN), or null. */
  step: number | null;
  /** DiffSynth's epoch-N, or null. */
  epoch: number | null;
  /** For a DeepSpeed tag: the folder holding it and `latest`. */
  saveDir?: string;
  /** Where it leads, when it is a symbolic link (named, never followed: verifyFound says so). */
  link?: string;
}

/** The absolute output folders a step saves into (none for a data pass, which writes a cache). */
export function outputRoots(args: readonly string[], cwd: string): string[] {
  if (isDataPass(args)) return [];
  const abs = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p));
  const out: string[] = [];
  const ds = diffSynthOutputPath(args);
  if (ds !== null) out.push(abs(ds));
  for (const f of OUTPUT_FLAGS) {
    const v = argValue(args, f);
    if (typeof v === 'string' && v !== '' && !out.includes(abs(v))) out.push(abs(v));
  }
  return out;
}

/** Where a symbolic link at `p` leads, or null when `p` is no link. */
function linkTarget(p: string): string | null {
  try {
    return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : null;
  } catch {
    return null;
  }
}

/** The kind a checkpoint's name gives it (a link is judged by its name alone), or null for another name. */
function kindOfName(n: string): CheckpointKind | null {
  if (n.endsWith('.safetensors')) return 'weights';
  if (/^checkpoint-\d+$/.test(n)) return 'hf-checkpoint';
  if (/^checkpoint_\d+$/.test(n)) return 'accelerate-checkpoint';
  if (isGlobalStepTag(n)) return 'deepspeed';
  return null;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

const num = (re: RegExp, name: string): number | null => {
  const m = re.exec(name);
  return m ? Number(m[1]) : null;
};

/** The DeepSpeed tags of a save folder (those holding states; the one `latest` names first if it exists). */
function tagsIn(saveDir: string, names: readonly string[]): FoundCheckpoint[] {
  const latest = readLatest(saveDir);
  // ds_to_universal's output (TAG_universal, named by latest_universal) is a conversion, not a save of the run.
  const universal = readLatest(saveDir, LATEST_UNIVERSAL_FILE);
  const tags = names.filter(
    (n) =>
      !n.startsWith('.') &&
      n !== universal &&
      !n.endsWith('_universal') &&
      isDir(join(saveDir, n)) &&
      (isGlobalStepTag(n) || n === latest || looksLikeTag(join(saveDir, n))),
  );
  return tags.map((n) => ({
    path: join(saveDir, n),
    kind: 'deepspeed' as const,
    name: n,
    step: num(/^global_step(\d+)$/, n),
    epoch: null,
    saveDir,
  }));
}

/** A checkpoint at `path` of a known kind, its numbers read from its name (as findCheckpoints does). */
export function describeCheckpoint(path: string, kind: CheckpointKind): FoundCheckpoint {
  const name = basename(path);
  if (kind === 'deepspeed')
    return { path, kind, name, step: num(/^global_step(\d+)$/, name), epoch: null, saveDir: dirname(path) };
  return {
    path,
    kind,
    name,
    step: num(/^step-(\d+)\.safetensors$/, name) ?? num(/^checkpoint-(\d+)$/, name),
    epoch: num(/^epoch-(\d+)\.safetensors$/, name),
  };
}

/** The order findCheckpoints lists checkpoints in: by the number in the name, then by name. */
export function checkpointOrder(a: FoundCheckpoint, b: FoundCheckpoint): number {
  const order = (c: FoundCheckpoint) => c.step ?? c.epoch ?? num(/_(\d+)$/, c.name) ?? -1;
  return order(a) - order(b) || a.name.localeCompare(b.name, 'en', { numeric: true });
}

/** Every checkpoint in an output folder, oldest step first (then by name). */
export function findCheckpoints(root: string): FoundCheckpoint[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: FoundCheckpoint[] = [];
  for (const n of names) {
    if (n.startsWith('.')) continue;
    const p = join(root, n);
    const link = linkTarget(p);
    const linked = link !== null ? kindOfName(n) : null;
    if (link !== null) {
      // A checkpoint's name on a link: named as what it is, never followed (it is not this run's file).
      if (linked) out.push({ ...describeCheckpoint(p, linked), link });
      continue;
    }
    if (n.endsWith('.safetensors') && isFile(p)) {
      out.push({
        path: p,
        kind: 'weights',
        name: n,
        step: num(/^step-(\d+)\.safetensors$/, n),
        epoch: num(/^epoch-(\d+)\.safetensors$/, n),
      });
    } else if (/^checkpoint-\d+$/.test(n) && isDir(p)) {
      out.push({ path: p, kind: 'hf-checkpoint', name: n, step: num(/^checkpoint-(\d+)$/, n), epoch: null });
    } else if (/^checkpoint_\d+$/.test(n) && isDir(p)) {
      out.push({ path: p, kind: 'accelerate-checkpoint', name: n, step: null, epoch: null });
    } else if (n === 'checkpoints' && isDir(p)) {
      for (const c of safeList(p))
        if (/^checkpoint_\d+$/.test(c) && isDir(join(p, c)))
          out.push({ path: join(p, c), kind: 'accelerate-checkpoint', name: c, step: null, epoch: null });
    }
  }
  if (isFile(join(root, LATEST_FILE)) || names.some((n) => isGlobalStepTag(n)))
    out.push(...tagsIn(root, names).filter((t) => linkTarget(t.path) === null));
  return out.sort(checkpointOrder);
}

/** The verdict on a checkpoint that is a link: bad, naming where it leads; nothing behind it is read. */
function linkVerdict(c: FoundCheckpoint, target: string): CheckpointVerdict {
  let mtimeMs = 0;
  try {
    mtimeMs = lstatSync(c.path).mtimeMs;
  } catch {}
  return {
    path: c.path,
    kind: c.kind,
    verdict: 'bad',
    cause: 'link',
    reason: `${basename(c.path)} is a symbolic link (to ${printable(target)}): zerowiz does not follow links in a run's outputs, so it is neither verified nor exported`,
    bytes: 0,
    mtimeMs,
    hasWeights: false,
  };
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The verdict on a checkpoint found by findCheckpoints. */
export function verifyFound(
  c: FoundCheckpoint,
  expect: Expectation,
  opts: { scanBytes?: number } = {},
): CheckpointVerdict {
  if (c.link !== undefined) return linkVerdict(c, c.link);
  if (c.kind === 'weights') return verifyWeightsFile(c.path, expect, opts);
  if (c.kind === 'deepspeed') return verifyDeepSpeedTag(c.path, expect, c.saveDir ? { saveDir: c.saveDir } : {});
  return verifyCheckpointDir(c.path, c.kind, expect, opts);
}
