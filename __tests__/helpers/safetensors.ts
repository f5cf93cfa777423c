/**
 * Writes safetensors files byte for byte as the format defines them (huggingface/safetensors README, "Format"):
 * an 8-byte little-endian header length N, N bytes of JSON padded with spaces to a multiple of 8, then the
 * tensors' bytes back to back, each entry's `data_offsets` relative to the end of the header. The real tier
 * writes the same files with the real torch + safetensors + peft (__tests__/real/checkpoints.test.ts); these are
 * for the unit tests, which must run without Python.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** One tensor to write: its name, dtype, shape and (optionally) its values (default: small non-zero ramp). */
export interface TensorSpec {
  name: string;
  dtype?: 'F32' | 'F16' | 'BF16';
  shape: number[];
  values?: number[];
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

function f32ToBf16(x: number): number {
  const b = Buffer.alloc(4);
  b.writeFloatLE(x);
  return b.readUInt16LE(2);
}

function f32ToF16(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  if (x === Infinity) return 0x7c00;
  if (x === -Infinity) return 0xfc00;
  const b = Buffer.alloc(4);
  b.writeFloatLE(x);
  const bits = b.readUInt32LE(0);
  const sign = (bits >>> 16) & 0x8000;
  const exp = ((bits >>> 23) & 0xff) - 127 + 15;
  const mant = bits & 0x7fffff;
  if (exp <= 0) return sign;
  if (exp >= 31) return sign | 0x7c00;
  return sign | (exp << 10) | (mant >>> 13);
}

/** The bytes of one tensor. */
function tensorBytes(t: TensorSpec): Buffer {
  const dtype = t.dtype ?? 'F32';
  const n = t.shape.reduce((a, b) => a * b, 1);
  const size = BYTES[dtype]!;
  const out = Buffer.alloc(n * size);
  for (let i = 0; i < n; i++) {
    const v = t.values ? t.values[i % t.values.length]! : ((i % 7) + 1) / 64;
    if (dtype === 'F32') out.writeFloatLE(v, i * 4);
    else if (dtype === 'BF16') out.writeUInt16LE(f32ToBf16(v), i * 2);
    else out.writeUInt16LE(f32ToF16(v), i * 2);
  }
  return out;
}

/** A safetensors file's bytes. `metadata` goes under `__metadata__` (accelerate.save writes {"format": "pt"}). */
export function safetensorsBytes(
  tensors: TensorSpec[],
  metadata: Record<string, string> | null = { format: 'pt' },
): Buffer {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  const datas: Buffer[] = [];
  let offset = 0;
  for (const t of tensors) {
    const data = tensorBytes(t);
    header[t.name] = { dtype: t.dtype ?? 'F32', shape: t.shape, data_offsets: [offset, offset + data.length] };
    offset += data.length;
    datas.push(data);
  }
  let json = JSON.stringify(header);
  while (Buffer.byteLength(json) % 8 !== 0) json += ' ';
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([len, Buffer.from(json), ...datas]);
}

/** Writes a safetensors file (folders made). */
export function writeSafetensors(path: string, tensors: TensorSpec[], metadata?: Record<string, string> | null): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, safetensorsBytes(tensors, metadata));
}

/**
 * The tensors of a DiffSynth LoRA as `ModelLogger.save_model` writes them (peft's `inject_adapter_in_model`
 * names, the `--remove_prefix_in_ckpt` prefix removed): for each target and each of its `count` matches,
 * `<block>.<target>.lora_A.default.weight` [rank, in] and `lora_B` [out, rank].
 */
export function diffsynthLora(
  rank: number,
  targets: Record<string, [inF: number, outF: number, count: number]>,
  dtype: TensorSpec['dtype'] = 'BF16',
): TensorSpec[] {
  const out: TensorSpec[] = [];
  for (const [name, [inF, outF, count]] of Object.entries(targets)) {
    for (let i = 0; i < count; i++) {
      const mod = `transformer_blocks.${i}.${name.startsWith('to_') || name.startsWith('add_') ? 'attn.' : ''}${name}`;
      out.push({ name: `${mod}.lora_A.default.weight`, dtype, shape: [rank, inF] });
      out.push({ name: `${mod}.lora_B.default.weight`, dtype, shape: [outF, rank] });
    }
  }
  return out;
}
