/**
 * DeepSpeed 0.19.6's own defaults for the keys zerowiz writes or reads (runtime/zero/config.py,
 * zero/offload_config.py, runtime/precision_config.py, swap_tensor/aio_config.py, runtime/constants.py;
 * shared/reference/deepspeed-zero.md). The one table, owned by the emitters (emit.ts re-exports it): they write
 * from it, an import fills absent keys from it, the catalog's help quotes it. A module without imports, so the
 * catalog can use it without an import cycle.
 */
export const DEEPSPEED_DEFAULTS = {
  stage: 0,
  contiguous_gradients: true,
  reduce_bucket_size: 5e8,
  allgather_bucket_size: 5e8,
  /** overlap_comm is null in the schema and becomes true at stage 3, false below. */
  overlapComm: (stage: number): boolean => stage === 3,
  sub_group_size: 1e9,
  stage3_prefetch_bucket_size: 5e7,
  stage3_param_persistence_threshold: 1e5,
  stage3_max_live_parameters: 1e9,
  stage3_max_reuse_distance: 1e9,
  stage3_gather_16bit_weights_on_model_save: false,
  /** offload_*.pin_memory: true since DeepSpeed 0.19.5 (false before). */
  pin_memory: true,
  /** offload_param.buffer_size: elements of one NVMe parameter swap buffer. */
  offload_param_buffer_size: 1e8,
  offload_param_buffer_count: 5,
  offload_optimizer_buffer_count: 4,
  /** gradient_clipping: 1.0 since DeepSpeed 0.19.3 (0.0, off, before). */
  gradient_clipping: 1.0,
  /** fp16's dynamic loss scaling. */
  fp16: { loss_scale: 0, loss_scale_window: 1000, initial_scale_power: 16, hysteresis: 2, min_loss_scale: 1 },
  /** The asynchronous I/O block (NVMe offload). */
  aio: {
    block_size: 1048576,
    queue_depth: 8,
    intra_op_parallelism: 1,
    single_submit: false,
    overlap_events: true,
    use_gds: false,
  },
} as const;
