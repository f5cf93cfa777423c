/**
 * What the training itself is, as the answers say it: its precision, the optimizer the script builds, whether it
 * keeps fp32 master weights, and how the GPUs of a node talk to each other. The estimate models them; the config
 * writes them.
 */

/** Training precision: bytes of a 16-bit or 32-bit weight. */
export type Precision = 'bf16' | 'fp16' | 'fp32';

/**
 * The optimizer the training script builds: torch's AdamW, bitsandbytes' AdamW8bit (1-byte moments),
 * transformers' Adafactor (factored second moment, no first moment by default) or plain SGD (momentum 0,
 * torch's default). With the optimizer offloaded, accelerate swaps whichever it is for DeepSpeedCPUAdam
 * (accelerate utils/deepspeed.py map_pytorch_optim_to_deepspeed), so offloaded rows count Adam.
 */
export type OptimizerKind = 'adamw' | 'adamw-8bit' | 'adafactor' | 'sgd';
/** The optimizers, in the order offered. */
export const OPTIMIZER_KINDS: readonly OptimizerKind[] = ['adamw', 'adamw-8bit', 'adafactor', 'sgd'];
/**
 * Master weights: `fp32` keeps an fp32 copy of the trained weights (DeepSpeed's default; torch AMP keeps the
 * weights themselves in fp32); `none` trains the 16-bit weights directly (pure bf16; under DeepSpeed the
 * JSON's bf16.bf16_master_weights_and_grads and bf16_optimizer_states).
 */
export type MasterWeights = 'fp32' | 'none';

/** How the GPUs of a node talk to each other, as `nvidia-smi topo -m` shows it (or the default). */
export interface Interconnect {
  /** nvlink: every GPU pair shows NV#; pcie: some pair goes over PCIe; unknown: not detected. */
  kind: 'nvlink' | 'pcie' | 'unknown';
  /** NVLink links per GPU pair (the smallest NV# seen), or null. */
  nvlinks: number | null;
}
