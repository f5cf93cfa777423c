import { describe, expect, it } from 'vitest';
import { QUESTIONS, activeQuestions, withDefaults, type Answers, type Question } from '../../src/config/questions.js';
import { formatBytesExact, formatCountExact } from '../../src/text/format.js';
import { parseBytes, parseCount } from '../../src/text/units.js';

const SAMPLES: Partial<Answers>[] = [
  {},
  {
    num_machines: 2,
    num_processes: 16,
    machine_rank: 1,
    main_process_ip: '10.0.0.1',
    same_network: false,
    rdzv_backend: 'c10d',
    hostfile: '/h',
  },
  {
    mode: '3-offload',
    offload_device: 'nvme',
    nvme_path: '/nvme',
    model_params: 20430401088,
    largest_layer_params: 56641536,
    gpu_memory: 81559 * 2 ** 20,
    cpu_memory: 2 ** 40,
  },
  {
    mode: '1',
    gradient_accumulation_steps: 8,
    gradient_clipping: 0.25,
    reduce_bucket_size: 'auto',
    mixed_precision: 'fp16',
    dynamo_backend: 'inductor',
  },
];

describe('the question catalog', () => {
  it('has one entry per id, in accelerate order where accelerate asks', () => {
    const ids = QUESTIONS.map((q) => q.id);
    expect(new Set(ids).size).toBe(ids.length);
    const order = [
      'num_machines',
      'machine_rank',
      'main_process_ip',
      'main_process_port',
      'same_network',
      'rdzv_backend',
      'debug',
      'dynamo_backend',
      'mode',
      'offload_device',
      'nvme_path',
      'gradient_accumulation_steps',
      'gradient_clipping',
      'zero3_save_16bit_model',
      'zero3_init',
      'moe_layer_cls_names',
      'multinode_launcher',
      'hostfile',
      'exclusion_filter',
      'inclusion_filter',
      'num_processes',
      'mixed_precision',
    ];
    expect(ids.filter((id) => order.includes(id))).toEqual(order);
  });

  it('every answer reads back as itself: parse(format(value)) === value', () => {
    for (const given of SAMPLES) {
      const a = withDefaults(given);
      for (const q of QUESTIONS as readonly Question[]) {
        const value = a[q.id];
        const back = q.parse(q.format(value as never), a);
        expect([q.id, back.ok ? back.value : back.error]).toEqual([q.id, value]);
      }
    }
  });

  it('multi-node questions are asked only for more than one machine', () => {
    const one = activeQuestions(withDefaults({})).map((q) => q.id);
    const two = activeQuestions(withDefaults({ num_machines: 2 })).map((q) => q.id);
    for (const id of [
      'machine_rank',
      'main_process_ip',
      'main_process_port',
      'same_network',
      'multinode_launcher',
      'hostfile',
    ] as const) {
      expect(one).not.toContain(id);
      expect(two).toContain(id);
    }
  });

  it('exact formats round-trip any size or count', () => {
    for (let i = 1; i < 2000; i++) {
      const bytes = Math.floor(Math.abs(Math.sin(i)) * 2 ** (20 + (i % 22)));
      expect(parseBytes(formatBytesExact(bytes))).toBe(bytes);
      const count = Math.floor(Math.abs(Math.cos(i)) * 10 ** (3 + (i % 10))) + 1;
      expect(parseCount(formatCountExact(count))).toBe(count);
    }
    expect(formatBytesExact(80 * 2 ** 30)).toBe('80GiB');
    expect(formatBytesExact(81559 * 2 ** 20)).toBe('81559MiB');
    expect(formatCountExact(20.4e9)).toBe('20.4B');
  });
});

describe('detected memory as a default answer', () => {
  it('reads as GiB with two decimals, rounded down, and reads back exactly', () => {
    const a = withDefaults(
      { model_params: 7e9 },
      { gpuCount: 8, gpuMemoryBytes: 81559 * 2 ** 20, cpuMemoryBytes: 24683620 * 1024 },
    );
    const gpu = QUESTIONS.find((q) => q.id === 'gpu_memory') as unknown as Question<'gpu_memory'>;
    const cpu = QUESTIONS.find((q) => q.id === 'cpu_memory') as unknown as Question<'cpu_memory'>;
    expect(gpu.format(a.gpu_memory)).toBe('79.64GiB');
    expect(cpu.format(a.cpu_memory)).toBe('23.54GiB');
    expect(a.gpu_memory!).toBeLessThanOrEqual(81559 * 2 ** 20);
    expect(parseBytes(gpu.format(a.gpu_memory))).toBe(a.gpu_memory);
  });
});
