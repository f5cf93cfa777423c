/**
 * THE table of accelerate's and DeepSpeed's configuration keys: for each key its file and dotted path, type and
 * range, default (and since which version), the other name it is accepted under, the deprecated name it
 * replaces, who fills an "auto" there and from what, whether accelerate refuses it next to a DeepSpeed JSON, the
 * `accelerate launch` flag and the environment variable that carry it, and who reads it. Validation, import,
 * emit (through deepspeed-defaults.ts), the effective dict, the estimator's input and `explain` read it; nothing
 * else spells these facts out.
 *
 * Sources: accelerate 1.15.0 (commands/launch.py, utils/launch.py prepare_deepspeed_cmd_env,
 * utils/dataclasses.py DeepSpeedPlugin, accelerator.py _prepare_deepspeed, commands/config/config_args.py),
 * DeepSpeed 0.19.5, the latest release (the same at edaa7221, where 0.19.6 is in the making; runtime/zero/config.py,
 * zero/offload_config.py, runtime/precision_config.py, runtime/config.py, swap_tensor/aio_config.py), transformers 5.x integrations/deepspeed.py
 * (HfTrainerDeepSpeedConfig); see shared/reference/accelerate-config.md and deepspeed-zero.md. A module without
 * imports, so every other module of the configuration model can read it without an import cycle.
 */

/** Which file a key lives in: the accelerate YAML or the DeepSpeed JSON. */
export type KeyFile = 'yaml' | 'json';

/** The kind of value a key holds. */
export type KeyType = 'int' | 'number' | 'bool' | 'string' | 'enum' | 'block' | 'list' | 'any';

/** Who reads a key. */
export type KeyReader = 'accelerate launch' | 'DeepSpeedPlugin' | 'Accelerator.prepare' | 'DeepSpeed' | 'HF Trainer';

/** What a prepare()-time fill of "auto" is computed from (Accelerator._prepare_deepspeed). */
export interface FillContext {
  /** model.config.hidden_size (or max(hidden_sizes)); null when the model has no such config. */
  hiddenSize: number | null;
  /** The DataLoader's batch_size; null when not known. */
  microBatch: number | null;
  /** The accumulation the config ends up with after prepare() filled it. */
  accumulation: number | null;
  /** Processes running (accelerate's num_processes). */
  worldSize: number;
}

/** Who fills an "auto" at a key, and from what. */
export interface AutoFill {
  /**
   * accelerate fills it: always (`always`), or only under a condition (`when`, in words). Absent: accelerate
   * leaves it, and its deepspeed_config_process raises "`key` not found in kwargs" at prepare().
   */
  accelerate?: { from: string; when?: string };
  /** The HF Trainer fills it (HfTrainerDeepSpeedConfig), from TrainingArguments: what. */
  trainer?: string;
  /**
   * The value accelerate's prepare() puts there, when it is a formula of the run (the hidden-size keys, the
   * constants); undefined when it cannot be filled (accelerate then raises).
   */
  fill?: (ctx: FillContext) => number | boolean | undefined;
}

/** One key. */
export interface KeyInfo {
  file: KeyFile;
  /** Dotted path in its file: `zero_optimization.stage`, `deepspeed_config.zero_stage`, `mixed_precision`. */
  path: string;
  type: KeyType;
  /** The values an enum takes. */
  values?: readonly (string | number)[];
  /** The smallest value a number takes. */
  min?: number;
  /** The default when the key is absent (DeepSpeed's for the JSON, accelerate's for the YAML); undefined: none. */
  default?: unknown;
  /** A default that depends on the stage (overlap_comm). */
  defaultAtStage?: (stage: number) => unknown;
  /** Since when the default is what it is, and what it was before. */
  history?: string;
  /** The other name DeepSpeed accepts for the same field (pydantic alias / field name). */
  alias?: string;
  /** A deprecated key: the key that replaces it and what DeepSpeed carries over. */
  deprecated?: { use: string; carries: 'value' | 'device cpu when true' | 'nothing' };
  /** Read only by the ZeRO-3 code path. */
  stage3?: boolean;
  /** A block whose schema forbids unknown keys (pydantic extra="forbid"). */
  strict?: boolean;
  auto?: AutoFill;
  /** An accelerate YAML key that accelerate refuses next to a deepspeed_config_file. */
  refusedNextToJson?: boolean;
  /** For an accelerate key that becomes a DeepSpeed value: the JSON path(s) it sets (DeepSpeedPlugin). */
  sets?: readonly string[];
  /** The `accelerate launch` flag that carries it (a flag on the command line wins over the YAML). */
  flag?: string;
  /** The environment variable that carries it from the launcher to DeepSpeedPlugin. */
  env?: string;
  /** accelerate's own value when neither the YAML, a flag nor the environment gives one. */
  accelerateDefault?: unknown;
  readBy: readonly KeyReader[];
  /** One line: what it does. */
  doc: string;
}

// ---------------------------------------------------------------------------------------------
// Who fills "auto"

