/** What the wizard reads or writes outside itself: the one type App.tsx and its hooks (./hooks.ts) both take. */
import type { DiffSynthTemplate } from '../../src/setups/index.js';
import type { AccelerateConfigSummary } from '../../src/config/index.js';
import type { ImportResult } from '../../src/setups/index.js';
import type { Preset, PresetProblem } from '../../src/setups/index.js';
import type { DetectedEnv } from '../../src/config/index.js';
import type { LaunchStep } from '../../src/config/index.js';
import type { MeasuredRun } from '../../src/estimate/index.js';
import type { ModelEntry } from '../../src/estimate/index.js';
import type { ExpandContext } from '../../src/fs/index.js';
import type { FinishDeps } from './FinishScreen.js';

/** Everything the wizard reads or writes outside itself (real in the bin, stand-ins in tests). */
export interface AppDeps extends FinishDeps {
  detect(): Promise<{ env: DetectedEnv; description: string }>;
  listPresets(): { presets: Preset[]; problems: PresetProblem[] };
  importConfig(path: string): ImportResult;
  loadModels(): ModelEntry[];
  /** The run records of the launch directory as measurements (src/rules/fit.ts loadMeasuredRuns), for the ZeRO table. */
  measuredRuns?: () => MeasuredRun[];
  defaultConfigExists: boolean;
  /** Resolves when listPresets/importConfig/loadModels/planWrite can be called (they may load lazily). */
  ready?: Promise<void>;
  /** Starts that loading; the app calls it once its first frame is on the screen. */
  startLoading?: () => void;
  /** A built-in preset's steps (the seed recipe's template). */
  presetSteps?: (name: string) => LaunchStep[];
  /** DiffSynth-Studio's example scripts as step templates (presets/templates.yaml). */
  diffsynthTemplates?: () => readonly DiffSynthTemplate[];
  /** accelerate's default config as a step without --config_file finds it (for the step findings). */
  defaultConfigSummary?: () => AccelerateConfigSummary;
  /** Where typed paths are expanded against (default: this process's environment and directory). */
  paths?: ExpandContext;
  /**
   * The steps run in `dir` from now on (the steps screen's L): the process's directory and every relative path of
   * the setup follow it. Returns why it cannot be (not a directory), or null. Absent: only the wizard's state moves.
   */
  setLaunchDir?: (dir: string) => string | null;
}
