/**
 * Reading a safetensors file without Python: its header and, up to a bound, its values. The format
 * (huggingface/safetensors README "Format", safetensors/src/tensor.rs Metadata::validate): 8 bytes of
 * little-endian u64 N, N bytes of a UTF-8 JSON object (`{"__metadata__": {str: str}, NAME: {"dtype",
 * "shape", "data_offsets": [begin, end]}}`), then the data; offsets are relative to the end of the header,
 * the tensors tile the data exactly (sorted by offset, each begins where the previous ends, the last ends at
 * the end of the file), and each tensor's byte length is its element count times its dtype's size. The
 * library refuses headers over 100,000,000 bytes. A file that breaks any of these is what a cut-short or
 * broken save leaves; zerowiz reports it in the same terms.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The largest header the safetensors library reads (safetensors/src/tensor.rs MAX_HEADER_SIZE). */
export const SAFETENSORS_MAX_HEADER_BYTES = 100_000_000;

/** Bits per element of each dtype the format names (safetensors/src/tensor.rs Dtype::bitsize). */
export const DTYPE_BITS: Readonly<Record<string, number>> = {
  BOOL: 8,
  F4: 4,
  F6_E2M3: 6,
  F6_E3M2: 6,
  U8: 8,
  I8: 8,
  F8_E5M2: 8,
  F8_E4M3: 8,
  F8_E8M0: 8,
  I16: 16,
  U16: 16,
  F16: 16,
  BF16: 16,
  I32: 32,
  U32: 32,
  F32: 32,
  F64: 64,
  C64: 64,
  I64: 64,
  U64: 64,
};

/** One tensor of a header: name, dtype, shape, and its bytes' place in the data section. */
export interface TensorInfo {
  name: string;
  dtype: string;
  shape: number[];
  /** Elements (the product of the shape; 0 for an empty tensor). */
  numel: number;
  /** Offsets relative to the start of the data section. */
  begin: number;
  end: number;
}

/** A parsed header. */
export interface SafetensorsHeader {
  /** N: the JSON's length in bytes. */
  headerBytes: number;
  /** Where the data section starts in the file (8 + N). */
  dataStart: number;
  /** The file's size on disk. */
  fileBytes: number;
  /** In file order of the data (sorted by offset). */
  tensors: TensorInfo[];
  /** `__metadata__`, or null. */
  metadata: Record<string, string> | null;
}

/** A header that reads, or what is wrong with the file (a sentence; `truncated` when the file ends too early). */
export type HeaderResult =
  | { ok: true; header: SafetensorsHeader }
  | { ok: false; problem: string; truncated: boolean; fileBytes: number };

function readAt(fd: number, pos: number, len: number): Buffer {
  const buf = Buffer.alloc(len);
  let got = 0;
  while (got < len) {
    const n = readSync(fd, buf, got, len - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return got === len ? buf : buf.subarray(0, got);
}

/** The JSON object of a header checked against the format (offsets, dtypes, shapes); `fileBytes` for the tiling. */
export function parseHeaderJson(json: unknown, headerBytes: number, fileBytes: number): HeaderResult {
  const fail = (problem: string, truncated = false): HeaderResult => ({ ok: false, problem, truncated, fileBytes });
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return fail('its header is not a JSON object of tensors');
  let metadata: Record<string, string> | null = null;
  const tensors: TensorInfo[] = [];
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof raw === 'object' && raw !== null && !Array.isArray(raw))
        metadata = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, String(v)]));
      continue;
    }
    const e = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown } | null;
    const dtype = e?.dtype;
    const bits = typeof dtype === 'string' ? DTYPE_BITS[dtype] : undefined;
    if (typeof dtype !== 'string' || bits === undefined)
      return fail(`tensor ${name} has an unknown dtype ${JSON.stringify(dtype)}`);
    const shape = e?.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
      return fail(`tensor ${name} has a shape that is not a list of whole numbers`);
    const offs = e?.data_offsets;
    if (
      !Array.isArray(offs) ||
      offs.length !== 2 ||
      !offs.every((o) => Number.isSafeInteger(o) && o >= 0) ||
      offs[1] < offs[0]
    )
      return fail(`tensor ${name} has bad data_offsets ${JSON.stringify(offs)}`);
    const numel = (shape as number[]).reduce((a, b) => a * b, 1);
    const bytes = Math.ceil((numel * bits) / 8);
    const [begin, end] = offs as [number, number];
    if (end - begin !== bytes)
      return fail(
        `tensor ${name} (${dtype} ${JSON.stringify(shape)}) needs ${bytes} bytes but its offsets hold ${end - begin}`,
      );
    tensors.push({ name, dtype, shape: shape as number[], numel, begin, end });
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  for (const t of tensors) {
    if (t.begin !== at) return fail(`its tensors do not tile the data: ${t.name} starts at ${t.begin}, not ${at}`);
    at = t.end;
  }
  const dataStart = 8 + headerBytes;
  const dataBytes = fileBytes - dataStart;
  if (dataBytes < at)
    return fail(
      `the file ends ${at - dataBytes} bytes early: its tensors need ${at} bytes of data and it holds ${Math.max(0, dataBytes)} (a save cut short)`,
      true,
    );
  if (dataBytes > at) return fail(`it has ${dataBytes - at} bytes after its last tensor (not what a save writes)`);
  return { ok: true, header: { headerBytes, dataStart, fileBytes, tensors, metadata } };
}

