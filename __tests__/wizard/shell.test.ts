import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPreset } from '../../src/setups/presets.js';
import type { QuestionId } from '../../src/config/questions.js';
import { argValue } from '../../src/config/step-args.js';
import type { WritePlan } from '../../src/wizard/finish.js';
import {
  FINISH_START,
  finishEffect,
  finishItems,
  finishReducer,
  type FinishState,
} from '../../src/wizard/finishState.js';
import { answersOf, walkQuestions } from '../../src/wizard/flow.js';
import {
  initialWizard,
  keyStack,
  previewAnswers,
  previewShown,
  reviewIndex,
  screenOf,
  setupOfWizard,
  wizardReducer,
  type WizardAction,
  type WizardState,
} from '../../src/wizard/shell.js';
import { stepRows, templateSteps } from '../../src/wizard/steps.js';

const env8 = { gpuCount: 8, gpuMemoryBytes: 80 * 2 ** 30, cpuMemoryBytes: 2 ** 40 };
const presetEnv = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-shell-')) };
const seedSteps = () => templateSteps('diffsynth-qwen-image-lora', (n) => findPreset(n, presetEnv).setup.steps);
const run = (s: WizardState, ...as: WizardAction[]) => as.reduce(wizardReducer, s);
const detected = (): WizardState =>
  run(initialWizard(), { type: 'detected', env: env8, description: '8 x H100 (79.6 GiB)' });
const list = { textQuestion: false };

/** Walks every question of a new setup with Enter on its default; answers `pick` on the way. */
function walk(s: WizardState, pick: Partial<Record<QuestionId, unknown>> = {}): WizardState {
  let x = run(s, { type: 'newSetup' });
  for (let guard = 0; screenOf(x) === 'question' && guard < 100; guard++) {
    const id = x.flow.current;
    x = run(x, { type: 'flow', action: { type: 'answer', id, value: id in pick ? pick[id] : answersOf(x.flow)[id] } });
  }
  return x;
}
const PLAN = (changes: boolean): WritePlan => ({
  setup: {
    name: 'custom',
    answers: {} as never,
    files: { accelerateConfig: '/w/cfg/a.yaml', dsConfig: '/w/cfg/d.json' },
    steps: [],
  },
  files: [],
  changesExisting: changes,
});

