/**
 * Activation memory per GPU for one micro-batch of a transformer: what autograd keeps between the forward
 * and the backward pass. Pure functions; every figure is a whole number of bytes.
 *
 * Derivation (after Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
 * Models", Sec. 4.1, which counts s*b*h*(34 + 5*a*s/h) bytes per layer for a GPT block in 16-bit with
 * dropout and eager attention). zerowiz assumes what current training code does: FlashAttention / SDPA
 * (the attention scores, a*s^2 per sample, are never stored: FlashAttention keeps only the output and a
 * per-row log-sum-exp) and no dropout (modern LLM and DiT recipes train without it, so the 1-byte masks are
 * gone). What one block keeps, per token, in elements of the activation dtype:
 * - attention: the norm's input (h), the QKV projections' input (h), Q (h), K and V (kv_heads x head_dim
 *   each), and the attention output that is the output projection's input (h): 4h + 2*kv_dim;
 * - MLP, plain (GELU): the norm's input (h), fc1's input (h), fc1's output = the activation's input (f),
 *   the activation's output = fc2's input (f): 2h + 2f;
 * - MLP, gated (SwiGLU): the norm's input (h), the input of gate and up (h), gate's output (f), SiLU's
 *   output (f), up's output (f) and their product = down's input (f): 2h + 4f;
 * - DiT blocks (adaLN): the modulated norm output (scale/shift) before each sub-block (2h), the gated
 *   residuals' inputs (2h) and QK-norm's inputs (2h, Q and K before RMSNorm): 6h more.
 * With h = hidden, f = FFN size, a = heads, kv_dim = kv_heads x h/a. Check against Korthikanti: a GPT block
 * with f = 4h, full multi-head attention, no dropout and flash attention keeps 4h + 2h + 2h + 8h = 16h
 * elements = 32h bytes per token; his 34h less the two 1-byte dropout masks.
 * With `attention: 'eager'` the 5*a*s^2*b byte term of the score matrix (16-bit softmax output, 16-bit
 * dropout output, 1-byte mask) is added back, as an upper bound for code without fused attention.
 * Full gradient checkpointing (one checkpoint per block, as HF's gradient_checkpointing_enable and
 * DeepSpeed's activation checkpointing do): each block keeps only its input (h per token), and one block's
 * full activations exist at a time while it is recomputed; that block's input is its checkpoint, counted
 * once: (layers - 1)*h + one block. So checkpointing never keeps more than no checkpointing.
 * Logits of a language model: the lm_head output in 16-bit (2 bytes per vocabulary entry and token), its
 * fp32 upcast for the loss (4) and the fp32 gradient of the logits at the start of the backward pass (4):
 * 10 bytes x vocab x tokens; these are not checkpointed.
 * Diffusion blocks:
 * - `mmdit` (joint attention: Qwen-Image, FLUX, SD3, CogVideoX): the text tokens join the sequence, with
 *   their own projections and MLP, so every per-token figure counts image + text tokens; the adaLN
 *   modulation adds 6h (as above).
 * - `dit` (cross-attention: Wan, LTX-Video, PixArt): the sequence is the image or video tokens alone; each
 *   block adds a cross-attention sub-block, its norm's input, the query projection's input, the query and
 *   the output projection's input (4h per token), and the text's keys and values (2 x kv_dim per text
 *   token, per sample).
 * - an fp32 residual stream (Wan's WanAttentionBlock: `with amp.autocast(dtype=torch.float32): x = x + y *
 *   e[2]`, and `norm1(x).float() * (1 + e[1]) + e[0]`) keeps the checkpointed block inputs and the
 *   modulation's values in 4 bytes instead of 2.
 * - `unet` (SDXL): per latent pixel of each level, a ResNet block keeps its two norms' inputs, their SiLU
 *   outputs and the convolutions' inputs (6C), a transformer layer (self-attention, cross-attention, GEGLU
 *   feed-forward of 4C) about 26C, its Transformer2D wrapper 3C (norm, proj_in, proj_out); the down path has
 *   `layers_per_block` blocks per level, the up path one more with the skip concatenated (2C in), the mid
 *   block two ResNets around its transformer layers. With checkpointing (diffusers checkpoints each ResNet
 *   and each Transformer2D) each module keeps its input and the largest one is recomputed. Derived, not
 *   calibrated.
 * Attention workspace: FlashAttention's backward accumulates dq in fp32 (4 x h bytes per token) for the
 * block being differentiated.
 */
