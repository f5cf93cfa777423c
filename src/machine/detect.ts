/**
 * GPU and host detection: nvidia-smi for GPUs, the OS for CPU memory, statfs for NVMe free space.
 * Never throws: anything missing or failing is reported as "not detected" with a reason.
 */
import { statfs } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import { runBounded } from '../proc/index.js';
import type { Interconnect } from '../config/index.js';
import { formatGiB } from '../text/index.js';

/** How long nvidia-smi may take before it counts as failed. */
export const NVIDIA_SMI_TIMEOUT_MS = 5000;
/** The exact query zerowiz runs. */
export const NVIDIA_SMI_ARGS = ['--query-gpu=index,name,memory.total', '--format=csv,noheader,nounits'] as const;

/** One GPU as nvidia-smi reports it. */
export interface GpuInfo {
  index: number;
  name: string;
  /** memory.total in bytes (nvidia-smi reports MiB). */
  memoryBytes: number;
}

/** The result of asking nvidia-smi. */
export interface GpuDetection {
  /** True when nvidia-smi ran and listed at least one GPU. */
  detected: boolean;
  gpus: GpuInfo[];
  /** True when the GPUs differ in name or memory. */
  mixed: boolean;
  /** The smallest GPU memory (what ZeRO's even sharding must fit), or null. */
  minMemoryBytes: number | null;
  /** Why nothing was detected (missing command, exit code, unparsable output), or null. */
  reason: string | null;
}

/** Options for detection: the environment (PATH) for the child and a timeout. */
export interface DetectOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Parses `index, name, memory.total` CSV lines (noheader, nounits; memory in MiB). Throws on a bad line. */
export function parseNvidiaSmiCsv(text: string): GpuInfo[] {
  const gpus: GpuInfo[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const parts = line.split(',').map((p) => p.trim());
    // Names do not contain commas in practice; be lenient and join the middle just in case.
    if (parts.length < 3) throw new Error(`unexpected nvidia-smi line: ${line}`);
    const index = Number(parts[0]);
    const mib = Number(parts[parts.length - 1]);
    const name = parts.slice(1, -1).join(',');
    if (!Number.isInteger(index) || !Number.isFinite(mib) || mib <= 0 || name === '')
      throw new Error(`unexpected nvidia-smi line: ${line}`);
    gpus.push({ index, name, memoryBytes: Math.round(mib * 2 ** 20) });
  }
  return gpus;
}

/** Runs nvidia-smi (argument array, no shell, short timeout) and reports the GPUs. */
export async function detectGpus(opts: DetectOptions = {}): Promise<GpuDetection> {
  const none = (reason: string): GpuDetection => ({
    detected: false,
    gpus: [],
    mixed: false,
    minMemoryBytes: null,
    reason,
  });
  const timeoutMs = opts.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS;
  // Bounded in time and in its own process group (../proc/bounded.ts).
  const result = await runBounded('nvidia-smi', [...NVIDIA_SMI_ARGS], { env: opts.env ?? process.env, timeoutMs });
  if (result.error?.code === 'ENOENT') return none('nvidia-smi not found on PATH');
  if (result.error) return none(`nvidia-smi could not be run: ${result.error.message.split('\n')[0]}`);
  if (result.timedOut) return none(`nvidia-smi did not answer within ${timeoutMs} ms`);
  if (result.code !== 0) {
    const first = (result.stderr || result.stdout).split('\n')[0]?.trim() ?? '';
    return none(`nvidia-smi failed (exit ${result.code ?? result.signal ?? 'unknown'})${first ? `: ${first}` : ''}`);
  }
  let gpus: GpuInfo[];
  try {
    gpus = parseNvidiaSmiCsv(result.stdout.trimEnd());
  } catch (err) {
    return none(err instanceof Error ? err.message : String(err));
  }
  if (gpus.length === 0) return none('nvidia-smi listed no GPUs');
  const first = gpus[0]!;
  const mixed = gpus.some((g) => g.name !== first.name || g.memoryBytes !== first.memoryBytes);
  return { detected: true, gpus, mixed, minMemoryBytes: Math.min(...gpus.map((g) => g.memoryBytes)), reason: null };
}

/** The exact arguments zerowiz runs to read how the GPUs are linked. */
export const NVIDIA_SMI_TOPO_ARGS = ['topo', '-m'] as const;

/**
 * Parses `nvidia-smi topo -m`: a tab-separated matrix whose header names GPU0..GPUn (then NICs and the
 * affinity columns) and whose GPU rows say, per pair, `X` (self), `NV#` (a bonded set of # NVLinks) or a
 * PCIe path (PIX, PXB, PHB, NODE, SYS). NVLink when every GPU pair shows NV#, with the smallest #;
 * PCIe when some pair does not; unknown for one GPU or output it cannot read.
 */
