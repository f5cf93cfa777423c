import type React from 'react';
import { useCallback, useEffect, useMemo, useReducer, useState } from 'react';
import { Box, Text } from 'ink';
import type { ImportResult } from '../../src/import.js';
import type { ModelEntry } from '../../src/models.js';
import type { Preset, PresetProblem } from '../../src/presets.js';
import {
  question,
  withDefaults,
  type Answers,
  type DetectedEnv,
  type Question,
  type QuestionId,
} from '../../src/questions.js';
import { answersOf, flowReducer, initialFlow, progress, type FlowAction } from '../../src/wizard/flow.js';
import type { Preview as PreviewData } from '../../src/wizard/preview.js';
import { nextTab, type PreviewTab } from '../../src/wizard/tabs.js';
import { tradeoffOf } from '../../src/wizard/tradeoff.js';
import { KeyRouter, useKeys } from '../common/keys.js';
import { clip } from '../common/text.js';
import { tint } from '../common/theme.js';
import { useTerminalSize } from '../common/useTerminalSize.js';
import { FinishScreen, type FinishDeps, type WizardResult } from './FinishScreen.js';
import { OVERWRITE_KEYS, commandFor, footerKeys, type KeyContext } from './keymap.js';
import { modeHeight } from './ModeQuestion.js';
import { Preview } from './Preview.js';
import { LIST_LIMIT, QuestionScreen, helpLines, modelListShown, promptLines } from './QuestionScreen.js';
import { ReviewScreen, importLines, reviewItems, type ImportNotes } from './ReviewScreen.js';
import { StartScreen } from './StartScreen.js';
import { DETECTING, bodyRows, footerLines } from './startText.js';

/** Everything the wizard reads or writes outside itself (real in the bin, stand-ins in tests). */
export interface AppDeps extends FinishDeps {
  detect(): Promise<{ env: DetectedEnv; description: string }>;
  listPresets(): { presets: Preset[]; problems: PresetProblem[] };
  importConfig(path: string): ImportResult;
  loadModels(): ModelEntry[];
  defaultConfigExists: boolean;
  /** Resolves when listPresets/importConfig/loadModels/planWrite can be called (they may load lazily). */
  ready?: Promise<void>;
  /** Starts that loading; the app calls it once its first frame is on the screen. */
  startLoading?: () => void;
}

const NO_FINDINGS: PreviewData['findings'] = [];

/** Columns from which the preview sits beside the questions instead of below them. */
export const WIDE_COLUMNS = 120;
/** The questions' own width, at least (the ZeRO table is 78 columns wide). */
const MIN_MAIN_COLUMNS = 80;

function questionHeight(
  q: Question,
  a: Answers,
  given: Partial<Answers>,
  env: DetectedEnv,
  width: number,
  help: boolean,
  catalog: readonly ModelEntry[],
  modelTyping: boolean,
): number {
  const models = catalog.length;
  let body: number;
  if (q.id === 'mode')
    body = modeHeight(
      tradeoffOf(a, given.zero3_init, {
        models: catalog,
        ...(env.interconnect ? { interconnect: env.interconnect } : {}),
      }),
      width,
      !help,
    );
  else if (q.id === 'model_params' && models > 0 && !modelTyping) body = Math.min(LIST_LIMIT, models + 2);
  else if (q.kind === 'text') body = 2;
  else body = Math.min(LIST_LIMIT, q.choices?.length ?? 2);
  return promptLines(q, width).length + body + (help ? helpLines(q, a, env, width).length : 0);
}

/** The preview module (emitters, validation, yaml): loaded right after the first frame, never before it. */
type PreviewModule = typeof import('../../src/wizard/preview.js');
let previewModule: PreviewModule | null = null;
const loadPreview = (): Promise<PreviewModule> =>
  import('../../src/wizard/preview.js').then((m) => (previewModule = m));

/** Props of the wizard. */
export interface AppProps {
  deps: AppDeps;
  configPath?: string | undefined;
  onExit: (r: WizardResult) => void;
}

/** The wizard: start, questions, review, finish; the preview follows every answer. Every key goes through one router. */
export function App(props: AppProps): React.JSX.Element {
  return (
    <KeyRouter>
      <Wizard {...props} />
    </KeyRouter>
  );
}

