import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { withDefaults } from '../../../src/config/questions.js';
import { previewOf } from '../../../src/wizard/preview.js';
import { NEW_BASE } from '../../../src/wizard/flow.js';
import { ModeQuestion } from '../../../components/wizard/ModeQuestion.js';
import { Preview } from '../../../components/wizard/Preview.js';
import { ReviewScreen } from '../../../components/wizard/ReviewScreen.js';
import { reviewItems } from '../../../src/wizard/review.js';
import { QuestionScreen } from '../../../components/wizard/QuestionScreen.js';
import { question, type Question } from '../../../src/config/questions.js';
import { hintLines, resolveKey } from '../../../src/wizard/keytable.js';
import { NO_KEY } from '../../../src/text/keytable.js';
import { called, frame, listening } from '../../helpers/ink.js';

const GiB = 2 ** 30;
const a = withDefaults({
  model_params: 20.4e9,
  largest_layer_params: 56641536,
  gpu_memory: 80 * GiB,
  cpu_memory: 1024 * GiB,
  num_processes: 8,
});
const DOWN = '\x1b[B';

describe('wizard screens', () => {
  it('the mode question shows every mode with figures and moves the panel with the highlight', async () => {
    const onDraft = vi.fn();
    const onAnswer = vi.fn();
    const r = render(
      <ModeQuestion
        answers={a}
        zeroInit={undefined}
        given={false}
        width={80}
        isActive
        onAnswer={onAnswer}
        onDraft={onDraft}
      />,
    );
    const f = r.lastFrame()!;
    expect(f).toContain('ZeRO-3 offload NVMe');
    expect(f).toMatch(/★/);
    const panel = (x: string) => x.match(/▸ [^:]+:/)?.[0];
    const before = panel(f);
    await listening(r);
    r.stdin.write(DOWN);
    // The panel follows the highlight (waited for, never a fixed sleep: the machine may be loaded).
    expect(panel(await frame(r, (x) => panel(x) !== before))).not.toBe(before);
    await called(r, onDraft);
    r.stdin.write('\r');
    await called(r, onAnswer);
    expect(onAnswer).toHaveBeenCalledWith(expect.objectContaining({ mode: expect.any(String) }));
    r.unmount();
  });

  it('a text question refuses Enter while the answer is invalid and shows why', async () => {
    const onAnswer = vi.fn();
    const q = question('num_processes') as Question;
    const r = render(
      <QuestionScreen
        q={q}
        answers={a}
        given={{}}
        env={{ gpuCount: 8, gpuMemoryBytes: null, cpuMemoryBytes: null }}
        width={80}
        help={false}
        isActive
        models={[]}
        onAnswer={onAnswer}
        onDraft={() => undefined}
      />,
    );
    await listening(r);
    r.stdin.write('x');
    await frame(r, (x) => x.includes('not a whole number'));
    r.stdin.write('\r');
    await frame(r, (x) => x.includes('Enter refused'));
    expect(onAnswer).not.toHaveBeenCalled();
    r.unmount();
  });

  /** The question screen with its help open. */
  const helpFrame = (q: Question, answers = a, width = 80) =>
    render(
      <QuestionScreen
        q={q}
        answers={answers}
        given={{}}
        env={{ gpuCount: 8, gpuMemoryBytes: null, cpuMemoryBytes: null }}
        width={width}
        help
        isActive={false}
        models={[]}
        onAnswer={() => undefined}
        onDraft={() => undefined}
      />,
    );

  it('help shows the accelerate and DeepSpeed keys and the default', () => {
    const f = helpFrame(question('zero3_init') as Question).lastFrame()!;
    expect(f).toContain('deepspeed_config.zero3_init_flag');
    expect(f).toContain('Default:');
    expect(f).toContain('accelerate config asks');
  });

  it("help says where zerowiz's default differs from accelerate config's, and why", () => {
    const answers = withDefaults({ mode: '3' });
    for (const id of [
      'zero3_save_16bit_model',
      'zero3_init',
      'mixed_precision',
      'gradient_accumulation_steps',
      'gradient_clipping',
    ] as const) {
      const q = question(id) as Question;
      const r = helpFrame(q, answers, 200);
      const f = r.lastFrame()!.replace(/\s+/g, ' ');
      expect(f).toContain(
        `accelerate config's default is ${q.accelerateDefault!.value}, zerowiz's ${q.format(answers[id] as never)}:`,
      );
      expect(f).toContain(q.accelerateDefault!.why.slice(0, 40));
      r.unmount();
    }
  });

  it("the review marks the defaults that differ from accelerate config's", () => {
    const answers = withDefaults({ mode: '3', num_processes: 8 });
    const rows = reviewItems(answers, { mode: '3', num_processes: 8 }, [], 200).map((i) => i.label);
    const row = (id: string) => rows.find((l) => l.startsWith(`${id} `)) ?? '';
    expect(row('mixed_precision')).toContain("· default (accelerate's: no)");
    expect(row('zero3_save_16bit_model')).toContain("· default (accelerate's: no)");
    expect(row('zero3_init')).toContain("· default (accelerate's: no)");
    expect(row('gradient_accumulation_steps')).toContain("· default (accelerate's: 1)");
    expect(row('debug')).toMatch(/· default$/);
    expect(row('num_processes')).not.toContain('default');
  });

  it('the preview says what accelerate will hand DeepSpeed at launch', () => {
    const p = previewOf({ ...NEW_BASE, answers: withDefaults({ mode: '3-offload', num_processes: 8 }) });
    expect(p.commands).toContain('# at launch, accelerate fills');
    expect(p.commands).toContain('precision bf16 · ZeRO stage 3 · offload: optimizer cpu, parameters cpu');
    expect(p.commands).toContain('train_batch_size = micro batch x 1 x 8 GPU(s)');
  });

  it('the review lists answers and jumps to the chosen one', async () => {
    const onChoose = vi.fn();
    const r = render(
      <ReviewScreen
        items={reviewItems(a, { num_processes: 8 }, [], 80)}
        width={80}
        height={20}
        isActive
        onChoose={onChoose}
      />,
    );
    expect(r.lastFrame()).toContain('num_machines');
    expect(r.lastFrame()).toContain('micro_batch');
    await listening(r);
    // finish, the steps, then the first answer: each ↓ waits for the frame it changes
    for (let i = 0; i < 2; i++) {
      const was = r.lastFrame();
      r.stdin.write(DOWN);
      await frame(r, (x) => x !== was);
    }
    r.stdin.write('\r');
    await called(r, onChoose);
    expect(onChoose).toHaveBeenCalledWith(
      expect.objectContaining({ choice: { kind: 'question', id: 'num_machines' } }),
    );
  });

  it('the preview shows the YAML, JSON and commands and lists findings', () => {
    const p = previewOf({ ...NEW_BASE, answers: withDefaults({ num_processes: 1, mode: '2' }) });
    const y = render(<Preview preview={p} tab="yaml" width={80} height={12} scroll={0} />).lastFrame()!;
    expect(y).toContain('distributed_type: DEEPSPEED');
    expect(y).toMatch(/warning/);
    const j = render(<Preview preview={p} tab="json" width={80} height={40} scroll={0} />).lastFrame()!;
    expect(j).toContain('"zero_optimization"');
    const c = render(<Preview preview={p} tab="commands" width={80} height={12} scroll={0} />).lastFrame()!;
    expect(c).toContain('accelerate launch --config_file');
  });

  it('the key tables name every key in the hint rows', () => {
    const f = hintLines(['list', 'question', 'app'], 200).join(' · ');
    for (const k of ['Esc/← back', '? help', 'Tab', 'r review', 'q quit', '^C']) expect(f).toContain(k);
    const left = { ...NO_KEY, leftArrow: true };
    expect(resolveKey(['list', 'question', 'app'], '', left)?.binding.command).toBe('back');
    // In a text field ← moves the cursor: it never reaches the question's back.
    expect(resolveKey(['answerField', 'question', 'app'], '', left)?.binding.command).toBe('cursor');
  });
});