/** The hidden-size rule accelerate and the HF Trainer share: h^2, int(0.9 h^2), 10 h. */
const HIDDEN = {
  from: 'model.config.hidden_size (or max(hidden_sizes))',
  when: 'the model passed to prepare() has config.hidden_size or config.hidden_sizes; otherwise accelerate raises',
};
const hiddenFill =
  (f: (h: number) => number) =>
  (ctx: FillContext): number | undefined =>
    ctx.hiddenSize === null ? undefined : f(ctx.hiddenSize);

// ---------------------------------------------------------------------------------------------
// The table

const ds = (path: string, type: KeyType, rest: Partial<KeyInfo> & { doc: string }): KeyInfo => ({
  file: 'json',
  path,
  type,
  readBy: ['DeepSpeed'],
  ...rest,
});
const zero = (key: string, type: KeyType, rest: Partial<KeyInfo> & { doc: string }): KeyInfo =>
  ds(`zero_optimization.${key}`, type, rest);
const yaml = (path: string, type: KeyType, rest: Partial<KeyInfo> & { doc: string }): KeyInfo => ({
  file: 'yaml',
  path,
  type,
  readBy: ['accelerate launch'],
  ...rest,
});
const acc = (key: string, type: KeyType, rest: Partial<KeyInfo> & { doc: string }): KeyInfo =>
  yaml(`deepspeed_config.${key}`, type, { flag: `--${key}`, ...rest });
const DEVICES = ['none', 'cpu', 'nvme'] as const;
/** DeepSpeed's multi-node launchers, as accelerate's deepspeed_multinode_launcher takes them (pdsh first: its default). */
export const LAUNCHERS = ['pdsh', 'standard', 'openmpi', 'mvapich', 'mpich', 'nossh', 'slurm'] as const;

