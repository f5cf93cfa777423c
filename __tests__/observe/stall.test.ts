import { describe, expect, it } from 'vitest';
import { AlertEngine, MAX_ALERTS_PER_STEP } from '../../src/observe/alerts.js';
import {
  STALL_FACTOR_DEFAULT,
  STALL_MIN_MS_DEFAULT,
  STALL_STARTUP_MS_DEFAULT,
  StallDetector,
  describeProcState,
  parsePySpyDump,
  stallAlert,
} from '../../src/observe/stall.js';

const S = 1000;

describe('the stall watchdog (pure)', () => {
  it('defaults: k = 10 times the median step, never sooner than 45 s', () => {
    expect(STALL_FACTOR_DEFAULT).toBe(10);
    expect(STALL_MIN_MS_DEFAULT).toBe(45_000);
  });

  it('fires after k x the median step time of silence, not a millisecond before', () => {
    const d = new StallDetector();
    d.start(0);
    // 20 steps of 10 s each: median 10 s, threshold 100 s.
    for (let i = 1; i <= 20; i++) d.progress(i * 10 * S);
    const last = 200 * S;
    expect(d.medianStepMs()).toBe(10 * S);
    expect(d.check(last + 100 * S - 1)).toBeNull();
    const st = d.check(last + 100 * S);
    expect(st).not.toBeNull();
    expect(st!.thresholdMs).toBe(100 * S);
    expect(st!.silentMs).toBe(100 * S);
    expect(st!.medianStepMs).toBe(10 * S);
  });

  it('never sooner than the floor for fast steps', () => {
    const d = new StallDetector();
    d.start(0);
    for (let i = 1; i <= 50; i++) d.progress(i * 200); // 0.2 s steps: 10 x = 2 s < 45 s
    const last = 50 * 200;
    expect(d.check(last + 44_999)).toBeNull();
    expect(d.check(last + 45_000)?.thresholdMs).toBe(45_000);
  });

  it('k and the floor are configurable', () => {
    const d = new StallDetector({ factor: 3, minMs: 500 });
    d.start(0);
    for (let i = 1; i <= 5; i++) d.progress(i * 400);
    expect(d.check(2000 + 1199)).toBeNull();
    expect(d.check(2000 + 1200)?.thresholdMs).toBe(1200);
  });

  it('a log line or a loss row is activity too: the silence counts from the last of them', () => {
    const d = new StallDetector({ minMs: 1000 });
    d.start(0);
    for (let i = 1; i <= 5; i++) d.progress(i * 100);
    d.line(5000); // e.g. DeepSpeed logging during a checkpoint save
    expect(d.check(5999)).toBeNull();
    expect(d.check(6000)).not.toBeNull();
  });

  it('before the first steps (loading the model, compiling ops) it waits the start-up time', () => {
    const d = new StallDetector();
    d.start(0);
    expect(d.check(STALL_STARTUP_MS_DEFAULT - 1)).toBeNull();
    expect(d.check(STALL_STARTUP_MS_DEFAULT)?.medianStepMs).toBeNull();
    const e = new StallDetector({ startupMs: 2000, minMs: 100 });
    e.start(0);
    e.progress(1500); // one event gives no step time yet
    expect(e.check(3499)).toBeNull();
    expect(e.check(3500)).not.toBeNull();
  });

  it('the median shrugs off a slow step (a checkpoint save)', () => {
    const d = new StallDetector({ minMs: 1 });
    d.start(0);
    const times = [
      ...Array.from({ length: 9 }, (_, i) => (i + 1) * 1000),
      9000 + 60_000, // one save
      ...Array.from({ length: 9 }, (_, i) => 69_000 + (i + 1) * 1000),
    ];
    for (const t of times) d.progress(t);
    expect(d.medianStepMs()).toBe(1000);
  });

  it('counts steps by the progress counter when one event covers several', () => {
    const d = new StallDetector({ minMs: 1 });
    d.start(0);
    d.progress(1000, 10);
    d.progress(2000, 20); // 10 steps in 1 s
    d.progress(3000, 30);
    expect(d.medianStepMs()).toBe(100);
  });

  it('a stall is one episode: fired once until activity comes back', () => {
    const d = new StallDetector({ minMs: 1000 });
    d.start(0);
    d.progress(100);
    d.progress(200);
    expect(d.check(1200)?.episode).toBe(1);
    expect(d.check(5000)?.episode).toBe(1);
    d.line(6000);
    expect(d.check(6500)).toBeNull();
    expect(d.check(7000)?.episode).toBe(2);
  });
});

