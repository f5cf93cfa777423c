/**
 * LoRA key layouts, and a safetensors file rewritten with other keys (the tensors' bytes untouched).
 *
 * DiffSynth-Studio saves peft's in-memory names, `<module>.lora_A.default.weight` / `lora_B.default.weight`
 * (inject_adapter_in_model with the adapter `default`; ModelLogger.save_model strips --remove_prefix_in_ckpt),
 * which other tools do not load as they are (ComfyUI#12042, nv-tlabs/ChronoEdit#22, where the fix is to drop
 * `.default` and prefix `diffusion_model.`):
 *
 * - `comfyui`: `diffusion_model.<module>.lora_A.weight` / `lora_B.weight`. ComfyUI maps every model key
 *   `diffusion_model.X.weight` to the LoRA key `diffusion_model.X` (comfy/lora.py model_lora_keys_unet) and
 *   reads `X.lora_A.weight` / `X.lora_B.weight` (comfy/weight_adapter/lora.py); diffusers' Qwen-Image and Wan
 *   loaders convert keys with this prefix (loaders/lora_conversion_utils.py
 *   _convert_non_diffusers_qwen_lora_to_diffusers, _convert_non_diffusers_wan_lora_to_diffusers). Without an
 *   `alpha` key both scale by 1, which is DiffSynth's lora_alpha = rank.
 * - `diffusers`: `transformer.<module>.lora_A.weight`: diffusers' own PEFT layout (load_lora_weights). Right
 *   where DiffSynth's module names are diffusers' (Qwen-Image's DiT); DiffSynth's Wan and FLUX DiTs name their
 *   modules as the original repositories do, which diffusers renames: zerowiz does not.
 * - `diffsynth`: as saved.
 */
import { closeSync, createReadStream, createWriteStream, openSync, writeSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { readSafetensorsHeader } from './safetensors.js';
import { splitLoraKey } from './verify.js';

/** The layouts `export weights --layout` writes. */
export const LORA_LAYOUTS = ['comfyui', 'diffusers', 'diffsynth'] as const;
/** One of them. */
export type ExportLayout = (typeof LORA_LAYOUTS)[number];

/** What a layout's keys look like, for the line that says which was written. */
export const LAYOUT_DESCRIPTIONS: Record<ExportLayout, string> = {
  comfyui:
    "ComfyUI layout: diffusion_model.<module>.lora_A.weight / lora_B.weight (ComfyUI's LoRA loader; diffusers converts it for Qwen-Image and Wan)",
  diffusers:
    "diffusers layout: transformer.<module>.lora_A.weight / lora_B.weight (load_lora_weights; DiffSynth's module names are diffusers' for Qwen-Image)",
  diffsynth: "DiffSynth-Studio's own layout: <module>.lora_A.default.weight / lora_B.default.weight (as saved)",
};

/** A DiffSynth (or peft) LoRA key in `layout`; keys that are not LoRA tensors keep their name under the prefix. */
export function layoutKey(key: string, layout: ExportLayout): string {
  if (layout === 'diffsynth') return key;
  const prefix = layout === 'comfyui' ? 'diffusion_model.' : 'transformer.';
  const k = splitLoraKey(key);
  const module = k ? k.module.replace(/^base_model\.model\./, '') : null;
  return module === null ? `${prefix}${key}` : `${prefix}${module}.lora_${k!.which}.weight`;
}

/**
 * Writes `src` to `dst` with every tensor renamed by `rename`: a new header (the same dtypes, shapes and
 * offsets, padded with spaces to 8 bytes as the safetensors writer does, `__metadata__` kept plus `extra`), then
 * the data section copied as it is. Throws when `src` does not read or two keys collide.
 */
export async function writeRenamed(
  src: string,
  dst: string,
  rename: (key: string) => string,
  extra: Record<string, string> = {},
): Promise<{ tensors: number }> {
  const h = readSafetensorsHeader(src);
  if (!h.ok) throw new Error(`${src}: ${h.problem}`);
  const header: Record<string, unknown> = { __metadata__: { ...(h.header.metadata ?? {}), ...extra } };
  for (const t of h.header.tensors) {
    const name = rename(t.name);
    if (name in header) throw new Error(`two tensors would be named ${name}`);
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [t.begin, t.end] };
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const fd = openSync(dst, 'wx', 0o644);
  try {
    writeSync(fd, len);
    writeSync(fd, json);
  } finally {
    closeSync(fd);
  }
  if (h.header.fileBytes > h.header.dataStart)
    await pipeline(createReadStream(src, { start: h.header.dataStart }), createWriteStream(dst, { flags: 'a' }));
  return { tensors: h.header.tensors.length };
}
