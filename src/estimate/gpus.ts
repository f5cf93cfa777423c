/**
 * The GPU catalog, the links between GPUs and the networks between nodes: the machine facts the step-time model
 * (./time.ts) divides by. Data only, each figure with its source beside it: the dense (no sparsity) tensor-core
 * peak of the training precision, the memory nvidia-smi reports, the NVLink links and their speed, the PCIe
 * generation. Named in kebab case (`a100-80`, `h100-sxm`, `titan-rtx`) and recognised from nvidia-smi's names.
 *
 * What is assumed rather than read from a datasheet says so: the fraction of a link's line rate that NCCL's
 * collectives and pinned copies achieve (LINK_EFFICIENCY), and the defaults when nothing is given (DEFAULT_GPU_ID,
 * DEFAULT_HOST_CORES, DEFAULT_INTERNODE) so one command gives one answer on any machine.
 */
import type { Interconnect, Precision } from '../config/index.js';
import { NearMiss } from '../text/index.js';

/** One GPU of the catalog. */
export interface GpuSpec {
  /** The kebab-case name `--gpu` takes. */
  id: string;
  /** The name people know it by. */
  name: string;
  /** Dense BF16 tensor-core peak with FP32 accumulate, TFLOPS; null where the GPU has no BF16 tensor cores. */
  bf16Tflops: number | null;
  /** Dense FP16 tensor-core peak with FP32 accumulate, TFLOPS. */
  fp16Tflops: number;
  /** FP32 (non-tensor) peak, TFLOPS: what an fp32 run's matmuls get (PyTorch leaves TF32 off for matmuls). */
  fp32Tflops: number;
  /** Memory as nvidia-smi's memory.total reports it, MiB. */
  memoryMiB: number;
  /** NVLink links per GPU in its usual box (0: none), and one link's speed per direction, bytes/s. */
  nvlinks: number;
  nvlinkBytesPerSPerLink: number;
  /** Whether its usual box joins every GPU pair by NVLink (an HGX/DGX board's NVSwitch), so links not detected mean NVLink. */
  nvlinkBoard: boolean;
  /** PCIe generation of its x16 slot. */
  pcieGen: 3 | 4 | 5;
  /** nvidia-smi's names for it (matched whole, case-insensitive). */
  smiNames: readonly string[];
  /** Where each figure comes from. */
  source: string;
}

/** NVLink 2, 3 and 4 move 25 GB/s per direction per link (V100 6 links, A100 12, H100 18: 300, 600, 900 GB/s both ways). */
const NVLINK_25 = 25e9;
/** NVLink 5 (Blackwell) moves 50 GB/s per direction per link (18 links: 1.8 TB/s both ways). */
const NVLINK_50 = 50e9;
/** The NVLink bridge of GA102 cards (RTX 3090, RTX A6000, A40): 112.5 GB/s both ways over 4 links. */
const NVLINK_BRIDGE_GA102 = 112.5e9 / 2 / 4;

