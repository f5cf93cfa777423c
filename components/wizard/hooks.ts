/**
 * The wizard's effects, as hooks: what it loads and reads outside itself (the lazily loaded modules, the
 * presets, the model catalog, the measured runs, detection, an import) and the finish screen's slow parts (plan,
 * write, save, check a launch, run the checks, list Slurm's partitions). Each reports back as a reducer action; the component
 * (./App.tsx) only routes the state to the screens.
 */
import type { Dispatch } from 'react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ImportResult } from '../../src/setups/index.js';
import type { Setup } from '../../src/config/index.js';
import { noStepsNote } from '../../src/config/index.js';
import type { MeasuredRun } from '../../src/estimate/index.js';
import type { ModelEntry } from '../../src/estimate/index.js';
import { expandPath, type ExpandContext } from '../../src/fs/index.js';
import type { Preset, PresetProblem } from '../../src/setups/index.js';
import { finishEffect } from '../../src/wizard/index.js';
import { presetDescription, presetGiven } from '../../src/wizard/index.js';
import type { WizardAction, WizardResult, WizardState } from '../../src/wizard/index.js';
import { useKeyHold } from '../common/index.js';
import type { AppDeps } from './deps.js';

/** The preview module (emitters, validation, yaml): loaded right after the first frame, never before it. */
export type PreviewModule = typeof import('../../src/wizard/preview.js');
let previewModule: PreviewModule | null = null;
const loadPreview = (): Promise<PreviewModule> =>
  import('../../src/wizard/preview.js').then((m) => (previewModule = m));

/** explain's module (the provenance model), loaded when the explain view first opens. */
export type ExplainModule = typeof import('../../src/explain/explain.js');
const loadExplain = (): Promise<ExplainModule> => import('../../src/explain/explain.js');

/** What the wizard reads outside itself, once loaded. */
export interface WizardData {
  loaded: boolean;
  preview$: PreviewModule | null;
  presets: { presets: Preset[]; problems: PresetProblem[] };
  models: ModelEntry[];
  measuredRuns: MeasuredRun[];
  /** Imports a typed accelerate YAML (as a shell reads the path) and reports it back. */
  importFrom: (typed: string) => void;
}

/** Calls `read` once `loaded`; an error means nothing to show (the wizard works without it). */
function useLoaded<T>(loaded: boolean, read: (() => T) | undefined, none: T): T {
  // biome-ignore lint/correctness/useExhaustiveDependencies: read once per load; `none` is a constant.
  return useMemo(() => {
    if (!loaded || !read) return none;
    try {
      return read();
    } catch {
      return none;
    }
  }, [loaded, read]);
}

const NO_PRESETS = { presets: [], problems: [] };
const NONE: never[] = [];

/**
 * Loads what the wizard needs after its first frame (the preview module, the presets, the catalog, the measured
 * runs), starts detection, imports `configPath` once it can, and reports the wizard's end to `onExit`.
 */
export function useWizardData(
  deps: AppDeps,
  paths: ExpandContext,
  configPath: string | undefined,
  result: WizardResult | null,
  dispatch: Dispatch<WizardAction>,
  onExit: (r: WizardResult) => void,
): WizardData {
  const [loaded, setLoaded] = useState(deps.ready === undefined);
  const [preview$, setPreview$] = useState<PreviewModule | null>(previewModule);
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
  const presets = useLoaded(loaded, deps.listPresets, NO_PRESETS);
  const models = useLoaded(loaded, deps.loadModels, NONE as ModelEntry[]);
  // What the runs of this directory measured, beside the ZeRO table's estimate.
  const measuredRuns = useLoaded(loaded, deps.measuredRuns, NONE as MeasuredRun[]);

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
  }, [deps, dispatch]);

  const importFrom = useCallback(
    (typed: string) => {
      const x = expandPath(typed, paths);
      if (!x.ok) {
        dispatch({ type: 'importFailed', error: `${x.error}; ${x.hint}` });
        return;
      }
      let r: ImportResult;
      try {
        r = deps.importConfig(x.value);
      } catch (e) {
        dispatch({ type: 'importFailed', error: (e as Error).message });
        return;
      }
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
    },
    [deps, paths, dispatch],
  );
  useEffect(() => {
    if (configPath && loaded) importFrom(configPath);
  }, [configPath, importFrom, loaded]);

  // The end: the caller restores the terminal and prints the summary.
  const exited = useRef(false);
  useEffect(() => {
    if (result && !exited.current) {
      exited.current = true;
      onExit(result);
    }
  }, [result, onExit]);

  return { loaded, preview$, presets, models, measuredRuns, importFrom };
}

