import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ALERT_PATTERNS, type Alert, AlertEngine, oomFacts } from '../../src/observe/alerts.js';
import { findFreePort } from '../../src/proc/free-port.js';
import { parseHfLog } from '../../src/observe/metrics/sources.js';
import { parseCsvLogRow } from '../../src/observe/metrics/sources.js';
import { parseLoss } from '../../src/observe/logparse.js';

const LINE_IDS = ALERT_PATTERNS.filter((p) => p.re !== null).map((p) => p.id);

describe('the alert table', () => {
  it('has one entry per id, each with a real message quoted and its source', () => {
    const ids = ALERT_PATTERNS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(
      [
        'auto-unfilled',
        'checkpoint-bad',
        'check-failed',
        'cuda-oom',
        'ds-op-build',
        'host-oom',
        'loss-scale-collapse',
        'nan-loss',
        'nccl-timeout',
        'port-in-use',
        'shm-too-small',
        'zero3-16bit-save',
      ].sort(),
    );
    for (const p of ALERT_PATTERNS) {
      expect(p.quotes.length, p.id).toBeGreaterThan(0);
      for (const q of p.quotes) {
        expect(q.text.length, p.id).toBeGreaterThan(0);
        expect(q.source, p.id).toMatch(/\/|#/); // a repo path or an issue thread
      }
    }
  });

  // One test per line pattern: each real message fires that alert and no other.
  for (const p of ALERT_PATTERNS.filter((x) => x.re !== null)) {
    it(`${p.id}: fires on each quoted message, with a title and a fix, and on none of its look-alikes`, () => {
      for (const q of p.quotes) {
        if (q.source.includes('not this regex')) continue;
        const engine = new AlertEngine();
        const fired = engine.line(0, q.text);
        expect(
          fired.map((a) => a.id),
          q.text,
        ).toEqual([p.id]);
        expect(fired[0]!.title.length).toBeGreaterThan(10);
        expect(fired[0]!.fix.length).toBeGreaterThan(20);
        // The line is kept (capped: a long line keeps its start).
        expect(q.text.trim().startsWith(fired[0]!.line.replace(/…$/, ''))).toBe(true);
        expect(fired[0]!.line.length).toBeLessThanOrEqual(300);
      }
      for (const n of p.nonMatches) expect(new AlertEngine().line(0, n), n).toEqual([]);
    });
  }

  it('nan-loss: fires from each metric source, once per step, and names bf16 for an fp16 run', () => {
    const alerts: Alert[] = [];
    const engine = new AlertEngine({ ctx: { precision: 'fp16' }, onAlert: (a) => alerts.push(a) });
    const [tqdm, hf, csv] = ALERT_PATTERNS.find((p) => p.id === 'nan-loss')!.quotes;
    expect(engine.loss(0, parseLoss(tqdm!.text)!, 'tqdm', tqdm!.text)?.id).toBe('nan-loss');
    expect(engine.loss(0, parseHfLog(hf!.text)!.loss!, 'hf')).toBeNull(); // same step: once
    expect(engine.loss(1, parseHfLog(hf!.text)!.loss!, 'hf')?.id).toBe('nan-loss');
    expect(engine.loss(2, parseCsvLogRow(csv!.text)!.value, 'csv')?.id).toBe('nan-loss');
    expect(engine.loss(3, 0.5, 'csv')).toBeNull();
    expect(engine.loss(3, Infinity, 'log')?.title).toBe('loss is Infinity (log)');
    expect(alerts.map((a) => a.step)).toEqual([0, 1, 2, 3]);
    expect(alerts[0]!.fix).toContain('--mixed-precision bf16');
    expect(alerts[0]!.fatal).toBe(false);
    const bf16 = new AlertEngine({ ctx: { precision: 'bf16' } }).loss(0, Number.NaN, 'csv');
    expect(bf16!.fix).not.toContain('bf16');
    expect(bf16!.fix).toContain('learning rate');
  });

  it('loss-scale-collapse: a streak of fp16 overflow skips suggests bf16; the minimum-scale exception is a second cause', () => {
    const engine = new AlertEngine({ overflowStreak: 8 });
    expect(engine.overflow(0, { streak: 7, scale: 512, fp16: true })).toBeNull();
    const a = engine.overflow(0, { streak: 8, scale: 256, fp16: true }, '[deepspeed] OVERFLOW! Rank 0 Skipping step.')!;
    expect(a.title).toBe('8 fp16 overflow skips in a row, loss scale down to 256');
    expect(a.fix).toContain('bf16');
    expect(engine.overflow(0, { streak: 9, scale: 128, fp16: true })).toBeNull();
    const min = engine.line(
      0,
      'Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.',
    );
    expect(min.map((x) => x.title)).toEqual(['fp16 loss scale at its minimum: DeepSpeed stops the run']);
    // Outside fp16 a streak means inf/NaN gradients: bf16 is no fix then.
    const bf = new AlertEngine().overflow(0, { streak: 8, scale: null, fp16: false })!;
    expect(bf.fix).not.toContain('bf16');
    expect(bf.title).toContain('skipped steps (inf/NaN gradients)');
  });

  it('host-oom: a SIGKILL or exit 137 that zerowiz did not send; none once zerowiz is stopping the run', () => {
    const engine = new AlertEngine({
      ctx: { hostWhatFits: () => 'ZeRO-3 offload of parameters only needs 190 GiB per node' },
    });
    expect(engine.stepEnded(0, { exitCode: 1, signal: null })).toBeNull();
    const a = engine.stepEnded(0, { exitCode: null, signal: 'SIGKILL' })!;
    expect(a.id).toBe('host-oom');
    expect(a.fix).toContain('dmesg');
    expect(a.fix).toContain('190 GiB per node');
    expect(engine.stepEnded(1, { exitCode: 137, signal: null })?.title).toContain('exit 137');
    const stopping = new AlertEngine();
    stopping.stopping();
    expect(stopping.stepEnded(0, { exitCode: null, signal: 'SIGKILL' })).toBeNull();
    expect(stopping.line(0, '  traceback : Signal 9 (SIGKILL) received by PID 3405')).toEqual([]);
  });
});

describe('the engine', () => {
  it('fires once per distinct cause per step: eight ranks printing the same OOM is one alert', () => {
    const engine = new AlertEngine();
    const oom = ALERT_PATTERNS.find((p) => p.id === 'cuda-oom')!.quotes[0]!.text;
    for (let rank = 0; rank < 8; rank++) engine.line(1, oom.replace('GPU 1', `GPU ${rank}`));
    expect(engine.forStep(1).length).toBe(1);
    engine.line(2, oom);
    expect(engine.alerts.length).toBe(2);
    // Two different ops that failed to build are two causes.
    engine.line(1, "RuntimeError: Error building extension 'cpu_adam'");
    engine.line(1, "RuntimeError: Error building extension 'fused_adam'");
    engine.line(1, "RuntimeError: Error building extension 'cpu_adam'");
    expect(engine.forStep(1).map((a) => a.title)).toEqual([
      'CUDA out of memory on GPU 0 trying to allocate 3.4 GiB',
      'DeepSpeed could not build its cpu_adam op',
      'DeepSpeed could not build its fused_adam op',
    ]);
  });

  it('keeps at most 16 alerts per step however many distinct causes come', () => {
    const engine = new AlertEngine();
    for (let i = 0; i < 40; i++) engine.line(0, `RuntimeError: Error building extension 'op${i}'`);
    expect(engine.forStep(0).length).toBe(16);
    expect(engine.dropped).toBe(24);
  });

  it('gives the first fatal alert of a step as the reason of its failure', () => {
    const engine = new AlertEngine();
    engine.loss(0, Number.NaN, 'csv');
    engine.line(
      0,
      '[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800437 milliseconds before timing out.',
    );
    expect(engine.reason(0)?.id).toBe('nccl-timeout');
    expect(engine.reason(0)?.title).toBe('NCCL collective timed out (ALLREDUCE after 30 min)');
    expect(engine.reason(1)).toBeNull();
  });

  it('names the fix that fits by the estimate after a CUDA OOM, from the context phase 2 passes', () => {
    const seen: unknown[] = [];
    const engine = new AlertEngine({
      ctx: {
        whatFits: (o) => {
          seen.push(o);
          return 'ZeRO-3 offload fits (0.2 GiB per GPU by the estimate): zerowiz --mode 3-offload';
        },
      },
    });
    const [a] = engine.line(0, ALERT_PATTERNS.find((p) => p.id === 'cuda-oom')!.quotes[0]!.text);
    expect(a!.fix).toContain('zerowiz --mode 3-offload');
    expect(seen[0]).toEqual(oomFacts(ALERT_PATTERNS.find((p) => p.id === 'cuda-oom')!.quotes[0]!.text));
    // Without an answer the generic advice stands, plus the fragmentation hint when it applies.
    const [b] = new AlertEngine().line(
      0,
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 3 has a total capacity of 79.19 GiB of which 612.00 MiB is free. Process 48213 has 78.58 GiB memory in use. Of the allocated memory 70.13 GiB is allocated by PyTorch, and 7.02 GiB is reserved by PyTorch but unallocated.',
    );
    expect(b!.fix).toContain('zerowiz estimate');
    expect(b!.fix).toContain('7 GiB was reserved but unallocated');
  });

  it('suggests the free port zerowiz found, and names the port that was taken', () => {
    const engine = new AlertEngine({ ctx: { freePort: 41237 } });
    const [a] = engine.line(0, ALERT_PATTERNS.find((p) => p.id === 'port-in-use')!.quotes[1]!.text);
    expect(a!.title).toBe('port 29500 is already in use (another run on this machine?)');
    expect(a!.fix).toContain('--main_process_port 41237');
    // Phase 2 may set the port when the step starts: the context is live.
    engine.ctx.freePort = 50001;
    const [b] = engine.line(1, 'OSError: [Errno 98] Address already in use');
    expect(b!.fix).toContain('--main_process_port 50001');
    expect(b!.title).toBe('the rendezvous port is already in use (another run on this machine?)');
  });

  it('reads both OOM wordings of the caching allocator', () => {
    expect(
      oomFacts(
        'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 978.00 MiB (GPU 0; 4.00 GiB total capacity; 1.68 GiB already allocated; 0 bytes free; 2.72 GiB reserved in total by PyTorch)',
      ),
    ).toEqual({
      gpu: 0,
      triedBytes: 978 * 2 ** 20,
      totalBytes: 4 * 2 ** 30,
      freeBytes: 0,
      reservedUnallocatedBytes: null,
    });
    // An empty device index happens (hiyouga/LlamaFactory#3816: "GPU  has a total capacity").
    expect(
      oomFacts('CUDA out of memory. Tried to allocate 1.16 GiB. GPU  has a total capacity of 15.77 GiB').gpu,
    ).toBeNull();
  });

  it('costs one regex test on a line without any needle', () => {
    expect(AlertEngine.mayMatch('[2026-05-01 12:00:00,123] [INFO] [engine.py:2100:step] step=12 loss=0.1')).toBe(false);
    expect(AlertEngine.mayMatch('Killed')).toBe(true);
    expect(LINE_IDS.length).toBe(10);
  });
});

describe('a free port, from the OS', () => {
  it('returns a port that can be bound on 127.0.0.1', async () => {
    const port = await findFreePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    await new Promise((r) => server.close(r));
  });
});
