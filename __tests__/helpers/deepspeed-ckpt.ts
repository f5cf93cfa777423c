/**
 * DeepSpeed checkpoint folders with the names and layout DeepSpeed 0.19 writes (deepspeed/runtime/engine.py:
 * save_checkpoint, _get_ckpt_name, _get_zero_ckpt_name, _copy_recovery_script; see
 * src/checkpoints/deepspeed.ts). Each .pt is a zip archive as torch.save writes it (entries stored under
 * `archive/`); the contents are placeholders: only the real tier's checkpoints come from torch.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(b: Buffer): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip archive with the entries stored (no compression), as torch.save's writer does. */
export function zipBytes(entries: { name: string; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, e.data);
    centrals.push(central, name);
    offset += 30 + name.length + e.data.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}

/** A torch.save-like archive holding `bytes` of tensor data. */
export function ptBytes(bytes: number): Buffer {
  return zipBytes([
    { name: 'archive/data.pkl', data: Buffer.from('placeholder pickle') },
    { name: 'archive/data/0', data: Buffer.alloc(bytes, 1) },
    { name: 'archive/version', data: Buffer.from('3\n') },
  ]);
}

/** How to write one tag. */
export interface TagSpec {
  tag?: string;
  stage: 1 | 2 | 3;
  worldSize: number;
  bf16?: boolean;
  /** Write `latest` naming the tag (default true). */
  latest?: boolean;
  /** Ranks that wrote nothing. */
  skipRanks?: number[];
  /** Bytes of optimizer data per rank (default 4096). */
  optimBytesPerRank?: number;
  /** A file of the tag to cut short (half its bytes kept). */
  truncate?: string;
}

/** The file names DeepSpeed 0.19 writes for a tag (model states, then optimizer states). */
export function tagFileNames(s: Pick<TagSpec, 'stage' | 'worldSize' | 'bf16'>): string[] {
  const ranks = Array.from({ length: s.worldSize }, (_, r) => r);
  const model =
    s.stage === 3 ? ranks.map((r) => `zero_pp_rank_${r}_mp_rank_00_model_states.pt`) : ['mp_rank_00_model_states.pt'];
  const optim = ranks.map((r) => `${s.bf16 ? 'bf16_' : ''}zero_pp_rank_${r}_mp_rank_00_optim_states.pt`);
  return [...model, ...optim];
}

/** Writes SAVE_DIR/TAG/ (and SAVE_DIR/latest, SAVE_DIR/zero_to_fp32.py); returns the tag folder. */
export function writeDeepSpeedTag(saveDir: string, s: TagSpec): string {
  const tag = s.tag ?? 'global_step10';
  const dir = join(saveDir, tag);
  mkdirSync(dir, { recursive: true });
  const skip = new Set(s.skipRanks ?? []);
  for (const name of tagFileNames(s)) {
    const rank = /zero_pp_rank_(\d+)_/.exec(name);
    if (rank && skip.has(Number(rank[1]))) continue;
    let data = ptBytes(name.endsWith('_optim_states.pt') ? (s.optimBytesPerRank ?? 4096) : 256);
    if (s.truncate === name) data = data.subarray(0, Math.floor(data.length / 2));
    writeFileSync(join(dir, name), data);
  }
  writeFileSync(join(saveDir, 'zero_to_fp32.py'), '# DeepSpeed copies its recovery script here\n');
  if (s.latest !== false) writeFileSync(join(saveDir, 'latest'), tag);
  return dir;
}
