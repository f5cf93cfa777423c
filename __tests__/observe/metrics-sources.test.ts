import { describe, expect, it } from 'vitest';
import {
  parseCsvLogRow,
  parseDsMemory,
  parseDsOverflow,
  parseDsStep,
  parseHfLog,
  parsePostfixLr,
  pythonFloat,
} from '../../src/observe/metrics/sources.js';

describe('Python floats as the trainers print them', () => {
  it('reads repr() output, including the non-finite spellings', () => {
    expect(pythonFloat('0.12606601417064667')).toBe(0.12606601417064667);
    expect(pythonFloat('1e-05')).toBe(1e-5);
    expect(pythonFloat('nan')).toBeNaN();
    expect(pythonFloat('inf')).toBe(Infinity);
    expect(pythonFloat('-inf')).toBe(-Infinity);
    expect(pythonFloat('tensor(1.0)')).toBeNaN();
    expect(pythonFloat('')).toBeNaN();
  });
});

describe('HF Trainer log dicts (ProgressCallback.on_log writes str(logs))', () => {
  it('reads a logging step', () => {
    const h = parseHfLog("{'loss': 1.9158, 'grad_norm': 1.284500002861023, 'learning_rate': 3e-05, 'epoch': 0.5}");
    expect(h).toEqual({
      kind: 'train',
      loss: 1.9158,
      gradNorm: 1.284500002861023,
      learningRate: 3e-5,
      epoch: 0.5,
      trainLoss: null,
    });
  });

  it('reads nan, quoted numbers and the old tensor repr of grad_norm', () => {
    expect(parseHfLog("{'loss': nan, 'grad_norm': nan, 'learning_rate': 4.8e-05, 'epoch': 0.12}")?.loss).toBeNaN();
    expect(parseHfLog("{'loss': '0.5432', 'learning_rate': '4.8e-05', 'epoch': 0.12}")?.loss).toBe(0.5432);
    expect(
      parseHfLog("{'loss': 0.5432, 'grad_norm': tensor(0.5234, device='cuda:0'), 'learning_rate': 1e-05, 'epoch': 0.1}")
        ?.gradNorm,
    ).toBe(0.5234);
  });

  it('tells the summary and evaluation apart from logging steps', () => {
    const s = parseHfLog(
      "{'train_runtime': 1.2845, 'train_samples_per_second': 8.1, 'train_steps_per_second': 1.013, 'train_loss': 0.5432, 'epoch': 1.0}",
    );
    expect(s?.kind).toBe('summary');
    expect(s?.loss).toBeNull();
    expect(s?.trainLoss).toBe(0.5432);
    const e = parseHfLog("{'eval_loss': 0.41, 'eval_runtime': 3.2, 'epoch': 1.0}");
    expect(e?.kind).toBe('eval');
    expect(e?.loss).toBeNull();
  });

  it('is not fooled by other braces', () => {
    expect(parseHfLog('{"loss": 0.1}')).toBeNull(); // JSON, not a Python repr
    expect(parseHfLog("{'name': 'x'}")).toBeNull();
    expect(parseHfLog("prefix {'loss': 0.1}")).toBeNull();
  });
});

describe("DeepSpeed's own lines", () => {
  it('reads the progress report of DeepSpeedEngine._report_progress', () => {
    expect(
      parseDsStep(
        '[2026-11-30 16:58:53,925] [INFO] [logging.py:128:log_dist] [Rank 0] step=10, skipped=3, lr=[9.999999999999997e-06], mom=[(0.9, 0.999)]',
      ),
    ).toEqual({ step: 10, skipped: 3, lr: 9.999999999999997e-6 });
    // The flood's engine line has `step=` but is not the report.
    expect(
      parseDsStep('[2026-05-01 12:00:00,123] [INFO] [engine.py:2100:step] step=12 loss=0.1 lr=1.00e-04'),
    ).toBeNull();
  });

  it('reads see_memory_usage with its f-string continuation spaces (GiB)', () => {
    const m = parseDsMemory('MA 0.31 GB         Max_MA 12.99 GB         CA 13.01 GB         Max_CA 13 GB ');
    expect(m).toEqual({
      allocatedBytes: Math.round(0.31 * 2 ** 30),
      maxAllocatedBytes: Math.round(12.99 * 2 ** 30),
      reservedBytes: Math.round(13.01 * 2 ** 30),
      maxReservedBytes: 13 * 2 ** 30,
    });
    expect(parseDsMemory('CPU Virtual Memory:  used = 20.5 GB, percent = 16.3%')).toBeNull();
  });

  it('reads every overflow wording of the loss scaler and the fp16 optimizers', () => {
    expect(
      parseDsOverflow('[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768'),
    ).toEqual({
      attemptedScale: 65536,
      nextScale: 32768,
      fp16: true,
    });
    expect(
      parseDsOverflow(
        '[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1',
      ),
    ).toEqual({ attemptedScale: 65536, nextScale: null, fp16: true });
    expect(parseDsOverflow('[deepspeed] OVERFLOW! Rank 0 Skipping step.')).toEqual({
      attemptedScale: null,
      nextScale: null,
      fp16: false,
    });
    expect(
      parseDsOverflow(
        '[deepspeed] fp16 dynamic loss scale overflow! Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0',
      ),
    ).toEqual({ attemptedScale: 65536, nextScale: 32768, fp16: true });
    // deepspeedai/DeepSpeed#697
    expect(
      parseDsOverflow('[Rank 0] Overflow detected. Skipping step. Attempted loss scale: 1, reducing to 1'),
    ).toEqual({
      attemptedScale: 1,
      nextScale: 1,
      fp16: true,
    });
    expect(parseDsOverflow('rank 0 detected overflow nan in tensor 3:12 shape torch.Size([4])')).toBeNull();
  });
});

describe("DiffSynth's loss.csv rows", () => {
  it('reads rows and skips the header', () => {
    expect(parseCsvLogRow('step,key,value')).toBeNull();
    expect(parseCsvLogRow('12,loss,0.0949999988079071')).toEqual({ step: 12, key: 'loss', value: 0.0949999988079071 });
    expect(parseCsvLogRow('13,loss,nan')?.value).toBeNaN();
    expect(parseCsvLogRow('14,"a,b",1e-05')).toEqual({ step: 14, key: 'a,b', value: 1e-5 });
    expect(parseCsvLogRow('15,loss,')).toBeNull();
    expect(parseCsvLogRow('15,loss,0.1')).not.toBeNull();
    expect(parseCsvLogRow('1,lo')).toBeNull();
  });
});

describe('tqdm postfix', () => {
  it('finds the learning rate', () => {
    expect(parsePostfixLr('loss=0.123, lr=1e-4')).toBe(1e-4);
    expect(parsePostfixLr('avr_loss=0.123')).toBeNull();
    expect(parsePostfixLr('clr=0.5')).toBeNull();
  });
});