describe('the wizard shell: one reducer for the whole wizard', () => {
  it('walks a new setup and, at the end, shows the steps (templates first) before the review', () => {
    const s = walk(detected(), { mode: '3-offload' });
    expect(screenOf(s)).toBe('steps');
    expect(s.steps?.picking).toBe(true);
    expect(keyStack(s, list)).toEqual(['list', 'templates', 'app']);
    expect(answersOf(s.flow).num_processes).toBe(8); // detected GPUs x 1 machine
    const t = run(s, { type: 'steps', action: { type: 'template', steps: seedSteps() } });
    expect(t.flow.base.steps.map((x) => x.name)).toEqual(['data_process', 'train']);
    // The steps are part of the setup: choosing them alone makes it changed.
    const clean = walk(detected());
    expect(clean.flow.dirty).toBe(false);
    expect(run(clean, { type: 'steps', action: { type: 'template', steps: seedSteps() } }).flow.dirty).toBe(true);
    expect(keyStack(t, list)).toEqual(['steps', 'app']);
    const r = run(t, { type: 'stepsDone' });
    expect(screenOf(r)).toBe('review');
    expect(r.flow.base.steps).toHaveLength(2);
    // Walking again from the review and reaching the end goes straight to the review now.
    expect(screenOf(walk(r))).toBe('steps'); // a new setup starts over...
    const back = run(r, { type: 'flow', action: { type: 'back' } });
    const last = back.flow.current;
    const again = run(back, { type: 'flow', action: { type: 'answer', id: last, value: answersOf(back.flow)[last] } });
    expect(screenOf(again)).toBe('review');
  });

  it('Esc on the steps after the walk goes back to the last question', () => {
    const s = walk(detected());
    const last = walkQuestions(answersOf(s.flow)).at(-1)!.id;
    const b = run(s, { type: 'stepsBack' });
    expect(screenOf(b)).toBe('question');
    expect(b.flow.current).toBe(last);
  });

  it('edits the cache path once and both passes follow; the preview setup has the steps', () => {
    let s = run(walk(detected()), { type: 'steps', action: { type: 'template', steps: seedSteps() } });
    const row = stepRows(s.flow.base.steps[0]!).findIndex((r) => r.kind === 'arg' && r.arg.flag === '--output_path');
    s = { ...s, steps: { ...s.steps!, row } };
    s = run(
      s,
      { type: 'steps', action: { type: 'startEdit' } },
      { type: 'steps', action: { type: 'editText', text: '/scratch/cache' } },
      { type: 'steps', action: { type: 'commitEdit' } },
    );
    expect(keyStack(s, list)).toEqual(['offer', 'app']);
    s = run(s, { type: 'steps', action: { type: 'acceptOffer' } });
    const setup = setupOfWizard(s);
    expect(argValue(setup.steps[0]!.args, '--output_path')).toBe('/scratch/cache');
    expect(argValue(setup.steps[1]!.args, '--dataset_base_path')).toBe('/scratch/cache');
    expect(s.flow.dirty).toBe(true);
  });

  it('applies a finding fix: pins a step to the config without DeepSpeed', () => {
    let s = run(
      walk(detected()),
      { type: 'steps', action: { type: 'template', steps: seedSteps() } },
      { type: 'stepsDone' },
    );
    s = run(s, { type: 'applyFix', fix: { kind: 'pinConfig', step: 0, path: 'accelerate_no_deepspeed.yaml' } });
    expect(s.flow.base.steps[0]!.args.slice(0, 2)).toEqual(['--config_file', 'accelerate_no_deepspeed.yaml']);
  });

  it('keeps the review cursor on the edited row, or on its question when that row is gone', () => {
    let s = run(walk(detected()), { type: 'stepsDone' });
    s = run(s, { type: 'reviewJump', key: 'f0', id: 'mixed_precision' });
    expect(screenOf(s)).toBe('question');
    s = run(s, { type: 'flow', action: { type: 'answer', id: 'mixed_precision', value: 'bf16' } });
    expect(screenOf(s)).toBe('review');
    expect(reviewIndex(s, ['finish', 'f0', 'q:num_machines', 'q:mixed_precision'])).toBe(1);
    // The finding went away with the edit: the cursor sits on the question's row.
    expect(reviewIndex(s, ['finish', 'q:num_machines', 'q:mixed_precision'])).toBe(2);
    // Esc from a question opened in the review returns with the cursor where it was.
    s = run(s, { type: 'reviewJump', key: 'q:debug', id: 'debug' }, { type: 'flow', action: { type: 'back' } });
    expect(screenOf(s)).toBe('review');
    expect(reviewIndex(s, ['finish', 'q:debug'])).toBe(1);
  });

  it('help, picture and glossary: overlays over the body, the glossary returning to what opened it', () => {
    let s = walk(detected(), {});
    s = run(s, { type: 'stepsBack' }, { type: 'flow', action: { type: 'jump', id: 'mode' } });
    expect(s.flow.current).toBe('mode');
    s = run(s, { type: 'togglePicture' });
    expect(s.overlay).toEqual({ kind: 'picture' });
    expect(previewShown(s)).toBe(false);
    expect(keyStack(s, list)).toEqual(['picture', 'list', 'modeQuestion', 'question', 'app']);
    s = run(s, { type: 'openGlossary' });
    expect(keyStack(s, list)).toEqual(['glossary', 'app']);
    s = run(s, { type: 'glossaryScroll', delta: 5, maxTop: 3 });
    expect(s.overlay).toMatchObject({ kind: 'glossary', top: 3, from: 'picture' });
    s = run(s, { type: 'closeOverlay' });
    expect(s.overlay).toEqual({ kind: 'picture' });
    s = run(s, { type: 'togglePicture' }, { type: 'toggleHelp' });
    expect(keyStack(s, list)).toEqual(['help', 'list', 'modeQuestion', 'question', 'app']);
    expect(keyStack(s, { textQuestion: true })).toEqual(['answerField', 'help', 'modeQuestion', 'question', 'app']);
    // The picture is the ZeRO question's only.
    const other = run(
      s,
      { type: 'closeOverlay' },
      { type: 'flow', action: { type: 'jump', id: 'debug' } },
      { type: 'togglePicture' },
    );
    expect(other.overlay).toBeNull();
  });

  it('the draft shows in the preview until it is chosen or left', () => {
    let s = run(walk(detected()), { type: 'stepsBack' }, { type: 'flow', action: { type: 'jump', id: 'mode' } });
    const other = answersOf(s.flow).mode === '1' ? '2' : '1';
    s = run(s, { type: 'draft', draft: { mode: other } });
    expect(previewAnswers(s).mode).toBe(other);
    expect(answersOf(s.flow).mode).not.toBe(other);
    s = run(s, { type: 'flow', action: { type: 'back' } });
    expect(s.draft).toBeNull();
  });

  it('one quit dialog: straight out when nothing changed, asked when answers changed', () => {
    const clean = run(detected(), { type: 'quit' });
    expect(clean.result).toEqual({ code: 0, summary: ['zerowiz: nothing written.'] });
    expect(run(walk(detected()), { type: 'stepsDone' }).flow.dirty).toBe(false); // every default taken
    const dirty = run(walk(detected(), { num_processes: 4 }), { type: 'stepsDone' });
    expect(dirty.flow.dirty).toBe(true);
    const asked = run(dirty, { type: 'quit' });
    expect(asked.dialog).toEqual({ kind: 'quit' });
    expect(keyStack(asked, list)).toEqual(['dialog', 'app']);
    expect(run(asked, { type: 'dialog', answer: 'no' }).dialog).toBeNull();
    const out = run(asked, { type: 'dialog', answer: 'yes' });
    expect(out.result).toEqual({ code: 0, summary: ['zerowiz: quit without writing.'] });
    // The finish menu's "Quit without writing" asks the same dialog.
    const fin = run(
      dirty,
      { type: 'flow', action: { type: 'finish' } },
      { type: 'finish', action: { type: 'choose', item: 'quit' } },
    );
    expect(fin.dialog).toEqual({ kind: 'quit' });
    // Once ended, nothing changes it.
    expect(run(out, { type: 'quit' }, { type: 'abort' })).toBe(out);
    expect(keyStack(out, list)).toEqual([]);
  });

  it('finish: the commands tab, a write with its diff, a preset save, then exit with the summary', () => {
    let s = run(
      walk(detected()),
      { type: 'steps', action: { type: 'template', steps: seedSteps() } },
      { type: 'stepsDone' },
    );
    s = run(s, { type: 'flow', action: { type: 'finish' } });
    expect(s.preview).toEqual({ tab: 'commands', scroll: 0 });
    expect(keyStack(s, list)).toEqual(['list', 'finish', 'app']);
    s = run(s, { type: 'finish', action: { type: 'choose', item: 'dir' } });
    expect(keyStack(s, list)).toEqual(['textField', 'editing', 'app']);
    s = run(
      s,
      { type: 'finish', action: { type: 'text', text: '~/cfg' } },
      { type: 'finish', action: { type: 'submit' } },
    );
    expect(finishEffect(s.finish)).toEqual({ kind: 'plan', target: { kind: 'dir', dir: '~/cfg' } });
    expect(keyStack(s, list)).toEqual([]); // planning: only Ctrl+C
    s = run(s, { type: 'finish', action: { type: 'planned', plan: PLAN(true) } });
    expect(keyStack(s, list)).toEqual(['diff', 'app']);
    expect(previewShown(s)).toBe(false);
    s = run(s, { type: 'finish', action: { type: 'confirm' } });
    expect(finishEffect(s.finish)).toEqual({ kind: 'write', plan: PLAN(true) });
    const written = { ...setupOfWizard(s), files: { accelerateConfig: '/w/cfg/a.yaml', dsConfig: '/w/cfg/d.json' } };
    s = run(s, { type: 'finish', action: { type: 'wrote', lines: ['wrote /w/cfg/a.yaml', 'run:'], setup: written } });
    expect(s.flow.dirty).toBe(false);
    expect(setupOfWizard(s).files.accelerateConfig).toBe('/w/cfg/a.yaml');
    expect(finishItems(s.finish, { steps: 2, defaultConfigPath: 'x' }).map((i) => i.id)).toEqual([
      'exit',
      'preset',
      'launch',
    ]);
    s = run(
      s,
      { type: 'finish', action: { type: 'choose', item: 'preset', presetName: 'qwen-8' } },
      { type: 'finish', action: { type: 'submit' } },
    );
    expect(finishEffect(s.finish)).toEqual({ kind: 'save', name: 'qwen-8' });
    s = run(s, {
      type: 'finish',
      action: { type: 'saved', name: 'qwen-8', path: '/h/.config/zerowiz/presets/qwen-8.yaml' },
    });
    expect(s.finish.step).toEqual({ step: 'written' });
    expect(s.finish.note).toBe('saved preset qwen-8: /h/.config/zerowiz/presets/qwen-8.yaml');
    const out = run(s, { type: 'finish', action: { type: 'choose', item: 'exit' } });
    expect(out.result).toEqual({ code: 0, summary: ['wrote /w/cfg/a.yaml', 'run:'] });
    // Launch is checked by the launch entry first; the wizard ends once it accepted it, the run recorded under
    // the preset saved here.
    // Launch asks first (it spends GPU hours, one row from harmless entries): n goes back with the highlight kept.
    const asked = run(s, { type: 'finish', action: { type: 'choose', item: 'launch' } });
    expect(asked.finish.step).toEqual({ step: 'launchAsk', after: 'written' });
    expect(finishEffect(asked.finish)).toBeNull();
    expect(keyStack(asked, list)).toEqual(['launchAsk', 'app']);
    const notNow = run(asked, { type: 'finish', action: { type: 'cancel' } });
    expect([notNow.finish.step, notNow.finish.cursor]).toEqual([{ step: 'written' }, 'launch']);
    const checking = run(asked, { type: 'finish', action: { type: 'confirm' } });
    expect(checking.result).toBeNull();
    expect(finishEffect(checking.finish)).toEqual({ kind: 'checkLaunch', slurm: null });
    // Accepted, the files the launch writes are planned (a diff when one would change), then it starts.
    const planned = run(checking, { type: 'finish', action: { type: 'launchChecked' } });
    expect(finishEffect(planned.finish)).toEqual({ kind: 'plan', target: { kind: 'launch' } });
    const launched = run(planned, { type: 'finish', action: { type: 'planned', plan: PLAN(false) } });
    expect(launched.result?.launch?.files.accelerateConfig).toBe('/w/cfg/a.yaml');
    expect(launched.result?.launchSource).toEqual({ kind: 'wizard', preset: 'qwen-8' });
    // A setup started as "New setup" (named my-setup) takes the preset's name: its run record is named after it.
    expect(setupOfWizard(detected()).name).toBe('my-setup');
    expect(launched.result?.launch?.name).toBe('qwen-8');
    expect(setupOfWizard(s).name).toBe('qwen-8');
    const aborted = run(s, { type: 'abort' });
    expect(aborted.result).toEqual({
      code: 130,
      summary: ['zerowiz: aborted; the files written stay:', 'wrote /w/cfg/a.yaml', 'run:'],
    });
  });

  it('a preset opens on the review with its steps; an import lists what it kept and moved', () => {
    const p = findPreset('qwen-image-lora-lowvram', presetEnv);
    const { answers: _a, ...base } = p.setup;
    const s = run(detected(), { type: 'preset', name: p.name, given: p.given, base });
    expect(screenOf(s)).toBe('review');
    expect(s.flow.base.steps).toHaveLength(2);
    const i = run(detected(), {
      type: 'imported',
      path: 'a.yaml',
      given: {},
      base,
      kept: ['x.y'],
      moved: ['zero_stage'],
      notes: ['gradient_accumulation_steps: (absent) -> 1'],
    });
    expect(i.message).toBe('1 key(s) kept, 1 moved, 1 changed (listed in the review) · from a.yaml');
    expect(i.imported).toEqual({
      path: 'a.yaml',
      kept: ['x.y'],
      moved: ['zero_stage'],
      notes: ['gradient_accumulation_steps: (absent) -> 1'],
    });
    const f = run(detected(), { type: 'importFailed', error: 'no such file' });
    expect(screenOf(f)).toBe('start');
    expect(f.message).toBe('cannot import: no such file');
  });
});

