import { describe, expect, it } from 'vitest';
import { normalizeInput, type NormalizedInput } from '../../src/estimate/estimate.js';
import {
  DISK_WRITE_BYTES_PER_S,
  NCCL_TIMEOUT_S,
  saveCost,
  saveCostOfSetup,
  saveCostText,
} from '../../src/estimate/gather.js';
import { loadModelCatalog } from '../../src/estimate/models.js';
import { LINK_EFFICIENCY } from '../../src/estimate/gpus.js';
import { NVME_BYTES_PER_S } from '../../src/estimate/time.js';

/** The links of the default GPU (an A100 80 GB: NVLink 3 at 25 GB/s a link, PCIe 4.0), at the links' efficiency. */
const NVLINK_BYTES_PER_S_PER_LINK = 25e9 * LINK_EFFICIENCY;
const PCIE_BYTES_PER_S = 31.5e9 * LINK_EFFICIENCY;
import { withDefaults } from '../../src/config/questions.js';
import { loadPreset } from '../../src/setups/presets.js';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { formatBytesShort } from '../../src/text/format.js';

const P = 20_430_401_088;
const L = 56_641_536;
const T = 235_929_600;

function input(gpus: number, extra: Partial<Parameters<typeof normalizeInput>[0]> = {}): NormalizedInput {
  return normalizeInput({
    params: P,
    largestLayer: L,
    gpusPerNode: gpus,
    nodes: 1,
    zeroInit: true,
    loraParams: T,
    precision: 'bf16',
    interconnect: { kind: 'nvlink', nvlinks: 4 },
    ...extra,
  });
}

describe('the cost of saving the weights (src/estimate/gather.ts)', () => {
  it('ZeRO-3 with the 16-bit gather: the whole 16-bit model on rank 0 host, one layer per GPU, all-gather + PCIe + disk', () => {
    const n = input(8);
    const c = saveCost({ stage: 3, optimizer: 'none', param: 'none' }, n, 'trainable');
    const all = P + T; // LoRA adapters are parameters too
    expect(c.gathers).toBe(true);
    expect(c.hostBytesPerNode).toBe(all * 2 + T * 2);
    expect(c.gpuBytesPerGpu).toBe(L * 2);
    expect(c.savedBytes).toBe(T * 2);
    expect(c.commSeconds).toBeCloseTo((all * 2 * 7) / 8 / (4 * NVLINK_BYTES_PER_S_PER_LINK), 6);
    expect(c.pcieSeconds).toBeCloseTo((all * 2) / PCIE_BYTES_PER_S, 6);
    expect(c.diskSeconds).toBeCloseTo((T * 2) / DISK_WRITE_BYTES_PER_S, 6);
    expect(c.seconds).toBeCloseTo(c.commSeconds + c.pcieSeconds + c.nvmeSeconds + c.diskSeconds, 9);
  });

  it('offloaded parameters come from the CPU (or NVMe) first: each rank its 1/N partition', () => {
    const n = input(8);
    const cpu = saveCost({ stage: 3, optimizer: 'cpu', param: 'cpu' }, n, 'trainable');
    const gpu = saveCost({ stage: 3, optimizer: 'none', param: 'none' }, n, 'trainable');
    expect(cpu.pcieSeconds - gpu.pcieSeconds).toBeCloseTo(((P + T) * 2) / 8 / PCIE_BYTES_PER_S, 6);
    const nvme = saveCost({ stage: 3, optimizer: 'nvme', param: 'nvme' }, n, 'trainable');
    expect(nvme.nvmeSeconds).toBeCloseTo(((P + T) * 2) / 8 / NVME_BYTES_PER_S, 6);
  });

  it('stages 1-2 gather nothing, but accelerate copies the whole state dict to the CPU on every rank', () => {
    const one = saveCost({ stage: 2, optimizer: 'none', param: 'none' }, input(1), 'all');
    const eight = saveCost({ stage: 2, optimizer: 'none', param: 'none' }, input(8), 'all');
    expect(one.gathers).toBe(false);
    expect(eight.gpuBytesPerGpu).toBe(0);
    expect(eight.commSeconds).toBe(0);
    expect(eight.hostBytesPerNode - one.hostBytesPerNode).toBe(7 * (P + T) * 2);
  });

  it('a text for where the mode is chosen, and the NCCL timeout named when a save comes near it', () => {
    const c = saveCost({ stage: 3, optimizer: 'cpu', param: 'cpu' }, input(8), 'trainable');
    const text = saveCostText(c);
    expect(
      text.startsWith(
        `each save gathers the 16-bit weights: ${formatBytesShort(c.hostBytesPerNode)} of host memory on rank 0's node, +108 MiB per GPU (the largest layer), about `,
      ),
    ).toBe(true);
    expect(text).not.toMatch(/timeout/);
    const slow = saveCost(
      { stage: 3, optimizer: 'nvme', param: 'nvme' },
      input(1, { params: 400e9, largestLayer: 1e9, loraParams: undefined }),
      'all',
    );
    expect(slow.seconds).toBeGreaterThan(NCCL_TIMEOUT_S / 2);
    expect(saveCostText(slow)).toMatch(/NCCL timeout \(10 min/);
  });

  it("from a setup: the seed's (Qwen-Image, LoRA r32, ZeRO-3 offload, one GPU)", async () => {
    const seed = await loadPreset('qwen-image-lora-lowvram', { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-g-')) });
    const c = saveCostOfSetup(seed.answers, loadModelCatalog());
    expect(c).not.toBeNull();
    expect(c!.gathers).toBe(true);
    const p = seed.answers.model_params!;
    expect(c!.hostBytesPerNode).toBe((p + T) * 2 + T * 2);
    expect(saveCostOfSetup(withDefaults({}), loadModelCatalog())).toBeNull(); // no model size: nothing to say
    expect(saveCostOfSetup({ ...seed.answers, zero3_save_16bit_model: false }, loadModelCatalog())).toBeNull();
  });
});
