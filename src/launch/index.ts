/** The face of src/launch/: what other folders may use of it (an architecture test holds every import to it). */
export { SUPERVISOR_ARG, WATCHDOG_ARG, binPath, setBinPath } from './bin.js';
export { followRun, launch, planLaunch } from './entry.js';
export type { LaunchRequest } from './entry.js';
export { RunFollower } from './follower.js';
export { preparedOfRecord, recordCommands } from './kind.js';
export type { KindFollow, OpenedRun, PreparedLaunch, RunKind } from './kind.js';
export { localKind, localRunOpen, settleOrphans } from './local.js';
export { checkRunnable, estimateLines, formatFindings, invalidSetup, stepLaunchFindings } from './prepare.js';
export type { TextSink } from './stream.js';
export { stepTimeOf } from './viewer.js';
export type { LogPaneOptions } from './viewer.js';
export { superviseMain } from './supervisor.js';
export { finishAfterZerowiz } from './watchdog.js';
