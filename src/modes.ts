/** The ZeRO modes zerowiz offers, as typed on the command line (`--mode`). */
export const MODES = ['1', '2', '2-offload', '3', '3-offload'] as const;
/** One ZeRO mode id. */
export type Mode = (typeof MODES)[number];
/** Where an offload mode puts what it offloads. */
export type OffloadDevice = 'cpu' | 'nvme';

/** What a mode means for DeepSpeed's `zero_optimization` block. */
export interface ModeInfo {
  id: Mode;
  label: string;
  stage: 1 | 2 | 3;
  offloadOptimizer: boolean;
  offloadParam: boolean;
  /** What it shards or offloads, in the seed document's words. */
  shards: string;
  /** What it costs, in the seed document's words. */
  cost: string;
}

export const MODE_INFO: Record<Mode, ModeInfo> = {
  '1': {
    id: '1',
    label: 'ZeRO-1',
    stage: 1,
    offloadOptimizer: false,
    offloadParam: false,
    shards: 'Shards the optimizer states across GPUs.',
    cost: 'Same speed as DDP; saves memory.',
  },
  '2': {
    id: '2',
    label: 'ZeRO-2',
    stage: 2,
    offloadOptimizer: false,
    offloadParam: false,
    shards: 'Shards the optimizer states and the gradients across GPUs.',
    cost: 'Same speed as DDP; saves more memory.',
  },
  '2-offload': {
    id: '2-offload',
    label: 'ZeRO-2 offload',
    stage: 2,
    offloadOptimizer: true,
    offloadParam: false,
    shards: 'Offloads the optimizer states and the gradients to the CPU.',
    cost: 'More communication and GPU<->CPU traffic; large memory savings.',
  },
  '3': {
    id: '3',
    label: 'ZeRO-3',
    stage: 3,
    offloadOptimizer: false,
    offloadParam: false,
    shards: 'Shards the optimizer states, the gradients and the parameters across GPUs.',
    cost: 'More communication (1.5x DDP); stronger memory savings.',
  },
  '3-offload': {
    id: '3-offload',
    label: 'ZeRO-3 offload',
    stage: 3,
    offloadOptimizer: true,
    offloadParam: true,
    shards: 'Offloads the optimizer states, the gradients and the parameters to the CPU.',
    cost: 'Much more communication and GPU<->CPU traffic; the most extreme memory savings.',
  },
};

/** True when `s` is a mode id. */
export function isMode(s: string): s is Mode {
  return (MODES as readonly string[]).includes(s);
}

/**
 * The mode for a DeepSpeed stage and whether it offloads the optimizer states (as read from a JSON or YAML).
 * Where ZeRO-3 puts the parameters is its own answer (offload_param_device): ZeRO-3 offload with the
 * parameters on the GPUs offloads the optimizer only; ZeRO-3 with them on cpu offloads the parameters only.
 * Stage 0 (ZeRO off) has no mode.
 */
export function modeFromStage(stage: number, offloadOptimizer: boolean): Mode | null {
  if (stage === 1) return '1';
  if (stage === 2) return offloadOptimizer ? '2-offload' : '2';
  if (stage === 3) return offloadOptimizer ? '3-offload' : '3';
  return null;
}
