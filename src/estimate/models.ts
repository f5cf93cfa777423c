/**
 * The model catalog (presets/models.yaml): parameter counts, largest layers and, for the peak-memory model,
 * the transformer shape, the tokens of an image and the Linear shapes LoRA targets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { UsageError } from '../text/index.js';
import { NearMiss } from '../text/index.js';
import { parseDataFile, presetsDir } from '../fs/index.js';

const positiveInt = z.int().check(z.positive());

/** `[in_features, out_features, count]` of the Linear layers a LoRA target name matches. */
const ModuleSchema = z.tuple([positiveInt, positiveInt, positiveInt]);

const ModelSchema = z
  .strictObject({
    id: z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]*$/, 'lower-case id of letters, digits, dots and dashes')),
    name: z.string().check(z.minLength(1)),
    params: positiveInt,
    largest_layer: positiveInt,
    kind: z.optional(z.enum(['lm', 'dit', 'video', 'unet'])),
    block: z.optional(z.enum(['llama', 'gpt', 'dit', 'mmdit', 'unet'])),
    layers: z.optional(positiveInt),
    hidden: z.optional(positiveInt),
    heads: z.optional(positiveInt),
    kv_heads: z.optional(positiveInt),
    ffn: z.optional(positiveInt),
    vocab: z.optional(positiveInt),
    pixels_per_token: z.optional(positiveInt),
    text_tokens: z.optional(positiveInt),
    temporal_factor: z.optional(positiveInt),
    residual_fp32: z.optional(z.boolean()),
    unet: z.optional(
      z.strictObject({
        channels: z.array(positiveInt).check(z.minLength(1)),
        transformer_layers: z.array(z.int().check(z.nonnegative())),
        layers_per_block: positiveInt,
        mid_transformer_layers: z.int().check(z.nonnegative()),
      }),
    ),
    condition_images: z.optional(positiveInt),
    encoders: z.optional(
      z.strictObject({
        parts: z
          .array(
            z.strictObject({
              name: z.string().check(z.minLength(1)),
              params: positiveInt,
              dtype: z.enum(['fp32', 'bf16', 'fp16', 'fp8', 'nf4']),
            }),
          )
          .check(z.minLength(1)),
        vae_channels: positiveInt,
        vae_frames_at_once: z.optional(positiveInt),
        source: z.string().check(z.minLength(1)),
      }),
    ),
    modules: z.optional(z.record(z.string(), ModuleSchema)),
    lora_targets: z.optional(z.array(z.string().check(z.minLength(1)))),
    source: z.string().check(z.minLength(1)),
  })
  .check(z.refine((m) => m.largest_layer <= m.params, { message: 'largest_layer cannot exceed params' }))
  .check(
    z.refine((m) => (m.lora_targets ?? []).every((t) => m.modules?.[t] !== undefined), {
      message: 'every lora_targets entry must be a key of modules',
    }),
  );

const CatalogSchema = z.strictObject({ models: z.array(ModelSchema).check(z.minLength(1)) });

/** What a model's tokens are: a language model's sequence, an image DiT's patches, a video DiT's patches over frames, or a UNet's latent pixels. */
export type ModelKind = 'lm' | 'dit' | 'video' | 'unet';
/**
 * The layout of one block, for the activation formula (src/estimate/activations.ts): `llama` pre-norm with a
 * gated (SwiGLU) MLP; `gpt` pre-norm with a plain GELU MLP; `dit` an adaLN-modulated block with QK-norm,
 * gated residuals, cross-attention to the text and a plain GELU MLP; `mmdit` the same with joint attention
 * (the text tokens in the sequence) instead of cross-attention; `unet` a UNet's ResNet and transformer levels.
 */
export type BlockKind = 'llama' | 'gpt' | 'dit' | 'mmdit' | 'unet';
/** A UNet's levels (diffusers UNet2DConditionModel config), for its activations. */
export interface UnetShape {
  /** block_out_channels, from the highest resolution down. */
  channels: number[];
  /** transformer_layers_per_block per level (0: a level without attention). */
  transformerLayers: number[];
  layersPerBlock: number;
  midTransformerLayers: number;
}
/** How a frozen model's weights are stored on the GPU. */
export type FrozenDtype = 'fp32' | 'bf16' | 'fp16' | 'fp8' | 'nf4';
/** Bytes per parameter of each dtype (nf4: 4 bits plus its blockwise scales, rounded to half a byte). */
export const DTYPE_BYTES: Record<FrozenDtype, number> = { fp32: 4, bf16: 2, fp16: 2, fp8: 1, nf4: 0.5 };
/** One frozen model of a pipeline: a text encoder, an image encoder or the VAE. */
export interface EncoderPart {
  name: string;
  params: number;
  /** The dtype DiffSynth loads it in (its pipelines' torch_dtype, bf16, unless said). */
  dtype: FrozenDtype;
}
/** The frozen encoders a pipeline runs every step when nothing is precomputed. */
export interface EncodersEntry {
  /** Each frozen model with its parameters and dtype. */
  parts: EncoderPart[];
  /** Parameters of the text encoder(s) and the VAE together. */
  params: number;
  /** Their weights at their dtypes, bytes. */
  bytes: number;
  /** The VAE encoder's first (widest at full resolution) channel count. */
  vaeChannels: number;
  /** Frames the VAE encodes at once (causal chunks); null: the whole clip. */
  vaeFramesAtOnce: number | null;
  source: string;
}

