/**
 * The wizard's whole state as one pure reducer, next to the flow: the flow itself (screen, question,
 * answers), the start screen's sub-view, the steps screen, the draft of the highlighted answer, the preview's
 * tab and scroll, the help / picture / glossary / explain overlays, the finish screen's machine, the one
 * "Quit without writing?" dialog, and the review row the cursor returns to after an edit. The view renders
 * it, runs the effects it names (detection, imports, the finish screen's writes) and dispatches actions.
 * `keyStack` says which key surfaces (keytable.ts) have the focus, so no view reports "typing" upward.
 */
import {
  question,
  withDefaults,
  type Answers,
  type DetectedEnv,
  type LaunchSource,
  type QuestionId,
} from '../config/index.js';
import type { LaunchStep, Setup } from '../config/index.js';
import type { StepFix } from '../rules/index.js';
import { flattenArgs, groupArgs, withStepConfig } from '../config/index.js';
import {
  answersOf,
  flowReducer,
  progress,
  initialFlow,
  type FlowAction,
  type FlowState,
  type Origin,
  type SetupBase,
} from './flow.js';
import {
  FINISH_START,
  finishReducer,
  finishTyping,
  type FinishAction,
  type FinishItem,
  type FinishState,
  type SlurmValues,
} from './finishState.js';
import { START_STACK, type Surface } from './keytable.js';
import { DETECTING } from './frame.js';
import { EMPTY_PASTE, type PasteBox } from './paste.js';
import { initialStepsEditor, stepsReducer, type StepsAction, type StepsEditorState } from './steps.js';
import { nextTab, type PreviewTab } from './tabs.js';
import type { CsvLogChoice } from '../config/index.js';

/** The Slurm job the user asked for on the finish screen: the setup and what to submit it with. */
export interface SlurmChoice {
  setup: Setup;
  values: SlurmValues;
}

/** How the wizard ends. */
export interface WizardResult {
  code: number;
  /** Lines printed after the terminal is restored (paths written, the launch commands). */
  summary: string[];
  /** Set when the user chose to launch: the setup to run. */
  launch?: Setup;
  /** Set when the user chose to submit the steps to Slurm. */
  slurm?: SlurmChoice;
  /** What the launch ran: the wizard's setup, and the preset it was saved as on the finish screen, if any. */
  launchSource?: LaunchSource;
  /**
   * The preset whose `notify:` list the run's notifications go to, as `zerowiz launch NAME` sends them: the
   * one saved on the finish screen, else the one the wizard started from (null: none, ZEROWIZ_NOTIFY only).
   */
  notifyFrom?: string | null;
  /**
   * With a launch or a Slurm job: add `--enable_csv_log` to the DiffSynth training steps that take it, for
   * this run only (src/config/diffsynth.ts csvLogOffer / withCsvLog), so the pane shows their loss.
   */
  csvLog?: CsvLogChoice;
}

/** What an import kept and moved, listed on the review. */
export interface ImportNotes {
  path: string;
  kept: string[];
  moved: string[];
  /** What the import changed or kept in a way the files do not say (src/setups/import.ts notes). */
  notes?: string[];
}

/** An overlay over the body. */
export type Overlay =
  | { kind: 'help' }
  | { kind: 'picture' }
  /** `from`: the overlay Esc returns to; `at`: the entry it opened on. */
  | { kind: 'glossary'; top: number; at?: string; from: 'help' | 'picture' | null }
  /** Every value each step will use and where it comes from (src/explain/explain.ts), scrolled to `top`. */
  | { kind: 'explain'; top: number };

/** The review row the cursor stays on: the row's key, and the question's row if that one is gone. */
export interface ReviewCursor {
  key: string;
  fallback: string;
}

/** The screens, the steps screen included. */
export type WizardScreen = 'start' | 'question' | 'steps' | 'review' | 'finish';

