/** `zerowiz estimate`: the peak memory, traffic and step time of each ZeRO mode, and which one to pick. */
import { Option, type Command } from 'commander';
import type { CommandContext } from './context.js';
import {
  ADDITIONAL_BUFFER_FACTOR,
  CPU_HEADROOM_FRACTION,
  DEFAULT_HEADROOM_PERCENT,
  DEFAULT_HOST_CORES,
} from '../estimate/index.js';
import type { EstimateFlags } from './estimate-run.js';

const HELP_AFTER = `
Units: counts take K/M/B/T (20.4B, 7e9, 350M, 1.3T). Memory: GiB, G and a bare number mean 2^30 bytes,
GB means 10^9 bytes (likewise K/M/T); 80GiB, 80GB, 141G and 1.5TiB all work. Output is in binary units.

The peak per GPU (what nvidia-smi shows at the worst moment of a step), its line items:
  cudaContext   CUDA context + kernels 0.92 GiB, NCCL 1.45 GiB (ml-engineering; --cuda-context overrides both)
  params        16-bit weights: whole at stages 1-2, 1/N at stage 3, 0 on the GPU with parameter offload
  grads         16-bit gradients of the trainable T: whole at stage 1, 1/N at stages 2-3, 0 with offload at 2
  optimizer     master weights, the optimizer's moments and the gradients it steps with: fp32 master + AdamW m, v
                + fp32 gradients (16 T/N; one sub-group of gradients at stage 3); --master-weights none: 8 T/N;
                --optimizer adamw-8bit: 2-byte moments, adafactor/sgd: none; 0 on the GPU when offloaded (and then
                accelerate swaps the optimizer for DeepSpeedCPUAdam)
  optimizerStep torch AdamW's foreach step copies one moment of the group it steps (T/N, one sub-group at
                stage 3), beyond the activations it reuses
  encoders      --encoders-on-gpu: the VAE encoding each sample at full resolution, beyond what the
                activations reuse (its and the text encoder's weights are extra models)
  activations   per micro-batch: flash attention assumed; per block 4h + 2kv + MLP (2h + 2f plain, 2h + 4f
                gated) (+6h for DiT blocks) values per token, or (layers - 1) x h + one block with
                --gradient-checkpointing; language models add 10 bytes x vocab per token of logits
  buffers       stages 1-2: reduce_bucket_size x 2 B (x2 with --overlap-comm), + largest parameter with offload;
                stage 3: one bucket + up to largest layer + max(prefetch bucket, stage3_max_live_parameters)
                gathered + the largest trainable module's gradient
  extraModels   --extra-gpu-params x 2 B (frozen models beside the trained one, not sharded)
  margin        10% of what a step allocates and frees (activations, buffers, stage 1's gradients): PyTorch's
                caching allocator keeps it reserved, and nvidia-smi shows reserved memory
CPU per node: the larger of loading (every rank loads the model in fp32 unless ZeRO-3 with zero.Init) and
training (offloaded states, pinned buffers, NVMe swap buffers).

Step time, seconds per optimizer step (micro-batch x --gradient-accumulation-steps), a band low-high and the
term that bounds it (docs/step-time.md has each formula and source, and its calibration):
  compute        the workload's FLOPs over the GPU's dense peak (--gpu; default a100-80) x 0.45 (band 0.30-0.60),
                 or the host's launch path when that is longer (short sequences, ZeRO-3's fetches)
  collectives    ring volumes per stage on NVLink/PCIe (--gpu-links, or nvidia-smi topo -m with --detect) or the
                 network between nodes (--internode)
  offload        PCIe copies of offloaded gradients and parameters
  hostOptimizer  DeepSpeedCPUAdam: 1.41e9 parameters/s per node, 0.278e9 per thread (torchrun runs 1 thread
                 per process unless OMP_NUM_THREADS is set; --cpu-cores caps the threads)
  nvme           ZeRO-Infinity's swaps at 2 GB/s (assumed)
Mode 0 is the same training without DeepSpeed (DDP on several GPUs). --steps N, or --epochs N --dataset-size N,
give the run's time and GPU-hours, and with --gpu-hour-price its price; --min-box the smallest box per GPU.

DeepSpeed's estimators (the deepspeed rows; model states only, every parameter trained, int truncation,
additional_buffer_factor ${ADDITIONAL_BUFFER_FACTOR} on CPU):
  2: GPU 2P + 18P/N   2-offload: GPU 2P   3: GPU 4L + 18P/N   3-offload: GPU 4L
  1 (zerowiz, DeepSpeed's accounting): GPU 4P + 16P/N; the ZeRO paper's K=12 form gives 4P + 12P/N.

Fits: the GPU peak <= GPU memory minus --headroom (default ${DEFAULT_HEADROOM_PERCENT}%); the CPU peak <= ${100 - CPU_HEADROOM_FRACTION * 100}% of CPU memory;
NVMe space <= free space at --nvme-path. Recommended: the fastest mode that fits, then (in the same time,
within 2%) the one with 1 GiB or more of extra room, then the lower stage; the sentence says what the slower
fitting modes cost. When nothing fits it says what would (checkpointing, micro-batch 1, a smaller LoRA rank,
more GPUs).

Examples:
  zerowiz estimate --model llama-3.1-8b --gpus-per-node 8 --gpu-memory 80GB --seq-len 4096 --gradient-checkpointing
  zerowiz estimate --model qwen-image --lora-rank 32 --max-pixels 1048576 --gpu-memory 80GiB --detect
  zerowiz estimate --params 20.4B --largest-layer 57M --gpus-per-node 8 --gpu-memory 80GiB --json
  zerowiz estimate --model wan2.1-14b --gpus-per-node 8 --gpu h100-sxm --frames 81 --max-pixels 480x832 --epochs 2 --dataset-size 5000 --gpu-hour-price 2.99
  zerowiz estimate --model flux.1-dev --lora-rank 16 --min-box --dataset-size 2000 --gpu-hour-price 2`;

