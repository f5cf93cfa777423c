/** The ZeRO modes zerowiz offers, as typed on the command line (`--mode`). */
export const MODES = ['1', '2', '2-offload', '3', '3-offload'] as const;
/** One ZeRO mode id. */
export type Mode = (typeof MODES)[number];
/** Where an offload mode puts what it offloads. */
export type OffloadDevice = 'cpu' | 'nvme';
/** Where one kind of state lives: on the GPU (`none`: not offloaded), in CPU memory, or on NVMe. */
export type OffloadTarget = 'none' | OffloadDevice;

/**
 * What DeepSpeed is asked to do: the ZeRO stage and the two offload devices, separately (accelerate asks
 * `offload_optimizer_device` and `offload_param_device` as two questions). Every mode maps onto one; a
 * placement need not be one of the modes (e.g. stage 3 with only the optimizer offloaded).
 */
export interface Placement {
  stage: 1 | 2 | 3;
  /** offload_optimizer.device: where the fp32 master weights, Adam states and fp32 gradients live. */
  optimizer: OffloadTarget;
  /** offload_param.device: where the 16-bit parameter partitions live; DeepSpeed honours it at stage 3 only. */
  param: OffloadTarget;
}

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

/** Whether the mode offloads anything (and so has a CPU and an NVMe variant): the one definition. */
export function modeOffloads(mode: Mode): boolean {
  const info = MODE_INFO[mode];
  return info.offloadOptimizer || info.offloadParam;
}

/** The offload device a mode really uses: the given one for offload modes, null for the others. */
export function modeDevice(mode: Mode, device: OffloadDevice): OffloadDevice | null {
  return modeOffloads(mode) ? device : null;
}

/** The placement of a mode with its offload device (ignored by modes that offload nothing). */
export function placementOf(mode: Mode, device: OffloadDevice | null = 'cpu'): Placement {
  const info = MODE_INFO[mode];
  const target: OffloadTarget = device ?? 'cpu';
  return {
    stage: info.stage,
    optimizer: info.offloadOptimizer ? target : 'none',
    param: info.offloadParam ? target : 'none',
  };
}

/** One row of the tradeoff table: a mode and, for offload modes, its device. */
export interface ModeRow {
  mode: Mode;
  device: OffloadDevice | null;
}

/** The rows every table shows, in order: each mode, and after each offload mode its NVMe variant. */
export function modeRows(includeNvme = true): ModeRow[] {
  const rows: ModeRow[] = [];
  for (const mode of MODES) {
    rows.push({ mode, device: modeOffloads(mode) ? 'cpu' : null });
    if (includeNvme && modeOffloads(mode)) rows.push({ mode, device: 'nvme' });
  }
  return rows;
}

/** The row key: `3-offload`, or `3-offload:nvme` for the NVMe variant. */
export function rowKey(mode: Mode, device: OffloadDevice | null): string {
  return device === 'nvme' ? `${mode}:nvme` : mode;
}

/** The row a key names (the inverse of rowKey); null for a key that names no row. */
export function rowFromKey(key: string): ModeRow | null {
  const [mode, dev, extra] = key.split(':');
  if (mode === undefined || !isMode(mode) || extra !== undefined) return null;
  if (dev !== undefined && (dev !== 'nvme' || !modeOffloads(mode))) return null;
  return { mode, device: modeOffloads(mode) ? (dev === 'nvme' ? 'nvme' : 'cpu') : null };
}

/** The human label of a mode and device, the one spelling: `ZeRO-3 offload`, `ZeRO-3 offload NVMe`. */
export function rowLabel(mode: Mode, device: OffloadDevice | null): string {
  return device === 'nvme' && modeOffloads(mode) ? `${MODE_INFO[mode].label} NVMe` : MODE_INFO[mode].label;
}

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
