import { describe, expect, it } from 'vitest';
import {
  answersOf,
  flowReducer,
  initialFlow,
  nextQuestion,
  previousQuestion,
  progress,
  setupOf,
  walkQuestions,
  type FlowState,
} from '../../src/wizard/flow.js';
import { NO_DETECTION, activeQuestions, withDefaults, type QuestionId } from '../../src/config/questions.js';

const env8 = { gpuCount: 8, gpuMemoryBytes: 80 * 2 ** 30, cpuMemoryBytes: 2 ** 40 };
const started = (): FlowState => flowReducer(initialFlow(env8), { type: 'start', origin: { kind: 'new' } });
const answer = (s: FlowState, id: QuestionId, value: unknown) => flowReducer(s, { type: 'answer', id, value });

describe('the wizard flow', () => {
  it('starts a new setup at the first question of accelerate order', () => {
    const s = started();
    expect(s.screen).toBe('question');
    expect(s.current).toBe('num_machines');
  });

  it('skips questions whose condition is false and asks them when it holds', () => {
    let s = answer(started(), 'num_machines', 1);
    expect(s.current).toBe('debug'); // no rank/IP/port on one machine
    s = flowReducer(s, { type: 'back' });
    s = answer(s, 'num_machines', 2);
    expect(s.current).toBe('machine_rank');
    const ids = walkQuestions(answersOf(s)).map((q) => q.id);
    expect(ids).toContain('multinode_launcher');
    expect(ids).not.toContain('rdzv_backend'); // same_network defaults to yes
  });

  it('asks the model before the mode and never walks advanced questions', () => {
    const ids = walkQuestions(withDefaults({ model_params: 7e9 })).map((q) => q.id);
    expect(ids.indexOf('model_params')).toBeLessThan(ids.indexOf('mode'));
    expect(ids.indexOf('gpu_memory')).toBeLessThan(ids.indexOf('mode'));
    expect(ids).not.toContain('overlap_comm');
    expect(ids).not.toContain('model_name');
  });

  it('asks zero3_init (deepspeed.zero.Init) only at ZeRO-3, where it does something; the review keeps it', () => {
    for (const mode of ['1', '2', '2-offload'] as const) {
      const a = withDefaults({ mode });
      expect(walkQuestions(a).map((q) => q.id)).not.toContain('zero3_init');
      expect(activeQuestions(a, true).map((q) => q.id)).toContain('zero3_init');
    }
    for (const mode of ['3', '3-offload'] as const)
      expect(walkQuestions(withDefaults({ mode })).map((q) => q.id)).toContain('zero3_init');
  });

  it('goes back one question keeping every answer', () => {
    let s = answer(started(), 'num_machines', 1);
    s = answer(s, 'debug', true);
    expect(s.current).toBe('dynamo_backend');
    s = flowReducer(s, { type: 'back' });
    expect(s.current).toBe('debug');
    expect(answersOf(s).debug).toBe(true);
    s = flowReducer(s, { type: 'back' });
    expect(s.current).toBe('num_machines');
    s = flowReducer(s, { type: 'back' });
    expect(s.screen).toBe('start');
    expect(s.given.debug).toBe(true);
  });

  it('jumps from the review to a question and returns to the review after answering', () => {
    let s = flowReducer(initialFlow(env8), {
      type: 'start',
      origin: { kind: 'preset', name: 'x' },
      given: { mode: '3' },
      to: 'review',
    });
    expect(s.screen).toBe('review');
    s = flowReducer(s, { type: 'jump', id: 'mode' });
    expect(s).toMatchObject({ screen: 'question', current: 'mode', returnToReview: true });
    s = flowReducer(s, { type: 'answer', id: 'mode', value: '3-offload', also: { offload_device: 'nvme' } });
    // the NVMe row enables the NVMe path question: asked before going back (the device came with the row)
    expect(s).toMatchObject({ screen: 'question', current: 'nvme_path', returnToReview: true });
    s = answer(s, 'nvme_path', '/nvme');
    expect(s.screen).toBe('review');
    expect(answersOf(s).mode).toBe('3-offload');
    expect(s.dirty).toBe(true);
    // Esc on a question opened from the review goes back to the review, answer unchanged
    s = flowReducer(flowReducer(s, { type: 'jump', id: 'num_processes' }), { type: 'back' });
    expect(s.screen).toBe('review');
    expect(answersOf(s).num_processes).toBe(8);
  });

  it('keeps defaults following detection and earlier answers until answered', () => {
    let s = flowReducer(initialFlow(NO_DETECTION), { type: 'start', origin: { kind: 'new' } });
    expect(answersOf(s).num_processes).toBe(1);
    s = flowReducer(s, { type: 'env', env: env8 });
    expect(answersOf(s).num_processes).toBe(8);
    s = answer(s, 'num_machines', 2);
    expect(answersOf(s).num_processes).toBe(16);
    expect(answersOf(s).zero3_init).toBe(false);
    s = answer(s, 'machine_rank', 0);
    expect(setupOf(s).answers.num_machines).toBe(2);
  });

  it('the question count does not jump: one more per question, the total settled from the first (a model and ZeRO-3 offload counted ahead)', () => {
    let s = started();
    const seen: [number, number][] = [];
    for (let i = 0; i < 60 && s.screen === 'question'; i++) {
      const a = answersOf(s);
      const p = progress(s.current, a, s.given);
      seen.push([p.index, p.total]);
      const value = s.current === 'model_params' ? 20e9 : s.current === 'mode' ? '3-offload' : a[s.current];
      s = answer(s, s.current, value);
    }
    expect(seen.map(([i]) => i)).toEqual(seen.map((_, k) => k + 1));
    expect(new Set(seen.map(([, t]) => t)).size).toBe(1);
    expect(seen.at(-1)![0]).toBe(seen.at(-1)![1]);
    // Skipping the model closes its questions: the total falls, never rises.
    let skip = started();
    const totals: number[] = [];
    for (let i = 0; i < 60 && skip.screen === 'question'; i++) {
      const a = answersOf(skip);
      totals.push(progress(skip.current, a, skip.given).total);
      skip = answer(skip, skip.current, skip.current === 'model_params' ? null : a[skip.current]);
    }
    expect(totals.every((t, k) => k === 0 || t <= totals[k - 1]!)).toBe(true);
  });

  it('reaches the review after the last question and finish/back move between them', () => {
    const a = withDefaults({}, env8);
    const walk = walkQuestions(a);
    const last = walk[walk.length - 1]!.id;
    expect(nextQuestion(last, a)).toBeNull();
    expect(previousQuestion(walk[0]!.id, a)).toBeNull();
    expect(progress(walk[1]!.id, a)).toEqual({ index: 2, total: walk.length });
    let s: FlowState = { ...started(), current: last };
    s = answer(s, last, false);
    expect(s.screen).toBe('review');
    s = flowReducer(s, { type: 'finish' });
    expect(s.screen).toBe('finish');
    s = flowReducer(s, { type: 'back' });
    expect(s.screen).toBe('review');
    s = flowReducer(s, { type: 'back' });
    expect(s).toMatchObject({ screen: 'question', current: last });
  });

  it('marks the setup unchanged after a write and ignores unknown ids', () => {
    let s = answer(started(), 'num_machines', 3);
    expect(s.dirty).toBe(true);
    s = flowReducer(s, { type: 'written' });
    expect(s.dirty).toBe(false);
    expect(flowReducer(s, { type: 'jump', id: 'nope' as QuestionId })).toBe(s);
  });
  it('after a change from the review, asks the questions it newly enables, then returns to the review', () => {
    let s = flowReducer(initialFlow(env8), { type: 'start', origin: { kind: 'new' }, to: 'review' });
    const before = walkQuestions(answersOf(s)).map((q) => q.id);
    s = flowReducer(s, { type: 'jump', id: 'num_machines' });
    s = answer(s, 'num_machines', 2);
    const enabled = walkQuestions(answersOf(s))
      .map((q) => q.id)
      .filter((id) => !before.includes(id));
    expect(enabled).toContain('machine_rank');
    expect(enabled).toContain('multinode_launcher');
    const asked: QuestionId[] = [];
    for (let i = 0; i < 20 && s.screen === 'question'; i++) {
      asked.push(s.current);
      expect(s.returnToReview).toBe(true);
      // answering same_network "no" enables rdzv_backend on the way: it is asked too
      s = answer(s, s.current, s.current === 'same_network' ? false : answersOf(s)[s.current]);
    }
    expect(s.screen).toBe('review');
    expect(asked).toEqual([
      ...enabled.slice(0, enabled.indexOf('same_network') + 1),
      'rdzv_backend',
      ...enabled.slice(enabled.indexOf('same_network') + 1),
    ]);
    expect(answersOf(s).num_machines).toBe(2);
  });

  it('Esc while walking the newly enabled questions goes back to the review, answers kept', () => {
    let s = flowReducer(initialFlow(env8), { type: 'start', origin: { kind: 'new' }, to: 'review' });
    s = answer(flowReducer(s, { type: 'jump', id: 'num_machines' }), 'num_machines', 2);
    expect(s).toMatchObject({ screen: 'question', current: 'machine_rank' });
    s = flowReducer(s, { type: 'back' });
    expect(s).toMatchObject({ screen: 'review', enabledFromReview: [] });
    expect(answersOf(s).num_machines).toBe(2);
    // a change that enables nothing returns straight to the review
    s = answer(flowReducer(s, { type: 'jump', id: 'debug' }), 'debug', true);
    expect(s.screen).toBe('review');
  });
});