/** The wizard's state. */
export interface WizardState {
  flow: FlowState;
  /** The start screen's sub-view and its path field. */
  start: { view: 'menu' | 'presets' | 'path'; path: string };
  /** The steps editor while the steps screen is shown, else null. */
  steps: StepsEditorState | null;
  /** Where the steps screen goes back to: the last question (end of the walk) or the review. */
  stepsFrom: 'walk' | 'review';
  /** The steps screen was shown once: the end of a later walk goes straight to the review. */
  stepsSeen: boolean;
  /** The highlighted (not yet chosen) answer: the preview shows it. */
  draft: Partial<Answers> | null;
  preview: { tab: PreviewTab; scroll: number };
  overlay: Overlay | null;
  /** The one "Quit without writing?" dialog. */
  dialog: { kind: 'quit' } | null;
  reviewCursor: ReviewCursor | null;
  finish: FinishState;
  /** The header's news (an import's counts, an error). */
  message: string | null;
  /** The header's detection text. */
  detection: string;
  imported: ImportNotes | null;
  /** The user chose to type a parameter count instead of picking a catalog model. */
  modelTyped: boolean;
  /**
   * A DiffSynth training step's loss log (`--enable_csv_log`, see src/config/diffsynth.ts planCsvLog): on,
   * the Launch and Slurm actions add the flag to that step's argv for this run. Never saved into a preset.
   */
  csvLog: CsvLogChoice;
  /** The directory the steps run in, when the user set it here (else the one zerowiz started in). */
  launchDir: string | null;
  /** The launch directory's field while it is typed (the steps screen's L), else null. */
  launchDirEdit: string | null;
  /** The paste box while a command or script is pasted (the steps screen's P), else null. */
  paste: PasteBox | null;
  /** Set when the wizard ends. */
  result: WizardResult | null;
}

/** The key of the review's row that opens the steps screen. */
export const STEPS_ROW = 'steps';

/** The state the wizard opens with. */
export function initialWizard(
  env: DetectedEnv = { gpuCount: null, gpuMemoryBytes: null, cpuMemoryBytes: null },
): WizardState {
  return {
    flow: initialFlow(env),
    start: { view: 'menu', path: '' },
    steps: null,
    stepsFrom: 'walk',
    stepsSeen: false,
    draft: null,
    preview: { tab: 'yaml', scroll: 0 },
    overlay: null,
    dialog: null,
    reviewCursor: null,
    finish: FINISH_START,
    message: null,
    detection: DETECTING,
    imported: null,
    modelTyped: false,
    csvLog: 'auto',
    launchDir: null,
    launchDirEdit: null,
    paste: null,
    result: null,
  };
}

/** What the views can ask for. */
export type WizardAction =
  | { type: 'flow'; action: FlowAction }
  | { type: 'startView'; view: WizardState['start']['view'] }
  | { type: 'startPath'; text: string }
  | { type: 'newSetup' }
  | { type: 'preset'; name: string; given: Partial<Answers>; base: SetupBase }
  | {
      type: 'imported';
      path: string;
      given: Partial<Answers>;
      base: SetupBase;
      kept: string[];
      moved: string[];
      notes?: string[];
    }
  | { type: 'importFailed'; error: string }
  | { type: 'detected'; env: DetectedEnv; description: string }
  | { type: 'detectFailed' }
  | { type: 'draft'; draft: Partial<Answers> | null }
  | { type: 'typeModel' }
  | { type: 'nextTab' }
  | { type: 'scroll'; delta: number }
  | { type: 'toggleHelp' }
  | { type: 'togglePicture' }
  | { type: 'openGlossary'; at?: string }
  | { type: 'glossaryScroll'; delta: number; maxTop: number }
  | { type: 'closeOverlay' }
  | { type: 'openExplain' }
  | { type: 'explainScroll'; delta: number; maxTop: number }
  /** A review row was chosen: `key` is the row (a finding's or the answer's), `id` the question it opens. */
  | { type: 'reviewJump'; key: string; id: QuestionId }
  | { type: 'openSteps' }
  | { type: 'steps'; action: StepsAction }
  | { type: 'stepsDone' }
  | { type: 'stepsBack' }
  | { type: 'applyFix'; fix: StepFix }
  | { type: 'finish'; action: FinishAction }
  | { type: 'quit' }
  | { type: 'abort' }
  | { type: 'dialog'; answer: 'yes' | 'no' }
  /** The launch directory's field (the steps screen's L): opened with, or typed to, `text`. */
  | { type: 'launchDirEdit'; text: string }
  | { type: 'launchDirCancel' }
  /** The steps run in `dir` from now on (checked: a directory). */
  | { type: 'launchDirSet'; dir: string }
  /** Why the typed launch directory cannot be used (the field stays). */
  | { type: 'launchDirRefused'; error: string }
  /** The paste box (the steps screen's P): opened, its text, closed (the steps read from it, or cancelled). */
  | { type: 'pasteOpen' }
  | { type: 'paste'; box: PasteBox }
  | { type: 'pasteClose' };

/** The screen shown. */
export function screenOf(s: WizardState): WizardScreen {
  return s.steps ? 'steps' : s.flow.screen;
}