/** The catalog, in the order `--list-gpus` prints it. */
export const GPU_CATALOG: readonly GpuSpec[] = [
  {
    id: 't4',
    name: 'Tesla T4 (16 GB)',
    bf16Tflops: null,
    fp16Tflops: 65,
    fp32Tflops: 8.1,
    memoryMiB: 15360,
    nvlinks: 0,
    nvlinkBytesPerSPerLink: 0,
    nvlinkBoard: false,
    pcieGen: 3,
    smiNames: ['Tesla T4'],
    source:
      'NVIDIA T4 datasheet (nvidia.com/en-us/data-center/tesla-t4): mixed precision FP16/FP32 65 TFLOPS, single precision 8.1 TFLOPS, 16 GB GDDR6, PCIe Gen3 x16; Turing has no BF16 tensor cores',
  },
  {
    id: 'v100-16',
    name: 'Tesla V100 SXM2 16 GB',
    bf16Tflops: null,
    fp16Tflops: 125,
    fp32Tflops: 15.7,
    memoryMiB: 16160,
    nvlinks: 6,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: false,
    pcieGen: 3,
    smiNames: ['Tesla V100-SXM2-16GB', 'Tesla V100-PCIE-16GB', 'Tesla V100S-PCIE-32GB'],
    source:
      'NVIDIA V100 datasheet (nvidia.com/en-us/data-center/v100): SXM2 tensor 125 TFLOPS, FP32 15.7 TFLOPS, NVLink 300 GB/s (6 links), PCIe Gen3; Volta has no BF16; a DGX-1 joins its 8 GPUs in a hybrid cube-mesh, not every pair',
  },
  {
    id: 'v100',
    name: 'Tesla V100 SXM2 32 GB',
    bf16Tflops: null,
    fp16Tflops: 125,
    fp32Tflops: 15.7,
    memoryMiB: 32510,
    nvlinks: 6,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: false,
    pcieGen: 3,
    smiNames: ['Tesla V100-SXM2-32GB', 'Tesla V100-SXM3-32GB', 'Tesla V100-PCIE-32GB'],
    source: 'NVIDIA V100 datasheet: as v100-16, with 32 GB HBM2',
  },
  {
    id: 'titan-rtx',
    name: 'NVIDIA TITAN RTX (24 GB)',
    bf16Tflops: null,
    fp16Tflops: 130,
    fp32Tflops: 16.3,
    memoryMiB: 24220,
    nvlinks: 2,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: false,
    pcieGen: 3,
    smiNames: ['NVIDIA TITAN RTX', 'TITAN RTX'],
    source:
      'NVIDIA TITAN RTX specifications (nvidia.com/en-us/deep-learning-ai/products/titan-rtx): 130 tensor TFLOPS, 16.3 FP32 TFLOPS, 24 GB GDDR6, NVLink bridge 100 GB/s (2 links), PCIe Gen3; Turing has no BF16',
  },
  {
    id: 'quadro-rtx-6000',
    name: 'Quadro RTX 6000 (24 GB)',
    bf16Tflops: null,
    fp16Tflops: 130.5,
    fp32Tflops: 16.3,
    memoryMiB: 24220,
    nvlinks: 2,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: false,
    pcieGen: 3,
    smiNames: ['Quadro RTX 6000'],
    source:
      'NVIDIA Quadro RTX 6000 datasheet: tensor 130.5 TFLOPS, FP32 16.3 TFLOPS, 24 GB GDDR6, NVLink 100 GB/s (2 links), PCIe Gen3; no BF16',
  },
  {
    id: 'quadro-rtx-8000',
    name: 'Quadro RTX 8000 (48 GB)',
    bf16Tflops: null,
    fp16Tflops: 130.5,
    fp32Tflops: 16.3,
    memoryMiB: 48600,
    nvlinks: 2,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: false,
    pcieGen: 3,
    smiNames: ['Quadro RTX 8000'],
    source: 'NVIDIA Quadro RTX 8000 datasheet: as the RTX 6000 with 48 GB GDDR6',
  },
  {
    id: 'rtx-3090',
    name: 'GeForce RTX 3090 (24 GB)',
    bf16Tflops: 71,
    fp16Tflops: 71,
    fp32Tflops: 35.6,
    memoryMiB: 24576,
    nvlinks: 4,
    nvlinkBytesPerSPerLink: NVLINK_BRIDGE_GA102,
    nvlinkBoard: false,
    pcieGen: 4,
    smiNames: ['NVIDIA GeForce RTX 3090', 'GeForce RTX 3090', 'NVIDIA GeForce RTX 3090 Ti'],
    source:
      'NVIDIA Ampere GA102 whitepaper, Table 9: RTX 3090 peak FP16/BF16 tensor TFLOPS with FP32 accumulate 71 (142 with FP16 accumulate), FP32 35.6, 24 GB GDDR6X, NVLink bridge 112.5 GB/s, PCIe Gen4',
  },
  {
    id: 'rtx-4090',
    name: 'GeForce RTX 4090 (24 GB)',
    bf16Tflops: 165.2,
    fp16Tflops: 165.2,
    fp32Tflops: 82.6,
    memoryMiB: 24564,
    nvlinks: 0,
    nvlinkBytesPerSPerLink: 0,
    nvlinkBoard: false,
    pcieGen: 4,
    smiNames: ['NVIDIA GeForce RTX 4090', 'GeForce RTX 4090'],
    source:
      'NVIDIA Ada Lovelace architecture whitepaper, Table 2: RTX 4090 peak FP16/BF16 tensor TFLOPS with FP32 accumulate 165.2 (330.4 sparse), FP32 82.6, 24 GB GDDR6X, no NVLink, PCIe Gen4',
  },
  {
    id: 'a10',
    name: 'NVIDIA A10 (24 GB)',
    bf16Tflops: 125,
    fp16Tflops: 125,
    fp32Tflops: 31.2,
    memoryMiB: 23028,
    nvlinks: 0,
    nvlinkBytesPerSPerLink: 0,
    nvlinkBoard: false,
    pcieGen: 4,
    smiNames: ['NVIDIA A10'],
    source:
      'NVIDIA A10 datasheet (nvidia.com/en-us/data-center/products/a10-gpu): BF16 tensor 125 TFLOPS (250 sparse), FP32 31.2, 24 GB GDDR6, PCIe Gen4',
  },
  {
    id: 'a40',
    name: 'NVIDIA A40 (48 GB)',
    bf16Tflops: 149.7,
    fp16Tflops: 149.7,
    fp32Tflops: 37.4,
    memoryMiB: 46068,
    nvlinks: 4,
    nvlinkBytesPerSPerLink: NVLINK_BRIDGE_GA102,
    nvlinkBoard: false,
    pcieGen: 4,
    smiNames: ['NVIDIA A40'],
    source:
      'NVIDIA A40 datasheet: BF16 tensor 149.7 TFLOPS (299.4 sparse), FP32 37.4, 48 GB GDDR6, NVLink bridge 112.5 GB/s, PCIe Gen4',
  },
  {
    id: 'a6000',
    name: 'NVIDIA RTX A6000 (48 GB)',
    bf16Tflops: 154.8,
    fp16Tflops: 154.8,
    fp32Tflops: 38.7,
    memoryMiB: 49140,
    nvlinks: 4,
    nvlinkBytesPerSPerLink: NVLINK_BRIDGE_GA102,
    nvlinkBoard: false,
    pcieGen: 4,
    smiNames: ['NVIDIA RTX A6000'],
    source:
      'NVIDIA RTX A6000 datasheet: tensor 309.7 TFLOPS sparse (154.8 dense), FP32 38.7, 48 GB GDDR6, NVLink bridge 112.5 GB/s, PCIe Gen4',
  },
  {
    id: 'rtx-6000-ada',
    name: 'NVIDIA RTX 6000 Ada Generation (48 GB)',
    bf16Tflops: 364.2,
    fp16Tflops: 364.2,
    fp32Tflops: 91.1,
    memoryMiB: 49140,
    nvlinks: 0,
    nvlinkBytesPerSPerLink: 0,
    nvlinkBoard: false,
    pcieGen: 4,
    smiNames: ['NVIDIA RTX 6000 Ada Generation'],
    source:
      'NVIDIA RTX 6000 Ada datasheet: FP8 tensor 1,457 TFLOPS sparse, so BF16 dense 364.2; FP32 91.1; 48 GB GDDR6; no NVLink; PCIe Gen4',
  },
  {
    id: 'l40s',
    name: 'NVIDIA L40S (48 GB)',
    bf16Tflops: 362.05,
    fp16Tflops: 362.05,
    fp32Tflops: 91.6,
    memoryMiB: 46068,
    nvlinks: 0,
    nvlinkBytesPerSPerLink: 0,
    nvlinkBoard: false,
    pcieGen: 4,
    smiNames: ['NVIDIA L40S'],
    source:
      'NVIDIA L40S datasheet: BF16 tensor 362.05 TFLOPS (733 sparse), FP32 91.6, 48 GB GDDR6, no NVLink, PCIe Gen4 x16',
  },
  {
    id: 'a100-40',
    name: 'NVIDIA A100 SXM4 40 GB',
    bf16Tflops: 312,
    fp16Tflops: 312,
    fp32Tflops: 19.5,
    memoryMiB: 40960,
    nvlinks: 12,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: true,
    pcieGen: 4,
    smiNames: ['NVIDIA A100-SXM4-40GB', 'NVIDIA A100-PCIE-40GB', 'A100-SXM4-40GB'],
    source:
      'NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): BF16 tensor 312 TFLOPS (624 sparse), FP32 19.5, 40 GB HBM2, NVLink 600 GB/s (12 links; an HGX A100 board joins all 8 by NVSwitch), PCIe Gen4',
  },
  {
    id: 'a100-80',
    name: 'NVIDIA A100 SXM4 80 GB',
    bf16Tflops: 312,
    fp16Tflops: 312,
    fp32Tflops: 19.5,
    memoryMiB: 81920,
    nvlinks: 12,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: true,
    pcieGen: 4,
    smiNames: ['NVIDIA A100-SXM4-80GB', 'NVIDIA A100 80GB PCIe', 'A100-SXM4-80GB'],
    source: 'NVIDIA A100 datasheet: as a100-40, with 80 GB HBM2e',
  },
  {
    id: 'a800',
    name: 'NVIDIA A800 SXM4 80 GB',
    bf16Tflops: 312,
    fp16Tflops: 312,
    fp32Tflops: 19.5,
    memoryMiB: 81920,
    nvlinks: 8,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: true,
    pcieGen: 4,
    smiNames: ['NVIDIA A800-SXM4-80GB', 'NVIDIA A800 80GB PCIe'],
    source:
      'NVIDIA A800 datasheet: BF16 tensor 312 TFLOPS, FP32 19.5, 80 GB HBM2e, NVLink 400 GB/s (8 links, the export variant of the A100), PCIe Gen4',
  },
  {
    id: 'h100-pcie',
    name: 'NVIDIA H100 PCIe 80 GB',
    bf16Tflops: 756.5,
    fp16Tflops: 756.5,
    fp32Tflops: 51.2,
    memoryMiB: 81559,
    nvlinks: 0,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: false,
    pcieGen: 5,
    smiNames: ['NVIDIA H100 PCIe'],
    source:
      'NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100): PCIe BF16 tensor 1,513 TFLOPS sparse (756.5 dense), FP32 51, 80 GB HBM2e, PCIe Gen5 (NVLink bridges optional)',
  },
  {
    id: 'h100-sxm',
    name: 'NVIDIA H100 SXM5 80 GB',
    bf16Tflops: 989.4,
    fp16Tflops: 989.4,
    fp32Tflops: 66.9,
    memoryMiB: 81559,
    nvlinks: 18,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: true,
    pcieGen: 5,
    smiNames: ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 SXM5 80GB', 'NVIDIA H100'],
    source:
      'NVIDIA H100 datasheet: SXM BF16 tensor 1,979 TFLOPS sparse (989.4 dense), FP32 67, 80 GB HBM3, NVLink 900 GB/s (18 links, NVSwitch on HGX H100), PCIe Gen5',
  },
  {
    id: 'h800',
    name: 'NVIDIA H800 SXM5 80 GB',
    bf16Tflops: 989.4,
    fp16Tflops: 989.4,
    fp32Tflops: 66.9,
    memoryMiB: 81559,
    nvlinks: 8,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: true,
    pcieGen: 5,
    smiNames: ['NVIDIA H800', 'NVIDIA H800 80GB HBM3'],
    source:
      'NVIDIA H800 (the export variant of the H100 SXM): the H100 SXM compute, NVLink 400 GB/s (8 links), 80 GB HBM3',
  },
  {
    id: 'h200',
    name: 'NVIDIA H200 SXM 141 GB',
    bf16Tflops: 989.4,
    fp16Tflops: 989.4,
    fp32Tflops: 66.9,
    memoryMiB: 143771,
    nvlinks: 18,
    nvlinkBytesPerSPerLink: NVLINK_25,
    nvlinkBoard: true,
    pcieGen: 5,
    smiNames: ['NVIDIA H200', 'NVIDIA H200 NVL'],
    source:
      'NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200): BF16 tensor 1,979 TFLOPS sparse (989.4 dense), FP32 67, 141 GB HBM3e, NVLink 900 GB/s, PCIe Gen5',
  },
  {
    id: 'b200',
    name: 'NVIDIA B200 180 GB',
    bf16Tflops: 2250,
    fp16Tflops: 2250,
    fp32Tflops: 75,
    memoryMiB: 183359,
    nvlinks: 18,
    nvlinkBytesPerSPerLink: NVLINK_50,
    nvlinkBoard: true,
    pcieGen: 5,
    smiNames: ['NVIDIA B200'],
    source:
      'NVIDIA DGX B200 / HGX B200 datasheet: per GPU FP16/BF16 tensor 4.5 PFLOPS sparse (2.25 dense), FP32 75 TFLOPS, 180 GB HBM3e (1,440 GB per 8), NVLink 5 1.8 TB/s (18 links), PCIe Gen5',
  },
];

