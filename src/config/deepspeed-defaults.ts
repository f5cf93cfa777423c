/**
 * DeepSpeed 0.19.5's own defaults for the keys zerowiz writes or reads, as one object: a view of the key table
 * (keys.ts), which holds each default with its source and history. The emitters write from it, an import fills
 * absent keys from it, the catalog's help quotes it, the estimator starts from it.
 */
import { boolDefault, deepSpeedDefault, mustKey, numberDefault } from './keys.js';

const fp16 = (k: string) => numberDefault(`fp16.${k}`);
const aio = (k: string) => deepSpeedDefault(`aio.${k}`);

/** DeepSpeed's defaults, by the names zerowiz's code uses. */
export const DEEPSPEED_DEFAULTS = {
  stage: numberDefault('zero_optimization.stage'),
  contiguous_gradients: boolDefault('zero_optimization.contiguous_gradients'),
  reduce_bucket_size: numberDefault('zero_optimization.reduce_bucket_size'),
  allgather_bucket_size: numberDefault('zero_optimization.allgather_bucket_size'),
  /** overlap_comm is null in the schema and becomes true at stage 3, false below. */
  overlapComm: (stage: number): boolean =>
    mustKey('json', 'zero_optimization.overlap_comm').defaultAtStage?.(stage) === true,
  sub_group_size: numberDefault('zero_optimization.sub_group_size'),
  stage3_prefetch_bucket_size: numberDefault('zero_optimization.stage3_prefetch_bucket_size'),
  stage3_param_persistence_threshold: numberDefault('zero_optimization.stage3_param_persistence_threshold'),
  stage3_max_live_parameters: numberDefault('zero_optimization.stage3_max_live_parameters'),
  stage3_max_reuse_distance: numberDefault('zero_optimization.stage3_max_reuse_distance'),
  stage3_gather_16bit_weights_on_model_save: boolDefault('zero_optimization.stage3_gather_16bit_weights_on_model_save'),
  /** offload_*.pin_memory: true since DeepSpeed 0.19.5 (false before). */
  pin_memory: boolDefault('zero_optimization.offload_optimizer.pin_memory'),
  /** offload_param.buffer_size: elements of one NVMe parameter swap buffer. */
  offload_param_buffer_size: numberDefault('zero_optimization.offload_param.buffer_size'),
  offload_param_buffer_count: numberDefault('zero_optimization.offload_param.buffer_count'),
  offload_optimizer_buffer_count: numberDefault('zero_optimization.offload_optimizer.buffer_count'),
  /** gradient_clipping: 1.0 since DeepSpeed 0.19.3 (0.0, off, before). */
  gradient_clipping: numberDefault('gradient_clipping'),
  /** fp16's dynamic loss scaling, in the seed's order. */
  fp16: {
    loss_scale: fp16('loss_scale'),
    loss_scale_window: fp16('loss_scale_window'),
    initial_scale_power: fp16('initial_scale_power'),
    hysteresis: fp16('hysteresis'),
    min_loss_scale: fp16('min_loss_scale'),
  },
  /** The asynchronous I/O block (NVMe offload). */
  aio: {
    block_size: aio('block_size') as number,
    queue_depth: aio('queue_depth') as number,
    intra_op_parallelism: aio('intra_op_parallelism') as number,
    single_submit: aio('single_submit') as boolean,
    overlap_events: aio('overlap_events') as boolean,
    use_gds: aio('use_gds') as boolean,
  },
} as const;
