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
 *
 * FLUX is the exception: DiffSynth's FLUX DiT names its modules its own way (`blocks.N.attn.a_to_qkv`,
 * `single_blocks.N.to_qkv_mlp`), which no other tool loads. Its `--align_to_opensource_format` renames them to
 * the open-source (kohya) names that ComfyUI and diffusers' FLUX loaders read: `lora_unet_double_blocks_N_
 * img_attn_qkv.lora_down.weight` / `lora_up.weight` and an `alpha` per module equal to the rank
 * (modelscope/DiffSynth-Studio examples/flux/model_training/train.py convert_lora_format, and
 * diffsynth/utils/lora/flux.py FluxLoRAConverter.align_to_opensource_format). The ComfyUI layout of a FLUX LoRA
 * is that renaming, done here the same way; a module it has no name for means the file cannot be written in it
 * (never a file that loads nothing).
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

/** DiffSynth's FLUX block prefixes -> the open-source names (convert_lora_format's prefix_rename_dict). */
const FLUX_PREFIXES: Readonly<Record<string, string>> = {
  single_blocks: 'lora_unet_single_blocks',
  blocks: 'lora_unet_double_blocks',
};
/** DiffSynth's FLUX module names inside a block -> the open-source names (convert_lora_format's middle_rename_dict). */
const FLUX_MODULES: Readonly<Record<string, string>> = {
  'norm.linear': 'modulation_lin',
  to_qkv_mlp: 'linear1',
  proj_out: 'linear2',
  'norm1_a.linear': 'img_mod_lin',
  'norm1_b.linear': 'txt_mod_lin',
  'attn.a_to_qkv': 'img_attn_qkv',
  'attn.b_to_qkv': 'txt_attn_qkv',
  'attn.a_to_out': 'img_attn_proj',
  'attn.b_to_out': 'txt_attn_proj',
  'ff_a.0': 'img_mlp_0',
  'ff_a.2': 'img_mlp_2',
  'ff_b.0': 'txt_mlp_0',
  'ff_b.2': 'txt_mlp_2',
};
/** A module name only DiffSynth's FLUX DiT has: its LoRA is a FLUX one. */
const FLUX_ONLY_RE = /^(single_)?blocks\.\d+\.(attn\.[ab]_to_(qkv|out)|ff_[ab]\.[02]|norm1_[ab]\.linear|to_qkv_mlp)$/;

/** Whether these LoRA keys are DiffSynth's FLUX DiT's. */
export function isDiffSynthFlux(names: readonly string[]): boolean {
  return names.some((n) => {
    const k = splitLoraKey(n);
    return k !== null && FLUX_ONLY_RE.test(k.module.replace(/^base_model\.model\./, ''));
  });
}

/** The open-source name of a DiffSynth FLUX module (`blocks.3.attn.a_to_qkv` -> `lora_unet_double_blocks_3_img_attn_qkv`), or null. */
export function fluxOpenSourceModule(module: string): string | null {
  const m = /^(single_blocks|blocks)\.(\d+)\.(.+)$/.exec(module.replace(/^base_model\.model\./, ''));
  if (!m) return null;
  const middle = FLUX_MODULES[m[3]!];
  return middle ? `${FLUX_PREFIXES[m[1]!]}_${m[2]}_${middle}` : null;
}

/** A tensor written besides the renamed ones (a FLUX module's `alpha`). */
export interface AddedTensor {
  name: string;
  dtype: 'F32';
  shape: number[];
  bytes: Buffer;
}

/** How a LoRA file is written in a layout: each key's new name and the tensors added; or why it cannot be. */
export type LayoutPlan =
  | { rename: (key: string) => string; add: AddedTensor[]; description: string }
  | { cannot: string };

/** The plan for a DiffSynth FLUX LoRA in the ComfyUI layout: the open-source names, an alpha (= rank) per module. */
function fluxPlan(tensors: readonly { name: string; shape: readonly number[] }[]): LayoutPlan {
  const add: AddedTensor[] = [];
  const names = new Map<string, string>();
  for (const t of tensors) {
    const k = splitLoraKey(t.name);
    const base = k ? fluxOpenSourceModule(k.module) : null;
    if (!k || base === null)
      return {
        cannot: `${t.name} is a module of DiffSynth's FLUX DiT with no open-source name (DiffSynth's --align_to_opensource_format renames only the double and single blocks' attention, MLP and modulation Linears)`,
      };
    names.set(t.name, `${base}.lora_${k.which === 'A' ? 'down' : 'up'}.weight`);
    if (k.which === 'B') {
      const alpha = Buffer.alloc(4);
      alpha.writeFloatLE(t.shape.at(-1) ?? 0);
      add.push({ name: `${base}.alpha`, dtype: 'F32', shape: [], bytes: alpha });
    }
  }
  return {
    rename: (key) => names.get(key) ?? key,
    add,
    description:
      "ComfyUI layout for FLUX: the open-source names lora_unet_<block>_<module>.lora_down.weight / lora_up.weight / alpha (as DiffSynth's --align_to_opensource_format writes them; ComfyUI and diffusers' FLUX loader read them)",
  };
}

/**
 * How a LoRA with these tensors is written in `layout`: DiffSynth's FLUX DiT gets the open-source names in the
 * ComfyUI layout and is refused in diffusers' (whose FLUX loader reads the ComfyUI file); every other model's
 * keys get the layout's prefix (layoutKey).
 */
export function planLayout(
  tensors: readonly { name: string; shape: readonly number[] }[],
  layout: ExportLayout,
): LayoutPlan {
  const names = tensors.map((t) => t.name);
  if (layout !== 'diffsynth' && isDiffSynthFlux(names)) {
    if (layout === 'diffusers')
      return {
        cannot:
          "DiffSynth's FLUX module names are not diffusers' and zerowiz does not rename them to diffusers': --layout comfyui writes the open-source names, which diffusers' FLUX load_lora_weights also reads",
      };
    return fluxPlan(tensors);
  }
  return { rename: (key) => layoutKey(key, layout), add: [], description: LAYOUT_DESCRIPTIONS[layout] };
}

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
  add: readonly AddedTensor[] = [],
): Promise<{ tensors: number }> {
  const h = readSafetensorsHeader(src);
  if (!h.ok) throw new Error(`${src}: ${h.problem}`);
  const header: Record<string, unknown> = { __metadata__: { ...(h.header.metadata ?? {}), ...extra } };
  for (const t of h.header.tensors) {
    const name = rename(t.name);
    if (name in header) throw new Error(`two tensors would be named ${name}`);
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [t.begin, t.end] };
  }
  // Added tensors go after the data section, which is copied as it is.
  let end = h.header.fileBytes - h.header.dataStart;
  for (const a of add) {
    if (a.name in header) throw new Error(`two tensors would be named ${a.name}`);
    header[a.name] = { dtype: a.dtype, shape: a.shape, data_offsets: [end, end + a.bytes.length] };
    end += a.bytes.length;
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
  if (add.length > 0) {
    const fdAdd = openSync(dst, 'a');
    try {
      for (const a of add) writeSync(fdAdd, a.bytes);
    } finally {
      closeSync(fdAdd);
    }
  }
  return { tensors: h.header.tensors.length + add.length };
}