/** Reads and checks a file's header (not its values); never throws. */
export function readSafetensorsHeader(path: string): HeaderResult {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return { ok: false, problem: `it cannot be read (${(err as Error).message})`, truncated: false, fileBytes: 0 };
  }
  try {
    const fileBytes = fstatSync(fd).size;
    if (fileBytes < 8)
      return {
        ok: false,
        problem: `the file is ${fileBytes} bytes: not even the 8-byte header length (an empty or cut-short save)`,
        truncated: true,
        fileBytes,
      };
    const n = Number(readAt(fd, 0, 8).readBigUInt64LE(0));
    if (n > SAFETENSORS_MAX_HEADER_BYTES)
      return {
        ok: false,
        problem: `its header length is ${n} bytes, more than safetensors reads (${SAFETENSORS_MAX_HEADER_BYTES}): not a safetensors file`,
        truncated: false,
        fileBytes,
      };
    if (8 + n > fileBytes)
      return {
        ok: false,
        problem: `the file ends inside its header (${fileBytes} bytes, the header needs ${8 + n}): a save cut short`,
        truncated: true,
        fileBytes,
      };
    const text = readAt(fd, 8, n).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      return {
        ok: false,
        problem: `its header is not JSON (${(err as Error).message}): not a safetensors file`,
        truncated: false,
        fileBytes,
      };
    }
    return parseHeaderJson(json, n, fileBytes);
  } finally {
    closeSync(fd);
  }
}

/** What a scan of the values found. */
export interface ValueScan {
  /** Tensors with a NaN or an infinity among the values read. */
  nonFinite: string[];
  /** Tensors read whole whose values are all zero. */
  allZero: string[];
  /** Bytes read, and whether that was every float tensor whole. */
  bytesRead: number;
  complete: boolean;
}

/** Bytes of values read per file at most: enough for any LoRA, the first part of a full model. */
export const VALUE_SCAN_MAX_BYTES = 64 * 2 ** 20;
const CHUNK_BYTES = 4 * 2 ** 20;

/**
 * Scans the float tensors (F32, F16, BF16) in data order for NaN/infinity and all-zero tensors, reading at
 * most `maxBytes` (a tensor cut by the bound is checked for what was read and not reported as all zero).
 */
export function scanValues(path: string, header: SafetensorsHeader, maxBytes = VALUE_SCAN_MAX_BYTES): ValueScan {
  const out: ValueScan = { nonFinite: [], allZero: [], bytesRead: 0, complete: true };
  const fd = openSync(path, 'r');
  try {
    for (const t of header.tensors) {
      const size = t.dtype === 'F32' ? 4 : t.dtype === 'F16' || t.dtype === 'BF16' ? 2 : 0;
      if (size === 0 || t.numel === 0) continue;
      let finite = true;
      let zero = true;
      let pos = t.begin;
      while (pos < t.end && out.bytesRead < maxBytes) {
        const len = Math.min(CHUNK_BYTES, t.end - pos, maxBytes - out.bytesRead);
        const aligned = len - (len % size);
        if (aligned === 0) break;
        const buf = readAt(fd, header.dataStart + pos, aligned);
        out.bytesRead += buf.length;
        pos += buf.length;
        if (size === 4) {
          const u = new Uint32Array(buf.buffer, buf.byteOffset, buf.length >>> 2);
          for (let i = 0; i < u.length; i++) {
            const v = u[i]!;
            if ((v & 0x7f800000) === 0x7f800000) finite = false;
            if ((v & 0x7fffffff) !== 0) zero = false;
          }
        } else {
          const mask = t.dtype === 'F16' ? 0x7c00 : 0x7f80;
          const u = new Uint16Array(buf.buffer, buf.byteOffset, buf.length >>> 1);
          for (let i = 0; i < u.length; i++) {
            const v = u[i]!;
            if ((v & mask) === mask) finite = false;
            if ((v & 0x7fff) !== 0) zero = false;
          }
        }
        if (buf.length < aligned) break;
      }
      if (!finite) out.nonFinite.push(t.name);
      if (pos < t.end) {
        out.complete = false;
        break;
      }
      if (zero) out.allZero.push(t.name);
    }
  } finally {
    closeSync(fd);
  }
  return out;
}
