/** `zerowiz estimate`: memory, communication and offload traffic of each ZeRO mode, and which one to pick. */
import type { Command } from 'commander';
import type { CommandContext } from './context.js';
import {
  ADDITIONAL_BUFFER_FACTOR,
  CPU_HEADROOM_FRACTION,
  GPU_HEADROOM_FRACTION,
  GPU_HEADROOM_MIN_BYTES,
} from '../estimate.js';

/** Raw flag values as commander hands them over. */
export interface EstimateFlags {
  params?: string;
  largestLayer?: string;
  gpusPerNode?: string;
  nodes?: string;
  gpuMemory?: string;
  cpuMemory?: string;
  zeroInit?: boolean;
  model?: string;
  detect?: boolean;
  nvmePath?: string;
  layers?: string;
  hidden?: string;
  seqLen?: string;
  imageTokens?: string;
  microBatch?: string;
  heads?: string;
  checkpointing?: string;
  nvme?: boolean;
  listModels?: boolean;
  json?: boolean;
}

const HELP_AFTER = `
Units: counts take K/M/B/T (20.4B, 7e9, 350M, 1.3T). Memory: GiB, G and a bare number mean 2^30 bytes,
GB means 10^9 bytes (likewise K/M/T); 80GiB, 80GB, 141G and 1.5TiB all work. Output is in binary units
(GiB), as DeepSpeed's estimator prints them (it labels GiB "GB").

What the figures are (P params, L largest layer, N = GPUs per node x nodes, model states only, Adam):
  2, 2-offload, 3, 3-offload   exactly DeepSpeed's estimate_zero2/zero3_model_states_mem_needs (current
                               formulas, int truncation, additional_buffer_factor ${ADDITIONAL_BUFFER_FACTOR}, zero_init as given):
                               2: GPU 2P + 18P/N      2-offload: GPU 2P
                               3: GPU 4L + 18P/N      3-offload: GPU 4L
  1                            GPU 4P + 16P/N (fp16 params and grads replicated, fp32 grads, master
                               weights and Adam states partitioned; the ZeRO paper's K=12 form gives 4P + 12P/N).
                               CPU as ZeRO-2 without offload (P x 4 x GPUs per node x 1.5, at model load).
  communication / step         16-bit ring volume per GPU: stages 1-2 2P x 2 B x (N-1)/N, stage 3 3P x 2 B x (N-1)/N.
  offload / step (derived)     GPU<->CPU bytes per GPU: 2-offload 4P/N (fp16 grads out, fp16 params back);
                               3-offload 6P/N (fp16 params in for forward and backward, fp16 grads out).
  NVMe rows (derived)          DeepSpeed swaps to NVMe only at stage 3 (2-offload nvme = cpu). 3-offload nvme:
                               CPU per node = GPUs per node x (16 x min(1e9, P/N) + 1e9) x 1.5 (optimizer and
                               param swap buffers at DeepSpeed's defaults); NVMe space per node 18P/nodes;
                               NVMe traffic 30P/N bytes per GPU per step.
  activations (optional)       Korthikanti et al. 2022, 16-bit, per layer s*b*h*(34 + 5*a*s/h) bytes without
                               recomputation; with --checkpointing full: layers x 2*s*b*h + one full layer.
                               Needs --layers --hidden --heads (or --model) and --seq-len (or --image-tokens) --micro-batch.

Fits: GPU need (+ activations) <= GPU memory minus max(${GPU_HEADROOM_FRACTION * 100}%, ${GPU_HEADROOM_MIN_BYTES / 2 ** 30} GiB) of headroom (CUDA context, NCCL and
allocator buffers); CPU need <= ${100 - CPU_HEADROOM_FRACTION * 100}% of CPU memory; NVMe space <= free space at --nvme-path.
Recommended: the fastest mode that fits: no offload before offload, then less traffic, then the lower stage.

Examples:
  zerowiz estimate --params 20.4B --largest-layer 57M --gpus-per-node 8 --gpu-memory 80GiB --cpu-memory 1TiB
  zerowiz estimate --model qwen-image --detect --json
  zerowiz estimate --model llama-3.1-8b --gpus-per-node 8 --gpu-memory 80GB --seq-len 4096 --micro-batch 1 --checkpointing full`;

/** Registers `zerowiz estimate`. */
export function registerEstimate(program: Command, _ctx: CommandContext): void {
  program
    .command('estimate')
    .description(
      'estimate GPU memory, CPU memory, communication and offload traffic of each ZeRO mode, and recommend one',
    )
    .option('--params <count>', 'total parameters, e.g. 20.4B, 7e9, 350M')
    .option('--largest-layer <count>', 'parameters of the largest single layer (ZeRO-3 gathers it whole), e.g. 120M')
    .option('--model <name>', 'take params, largest layer and shape from the catalog (see --list-models)')
    .option('--list-models', 'list the model catalog and exit')
    .option('--gpus-per-node <n>', 'GPUs per node (default 1, or detected with --detect)')
    .option('--nodes <n>', 'nodes (default 1)')
    .option('--gpu-memory <size>', 'memory of one GPU, e.g. 80GiB, 80GB, 141G')
    .option('--cpu-memory <size>', 'CPU memory per node, e.g. 1TiB, 1.5TiB')
    .option('--zero-init', 'ZeRO-3 with zero.Init (zero3_init_flag; the default)')
    .option('--no-zero-init', 'ZeRO-3 without zero.Init (each rank loads the whole model on CPU)')
    .option('--detect', 'fill GPUs per node, GPU memory and CPU memory from nvidia-smi and the OS')
    .option('--nvme-path <path>', 'NVMe folder: check its free space for the NVMe rows')
    .option('--no-nvme', 'leave out the NVMe variants of the offload modes')
    .option('--layers <n>', 'transformer blocks (activation estimate)')
    .option('--hidden <n>', 'hidden size (activation estimate)')
    .option('--heads <n>', 'attention heads (activation estimate)')
    .option('--seq-len <n>', 'sequence length per sample (activation estimate)')
    .option('--image-tokens <n>', 'image (+ text) tokens per sample for a DiT; same as --seq-len')
    .option('--micro-batch <n>', 'micro-batch per GPU (activation estimate)')
    .option('--checkpointing <kind>', 'activation checkpointing: none or full (default none)')
    .option('--json', 'print JSON instead of a table')
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: EstimateFlags) => (await import('./estimate-run.js')).runEstimate(flags));
}