export function parseTopology(text: string): Interconnect {
  const lines = text.split(/\r?\n/);
  // The header is the first line naming GPU0; it starts with an empty cell above the row labels.
  const header = lines.find((l) => /\bGPU0\b/.test(l));
  if (!header) return { kind: 'unknown', nvlinks: null };
  const cols = header.split('\t').map((c) => c.trim());
  if (cols[0] !== '') cols.unshift('');
  const gpuCols = cols.map((c, i) => (/^GPU\d+$/.test(c) ? i : -1)).filter((i) => i >= 0);
  if (gpuCols.length < 2) return { kind: 'unknown', nvlinks: null };
  let minLinks: number | null = null;
  let rows = 0;
  for (const line of lines) {
    if (line === header) continue;
    const cells = line.split('\t').map((c) => c.trim());
    if (!/^GPU\d+$/.test(cells[0] ?? '')) continue;
    rows++;
    for (const i of gpuCols) {
      const cell = cells[i] ?? '';
      if (cell === 'X' || cell === '') continue;
      const nv = /^NV(\d+)$/.exec(cell);
      if (!nv) return { kind: 'pcie', nvlinks: null };
      const links = Number(nv[1]);
      minLinks = minLinks === null ? links : Math.min(minLinks, links);
    }
  }
  if (rows < 2 || minLinks === null) return { kind: 'unknown', nvlinks: null };
  return { kind: 'nvlink', nvlinks: minLinks };
}

/** Runs `nvidia-smi topo -m` (argument array, short timeout); unknown when it is missing or fails. */
export async function detectInterconnect(opts: DetectOptions = {}): Promise<Interconnect> {
  const result = await runBounded('nvidia-smi', [...NVIDIA_SMI_TOPO_ARGS], {
    env: opts.env ?? process.env,
    timeoutMs: opts.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS,
  });
  if (result.code !== 0) return { kind: 'unknown', nvlinks: null };
  return parseTopology(result.stdout);
}

/** The GPU links in words: `GPUs linked by NVLink x18`, `GPUs linked over PCIe`, `GPU links not detected`. */
export function describeInterconnect(i: Interconnect): string {
  if (i.kind === 'nvlink') return `GPUs linked by NVLink x${i.nvlinks}`;
  if (i.kind === 'pcie') return 'GPUs linked over PCIe';
  return 'GPU links not detected';
}

/** Total CPU memory of this machine in bytes (the OS's figure). */
export function detectCpuMemory(): number {
  return totalmem();
}

/** CPU threads this process may run on (the OS's count: cores, or hardware threads with SMT). */
export function detectCpuCores(): number {
  return availableParallelism();
}

/** Free bytes available to this user at `path` (statfs bavail x bsize), or null if it cannot be read. */
export async function nvmeFreeBytes(path: string): Promise<number | null> {
  try {
    const s = await statfs(path);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return null;
  }
}

/** GPUs, CPU memory, GPU links and (when asked) NVMe free space together. */
export interface HostDetection {
  gpu: GpuDetection;
  cpuMemoryBytes: number;
  /** CPU threads of this machine (detectCpuCores). */
  cpuCores: number;
  nvmePath: string | null;
  nvmeFreeBytes: number | null;
  /** How the GPUs are linked (nvidia-smi topo -m); unknown when not asked or not detected. */
  interconnect: Interconnect;
}

/** Detects everything the estimator can use (`topology`: also run `nvidia-smi topo -m` when GPUs were found). */
export async function detectHost(
  opts: DetectOptions & { nvmePath?: string | null; topology?: boolean } = {},
): Promise<HostDetection> {
  const [gpu, nvme] = await Promise.all([
    detectGpus(opts),
    opts.nvmePath ? nvmeFreeBytes(opts.nvmePath) : Promise.resolve(null),
  ]);
  const interconnect: Interconnect =
    opts.topology && gpu.detected && gpu.gpus.length > 1
      ? await detectInterconnect(opts)
      : { kind: 'unknown', nvlinks: null };
  return {
    gpu,
    cpuMemoryBytes: detectCpuMemory(),
    cpuCores: detectCpuCores(),
    nvmePath: opts.nvmePath ?? null,
    nvmeFreeBytes: nvme,
    interconnect,
  };
}

/** One line describing detected GPUs, e.g. `8 x NVIDIA H100 80GB HBM3 (79.6 GiB)` or a mixed list. */
export function describeGpus(d: GpuDetection): string {
  if (!d.detected) return `GPUs not detected (${d.reason ?? 'unknown reason'})`;
  const groups = new Map<string, number>();
  for (const g of d.gpus) {
    const key = `${g.name} (${formatGiB(g.memoryBytes)})`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const text = [...groups].map(([k, c]) => `${c} x ${k}`).join(' + ');
  return d.mixed ? `mixed GPUs: ${text}; sizing for the smallest` : text;
}