describe('what a stalled rank is doing', () => {
  it('describes the /proc state and wchan in words', () => {
    expect(describeProcState('S', 'futex_wait_queue')).toBe(
      'sleeping in futex_wait_queue (waiting on a lock or a GPU sync)',
    );
    expect(describeProcState('D', 'nfs_wait_bit_killable')).toMatch(/uninterruptible.*nfs_wait_bit_killable/);
    expect(describeProcState('R', '0')).toBe('running (on a CPU)');
    expect(describeProcState('S', 'pipe_write')).toMatch(/its output pipe is full/);
  });

  it('reads the main thread of a py-spy dump', () => {
    const dump = [
      'Process 4242: python train.py',
      'Python v3.11.7 (/venv/bin/python3.11)',
      '',
      'Thread 4242 (idle): "MainThread"',
      '    all_reduce (torch/distributed/distributed_c10d.py:2501)',
      '    wrapper (torch/distributed/c10d_logger.py:81)',
      '    reduce_gradients (deepspeed/runtime/zero/stage3.py:1421)',
      '    step (train.py:88)',
      'Thread 4301 (idle): "Thread-1"',
      '    wait (threading.py:327)',
    ].join('\n');
    expect(parsePySpyDump(dump)).toBe(
      'all_reduce (torch/distributed/distributed_c10d.py:2501) < wrapper (torch/distributed/c10d_logger.py:81) < reduce_gradients (deepspeed/runtime/zero/stage3.py:1421)',
    );
    expect(parsePySpyDump('Error: Permission Denied')).toBeNull();
  });

  it('names the ranks that stopped writing, what they do, and a command to run', () => {
    const a = stallAlert({
      step: 1,
      at: 123,
      state: { silentMs: 300_000, thresholdMs: 100_000, medianStepMs: 10_000, episode: 1, basis: 'steps', factor: 10 },
      ranks: [
        {
          pid: 4242,
          rank: 0,
          command: 'python',
          state: 'S',
          wchan: 'futex_wait_queue',
          stoppedWriting: true,
          pySpy: null,
        },
        { pid: 4243, rank: 1, command: 'python', state: 'R', wchan: '0', stoppedWriting: false, pySpy: null },
      ],
      pySpyInstalled: false,
    });
    expect(a.id).toBe('stall');
    expect(a.step).toBe(1);
    expect(a.fatal).toBe(false);
    expect(a.title).toContain('no progress for 5m00s');
    expect(a.title).toContain('10 x the median step of 10.0s');
    expect(a.line).toContain('rank 0 (pid 4242) stopped writing: sleeping in futex_wait_queue');
    expect(a.line).toContain('rank 1 (pid 4243) still writes');
    expect(a.fix).toContain('py-spy dump --pid 4242');
    expect(a.fix).toContain('pip install py-spy');
  });
});

describe("the watch's alerts join the run's", () => {
  it('AlertEngine.add keeps a health alert once, calls onAlert, and respects the per-step cap', () => {
    const seen: string[] = [];
    const engine = new AlertEngine({ onAlert: (a) => seen.push(a.id) });
    const a = stallAlert({
      step: 2,
      at: 1,
      state: { silentMs: 60_000, thresholdMs: 45_000, medianStepMs: 1000, episode: 1, basis: 'floor', factor: 10 },
      ranks: [],
      pySpyInstalled: true,
    });
    expect(engine.add(a)).toEqual(a);
    expect(engine.add(a)).toBeNull();
    expect(engine.forStep(2).map((x) => x.id)).toEqual(['stall']);
    expect(seen).toEqual(['stall']);
    expect(a.line).toBe('no process of the pass could be read in /proc');
    expect(a.fix).toMatch(/^py-spy dump --pid PID shows where it waits/);
    for (let i = 0; i < 20; i++) engine.add({ ...a, title: `t${i}` });
    expect(engine.forStep(2)).toHaveLength(MAX_ALERTS_PER_STEP);
    expect(engine.dropped).toBe(5);
  });
});
