/**
 * The GPU checks: `cuda-driver` (the torch wheel's CUDA against the CUDA the driver supports, as nvidia-smi's
 * header says it) and `gpus` (enough GPUs visible for the processes per node, bf16 on compute capability 8.0
 * or newer, memory other processes already hold). Measuring: two nvidia-smi calls (argument arrays, short
 * timeouts). Judging: pure functions of that and the probe.
 */
import { runBounded } from '../proc/index.js';
import { NVIDIA_SMI_TIMEOUT_MS } from '../machine/index.js';
import { shellJoin } from '../text/index.js';
import { formatBytesShort } from '../text/index.js';
import type { CheckPlan } from './plan.js';
import type { ProbeResult } from './probe.js';
import { type CheckResult, failed, passed, skipped, warned } from './types.js';

/** The query of the GPUs, their memory in use, the driver and the compute capability (memory in MiB). */
export const NVIDIA_SMI_CHECK_FIELDS = [
  'index',
  'name',
  'memory.total',
  'memory.used',
  'driver_version',
  'compute_cap',
];
/** Bytes of GPU memory in use by others above which the GPU counts as busy. */
export const GPU_BUSY_BYTES = 2 ** 30;
/**
 * The oldest driver each CUDA major version runs on through CUDA's minor version compatibility (NVIDIA's CUDA
 * Toolkit release notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version
 * Compatibility", Linux): a cu12x torch wheel needs at least 525.60.13.
 */
export const MIN_DRIVER_FOR_CUDA_MAJOR: Readonly<Record<number, string>> = {
  11: '450.80.02',
  12: '525.60.13',
  13: '580.65.06',
};
/** The CUDA builds of torch on download.pytorch.org (cuXY index names), newest last. */
export const TORCH_CUDA_INDEXES = ['cu118', 'cu121', 'cu124', 'cu126', 'cu128', 'cu129', 'cu130'] as const;
/** Compute capability from which the GPU computes in bf16 (Ampere). */
export const BF16_MIN_CAPABILITY = 8.0;

/** One GPU as the check's query reports it. */
export interface DriverGpu {
  index: number;
  name: string;
  totalBytes: number;
  usedBytes: number;
  /** `8.0`; from the GPU's name when the driver is older than the compute_cap field; null when neither says. */
  computeCap: number | null;
}

/** What nvidia-smi says of the driver and the GPUs. */
export interface DriverInfo {
  /** nvidia-smi ran and listed GPUs. */
  found: boolean;
  /** Why not. */
  reason: string | null;
  /** `570.86.10`. */
  driver: string | null;
  /** The CUDA version the driver supports (nvidia-smi's header: `CUDA Version: 12.8`). */
  cuda: string | null;
  gpus: DriverGpu[];
  /** The GPUs a process here sees (CUDA_VISIBLE_DEVICES), null when it is not set. */
  visible: number[] | null;
  /** CUDA_VISIBLE_DEVICES as set, or null. */
  visibleEnv: string | null;
}

/** `Driver Version: 570.86.10   CUDA Version: 12.8` in nvidia-smi's default output. */
export function parseSmiHeader(text: string): { driver: string | null; cuda: string | null } {
  const m = /Driver Version:\s*([0-9.]+)\s+CUDA Version:\s*([0-9.]+)/.exec(text);
  if (m) return { driver: m[1]!, cuda: m[2]! };
  const d = /Driver Version:\s*([0-9.]+)/.exec(text);
  return { driver: d ? d[1]! : null, cuda: null };
}

/** Rows of the check's query (index, name, total MiB, used MiB, driver, compute_cap when asked). */
export function parseCheckQuery(text: string, withCap: boolean): { gpus: DriverGpu[]; driver: string | null } {
  const gpus: DriverGpu[] = [];
  let driver: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const p = line.split(',').map((x) => x.trim());
    const n = withCap ? 6 : 5;
    if (p.length < n) continue;
    const tail = p.slice(p.length - (n - 2));
    const index = Number(p[0]);
    const name = p.slice(1, p.length - (n - 2)).join(',');
    const total = Number(tail[0]);
    const used = Number(tail[1]);
    if (!Number.isInteger(index) || !Number.isFinite(total)) continue;
    driver = tail[2] ?? driver;
    const cap = withCap ? Number(tail[3]) : Number.NaN;
    gpus.push({
      index,
      name,
      totalBytes: Math.round(total * 2 ** 20),
      usedBytes: Number.isFinite(used) ? Math.round(used * 2 ** 20) : 0,
      computeCap: Number.isFinite(cap) ? cap : capabilityFromName(name),
    });
  }
  return { gpus, driver };
}

