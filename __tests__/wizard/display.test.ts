import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/config/questions.js';
import { formatBytesShort } from '../../src/text/format.js';
import { fieldStart, fieldValue, humanAnswer } from '../../src/wizard/display.js';

const GiB = 2 ** 30;
// Qwen-Image's DiT from the catalog, an 80 GB H100 as nvidia-smi reports it (81559 MiB), 1 TiB of RAM.
const a = withDefaults({
  model_params: 20_430_401_088,
  largest_layer_params: 56_641_536,
  gpu_memory: 81_559 * 2 ** 20,
  cpu_memory: 1024 * GiB,
  num_processes: 8,
});

describe('answers in human units', () => {
  it('the review shows counts and sizes as people read them', () => {
    expect(humanAnswer('model_params', a)).toBe('20.43B');
    expect(humanAnswer('largest_layer_params', a)).toBe('56.64M');
    expect(humanAnswer('cpu_memory', a)).toBe('1 TiB');
    expect(humanAnswer('gpu_memory', a)).toBe('79.65 GiB');
    expect(humanAnswer('gpu_memory', withDefaults({ gpu_memory: 80 * GiB }))).toBe('80 GiB');
    // Others as the catalog writes them.
    expect(humanAnswer('num_processes', a)).toBe('8');
    expect(humanAnswer('mode', withDefaults({ mode: '3-offload' }))).toBe('3-offload');
    expect(humanAnswer('reduce_bucket_size', withDefaults({ reduce_bucket_size: 5e7 }))).toBe('5e7');
    expect(humanAnswer('model_params', withDefaults({}))).toBe('');
    // Numbers that need their unit to be read carry it.
    expect(humanAnswer('headroom', a)).toBe('10% of each GPU');
    expect(humanAnswer('max_pixels', a)).toBe('1048576 pixels');
    expect(humanAnswer('micro_batch', a)).toBe('1 sample(s) per GPU per step');
  });

  it('a catalog value starts the field as 56.64M and keeps its exact value until edited', () => {
    const start = fieldStart('largest_layer_params', a);
    expect(start).toEqual({ text: '56.64M', value: 56_641_536 });
    expect(fieldValue('largest_layer_params', '56.64M', start, a)).toEqual({ ok: true, value: 56_641_536 });
    expect(fieldValue('largest_layer_params', ' 56.64M ', start, a)).toEqual({ ok: true, value: 56_641_536 });
    expect(fieldValue('largest_layer_params', '60M', start, a)).toEqual({ ok: true, value: 60_000_000 });
    expect(fieldValue('largest_layer_params', 'lots', start, a).ok).toBe(false);
    const mem = fieldStart('gpu_memory', a);
    expect(mem.text).toBe('79.65 GiB');
    expect(fieldValue('gpu_memory', '79.65 GiB', mem, a)).toEqual({ ok: true, value: 81_559 * 2 ** 20 });
  });

  it('formatBytesShort takes the number of decimals', () => {
    expect(formatBytesShort(81_559 * 2 ** 20)).toBe('79.6 GiB');
    expect(formatBytesShort(81_559 * 2 ** 20, 2)).toBe('79.65 GiB');
    expect(formatBytesShort(2 ** 40, 2)).toBe('1 TiB');
  });
});