function Wizard({ deps, configPath, onExit }: AppProps): React.JSX.Element {
  const { columns, rows } = useTerminalSize();
  const [flow, dispatchFlow] = useReducer(flowReducer, undefined, () =>
    initialFlow({ gpuCount: null, gpuMemoryBytes: null, cpuMemoryBytes: null }),
  );
  const [draft, setDraft] = useState<Partial<Answers> | null>(null);
  const [tab, setTab] = useState<PreviewTab>('yaml');
  const [scroll, setScroll] = useState(0);
  const [help, setHelp] = useState(false);
  const [detection, setDetection] = useState(DETECTING);
  const [message, setMessage] = useState<string | null>(null);
  const [confirmQuit, setConfirmQuit] = useState(false);
  const [typing, setTyping] = useState(false);
  /** The finish screen shows the overwrite diff: it gets the preview's rows and its own footer. */
  const [confirming, setConfirming] = useState(false);
  /** What the last import kept and moved, listed on the review screen. */
  const [imported, setImported] = useState<ImportNotes | null>(null);
  const [done, setDone] = useState(false);
  /** What the finish step wrote (so that an abort afterwards says so instead of "nothing written"). */
  const [writtenLines, setWrittenLines] = useState<string[] | null>(null);
  const [loaded, setLoaded] = useState(deps.ready === undefined);
  const [preview$, setPreview$] = useState<PreviewModule | null>(previewModule);
  /** The user chose "type a parameter count" on the model picker (the list gives way to a text field). */
  const [modelTyped, setModelTyped] = useState(false);
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

  const dispatch = useCallback((a: FlowAction) => {
    if (a.type === 'start' || a.type === 'toStart') setImported(null);
    setDraft(null);
    setModelTyped(false);
    setHelp(false);
    setScroll(0);
    dispatchFlow(a);
  }, []);
  const finish = useCallback(
    (r: WizardResult) => {
      if (done) return;
      setDone(true);
      onExit(r);
    },
    [done, onExit],
  );

  useEffect(() => {
    let live = true;
    deps.detect().then(
      (r) => {
        if (!live) return;
        dispatchFlow({ type: 'env', env: r.env });
        setDetection(r.description);
      },
      () => live && setDetection('GPUs not detected'),
    );
    return () => {
      live = false;
    };
  }, [deps]);

  const importFrom = useCallback(
    (path: string) => {
      try {
        const r = deps.importConfig(path);
        const { answers: _answers, ...base } = r.setup;
        dispatch({ type: 'start', origin: { kind: 'import', path }, given: { ...r.given }, base, to: 'review' });
        setImported({ path, kept: [...r.kept], moved: [...r.moved] });
        const counts = [
          r.kept.length ? `${r.kept.length} key(s) kept` : '',
          r.moved.length ? `${r.moved.length} moved` : '',
        ]
          .filter(Boolean)
          .join(', ');
        setMessage(counts ? `${counts} (listed in the review) · from ${path}` : `from ${path}`);
      } catch (e) {
        setMessage(`cannot import: ${(e as Error).message}`);
        dispatch({ type: 'toStart' });
      }
    },
    [deps, dispatch],
  );
  useEffect(() => {
    if (configPath && loaded) importFrom(configPath);
  }, [configPath, importFrom, loaded]);

  const { given, env } = flow;
  const answers = useMemo(() => answersOf({ given, env }), [given, env]);
  const previewAnswers = useMemo(
    () => (draft ? withDefaults({ ...flow.given, ...draft }, flow.env) : answers),
    [draft, answers, flow.given, flow.env],
  );
  const setup = useMemo(() => ({ ...flow.base, answers }), [flow.base, answers]);
  const previewSetup = useMemo(() => ({ ...flow.base, answers: previewAnswers }), [flow.base, previewAnswers]);
  // The start screen shows no preview: nothing is emitted or validated before the first question.
  const onStart = flow.screen === 'start';
  const preview = useMemo(
    () => (preview$ && !onStart ? preview$.previewOf(previewSetup) : null),
    [preview$, onStart, previewSetup],
  );
  const committedPreview = useMemo(
    () => (previewSetup === setup ? preview : preview$ && !onStart ? preview$.previewOf(setup) : null),
    [previewSetup, setup, preview, preview$, onStart],
  );
  const findings = committedPreview?.findings ?? NO_FINDINGS;
  const q = flow.screen === 'question' ? (question(flow.current) as Question) : null;
  const prefetch = useCallback(
    (d: Partial<Answers>) =>
      void preview$?.previewOf({ ...flow.base, answers: withDefaults({ ...flow.given, ...d }, flow.env) }),
    [preview$, flow.base, flow.given, flow.env],
  );

  const modelTyping = q?.id === 'model_params' && !modelListShown(answers, models, modelTyped);
  const textInput =
    flow.screen === 'question' ? q?.kind === 'text' && (q.id !== 'model_params' || modelTyping) : typing;
  const keyCtx: KeyContext = { textInput, screen: flow.screen };
  const confirmingDiff = flow.screen === 'finish' && confirming;

  const aborted: WizardResult = writtenLines
    ? { code: 130, summary: ['zerowiz: aborted; the files written stay:', ...writtenLines] }
    : { code: 130, summary: ['zerowiz: aborted; nothing written.'] };
  useKeys(
    (input, key) => {
      if (confirmQuit) {
        if (key.ctrl && input === 'c') finish(aborted);
        else if (input === 'y' || input === 'Y') finish({ code: 0, summary: ['zerowiz: quit without writing.'] });
        else if (input === 'n' || input === 'N' || key.escape) setConfirmQuit(false);
        return;
      }
      const cmd = commandFor(input, key, keyCtx);
      // The overwrite diff takes y, n, Esc, arrows and PgUp/PgDn for itself.
      if (confirmingDiff && cmd !== 'forceQuit') return;
      if (cmd === 'forceQuit') finish(aborted);
      else if (cmd === 'nextTab' && flow.screen !== 'start') {
        setTab(nextTab(tab));
        setScroll(0);
      } else if (cmd === 'scrollDown') setScroll((x) => x + 5);
      else if (cmd === 'scrollUp') setScroll((x) => Math.max(0, x - 5));
      else if (cmd === 'help' && flow.screen === 'question') setHelp((h) => !h);
      // With the help open, Esc closes it; it does not also leave the question.
      else if (cmd === 'back' && help && flow.screen === 'question') setHelp(false);
      else if (cmd === 'back' && (flow.screen === 'question' || flow.screen === 'review')) dispatch({ type: 'back' });
      else if (cmd === 'review' && flow.screen === 'question') dispatch({ type: 'review' });
      else if (cmd === 'quit' && flow.screen !== 'finish') {
        if (flow.dirty) setConfirmQuit(true);
        else finish({ code: 0, summary: ['zerowiz: nothing written.'] });
      }
    },
    { isActive: !done },
  );

  // Layout: header, main (+ preview below or beside), footer; every height counted.
  const footer = footerLines(
    confirmQuit ? 'y quit without writing · n/Esc stay' : confirmingDiff ? OVERWRITE_KEYS : footerKeys(keyCtx),
    columns,
  );
  const body = bodyRows(rows, footer.length);
  // The help takes the preview's room, so it is never cut off (the ZeRO table alone fills 80x24).
  // So does the overwrite diff, which then has every row of the body.
  const showPreview = flow.screen !== 'start' && !help && !confirmingDiff;
  // Side by side only when the questions keep the 80 columns the ZeRO table needs.
  const sidePreviewWidth = Math.min(72, Math.floor(columns * 0.45));
  const wide = showPreview && columns >= WIDE_COLUMNS && columns - sidePreviewWidth - 2 >= MIN_MAIN_COLUMNS;
  const previewWidth = wide ? sidePreviewWidth : columns;
  const mainWidth = wide ? columns - previewWidth - 2 : columns;
  let needed = body;
  // Memoised: moving a highlight (a draft) must not re-estimate every mode just to count lines.
  const qHeight = useMemo(
    () => (q ? questionHeight(q, answers, flow.given, flow.env, mainWidth, help, models, modelTyping) : 0),
    [q, answers, flow.given, flow.env, mainWidth, help, models, modelTyping],
  );
  // The import notes get at most a third of the body; the list keeps the rest.
  const reviewNotes =
    flow.screen === 'review' ? importLines(imported, mainWidth, Math.max(1, Math.floor(body / 3))) : [];
  if (q) needed = qHeight;
  else if (flow.screen === 'review')
    needed = 1 + reviewNotes.length + reviewItems(answers, flow.given, findings, mainWidth).length;
  else if (flow.screen === 'finish') needed = Math.max(9, Math.floor(body / 2));
  const mainHeight = !showPreview || wide ? body : Math.max(3, Math.min(needed, body - 3));
  const previewHeight = wide ? body : body - mainHeight - 1;
  const isActive = !done && !confirmQuit;

  const origin =
    flow.origin.kind === 'preset'
      ? `preset ${flow.origin.name}`
      : flow.origin.kind === 'import'
        ? 'imported config'
        : 'new setup';
  let where: string = flow.screen;
  const pr = useMemo(() => (q ? progress(q.id, answers) : null), [q, answers]);
  if (q && pr) {
    where = q.advanced
      ? `${q.id} (advanced)`
      : `Q${pr.index}/${pr.total} ${q.section === 'json' ? 'DeepSpeed JSON' : q.section}`;
  }
  // The message before the detection: it is news, the detection is not (and a long path then cuts the latter).
  const header = `zerowiz · ${flow.screen === 'start' ? 'start' : `${origin}${flow.dirty ? ' *' : ''} · ${where}`}${message ? ` · ${message}` : ''} · ${detection}`;

  let main: React.JSX.Element;
  if (flow.screen === 'start') {
    main = (
      <StartScreen
        presets={presetList.presets}
        problems={presetList.problems}
        defaultConfigPath={deps.defaultConfigPath}
        defaultConfigExists={deps.defaultConfigExists}
        message={message}
        width={mainWidth}
        height={mainHeight}
        isActive={isActive}
        onTyping={setTyping}
        onNew={() => dispatch({ type: 'start', origin: { kind: 'new' } })}
        onPreset={(p) => {
          const { answers: _a, ...base } = p.setup;
          dispatch({ type: 'start', origin: { kind: 'preset', name: p.name }, given: p.given, base, to: 'review' });
          setMessage(null);
        }}
        onImport={importFrom}
        onQuit={() => finish({ code: 0, summary: ['zerowiz: nothing written.'] })}
      />
    );
  } else if (q) {
    main = (
      <QuestionScreen
        key={`${q.id}:${flow.returnToReview}`}
        q={q}
        answers={answers}
        given={flow.given}
        env={flow.env}
        width={mainWidth}
        help={help}
        isActive={isActive}
        models={models}
        modelTyped={modelTyped}
        onTypeModel={() => setModelTyped(true)}
        onDraft={setDraft}
        prefetch={prefetch}
        onAnswer={(values) => {
          const id = q.id as QuestionId;
          const { [id]: value, ...also } = values as Record<string, unknown>;
          dispatch({ type: 'answer', id, value: id in values ? value : answers[id], also: also as Partial<Answers> });
        }}
      />
    );
  } else if (flow.screen === 'review') {
    main = (
      <ReviewScreen
        answers={answers}
        given={flow.given}
        findings={findings}
        width={mainWidth}
        height={mainHeight}
        notes={reviewNotes}
        isActive={isActive}
        onJump={(id) => dispatch({ type: 'jump', id })}
        onFinish={() => dispatch({ type: 'finish' })}
      />
    );
  } else {
    main = (
      <FinishScreen
        setup={setup}
        given={flow.given}
        dirty={flow.dirty}
        hasErrors={findings.some((f) => f.level === 'error')}
        width={mainWidth}
        height={mainHeight}
        isActive={isActive}
        deps={deps}
        onTyping={setTyping}
        onConfirming={setConfirming}
        onBack={() => dispatch({ type: 'back' })}
        onWritten={(written, lines) => {
          // From now on the preview (and a later preset or launch) shows the setup as written.
          const { answers: _written, ...base } = written;
          dispatchFlow({ type: 'written', base });
          setWrittenLines(lines);
        }}
        onExit={finish}
      />
    );
  }

  return (
    <Box flexDirection="column" width={columns}>
      <Text color={tint('accent')} wrap="truncate">
        {clip(header, columns)}
      </Text>
      <Box flexDirection={wide ? 'row' : 'column'} height={body}>
        <Box flexDirection="column" width={mainWidth} height={mainHeight} overflowY="hidden" flexShrink={0}>
          <Box flexDirection="column" flexShrink={0}>
            {confirmQuit ? (
              <Box flexDirection="column">
                <Text bold>Quit without writing? Your answers changed and will be lost.</Text>
                <Text>y: quit · n/Esc: stay</Text>
              </Box>
            ) : (
              main
            )}
          </Box>
        </Box>
        {showPreview && !wide ? <Text color={tint('dim')}>{'─'.repeat(columns)}</Text> : null}
        {showPreview && wide ? <Box width={2} /> : null}
        {showPreview && preview ? (
          <Preview preview={preview} tab={tab} width={previewWidth} height={previewHeight} scroll={scroll} />
        ) : null}
        {showPreview && !preview ? <Text color={tint('dim')}>preparing the preview…</Text> : null}
      </Box>
      {footer.map((l, i) => (
        <Text key={i} color={tint('dim')} wrap="truncate">
          {l}
        </Text>
      ))}
    </Box>
  );
}
