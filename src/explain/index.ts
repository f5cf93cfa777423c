/** The face of src/explain/: every value accelerate and DeepSpeed will use for a setup's steps, where it came from, and the effective config. */
export { effectiveLines } from './effective.js';
export {
  DEFAULT_SCRIPT,
  diffLines,
  diffReports,
  explainLines,
  explainRef,
  explainSetup,
  reportJson,
  showValue,
} from './explain.js';
export type { ExplainContext, ExplainReport } from './explain.js';
export { SOURCE_LABELS } from './provenance.js';
export type { ExplainedValue, ScriptContext, StepExplanation } from './provenance.js';