/** The GPU indexes CUDA_VISIBLE_DEVICES lets a process see (UUIDs count by number), or null when unset. */
export function visibleDevices(env: NodeJS.ProcessEnv, gpus: readonly DriverGpu[]): number[] | null {
  const v = env.CUDA_VISIBLE_DEVICES;
  if (v === undefined) return null;
  const out: number[] = [];
  // CUDA stops at the first entry it cannot parse; an empty value hides every GPU.
  for (const part of v.split(',')) {
    const t = part.trim();
    if (/^\d+$/.test(t)) {
      if (gpus.some((g) => g.index === Number(t))) out.push(Number(t));
      else break;
    } else if (/^(GPU|MIG)-/.test(t)) out.push(out.length);
    else break;
  }
  return out;
}

async function smi(args: string[], env: NodeJS.ProcessEnv) {
  const r = await runBounded('nvidia-smi', args, { env, timeoutMs: NVIDIA_SMI_TIMEOUT_MS });
  return { ...r, failed: r.code !== 0 };
}

/** Asks nvidia-smi (the query, and the plain table for its header's CUDA version); never throws. */
export async function measureDriver(env: NodeJS.ProcessEnv = process.env): Promise<DriverInfo> {
  const none = (reason: string): DriverInfo => ({
    found: false,
    reason,
    driver: null,
    cuda: null,
    gpus: [],
    visible: null,
    visibleEnv: null,
  });
  const format = '--format=csv,noheader,nounits';
  try {
    const [q, plain] = await Promise.all([
      smi([`--query-gpu=${NVIDIA_SMI_CHECK_FIELDS.join(',')}`, format], env),
      smi([], env),
    ]);
    if (q.error?.code === 'ENOENT') return none('nvidia-smi not found on PATH');
    let withCap = true;
    let query = q;
    // Drivers older than the compute_cap field refuse the whole query: ask again without it.
    if (q.failed && /not a valid field/i.test(`${q.stdout}${q.stderr}`)) {
      withCap = false;
      query = await smi([`--query-gpu=${NVIDIA_SMI_CHECK_FIELDS.slice(0, -1).join(',')}`, format], env);
    }
    if (query.failed) {
      const first =
        String(query.stdout || query.stderr || '')
          .split('\n')[0]
          ?.trim() ?? '';
      return none(
        query.timedOut
          ? `nvidia-smi did not answer within ${NVIDIA_SMI_TIMEOUT_MS} ms`
          : `nvidia-smi failed (exit ${query.code ?? query.signal ?? 'unknown'})${first ? `: ${first}` : ''}`,
      );
    }
    const { gpus, driver } = parseCheckQuery(String(query.stdout), withCap);
    if (gpus.length === 0) return none('nvidia-smi listed no GPUs');
    const header = plain.failed ? { driver: null, cuda: null } : parseSmiHeader(String(plain.stdout));
    return {
      found: true,
      reason: null,
      driver: driver ?? header.driver,
      cuda: header.cuda,
      gpus,
      visible: visibleDevices(env, gpus),
      visibleEnv: env.CUDA_VISIBLE_DEVICES ?? null,
    };
  } catch (e) {
    return none(`nvidia-smi could not be run: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** `12.4` -> [12, 4]; null for anything else. */
export function majorMinor(v: string | null | undefined): [number, number] | null {
  const m = /^(\d+)\.(\d+)/.exec(v ?? '');
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** Compares dotted versions numerically (`525.60.13` < `535.54.03`). */
export function compareDotted(a: string, b: string): number {
  const pa = a.split('.').map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The torch CUDA build for a driver supporting CUDA `cuda` (its index name): the newest no newer than the
 * driver's CUDA, else the newest of the same major version (it runs through CUDA's minor version
 * compatibility); null when none fits.
 */
export function torchIndexFor(cuda: string | null): string | null {
  const mm = majorMinor(cuda);
  if (!mm) return null;
  const of = (ix: string) => [Math.floor(Number(ix.slice(2)) / 10), Number(ix.slice(2)) % 10] as const;
  const exact = TORCH_CUDA_INDEXES.filter((ix) => {
    const [major, minor] = of(ix);
    return major < mm[0] || (major === mm[0] && minor <= mm[1]);
  });
  const same = TORCH_CUDA_INDEXES.filter((ix) => of(ix)[0] === mm[0]);
  const pick = exact.length > 0 && of(exact[exact.length - 1]!)[0] === mm[0] ? exact : same.length > 0 ? same : exact;
  return pick[pick.length - 1] ?? null;
}

/** Compute capability by GPU family, for drivers too old to report it (no compute_cap field before R510). */
const CAPABILITY_BY_NAME: readonly [RegExp, number][] = [
  [/\bK80\b|\bK40\b/, 3.7],
  [/\bP100\b/, 6.0],
  [/\bP40\b|\bP4\b|GTX 10\d0|TITAN Xp/, 6.1],
  [/\bV100\b|TITAN V\b/, 7.0],
  [/\bT4\b|RTX 20\d0|TITAN RTX|Quadro RTX/, 7.5],
  [/\bA100\b|\bA30\b/, 8.0],
  [/\bA10\b|\bA40\b|RTX 30\d0|RTX A\d000/, 8.6],
  [/RTX 40\d0|\bL4\b|\bL40/, 8.9],
  [/\bH100\b|\bH200\b|\bH800\b|GH200/, 9.0],
];

/** A GPU's compute capability from its name (null for a name not in the table). */
export function capabilityFromName(name: string): number | null {
  return CAPABILITY_BY_NAME.find(([re]) => re.test(name))?.[1] ?? null;
}

function reinstallTorch(python: string, index: string | null): string {
  return shellJoin([
    python,
    '-m',
    'pip',
    'install',
    '--force-reinstall',
    'torch',
    '--index-url',
    `https://download.pytorch.org/whl/${index ?? 'cu126'}`,
  ]);
}

