/** The face of src/checks/: what other folders may use of it (an architecture test holds every import to it). */
export { nodeCheckLine, nodeDoneLine, parseNodeCheckLine, reportLines, shortLines } from './format.js';
export { checkBeforePass } from './gate.js';
export type { PassGate } from './gate.js';
export { SHM_PATH, measureMemory, memoryRoom } from './host.js';
export { checkPlan } from './plan.js';
export type { PassFilter } from './plan.js';
export { runChecks } from './run.js';
export { nodeCheckLines, nodeCheckPreamble } from './slurm-lines.js';
export {
  CHECK_IDS,
  CHECK_TITLES,
  checksJson,
  failures,
  launchSkips,
  skipChecks,
  skipReasons,
  skipsAll,
} from './types.js';
export type { CheckId, CheckResult } from './types.js';
export { checkSummary } from './summary.js';