/** The setup as answered (committed answers, not the draft). */
export function setupOfWizard(s: WizardState): Setup {
  return { ...s.flow.base, answers: answersOf(s.flow) };
}

/**
 * The answers the preview shows: the committed ones with the highlighted draft on top. Without a draft it is
 * `committed` itself when given (the view passes its memoised answers, so the preview keeps their identity).
 */
export function previewAnswers(
  s: { draft: Partial<Answers> | null; flow: Pick<FlowState, 'given' | 'env'> },
  committed?: Answers,
): Answers {
  return s.draft ? withDefaults({ ...s.flow.given, ...s.draft }, s.flow.env) : (committed ?? answersOf(s.flow));
}

/** Whether the preview is shown: not on the start screen, under an overlay, or beside the overwrite diff. */
export function previewShown(s: WizardState): boolean {
  return screenOf(s) !== 'start' && s.overlay === null && s.finish.step.step !== 'confirm' && s.dialog === null;
}

/** Applies a flow action and resets what belongs to the screen being left (as the app always did). */
function withFlow(s: WizardState, action: FlowAction): WizardState {
  const flow = flowReducer(s.flow, action);
  let next: WizardState = {
    ...s,
    flow,
    draft: null,
    modelTyped: false,
    overlay: null,
    preview: { ...s.preview, scroll: 0 },
  };
  if (action.type === 'start' || action.type === 'toStart')
    next = { ...next, imported: null, stepsSeen: false, reviewCursor: null };
  if (flow.screen === 'finish' && s.flow.screen !== 'finish')
    // The finish screen shows the exact commands that will run: the preview's commands tab.
    next = { ...next, finish: FINISH_START, preview: { tab: 'commands', scroll: 0 } };
  // The end of the walk: the steps come before the review, once.
  const walkEnded =
    s.flow.screen === 'question' && !s.flow.returnToReview && flow.screen === 'review' && action.type === 'answer';
  if (walkEnded && !s.stepsSeen) next = openSteps(next, 'walk');
  return next;
}

function openSteps(s: WizardState, from: 'walk' | 'review'): WizardState {
  const pick = s.flow.base.steps.length === 0 && s.flow.origin.kind === 'new';
  return {
    ...s,
    steps: initialStepsEditor(s.flow.base.steps, pick),
    stepsFrom: from,
    stepsSeen: true,
    overlay: null,
    // The commands as they will run follow every edit of the steps.
    preview: { tab: 'commands', scroll: 0 },
  };
}

/** The steps changed in the editor: the flow's setup follows, so the preview and the findings do. */
function syncSteps(s: WizardState, editor: StepsEditorState): WizardState {
  const flow = flowReducer(s.flow, { type: 'steps', steps: editor.steps });
  return { ...s, steps: editor, flow };
}

function applyFix(steps: readonly LaunchStep[], fix: StepFix): LaunchStep[] {
  return steps.map((step, i) => {
    if (i !== fix.step) return step;
    if (fix.kind === 'pinConfig') return withStepConfig(step, { kind: 'pinned', path: fix.path });
    const groups = groupArgs(step.args);
    const at = groups.findIndex((g) => g.flag === fix.flag);
    if (fix.kind === 'removeArg')
      return at < 0 ? step : { ...step, args: flattenArgs(groups.filter((_, j) => j !== at)) };
    if (at < 0) groups.push({ flag: fix.flag, value: fix.value, joined: false, role: 'arg' });
    else groups[at] = { ...groups[at]!, value: fix.value };
    return { ...step, args: flattenArgs(groups) };
  });
}

function ended(s: WizardState, result: WizardResult): WizardState {
  return s.result ? s : { ...s, result, dialog: null };
}

const NOTHING_WRITTEN = 'zerowiz: nothing written.';