/** The GPU the step times assume when none is given (`--gpu`, `--detect`, the wizard's detection): an A100 80 GB. */
export const DEFAULT_GPU_ID = 'a100-80';
/** CPU cores per node assumed when none are given (`--cpu-cores`, `--detect`): an assumption, said where it is used. */
export const DEFAULT_HOST_CORES = 32;
/**
 * The fraction of a link's line rate NCCL's collectives and pinned host copies achieve: an assumption (nccl-tests'
 * bus bandwidth is measured against the same line rates; zerowiz assumes 80% of them on every link).
 */
export const LINK_EFFICIENCY = 0.8;
/** PCIe x16 line rate per direction by generation, bytes/s: 8, 16, 32 GT/s x 16 lanes x 128/130 (PCI-SIG). */
export const PCIE_X16_BYTES_PER_S: Record<GpuSpec['pcieGen'], number> = { 3: 15.75e9, 4: 31.5e9, 5: 63e9 };

/** The catalog's ids, in order. */
export function gpuIds(): string[] {
  return GPU_CATALOG.map((g) => g.id);
}

/** A catalog GPU by its id (or nvidia-smi name), case-insensitive; null when none. */
export function lookupGpu(name: string): GpuSpec | null {
  const q = name.trim().toLowerCase();
  if (q === '') return null;
  return GPU_CATALOG.find((g) => g.id === q || g.smiNames.some((s) => s.toLowerCase() === q)) ?? null;
}