import type { BlockKind, UnetShape } from './models.js';

/** Activation checkpointing: `none` keeps every activation; `full` recomputes each block in backward. */
export type Checkpointing = 'none' | 'full';
/** How attention is computed: fused (FlashAttention / SDPA, the default) or eager (scores stored). */
export type AttentionKind = 'flash' | 'eager';

/** Bytes per vocabulary entry and token for a language model's logits (16-bit + fp32 copy + fp32 gradient). */
export const LOGITS_BYTES_PER_VOCAB_TOKEN = 10;
/** FlashAttention's fp32 dq accumulator during one block's backward: bytes per token and hidden unit. */
export const ATTENTION_WORKSPACE_BYTES_PER_VALUE = 4;

/** The transformer shape and workload the activation formula needs. */
export interface ActivationInput {
  block: BlockKind;
  layers: number;
  hidden: number;
  heads: number;
  /** Key/value heads (grouped-query attention); equal to heads for full multi-head attention. */
  kvHeads: number;
  ffn: number;
  /** Vocabulary size for the logits; 0 for models without logits (DiTs). */
  vocab: number;
  /**
   * Tokens per sample: the sequence length; for a DiT the image or video tokens, plus the text tokens when
   * they join the sequence (mmdit); for a UNet the latent pixels.
   */
  tokens: number;
  microBatch: number;
  checkpointing: Checkpointing;
  /** Bytes per activation value: 2 in bf16/fp16, 4 in fp32. */
  bytesPerValue: number;
  /** Default flash. */
  attention?: AttentionKind;
  /** Text tokens a cross-attention DiT attends to (keys and values only); 0 or absent otherwise. */
  crossTokens?: number;
  /** Bytes of the residual stream and the modulation's values (4 when the model keeps them in fp32); default bytesPerValue. */
  residualBytes?: number;
  /** A UNet's levels (block unet). */
  unet?: UnetShape | null;
}

/** The activation total and its parts, bytes per GPU. */
export interface ActivationBreakdown {
  /** What the blocks keep (all of them, or their checkpointed inputs). */
  blocksBytes: number;
  /** One block recomputed during backward (checkpointing only), else 0. */
  recomputeBytes: number;
  /** The language model's logits, else 0. */
  logitsBytes: number;
  /** The attention backward's workspace for one block. */
  workspaceBytes: number;
  totalBytes: number;
}

type BlockShape = Pick<ActivationInput, 'block' | 'hidden' | 'heads' | 'kvHeads' | 'ffn'>;

/** Elements one block keeps per token in the activation dtype, and those kept in the residual's dtype. */
export function elementsPerTokenSplit(a: BlockShape): { plain: number; residual: number } {
  const h = a.hidden;
  const kvDim = Math.round((a.kvHeads * h) / a.heads);
  const attention = 4 * h + 2 * kvDim;
  const mlp = a.block === 'llama' ? 2 * h + 4 * a.ffn : 2 * h + 2 * a.ffn;
  const cross = a.block === 'dit' ? 4 * h : 0;
  const modulation = a.block === 'dit' || a.block === 'mmdit' ? 6 * h : 0;
  return { plain: attention + mlp + cross, residual: modulation };
}

/** Elements one block keeps per token (see the derivation above). */
export function elementsPerToken(a: BlockShape): number {
  const { plain, residual } = elementsPerTokenSplit(a);
  return plain + residual;
}