/** Every key zerowiz knows, accelerate's then DeepSpeed's. */
export const CONFIG_KEYS: readonly KeyInfo[] = [
  // --- the accelerate YAML, top level (ClusterConfig; unknown top-level keys are refused at load) ---
  yaml('compute_environment', 'enum', {
    values: ['LOCAL_MACHINE', 'AMAZON_SAGEMAKER'],
    default: 'LOCAL_MACHINE',
    doc: 'where the run happens',
  }),
  yaml('distributed_type', 'enum', {
    values: [
      'NO',
      'MULTI_CPU',
      'MULTI_XPU',
      'MULTI_HPU',
      'MULTI_GPU',
      'MULTI_NPU',
      'MULTI_MLU',
      'MULTI_SDAA',
      'MULTI_MUSA',
      'MULTI_NEURON',
      'DEEPSPEED',
      'FSDP',
      'XLA',
      'MEGATRON_LM',
    ],
    flag: '--use_deepspeed',
    doc: 'DEEPSPEED makes accelerate launch run the script under DeepSpeed',
  }),
  yaml('mixed_precision', 'enum', {
    values: ['no', 'fp8', 'fp16', 'bf16'],
    flag: '--mixed_precision',
    env: 'ACCELERATE_MIXED_PRECISION',
    accelerateDefault: 'no',
    refusedNextToJson: true,
    sets: ['fp16.enabled', 'bf16.enabled'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'the precision accelerate fills the JSON\'s fp16/bf16 "auto" with',
  }),
  yaml('use_cpu', 'bool', { default: false, flag: '--cpu', doc: 'true runs on the CPU without DeepSpeed' }),
  yaml('debug', 'bool', { default: false, flag: '--debug', doc: 'checks distributed operations for errors' }),
  yaml('num_processes', 'int', {
    min: 1,
    flag: '--num_processes',
    accelerateDefault: 'the GPUs torch sees on this machine',
    doc: 'the TOTAL number of processes over all machines',
  }),
  yaml('machine_rank', 'int', { min: 0, default: 0, flag: '--machine_rank', doc: "this machine's rank" }),
  yaml('num_machines', 'int', { min: 1, default: 1, flag: '--num_machines', doc: 'the machines of the run' }),
  yaml('gpu_ids', 'string', { flag: '--gpu_ids', doc: 'the GPUs to use on this machine (all when absent)' }),
  yaml('main_process_ip', 'string', { flag: '--main_process_ip', doc: 'the address of machine 0' }),
  yaml('main_process_port', 'int', { min: 0, flag: '--main_process_port', doc: 'the port of machine 0 (29500)' }),
  yaml('rdzv_backend', 'string', { default: 'static', flag: '--rdzv_backend', doc: "torchrun's rendezvous" }),
  yaml('same_network', 'bool', { default: false, flag: '--same_network', doc: 'the machines share a network' }),
  yaml('main_training_function', 'string', { default: 'main', doc: 'TPU only' }),
  yaml('enable_cpu_affinity', 'bool', { default: false, flag: '--enable_cpu_affinity', doc: 'NUMA affinity' }),
  yaml('fp8_config', 'block', { doc: 'FP8 settings' }),
  yaml('deepspeed_config', 'block', { doc: "accelerate's DeepSpeed settings (its keys below)" }),
  yaml('fsdp_config', 'block', { doc: 'FSDP settings' }),
  yaml('parallelism_config', 'block', { doc: 'FSDP2 parallelism' }),
  yaml('megatron_lm_config', 'block', { doc: 'Megatron-LM settings' }),
  yaml('mpirun_config', 'block', { doc: 'multi-CPU mpirun settings' }),
  yaml('downcast_bf16', 'any', { doc: 'TPU only' }),
  yaml('tpu_name', 'string', { doc: 'TPU only' }),
  yaml('tpu_zone', 'string', { doc: 'TPU only' }),
  yaml('tpu_use_cluster', 'bool', { doc: 'TPU only' }),
  yaml('tpu_use_sudo', 'bool', { doc: 'TPU only' }),
  yaml('command_file', 'string', { doc: 'TPU only' }),
  yaml('commands', 'list', { doc: 'TPU only' }),
  yaml('tpu_vm', 'list', { doc: 'TPU only' }),
  yaml('tpu_env', 'list', { doc: 'TPU only' }),
  yaml('dynamo_config', 'block', { doc: 'torch.compile settings' }),
  yaml('fp16', 'bool', { deprecated: { use: 'mixed_precision', carries: 'value' }, doc: 'legacy: true means fp16' }),
  yaml('dynamo_backend', 'string', {
    deprecated: { use: 'dynamo_config.dynamo_backend', carries: 'value' },
    doc: 'legacy dynamo backend',
  }),
  // --- the accelerate YAML's deepspeed_config (the `accelerate launch` DeepSpeed flags of the same names) ---
  acc('deepspeed_config_file', 'string', {
    env: 'ACCELERATE_DEEPSPEED_CONFIG_FILE',
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'the DeepSpeed JSON (resolved from the launch directory); without it accelerate builds one from these keys',
  }),
  acc('zero_stage', 'int', {
    values: [0, 1, 2, 3],
    env: 'ACCELERATE_DEEPSPEED_ZERO_STAGE',
    accelerateDefault: 2,
    refusedNextToJson: true,
    sets: ['zero_optimization.stage'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'the ZeRO stage',
  }),
  acc('offload_optimizer_device', 'enum', {
    values: DEVICES,
    env: 'ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE',
    accelerateDefault: 'none',
    refusedNextToJson: true,
    sets: ['zero_optimization.offload_optimizer.device'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'where the optimizer states go',
  }),
  acc('offload_param_device', 'enum', {
    values: DEVICES,
    env: 'ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE',
    accelerateDefault: 'none',
    refusedNextToJson: true,
    sets: ['zero_optimization.offload_param.device'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'where the parameters go (ZeRO-3)',
  }),
  acc('offload_optimizer_nvme_path', 'string', {
    // The launcher never exports it: only the environment reaches DeepSpeedPlugin.
    env: 'ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_NVME_PATH',
    accelerateDefault: 'none',
    refusedNextToJson: true,
    sets: ['zero_optimization.offload_optimizer.nvme_path'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'NVMe directory of the optimizer states (the launcher never passes it on: only the environment variable reaches DeepSpeed)',
  }),
  acc('offload_param_nvme_path', 'string', {
    env: 'ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_NVME_PATH',
    accelerateDefault: 'none',
    refusedNextToJson: true,
    sets: ['zero_optimization.offload_param.nvme_path'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'NVMe directory of the parameters (the launcher never passes it on: only the environment variable reaches DeepSpeed)',
  }),
  acc('gradient_accumulation_steps', 'int', {
    min: 1,
    env: 'ACCELERATE_GRADIENT_ACCUMULATION_STEPS',
    accelerateDefault: 'auto',
    refusedNextToJson: true,
    sets: ['gradient_accumulation_steps'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'micro-batches per optimizer step (the environment variable also overrides Accelerator(gradient_accumulation_steps=...))',
  }),
  acc('gradient_clipping', 'number', {
    min: 0,
    env: 'ACCELERATE_GRADIENT_CLIPPING',
    accelerateDefault: 'auto',
    refusedNextToJson: true,
    sets: ['gradient_clipping'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'the maximum gradient norm',
  }),
  acc('zero3_init_flag', 'bool', {
    env: 'ACCELERATE_DEEPSPEED_ZERO3_INIT',
    accelerateDefault: 'true at stage 3, false below',
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'deepspeed.zero.Init builds the model already sharded (stage 3 only; turned off below it)',
  }),
  acc('zero3_save_16bit_model', 'bool', {
    env: 'ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL',
    accelerateDefault: false,
    refusedNextToJson: true,
    sets: ['zero_optimization.stage3_gather_16bit_weights_on_model_save'],
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'gather the 16-bit weights on save (stage 3)',
  }),
  acc('deepspeed_hostfile', 'string', { doc: "the DeepSpeed launcher's hostfile (multi-node)" }),
  acc('deepspeed_exclusion_filter', 'string', { doc: 'hosts or GPUs to leave out (multi-node)' }),
  acc('deepspeed_inclusion_filter', 'string', { doc: 'hosts or GPUs to use (multi-node)' }),
  acc('deepspeed_multinode_launcher', 'enum', {
    values: LAUNCHERS,
    accelerateDefault: LAUNCHERS[0],
    doc: 'how the machines are started (multi-node)',
  }),
  acc('deepspeed_moe_layer_cls_names', 'string', {
    env: 'ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES',
    readBy: ['accelerate launch', 'DeepSpeedPlugin'],
    doc: 'MoE layer classes made ZeRO-3 leaf modules',
  }),

  // --- the DeepSpeed JSON: top level ---
  ds('train_batch_size', 'int', {
    min: 1,
    auto: {
      accelerate: { from: 'micro batch x gradient accumulation x num_processes, at prepare()' },
      trainer: 'world size x per_device_train_batch_size x gradient_accumulation_steps',
      fill: (c) =>
        c.microBatch !== null && c.accumulation !== null ? c.microBatch * c.accumulation * c.worldSize : undefined,
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'samples per optimizer step over all GPUs; DeepSpeed asserts = micro batch x accumulation x GPUs',
  }),
  ds('train_micro_batch_size_per_gpu', 'int', {
    min: 1,
    auto: {
      accelerate: { from: "the DataLoader's batch_size, at prepare() (accelerate raises when none is passed)" },
      trainer: 'per_device_train_batch_size',
      fill: (c) => c.microBatch ?? undefined,
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'samples per GPU per forward pass',
  }),
  ds('gradient_accumulation_steps', 'int', {
    min: 1,
    auto: {
      accelerate: {
        from: 'ACCELERATE_GRADIENT_ACCUMULATION_STEPS, else Accelerator(gradient_accumulation_steps=...) at prepare()',
      },
      trainer: 'gradient_accumulation_steps',
      fill: (c) => c.accumulation ?? undefined,
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin', 'Accelerator.prepare', 'HF Trainer'],
    doc: "micro-batches per optimizer step; a number here overrides the script's Accelerator(...)",
  }),
  ds('gradient_clipping', 'number', {
    min: 0,
    default: 1.0,
    history: '1.0 since DeepSpeed 0.19.3 (PR #8068), 0.0 (no clipping) before',
    auto: {
      accelerate: { from: 'ACCELERATE_GRADIENT_CLIPPING, else 1.0 at prepare()' },
      trainer: 'max_grad_norm',
      fill: () => 1.0,
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'the maximum gradient norm (0 turns clipping off)',
  }),
  ds('steps_per_print', 'int', { doc: 'accelerate sets it to infinity (no DeepSpeed progress lines)' }),
  ds('wall_clock_breakdown', 'bool', { default: false, doc: 'time each part of a step' }),
  ds('memory_breakdown', 'bool', { default: false, doc: 'print memory use' }),
  ds('zero_allow_untested_optimizer', 'bool', {
    default: false,
    doc: 'accelerate sets it when the script passes a torch optimizer',
  }),
  ds('zero_force_ds_cpu_optimizer', 'bool', {
    default: true,
    doc: "an offloaded optimizer must be DeepSpeed's CPU Adam (accelerate swaps a torch Adam for it)",
  }),
  ds('gradient_allreduce_op', 'enum', { values: ['mean', 'sum'], doc: '"sum" is refused at stage 3' }),
  ds('communication_data_type', 'enum', { values: ['fp16', 'bf16', 'fp32'], doc: 'the dtype of the collectives' }),
  ds('prescale_gradients', 'bool', { default: false, doc: 'divide gradients before the all-reduce' }),
  ds('gradient_predivide_factor', 'number', { default: 1.0, doc: 'the factor of prescale_gradients' }),
  ds('fp16', 'block', { strict: true, doc: 'fp16 mixed precision' }),
  ds('fp16.enabled', 'bool', {
    default: false,
    auto: {
      accelerate: { from: 'the mixed precision (Accelerator(mixed_precision=...), else --mixed_precision / the YAML)' },
      trainer: '--fp16 / --fp16_full_eval',
      // The value depends on the precision, which the effective config fills itself (set_mixed_precision).
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin', 'HF Trainer'],
    doc: 'fp16 training with loss scaling',
  }),
  ds('fp16.auto_cast', 'bool', { default: false, doc: 'accelerate adds true when it writes the fp16 block itself' }),
  ds('fp16.loss_scale', 'number', { min: 0, default: 0, doc: '0: dynamic loss scaling' }),
  ds('fp16.initial_scale_power', 'int', { default: 16, doc: 'the first loss scale is 2^this' }),
  ds('fp16.loss_scale_window', 'int', { default: 1000, doc: 'steps without overflow before the scale grows' }),
  ds('fp16.hysteresis', 'int', { default: 2, doc: 'overflows tolerated before the scale shrinks' }),
  ds('fp16.consecutive_hysteresis', 'bool', { default: false, doc: 'refill the hysteresis on a good step' }),
  ds('fp16.min_loss_scale', 'number', { default: 1, doc: 'the smallest loss scale' }),
  ds('fp16.fp16_master_weights_and_grads', 'bool', { default: false, doc: 'fp16 master weights (ZeRO only)' }),
  ds('bf16', 'block', { strict: true, alias: 'bfloat16', doc: 'bf16 mixed precision' }),
  ds('bf16.enabled', 'bool', {
    default: false,
    auto: {
      accelerate: { from: 'the mixed precision (bf16 or fp8)' },
      trainer: '--bf16 / --bf16_full_eval',
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin', 'HF Trainer'],
    doc: 'bf16 training',
  }),
  ds('bf16.immediate_grad_update', 'bool', { default: false, doc: 'update gradients as they arrive' }),
  ds('bf16.check_grad_overflow', 'bool', { default: true, doc: 'check bf16 gradients for overflow' }),
  ds('bf16.bf16_master_weights_and_grads', 'bool', { default: false, doc: 'bf16 master weights (ZeRO only)' }),
  ds('bf16.bf16_optimizer_states', 'bool', { default: false, doc: 'bf16 optimizer states (ZeRO only)' }),
  ds('activation_checkpointing', 'block', { doc: "DeepSpeed's activation checkpointing (for scripts that call it)" }),
  ds('activation_checkpointing.partition_activations', 'bool', { default: false, doc: 'shard checkpoints' }),
  ds('activation_checkpointing.cpu_checkpointing', 'bool', { default: false, doc: 'checkpoints in CPU memory' }),
  ds('activation_checkpointing.contiguous_memory_optimization', 'bool', { default: false, doc: 'one buffer' }),
  ds('activation_checkpointing.number_checkpoints', 'int', { doc: 'checkpoints per model' }),
  ds('activation_checkpointing.synchronize_checkpoint_boundary', 'bool', { default: false, doc: 'sync each' }),
  ds('activation_checkpointing.profile', 'bool', { default: false, doc: 'time the checkpointing' }),
  ds('aio', 'block', { doc: 'asynchronous I/O for NVMe offload' }),
  ds('aio.block_size', 'int', { default: 1048576, doc: 'bytes per I/O request' }),
  ds('aio.queue_depth', 'int', { default: 8, doc: 'requests in flight' }),
  ds('aio.intra_op_parallelism', 'int', { default: 1, doc: 'I/O threads per operation' }),
  ds('aio.single_submit', 'bool', { default: false, doc: 'submit requests one by one' }),
  ds('aio.overlap_events', 'bool', { default: true, doc: 'overlap submission and completion' }),
  ds('aio.use_gds', 'bool', { default: false, doc: 'GPUDirect Storage' }),
  ds('optimizer', 'block', { doc: "DeepSpeed's own optimizer (the script then passes accelerate's DummyOptim)" }),
  ds('optimizer.params.lr', 'number', {
    auto: {
      accelerate: { from: 'DummyOptim(lr=...)', when: 'the script passes accelerate.utils.DummyOptim' },
      trainer: 'learning_rate',
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'learning rate',
  }),
  ds('optimizer.params.weight_decay', 'number', {
    auto: {
      accelerate: { from: 'DummyOptim(weight_decay=...)', when: 'the script passes accelerate.utils.DummyOptim' },
      trainer: 'weight_decay',
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'weight decay',
  }),
  ds('optimizer.params.betas', 'list', {
    auto: { trainer: 'adam_beta1, adam_beta2' },
    readBy: ['DeepSpeed', 'HF Trainer'],
    doc: "Adam's betas",
  }),
  ds('optimizer.params.eps', 'number', {
    auto: { trainer: 'adam_epsilon' },
    readBy: ['DeepSpeed', 'HF Trainer'],
    doc: "Adam's epsilon",
  }),
  ds('scheduler', 'block', { doc: "DeepSpeed's own LR schedule (the script then passes DummyScheduler)" }),
  ds('scheduler.params.warmup_min_lr', 'number', {
    auto: {
      accelerate: { from: '0', when: 'the script passes accelerate.utils.DummyScheduler' },
      trainer: '0',
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'the warm-up start',
  }),
  ds('scheduler.params.warmup_max_lr', 'number', {
    auto: {
      accelerate: { from: "the optimizer's lr", when: 'the script passes accelerate.utils.DummyScheduler' },
      trainer: 'learning_rate',
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'the warm-up end',
  }),
  ds('scheduler.params.warmup_num_steps', 'int', {
    auto: {
      accelerate: {
        from: 'DummyScheduler(warmup_num_steps=...)',
        when: 'the script passes accelerate.utils.DummyScheduler',
      },
      trainer: 'warmup_steps / warmup_ratio',
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'warm-up steps',
  }),
  ds('scheduler.params.total_num_steps', 'int', {
    auto: {
      accelerate: {
        from: 'DummyScheduler(total_num_steps=...) / num_processes',
        when: 'the script passes accelerate.utils.DummyScheduler with total_num_steps',
      },
      trainer: 'the training steps it computes',
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'steps of the schedule',
  }),
  ds('amp.enabled', 'bool', { auto: { trainer: '--fp16 with the apex backend' }, doc: 'apex AMP' }),
  ds('amp.opt_level', 'string', { auto: { trainer: '--fp16_opt_level' }, doc: 'apex AMP level' }),

  // --- the DeepSpeed JSON: zero_optimization (DeepSpeedZeroConfig, extra="forbid") ---
  ds('zero_optimization', 'block', { strict: true, doc: 'ZeRO' }),
  zero('stage', 'int', {
    values: [0, 1, 2, 3],
    default: 0,
    auto: {
      accelerate: { from: 'ACCELERATE_DEEPSPEED_ZERO_STAGE (launch --zero_stage), else 2' },
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin'],
    doc: '0 off, 1 optimizer states, 2 + gradients, 3 + parameters',
  }),
  zero('contiguous_gradients', 'bool', { default: true, doc: 'copy gradients into one buffer' }),
  zero('reduce_scatter', 'bool', { default: true, doc: 'reduce-scatter instead of all-reduce' }),
  zero('reduce_bucket_size', 'int', {
    min: 0,
    default: 5e8,
    auto: {
      accelerate: HIDDEN,
      trainer: 'hidden_size^2',
      fill: hiddenFill((h) => h * h),
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'elements reduced at once',
  }),
  zero('use_multi_rank_bucket_allreduce', 'bool', { default: true, doc: "combine the ranks' buckets" }),
  zero('allgather_partitions', 'bool', { default: true, doc: 'all-gather instead of broadcasts' }),
  zero('allgather_bucket_size', 'int', { min: 0, default: 5e8, doc: 'elements all-gathered at once' }),
  zero('overlap_comm', 'bool', {
    defaultAtStage: (stage) => stage === 3,
    doc: 'overlap the reduction with the backward pass (default: true at stage 3, false below)',
  }),
  zero('load_from_fp32_weights', 'bool', { default: true, doc: 'restore fp32 master weights from checkpoints' }),
  zero('elastic_checkpoint', 'bool', { default: false, doc: 'legacy elastic checkpoints' }),
  zero('offload_param', 'block', { strict: true, stage3: true, doc: 'parameter offload (stage 3 only)' }),
  zero('offload_param.device', 'enum', {
    values: DEVICES,
    default: 'none',
    stage3: true,
    auto: {
      accelerate: { from: 'ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE (launch --offload_param_device), else none' },
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin'],
    doc: 'where the parameters go',
  }),
  zero('offload_param.nvme_path', 'string', {
    stage3: true,
    auto: { accelerate: { from: 'ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_NVME_PATH, else the string "none"' } },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin'],
    doc: 'NVMe directory of the parameters',
  }),
  zero('offload_param.buffer_count', 'int', { min: 0, default: 5, stage3: true, doc: 'NVMe swap buffers' }),
  zero('offload_param.buffer_size', 'int', { min: 0, default: 1e8, stage3: true, doc: 'elements per swap buffer' }),
  zero('offload_param.max_in_cpu', 'int', { min: 0, default: 1e9, stage3: true, doc: 'elements kept in CPU memory' }),
  zero('offload_param.pin_memory', 'bool', {
    default: true,
    stage3: true,
    history: 'true since DeepSpeed 0.19.5 (PR #8207), false before',
    doc: 'page-locked CPU memory',
  }),
  zero('offload_optimizer', 'block', { strict: true, doc: 'optimizer offload' }),
  zero('offload_optimizer.device', 'enum', {
    values: DEVICES,
    default: 'none',
    auto: {
      accelerate: {
        from: 'ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE (launch --offload_optimizer_device), else none',
      },
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin'],
    doc: 'where the optimizer states go',
  }),
  zero('offload_optimizer.nvme_path', 'string', {
    auto: { accelerate: { from: 'ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_NVME_PATH, else the string "none"' } },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin'],
    doc: 'NVMe directory of the optimizer states',
  }),
  zero('offload_optimizer.buffer_count', 'int', { min: 0, default: 4, doc: 'NVMe swap buffers' }),
  zero('offload_optimizer.pin_memory', 'bool', {
    default: true,
    history: 'true since DeepSpeed 0.19.5 (PR #8207), false before',
    doc: 'page-locked CPU memory',
  }),
  zero('offload_optimizer.pipeline_read', 'bool', { default: false, doc: 'overlap NVMe reads' }),
  zero('offload_optimizer.pipeline_write', 'bool', { default: false, doc: 'overlap NVMe writes' }),
  zero('offload_optimizer.fast_init', 'bool', { default: false, doc: 'faster NVMe start' }),
  zero('offload_optimizer.ratio', 'number', { min: 0, default: 1.0, doc: 'share offloaded (below 1: stage 3 only)' }),
  zero('offload_optimizer.super_offload', 'bool', { default: false, stage3: true, doc: 'Superchip offload' }),
  zero('offload_optimizer.cpuadam_cores_perc', 'number', { default: 0.8, stage3: true, doc: 'CPU Adam cores' }),
  zero('zenflow', 'block', { doc: 'ZenFlow' }),
  zero('sub_group_size', 'int', { min: 0, default: 1e9, stage3: true, doc: 'elements per optimizer-step tile' }),
  zero('stage3_prefetch_bucket_size', 'int', {
    min: 0,
    default: 5e7,
    alias: 'prefetch_bucket_size',
    stage3: true,
    auto: {
      accelerate: HIDDEN,
      trainer: 'int(0.9 x hidden_size^2), at stage 3',
      fill: hiddenFill((h) => Math.floor(0.9 * h * h)),
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'parameter elements fetched ahead',
  }),
  zero('stage3_param_persistence_threshold', 'int', {
    min: 0,
    default: 1e5,
    alias: 'param_persistence_threshold',
    stage3: true,
    auto: {
      accelerate: HIDDEN,
      trainer: '10 x hidden_size, at stage 3',
      fill: hiddenFill((h) => 10 * h),
    },
    readBy: ['DeepSpeed', 'Accelerator.prepare', 'HF Trainer'],
    doc: 'parameters below this stay whole on every GPU',
  }),
  zero('stage3_model_persistence_threshold', 'int', {
    min: 0,
    alias: 'model_persistence_threshold',
    stage3: true,
    doc: 'most parameter elements kept whole (default sys.maxsize)',
  }),
  zero('stage3_max_live_parameters', 'int', {
    min: 0,
    default: 1e9,
    alias: 'max_live_parameters',
    stage3: true,
    doc: 'most parameters resident on a GPU',
  }),
  zero('stage3_max_reuse_distance', 'int', {
    min: 0,
    default: 1e9,
    alias: 'max_reuse_distance',
    stage3: true,
    doc: 'keep a parameter reused within this many',
  }),
  zero('stage3_gather_16bit_weights_on_model_save', 'bool', {
    default: false,
    alias: 'gather_16bit_weights_on_model_save',
    stage3: true,
    auto: {
      accelerate: { from: 'ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL (launch --zero3_save_16bit_model), else false' },
      fill: () => false,
    },
    readBy: ['DeepSpeed', 'DeepSpeedPlugin', 'Accelerator.prepare'],
    doc: 'gather the 16-bit weights on save',
  }),
  zero('stage3_module_granularity_threshold', 'int', {
    default: 0,
    alias: 'module_granularity_threshold',
    stage3: true,
    doc: 'fetch fine-grained modules whole',
  }),
  zero('stage3_use_all_reduce_for_fetch_params', 'bool', {
    default: false,
    alias: 'use_all_reduce_for_fetch_params',
    stage3: true,
    doc: 'all-reduce to fetch parameters',
  }),
  zero('stage3_allgather_sequential', 'bool', {
    default: false,
    alias: 'allgather_sequential',
    stage3: true,
    doc: 'all-gather parameters one by one',
  }),
  zero('ignore_unused_parameters', 'bool', { default: true, doc: 'unused parameters are no error (stage 2)' }),
  zero('legacy_stage1', 'bool', { default: false, doc: 'refused by DeepSpeed >= 0.5.9' }),
  zero('round_robin_gradients', 'bool', { default: false, doc: 'parallel gradient copies to the CPU' }),
  zero('zero_hpz_partition_size', 'int', { min: 0, default: 1, stage3: true, doc: 'ZeRO++ hpZ' }),
  zero('zero_quantized_weights', 'bool', { default: false, stage3: true, doc: 'ZeRO++ qwZ' }),
  zero('zero_quantized_nontrainable_weights', 'bool', {
    default: false,
    stage3: true,
    doc: 'quantized frozen weights',
  }),
  zero('zero_quantized_gradients', 'bool', { default: false, doc: 'ZeRO++ qgZ' }),
  zero('zeropp_loco_param', 'any', { doc: 'LoCo-ZeRO++' }),
  zero('mics_shard_size', 'int', { default: -1, stage3: true, doc: 'MiCS' }),
  zero('mics_hierarchical_params_gather', 'bool', { default: false, stage3: true, doc: 'MiCS' }),
  zero('memory_efficient_linear', 'bool', { default: true, stage3: true, doc: 'memory-efficient linear' }),
  zero('pipeline_loading_checkpoint', 'bool', { default: false, stage3: true, doc: 'pipeline checkpoint loading' }),
  zero('override_module_apply', 'bool', { default: true, stage3: true, doc: 'override nn.Module.apply' }),
  zero('log_trace_cache_warnings', 'bool', { default: false, doc: 'trace cache warnings' }),
  zero('enable_sanity_checks', 'bool', { default: false, doc: 'internal checks' }),
  zero('save_muon_momentum_buffer_in_memory', 'bool', { default: false, stage3: true, doc: 'Muon + NVMe' }),
  zero('leaf_module', 'any', { stage3: true, doc: 'ZeRO-3 leaf modules' }),
  // Deprecated: DeepSpeed still accepts them, carries the value over, and refuses one next to its replacement.
  zero('cpu_offload', 'bool', {
    deprecated: { use: 'zero_optimization.offload_optimizer', carries: 'device cpu when true' },
    doc: 'deprecated: offload_optimizer {"device": "cpu"}',
  }),
  zero('cpu_offload_param', 'bool', {
    deprecated: { use: 'zero_optimization.offload_param', carries: 'device cpu when true' },
    doc: 'deprecated: offload_param {"device": "cpu"}',
  }),
  zero('cpu_offload_use_pin_memory', 'bool', {
    deprecated: { use: 'zero_optimization.offload_optimizer.pin_memory', carries: 'nothing' },
    doc: 'deprecated; DeepSpeed only warns and never carries its value over',
  }),
  zero('stage3_gather_fp16_weights_on_model_save', 'bool', {
    deprecated: { use: 'zero_optimization.stage3_gather_16bit_weights_on_model_save', carries: 'value' },
    stage3: true,
    doc: 'deprecated: stage3_gather_16bit_weights_on_model_save',
  }),
];

// ---------------------------------------------------------------------------------------------
// Reading the table

const BY_PATH = new Map<string, KeyInfo>(CONFIG_KEYS.map((k) => [`${k.file}:${k.path}`, k]));

/** The entry of a key, by its canonical path (see canonicalPath for aliases); undefined when unknown. */
export function keyInfo(file: KeyFile, path: string): KeyInfo | undefined {
  return BY_PATH.get(`${file}:${path}`);
}

/** The entry of a key that the table must hold (a programming error otherwise). */
export function mustKey(file: KeyFile, path: string): KeyInfo {
  const k = keyInfo(file, path);
  if (!k) throw new Error(`no key ${file}:${path} in the table`);
  return k;
}

const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf('.')));
const lastOf = (path: string) => path.slice(path.lastIndexOf('.') + 1);

/** The canonical path of a JSON key given under its alias (`zero_optimization.prefetch_bucket_size`). */
export function canonicalPath(path: string): string {
  const parent = parentOf(path);
  const key = lastOf(path);
  for (const k of CONFIG_KEYS) if (k.file === 'json' && k.alias === key && parentOf(k.path) === parent) return k.path;
  if (path === 'bfloat16' || path.startsWith('bfloat16.')) return `bf16${path.slice('bfloat16'.length)}`;
  return path;
}

/**
 * The names a block accepts (its keys, their aliases, the deprecated ones): what a strict block's schema knows.
 * `block` is '' for the top level of the file.
 */
export function keysIn(file: KeyFile, block: string): Set<string> {
  const out = new Set<string>();
  for (const k of CONFIG_KEYS) {
    if (k.file !== file || parentOf(k.path) !== block) continue;
    out.add(lastOf(k.path));
    if (k.alias) out.add(k.alias);
  }
  return out;
}

/** The key's default when absent, at a ZeRO stage; undefined when it has none. */
export function defaultOf(k: KeyInfo, stage = 0): unknown {
  return k.defaultAtStage ? k.defaultAtStage(stage) : k.default;
}

/** DeepSpeed's default for a JSON key (by its path), at a stage; undefined when it has none. */
export function deepSpeedDefault(path: string, stage = 0): unknown {
  const k = keyInfo('json', canonicalPath(path));
  return k ? defaultOf(k, stage) : undefined;
}

/** A JSON key DeepSpeed's default for which is a number (a programming error otherwise). */
export function numberDefault(path: string): number {
  const v = deepSpeedDefault(path);
  if (typeof v !== 'number') throw new Error(`no numeric default for ${path}`);
  return v;
}

/** A JSON key whose default is a boolean. */
export function boolDefault(path: string): boolean {
  const v = deepSpeedDefault(path);
  if (typeof v !== 'boolean') throw new Error(`no boolean default for ${path}`);
  return v;
}

/** The deprecated JSON keys: their path, and what replaces them. */
export const DEPRECATED_JSON_KEYS: readonly KeyInfo[] = CONFIG_KEYS.filter((k) => k.file === 'json' && k.deprecated);

/** The accelerate YAML keys accelerate refuses next to a deepspeed_config_file (DeepSpeedPlugin._deepspeed_config_checks). */
export const ACCELERATE_KEYS_REFUSED_WITH_DS_FILE: readonly string[] = CONFIG_KEYS.filter(
  (k) => k.file === 'yaml' && k.refusedNextToJson,
).map((k) => k.path);

/** The accelerate keys DeepSpeedPlugin turns into DeepSpeed values (zero_stage -> zero_optimization.stage, ...). */
export const PLUGIN_KEYS: readonly KeyInfo[] = CONFIG_KEYS.filter(
  (k) => k.file === 'yaml' && k.path.startsWith('deepspeed_config.') && k.sets !== undefined,
);

/** Who fills an "auto" at a JSON path: its rule, or undefined (nobody: accelerate raises at prepare()). */
export function autoRule(path: string): AutoFill | undefined {
  return keyInfo('json', canonicalPath(path))?.auto;
}

/**
 * The value accelerate's prepare() puts in an "auto" at `path` (the hidden-size keys, the batch keys, the
 * constants), or undefined when it has none for this run (accelerate then raises).
 */
export function autoFill(path: string, ctx: FillContext): number | boolean | undefined {
  return autoRule(path)?.fill?.(ctx);
}

/** The JSON keys accelerate fills from model.config.hidden_size (one rule for the effective dict and the estimator). */
export const HIDDEN_SIZE_KEYS: readonly string[] = CONFIG_KEYS.filter((k) => k.auto?.accelerate === HIDDEN).map(
  (k) => k.path,
);

/** Whether nobody but the HF Trainer fills an "auto" at `path` (a plain accelerate script makes accelerate raise). */
export function onlyTrainerFills(path: string): boolean {
  const r = autoRule(path);
  return r !== undefined && r.accelerate === undefined && r.trainer !== undefined;
}
