/** Small builders the tests share: a seeded random source, catalog entries, a Llama-shaped workload. */
import type { ActivationInput } from '../../src/estimate/activations.js';
import type { ModelEntry } from '../../src/estimate/models.js';

/** A small seeded PRNG (mulberry32) so property tests are repeatable. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A whole number from lo to hi, inclusive, from a random source. */
export const randInt = (r: () => number, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

/** A catalog entry with only an id, a name and counts (no shape), as a minimal models.yaml entry reads. */
export function modelEntry(
  over: Pick<ModelEntry, 'id' | 'name' | 'params' | 'largestLayer'> & Partial<ModelEntry>,
): ModelEntry {
  return {
    kind: 'lm',
    block: null,
    layers: null,
    hidden: null,
    heads: null,
    kvHeads: null,
    ffn: null,
    vocab: null,
    pixelsPerToken: null,
    textTokens: null,
    temporalFactor: null,
    residualFp32: false,
    unet: null,
    encoders: null,
    conditionImages: 0,
    modules: {},
    loraTargets: [],
    source: 'test',
    ...over,
  };
}

/** Llama-3.1-8B's activation shape (its config.json), 16-bit, with the workload left to the test. */
export const LLAMA_8B_SHAPE = {
  block: 'llama',
  layers: 32,
  hidden: 4096,
  heads: 32,
  kvHeads: 8,
  ffn: 14336,
  vocab: 128256,
  bytesPerValue: 2,
} as const satisfies Partial<ActivationInput>;
