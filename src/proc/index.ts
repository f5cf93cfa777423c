/** The face of src/proc/: what other folders may use of it (an architecture test holds every import to it). */
export { resolveAccelerate, whichSync } from './executables.js';
export type { AccelerateExe } from './executables.js';
export { OUTPUT_AFTER_EXIT_MS, runBounded } from './bounded.js';
export type { BoundedResult } from './bounded.js';
export { findFreePort } from './free-port.js';
export {
  GroupStop,
  SIGINT_GRACE_MS,
  SIGTERM_GRACE_MS,
  fdTarget,
  gracePeriods,
  groupAlive,
  handOffAtExit,
  processHeld,
  processesHolding,
  processesOfRun,
  processesWithEnv,
  signalGroup,
  stopGroup,
  trackGroup,
  untrackGroup,
  waitGroupGone,
} from './group.js';
export type { LadderHooks, LadderSignal, ProcessGuard, ProcessInfo, RunProcess, StopSignal } from './group.js';
export { capYoungGeneration } from './heap.js';
export {
  ownIdentity,
  ownerState,
  processAlive,
  processStartTime,
  signalSupervisor,
  supervisorState,
} from './identity.js';
export type { SupervisorId } from './identity.js';
export {
  SIGNAL_EXIT_CODES,
  Screen,
  askLine,
  drainOutput,
  endAfterHangup,
  onHangup,
  onTerminalSignals,
  stdoutBacklog,
  terminalHungUp,
  writeErr,
  writeOut,
} from './terminal.js';
export type { TerminalSignal } from './terminal.js';
