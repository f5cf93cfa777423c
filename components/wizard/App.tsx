/**
 * The wizard's shell: one reducer (src/wizard/shell.ts) holds every screen's state; this component renders
 * it, runs the effects the state names (detection, the import, the finish screen's writes, Slurm's
 * partitions) and turns keys into actions through the key tables (src/wizard/keytable.ts): the focused views
 * (a list, a text field) register their surface's handler, the shell handles the rest, and the hint rows
 * come from the same tables.
 */
import type React from 'react';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { Box, Text } from 'ink';
import { noDeepSpeedConfigPath, type AccelerateConfigSummary } from '../../src/config/accelerate-config.js';
import { expandPath, expandWord, processContext, type ExpandContext } from '../../src/expand.js';
import type { ImportResult } from '../../src/config/import.js';
import { csvLogOffer, csvLogSteps, type CsvLogOffer } from '../../src/launch/diffsynth.js';
import type { ModelEntry } from '../../src/estimate/models.js';
import type { MeasuredRun } from '../../src/estimate/measured.js';
import type { Preset, PresetProblem } from '../../src/config/presets.js';
import {
  question,
  type Answers,
  type DetectedEnv,
  type Question,
  type QuestionId,
} from '../../src/config/questions.js';
import { noStepsNote, type LaunchStep } from '../../src/config/setup.js';
import type { StepFinding } from '../../src/config/step-findings.js';
import { clip } from '../../src/text.js';
import { enterChoice } from '../../src/wizard/display.js';
import { diffLines } from '../../src/wizard/finish.js';
import { finishEffect, finishItems, SLURM_FIELDS } from '../../src/wizard/finishState.js';
import { answersOf, progress } from '../../src/wizard/flow.js';
import { glossaryTermFor, glossaryView } from '../../src/wizard/glossary.js';
import { hintLines, type Command, type Surface, type SurfaceHandler } from '../../src/wizard/keytable.js';
import {
  DIFF_CHROME_ROWS,
  EXPLAIN_TITLE_ROWS,
  GLOSSARY_TITLE_ROWS,
  explainWindow,
  finishRows,
  layoutOf,
} from '../../src/wizard/layout.js';
import type { Preview as PreviewData } from '../../src/wizard/preview.js';
import {
  initialWizard,
  keyStack,
  previewAnswers,
  previewShown,
  reviewIndex,
  screenOf,
  wizardReducer,
  type WizardAction,
  type WizardResult,
} from '../../src/wizard/shell.js';
import { nextStepConfig, stepRows, templateSteps, type StepsAction } from '../../src/wizard/steps.js';
import { glossaryContext, keyLabel, modeStart, selectedKey, tradeoffOf } from '../../src/wizard/tradeoff.js';
import { KeyDispatcher, KeyRouter, useKeyHold } from '../common/keys.js';
import { tint } from '../common/theme.js';
import { useTerminalSize } from '../common/useTerminalSize.js';
import { FinishScreen, presetDescription, type FinishDeps } from './FinishScreen.js';
import { ExplainView } from './ExplainView.js';
import { GlossaryView } from './GlossaryView.js';
import { PictureView } from './PictureView.js';
import { Preview } from './Preview.js';
import { QuestionScreen } from './QuestionScreen.js';
import { ReviewScreen } from './ReviewScreen.js';
import { StartScreen } from './StartScreen.js';
import { StepsScreen } from './StepsScreen.js';
import { draftFor, modeHeight } from '../../src/wizard/mode-table.js';
import { LIST_LIMIT, helpLines, modelListShown, promptLines } from '../../src/wizard/question-text.js';
import { importLines, reviewItems, type ReviewItem } from '../../src/wizard/review.js';
import { stepsChromeRows, stepsHelpLines } from '../../src/wizard/steps-text.js';

export type { WizardResult };

/** Everything the wizard reads or writes outside itself (real in the bin, stand-ins in tests). */
export interface AppDeps extends FinishDeps {
  detect(): Promise<{ env: DetectedEnv; description: string }>;
  listPresets(): { presets: Preset[]; problems: PresetProblem[] };
  importConfig(path: string): ImportResult;
  loadModels(): ModelEntry[];
  /** The run records of the launch directory as measurements (src/launch/fit.ts loadMeasuredRuns), for the ZeRO table. */
  measuredRuns?: () => MeasuredRun[];
  defaultConfigExists: boolean;
  /** Resolves when listPresets/importConfig/loadModels/planWrite can be called (they may load lazily). */
  ready?: Promise<void>;
  /** Starts that loading; the app calls it once its first frame is on the screen. */
  startLoading?: () => void;
  /** A built-in preset's steps (the seed recipe's template). */
  presetSteps?: (name: string) => LaunchStep[];
  /** accelerate's default config as a step without --config_file finds it (for the step findings). */
  defaultConfigSummary?: () => AccelerateConfigSummary;
  /** Where typed paths are expanded against (default: this process's environment and directory). */
  paths?: ExpandContext;
}