/** A catalog GPU by name; NearMiss (one line, the near ids and the list) otherwise. */
export function findGpu(name: string, flag = '--gpu'): GpuSpec {
  const hit = lookupGpu(name);
  if (hit) return hit;
  throw new NearMiss(
    `unknown GPU '${name}'`,
    name,
    gpuIds(),
    `the catalog: ${gpuIds().join(', ')} (zerowiz estimate --list-gpus)`,
    flag,
  );
}

/** The default GPU (DEFAULT_GPU_ID). */
export function defaultGpu(): GpuSpec {
  return lookupGpu(DEFAULT_GPU_ID)!;
}

/**
 * The catalog GPU an nvidia-smi name stands for, or null: its exact name first, then the name's family with the
 * memory deciding between sizes (`NVIDIA A100-PCIE-40GB` -> a100-40; an unlisted `... A100 ... 80GB` -> a100-80).
 */
export function gpuOfSmiName(smiName: string, memoryBytes: number | null = null): GpuSpec | null {
  const exact = lookupGpu(smiName);
  if (exact) return exact;
  const n = smiName.toLowerCase();
  const gib = memoryBytes === null ? null : memoryBytes / 2 ** 30;
  const big = (threshold: number) => gib !== null && gib > threshold;
  const family: [RegExp, () => string][] = [
    [/\bb200\b/, () => 'b200'],
    [/\bh200\b/, () => 'h200'],
    [/\bh800\b/, () => 'h800'],
    [/\bh100\b.*pcie|\bh100\b.*nvl/, () => 'h100-pcie'],
    [/\bh100\b/, () => 'h100-sxm'],
    [/\ba800\b/, () => 'a800'],
    [/\ba100\b/, () => (big(48) ? 'a100-80' : 'a100-40')],
    [/\bl40s\b/, () => 'l40s'],
    [/rtx 6000 ada/, () => 'rtx-6000-ada'],
    [/rtx a6000/, () => 'a6000'],
    [/\ba40\b/, () => 'a40'],
    [/\ba10\b/, () => 'a10'],
    [/rtx 4090/, () => 'rtx-4090'],
    [/rtx 3090/, () => 'rtx-3090'],
    [/quadro rtx 8000/, () => 'quadro-rtx-8000'],
    [/quadro rtx 6000/, () => 'quadro-rtx-6000'],
    [/titan rtx/, () => 'titan-rtx'],
    [/\bv100/, () => (big(20) ? 'v100' : 'v100-16')],
    [/\bt4\b/, () => 't4'],
  ];
  const hit = family.find(([re]) => re.test(n));
  return hit ? lookupGpu(hit[1]()) : null;
}

