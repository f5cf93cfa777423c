/** The face of src/rules/: what other folders may use of it (an architecture test holds every import to it). */
export { launchEstimate, measuredFindings, ompThreadsOf, runStepOf } from './fit.js';
export type { LaunchEstimate, OomFacts, RunEstimate, RunStep } from './fit.js';
export { estimateLines, etaLine, setupRun, setupSchedule } from './eta.js';
export type { SetupSchedule } from './eta.js';
export { envFromDetection, idleGpusNote, processFindings, processPlan } from './processes.js';
export type { StepCheckContext, StepFinding, StepFix } from './step-finding.js';
export { stepFindings } from './step-findings.js';
export { answerFindings, fileFindings, fitFindings, ownModeEstimate, validate } from './validate.js';
export { stepModelFindings } from './step-model.js';