/** The reducer. Once the wizard has ended, nothing changes it. */
export function wizardReducer(s: WizardState, a: WizardAction): WizardState {
  if (s.result) return s;
  switch (a.type) {
    case 'flow':
      return withFlow(s, a.action);
    case 'startView':
      return { ...s, start: { ...s.start, view: a.view } };
    case 'startPath':
      return { ...s, start: { ...s.start, path: a.text } };
    case 'newSetup':
      return withFlow({ ...s, start: { view: 'menu', path: '' } }, { type: 'start', origin: { kind: 'new' } });
    case 'preset': {
      const origin: Origin = { kind: 'preset', name: a.name };
      const next = withFlow(
        { ...s, message: null, start: { view: 'menu', path: '' } },
        {
          type: 'start',
          origin,
          given: a.given,
          base: a.base,
          to: 'review',
        },
      );
      return { ...next, stepsSeen: true };
    }
    case 'imported': {
      const next = withFlow(
        { ...s, start: { view: 'menu', path: '' } },
        {
          type: 'start',
          origin: { kind: 'import', path: a.path },
          given: a.given,
          base: a.base,
          to: 'review',
        },
      );
      const counts = [
        a.kept.length ? `${a.kept.length} key(s) kept` : '',
        a.moved.length ? `${a.moved.length} moved` : '',
        a.notes?.length ? `${a.notes.length} changed` : '',
      ]
        .filter(Boolean)
        .join(', ');
      return {
        ...next,
        stepsSeen: true,
        imported: { path: a.path, kept: [...a.kept], moved: [...a.moved], notes: [...(a.notes ?? [])] },
        message: counts ? `${counts} (listed in the review) · from ${a.path}` : `from ${a.path}`,
      };
    }
    case 'importFailed':
      return { ...withFlow(s, { type: 'toStart' }), message: `cannot import: ${a.error}` };
    case 'detected':
      return { ...s, flow: flowReducer(s.flow, { type: 'env', env: a.env }), detection: a.description };
    case 'detectFailed':
      return { ...s, detection: 'GPUs not detected' };
    case 'draft':
      return { ...s, draft: a.draft };
    case 'typeModel':
      return { ...s, modelTyped: true };
    case 'nextTab':
      return screenOf(s) === 'start' ? s : { ...s, preview: { tab: nextTab(s.preview.tab), scroll: 0 } };
    case 'scroll':
      return { ...s, preview: { ...s.preview, scroll: Math.max(0, s.preview.scroll + a.delta) } };
    case 'toggleHelp':
      if (s.overlay?.kind === 'help') return { ...s, overlay: null };
      return screenOf(s) === 'question' || screenOf(s) === 'steps' ? { ...s, overlay: { kind: 'help' } } : s;
    case 'togglePicture':
      if (s.overlay?.kind === 'picture') return { ...s, overlay: null };
      return screenOf(s) === 'question' && s.flow.current === 'mode' ? { ...s, overlay: { kind: 'picture' } } : s;
    case 'openGlossary': {
      const from = s.overlay?.kind === 'help' || s.overlay?.kind === 'picture' ? s.overlay.kind : null;
      return { ...s, overlay: { kind: 'glossary', top: 0, from, ...(a.at !== undefined ? { at: a.at } : {}) } };
    }
    case 'glossaryScroll': {
      if (s.overlay?.kind !== 'glossary') return s;
      const { at: _at, ...rest } = s.overlay;
      return { ...s, overlay: { ...rest, top: Math.max(0, Math.min(a.maxTop, s.overlay.top + a.delta)) } };
    }
    case 'openExplain':
      return screenOf(s) === 'start' ? s : { ...s, overlay: { kind: 'explain', top: 0 } };
    case 'explainScroll':
      if (s.overlay?.kind !== 'explain') return s;
      return { ...s, overlay: { kind: 'explain', top: Math.max(0, Math.min(a.maxTop, s.overlay.top + a.delta)) } };
    case 'closeOverlay':
      if (s.overlay?.kind === 'glossary' && s.overlay.from) return { ...s, overlay: { kind: s.overlay.from } };
      return { ...s, overlay: null };
    case 'reviewJump':
      return withFlow({ ...s, reviewCursor: { key: a.key, fallback: `q:${a.id}` } }, { type: 'jump', id: a.id });
    case 'openSteps':
      // Back from the steps, the review's cursor is on its steps row.
      return screenOf(s) === 'review'
        ? { ...openSteps(s, 'review'), reviewCursor: { key: STEPS_ROW, fallback: 'finish' } }
        : s;
    case 'steps': {
      if (!s.steps) return s;
      return syncSteps(s, stepsReducer(s.steps, a.action));
    }
    case 'stepsDone':
      // The flow is on the review already (the steps screen sits over it).
      return s.steps ? { ...s, steps: null, reviewCursor: s.stepsFrom === 'review' ? s.reviewCursor : null } : s;
    case 'stepsBack':
      if (!s.steps) return s;
      if (s.stepsFrom === 'review') return { ...s, steps: null };
      return withFlow({ ...s, steps: null }, { type: 'back' });
    case 'applyFix': {
      const steps = applyFix(s.flow.base.steps, a.fix);
      const flow = flowReducer(s.flow, { type: 'steps', steps });
      // The finding is gone with the fix: the cursor goes to the steps it changed.
      const reviewCursor = screenOf(s) === 'review' ? { key: STEPS_ROW, fallback: 'finish' } : s.reviewCursor;
      return { ...s, flow, reviewCursor, steps: s.steps ? { ...s.steps, steps } : null };
    }
    case 'finish': {
      const act = a.action;
      if (
        act.type === 'choose' &&
        (act.item === 'back' || act.item === 'quit' || act.item === 'launch' || act.item === 'exit')
      )
        return leaveFinish(s, act.item);
      // The toggle turns what is shown now (auto: on where the checkout is known to have the flag) around.
      if (act.type === 'choose' && act.item === 'csvLog') return { ...s, csvLog: !(act.csvLogOn ?? s.csvLog === true) };
      const finish = finishReducer(s.finish, act);
      if (finish.step.step === 'launchReady') {
        // The launch entry accepted it: the wizard ends, and the run starts the way `zerowiz launch` (or
        // `--slurm`) starts it: the setup as written, or as it stands (the launch writes its files first).
        const setup = s.finish.written?.setup ?? setupOfWizard(s);
        const launchSource: LaunchSource = { kind: 'wizard', preset: s.finish.savedPreset ?? null };
        const notifyFrom = s.finish.savedPreset ?? (s.flow.origin.kind === 'preset' ? s.flow.origin.name : null);
        const values = finish.step.slurm;
        return ended(
          { ...s, finish },
          values
            ? {
                code: 0,
                summary: s.finish.written?.lines ?? [],
                slurm: { setup, values },
                csvLog: s.csvLog,
                launchSource,
                notifyFrom,
              }
            : {
                code: 0,
                summary: s.finish.written?.lines ?? [],
                launch: setup,
                csvLog: s.csvLog,
                launchSource,
                notifyFrom,
              },
        );
      }
      let next: WizardState = { ...s, finish };
      if (act.type === 'saved' && s.finish.step.step === 'saving') {
        // The setup is that preset from now on: a launch is recorded under its name (the record's directory is
        // named after the setup), not as `custom`.
        const name = act.name;
        next = {
          ...next,
          flow: { ...next.flow, base: { ...next.flow.base, name } },
          finish: finish.written
            ? { ...finish, written: { ...finish.written, setup: { ...finish.written.setup, name } } }
            : finish,
        };
      }
      if (act.type === 'wrote' && s.finish.step.step === 'writing') {
        // From now on the preview (and a later preset or launch) shows the setup as written.
        const { answers: _a, ...base } = act.setup;
        next = { ...next, flow: flowReducer(next.flow, { type: 'written', base }) };
      }
      return next;
    }
    case 'quit':
      if (s.flow.dirty) return { ...s, dialog: { kind: 'quit' } };
      return ended(s, { code: 0, summary: s.finish.written?.lines ?? [NOTHING_WRITTEN] });
    case 'abort':
      return ended(s, {
        code: 130,
        summary: s.finish.written
          ? ['zerowiz: aborted; the files written stay:', ...s.finish.written.lines]
          : ['zerowiz: aborted; nothing written.'],
      });
    case 'launchDirEdit':
      return screenOf(s) === 'steps' ? { ...s, launchDirEdit: a.text } : s;
    case 'launchDirCancel':
      return { ...s, launchDirEdit: null };
    case 'launchDirSet':
      return {
        ...s,
        launchDir: a.dir,
        launchDirEdit: null,
        steps: s.steps ? { ...s.steps, message: `the steps run in ${a.dir}` } : s.steps,
      };
    case 'launchDirRefused':
      return s.steps ? { ...s, steps: { ...s.steps, message: a.error } } : s;
    case 'pasteOpen':
      return screenOf(s) === 'steps' ? { ...s, paste: EMPTY_PASTE } : s;
    case 'paste':
      return s.paste === null ? s : { ...s, paste: a.box };
    case 'pasteClose':
      return { ...s, paste: null };
    case 'dialog':
      if (!s.dialog) return s;
      return a.answer === 'yes'
        ? ended(s, { code: 0, summary: ['zerowiz: quit without writing.'] })
        : { ...s, dialog: null };
  }
}