function driverText(d: DriverInfo): string {
  if (!d.found) return `no NVIDIA driver answered (${d.reason})`;
  return `driver ${d.driver ?? 'unknown'}${d.cuda ? `, which supports CUDA up to ${d.cuda}` : ''}`;
}

/** `cuda-driver`: can this torch use this driver? */
export function judgeCudaDriver(d: DriverInfo, probe: ProbeResult | null): CheckResult {
  const id = 'cuda-driver';
  const t = probe?.torch;
  if (!probe || !t) {
    if (!d.found)
      return failed(
        id,
        `${driverText(d)}; torch not checked (see python)`,
        'an NVIDIA driver (nvidia-smi answers) and a CUDA build of torch it supports',
        'install the NVIDIA driver for your GPUs (nvidia-smi must answer), then a CUDA build of torch',
      );
    return skipped(id, `${driverText(d)}; torch could not be imported, so its CUDA is unknown (see python)`);
  }
  const torchV = probe.packages.torch.version ?? 'unknown';
  const py = probe.python.executable;
  if (t.hip !== null)
    return passed(id, `torch ${torchV} is a ROCm build (HIP ${t.hip}); the NVIDIA driver is not used`, 'ROCm');
  if (t.cuda === null) {
    const index = torchIndexFor(d.cuda);
    return failed(
      id,
      `torch ${torchV} is a CPU-only build (torch.version.cuda is None); ${driverText(d)}`,
      'a CUDA build of torch that the driver supports (DeepSpeed trains on the GPUs)',
      d.found
        ? reinstallTorch(py, index)
        : `install the NVIDIA driver (nvidia-smi must answer), then ${reinstallTorch(py, null)}`,
    );
  }
  const wheel = majorMinor(t.cuda)!;
  const need = `a driver that supports CUDA ${t.cuda} (torch ${torchV} is built for it; at least ${MIN_DRIVER_FOR_CUDA_MAJOR[wheel[0]] ?? 'a matching'} for CUDA ${wheel[0]}.x)`;
  const tooOld = t.warnings.find((w) => /driver .*too old|found version/i.test(w));
  if (!d.found)
    return failed(
      id,
      `torch ${torchV} is built for CUDA ${t.cuda}; ${driverText(d)}`,
      need,
      'install the NVIDIA driver and check that `nvidia-smi` answers',
    );
  const drv = majorMinor(d.cuda);
  const min = MIN_DRIVER_FOR_CUDA_MAJOR[wheel[0]];
  const measured = `torch ${torchV} is built for CUDA ${t.cuda}; ${driverText(d)}`;
  const upgrade = `upgrade the NVIDIA driver to ${min ?? `one for CUDA ${t.cuda}`} or newer, or ${reinstallTorch(py, torchIndexFor(d.cuda))}`;
  if (tooOld || (drv && drv[0] < wheel[0]) || (min && d.driver && compareDotted(d.driver, min) < 0))
    return failed(id, `${measured}${tooOld ? `; torch says: ${tooOld.split('\n')[0]}` : ''}`, need, upgrade);
  if (t.cudaAvailable === false)
    return failed(
      id,
      `${measured}; torch.cuda.is_available() is False${t.warnings.length > 0 ? `: ${t.warnings[0]!.split('\n')[0]}` : ''}`,
      need,
      'check that the GPUs are visible here (CUDA_VISIBLE_DEVICES, the container runtime: docker run --gpus all)',
    );
  if (drv && drv[0] === wheel[0] && drv[1] < wheel[1])
    return warned(
      id,
      `${measured}: it runs through CUDA's minor version compatibility, but kernels that need a newer PTX JIT fail`,
      need,
      upgrade,
    );
  return passed(id, measured, need);
}

