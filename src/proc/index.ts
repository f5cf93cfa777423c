/** The face of src/proc/: what other folders may use of it (an architecture test holds every import to it). */
export { resolveAccelerate, whichSync } from './executables.js';
export type { AccelerateExe } from './executables.js';
export { findFreePort } from './free-port.js';
export {
  GroupStop,
  SIGINT_GRACE_MS,
  SIGTERM_GRACE_MS,
  fdTarget,
  gracePeriods,
  groupAlive,
  handOffAtExit,
  processesHolding,
  processesWithEnv,
  signalGroup,
  stopGroup,
  trackGroup,
  untrackGroup,
} from './group.js';
export type { ProcessGuard, ProcessInfo, StopSignal } from './group.js';
export { capYoungGeneration } from './heap.js';
export { ownIdentity, ownerState, processStartTime, signalSupervisor } from './identity.js';
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