function leaveFinish(s: WizardState, item: Extract<FinishItem, 'back' | 'quit' | 'launch' | 'exit'>): WizardState {
  const st = s.finish.step.step;
  if (st !== 'menu' && st !== 'written') return s;
  if (item === 'back') return st === 'menu' ? withFlow(s, { type: 'back' }) : s;
  if (item === 'quit') return wizardReducer(s, { type: 'quit' });
  if (item === 'exit') return ended(s, { code: 0, summary: s.finish.written?.lines ?? [NOTHING_WRITTEN] });
  // Launch: checked by the launch entry first (finishState's checkLaunch effect); the wizard ends once accepted.
  return { ...s, finish: finishReducer(s.finish, { type: 'launch' }) };
}

/** The review row to highlight: the remembered row if it is still listed, else its question's row. */
export function reviewIndex(s: WizardState, rowKeys: readonly string[]): number {
  const c = s.reviewCursor;
  if (!c) return 0;
  const i = rowKeys.indexOf(c.key);
  if (i >= 0) return i;
  return Math.max(0, rowKeys.indexOf(c.fallback));
}

/** What the key router needs beyond the state: whether the current question shows a text field. */
export interface FocusContext {
  /** The current question is typed (a text question, or the model size once the user chose to type it). */
  textQuestion: boolean;
}