/** `gpus`: are there GPUs enough for the processes, do they do bf16, are they free? */
export function judgeGpus(plan: CheckPlan, d: DriverInfo): CheckResult {
  const id = 'gpus';
  const p = plan.processesPerNode;
  const need = `${p} GPU(s) for ${p} process(es) per node${plan.precision === 'bf16' ? `, compute capability ${BF16_MIN_CAPABILITY.toFixed(1)} for bf16` : ''}${plan.estimate ? `, ${formatBytesShort(plan.estimate.gpuBytesPerGpu)} free on each (the estimate's peak)` : ''}`;
  if (!d.found) return skipped(id, `not checked: ${d.reason} (see cuda-driver)`, need);
  const seen = d.visible === null ? d.gpus : d.gpus.filter((g) => d.visible!.includes(g.index));
  const used = seen.slice(0, p);
  const names = [...new Set(seen.map((g) => g.name))].join(', ');
  const measured = `${seen.length} GPU(s) visible${d.visible !== null ? ` (CUDA_VISIBLE_DEVICES=${d.visibleEnv ?? ''})` : ''}: ${names || 'none'}`;
  if (seen.length < p)
    return failed(
      id,
      measured,
      need,
      `run ${seen.length} process(es) per node (--num-processes ${seen.length * plan.numMachines}), or make ${p} GPUs visible (CUDA_VISIBLE_DEVICES)`,
    );
  const old = used.filter((g) => g.computeCap !== null && g.computeCap < BF16_MIN_CAPABILITY);
  if (plan.precision === 'bf16' && old.length > 0)
    return failed(
      id,
      `${measured}; GPU ${old.map((g) => g.index).join(', ')} (${old[0]!.name}) has compute capability ${old[0]!.computeCap!.toFixed(1)}`,
      need,
      'train in fp16 (--mixed-precision fp16), or on GPUs of compute capability 8.0 or newer (A100, H100, RTX 30xx and later)',
    );
  const peak = plan.estimate?.gpuBytesPerGpu ?? null;
  const short = used.filter((g) => peak !== null && g.totalBytes - g.usedBytes < peak);
  const busy = used.filter((g) => g.usedBytes >= GPU_BUSY_BYTES);
  const busyText = busy.map((g) => `GPU ${g.index} has ${formatBytesShort(g.usedBytes)} in use`).join(', ');
  if (short.length > 0 && busy.some((g) => short.includes(g)))
    return failed(
      id,
      `${measured}; ${busyText} by other processes`,
      need,
      `stop what holds the GPUs (nvidia-smi lists the processes), or pick free ones with CUDA_VISIBLE_DEVICES`,
    );
  if (busy.length > 0)
    return warned(
      id,
      `${measured}; ${busyText} by other processes`,
      need,
      'nvidia-smi lists the processes that hold them',
    );
  const unknownCap = plan.precision === 'bf16' && used.some((g) => g.computeCap === null);
  return passed(
    id,
    `${measured}${unknownCap ? '; compute capability not reported by this driver' : ''}${peak !== null ? `; at least ${formatBytesShort(Math.min(...used.map((g) => g.totalBytes - g.usedBytes)))} free on each GPU used` : ''}`,
    need,
  );
}