describe('the finish machine alone', () => {
  const at = (step: FinishState['step'], written: FinishState['written'] = null): FinishState => ({
    step,
    note: null,
    written,
  });
  const W = { lines: ['wrote a'], setup: PLAN(false).setup };

  it('writes without asking when no existing file changes', () => {
    const s = finishReducer(at({ step: 'planning', target: { kind: 'default' } }), {
      type: 'planned',
      plan: PLAN(false),
    });
    expect(s.step).toEqual({ step: 'writing', plan: PLAN(false) });
  });

  it('says why nothing was written, and keeps a refused preset name for another try', () => {
    expect(
      finishReducer(at({ step: 'planning', target: { kind: 'default' } }), { type: 'planFailed', error: 'EACCES' }),
    ).toEqual({
      ...at({ step: 'menu' }),
      note: 'cannot write: EACCES',
    });
    expect(
      finishReducer(at({ step: 'writing', plan: PLAN(false) }), { type: 'writeFailed', error: 'ENOSPC' }).note,
    ).toBe('nothing written: ENOSPC');
    const refused = finishReducer(at({ step: 'saving', name: 'a b', after: 'menu' }), {
      type: 'saveFailed',
      error: 'bad name',
    });
    expect(refused).toEqual({
      step: { step: 'presetName', text: 'a b', after: 'menu' },
      note: 'not saved: bad name',
      written: null,
    });
    expect(finishReducer(at({ step: 'presetName', text: '  ', after: 'menu' }), { type: 'submit' }).note).toBe(
      'type a name for the preset',
    );
  });

  it('says so when the saved preset has no steps', () => {
    const s = finishReducer(at({ step: 'saving', name: 'mine', after: 'menu' }), {
      type: 'saved',
      name: 'mine',
      path: '/p/mine.yaml',
      warning: 'preset mine has no steps',
    });
    expect(s.note).toBe('saved preset mine: /p/mine.yaml. Note: preset mine has no steps');
  });

  it('Esc leaves a field or the diff for the menu, or for the written summary it came from', () => {
    expect(finishReducer(at({ step: 'dir', text: 'x' }), { type: 'cancel' }).step).toEqual({ step: 'menu' });
    expect(finishReducer(at({ step: 'confirm', plan: PLAN(true), scroll: 3 }), { type: 'cancel' }).step).toEqual({
      step: 'menu',
    });
    expect(finishReducer(at({ step: 'presetName', text: 'x', after: 'written' }, W), { type: 'cancel' }).step).toEqual({
      step: 'written',
    });
  });

  it('scrolls the diff within its length, and ignores what does not fit the step', () => {
    const c = at({ step: 'confirm', plan: PLAN(true), scroll: 0 });
    expect(finishReducer(c, { type: 'scroll', delta: 50, maxTop: 7 }).step).toMatchObject({ scroll: 7 });
    expect(finishReducer(c, { type: 'scroll', delta: -5, maxTop: 7 }).step).toMatchObject({ scroll: 0 });
    expect(finishReducer(FINISH_START, { type: 'confirm' })).toBe(FINISH_START);
    expect(finishReducer(FINISH_START, { type: 'wrote', lines: [], setup: W.setup })).toBe(FINISH_START);
    expect(finishEffect(FINISH_START)).toBeNull();
  });

  it('offers launch only when there are steps', () => {
    expect(
      finishItems(FINISH_START, {
        steps: 0,
        defaultConfigPath: '/h/.cache/huggingface/accelerate/default_config.yaml',
      }),
    ).toEqual([
      { id: 'dir', label: 'Write to a directory (accelerate_config.yaml + ds_config.json)…' },
      {
        id: 'default',
        label: "Write as accelerate's default config: /h/.cache/huggingface/accelerate/default_config.yaml",
      },
      { id: 'preset', label: 'Save the answers and steps as a user preset…' },
      { id: 'back', label: 'Back to the review' },
      { id: 'quit', label: 'Quit without writing' },
    ]);
    expect(finishItems(FINISH_START, { steps: 2, defaultConfigPath: 'x' }).map((i) => i.id)).toContain('launch');
  });
});