describe('a ZeRO table row that also picks the offload device', () => {
  it('does not ask "cpu or nvme?" again, and back returns to the mode question', () => {
    let s = started();
    s = { ...s, current: 'mode' as QuestionId };
    s = flowReducer(s, { type: 'answer', id: 'mode', value: '3-offload', also: { offload_device: 'cpu' } });
    expect(s.current).not.toBe('offload_device');
    expect(answersOf(s).offload_device).toBe('cpu');
    s = flowReducer(s, { type: 'back' });
    expect(s.current).toBe('mode');
    s = flowReducer(s, { type: 'answer', id: 'mode', value: '3-offload', also: { offload_device: 'nvme' } });
    expect(s.current).toBe('nvme_path'); // the NVMe row still needs its path
  });
});

describe('after writing', () => {
  it('the setup is the one written (its files at the target) and no longer dirty', () => {
    let s = flowReducer(initialFlow(NO_DETECTION), { type: 'start', origin: { kind: 'new' } });
    s = { ...s, dirty: true }; // answers changed
    const files = { accelerateConfig: '/out/accelerate_config.yaml', dsConfig: '/out/ds_config.json' };
    s = flowReducer(s, { type: 'written', base: { ...s.base, files } });
    expect(s.dirty).toBe(false);
    expect(setupOf(s).files).toEqual(files);
    // Without a base (nothing re-pointed) the files stay as they were.
    expect(flowReducer(s, { type: 'written' }).base.files).toEqual(files);
  });
});