/** Bytes one block keeps for the whole micro-batch, without recomputation. */
export function blockBytes(a: Omit<ActivationInput, 'layers' | 'checkpointing' | 'vocab'>): number {
  const sb = a.tokens * a.microBatch;
  const scores = a.attention === 'eager' ? 5 * a.heads * a.tokens * a.tokens * a.microBatch : 0;
  const { plain, residual } = elementsPerTokenSplit(a);
  const kvDim = Math.round((a.kvHeads * a.hidden) / a.heads);
  const crossKv = a.block === 'dit' ? 2 * kvDim * (a.crossTokens ?? 0) * a.microBatch * a.bytesPerValue : 0;
  return sb * (plain * a.bytesPerValue + residual * (a.residualBytes ?? a.bytesPerValue)) + scores + crossKv;
}

/** Elements per latent pixel of a UNet's modules, by level, kept whole (no checkpointing) and as inputs only. */
function unetElements(u: UnetShape): { whole: number; inputs: number; largest: number } {
  const resnet = (c: number) => 6 * c;
  const transformer = (c: number, depth: number) => (depth > 0 ? 3 * c + 26 * c * depth : 0);
  let whole = 0;
  let inputs = 0;
  let largest = 0;
  const levels = u.channels.length;
  u.channels.forEach((c, i) => {
    const area = 1 / 4 ** i;
    const depth = u.transformerLayers[i] ?? 0;
    const prev = i === 0 ? c : u.channels[i - 1]!;
    // Down: layers_per_block ResNets (+ transformers), then a downsampling conv (not on the last level).
    for (let j = 0; j < u.layersPerBlock; j++) {
      whole += area * (resnet(c) + transformer(c, depth));
      inputs += area * ((j === 0 ? prev : c) + (depth > 0 ? c : 0));
      largest = Math.max(largest, area * resnet(c), area * transformer(c, depth));
    }
    if (i < levels - 1) {
      whole += area * c;
      inputs += area * c;
    }
    // Up: one more block, the skip concatenated (2C into the first convolution), then an upsampling conv.
    for (let j = 0; j <= u.layersPerBlock; j++) {
      whole += area * (resnet(c) + c + transformer(c, depth));
      inputs += area * (2 * c + (depth > 0 ? c : 0));
      largest = Math.max(largest, area * (resnet(c) + c), area * transformer(c, depth));
    }
    if (i > 0) {
      whole += area * c;
      inputs += area * c;
    }
  });
  const last = u.channels[levels - 1]!;
  const area = 1 / 4 ** (levels - 1);
  whole += area * (2 * resnet(last) + transformer(last, u.midTransformerLayers));
  inputs += area * (2 * last + last);
  largest = Math.max(largest, area * transformer(last, u.midTransformerLayers));
  return { whole, inputs, largest };
}

/** Activation bytes per GPU, with their parts. */
export function activationBreakdown(a: ActivationInput): ActivationBreakdown {
  const sb = a.tokens * a.microBatch;
  if (a.block === 'unet' && a.unet) {
    const e = unetElements(a.unet);
    const v = a.bytesPerValue;
    const blocksBytes = Math.round(sb * (a.checkpointing === 'full' ? e.inputs : e.whole) * v);
    const recomputeBytes = a.checkpointing === 'full' ? Math.round(sb * e.largest * v) : 0;
    return { blocksBytes, recomputeBytes, logitsBytes: 0, workspaceBytes: 0, totalBytes: blocksBytes + recomputeBytes };
  }
  const one = blockBytes(a);
  const residual = a.residualBytes ?? a.bytesPerValue;
  const blocksBytes = a.checkpointing === 'full' ? (a.layers - 1) * sb * a.hidden * residual : a.layers * one;
  const recomputeBytes = a.checkpointing === 'full' ? one : 0;
  const logitsBytes = a.vocab > 0 ? LOGITS_BYTES_PER_VOCAB_TOKEN * a.vocab * sb : 0;
  const workspaceBytes = a.attention === 'eager' ? 0 : ATTENTION_WORKSPACE_BYTES_PER_VALUE * sb * a.hidden;
  return {
    blocksBytes,
    recomputeBytes,
    logitsBytes,
    workspaceBytes,
    totalBytes: blocksBytes + recomputeBytes + logitsBytes + workspaceBytes,
  };
}

/** Activation bytes per GPU for the whole model. */
export function activationBytes(a: ActivationInput): number {
  return activationBreakdown(a).totalBytes;
}