/** Registers `zerowiz estimate`. */
export function registerEstimate(program: Command, _ctx: CommandContext): void {
  program
    .command('estimate')
    .description('estimate the peak GPU and CPU memory and the step time of each ZeRO mode, and recommend one')
    .option('--params <count>', 'total parameters, e.g. 20.4B, 7e9, 350M')
    .option('--largest-layer <count>', 'parameters of the largest single layer (ZeRO-3 gathers it whole), e.g. 120M')
    .option('--model <name>', 'take params, largest layer, shape and LoRA modules from the catalog (--list-models)')
    .option('--list-models', 'list the model catalog and exit')
    .option('--gpus-per-node <n>', 'GPUs per node (default 1, or detected with --detect)')
    .option('--nodes <n>', 'nodes (default 1)')
    .option('--gpu-memory <size>', 'memory of one GPU, e.g. 80GiB, 80GB, 141G')
    .option('--cpu-memory <size>', 'CPU memory per node, e.g. 1TiB, 1.5TiB')
    .option('--zero-init', 'ZeRO-3 with zero.Init (zero3_init_flag; the default)')
    .option('--no-zero-init', 'ZeRO-3 without zero.Init (each rank loads the whole model on CPU)')
    .option('--detect', 'fill GPUs per node, GPU memory, CPU memory and the GPU links from nvidia-smi and the OS')
    .option('--nvme-path <path>', 'NVMe folder: check its free space for the NVMe rows')
    .option('--no-nvme', 'leave out the NVMe variants of the offload modes')
    .option('--trainable-params <count>', 'trainable parameters among --params (default: all)')
    .option('--lora-rank <r>', 'LoRA adapters of this rank on the frozen model (needs a catalog --model)')
    .option('--lora-targets <a,b,...>', "LoRA target modules (default: the catalog's usual targets)")
    .option('--micro-batch <n>', 'micro-batch per GPU (default 1)')
    .option('--seq-len <n>', 'tokens per sample (default 2048 for a language model)')
    .option(
      '--max-pixels <n>',
      'image models: the largest image in pixels, e.g. 1048576 or 1024x1024 (default 1048576)',
    )
    .option('--hidden-size <n>', 'hidden size (default: the catalog model)')
    .option('--layers <n>', 'transformer blocks (default: the catalog model)')
    .option('--heads <n>', 'attention heads (default: the catalog model)')
    .option('--kv-heads <n>', 'key/value heads, grouped-query attention (default: = heads)')
    .option('--ffn-size <n>', 'MLP intermediate size (default: the catalog model, else 4 x hidden)')
    .option('--vocab <n>', "vocabulary size, for a language model's logits (default: the catalog model)")
    .option('--gradient-checkpointing', 'activation checkpointing per block')
    .option('--no-gradient-checkpointing', 'no activation checkpointing (the default)')
    .option('--precision <p>', 'bf16, fp16 or fp32 (default bf16)')
    .option('--optimizer <name>', "adamw, adamw-8bit, adafactor or sgd: the script's optimizer (default adamw)")
    .option(
      '--master-weights <m>',
      "fp32 (DeepSpeed's default) or none (pure bf16: bf16_master_weights_and_grads + bf16_optimizer_states)",
    )
    .option(
      '--block <kind>',
      'dit (cross-attention), mmdit (joint attention), llm or unet: the block layout for --params',
    )
    .option('--frames <n>', "video models: frames per sample (the catalog's temporal VAE factor makes latent frames)")
    .option('--text-tokens <n>', 'text tokens attended beside the image (default: the catalog model)')
    .option('--temporal-factor <n>', "the VAE's temporal compression, for --frames without a catalog model")
    .option(
      '--pixels-per-token <n>',
      'pixels per image token, (VAE downscale x patch)^2, without a catalog model (default 256)',
    )
    .option('--encoders-on-gpu', 'the text encoder and VAE run on the GPU every step (nothing precomputed)')
    .option(
      '--fp8-models <which>',
      'frozen models DiffSynth loads in fp8 (its --fp8_models): none, encoders, dit (the LoRA base) or all',
    )
    .option('--gpu-links <links>', 'nvlink:N or pcie: how the GPUs are linked (--detect reads it)')
    .option('--gpu <name>', 'the GPU from the catalog (--list-gpus), e.g. h100-sxm; sets --gpu-memory when not given')
    .option('--list-gpus', 'list the GPU catalog and exit')
    .option(
      '--cpu-cores <n>',
      `CPU cores per node, for the CPU optimizer of offload modes (default ${DEFAULT_HOST_CORES})`,
    )
    .option('--internode <spec>', 'the network between nodes: [NICs x]FABRIC or RATE, e.g. 8xib-ndr, eth-100g, 400Gb')
    .option('--gradient-accumulation-steps <n>', 'micro-batches per optimizer step (default 1)')
    .option('--steps <n>', 'optimizer steps of the run: its time, GPU-hours and price')
    .option('--epochs <n>', 'epochs of the run (with --dataset-size): its steps over the global batch')
    .option('--dataset-size <n>', 'samples per epoch (DiffSynth: metadata rows x --dataset_repeat)')
    .option('--gpu-hour-price <p>', 'price of one GPU-hour (e.g. 2.49), or per GPU: h100-sxm=2.99,a100-80=1.79')
    .option('--min-box', 'the smallest box per catalog GPU that runs this job, with its step, epoch and price')
    .option(
      '--preset <name>',
      "estimate a preset's setup (flags change its answers), with the peaks its runs measured here",
    )
    .option('--extra-gpu-params <count>', 'frozen models kept on each GPU beside the trained one (text encoder, VAE)')
    .option('--overlap-comm', 'DeepSpeed overlap_comm: a second reduce bucket at stages 1-2')
    .option('--no-overlap-comm', 'no overlap_comm (the default zerowiz writes)')
    .option(
      '--reduce-bucket-size <elems>',
      'DeepSpeed reduce_bucket_size in elements (default 5e7, what zerowiz writes)',
    )
    .option('--headroom <pct>', `GPU memory kept free beyond the peak, percent (default ${DEFAULT_HEADROOM_PERCENT})`)
    .option('--cuda-context <size>', 'CUDA context + NCCL per process (default 0.92 GiB + 1.45 GiB)')
    .addOption(new Option('--hidden <n>').hideHelp())
    .addOption(new Option('--image-tokens <n>').hideHelp())
    .addOption(new Option('--checkpointing <kind>').hideHelp())
    .option('--json', 'print JSON instead of a table')
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: EstimateFlags) => (await import('./estimate-run.js')).runEstimate(flags));
}
