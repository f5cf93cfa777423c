/**
 * DeepSpeed checkpoints as DeepSpeed 0.19 writes them, read without Python (deepspeedai/DeepSpeed at edaa7221,
 * v0.19.6, deepspeed/runtime/engine.py):
 *
 *   SAVE_DIR/latest                  the tag, written by rank 0 after every rank saved (save_checkpoint, last)
 *   SAVE_DIR/zero_to_fp32.py         copied by rank 0 (_copy_recovery_script)
 *   SAVE_DIR/TAG/                    TAG defaults to global_step<N>; accelerate's save_state passes `pytorch_model`
 *     mp_rank_00_model_states.pt                        stages 0-2: the module's 16-bit state (_get_ckpt_name)
 *     zero_pp_rank_<r>_mp_rank_00_model_states.pt       stage 3: one per data-parallel rank r
 *     [bf16_]zero_pp_rank_<r>_mp_rank_00_optim_states.pt   one per rank r: fp32 master weights and Adam
 *                                                       states (_get_zero_ckpt_name; `bf16_` when bf16 is on)
 *
 * `zero_to_fp32.py` and `ds_to_universal.py` find these by the same globs (`*_model_states.pt`,
 * `*_optim_states.pt`) and refuse a tag whose optimizer files are fewer than the world size they record
 * ("Expected N of '*_optim_states.pt' ... but found M files"). torch.save writes zip archives (since torch 1.6),
 * so a file cut short has no end-of-central-directory record.
 */
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What DeepSpeed writes the tag into, beside the tags. */
export const LATEST_FILE = 'latest';
/** What ds_to_universal writes beside the tags, naming the universal one (load_universal reads it). */
export const LATEST_UNIVERSAL_FILE = 'latest_universal';

const MODEL_STATES_RE = /^(?:zero_pp_rank_(\d+)_)?mp_rank_(\d+)_model_states\.pt$/;
const OPTIM_STATES_RE = /^(bf16_)?zero_pp_rank_(\d+)_mp_rank_(\d+)_optim_states\.pt$/;

/** One tag directory's files, by DeepSpeed's names. */
export interface DeepSpeedTag {
  dir: string;
  tag: string;
  /** 3 when each rank wrote its own model states (ZeRO-3), '1-2' for one mp_rank_00 file, null when neither. */
  stage: 3 | '1-2' | null;
  /** Data-parallel ranks that wrote optimizer states, sorted. */
  optimRanks: number[];
  /** Data-parallel ranks that wrote model states (stage 3), sorted. */
  modelRanks: number[];
  /** Whether the optimizer files carry DeepSpeed's `bf16_` prefix (bf16 was enabled). */
  bf16: boolean;
  /** Every *.pt with its size. */
  files: { name: string; bytes: number }[];
}

/** Whether a folder name is DeepSpeed's default tag (`global_step<N>`). */
export function isGlobalStepTag(name: string): boolean {
  return /^global_step\d+$/.test(name);
}

/** The tag a save dir's `latest` names, or null when there is none (or it is empty or not text). */
export function readLatest(saveDir: string, file = LATEST_FILE): string | null {
  try {
    if (statSync(join(saveDir, file)).size > 4096) return null;
    const tag = readFileSync(join(saveDir, file), 'utf8').trim();
    return tag !== '' && !tag.includes('/') && !tag.includes('\0') ? tag : null;
  } catch {
    return null;
  }
}

/** Whether a folder holds DeepSpeed model or optimizer states (is a tag). */
export function looksLikeTag(dir: string): boolean {
  try {
    return readdirSync(dir).some((n) => MODEL_STATES_RE.test(n) || OPTIM_STATES_RE.test(n));
  } catch {
    return false;
  }
}

/** The files of a tag directory, by DeepSpeed's names; null when it cannot be listed. */
export function readTag(dir: string, tag: string): DeepSpeedTag | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  const out: DeepSpeedTag = { dir, tag, stage: null, optimRanks: [], modelRanks: [], bf16: false, files: [] };
  let plainModel = false;
  for (const n of names) {
    if (!n.endsWith('.pt')) continue;
    let bytes = 0;
    try {
      const st = statSync(join(dir, n));
      if (!st.isFile()) continue;
      bytes = st.size;
    } catch {
      continue;
    }
    const m = MODEL_STATES_RE.exec(n);
    if (m) {
      if (m[1] !== undefined) out.modelRanks.push(Number(m[1]));
      else plainModel = true;
      out.files.push({ name: n, bytes });
      continue;
    }
    const o = OPTIM_STATES_RE.exec(n);
    if (o) {
      out.optimRanks.push(Number(o[2]));
      if (o[1]) out.bf16 = true;
      out.files.push({ name: n, bytes });
    }
  }
  out.optimRanks.sort((a, b) => a - b);
  out.modelRanks.sort((a, b) => a - b);
  out.stage = out.modelRanks.length > 0 ? 3 : plainModel ? '1-2' : null;
  out.files.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  return out;
}

const EOCD_SIG = 0x06054b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
/** The end-of-central-directory record is 22 bytes plus a comment of up to 65535. */
const EOCD_SEARCH_BYTES = 22 + 65_535;

/**
 * Whether a file is a complete zip archive (what torch.save writes): its end-of-central-directory record is
 * there and its central directory lies inside the file. A file cut short fails; never throws.
 */
export function isCompleteZip(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size < 22) return false;
    const len = Math.min(size, EOCD_SEARCH_BYTES);
    const tail = Buffer.alloc(len);
    readSync(fd, tail, 0, len, size - len);
    for (let i = len - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) !== EOCD_SIG) continue;
      const cdBytes = tail.readUInt32LE(i + 12);
      const cdOffset = tail.readUInt32LE(i + 16);
      const commentBytes = tail.readUInt16LE(i + 20);
      if (i + 22 + commentBytes !== len) continue; // a signature inside data, not the record
      if (cdOffset === 0xffffffff || cdBytes === 0xffffffff)
        return i >= 20 && tail.readUInt32LE(i - 20) === ZIP64_LOCATOR_SIG;
      const eocdAt = size - len + i;
      return cdOffset + cdBytes <= eocdAt;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}
