/**
 * The floating-point work of one training sample on one GPU, from the block layout (the activation model's
 * shape, ./activations.ts), as the step-time model (./time.ts) divides it by the GPU's peak.
 *
 * Sources and derivation:
 * - A Linear of `in x out` costs 2 x in x out FLOPs per token forward (a multiply and an add per weight);
 *   backward costs the same again for the input gradient and again for the weight gradient (Kaplan et al.
 *   2020, "Scaling Laws for Neural Language Models", Sec. 2.1: C = 6N per token for training). A frozen weight
 *   (LoRA's base model, a frozen backbone) needs no weight gradient: its backward is one forward, not two.
 * - Attention's two matmuls (QK^T and AV) cost 2 x 2 x s x h per token and layer forward (MosaicML's
 *   llm-foundry benchmarks: attn_flops_per_seq = n_layers x 2 x 2 x d_model x seq_len^2); a causal language
 *   model's FlashAttention skips the masked half; backward costs twice the forward.
 * - Gradient checkpointing runs each block's forward once more in backward (HFU = 4 x forward instead of 3:
 *   the same llm-foundry README, "HFU").
 * - Per-token weights by block (the shapes of ./activations.ts): `llama` 2h^2 + 2h kv + 3hf (q, o; k, v of
 *   the key/value heads; gate, up, down); `gpt` 4h^2 + 2hf; `mmdit` 4h^2 + 2hf per token of the joint
 *   sequence (each stream's own projections and MLP; FLUX's single blocks fuse the same weights); `dit` 6h^2 +
 *   2hf per image token (self-attention, the cross-attention's query and output, the MLP) plus the
 *   cross-attention's keys and values over the text tokens, once per sample; a language model's head adds
 *   h x vocab per token. Modulation Linears (adaLN) act once per sample, not per token, and are left out.
 * - `unet`: per level of `channels[i]` at 1/4^i of the latent pixels, each ResNet block two 3x3
 *   convolutions (18 C^2 per pixel), each transformer layer 4C^2 (self-attention) + 2C^2 (cross-attention's
 *   query and output) + 12C^2 (GEGLU 8C^2 in, 4C^2 out) per pixel and its self-attention over the level's
 *   pixels; `layers_per_block` blocks down, one more up, two ResNets and the mid transformer layers at the
 *   lowest level (diffusers UNet2DConditionModel's layout).
 * - LoRA adapters add 6 x their parameters per token (trained, as any weight).
 */
import type { ActivationInput } from './activations.js';

/** The work of one sample split as the time model weighs it: forward FLOPs of weights and of attention. */
export interface SampleFlops {
  /** Forward FLOPs through weights (Linears, convolutions, a language model's head). */
  weightForward: number;
  /** Forward FLOPs of attention's matmuls (no weights). */
  attentionForward: number;
  /** Forward FLOPs of LoRA's adapters (trained weights beside the frozen ones). */
  adapterForward: number;
}

/** What a training step costs per sample: forward, recompute and backward by what trains. */
export interface TrainingFlops extends SampleFlops {
  /** Forward + recompute + backward of one sample, FLOPs. */
  total: number;
}

/** Weights a token passes through in one block (see the derivation above). */
export function weightsPerToken(a: Pick<ActivationInput, 'block' | 'hidden' | 'heads' | 'kvHeads' | 'ffn'>): number {
  const h = a.hidden;
  const kvDim = Math.round((a.kvHeads * h) / a.heads);
  switch (a.block) {
    case 'llama':
      return 2 * h * h + 2 * h * kvDim + 3 * h * a.ffn;
    case 'gpt':
    case 'mmdit':
      return 4 * h * h + 2 * h * a.ffn;
    case 'dit':
      return 6 * h * h + 2 * h * a.ffn;
    case 'unet':
      return 0;
  }
}

/** A UNet's forward FLOPs per sample by level (see the derivation above). */
function unetForward(a: ActivationInput): { weights: number; attention: number } {
  const u = a.unet;
  if (!u) return { weights: 0, attention: 0 };
  let weights = 0;
  let attention = 0;
  const levels = u.channels.length;
  for (let i = 0; i < levels; i++) {
    const c = u.channels[i]!;
    const pixels = a.tokens / 4 ** i;
    const blocks = 2 * u.layersPerBlock + 1;
    const layers = (u.transformerLayers[i] ?? 0) * blocks;
    weights += 2 * pixels * (blocks * 18 * c * c + layers * 18 * c * c);
    attention += layers * 4 * pixels * pixels * c;
  }
  const c = u.channels[levels - 1]!;
  const pixels = a.tokens / 4 ** (levels - 1);
  weights += 2 * pixels * (2 * 18 * c * c + u.midTransformerLayers * 18 * c * c);
  attention += u.midTransformerLayers * 4 * pixels * pixels * c;
  return { weights, attention };
}

/** Forward FLOPs of one sample (see the derivation above); `adapters` the LoRA parameters (0 without). */
export function sampleFlops(a: ActivationInput, adapters = 0): SampleFlops {
  const s = a.tokens;
  if (a.block === 'unet') {
    const u = unetForward(a);
    return { weightForward: u.weights, attentionForward: u.attention, adapterForward: 2 * s * adapters };
  }
  const perLayer = weightsPerToken(a);
  const cross = a.block === 'dit' ? (a.crossTokens ?? 0) : 0;
  const kvDim = Math.round((a.kvHeads * a.hidden) / a.heads);
  const crossKv = 2 * 2 * cross * a.hidden * kvDim;
  const head = a.vocab > 0 ? 2 * s * a.hidden * a.vocab : 0;
  const causal = a.block === 'llama' || a.block === 'gpt' ? 0.5 : 1;
  const selfAttention = 4 * s * s * a.hidden * causal;
  const crossAttention = 4 * s * cross * a.hidden;
  return {
    weightForward: a.layers * (2 * s * perLayer + crossKv) + head,
    attentionForward: a.layers * (selfAttention + crossAttention),
    adapterForward: 2 * s * adapters,
  };
}

/**
 * Forward, recompute and backward FLOPs of one sample: the weights' backward is one forward for the input
 * gradient plus `trainedFraction` of one for the weight gradients; attention's backward two forwards;
 * checkpointing one more forward of everything; adapters train whole.
 */
export function trainingFlops(a: ActivationInput, trainedFraction: number, adapters = 0): TrainingFlops {
  const f = sampleFlops(a, adapters);
  const recompute = a.checkpointing === 'full' ? 1 : 0;
  const weights = f.weightForward * (1 + recompute + 1 + Math.min(1, Math.max(0, trainedFraction)));
  const attention = f.attentionForward * (1 + recompute + 2);
  const lora = f.adapterForward * (1 + recompute + 2);
  return { ...f, total: weights + attention + lora };
}
