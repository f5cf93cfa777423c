/**
 * What a finding about one launch step is (the step rules of ./step-findings.ts and ./checkpoint-save.ts
 * make them; the wizard, the launch and the review read them), and what those rules read besides the setup.
 */
import type { AccelerateConfigSummary } from '../config/index.js';
import type { Finding } from '../config/index.js';

/** A change to the steps that fixes a finding (the wizard offers it; the steps editor applies it). */
export type StepFix =
  | { kind: 'pinConfig'; step: number; path: string }
  | { kind: 'setArg'; step: number; flag: string; value: string }
  | { kind: 'removeArg'; step: number; flag: string };

/** A finding about one step: a Finding, plus which step and the fix zerowiz can make. */
export type StepFinding = Finding & { step: number; stepName: string; fixAction?: StepFix };

/** What the step rules read besides the setup. */
export interface StepCheckContext {
  /** The directory the steps run in (relative paths are resolved against it). */
  cwd: string;
  /** accelerate's default config as found (readAccelerateConfigSummary of accelerateDefaultConfig()). */
  defaultConfig: AccelerateConfigSummary;
  /** GPUs detected on this machine, or null (what accelerate launch uses without any config). */
  gpuCount: number | null;
}