/**
 * Dense peak FLOP/s of one GPU for a training precision: BF16 or FP16 tensor cores, FP32 for fp32; a GPU without
 * BF16 tensor cores (Volta, Turing) runs bf16 at its FP32 rate, and the caller says so.
 */
export function peakFlops(gpu: GpuSpec, precision: Precision): number {
  if (precision === 'fp32') return gpu.fp32Tflops * 1e12;
  if (precision === 'fp16') return gpu.fp16Tflops * 1e12;
  return (gpu.bf16Tflops ?? gpu.fp32Tflops) * 1e12;
}

/** The bytes the GPU's memory is, as nvidia-smi reports it. */
export function gpuMemoryBytes(gpu: GpuSpec): number {
  return gpu.memoryMiB * 2 ** 20;
}

/** PCIe bytes per second per direction a pinned copy achieves on this GPU's slot. */
export function pcieBytesPerS(gpu: GpuSpec): number {
  return PCIE_X16_BYTES_PER_S[gpu.pcieGen] * LINK_EFFICIENCY;
}

/** The link a node's collectives run on: its words, bytes per second per GPU per direction, and whether it was assumed. */
export interface LinkRate {
  link: string;
  bytesPerS: number;
  assumed: boolean;
}

/**
 * How one node's GPUs talk: NVLink with the detected link count (nvidia-smi topo -m, the gpu_links answer), PCIe
 * when detected so; when not detected, the GPU's usual box (NVSwitch boards: every link; PCIe cards: PCIe), said
 * assumed.
 */