/** One catalog entry. */
export interface ModelEntry {
  id: string;
  name: string;
  params: number;
  largestLayer: number;
  kind: ModelKind;
  block: BlockKind | null;
  /** Transformer blocks, hidden size, heads, key/value heads, FFN size and vocabulary; null when unknown. */
  layers: number | null;
  hidden: number | null;
  heads: number | null;
  kvHeads: number | null;
  ffn: number | null;
  /** Vocabulary size of a language model (its logits); null for models without logits. */
  vocab: number | null;
  /** Image models: pixels per token, (VAE downscale x patch)^2; text tokens attended beside the image. */
  pixelsPerToken: number | null;
  textTokens: number | null;
  /** Video models: frames per latent frame after the first (the VAE's temporal compression); null for images. */
  temporalFactor: number | null;
  /** The model keeps its residual stream and modulation in fp32 (Wan). */
  residualFp32: boolean;
  /** A UNet's levels; null otherwise. */
  unet: UnetShape | null;
  /** Its frozen encoders, for a run that does not precompute their outputs; null when not in the catalog. */
  encoders: EncodersEntry | null;
  /** Images of the same size the model attends to beside the one it denoises (an edit model's input); 0 for none. */
  conditionImages: number;
  /** LoRA target name -> [in_features, out_features, how many Linear layers the name matches]. */
  modules: Record<string, readonly [number, number, number]>;
  /** The targets a LoRA of this model usually names (the default of --lora-targets). */
  loraTargets: string[];
  /** Where the figures come from and how they were derived. */
  source: string;
}

/** Parses and validates catalog YAML text; throws UsageError naming the bad field. */
export function parseModelCatalog(text: string, file = 'models.yaml'): ModelEntry[] {
  let data: unknown;
  try {
    data = parseDataFile(file, text);
  } catch (err) {
    throw new UsageError(
      `${file} is not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    );
  }
  const result = CatalogSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue ? issue.path.join('.') : '';
    throw new UsageError(`${file}: ${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'}`);
  }
  const ids = new Set<string>();
  return result.data.models.map((m) => {
    if (ids.has(m.id)) throw new UsageError(`${file}: duplicate model id '${m.id}'`);
    ids.add(m.id);
    return {
      id: m.id,
      name: m.name,
      params: m.params,
      largestLayer: m.largest_layer,
      kind: m.kind ?? 'lm',
      block: m.block ?? null,
      layers: m.layers ?? null,
      hidden: m.hidden ?? null,
      heads: m.heads ?? null,
      kvHeads: m.kv_heads ?? m.heads ?? null,
      ffn: m.ffn ?? null,
      vocab: m.vocab ?? null,
      pixelsPerToken: m.pixels_per_token ?? null,
      textTokens: m.text_tokens ?? null,
      temporalFactor: m.temporal_factor ?? null,
      residualFp32: m.residual_fp32 ?? false,
      unet: m.unet
        ? {
            channels: m.unet.channels,
            transformerLayers: m.unet.transformer_layers,
            layersPerBlock: m.unet.layers_per_block,
            midTransformerLayers: m.unet.mid_transformer_layers,
          }
        : null,
      conditionImages: m.condition_images ?? 0,
      encoders: m.encoders
        ? {
            parts: m.encoders.parts.map((p) => ({ name: p.name, params: p.params, dtype: p.dtype })),
            params: m.encoders.parts.reduce((a, p) => a + p.params, 0),
            bytes: m.encoders.parts.reduce((a, p) => a + Math.ceil(p.params * DTYPE_BYTES[p.dtype]), 0),
            vaeChannels: m.encoders.vae_channels,
            vaeFramesAtOnce: m.encoders.vae_frames_at_once ?? null,
            source: m.encoders.source,
          }
        : null,
      modules: m.modules ?? {},
      loraTargets: m.lora_targets ?? [],
      source: m.source,
    };
  });
}

let cached: ModelEntry[] | undefined;

/** The built-in catalog (read once). */
export function loadModelCatalog(file: string = join(presetsDir(), 'models.yaml')): ModelEntry[] {
  if (file === join(presetsDir(), 'models.yaml') && cached) return cached;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(
      `the model catalog ${file} cannot be read`,
      'reinstall zerowiz, or give --params and --largest-layer',
    );
  }
  const models = parseModelCatalog(text, file);
  if (file === join(presetsDir(), 'models.yaml')) cached = models;
  return models;
}

/** The built-in catalog, or none when it cannot be read (for checks that do without it). */
export function modelCatalogOrNone(): ModelEntry[] {
  try {
    return loadModelCatalog();
  } catch {
    return [];
  }
}

/**
 * The catalog entry a name stands for: its id, its name, or its name without the parenthesised class
 * (`Qwen-Image DiT` for `Qwen-Image DiT (QwenImageTransformer2DModel)`), case-insensitive; null if none.
 */
export function lookupModel(query: string, models: readonly ModelEntry[]): ModelEntry | null {
  const q = query.trim().toLowerCase();
  if (q === '') return null;
  const short = (name: string) => name.replace(/\s*\([^)]*\)\s*$/, '').toLowerCase();
  return models.find((m) => m.id === q || m.name.toLowerCase() === q || short(m.name) === q) ?? null;
}

/** Looks a model up by id or name (case-insensitive); UsageError listing the ids otherwise. */
export function findModel(query: string, models: ModelEntry[] = loadModelCatalog()): ModelEntry {
  const hit = lookupModel(query, models);
  if (!hit)
    throw new NearMiss(
      `unknown model '${query}'`,
      query,
      models.map((m) => m.id),
      `choose one of: ${models.map((m) => m.id).join(', ')}`,
      '--model',
    );
  return hit;
}
