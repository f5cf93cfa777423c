import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { facesPlugin } from '../../scripts/faces.mjs';
import { afterEach, describe, expect, it } from 'vitest';
import { groupAlive, trackedGroups, waitGroupGone } from '../../src/proc/group.js';
import { formatPeakVsEstimate } from '../../src/observe/peaks.js';
import { GpuTelemetry, parseTelemetryLine, visibleGpuIndices } from '../../src/observe/telemetry.js';
import { tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { barePath } from '../helpers/seal.js';

const FIXTURES = join(ROOT, '__tests__', 'fixtures');
const MIB = 2 ** 20;
const started: GpuTelemetry[] = [];

function smiEnv(extra: Record<string, string> = {}, bin = 'bin-nvidia'): NodeJS.ProcessEnv {
  return { PATH: `${join(FIXTURES, bin)}:${barePath()}`, ...extra };
}

function telemetry(env: NodeJS.ProcessEnv, gpus?: number[]) {
  const t = new GpuTelemetry({ env, intervalMs: 20, gpus });
  started.push(t);
  return t;
}

async function until(pred: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

afterEach(async () => {
  for (const t of started.splice(0)) await t.stop();
});

describe('nvidia-smi CSV lines', () => {
  it('reads index, memory used and total (MiB) and utilisation, and its bracketed non-values', () => {
    expect(parseTelemetryLine('3, 62669, 81559, 97')).toEqual({
      index: 3,
      usedBytes: 62669 * MIB,
      totalBytes: 81559 * MIB,
      utilPercent: 97,
    });
    expect(parseTelemetryLine('0, 1024, 81920, [N/A]')?.utilPercent).toBeNull();
    expect(parseTelemetryLine('1, [GPU is lost], [GPU is lost], [GPU is lost]')).toEqual({
      index: 1,
      usedBytes: null,
      totalBytes: null,
      utilPercent: null,
    });
    expect(parseTelemetryLine('No devices were found')).toBeNull();
    expect(parseTelemetryLine('0, NVIDIA H100 80GB HBM3, 81559')).toBeNull();
  });

  it('takes the GPUs a run sees from CUDA_VISIBLE_DEVICES when they are indices', () => {
    expect(visibleGpuIndices({ CUDA_VISIBLE_DEVICES: '0, 3' })).toEqual([0, 3]);
    expect(visibleGpuIndices({})).toBeNull();
    expect(visibleGpuIndices({ CUDA_VISIBLE_DEVICES: 'GPU-8f6d0a5e-1c2b' })).toBeNull();
  });
});

describe('live GPU telemetry (stand-in nvidia-smi, -lms loop)', () => {
  it('keeps each GPU’s peak per step, and the summary compares the highest with the estimate', async () => {
    const t = telemetry(smiEnv({ ZW_FAKE_GPU_USED_MIB: '1000,30000:30000:30000:62669:30000,40000' }));
    t.beginStep(0);
    t.start();
    expect(t.pgid).toBeGreaterThan(0);
    expect(trackedGroups()).toContain(t.pgid);
    await until(() => t.samples >= 24, 'three loops of 8 GPUs');
    t.endStep(0);
    t.beginStep(1);
    await until(() => t.peaksOf(1).length === 8, 'samples of step 1');
    expect(t.state).toBe('running');
    const peaks = t.peaksOf(0);
    expect(peaks.map((p) => p.usedBytes / MIB)).toEqual([40000, 40000, 40000, 62669, 40000, 40000, 40000, 40000]);
    expect(peaks[3]!.totalBytes).toBe(81559 * MIB);
    // After the ramp every loop says 40000: step 1 never saw GPU 3's 62669.
    expect(t.peaksOf(1)[3]!.usedBytes).toBe(40000 * MIB);
    expect(t.latest.get(7)?.utilPercent).toBe(97);
    expect(formatPeakVsEstimate(peaks, 58 * 2 ** 30)).toBe('peak 61.2 GiB on GPU 3 vs estimated 58.0 GiB (+6%)');
    const pgid = t.pgid!;
    await t.stop();
    expect(t.state).toBe('stopped');
    expect(groupAlive(pgid)).toBe(false);
    expect(trackedGroups()).not.toContain(pgid);
  });

  it('shows only the GPUs the run sees', async () => {
    const t = telemetry(smiEnv(), [0, 3]);
    t.start();
    await until(() => t.samples >= 4, 'samples');
    expect([...t.latest.keys()].sort()).toEqual([0, 3]);
  });

  it('an nvidia-smi that dies mid-run: "no GPU telemetry" with its reason, the peaks so far kept', async () => {
    const t = telemetry(
      smiEnv({ ZW_FAKE_NVIDIA_SMI: '1', ZW_FAKE_NVIDIA_SMI_LOOPS: '3', ZW_FAKE_NVIDIA_SMI_END: 'lost' }),
    );
    t.beginStep(0);
    t.start();
    await until(() => t.state === 'lost', 'telemetry lost');
    expect(t.reason).toBe(
      'nvidia-smi exited with code 15 after 3 samples: Unable to determine the device handle for GPU 00000000:18:00.0: GPU is lost.  Reboot the system to recover this GPU; GPU telemetry stopped (peaks so far kept)',
    );
    expect(t.peaksOf(0).length).toBe(1);
    const k = telemetry(
      smiEnv({ ZW_FAKE_NVIDIA_SMI: '1', ZW_FAKE_NVIDIA_SMI_LOOPS: '2', ZW_FAKE_NVIDIA_SMI_END: 'kill' }),
    );
    k.start();
    await until(() => k.state === 'lost', 'telemetry lost to SIGKILL');
    expect(k.reason).toContain('nvidia-smi was killed by SIGKILL after 2 samples');
  });

  it('no nvidia-smi, one that fails, one that lists no GPU: no telemetry, with the reason, never an error', async () => {
    const absent = telemetry(smiEnv({}, 'bin-empty'));
    absent.start();
    await until(() => absent.state === 'unavailable', 'absent');
    expect(absent.reason).toBe('nvidia-smi not found on PATH');
    const failing = telemetry(smiEnv({ ZW_FAKE_NVIDIA_SMI: 'fail' }));
    failing.start();
    await until(() => failing.state === 'unavailable', 'failing');
    expect(failing.reason).toBe(
      "nvidia-smi exited with code 9 without a sample: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
    );
    const none = telemetry(smiEnv({ ZW_FAKE_NVIDIA_SMI: 'garbage' }));
    none.start();
    await until(() => none.state === 'unavailable', 'no devices');
    expect(none.reason).toBe('nvidia-smi exited with code 6 without a sample: No devices were found');
    expect(absent.peaksOf(0)).toEqual([]);
  });

  it('never outlives zerowiz: a process that exits without stopping it takes nvidia-smi down too', async () => {
    const dir = tempDir('zw-telemetry-');
    await build({
      entryPoints: [join(ROOT, 'src', 'observe', 'telemetry.ts')],
      plugins: [facesPlugin(ROOT)],
      outfile: join(dir, 'telemetry.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'error',
    });
    writeFileSync(
      join(dir, 'main.mjs'),
      `import { GpuTelemetry } from './telemetry.mjs';
let said = false;
const t = new GpuTelemetry({ env: JSON.parse(process.argv[2]), intervalMs: 20, onUpdate: () => {
  if (said || t.samples === 0) return;
  said = true;
  process.stdout.write(String(t.pgid) + '\\n');
  setTimeout(() => process.exit(0), 20);
} });
t.start();
`,
    );
    const child = spawn(process.execPath, [join(dir, 'main.mjs'), JSON.stringify(smiEnv())], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    await new Promise((r) => child.on('exit', r));
    const pgid = Number(out.trim());
    expect(pgid).toBeGreaterThan(0);
    expect(await waitGroupGone(pgid, 10_000)).toBe(true);
  });
});