/** The steps screen's keys that are one editor action each. */
const STEP_ACTIONS: Partial<Record<Command, StepsAction>> = {
  up: { type: 'move', delta: -1 },
  down: { type: 'move', delta: 1 },
  editFlag: { type: 'startEdit', part: 'flag' },
  addArg: { type: 'addArg' },
  removeArg: { type: 'removeArg' },
  moveArgUp: { type: 'moveArg', delta: -1 },
  moveArgDown: { type: 'moveArg', delta: 1 },
  addStep: { type: 'addStep' },
  removeStep: { type: 'removeStep' },
  templates: { type: 'pickTemplate' },
};

/** The preview module (emitters, validation, yaml): loaded right after the first frame, never before it. */
type PreviewModule = typeof import('../../src/wizard/preview.js');
let previewModule: PreviewModule | null = null;
const loadPreview = (): Promise<PreviewModule> =>
  import('../../src/wizard/preview.js').then((m) => (previewModule = m));

/** explain's module (the provenance model), loaded when the explain view first opens. */
type ExplainModule = typeof import('../../src/config/explain.js');
const loadExplain = (): Promise<ExplainModule> => import('../../src/config/explain.js');

const NO_FINDINGS: PreviewData['findings'] = [];
/** This process's environment and directory, once (a stable identity for the hooks that depend on it). */
const PROCESS_PATHS: ExpandContext = processContext();
/** Lines a PgUp/PgDn moves the preview. */
const PREVIEW_PAGE_LINES = 5;

/** Props of the wizard. */
export interface AppProps {
  deps: AppDeps;
  configPath?: string | undefined;
  /** The start menu's entry highlighted before Ink took over (keys answered on the painted frame). */
  startIndex?: number;
  onExit: (r: WizardResult) => void;
}

/** The wizard: start, questions, steps, review, finish; the preview follows every answer. */
export function App(props: AppProps): React.JSX.Element {
  return (
    <KeyRouter>
      <Wizard {...props} />
    </KeyRouter>
  );
}

