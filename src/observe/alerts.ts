/**
 * Alerts: a training run's known failure messages, each with the fix. ONE table (ALERT_PATTERNS): per entry
 * the id, the regex, the real messages it matches quoted with where they come from (repo + file + function,
 * or an issue thread), the fix, and lines that look alike but must not fire. The tests run every quote and
 * every non-match through the engine.
 *
 * An alert is a structured value ({id, step, line, at, title, fix}); it fires once per distinct cause per
 * step (an OOM printed by eight ranks is one alert). Three entries are also raised from outside the log
 * lines: a NaN/inf loss from any metric source, a streak of fp16 overflow skips, and a step killed by
 * SIGKILL (exit 137) that zerowiz did not stop.
 *
 * Cost: a line is tried against the patterns only when one combined regex of literal needles finds one of
 * them (about 80 ns for a 100-character line that has none, measured in __tests__/bench/metrics.bench.mjs).
 */
import { formatBytesShort } from '../text/index.js';
import type { OomFacts } from '../rules/index.js';
import { parseNodeCheckLine } from '../checks/index.js';

/** Every known failure an alert can be (the last four are raised by the run's health watch, ./health.ts). */
export const ALERT_IDS = [
  'cuda-oom',
  'nan-loss',
  'loss-scale-collapse',
  'nccl-timeout',
  'port-in-use',
  'shm-too-small',
  'ds-op-build',
  'zero3-16bit-save',
  'auto-unfilled',
  'host-oom',
  'checkpoint-bad',
  'check-failed',
  'stall',
  'memory-pressure',
  'shm-full',
  'space-low',
] as const;

/** Which known failure an alert is. */
export type AlertId = (typeof ALERT_IDS)[number];

/** One alert, as the pane, stream mode, run.json and the summary show it. */
export interface Alert {
  id: AlertId;
  /** Index of the step it happened in. */
  step: number;
  /** The line that raised it (or a description of the metric), at most ALERT_LINE_MAX_CHARS. */
  line: string;
  /** When (ms since the epoch). */
  at: number;
  /** One short sentence: what happened. */
  title: string;
  /** What to change. */
  fix: string;
  /** Whether it explains a failed step (an OOM) rather than warns about a running one (a NaN loss). */
  fatal: boolean;
}

/**
 * What zerowiz knows about the run, for the fixes. Phase 2 fills it from the setup and the estimator
 * (this module does not import the estimator).
 */
export interface AlertContext {
  /** The run's mixed precision: 'fp16', 'bf16', 'no', 'auto' (null: unknown). */
  precision?: string | null;
  /** The next mode or setting that fits by the estimate after a CUDA OOM, as one sentence; null: none known. */
  whatFits?: (oom: OomFacts) => string | null;
  /** The same for host memory (a mode that needs less CPU RAM per node); null: none known. */
  hostWhatFits?: () => string | null;
  /** A TCP port found free (findFreePort) when the step started. */
  freePort?: number | null;
}

/** The facts one firing has. */
export interface AlertFacts {
  match: RegExpExecArray | null;
  line: string;
  /** nan-loss: the value and where it came from. */
  value?: number;
  source?: string;
  /** loss-scale-collapse from overflow messages. */
  streak?: number;
  scale?: number | null;
  fp16?: boolean;
  /** host-oom from the step's end. */
  exitCode?: number | null;
  signal?: string | null;
  /** checkpoint-bad: the checkpoint, what is wrong with it and the fix (src/checkpoints/watch.ts). */
  checkpoint?: CheckpointAlertFacts;
}

/** What a bad checkpoint's alert says (built by src/checkpoints/watch.ts checkpointAlert). */
export interface CheckpointAlertFacts {
  path: string;
  title: string;
  fix: string;
}

/** A real message an entry matches, and where it comes from. */
export interface AlertQuote {
  text: string;
  source: string;
}

/** One row of the table. */
export interface AlertPattern {
  id: AlertId;
  fatal: boolean;
  /** Literal strings (case-sensitive); a line is tried against `re` only when it holds one of them. */
  needles: readonly string[];
  /** The line pattern; null for an alert raised only from metrics or the exit status. */
  re: RegExp | null;
  /** Real messages it matches, quoted, with their source. */
  quotes: readonly AlertQuote[];
  /** Lines that look alike but are not this failure. */
  nonMatches: readonly string[];
  /** The distinct cause within the id (an op name, a port, a config key); '' when there is one cause. */
  cause(f: AlertFacts): string;
  title(f: AlertFacts, ctx: AlertContext): string;
  fix(f: AlertFacts, ctx: AlertContext): string;
}

/** Longest line kept in an alert. */
export const ALERT_LINE_MAX_CHARS = 300;
/** Alerts kept per step (distinct causes); more are counted, not kept. */
export const MAX_ALERTS_PER_STEP = 16;
/** Distinct causes remembered per step (to fire each once); beyond it a cause may fire again, never kept. */
export const MAX_CAUSES_REMEMBERED_PER_STEP = 256;
/** fp16 overflow skips in a row that count as a collapsing loss scale (start-up settles in fewer). */
export const OVERFLOW_STREAK_ALERT = 8;