/** The key surfaces with the focus, innermost first (see keytable.ts); empty: only Ctrl+C works. */
export function keyStack(s: WizardState, ctx: FocusContext): Surface[] {
  if (s.result) return [];
  if (s.dialog) return ['dialog', 'app'];
  if (s.overlay?.kind === 'glossary') return ['glossary', 'app'];
  if (s.overlay?.kind === 'explain') return ['explain', 'app'];
  const screen = screenOf(s);
  if (screen === 'start') {
    // No preview yet: Tab and the paging keys mean nothing here.
    if (s.start.view === 'path') return ['textField', 'editing', 'start'];
    return s.start.view === 'presets' ? ['list', 'startSub', 'start'] : [...START_STACK];
  }
  if (screen === 'question') {
    const outer: Surface[] = s.flow.current === 'mode' ? ['modeQuestion', 'question', 'app'] : ['question', 'app'];
    if (s.overlay?.kind === 'picture') return ['picture', 'list', ...outer];
    const help: Surface[] = s.overlay?.kind === 'help' ? ['help'] : [];
    return ctx.textQuestion ? ['answerField', ...help, ...outer] : [...help, 'list', ...outer];
  }
  if (screen === 'steps') {
    const e = s.steps!;
    if (s.paste !== null) return ['paste'];
    if (s.launchDirEdit !== null) return ['textField', 'editing', 'app'];
    if (e.offer) return ['offer', 'app'];
    if (e.edit) return ['textField', 'editing', 'app'];
    if (e.picking) return ['list', 'templates', 'app'];
    return s.overlay?.kind === 'help' ? ['help', 'steps', 'app'] : ['steps', 'app'];
  }
  if (screen === 'review') return ['list', 'review', 'app'];
  const st = s.finish.step.step;
  if (finishTyping(s.finish)) return ['textField', 'editing', 'app'];
  if (st === 'confirm') return ['diff', 'app'];
  if (st === 'launchAsk') return ['launchAsk', 'app'];
  if (st === 'menu' || st === 'written') return ['list', 'finish', 'app'];
  return []; // planning, writing, saving: only Ctrl+C
}

/** The header: where the user is (the setup's origin, the screen or question, an overlay), the news, what was detected. */
export function wizardHeader(s: WizardState, answers: Answers): string {
  const screen = screenOf(s);
  if (screen === 'start') return `zerowiz · start${s.message ? ` · ${s.message}` : ''} · ${s.detection}`;
  const o = s.flow.origin;
  const origin = o.kind === 'preset' ? `preset ${o.name}` : o.kind === 'import' ? 'imported config' : 'new setup';
  let where: string = screen;
  if (screen === 'question') {
    const q = question(s.flow.current);
    const pr = progress(q.id, answers, s.flow.given);
    where = q.advanced
      ? `${q.id} (advanced)`
      : `Q${pr.index}/${pr.total} ${q.section === 'json' ? 'DeepSpeed JSON' : q.section}`;
  }
  if (s.overlay?.kind === 'picture') where += ' · picture';
  if (s.overlay?.kind === 'glossary') where += ' · glossary';
  if (s.overlay?.kind === 'explain') where += ' · explain';
  return `zerowiz · ${origin}${s.flow.dirty ? ' *' : ''} · ${where}${s.message ? ` · ${s.message}` : ''} · ${s.detection}`;
}