/**
 * Runs the finish screen's slow part the state names (finishState.ts finishEffect), once per state it enters,
 * and reports it back; keys typed meanwhile wait for the screen that follows (typeahead), not for nobody.
 */
export function useFinishEffects(
  s: WizardState,
  setup: Setup,
  deps: AppDeps,
  dispatch: Dispatch<WizardAction>,
  cwd: string,
): void {
  const effect = finishEffect(s.finish);
  const effectKey = effect ? s.finish.step : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per effect the finish state enters.
  useEffect(() => {
    if (!effect) return;
    const act = (action: Extract<WizardAction, { type: 'finish' }>['action']) => dispatch({ type: 'finish', action });
    const current = s.finish.written?.setup ?? setup;
    if (effect.kind === 'plan') {
      try {
        act({ type: 'planned', plan: deps.planWrite(current, effect.target) });
      } catch (e) {
        act({ type: 'planFailed', error: (e as Error).message });
      }
    } else if (effect.kind === 'write') {
      const plan = effect.plan;
      deps.carryOut(plan).then(
        (results) => act({ type: 'wrote', lines: deps.summarize(results, plan.setup), setup: plan.setup }),
        (e) => act({ type: 'writeFailed', error: (e as Error).message }),
      );
    } else if (effect.kind === 'save') {
      const name = effect.name;
      const from = s.flow.origin.kind === 'preset' ? s.flow.origin.name : null;
      deps.savePreset(name, current, presetDescription(current), presetGiven(s.flow, current.answers), from).then(
        (path) => act({ type: 'saved', name, path, warning: noStepsNote(current, name) }),
        (e) => act({ type: 'saveFailed', error: (e as Error).message }),
      );
    } else if (effect.kind === 'checkLaunch') {
      const check = deps.checkLaunch?.(current, effect.slurm, s.csvLog) ?? Promise.resolve(null);
      check.then(
        (r) => act(r ? { type: 'launchRefused', error: r.error, hint: r.hint } : { type: 'launchChecked' }),
        (e) => act({ type: 'launchRefused', error: (e as Error).message }),
      );
    } else if (effect.kind === 'check') {
      const run =
        deps.runChecks ??
        (async (x: Setup, where: string) =>
          (await import('../../src/checks/summary.js')).checkSummary(x, { cwd: where }));
      run(current, cwd).then(
        (c) => act({ type: 'checked', ...c }),
        (e) => act({ type: 'checkFailed', error: (e as Error).message }),
      );
    } else if (effect.kind === 'partitions') {
      const form = deps.slurm?.openForm(current) ?? Promise.reject(new Error('Slurm (sbatch) is not on PATH'));
      form.then(
        (f) => act({ type: 'partitions', ...f }),
        (e) => act({ type: 'slurmFailed', error: (e as Error).message }),
      );
    }
  }, [effectKey]);
  useKeyHold(effect !== null);
}

/** The explain view's lines for the setup (src/config/explain.ts, as `zerowiz explain` prints them), once open. */
export function useExplainLines(
  open: boolean,
  setup: Setup,
  given: WizardState['flow']['given'],
  paths: ExpandContext,
): string[] | null {
  const [explain$, setExplain$] = useState<ExplainModule | null>(null);
  useEffect(() => {
    if (open && !explain$) void loadExplain().then(setExplain$);
  }, [open, explain$]);
  return useMemo(
    () =>
      open && explain$
        ? explain$.explainLines(
            explain$.explainSetup(
              setup,
              given,
              { kind: 'setup', name: setup.name, path: null },
              { cwd: paths.cwd, env: paths.env, script: explain$.DEFAULT_SCRIPT },
              'your answers',
            ),
          )
        : null,
    [open, explain$, setup, given, paths],
  );
}