function Wizard({ deps, configPath, startIndex, onExit }: AppProps): React.JSX.Element {
  const { columns, rows } = useTerminalSize();
  const [s, dispatch] = useReducer(wizardReducer, undefined, () => initialWizard());
  const [loaded, setLoaded] = useState(deps.ready === undefined);
  const [preview$, setPreview$] = useState<PreviewModule | null>(previewModule);
  const paths = deps.paths ?? PROCESS_PATHS;
  // biome-ignore lint/correctness/useExhaustiveDependencies: loads the preview module once, on mount.
  useEffect(() => {
    let live = true;
    if (!preview$) void loadPreview().then((m) => live && setPreview$(m));
    return () => {
      live = false;
    };
  }, []);
  useEffect(() => {
    let live = true;
    deps.startLoading?.();
    deps.ready?.then(() => live && setLoaded(true));
    return () => {
      live = false;
    };
  }, [deps]);
  const presetList = useMemo(() => (loaded ? deps.listPresets() : { presets: [], problems: [] }), [deps, loaded]);
  const models = useMemo(() => {
    if (!loaded) return [];
    try {
      return deps.loadModels();
    } catch {
      return [];
    }
  }, [deps, loaded]);

  // What the runs of this directory measured, beside the ZeRO table's estimate (read once, after loading).
  const measuredRuns = useMemo(() => {
    if (!loaded || !deps.measuredRuns) return [];
    try {
      return deps.measuredRuns();
    } catch {
      return [];
    }
  }, [deps, loaded]);

  // Detection: the defaults of GPU count and memory follow it, whenever it answers.
  useEffect(() => {
    let live = true;
    deps.detect().then(
      (r) => live && dispatch({ type: 'detected', env: r.env, description: r.description }),
      () => live && dispatch({ type: 'detectFailed' }),
    );
    return () => {
      live = false;
    };
  }, [deps]);

  const importFrom = useCallback(
    (typed: string) => {
      const x = expandPath(typed, paths);
      if (!x.ok) {
        dispatch({ type: 'importFailed', error: `${x.error}; ${x.hint}` });
        return;
      }
      try {
        const r = deps.importConfig(x.value);
        const { answers: _answers, ...base } = r.setup;
        dispatch({
          type: 'imported',
          path: x.value,
          given: { ...r.given },
          base,
          kept: [...r.kept],
          moved: [...r.moved],
          notes: [...r.notes],
        });
      } catch (e) {
        dispatch({ type: 'importFailed', error: (e as Error).message });
      }
    },
    [deps, paths],
  );
  useEffect(() => {
    if (configPath && loaded) importFrom(configPath);
  }, [configPath, importFrom, loaded]);

  // The end: the caller restores the terminal and prints the summary.
  const exited = useRef(false);
  useEffect(() => {
    if (s.result && !exited.current) {
      exited.current = true;
      onExit(s.result);
    }
  }, [s.result, onExit]);

  const screen = screenOf(s);
  // The preview depends on the draft, the given answers, the detected machine and the setup's base only: a
  // key that changes none of them (a tab, a scroll, an overlay) keeps every identity below and computes nothing.
  const { given, env, base } = s.flow;
  const draft = s.draft;
  const answers = useMemo(() => answersOf({ given, env }), [given, env]);
  const setup = useMemo(() => ({ ...base, answers }), [base, answers]);
  const previewSetup = useMemo(() => {
    const shown = previewAnswers({ draft, flow: { given, env } }, answers);
    return shown === answers ? setup : { ...base, answers: shown };
  }, [draft, given, env, answers, base, setup]);
  const stepCtx = useMemo(() => {
    if (!loaded || !deps.defaultConfigSummary) return undefined;
    return { cwd: paths.cwd, defaultConfig: deps.defaultConfigSummary(), gpuCount: env.gpuCount };
  }, [loaded, deps, paths.cwd, env.gpuCount]);
  // The start screen shows no preview: nothing is emitted or validated before the first question.
  const onStart = screen === 'start';
  // Not while an overlay (help, picture, glossary) has the body: nothing would show it.
  const previewHidden = onStart || s.overlay !== null;
  // The committed setup's preview (its findings drive the review and the finish screen), and the shown one:
  // the same object unless a highlighted draft differs from the answers.
  const committedPreview = useMemo(
    () => (preview$ && !previewHidden ? preview$.previewOf(setup, stepCtx) : null),
    [preview$, previewHidden, setup, stepCtx],
  );
  const preview = useMemo(
    () =>
      previewSetup === setup
        ? committedPreview
        : preview$ && !previewHidden
          ? preview$.previewOf(previewSetup, stepCtx)
          : null,
    [previewSetup, setup, committedPreview, preview$, previewHidden, stepCtx],
  );
  const findings = committedPreview?.findings ?? NO_FINDINGS;
  const prefetch = useCallback(
    (d: Partial<Answers>) =>
      void preview$?.previewOf({ ...base, answers: previewAnswers({ draft: d, flow: { given, env } }) }, stepCtx),
    [preview$, base, given, env, stepCtx],
  );

  const q = screen === 'question' ? (question(s.flow.current) as Question) : null;
  const modelTyping = q?.id === 'model_params' && !modelListShown(answers, models, s.modelTyped);
  const textQuestion = q !== null && q.kind === 'text' && (q.id !== 'model_params' || modelTyping);
  const stack = keyStack(s, { textQuestion });

  // The ZeRO table: once per answers, for the question, its height, the picture, the help and the glossary.
  const onMode = q?.id === 'mode';
  const interconnect = s.flow.env.interconnect;
  // A boolean, not the overlay's kind: opening or closing the help or the picture recomputes nothing.
  const needTradeoff = onMode || s.overlay?.kind === 'glossary';
  const tradeoff = useMemo(
    () =>
      needTradeoff
        ? tradeoffOf(answers, s.flow.given.zero3_init, {
            models,
            measured: measuredRuns,
            ...(interconnect ? { interconnect } : {}),
          })
        : null,
    [needTradeoff, answers, s.flow.given.zero3_init, models, interconnect, measuredRuns],
  );
  const committedKey = useMemo(() => selectedKey(answers), [answers]);
  const highlighted = onMode && s.draft ? selectedKey({ ...answers, ...s.draft } as Answers) : null;
  // The row the mode list starts on, and so what Enter chooses there (the help's "Default").
  const start = onMode && tradeoff ? modeStart(tradeoff, answers, 'mode' in s.flow.given, highlighted) : null;
  const enter =
    q === null
      ? undefined
      : enterChoice(q.id, answers, s.flow.given, { modeStart: start, firstModel: models[0]?.name ?? null });

  // The CSV loss log of a DiffSynth training step: offered for the Launch and Slurm actions.
  const csv: CsvLogOffer | null = useMemo(
    () => (screen === 'finish' ? csvLogOffer(setup.steps, paths.cwd) : null),
    [screen, setup.steps, paths.cwd],
  );
  const csvOn = csv ? csvLogSteps(csv, s.csvLog) : [];
  const csvLabel =
    csv && csv.steps.length > 0
      ? csvOn.length > 0
        ? `Loss log in the pane: ON (Launch adds --enable_csv_log to ${csvOn.map((x) => x.name).join(', ')}; not saved in presets)`
        : `Loss log in the pane: off (Enter: add --enable_csv_log to ${csv.steps.map((x) => x.name).join(', ')} at launch${csv.steps.some((x) => !x.certain) ? "; this checkout's DiffSynth may not know it" : ''})`
      : csv?.note
        ? `Loss log: not available (${csv.note})`
        : null;

  // The finish screen's slow parts: planned, written, saved, listed here and reported back.
  const effect = finishEffect(s.finish);
  const effectKey = effect ? s.finish.step : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per effect the finish state enters.
  useEffect(() => {
    if (!effect) return;
    const act = (a: Parameters<typeof wizardReducer>[1]) => dispatch(a);
    const current = s.finish.written?.setup ?? setup;
    if (effect.kind === 'plan') {
      try {
        act({ type: 'finish', action: { type: 'planned', plan: deps.planWrite(setup, effect.target) } });
      } catch (e) {
        act({ type: 'finish', action: { type: 'planFailed', error: (e as Error).message } });
      }
    } else if (effect.kind === 'write') {
      const plan = effect.plan;
      deps.carryOut(plan).then(
        (results) =>
          act({
            type: 'finish',
            action: { type: 'wrote', lines: deps.summarize(results, plan.setup), setup: plan.setup },
          }),
        (e) => act({ type: 'finish', action: { type: 'writeFailed', error: (e as Error).message } }),
      );
    } else if (effect.kind === 'save') {
      const name = effect.name;
      deps.savePreset(name, current, presetDescription(current), s.flow.given).then(
        (path) => act({ type: 'finish', action: { type: 'saved', name, path, warning: noStepsNote(current, name) } }),
        (e) => act({ type: 'finish', action: { type: 'saveFailed', error: (e as Error).message } }),
      );
    } else if (effect.kind === 'checkLaunch') {
      const check = deps.checkLaunch?.(current, effect.slurm, s.csvLog) ?? Promise.resolve(null);
      check.then(
        (r) =>
          act({
            type: 'finish',
            action: r ? { type: 'launchRefused', error: r.error, hint: r.hint } : { type: 'launchChecked' },
          }),
        (e) => act({ type: 'finish', action: { type: 'launchRefused', error: (e as Error).message } }),
      );
    } else if (effect.kind === 'partitions') {
      const form = deps.slurm?.openForm(setup) ?? Promise.reject(new Error('Slurm (sbatch) is not on PATH'));
      form.then(
        (f) => act({ type: 'finish', action: { type: 'partitions', ...f } }),
        (e) => act({ type: 'finish', action: { type: 'slurmFailed', error: (e as Error).message } }),
      );
    }
  }, [effectKey]);
  // Keys typed while the files are planned, written or saved go to the screen that follows (typeahead), not to
  // nobody: they wait until the effect has reported back.
  useKeyHold(effect !== null);

  // Layout: header, body (the screen's box and the preview below or beside it), hint rows.
  const hints = hintLines(stack, columns);
  const showPreview = previewShown(s);
  const probe = layoutOf({ columns, rows, hintRows: hints.length, preview: showPreview, needed: 0 });
  const mainWidth = probe.mainWidth;
  const qHeight = useMemo(() => {
    if (!q) return 0;
    const help = s.overlay?.kind === 'help';
    let body: number;
    if (q.id === 'mode' && tradeoff) body = modeHeight(tradeoff, mainWidth, !help);
    else if (q.id === 'model_params' && models.length > 0 && !modelTyping)
      body = Math.min(LIST_LIMIT, models.length + 2);
    else if (q.kind === 'text') body = 2;
    else body = Math.min(LIST_LIMIT, q.choices?.length ?? 2);
    return (
      promptLines(q, mainWidth).length +
      body +
      (help ? helpLines(q, answers, s.flow.env, mainWidth, enter, textQuestion ? '^G' : 'g').length : 0)
    );
  }, [q, s.overlay?.kind, tradeoff, mainWidth, models, modelTyping, answers, s.flow.env, enter, textQuestion]);
  // The import notes get at most a third of the body; the list keeps the rest.
  const reviewNotes =
    screen === 'review' ? importLines(s.imported, mainWidth, Math.max(1, Math.floor(probe.body / 3))) : [];
  const items: ReviewItem[] = useMemo(
    () => (screen === 'review' ? reviewItems(answers, s.flow.given, findings, mainWidth, s.flow.base.steps) : []),
    [screen, answers, s.flow.given, findings, mainWidth, s.flow.base.steps],
  );
  const stepFindingsHere = (findings as StepFinding[]).filter(
    (f) => f.stepName !== undefined && s.steps !== null && f.step === s.steps.step,
  );
  let needed = probe.body;
  if (q) needed = qHeight;
  else if (screen === 'review') needed = 1 + reviewNotes.length + items.length;
  else if (screen === 'finish') needed = finishRows(probe.body);
  else if (screen === 'steps' && s.steps) {
    const step = s.steps.steps[s.steps.step];
    // Half the body at most: the commands below show the edits in every pass.
    const full = s.steps.picking
      ? 8
      : stepsChromeRows(s.steps, Math.min(2, stepFindingsHere.length)) + (step ? stepRows(step).length + 1 : 0);
    needed = Math.min(full, Math.max(10, Math.floor(probe.body / 2)));
  }
  const lay = layoutOf({ columns, rows, hintRows: hints.length, preview: showPreview, needed });
  const isActive = s.result === null && s.dialog === null;

  // The finish screen's diff, and the glossary window (the keys need their lengths).
  const diff = useMemo(
    () => (s.finish.step.step === 'confirm' ? diffLines(s.finish.step.plan.files) : []),
    [s.finish.step],
  );
  const glossaryCtx = useMemo(() => glossaryContext(tradeoff, answers), [tradeoff, answers]);
  const overlay = s.overlay;
  // Built once per change here; the view draws this same window.
  const glossary = useMemo(
    () =>
      overlay?.kind === 'glossary'
        ? glossaryView(lay.mainWidth, Math.max(1, lay.body - GLOSSARY_TITLE_ROWS), overlay.top, glossaryCtx, overlay.at)
        : null,
    [overlay, lay.mainWidth, lay.body, glossaryCtx],
  );

  // The explain view: the setup's steps through explain's model, as `zerowiz explain` prints them.
  const [explain$, setExplain$] = useState<ExplainModule | null>(null);
  const explaining = overlay?.kind === 'explain';
  useEffect(() => {
    if (explaining && !explain$) void loadExplain().then(setExplain$);
  }, [explaining, explain$]);
  const explainText = useMemo(
    () =>
      explaining && explain$
        ? explain$.explainLines(
            explain$.explainSetup(
              setup,
              s.flow.given,
              { kind: 'setup', name: setup.name, path: null },
              { cwd: paths.cwd, env: paths.env, script: explain$.DEFAULT_SCRIPT },
              'your answers',
            ),
          )
        : null,
    [explaining, explain$, setup, s.flow.given, paths],
  );
  const explainView =
    explainText && overlay?.kind === 'explain'
      ? explainWindow(explainText, lay.mainWidth, lay.body - EXPLAIN_TITLE_ROWS, overlay.top)
      : null;

  const finishCtx = {
    steps: setup.steps.length,
    defaultConfigPath: deps.defaultConfigPath,
    slurm: Boolean(deps.slurm),
    csvLog: csvLabel,
  };
  const menu = finishItems(s.finish, finishCtx);

  // The keys the shell handles itself, per surface (the views handle list and text-field keys).
  const on = (a: WizardAction): 'handled' => {
    dispatch(a);
    return 'handled';
  };
  const steps = (action: Extract<WizardAction, { type: 'steps' }>['action']) => on({ type: 'steps', action });
  const commitStepEdit = () => {
    const e = s.steps?.edit;
    if (e && e.part === 'value' && (e.text.startsWith('~') || e.text.includes('$'))) {
      // `~` and $VARS in a value mean what they mean to a shell (zerowiz runs the steps without one); a
      // relative path stays relative: the steps run in the directory zerowiz runs in.
      const x = expandWord(e.text, paths);
      if (!x.ok) {
        setStepsNote(`${x.error}; ${x.hint}`);
        return;
      }
      steps({ type: 'editText', text: x.value });
    }
    steps({ type: 'commitEdit' });
  };
  const [stepsNote, setStepsNote] = useState<string | null>(null);
  const submitFinishField = () => {
    const st = s.finish.step;
    if (st.step === 'slurm') {
      const field = SLURM_FIELDS[st.field]!;
      const why = deps.slurm?.checkField(field, st.values[field].trim(), st.partitions) ?? null;
      if (why) return on({ type: 'finish', action: { type: 'slurmRefused', error: why } });
    }
    return on({ type: 'finish', action: { type: 'submit' } });
  };
  const glossaryScroll = (delta: number) => {
    if (!glossary || overlay?.kind !== 'glossary') return 'handled' as const;
    return on({ type: 'glossaryScroll', delta: glossary.top + delta - overlay.top, maxTop: glossary.maxTop });
  };
  const pageOf = (n: number) => Math.max(1, n - 1);
  const own: Partial<Record<Surface | 'always', SurfaceHandler>> = {
    always: (c) => (c === 'abort' ? on({ type: 'abort' }) : 'unhandled'),
    app: (c) => {
      if (c === 'nextTab') return on({ type: 'nextTab' });
      if (c === 'scrollUp') return on({ type: 'scroll', delta: -PREVIEW_PAGE_LINES });
      if (c === 'scrollDown') return on({ type: 'scroll', delta: PREVIEW_PAGE_LINES });
      if (c === 'quit') return on({ type: 'quit' });
      if (c === 'explain') return on({ type: 'openExplain' });
      return 'unhandled';
    },
    explain: (c) => {
      if (c === 'close') return on({ type: 'closeOverlay' });
      const rows = pageOf(lay.body - EXPLAIN_TITLE_ROWS);
      const by: Partial<Record<Command, number>> = { up: -1, down: 1, scrollUp: -rows, scrollDown: rows };
      const top = explainView?.top ?? 0;
      const maxTop = explainView?.maxTop ?? 0;
      const delta = c === 'top' ? -top : c === 'bottom' ? maxTop - top : by[c];
      return delta === undefined ? 'unhandled' : on({ type: 'explainScroll', delta, maxTop });
    },
    start: (c) => (c === 'quit' ? on({ type: 'quit' }) : 'unhandled'),
    startSub: (c) => (c === 'back' ? on({ type: 'startView', view: 'menu' }) : 'unhandled'),
    question: (c) => {
      if (c === 'back') return on({ type: 'flow', action: { type: 'back' } });
      if (c === 'help') return on({ type: 'toggleHelp' });
      if (c === 'review') return on({ type: 'flow', action: { type: 'review' } });
      return 'unhandled';
    },
    modeQuestion: (c) => (c === 'picture' ? on({ type: 'togglePicture' }) : 'unhandled'),
    help: (c) => {
      if (c === 'close') return on({ type: 'closeOverlay' });
      if (c === 'glossary') {
        const at = glossaryTermFor(q?.id ?? null);
        return on({ type: 'openGlossary', ...(at ? { at } : {}) });
      }
      return 'unhandled';
    },
    picture: (c) => {
      if (c === 'close') return on({ type: 'closeOverlay' });
      if (c === 'glossary') return on({ type: 'openGlossary', at: 'sharding' });
      return 'unhandled';
    },
    glossary: (c) => {
      if (c === 'close') return on({ type: 'closeOverlay' });
      if (c === 'up') return glossaryScroll(-1);
      if (c === 'down') return glossaryScroll(1);
      if (c === 'scrollUp') return glossaryScroll(-pageOf(lay.body - GLOSSARY_TITLE_ROWS));
      if (c === 'scrollDown') return glossaryScroll(pageOf(lay.body - GLOSSARY_TITLE_ROWS));
      if (c === 'top') return glossaryScroll(-(glossary?.top ?? 0));
      if (c === 'bottom') return glossaryScroll((glossary?.maxTop ?? 0) - (glossary?.top ?? 0));
      return 'unhandled';
    },
    review: (c) => (c === 'back' ? on({ type: 'flow', action: { type: 'back' } }) : 'unhandled'),
    finish: (c) => (c === 'back' ? on({ type: 'finish', action: { type: 'choose', item: 'back' } }) : 'unhandled'),
    diff: (c, _i, k) => {
      if (c === 'yes') return on({ type: 'finish', action: { type: 'confirm' } });
      if (c === 'no') return on({ type: 'finish', action: { type: 'cancel' } });
      if (c !== 'up' && c !== 'down') return 'unhandled';
      // A line with the arrows, a page with PgUp/PgDn.
      const rowsShown = Math.max(3, lay.mainHeight - DIFF_CHROME_ROWS);
      const maxTop = Math.max(0, diff.length - rowsShown);
      const by = k.pageUp || k.pageDown ? pageOf(rowsShown) : 1;
      return on({ type: 'finish', action: { type: 'scroll', delta: c === 'up' ? -by : by, maxTop } });
    },
    dialog: (c) => {
      if (c === 'yes') return on({ type: 'dialog', answer: 'yes' });
      if (c === 'no') return on({ type: 'dialog', answer: 'no' });
      return 'unhandled';
    },
    steps: (c) => stepsCommand(c),
    editing: (c) => {
      if (c !== 'no') return 'unhandled';
      if (screen === 'start') return on({ type: 'startView', view: 'menu' });
      if (screen === 'steps') {
        setStepsNote(null);
        return steps({ type: 'cancelEdit' });
      }
      return on({ type: 'finish', action: { type: 'cancel' } });
    },
    offer: (c) => {
      if (c === 'yes') return steps({ type: 'acceptOffer' });
      if (c === 'no') return steps({ type: 'declineOffer' });
      return 'unhandled';
    },
    templates: (c) => {
      if (c !== 'back') return 'unhandled';
      // Back from the templates: to the steps when there are some, else out of the steps screen.
      if (s.steps && s.steps.steps.length > 0) return steps({ type: 'template', steps: s.steps.steps });
      return on({ type: 'stepsBack' });
    },
  };
  function stepsCommand(c: Command): 'handled' | 'unhandled' {
    if (!s.steps) return 'unhandled';
    setStepsNote(null);
    const plain = STEP_ACTIONS[c];
    if (plain) return steps(plain);
    const step = s.steps.steps[s.steps.step];
    switch (c) {
      case 'edit':
        // Enter on the config row moves its config on, as `c` does; on any other row it edits.
        if (step && stepRows(step)[s.steps.row]?.kind === 'config') return stepsCommand('config');
        return steps({ type: 'startEdit' });
      case 'prevStep':
      case 'nextStep':
        return steps({ type: 'selectStep', index: s.steps.step + (c === 'prevStep' ? -1 : 1) });
      case 'config':
        if (!step) return 'handled';
        return steps({ type: 'setConfig', config: nextStepConfig(step, noDeepSpeedConfigPath(s.flow.base)) });
      case 'review':
        return on({ type: 'stepsDone' });
      case 'back':
        return on({ type: 'stepsBack' });
      case 'help':
        return on({ type: 'toggleHelp' });
      default:
        return 'unhandled';
    }
  }

  // The header: where the user is, what just happened, what was detected.
  const origin =
    s.flow.origin.kind === 'preset'
      ? `preset ${s.flow.origin.name}`
      : s.flow.origin.kind === 'import'
        ? 'imported config'
        : 'new setup';
  let where: string = screen;
  const pr = q ? progress(q.id, answers) : null;
  if (q && pr)
    where = q.advanced
      ? `${q.id} (advanced)`
      : `Q${pr.index}/${pr.total} ${q.section === 'json' ? 'DeepSpeed JSON' : q.section}`;
  if (overlay?.kind === 'picture') where += ' · picture';
  if (overlay?.kind === 'glossary') where += ' · glossary';
  if (overlay?.kind === 'explain') where += ' · explain';
  const header = `zerowiz · ${screen === 'start' ? 'start' : `${origin}${s.flow.dirty ? ' *' : ''} · ${where}`}${s.message ? ` · ${s.message}` : ''} · ${s.detection}`;

  // The preview's note on the ZeRO question: it shows the highlighted row, not (yet) the answer.
  const previewNote =
    onMode && highlighted !== null && highlighted !== committedKey && tradeoff
      ? `preview of the highlighted ${keyLabel(tradeoff, highlighted)} (not chosen yet: Enter)`
      : null;

  let main: React.JSX.Element;
  if (s.dialog) {
    main = (
      <Box flexDirection="column">
        <Text bold>Quit without writing? Your answers changed and will be lost.</Text>
        <Text>y: quit · n/Esc: stay</Text>
      </Box>
    );
  } else if (glossary) {
    main = <GlossaryView width={lay.mainWidth} view={glossary} />;
  } else if (overlay?.kind === 'explain') {
    main = <ExplainView width={lay.mainWidth} view={explainView} />;
  } else if (overlay?.kind === 'picture' && tradeoff) {
    main = (
      <PictureView
        tradeoff={tradeoff}
        rowKey={highlighted ?? committedKey}
        width={lay.mainWidth}
        height={lay.body}
        isActive={isActive}
        onMove={(key) => dispatch({ type: 'draft', draft: draftFor(key, answers) })}
        onChoose={(key) => answerMode(key)}
      />
    );
  } else if (screen === 'start') {
    main = (
      <StartScreen
        initialIndex={startIndex ?? 0}
        view={s.start.view}
        path={s.start.path}
        presets={presetList.presets}
        problems={presetList.problems}
        defaultConfigPath={deps.defaultConfigPath}
        defaultConfigExists={deps.defaultConfigExists}
        message={s.message}
        width={lay.mainWidth}
        height={lay.mainHeight}
        isActive={isActive}
        onView={(view) => dispatch({ type: 'startView', view })}
        onPath={(text) => dispatch({ type: 'startPath', text })}
        onNew={() => dispatch({ type: 'newSetup' })}
        onPreset={(p) => {
          const { answers: _a, ...base } = p.setup;
          dispatch({ type: 'preset', name: p.name, given: p.given, base });
        }}
        onImport={importFrom}
        onQuit={() => dispatch({ type: 'quit' })}
      />
    );
  } else if (q) {
    main = (
      <QuestionScreen
        key={`${q.id}:${s.flow.returnToReview}`}
        q={q}
        answers={answers}
        given={s.flow.given}
        env={s.flow.env}
        width={lay.mainWidth}
        help={overlay?.kind === 'help'}
        isActive={isActive}
        models={models}
        modelTyped={s.modelTyped}
        onTypeModel={() => dispatch({ type: 'typeModel' })}
        onDraft={(draft) => dispatch({ type: 'draft', draft })}
        prefetch={prefetch}
        paths={paths}
        glossaryKey={textQuestion ? '^G' : 'g'}
        {...(enter !== undefined ? { enter } : {})}
        {...(tradeoff ? { tradeoff } : {})}
        {...(start ? { modeStart: start.key } : {})}
        onAnswer={(values) => {
          const id = q.id as QuestionId;
          const { [id]: value, ...also } = values as Record<string, unknown>;
          dispatch({
            type: 'flow',
            action: { type: 'answer', id, value: id in values ? value : answers[id], also: also as Partial<Answers> },
          });
        }}
      />
    );
  } else if (screen === 'steps' && s.steps) {
    main =
      overlay?.kind === 'help' ? (
        <Box flexDirection="column">
          {stepsHelpLines(lay.mainWidth).map((l, i) => (
            <Text key={i} color={tint('accent')}>
              {l}
            </Text>
          ))}
        </Box>
      ) : (
        <StepsScreen
          editor={stepsNote ? { ...s.steps, message: stepsNote } : s.steps}
          files={s.flow.base.files}
          findings={stepFindingsHere}
          width={lay.mainWidth}
          height={lay.mainHeight}
          isActive={isActive}
          onTemplate={(id) =>
            dispatch({
              type: 'steps',
              action: { type: 'template', steps: templateSteps(id, (n) => deps.presetSteps?.(n) ?? []) },
            })
          }
          onEditText={(text) => dispatch({ type: 'steps', action: { type: 'editText', text } })}
          onCommit={commitStepEdit}
        />
      );
  } else if (screen === 'review') {
    main = (
      <ReviewScreen
        items={items}
        initialIndex={reviewIndex(
          s,
          items.map((i) => i.key),
        )}
        width={lay.mainWidth}
        height={lay.mainHeight}
        notes={reviewNotes}
        isActive={isActive}
        onChoose={(item) => {
          const c = item.choice;
          if (c.kind === 'finish') dispatch({ type: 'flow', action: { type: 'finish' } });
          else if (c.kind === 'question') dispatch({ type: 'reviewJump', key: item.key, id: c.id });
          else if (c.kind === 'fix') dispatch({ type: 'applyFix', fix: c.fix });
          else dispatch({ type: 'openSteps' });
        }}
      />
    );
  } else {
    main = (
      <FinishScreen
        finish={s.finish}
        items={menu}
        diff={diff}
        hasErrors={findings.some((f) => f.level === 'error')}
        width={lay.mainWidth}
        height={lay.mainHeight}
        isActive={isActive}
        onText={(text) => dispatch({ type: 'finish', action: { type: 'text', text } })}
        onSubmit={submitFinishField}
        onChoose={(item) => {
          if (item === 'preset')
            dispatch({
              type: 'finish',
              action: { type: 'choose', item, presetName: setup.name === 'custom' ? 'my-setup' : setup.name },
            });
          else if (item === 'csvLog')
            dispatch({ type: 'finish', action: { type: 'choose', item, csvLogOn: csvOn.length > 0 } });
          else dispatch({ type: 'finish', action: { type: 'choose', item } });
        }}
      />
    );
  }

  function answerMode(key: string) {
    const values = draftFor(key, answers);
    const { mode, ...also } = values as Record<string, unknown>;
    dispatch({ type: 'flow', action: { type: 'answer', id: 'mode', value: mode, also: also as Partial<Answers> } });
  }

  return (
    <KeyDispatcher stack={stack} own={own} isActive={s.result === null}>
      <Box flexDirection="column" width={columns}>
        <Text color={tint('accent')} wrap="truncate">
          {clip(header, columns)}
        </Text>
        <Box flexDirection={lay.wide ? 'row' : 'column'} height={lay.body}>
          <Box flexDirection="column" width={lay.mainWidth} height={lay.mainHeight} overflowY="hidden" flexShrink={0}>
            <Box flexDirection="column" flexShrink={0}>
              {main}
            </Box>
          </Box>
          {showPreview && lay.separator ? <Text color={tint('dim')}>{'─'.repeat(columns)}</Text> : null}
          {showPreview && lay.wide ? <Box width={2} /> : null}
          {showPreview && preview ? (
            <Preview
              preview={preview}
              tab={s.preview.tab}
              width={lay.previewWidth}
              height={lay.previewHeight}
              scroll={s.preview.scroll}
              note={previewNote}
            />
          ) : null}
          {showPreview && !preview ? <Text color={tint('dim')}>preparing the preview…</Text> : null}
        </Box>
        {hints.map((l, i) => (
          <Text key={i} color={tint('dim')} wrap="truncate">
            {l}
          </Text>
        ))}
      </Box>
    </KeyDispatcher>
  );
}