describe('phase 2: the finish actions and the flow around them', () => {
  it('Submit to Slurm: a form that cannot open goes back to the menu and says why', () => {
    let s = run(
      walk(detected()),
      { type: 'steps', action: { type: 'template', steps: seedSteps() } },
      { type: 'stepsDone' },
      { type: 'flow', action: { type: 'finish' } },
      { type: 'finish', action: { type: 'choose', item: 'slurm' } },
    );
    expect(s.finish.step).toEqual({ step: 'slurmLoading' });
    s = run(s, { type: 'finish', action: { type: 'slurmFailed', error: 'chunk missing' } });
    expect(s.finish.step).toEqual({ step: 'menu' });
    expect(s.finish.note).toBe('cannot open the Slurm form: chunk missing');
  });

  it('Submit to Slurm: the partitions listed, each field with its default, Esc back a field; the end names the job', () => {
    let s = run(
      walk(detected()),
      { type: 'steps', action: { type: 'template', steps: seedSteps() } },
      { type: 'stepsDone' },
      { type: 'flow', action: { type: 'finish' } },
    );
    expect(finishItems(s.finish, { steps: 2, defaultConfigPath: 'x', slurm: true }).map((i) => i.id)).toContain(
      'slurm',
    );
    expect(finishItems(s.finish, { steps: 2, defaultConfigPath: 'x', slurm: false }).map((i) => i.id)).not.toContain(
      'slurm',
    );
    expect(finishItems(s.finish, { steps: 0, defaultConfigPath: 'x', slurm: true }).map((i) => i.id)).not.toContain(
      'slurm',
    );
    s = run(s, { type: 'finish', action: { type: 'choose', item: 'slurm' } });
    expect(finishEffect(s.finish)).toEqual({ kind: 'partitions' });
    expect(keyStack(s, list)).toEqual([]); // only Ctrl+C while sinfo answers
    s = run(s, {
      type: 'finish',
      action: {
        type: 'partitions',
        partitions: [
          { name: 'debug', isDefault: false },
          { name: 'gpu', isDefault: true },
        ],
        shape: { nodes: 1, gpusPerNode: 8 },
      },
    });
    expect(s.finish.step).toMatchObject({
      step: 'slurm',
      field: 0,
      values: { partition: 'gpu', nodes: '1', gpusPerNode: '8', time: '', account: '' },
    });
    expect(keyStack(s, list)).toEqual(['textField', 'editing', 'app']);
    s = run(
      s,
      { type: 'finish', action: { type: 'submit' } },
      { type: 'finish', action: { type: 'text', text: '2' } },
      { type: 'finish', action: { type: 'cancel' } }, // back to the partition, the nodes kept
    );
    expect(s.finish.step).toMatchObject({ step: 'slurm', field: 0, values: { nodes: '2' } });
    s = run(s, { type: 'finish', action: { type: 'slurmRefused', error: 'no such partition' } });
    expect(s.finish.note).toBe('no such partition');
    s = run(
      s,
      { type: 'finish', action: { type: 'submit' } },
      { type: 'finish', action: { type: 'submit' } },
      { type: 'finish', action: { type: 'submit' } },
      { type: 'finish', action: { type: 'text', text: ' 02:00:00 ' } },
      { type: 'finish', action: { type: 'submit' } },
    );
    expect(s.result).toBeNull();
    s = run(s, { type: 'finish', action: { type: 'submit' } });
    // The form is complete: the job is checked as `launch --slurm` checks it before the wizard ends.
    expect(s.result).toBeNull();
    expect(finishEffect(s.finish)).toMatchObject({ kind: 'checkLaunch', slurm: { partition: 'gpu' } });
    s = run(s, { type: 'finish', action: { type: 'launchChecked' } });
    expect(s.result?.slurm?.values).toEqual({
      partition: 'gpu',
      nodes: '2',
      gpusPerNode: '8',
      time: '02:00:00',
      account: '',
    });
    expect(s.result?.slurm?.setup.steps.map((x) => x.name)).toEqual(['data_process', 'train']);
    expect(s.result?.code).toBe(0);
  });

  it('the loss-log toggle: auto until chosen, then the opposite of what was shown; it rides on the launch, not the setup', () => {
    let s = run(walk(detected()), { type: 'stepsDone' }, { type: 'flow', action: { type: 'finish' } });
    expect(s.csvLog).toBe('auto');
    s = run(s, { type: 'finish', action: { type: 'choose', item: 'csvLog', csvLogOn: false } });
    expect(s.csvLog).toBe(true);
    s = run(s, { type: 'finish', action: { type: 'choose', item: 'csvLog', csvLogOn: true } });
    expect(s.csvLog).toBe(false);
    const launched = run(
      s,
      { type: 'finish', action: { type: 'choose', item: 'launch' } },
      { type: 'finish', action: { type: 'confirm' } },
      { type: 'finish', action: { type: 'launchChecked' } },
      { type: 'finish', action: { type: 'planned', plan: PLAN(false) } },
    );
    expect(launched.result?.csvLog).toBe(false);
    expect(launched.result?.launchSource).toEqual({ kind: 'wizard', preset: null });
  });

  it('a Launch that would change an existing config file shows the diff: n goes back, y launches', () => {
    const s = run(
      walk(detected()),
      { type: 'stepsDone' },
      { type: 'flow', action: { type: 'finish' } },
      { type: 'finish', action: { type: 'choose', item: 'launch' } },
      { type: 'finish', action: { type: 'confirm' } },
      { type: 'finish', action: { type: 'launchChecked' } },
      { type: 'finish', action: { type: 'planned', plan: PLAN(true) } },
    );
    expect(s.finish.step).toMatchObject({ step: 'confirm', launch: true });
    expect(keyStack(s, list)).toEqual(['diff', 'app']);
    expect(s.result).toBeNull();
    const back = run(s, { type: 'finish', action: { type: 'cancel' } });
    expect(back.finish.step).toEqual({ step: 'menu' });
    expect(back.result).toBeNull();
    const yes = run(s, { type: 'finish', action: { type: 'confirm' } });
    expect(yes.result?.launch).toBeDefined();
    expect(finishEffect(yes.finish)).toBeNull(); // nothing written by the wizard: the launch writes its files
  });

  it('a launch the launch entry refuses comes back to the finish screen with its fix, the answers kept', () => {
    let s = run(walk(detected()), { type: 'stepsDone' }, { type: 'flow', action: { type: 'finish' } });
    const given = s.flow.given;
    s = run(
      s,
      { type: 'finish', action: { type: 'choose', item: 'launch' } },
      { type: 'finish', action: { type: 'confirm' } },
      {
        type: 'finish',
        action: {
          type: 'launchRefused',
          error: "step 'train': training script train.py not found in /w",
          hint: "run zerowiz from the trainer's checkout",
        },
      },
    );
    expect(s.result).toBeNull();
    expect(s.finish.step).toEqual({ step: 'menu' });
    expect(s.finish.note).toBe(
      "cannot launch: step 'train': training script train.py not found in /w; fix: run zerowiz from the trainer's checkout",
    );
    expect(s.flow.given).toEqual(given);
  });

  it('choosing a plain ZeRO row ends a split of the offload devices (the answer goes back to its default)', () => {
    let s = run(walk(detected()), { type: 'stepsDone' });
    s = run(s, { type: 'reviewJump', key: 'q:offload_param_device', id: 'offload_param_device' });
    s = run(s, { type: 'flow', action: { type: 'answer', id: 'offload_param_device', value: 'cpu' } });
    expect(s.flow.given.offload_param_device).toBe('cpu');
    s = run(
      s,
      { type: 'flow', action: { type: 'jump', id: 'mode' } },
      {
        type: 'flow',
        action: {
          type: 'answer',
          id: 'mode',
          value: '3-offload',
          also: { offload_device: 'nvme', offload_param_device: undefined } as never,
        },
      },
    );
    expect('offload_param_device' in s.flow.given).toBe(false);
    expect(answersOf(s.flow).offload_param_device).toBe('nvme'); // follows the mode's device again
  });

  it('a finding fixed from the review leaves the cursor on the steps it changed', () => {
    let s = run(
      walk(detected()),
      { type: 'steps', action: { type: 'template', steps: seedSteps() } },
      { type: 'stepsDone' },
    );
    s = run(s, { type: 'applyFix', fix: { kind: 'pinConfig', step: 0, path: 'accelerate_no_deepspeed.yaml' } });
    expect(reviewIndex(s, ['finish', 'f0', 'steps', 'q:num_machines'])).toBe(2);
  });

  it('the start screen has no preview keys: the menu quits with q, the preset list goes back with Esc or ←', () => {
    const s = detected();
    expect(keyStack(s, list)).toEqual(['list', 'start']);
    expect(keyStack(run(s, { type: 'startView', view: 'presets' }), list)).toEqual(['list', 'startSub', 'start']);
    expect(keyStack(run(s, { type: 'startView', view: 'path' }), list)).toEqual(['textField', 'editing', 'start']);
  });
});

describe('after an import', () => {
  it('GPU and CPU memory (and the GPU count) come from detection, whether it answers before or after the import', () => {
    const { answers: _a, ...base } = findPreset('zero3', presetEnv).setup;
    const imported = {
      type: 'imported' as const,
      path: '/x/a.yaml',
      given: { mode: '3' as const },
      base,
      kept: [],
      moved: [],
    };
    for (const s of [
      run(detected(), imported),
      run(initialWizard(), imported, { type: 'detected', env: env8, description: 'x' }),
    ]) {
      const a = answersOf(s.flow);
      expect(a.gpu_memory).toBe(80 * 2 ** 30);
      expect(a.cpu_memory).toBe(2 ** 40);
      expect(a.num_processes).toBe(8);
      expect(a.mode).toBe('3');
    }
  });
});
