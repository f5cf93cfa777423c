/**
 * The wizard's view: it routes the state of one reducer (src/wizard/shell.ts) to the screens, as ink-ui's
 * select is a reducer, an input hook and a view. What a key does is src/wizard/commands.ts (pure, from the key
 * tables of src/wizard/keytable.ts: the focused list or text field handles its own keys, the shell the rest);
 * every height is src/wizard/layout.ts's; the effects (loading, detection, an import, the finish screen's writes,
 * a launch's check, Slurm's partitions) are the hooks of ./hooks.ts. What is left here: the values derived from
 * the state (memoised, so a key that changes none of their inputs computes nothing) and which screen shows.
 */
import type React from 'react';
import { useMemo, useReducer } from 'react';
import { Box, Text } from 'ink';
import { question, type Answers, type Question, type QuestionId } from '../../src/config/index.js';
import type { StepFinding } from '../../src/rules/index.js';
import { processContext, type ExpandContext } from '../../src/fs/index.js';
import { csvLogOffer, csvLogSteps } from '../../src/config/index.js';
import { clip } from '../../src/text/index.js';
import {
  SHELL_SURFACES,
  commitStepEdit,
  launchDirActions,
  shellCommand,
  submitFinishField,
} from '../../src/wizard/index.js';
import { enterChoice } from '../../src/wizard/index.js';
import {
  csvLogLabel,
  diffLines,
  finishEstimateLines,
  launchQuestion,
  launchWritesNote,
} from '../../src/wizard/index.js';
import { finishItems } from '../../src/wizard/index.js';
import { answersOf } from '../../src/wizard/index.js';
import { glossaryView } from '../../src/wizard/index.js';
import { hintLines, type Surface, type SurfaceHandler } from '../../src/wizard/index.js';
import {
  EXPLAIN_TITLE_ROWS,
  GLOSSARY_TITLE_ROWS,
  explainWindow,
  finishRows,
  questionRows,
  reviewDetailMaxRows,
  reviewRows,
  scrollPages,
  stepsRows,
  wizardLayout,
} from '../../src/wizard/index.js';
import { draftFor } from '../../src/wizard/index.js';
import type { Preview as PreviewData } from '../../src/wizard/index.js';
import { modelListShown } from '../../src/wizard/index.js';
import { idleGpusLines, importLines, reviewDetailRows, reviewItems } from '../../src/wizard/index.js';
import {
  initialWizard,
  keyStack,
  previewAnswers,
  previewShown,
  reviewIndex,
  screenOf,
  wizardHeader,
  wizardReducer,
  type WizardAction,
  type WizardResult,
} from '../../src/wizard/index.js';
import { stepFindingLines, stepsHelpLines } from '../../src/wizard/index.js';
import { finishCheckRows, pasteKey, readPaste, stepTemplates, templateSteps } from '../../src/wizard/index.js';
import { glossaryContext, keyLabel, modeStart, selectedKey, tradeoffOf } from '../../src/wizard/index.js';
import { KeyDispatcher, KeyRouter } from '../common/index.js';
import { tint } from '../common/index.js';
import { useTerminalSize } from '../common/index.js';
import { ExplainView } from './ExplainView.js';
import { FinishScreen } from './FinishScreen.js';
import { GlossaryView } from './GlossaryView.js';
import type { AppDeps } from './deps.js';
import { useExplainLines, useFinishEffects, useWizardData } from './hooks.js';
import { TextLine } from './parts.js';
import { PictureView } from './PictureView.js';
import { Preview } from './Preview.js';
import { QuestionScreen } from './QuestionScreen.js';
import { ReviewScreen } from './ReviewScreen.js';
import { StartScreen } from './StartScreen.js';
import { StepsScreen } from './StepsScreen.js';

export type { WizardResult };
export type { AppDeps };

