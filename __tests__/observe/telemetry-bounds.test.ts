/**
 * nvidia-smi's rows are input like any other: bounded and rejected when they cannot be a GPU's (memory
 * above 64 TiB, negative, fractional MiB, more used than the total, utilisation outside 0-100), so the
 * record never holds a float or a negative byte count. Telemetry that ends with no peak says why: a
 * hanging nvidia-smi, rows without memory figures ([N/A]), rows zerowiz rejected.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { liveStepJson } from '../../src/observe/live.js';
import { StepMetrics } from '../../src/observe/metrics/step-metrics.js';
import { GpuTelemetry, parseTelemetryLine } from '../../src/observe/telemetry.js';
import { hasControl } from '../../src/text/printable.js';
import { ROOT } from '../helpers/paths.js';
import { barePath } from '../helpers/seal.js';

const MIB = 2 ** 20;
const dirs: string[] = [];
const started: GpuTelemetry[] = [];
afterEach(async () => {
  for (const t of started.splice(0)) await t.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** An nvidia-smi that prints `rows` once per loop (and `stderr` once), looping until stopped. */
function smi(rows: string[], stderr = ''): NodeJS.ProcessEnv {
  const d = mkdtempSync(join(tmpdir(), 'zw-smi-'));
  dirs.push(d);
  writeFileSync(
    join(d, 'nvidia-smi'),
    `#!/bin/sh\nprintf '%s' ${JSON.stringify(stderr)} >&2\nwhile :; do printf '%s\\n' ${rows.map((r) => JSON.stringify(r)).join(' ')}; sleep 0.02; done\n`,
  );
  chmodSync(join(d, 'nvidia-smi'), 0o755);
  return { PATH: `${d}:${barePath()}` };
}

function telemetry(env: NodeJS.ProcessEnv): GpuTelemetry {
  const t = new GpuTelemetry({ env, intervalMs: 100 });
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

const record = (t: GpuTelemetry) =>
  liveStepJson({
    metrics: new StepMetrics(),
    peaks: t.peaksOf(0),
    telemetry: t.state,
    telemetryReason: t.reason,
    alerts: [],
  });

describe("nvidia-smi's rows are bounded", () => {
  it('rejects a row that cannot be a GPU: huge, negative, fractional, used above total, utilisation out of range', () => {
    for (const row of [
      '0, 99999999999999999999, 81559, 97',
      '0, 1024, 99999999999999999999, 97',
      '0, 1024, -5, 97',
      '0, -1, 81559, 97',
      '0, 1024.5, 81559, 97',
      '0, 90000, 81559, 97',
      '0, 1024, 81559, 250',
      '0, 1024, 81559, -3',
      '99999, 1024, 81559, 97',
      '0, 1e3, 81559, 97',
      '0, 0x10, 81559, 97',
    ])
      expect(parseTelemetryLine(row), row).toBeNull();
    expect(parseTelemetryLine('0, 1024, 81559, 97')).toEqual({
      index: 0,
      usedBytes: 1024 * MIB,
      totalBytes: 81559 * MIB,
      utilPercent: 97,
    });
    expect(parseTelemetryLine('0, [N/A], [N/A], [N/A]')).toEqual({
      index: 0,
      usedBytes: null,
      totalBytes: null,
      utilPercent: null,
    });
  });
});

describe('telemetry with no peak says why', () => {
  it('only rows zerowiz rejects: no peak in the record, and the reason names the row', async () => {
    const t = telemetry(smi(['0, 99999999999999999999, 81559, 97', '1, 1024, -5, 97']));
    t.beginStep(0);
    t.start();
    await until(() => (t.reason ?? '').includes('rejects'), 'the rejected rows');
    await t.stop();
    const live = record(t);
    expect(live.gpu.peaks).toEqual([]);
    expect(live.gpu.reason).toMatch(/rejects.*99999999999999999999/);
    expect(live.gpu.telemetry).not.toBe('ok');
  });

  it('only [N/A] memory: the reason says nvidia-smi gives no memory figure', async () => {
    const t = telemetry(smi(['0, [N/A], [N/A], 97']));
    t.beginStep(0);
    t.start();
    await until(() => t.state === 'running', 'rows');
    await t.stop();
    const live = record(t);
    expect(live.gpu.peaks).toEqual([]);
    expect(live.gpu.reason).toMatch(/no memory figure/);
  });

  it('a hanging nvidia-smi (no row at all): the reason says it printed nothing', async () => {
    const t = telemetry({
      PATH: `${join(ROOT, '__tests__', 'fixtures', 'bin-nvidia')}:${barePath()}`,
      ZW_FAKE_NVIDIA_SMI: '1',
      ZW_FAKE_NVIDIA_SMI_LOOPS: '0',
      ZW_FAKE_NVIDIA_SMI_END: 'hang',
    });
    t.beginStep(0);
    t.start();
    await t.stop();
    const live = record(t);
    expect(live.gpu.peaks).toEqual([]);
    expect(live.gpu.reason).toMatch(/printed no sample/);
    expect(live.gpu.telemetry).not.toBe('ok');
  });

  it("nvidia-smi's own words are shown escaped", async () => {
    const d = mkdtempSync(join(tmpdir(), 'zw-smi-'));
    dirs.push(d);
    writeFileSync(join(d, 'nvidia-smi'), "#!/bin/sh\nprintf 'Failed \\033]0;pwned\\007 to init\\n' >&2\nexit 9\n");
    chmodSync(join(d, 'nvidia-smi'), 0o755);
    const t = telemetry({ PATH: `${d}:${barePath()}` });
    t.start();
    await until(() => t.state === 'unavailable', 'unavailable');
    expect(t.reason).toContain('Failed \\x1b]0;pwned\\x07 to init');
    expect(hasControl(t.reason!)).toBe(false);
  });
});