export function intraNodeLink(gpu: GpuSpec, interconnect: Interconnect): LinkRate {
  const nvlink = (links: number, assumed: boolean): LinkRate => ({
    link: `NVLink x${links}${assumed ? ' (assumed)' : ''}`,
    bytesPerS: links * (gpu.nvlinkBytesPerSPerLink || NVLINK_25) * LINK_EFFICIENCY,
    assumed,
  });
  const pcie = (assumed: boolean): LinkRate => ({
    link: `PCIe ${gpu.pcieGen}.0${assumed ? ' (assumed)' : ''}`,
    bytesPerS: pcieBytesPerS(gpu),
    assumed,
  });
  if (interconnect.kind === 'nvlink' && interconnect.nvlinks) return nvlink(interconnect.nvlinks, false);
  if (interconnect.kind === 'pcie') return pcie(false);
  return gpu.nvlinkBoard ? nvlink(gpu.nvlinks, true) : pcie(true);
}

/** The network between nodes: NICs per node, each NIC's line rate, and how it was named. */
export interface Internode {
  nics: number;
  gbitPerNic: number;
  /** As it was given (`8xib-ndr`), or the default's words. */
  spec: string;
  assumed: boolean;
}

/** The named fabrics `--internode` takes, Gb/s per NIC (InfiniBand by generation, Ethernet by rate). */
export const FABRICS: Record<string, number> = {
  'ib-edr': 100,
  'ib-hdr': 200,
  'ib-ndr': 400,
  'ib-xdr': 800,
  'eth-10g': 10,
  'eth-25g': 25,
  'eth-100g': 100,
  'eth-200g': 200,
  'eth-400g': 400,
  'roce-100g': 100,
  'roce-200g': 200,
  'roce-400g': 400,
};