const SIZE_RE = /(\d+(?:\.\d+)?) (GiB|MiB|KiB|bytes|B)\b/;
const SIZE_UNIT: Record<string, number> = { GiB: 2 ** 30, MiB: 2 ** 20, KiB: 2 ** 10, bytes: 1, B: 1 };

/** `2.00 GiB` (PyTorch's format_size) in bytes, or null. */
function sizeBytes(text: string | undefined): number | null {
  if (text === undefined) return null;
  const m = SIZE_RE.exec(text);
  return m ? Math.round(Number(m[1]) * SIZE_UNIT[m[2]!]!) : null;
}

function after(line: string, re: RegExp): string | undefined {
  const m = re.exec(line);
  return m ? m[1] : undefined;
}

/** Reads what PyTorch's allocator put in an OOM message (both its old and its current wording). */
export function oomFacts(line: string): OomFacts {
  const gpuText = after(line, /GPU (\d+) has a total capac/) ?? after(line, /\(GPU (\d+);/);
  return {
    gpu: gpuText === undefined ? null : Number(gpuText),
    triedBytes: sizeBytes(after(line, /Tried to allocate ([\d.]+ \w+)/)),
    totalBytes: sizeBytes(
      after(line, /total capac\w* of ([\d.]+ \w+)/) ?? after(line, /; ([\d.]+ \w+) total capacity/),
    ),
    freeBytes: sizeBytes(after(line, /of which ([\d.]+ \w+) is free/) ?? after(line, /; ([\d.]+ \w+) free;/)),
    reservedUnallocatedBytes: sizeBytes(after(line, /and ([\d.]+ \w+) is reserved by PyTorch but unallocated/)),
  };
}

function precisionIsFp16(ctx: AlertContext, f: AlertFacts): boolean {
  return ctx.precision === 'fp16' || f.fp16 === true;
}

const BF16_HINT = 'train in bf16 instead (zerowiz: --mixed-precision bf16; needs an Ampere or newer GPU)';

/** THE table. */
export const ALERT_PATTERNS: readonly AlertPattern[] = [
  {
    id: 'cuda-oom',
    fatal: true,
    needles: ['CUDA out of memory', 'CUDA error: out of memory'],
    re: /CUDA out of memory\.|CUDA error: out of memory/,
    quotes: [
      {
        text: 'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.39 GiB. GPU 1 has a total capacity of 79.32 GiB of which 2.40 GiB is free. Process 105400 has 76.92 GiB memory in use. Of the allocated memory 73.28 GiB is allocated by PyTorch, and 1.59 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
        source:
          'hiyouga/LlamaFactory#7532 (ZeRO-3 offload); text from pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc',
      },
      {
        text: 'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 978.00 MiB (GPU 0; 4.00 GiB total capacity; 1.68 GiB already allocated; 0 bytes free; 2.72 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF',
        source: 'deepspeedai/DeepSpeed#3869 (PyTorch before 2.1, the same function)',
      },
      {
        text: 'RuntimeError: CUDA error: out of memory',
        source:
          'pytorch/pytorch c10/cuda/CUDAException.cpp c10_cuda_check_implementation ("CUDA error: " + cudaGetErrorString(cudaErrorMemoryAllocation))',
      },
    ],
    nonMatches: [
      'Do not find activation_checkpointing config in deepspeed config, skip initializing deepspeed gradient checkpointing.',
      'max_memory_allocated: 12.3 GB',
    ],
    cause: () => '',
    title: (f) => {
      const o = oomFacts(f.line);
      const tried = o.triedBytes === null ? '' : ` trying to allocate ${formatBytesShort(o.triedBytes)}`;
      return `CUDA out of memory${o.gpu === null ? '' : ` on GPU ${o.gpu}`}${tried}`;
    },
    fix: (f, ctx) => {
      const o = oomFacts(f.line);
      const fits = ctx.whatFits?.(o) ?? null;
      const parts = [
        fits ??
          'shard or offload more (a higher ZeRO mode; `zerowiz estimate` shows what fits), turn on gradient checkpointing, or lower the batch size or resolution',
      ];
      if (
        o.reservedUnallocatedBytes !== null &&
        o.totalBytes !== null &&
        o.reservedUnallocatedBytes > 0.05 * o.totalBytes
      ) {
        parts.push(
          `${formatBytesShort(o.reservedUnallocatedBytes)} was reserved but unallocated (fragmentation): PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True may be enough`,
        );
      }
      return parts.join('; ');
    },
  },
  {
    id: 'nan-loss',
    fatal: false,
    needles: [],
    re: null,
    quotes: [
      {
        text: 'avr_loss=nan',
        source: 'kohya-ss/musubi-tuner#26 (a tqdm postfix, 3300 steps of nan before anyone looked)',
      },
      {
        text: "{'loss': nan, 'grad_norm': nan, 'learning_rate': 4.8e-05, 'epoch': 0.12}",
        source: 'huggingface/transformers src/transformers/trainer_callback.py ProgressCallback.on_log (str(logs))',
      },
      {
        text: '13,loss,nan',
        source: 'modelscope/DiffSynth-Studio diffsynth/diffusion/logger.py CSVLogger.log (csv writes float nan as nan)',
      },
    ],
    nonMatches: ["{'eval_loss': nan, 'epoch': 1.0}", 'val_loss=nan'],
    cause: () => '',
    title: (f) => `loss is ${Number.isNaN(f.value) ? 'NaN' : String(f.value)}${f.source ? ` (${f.source})` : ''}`,
    fix: (f, ctx) =>
      precisionIsFp16(ctx, f)
        ? `fp16 overflows easily on weights trained in bf16: ${BF16_HINT}; else lower the learning rate or set gradient clipping (--gradient-clipping 1.0)`
        : 'lower the learning rate, set gradient clipping (--gradient-clipping 1.0), and check the data for a broken sample; the run is not learning while the loss is not a number',
  },
  {
    id: 'loss-scale-collapse',
    fatal: true,
    needles: ['loss scale already at minimum'],
    re: /Current loss scale already at minimum - cannot decrease scale anymore/,
    quotes: [
      {
        text: 'Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.',
        source:
          'deepspeedai/DeepSpeed deepspeed/runtime/fp16/loss_scaler.py DynamicLossScaler.update_scale; seen in deepspeedai/DeepSpeed#4017',
      },
      {
        text: '[Rank 0] Overflow detected. Skipping step. Attempted loss scale: 1, reducing to 1',
        source:
          'deepspeedai/DeepSpeed#697 (one of a streak; deepspeed/runtime/fp16/fused_optimizer.py FP16_Optimizer.step): raised from the overflow streak, not this regex',
      },
    ],
    nonMatches: ['[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768'],
    cause: (f) => (f.streak !== undefined ? 'streak' : 'minimum'),
    title: (f) =>
      f.streak !== undefined
        ? `${f.streak} ${f.fp16 ? 'fp16 overflow skips' : 'skipped steps (inf/NaN gradients)'} in a row${f.scale !== null && f.scale !== undefined ? `, loss scale down to ${f.scale}` : ''}`
        : 'fp16 loss scale at its minimum: DeepSpeed stops the run',
    fix: (f) =>
      f.fp16 === false && f.streak !== undefined
        ? 'the gradients are inf/NaN on every step: lower the learning rate, set gradient clipping (--gradient-clipping 1.0), check the data'
        : `${BF16_HINT}; if fp16 must stay, lower the learning rate and raise fp16.loss_scale_window or fp16.hysteresis`,
  },
  {
    id: 'nccl-timeout',
    fatal: true,
    needles: ['Watchdog caught collective operation timeout', 'Some NCCL operations have failed or timed out'],
    re: /Watchdog caught collective operation timeout: WorkNCCL\((.*?)\) ran for (\d+) milliseconds|Some NCCL operations have failed or timed out/,
    quotes: [
      {
        text: '[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.',
        source:
          'pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the watchdog: "Watchdog caught collective operation timeout: ", work, " ran for ", ...); instance from a DeepSpeed CPU-Adam run log',
      },
      {
        text: '[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=64214, OpType=ALLGATHER, NumelIn=1, NumelOut=32, Timeout(ms)=600000) ran for 600091 milliseconds before timing out.',
        source: 'huggingface/trl#1584 (ZeRO-3 save/eval), same source',
      },
      {
        text: 'Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.',
        source: 'pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (WorkNCCL::handleException)',
      },
    ],
    nonMatches: ['NCCL INFO comm 0x7ff1ec001060 rank 0 nranks 2 cudaDev 0 busId 100000 - Init COMPLETE'],
    cause: () => '',
    title: (f) => {
      const op = f.match?.[1] ? /OpType=(\w+)/.exec(f.match[1])?.[1] : undefined;
      const ms = f.match?.[2];
      return `NCCL collective timed out${op ? ` (${op}` : ''}${op && ms ? ` after ${Math.round(Number(ms) / 60_000)} min)` : op ? ')' : ''}`;
    },
    fix: () =>
      'one rank fell behind or hung (a long ZeRO-3 16-bit save, work only rank 0 does, a rank that died first: look above for its error); rerun with NCCL_DEBUG=INFO to see which, and give slow saves a longer timeout (InitProcessGroupKwargs(timeout=...) in the script)',
  },
  {
    id: 'port-in-use',
    fatal: true,
    needles: ['Address already in use', 'address already in use', 'EADDRINUSE', 'another process is utilizing it'],
    re: /^(?!.*NCCL WARN)(?!.*Accelerate will attempt).*(?:Address already in use|address already in use|EADDRINUSE|another process is utilizing it)/,
    quotes: [
      {
        text: 'ConnectionError: Tried to launch distributed communication on port `29500`, but another process is utilizing it. Please specify a different port (such as using the `--main_process_port` flag or specifying a different `main_process_port` in your config file) and rerun your script. To automatically use the next open port (on a single node), you can set this to `0`.',
        source: 'huggingface/accelerate src/accelerate/utils/launch.py prepare_multi_gpu_env (multi-node)',
      },
      {
        text: 'RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).',
        source:
          'pytorch/pytorch torch/csrc/distributed/c10d/socket.cpp SocketListenOp::run (as in the PyTorch 2.0-2.3 TCPStore)',
      },
      {
        text: 'torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 2333, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use',
        source: 'pytorch/pytorch TCPStore (libuv backend, 2.4+), instance quoted in a nano-vllm write-up',
      },
    ],
    nonMatches: [
      'nccl-node:123:456 [0] misc/socket.cc:484 NCCL WARN Call to bind failed: Address already in use',
      'UserWarning: Port `29500` is already in use. Accelerate will attempt to launch in a standalone-like mode by finding an open port automatically for this session.',
    ],
    cause: (f) => portOf(f.line) ?? '',
    title: (f) => {
      const p = portOf(f.line);
      return `${p ? `port ${p}` : 'the rendezvous port'} is already in use (another run on this machine?)`;
    },
    fix: (_f, ctx) => {
      const free = ctx.freePort ?? null;
      const use = free === null ? 'another port' : `port ${free} (free when zerowiz checked)`;
      return `use ${use}: \`--main_process_port ${free ?? 'PORT'}\` for accelerate launch, or main_process_port in the accelerate YAML (zerowiz: --main-process-port); on one machine 0 lets accelerate pick`;
    },
  },
  {
    id: 'shm-too-small',
    fatal: true,
    needles: [
      'shared memory segment',
      'failed to extend /dev/shm',
      'posix_fallocate failed',
      'bus error encountered',
      'unable to write to file </torch_',
    ],
    re: /Error while (?:creating|attaching to) shared memory segment|failed to extend \/dev\/shm\/nccl-|Call to posix_fallocate failed : No space left on device|Unexpected bus error encountered in worker|unable to write to file <\/torch_\w+>: No space left on device/,
    quotes: [
      {
        text: 'mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)',
        source: 'pytorch/ci-infra#490; NVIDIA/nccl src/misc/shmutils.cc ncclShmOpen',
      },
      {
        text: 'gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device',
        source: 'NVIDIA/nccl#290 (NCCL 2.4-2.9, include/shm.h)',
      },
      {
        text: 'ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).',
        source: 'pytorch/pytorch torch/csrc/DataLoader.cpp SIGNAL_HANDLER(SIGBUS, handler_SIGBUS, ...)',
      },
    ],
    nonMatches: ['NCCL INFO Channel 00 : 0[100000] -> 1[200000] via direct shared memory', 'No space left on device'],
    cause: (f) => (/bus error|torch_/.test(f.line) ? 'dataloader' : 'nccl'),
    title: (f) =>
      /bus error|torch_/.test(f.line)
        ? '/dev/shm is too small for the DataLoader workers'
        : '/dev/shm is too small for NCCL (shared memory segment)',
    fix: () =>
      "give the container a bigger /dev/shm: docker run --shm-size=16g (or --ipc=host); Kubernetes: an emptyDir with medium: Memory mounted at /dev/shm; check with df -h /dev/shm (Docker's default is 64 MB); meanwhile NCCL_SHM_DISABLE=1 or fewer --dataset_num_workers get by, slower",
  },
  {
    id: 'ds-op-build',
    fatal: true,
    needles: [
      'Unable to JIT load the',
      'Error building extension',
      'ds_opt_adam',
      'CUDA_HOME does not exist',
      'does not match the version torch was compiled with',
    ],
    re: /Unable to JIT load the (\w+) op due to|Error building extension '(\w+)'|'DeepSpeed(CPUAdam)' object has no attribute 'ds_opt_adam'|(CUDA_HOME) does not exist, unable to compile CUDA op|Installed (CUDA) version \S+ does not match the version torch was compiled with \S+, unable to compile/,
    quotes: [
      {
        text: 'RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software issue. None',
        source: 'deepspeedai/DeepSpeed op_builder/builder.py OpBuilder.jit_load (NVMe offload loads async_io)',
      },
      {
        text: "RuntimeError: Error building extension 'cpu_adam'",
        source:
          'pytorch/pytorch torch/utils/cpp_extension.py _write_ninja_file_and_build_library (error_prefix=f"Error building extension \'{name}\'"); deepspeedai/DeepSpeed#889',
      },
      {
        text: "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'",
        source:
          'deepspeedai/DeepSpeed#1846; deepspeed/ops/adam/cpu_adam.py DeepSpeedCPUAdam.__del__ after CPUAdamBuilder().load() failed',
      },
      {
        text: 'deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)',
        source: 'deepspeedai/DeepSpeed op_builder/builder.py installed_cuda_version',
      },
      {
        text: 'Exception: >- DeepSpeed Op Builder: Installed CUDA version 12.1 does not match the version torch was compiled with 11.8, unable to compile cuda/cpp extensions without a matching cuda version.',
        source: 'deepspeedai/DeepSpeed op_builder/builder.py assert_no_cuda_mismatch',
      },
    ],
    nonMatches: ['Time to load cpu_adam op: 22.258127450942993 seconds', 'Loading extension module cpu_adam...'],
    cause: (f) => opOf(f),
    title: (f) => {
      const op = opOf(f);
      return op === 'cuda_home' || op === 'cuda'
        ? 'DeepSpeed cannot compile its ops (CUDA toolkit)'
        : `DeepSpeed could not build its ${op} op`;
    },
    fix: (f) => {
      const op = opOf(f);
      if (op === 'async_io')
        return 'NVMe offload needs libaio: apt install libaio-dev (yum install libaio-devel), then reinstall with DS_BUILD_AIO=1 pip install deepspeed; `ds_report` shows async_io as compatible once it can build';
      if (op === 'cuda_home')
        return 'install the CUDA toolkit (nvcc) matching torch.version.cuda and set CUDA_HOME, or prebuild the op: DS_BUILD_CPU_ADAM=1 pip install deepspeed';
      if (op === 'cuda')
        return 'nvcc and the CUDA torch was built with differ: install the matching toolkit (or the torch build for yours), or prebuild the ops on a machine that matches';
      if (op === 'cpu_adam')
        return 'CPU offload needs DeepSpeed CPU Adam: install a C++ compiler and ninja (apt install build-essential; pip install ninja) and the CUDA toolkit matching torch, or prebuild it: DS_BUILD_CPU_ADAM=1 pip install deepspeed --no-build-isolation';
      return `install ninja and a C++/CUDA toolchain matching torch, or prebuild the op (DS_BUILD_OPS=1 pip install deepspeed); \`ds_report\` lists what is missing for ${op}`;
    },
  },
  {
    id: 'checkpoint-bad',
    fatal: false,
    needles: [],
    re: null,
    quotes: [
      {
        text: 'size mismatch for score.lora_A.default.weight: copying a param with shape torch.Size([0]) from checkpoint, the shape in current model is torch.Size([64, 5120]).',
        source: 'OpenRLHF/OpenRLHF#682 (what loading a ZeRO-3 LoRA saved without the gather says; OpenRLHF#651, #839)',
      },
      {
        text: "Expected 8 of '*_optim_states.pt' under 'out/global_step500' but found 7 files. Possibly due to an overwrite of an old checkpoint, or a checkpoint didn't get saved by one or more processes.",
        source: 'deepspeedai/DeepSpeed deepspeed/utils/zero_to_fp32.py parse_optim_states (a rank that did not save)',
      },
    ],
    nonMatches: [],
    cause: (f) => f.checkpoint?.path ?? '',
    title: (f) => f.checkpoint?.title ?? 'a checkpoint is unusable',
    fix: (f) => f.checkpoint?.fix ?? 'see `zerowiz runs` for the checkpoints and their verdicts',
  },
  {
    id: 'zero3-16bit-save',
    fatal: true,
    needles: ['Cannot get 16bit model weights'],
    re: /Cannot get 16bit model weights because `?stage3_gather_16bit_weights_on_model_save`? in DeepSpeed config is False/,
    quotes: [
      {
        text: 'ValueError: Cannot get 16bit model weights because `stage3_gather_16bit_weights_on_model_save` in DeepSpeed config is False. To save the model weights in 16bit, set `stage3_gather_16bit_weights_on_model_save` to True in DeepSpeed config file or set `zero3_save_16bit_model` to True when using `accelerate config`. To save the full checkpoint, run `model.save_checkpoint(save_dir)` and use `zero_to_fp32.py` to recover weights.',
        source: 'huggingface/accelerate src/accelerate/accelerator.py Accelerator.get_state_dict; RUCAIBox/LC-Rec#24',
      },
    ],
    nonMatches: ['stage3_gather_16bit_weights_on_model_save ..... True'],
    cause: () => '',
    title: () => 'ZeRO-3 cannot save 16-bit weights: 16-bit gathering is off',
    fix: () =>
      'turn it on: zerowiz --zero3-save-16bit-model yes (stage3_gather_16bit_weights_on_model_save: true in the DeepSpeed JSON); DiffSynth-Studio saves through get_state_dict at every checkpoint, so ZeRO-3 needs it',
  },
  {
    id: 'auto-unfilled',
    fatal: true,
    needles: [
      'not found in kwargs',
      "Can't find `model.config` entry",
      'Can find neither `model.config.hidden_size`',
      'requires you to pass at least one of training or evaluation dataloaders',
    ],
    re: /`([\w.]+)` not found in kwargs\. Please specify `[\w.]+` without `auto`|(?:Can't find `model\.config` entry|Can find neither `model\.config\.hidden_size` nor `model\.config\.hidden_sizes`), therefore it's not possible to automatically fill out the following `auto` entries in the DeepSpeed config file: \[([^\]]*)\]|requires you to pass at least one of training or evaluation dataloaders with `batch_size` attribute/,
    quotes: [
      {
        text: 'ValueError: `scheduler.params.warmup_num_steps` not found in kwargs. Please specify `scheduler.params.warmup_num_steps` without `auto` (set to correct value) in the DeepSpeed config file or pass it in kwargs.',
        source: 'huggingface/accelerate src/accelerate/utils/dataclasses.py DeepSpeedPlugin.fill_match',
      },
      {
        text: "ValueError: Can't find `model.config` entry, therefore it's not possible to automatically fill out the following `auto` entries in the DeepSpeed config file: ['zero_optimization.reduce_bucket_size', 'zero_optimization.stage3_prefetch_bucket_size']. You can fix that by replacing `auto` values for these keys with an integer value of your choice.",
        source: 'huggingface/accelerate src/accelerate/accelerator.py Accelerator._prepare_deepspeed',
      },
      {
        text: "ValueError: When using DeepSpeed, `accelerate.prepare()` requires you to pass at least one of training or evaluation dataloaders with `batch_size` attribute returning an integer value or alternatively set an integer value in `train_micro_batch_size_per_gpu` in the deepspeed config file or assign integer value to `AcceleratorState().deepspeed_plugin.deepspeed_config['train_micro_batch_size_per_gpu']`.",
        source: 'huggingface/accelerate src/accelerate/accelerator.py Accelerator._prepare_deepspeed',
      },
    ],
    nonMatches: ['  train_micro_batch_size_per_gpu  auto', 'KeyError: not found in kwargs'],
    cause: (f) => autoKeys(f),
    title: (f) => `accelerate could not fill "auto" for ${autoKeys(f)}`,
    fix: (f) =>
      `write a number instead of "auto" for ${autoKeys(f)} in the DeepSpeed JSON (accelerate fills hidden-size keys only from model.config, which DiT models lack; zerowiz's --reduce-bucket-size, --prefetch-bucket-size and --param-persistence-threshold write numbers)`,
  },
  {
    id: 'host-oom',
    fatal: true,
    needles: ['exitcode: -9', 'exitcode  : -9', 'Signal 9 (SIGKILL)', 'SIGKILL: 9', 'return code = -9', 'Killed'],
    re: /exitcode\s*: -9\b|Signal 9 \(SIGKILL\) received by PID|died with <Signals\.SIGKILL: 9>|exits with return code = -9\b|^Killed\s*$|: line \d+: +\d+ Killed\b/,
    quotes: [
      {
        text: 'torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 3405) of binary: /usr/bin/python3',
        source:
          'pytorch/pytorch torch/distributed/elastic/multiprocessing/api.py SubprocessContext._poll ("failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s"); deepspeedai/DeepSpeedExamples#498',
      },
      {
        text: '  traceback : Signal 9 (SIGKILL) received by PID 3405',
        source:
          'pytorch/pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py ChildFailedError.format_msg',
      },
      {
        text: "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py', '--task', 'sft:train']' died with <Signals.SIGKILL: 9>.",
        source:
          'huggingface/accelerate src/accelerate/commands/launch.py simple_launcher (raises CalledProcessError; CPython Lib/subprocess.py CalledProcessError.__str__)',
      },
      { text: 'Killed', source: 'bminor/bash jobs.c (an interactive job ended by SIGKILL: strsignal(SIGKILL))' },
      {
        text: './train.sh: line 3: 12345 Killed                  python train.py --task sft:train',
        source: 'bminor/bash jobs.c (a job of a script ended by SIGKILL)',
      },
    ],
    nonMatches: [
      '[2023-07-04 17:31:27,755] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 953850',
      'exitcode  : -6 (pid: 1799)',
      'Killed 3 zombie workers',
    ],
    cause: () => '',
    title: (f) =>
      f.signal !== undefined || f.exitCode !== undefined
        ? `step killed by SIGKILL${f.exitCode === 137 ? ' (exit 137)' : ''}: most likely out of host memory`
        : 'a worker was killed by SIGKILL: most likely out of host memory',
    fix: (_f, ctx) => {
      const fits = ctx.hostWhatFits?.() ?? null;
      return `the kernel's OOM killer (or the job's cgroup limit) ends a process that outgrows RAM: check with dmesg | grep -i oom (journalctl -k); ${fits ?? 'offload less (parameter offload needs ~16-18 bytes per parameter of host RAM), turn off pin_memory, load the model once (zero3_init / --initialize_model_on_cpu), or use fewer --dataset_num_workers'}`;
    },
  },
  {
    id: 'check-failed',
    fatal: true,
    needles: ['zerowiz-check '],
    re: /^zerowiz-check \S+ FAIL [a-z-]+: /,
    quotes: [
      {
        text: "zerowiz-check n1 FAIL shm: /dev/shm is 64 MiB (64 MiB free): too small for NCCL's shared memory segments and the DataLoader workers' batches | need: at least 512 MiB, better 1 GiB, for NCCL between the 2 processes of a node | fix: docker run --shm-size=16g (or --ipc=host)",
        source: "zerowiz's own node check (src/checks/format.ts nodeCheckLine), the first command of a Slurm pass",
      },
    ],
    nonMatches: [
      'zerowiz-check n1 PASS shm: /dev/shm is 16 GiB (16 GiB free) | need: at least 512 MiB',
      'zerowiz-check n1 done: 1 FAIL, 12 PASS',
    ],
    cause: (f) => {
      const c = parseNodeCheckLine(f.line);
      return c?.kind === 'check' ? `${c.host}:${c.id}` : '';
    },
    title: (f) => {
      const c = parseNodeCheckLine(f.line);
      if (c?.kind !== 'check') return 'a check before the pass failed';
      const m = c.measured.length > 160 ? `${c.measured.slice(0, 159)}…` : c.measured;
      return `check ${c.id} failed on ${c.host} before the pass: ${m}`;
    },
    fix: (f) => {
      const c = parseNodeCheckLine(f.line);
      return (c?.kind === 'check' ? c.fix : null) ?? 'see `zerowiz check NAME` for the fix';
    },
  },
];

function portOf(line: string): string | null {
  const m =
    /port `(\d+)`/.exec(line) ??
    /\[::\]:(\d+)/.exec(line) ??
    /\d+\.\d+\.\d+\.\d+:(\d+)/.exec(line) ??
    /port: (\d+)/.exec(line) ??
    /\bport (\d+)/.exec(line);
  return m ? m[1]! : null;
}

function opOf(f: AlertFacts): string {
  const m = f.match;
  if (!m) return 'unknown';
  const op =
    m[1] ?? m[2] ?? (m[3] ? 'cpu_adam' : undefined) ?? (m[4] ? 'cuda_home' : undefined) ?? (m[5] ? 'cuda' : undefined);
  return op ?? 'unknown';
}

function autoKeys(f: AlertFacts): string {
  const m = f.match;
  if (!m) return 'a DeepSpeed key';
  if (m[1]) return m[1];
  if (m[2]) return m[2].replaceAll("'", '').trim() || 'the hidden-size keys';
  return 'train_micro_batch_size_per_gpu';
}

/** One regex that finds any of `needles` (literal, case-sensitive): the cheap test before the patterns. */
export function needleRegExp(needles: readonly string[]): RegExp {
  return new RegExp(needles.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'));
}

/** Every needle of the table: a line without any is never tried against the patterns. */
export const ALERT_NEEDLES: readonly string[] = [...new Set(ALERT_PATTERNS.flatMap((p) => p.needles))];
const ALERT_TRIGGER_RE = needleRegExp(ALERT_NEEDLES);

function patternById(id: AlertId): AlertPattern {
  const p = ALERT_PATTERNS.find((x) => x.id === id);
  if (!p) throw new Error(`no alert pattern ${id}`);
  return p;
}

/** Options of an engine. */
export interface AlertEngineOptions {
  /** What zerowiz knows; a live object (phase 2 may set freePort when a step starts). */
  ctx?: AlertContext;
  /** Called for every alert that fires. */
  onAlert?: (a: Alert) => void;
  now?: () => number;
  /** Overflow skips in a row that raise loss-scale-collapse (default OVERFLOW_STREAK_ALERT). */
  overflowStreak?: number;
  /** The alerts are raised elsewhere and handed in (add); nothing read here raises one. */
  given?: boolean;
}

/** Watches one run's steps; keeps the alerts that fired. */
export class AlertEngine {
  /** Every alert kept, in the order they fired. */
  readonly alerts: Alert[] = [];
  /** Alerts not kept because a step already had MAX_ALERTS_PER_STEP. */
  dropped = 0;
  readonly ctx: AlertContext;
  private readonly seen = new Map<number, Set<string>>();
  private readonly perStep = new Map<number, number>();
  private stopRequested = false;
  private readonly now: () => number;
  private readonly overflowStreak: number;

  constructor(private readonly opts: AlertEngineOptions = {}) {
    this.ctx = opts.ctx ?? {};
    this.now = opts.now ?? Date.now;
    this.overflowStreak = opts.overflowStreak ?? OVERFLOW_STREAK_ALERT;
  }

  /** Whether a line holds any needle (the cheap test). */
  static mayMatch(line: string): boolean {
    return ALERT_TRIGGER_RE.test(line);
  }

  /** A finished log line of `step`; returns the alerts it fired (usually none). */
  line(step: number, text: string): Alert[] {
    if (this.opts.given || !ALERT_TRIGGER_RE.test(text)) return [];
    const fired: Alert[] = [];
    for (const p of ALERT_PATTERNS) {
      if (p.re === null || !p.needles.some((n) => text.includes(n))) continue;
      if (p.id === 'host-oom' && this.stopRequested) continue; // our own SIGKILL escalation
      const m = p.re.exec(text);
      if (!m) continue;
      const a = this.fire(p, step, { match: m, line: text });
      if (a) fired.push(a);
    }
    return fired;
  }

  /** A loss value from any metric source; NaN or infinite raises nan-loss. */
  loss(step: number, value: number, source: string, line = `loss ${value} (${source})`): Alert | null {
    if (this.opts.given || Number.isFinite(value)) return null;
    return this.fire(patternById('nan-loss'), step, { match: null, line, value, source });
  }

  /** A skipped step; a long enough streak raises loss-scale-collapse. */
  overflow(step: number, o: { streak: number; scale: number | null; fp16: boolean }, line = ''): Alert | null {
    if (this.opts.given || o.streak < this.overflowStreak) return null;
    return this.fire(patternById('loss-scale-collapse'), step, {
      match: null,
      line: line || `${o.streak} overflow skips in a row`,
      streak: o.streak,
      scale: o.scale,
      fp16: o.fp16,
    });
  }

  /**
   * A checkpoint the run saved is unusable (src/checkpoints/watch.ts: its verdict, title and fix); fires
   * once per checkpoint path. Not fatal: the run goes on, and the next save may be good.
   */
  checkpoint(step: number, facts: CheckpointAlertFacts): Alert | null {
    return this.fire(patternById('checkpoint-bad'), step, { match: null, line: facts.path, checkpoint: facts });
  }

  /** zerowiz is stopping the run: SIGKILLs from now on are ours, not the OOM killer's. */
  stopping(): void {
    this.stopRequested = true;
  }

  /** A step ended; SIGKILL or exit 137 that zerowiz did not cause raises host-oom. */
  stepEnded(step: number, r: { exitCode: number | null; signal: string | null }): Alert | null {
    if (this.opts.given || this.stopRequested) return null;
    if (r.signal !== 'SIGKILL' && r.exitCode !== 137) return null;
    return this.fire(patternById('host-oom'), step, {
      match: null,
      line: r.signal ? `step ended by ${r.signal}` : `step exited ${r.exitCode}`,
      exitCode: r.exitCode,
      signal: r.signal,
    });
  }

  /** The alerts of one step. */
  forStep(step: number): Alert[] {
    return this.alerts.filter((a) => a.step === step);
  }

  /** The reason to give in the final summary for a step: its first fatal alert, else its first alert. */
  reason(step: number): Alert | null {
    const list = this.forStep(step);
    return list.find((a) => a.fatal) ?? list[0] ?? null;
  }

  /**
   * An alert raised outside the log lines (the health watch during a pass: ./health.ts; a viewer's copy of its
   * supervisor's alerts), kept with the others: once per id and cause line per step, within MAX_ALERTS_PER_STEP.
   * Returns it, or null when dropped.
   */
  add(a: Alert): Alert | null {
    const key = `${a.id}:${a.title}`;
    let seen = this.seen.get(a.step);
    if (!seen) {
      seen = new Set();
      this.seen.set(a.step, seen);
    }
    if (seen.has(key)) return null;
    if (seen.size < MAX_CAUSES_REMEMBERED_PER_STEP) seen.add(key);
    const count = this.perStep.get(a.step) ?? 0;
    if (count >= MAX_ALERTS_PER_STEP) {
      this.dropped++;
      return null;
    }
    this.perStep.set(a.step, count + 1);
    const kept =
      a.line.length > ALERT_LINE_MAX_CHARS ? { ...a, line: `${a.line.slice(0, ALERT_LINE_MAX_CHARS - 1)}…` } : a;
    this.alerts.push(kept);
    this.opts.onAlert?.(kept);
    return kept;
  }

  private fire(p: AlertPattern, step: number, f: AlertFacts): Alert | null {
    const key = `${p.id}:${p.cause(f)}`;
    let seen = this.seen.get(step);
    if (!seen) {
      seen = new Set();
      this.seen.set(step, seen);
    }
    if (seen.has(key)) return null;
    // Causes are remembered up to a bound (distinct ports or ops are few; a flood of them is not kept).
    if (seen.size < MAX_CAUSES_REMEMBERED_PER_STEP) seen.add(key);
    const count = this.perStep.get(step) ?? 0;
    if (count >= MAX_ALERTS_PER_STEP) {
      this.dropped++;
      return null;
    }
    this.perStep.set(step, count + 1);
    const line = f.line.trim();
    const a: Alert = {
      id: p.id,
      step,
      line: line.length > ALERT_LINE_MAX_CHARS ? `${line.slice(0, ALERT_LINE_MAX_CHARS - 1)}…` : line,
      at: this.now(),
      title: p.title(f, this.ctx),
      fix: p.fix(f, this.ctx),
      fatal: p.fatal,
    };
    this.alerts.push(a);
    this.opts.onAlert?.(a);
    return a;
  }
}