const NO_FINDINGS: PreviewData['findings'] = [];
/** This process's environment and directory, once (a stable identity for the hooks that depend on it). */
const PROCESS_PATHS: ExpandContext = processContext();

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
  const startPaths = deps.paths ?? PROCESS_PATHS;
  // Where the steps run: where zerowiz started, or the launch directory set on the steps screen.
  const paths = useMemo(
    () => (s.launchDir ? { ...startPaths, cwd: s.launchDir } : startPaths),
    [startPaths, s.launchDir],
  );
  const data = useWizardData(deps, paths, configPath, s.result, dispatch, onExit);
  const { loaded, preview$, models } = data;

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
  // The start screen shows no preview: nothing is emitted or validated before the first question. The committed
  // setup's findings drive the review, the finish screen and a question's help (under an overlay too: the
  // preview module caches them per setup); the shown preview, the highlighted draft's, only when it shows.
  const onStart = screen === 'start';
  const committedPreview = useMemo(
    () => (preview$ && !onStart ? preview$.previewOf(setup, stepCtx) : null),
    [preview$, onStart, setup, stepCtx],
  );
  const previewHidden = onStart || s.overlay !== null;
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
  const prefetch = useMemo(
    () => (d: Partial<Answers>) =>
      void preview$?.previewOf({ ...base, answers: previewAnswers({ draft: d, flow: { given, env } }) }, stepCtx),
    [preview$, base, given, env, stepCtx],
  );

  const q = screen === 'question' ? (question(s.flow.current) as Question) : null;
  const modelList = q?.id === 'model_params' && modelListShown(answers, models, s.modelTyped) ? models.length : null;
  // The step templates (read when the steps screen first needs them): the answers' model's examples first.
  const onSteps = s.steps !== null;
  const templates = useMemo(
    () =>
      onSteps
        ? stepTemplates(
            deps.diffsynthTemplates?.() ?? [],
            models.find((m) => m.id === answers.model_name || m.name === answers.model_name)?.id ?? null,
          )
        : [],
    [onSteps, answers.model_name, models, deps],
  );
  const textQuestion = q !== null && q.kind === 'text' && modelList === null;
  const stack = keyStack(s, { textQuestion });

  // The ZeRO table: once per answers, for the question, its height, the picture, the help and the glossary.
  const onMode = q?.id === 'mode';
  const interconnect = s.flow.env.interconnect;
  // A boolean, not the overlay's kind: opening or closing the help or the picture recomputes nothing.
  const needTradeoff = onMode || s.overlay?.kind === 'glossary';
  const measuredRuns = data.measuredRuns;
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
  const glossaryKey = textQuestion ? '^G' : 'g';
  const questionFindings = useMemo(
    () => (q ? findings.filter((f) => f.questions?.includes(q.id as QuestionId)) : NO_FINDINGS),
    [q, findings],
  );
  const stepFindingsHere = (findings as StepFinding[]).filter(
    (f) => f.stepName !== undefined && s.steps !== null && f.step === s.steps.step,
  );

  // The finish screen's menu: the CSV loss log of a DiffSynth training step is offered for Launch and Slurm.
  const csv = useMemo(
    () => (screen === 'finish' ? csvLogOffer(setup.steps, paths.cwd) : null),
    [screen, setup.steps, paths.cwd],
  );
  const csvOn = csv ? csvLogSteps(csv, s.csvLog) : [];
  const menu = finishItems(s.finish, {
    steps: setup.steps.length,
    defaultConfigPath: deps.defaultConfigPath,
    slurm: Boolean(deps.slurm),
    csvLog: csvLogLabel(csv, csvOn),
    checks: true,
  });
  useFinishEffects(s, setup, deps, dispatch, paths.cwd);
  // Where a Launch writes the config files (the setup as written, once it was).
  const launchSetup = s.finish.written?.setup ?? setup;
  const launchNote = useMemo(
    () => (screen === 'finish' ? launchWritesNote(launchSetup, paths.cwd) : null),
    [screen, launchSetup, paths.cwd],
  );
  // The run before it starts, as a launch's first lines say it: the step time, the ETA and its price.
  const estimateNote = useMemo(
    () =>
      screen === 'finish' ? finishEstimateLines(launchSetup, paths.cwd, models, measuredRuns).join('\n') || null : null,
    [screen, launchSetup, paths.cwd, models, measuredRuns],
  );

  // The layout: header, body (the screen's box and the preview below or beside it), hint rows.
  const hints = hintLines(stack, columns);
  const showPreview = previewShown(s);
  const help = s.overlay?.kind === 'help';
  const onReview = screen === 'review';
  const layoutBase = { columns, rows, hintRows: hints.length, preview: showPreview };
  // The review's entries depend on the width the layout gives them: measured at the layout's probe width.
  const probe = wizardLayout(layoutBase, () => 0);
  const reviewNotes = onReview
    ? [
        ...importLines(s.imported, probe.mainWidth, Math.max(1, Math.floor(probe.body / 3))),
        ...idleGpusLines(answers, env.gpuCount, probe.mainWidth),
      ]
    : [];
  const items = useMemo(
    () => (onReview ? reviewItems(answers, s.flow.given, findings, probe.mainWidth, s.flow.base.steps) : []),
    [onReview, answers, s.flow.given, findings, probe.mainWidth, s.flow.base.steps],
  );
  const detailRows = onReview ? reviewDetailRows(items, probe.mainWidth, reviewDetailMaxRows(probe.body)) : 0;
  const stepFindingRows = stepFindingLines(stepFindingsHere, probe.mainWidth).length;
  const lay = wizardLayout(layoutBase, (width, body) => {
    if (q)
      return questionRows(
        { q, answers, env: s.flow.env, help, enter, glossaryKey, findings: questionFindings, tradeoff, modelList },
        width,
      );
    if (onReview) return reviewRows(reviewNotes.length, items.length, detailRows);
    if (screen === 'finish')
      return finishRows(body, {
        items: menu.length,
        launchNote: s.finish.note ? null : launchNote,
        estimateNote,
        note: s.finish.note,
        width,
        checkRows: finishCheckRows(s.finish.checks, width).length,
      });
    if (screen === 'steps' && s.paste) return body;
    if (screen === 'steps' && s.steps) return stepsRows(s.steps, stepFindingRows, body);
    return body;
  });
  const isActive = s.result === null && s.dialog === null;

  // The overwrite diff, the glossary and the explain windows (their keys need their lengths and tops).
  const diff = useMemo(
    () => (s.finish.step.step === 'confirm' ? diffLines(s.finish.step.plan.files) : []),
    [s.finish.step],
  );
  const glossaryCtx = useMemo(() => glossaryContext(tradeoff, answers), [tradeoff, answers]);
  const overlay = s.overlay;
  const glossary = useMemo(
    () =>
      overlay?.kind === 'glossary'
        ? glossaryView(lay.mainWidth, Math.max(1, lay.body - GLOSSARY_TITLE_ROWS), overlay.top, glossaryCtx, overlay.at)
        : null,
    [overlay, lay.mainWidth, lay.body, glossaryCtx],
  );
  const explainText = useExplainLines(overlay?.kind === 'explain', setup, s.flow.given, paths);
  const explainView =
    explainText && overlay?.kind === 'explain'
      ? explainWindow(explainText, lay.mainWidth, lay.body - EXPLAIN_TITLE_ROWS, overlay.top)
      : null;

  // The preview's note on the ZeRO question: it shows the highlighted row, not (yet) the answer.
  const previewNote =
    onMode && highlighted !== null && highlighted !== committedKey && tradeoff
      ? `preview of the highlighted ${keyLabel(tradeoff, highlighted)} (not chosen yet: Enter)`
      : null;

  // The keys the shell handles itself (src/wizard/commands.ts), with the sizes this layout gives the windows.
  const scroll = scrollPages(lay, {
    previewFindings: preview?.findings.length ?? 0,
    previewNote: previewNote !== null,
    diffLines: diff.length,
  });
  const commandCtx = {
    question: q?.id ?? null,
    pages: scroll,
    glossary,
    explain: explainView,
    diffMaxTop: scroll.diffMaxTop,
    cwd: paths.cwd,
  };
  const run = (actions: readonly WizardAction[] | null): 'handled' | 'unhandled' => {
    if (!actions) return 'unhandled';
    for (const a of actions) dispatch(a);
    return 'handled';
  };
  const own: Partial<Record<Surface | 'always', SurfaceHandler>> = {};
  for (const surface of SHELL_SURFACES)
    own[surface] = (c, _input, key) => run(shellCommand(s, surface, c, key, commandCtx));

  const answerMode = (key: string) => {
    const { mode, ...also } = draftFor(key, answers) as Record<string, unknown>;
    dispatch({ type: 'flow', action: { type: 'answer', id: 'mode', value: mode, also: also as Partial<Answers> } });
  };

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
        onChoose={answerMode}
      />
    );
  } else if (screen === 'start') {
    main = (
      <StartScreen
        initialIndex={startIndex ?? 0}
        view={s.start.view}
        path={s.start.path}
        presets={data.presets.presets}
        presetsLoaded={loaded}
        problems={data.presets.problems}
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
          const { answers: _a, ...presetBase } = p.setup;
          dispatch({ type: 'preset', name: p.name, given: p.given, base: presetBase });
        }}
        onImport={data.importFrom}
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
        help={help}
        isActive={isActive}
        models={models}
        modelTyped={s.modelTyped}
        onTypeModel={() => dispatch({ type: 'typeModel' })}
        onDraft={(d) => dispatch({ type: 'draft', draft: d })}
        prefetch={prefetch}
        paths={paths}
        glossaryKey={glossaryKey}
        findings={questionFindings}
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
    main = help ? (
      <Box flexDirection="column">
        {stepsHelpLines(lay.mainWidth, stepFindingsHere).map((l, i) => (
          <Text key={i} color={tint('accent')}>
            {l}
          </Text>
        ))}
      </Box>
    ) : (
      <StepsScreen
        editor={s.steps}
        files={s.flow.base.files}
        findings={stepFindingsHere}
        width={lay.mainWidth}
        height={lay.mainHeight}
        isActive={isActive}
        templates={templates}
        onTemplate={(id) =>
          dispatch({
            type: 'steps',
            action: {
              type: 'template',
              steps: templateSteps(id, (n) => deps.presetSteps?.(n) ?? [], templates, s.flow.base),
            },
          })
        }
        paste={s.paste}
        onPasteKey={(input, key) => s.paste && dispatch({ type: 'paste', box: pasteKey(s.paste, input, key) })}
        onPasteClose={() => dispatch({ type: 'pasteClose' })}
        onAbort={() => dispatch({ type: 'abort' })}
        onPasteDone={() => {
          if (!s.paste) return;
          const r = readPaste(s.paste.text, paths.env, s.flow.base);
          if (r.steps) dispatch({ type: 'steps', action: { type: 'template', steps: r.steps } });
          dispatch({ type: 'paste', box: { text: s.paste.text, read: r.lines, taken: r.steps !== null } });
        }}
        onEditText={(text) => dispatch({ type: 'steps', action: { type: 'editText', text } })}
        onCommit={() => run(commitStepEdit(s, paths))}
        cwd={paths.cwd}
        launchDirEdit={s.launchDirEdit}
        onLaunchDirText={(text) => dispatch({ type: 'launchDirEdit', text })}
        onLaunchDirSubmit={(text) => run(launchDirActions(text, paths, deps.setLaunchDir))}
      />
    );
  } else if (onReview) {
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
        detailRows={detailRows}
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
        launchNote={launchNote}
        launchQuestion={launchQuestion(launchSetup)}
        estimateNote={estimateNote}
        onText={(text) => dispatch({ type: 'finish', action: { type: 'text', text } })}
        onSubmit={() => run(submitFinishField(s, deps.slurm?.checkField ?? null))}
        onChoose={(item) => {
          if (item === 'preset')
            dispatch({
              type: 'finish',
              action: { type: 'choose', item, presetName: setup.name },
            });
          else if (item === 'csvLog')
            dispatch({ type: 'finish', action: { type: 'choose', item, csvLogOn: csvOn.length > 0 } });
          else dispatch({ type: 'finish', action: { type: 'choose', item } });
        }}
      />
    );
  }

  return (
    <KeyDispatcher stack={stack} own={own} isActive={s.result === null}>
      <Box flexDirection="column" width={columns}>
        <TextLine color={tint('accent')} truncate text={clip(wizardHeader(s, answers), columns)} />
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
          <TextLine key={i} color={tint('dim')} truncate text={l} />
        ))}
      </Box>
    </KeyDispatcher>
  );
}
