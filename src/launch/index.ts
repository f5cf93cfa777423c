/** The face of src/launch/: what other folders may use of it (an architecture test holds every import to it). */
export { JOB_WATCH_ARG, SUPERVISOR_ARG, WATCHDOG_ARG, binPath, setBinPath } from './bin.js';
export { followRun, launch, planLaunch } from './entry.js';
export type { LaunchRequest, PlannedLaunch } from './entry.js';
export { RunFollower } from './follower.js';
export { preparedOfRecord, recordCommands } from './kind.js';
export type { KindFollow, OpenedRun, PreparedLaunch, RunKind } from './kind.js';
export { localKind, localRunControl, localRunOpen } from './local.js';
export { localRunState, processList, settleOrphans } from './orphans.js';
export type { LocalRunState } from './orphans.js';
export { stopLocalRun } from './stop.js';
export {
  checkRunnable,
  estimateLines,
  formatFindings,
  invalidSetup,
  launchAgainPinned,
  stepLaunchFindings,
} from './prepare.js';
export type { TextSink } from './stream.js';
export { stepTimeOf } from './viewer.js';
export type { LogPaneOptions } from './viewer.js';
export { superviseMain } from './supervisor.js';
export { releaseWarmSupervisor, warmSupervisor } from './supervisor-start.js';
export { finishAfterZerowiz } from './watchdog.js';
export { alertContextOf, watchOfRun } from './run-watch.js';
export { RunOutputs } from './run-outputs.js';