/** Between nodes when nothing is given: one 200 Gb/s HDR InfiniBand NIC per GPU, as a DGX A100 has. An assumption. */
export const DEFAULT_INTERNODE_SPEC = 'ib-hdr per GPU';

/** The default network for nodes of `gpusPerNode` GPUs (DEFAULT_INTERNODE_SPEC). */
export function defaultInternode(gpusPerNode: number): Internode {
  return { nics: gpusPerNode, gbitPerNic: FABRICS['ib-hdr']!, spec: DEFAULT_INTERNODE_SPEC, assumed: true };
}

/**
 * `--internode SPEC`: `[N x]FABRIC` or `[N x]RATE`, N the NICs per node (default 1): `ib-ndr`, `8xib-ndr`,
 * `eth-100g`, `400Gb`, `2x100Gb`. NearMiss naming the fabrics otherwise.
 */
export function parseInternode(text: string): Internode {
  const t = text.trim().toLowerCase().replace(/\s+/g, '');
  const m = /^(?:(\d{1,3})x)?(.+)$/.exec(t);
  const nics = m?.[1] !== undefined ? Number(m[1]) : 1;
  const body = m?.[2] ?? '';
  const rate = /^(\d+(?:\.\d+)?)(gb|gbit|gbps|g)$/.exec(body);
  const gbit = FABRICS[body] ?? (rate ? Number(rate[1]) : null);
  if (nics >= 1 && gbit !== null && gbit > 0 && gbit <= 100_000)
    return { nics, gbitPerNic: gbit, spec: text.trim(), assumed: false };
  throw new NearMiss(
    `--internode '${text}' is not a network zerowiz knows`,
    body || text,
    Object.keys(FABRICS),
    `give [NICs x]FABRIC or [NICs x]RATE per node: ${Object.keys(FABRICS).join(', ')}, or a rate like 400Gb (e.g. 8xib-ndr for one 400 Gb/s NIC per GPU)`,
    '--internode',
  );
}

/** Bytes per second the node's NICs move together, at LINK_EFFICIENCY of their line rate. */
export function internodeBytesPerS(net: Internode): number {
  return (net.nics * net.gbitPerNic * 1e9 * LINK_EFFICIENCY) / 8;
}

/** The network in words: `8 x 400 Gb/s per node`. */
export function describeInternode(net: Internode): string {
  return `${net.nics > 1 ? `${net.nics} x ` : ''}${net.gbitPerNic} Gb/s per node${net.assumed ? ` (assumed: ${net.spec})` : ''}`;
}
