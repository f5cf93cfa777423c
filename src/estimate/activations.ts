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
 */
import type { BlockKind } from './models.js';

/** Activation checkpointing: `none` keeps every activation; `full` recomputes each block in backward. */
export type Checkpointing = 'none' | 'full';
/** How attention is computed: fused (FlashAttention / SDPA, the default) or eager (scores stored). */
export type AttentionKind = 'flash' | 'eager';

/** Bytes per vocabulary entry and token for a language model's logits (16-bit + fp32 copy + fp32 gradient). */
export const LOGITS_BYTES_PER_VOCAB_TOKEN = 10;

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
  /** Tokens per sample: the sequence length, or image tokens + text tokens for a DiT. */
  tokens: number;
  microBatch: number;
  checkpointing: Checkpointing;
  /** Bytes per activation value: 2 in bf16/fp16, 4 in fp32. */
  bytesPerValue: number;
  /** Default flash. */
  attention?: AttentionKind;
}

/** The activation total and its parts, bytes per GPU. */
export interface ActivationBreakdown {
  /** What the blocks keep (all of them, or their checkpointed inputs). */
  blocksBytes: number;
  /** One block recomputed during backward (checkpointing only), else 0. */
  recomputeBytes: number;
  /** The language model's logits, else 0. */
  logitsBytes: number;
  totalBytes: number;
}

/** Elements one block keeps per token (see the derivation above). */
export function elementsPerToken(a: Pick<ActivationInput, 'block' | 'hidden' | 'heads' | 'kvHeads' | 'ffn'>): number {
  const h = a.hidden;
  const kvDim = Math.round((a.kvHeads * h) / a.heads);
  const attention = 4 * h + 2 * kvDim;
  const mlp = a.block === 'llama' ? 2 * h + 4 * a.ffn : 2 * h + 2 * a.ffn;
  const modulation = a.block === 'dit' ? 6 * h : 0;
  return attention + mlp + modulation;
}

/** Bytes one block keeps for the whole micro-batch, without recomputation. */
export function blockBytes(a: Omit<ActivationInput, 'layers' | 'checkpointing' | 'vocab'>): number {
  const sb = a.tokens * a.microBatch;
  const scores = a.attention === 'eager' ? 5 * a.heads * a.tokens * a.tokens * a.microBatch : 0;
  return sb * elementsPerToken(a) * a.bytesPerValue + scores;
}

/** Activation bytes per GPU, with their parts. */
export function activationBreakdown(a: ActivationInput): ActivationBreakdown {
  const one = blockBytes(a);
  const sb = a.tokens * a.microBatch;
  const blocksBytes = a.checkpointing === 'full' ? (a.layers - 1) * sb * a.hidden * a.bytesPerValue : a.layers * one;
  const recomputeBytes = a.checkpointing === 'full' ? one : 0;
  const logitsBytes = a.vocab > 0 ? LOGITS_BYTES_PER_VOCAB_TOKEN * a.vocab * sb : 0;
  return { blocksBytes, recomputeBytes, logitsBytes, totalBytes: blocksBytes + recomputeBytes + logitsBytes };
}

/** Activation bytes per GPU for the whole model. */
export function activationBytes(a: ActivationInput): number {
  return activationBreakdown(a).totalBytes;
}
