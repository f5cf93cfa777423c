/** The face of src/notify/: what other folders may use of it (an architecture test holds every import to it). */
export { attemptLimits, deliverOnce } from './deliver.js';
export type { AttemptResult } from './deliver.js';
export { PAYLOAD_SCHEMA, payloadOf } from './message.js';
export type { NotifyEventKind, NotifyPayload } from './message.js';
export { Notifier, NOTIFY_FLUSH_MS } from './notifier.js';
export type { NotifySummary } from './notifier.js';
export { RunNotices } from './run-notices.js';
export type { RunEnd } from './run-notices.js';
export { SAMPLE_RUN_ID, samplePayload } from './sample.js';
export {
  NOTIFY_ENV,
  envTextOf,
  parseTarget,
  specsOfEnvText,
  targetsFromEnv,
  uniqueTargets,
} from './targets.js';
export type { NotifyTarget, TargetSpec } from './targets.js';
export { endPayloadOfRecord } from './record-end.js';
