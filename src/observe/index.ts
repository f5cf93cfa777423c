/** The face of src/observe/: what other folders may use of it (an architecture test holds every import to it). */
export { ALERT_IDS } from './alerts.js';
export type { Alert, AlertContext, CheckpointAlertFacts } from './alerts.js';
export type { PipelineListener, PipelineOutcome, RunControl, RunStatus, StepResult, StepStatus } from './events.js';
export { RunHealth } from './health.js';
export type { WatchedPath } from './health.js';
export { LineSplitter, PANE_RING_LINES, RingBuffer, cleanLine, forEachLine } from './lines.js';
export type { LineSink } from './lines.js';
export { liveStepSchema, peaksFromJson, runEstimateSchema } from './live.js';
export type { LiveStepJson, RunEstimateJson } from './live.js';
export { formatClock, formatCount, formatLoss, formatLossPair, formatRate, sparkline } from './logparse.js';
export type { Progress } from './logparse.js';
export { LOSS_SOURCE_NAMES } from './metrics/step-metrics.js';
export { formatGiB, formatPeakVsEstimate, highestPeak } from './peaks.js';
export { stallOptionsFromEnv } from './stall.js';
export { StepLogReader } from './step-output.js';
export { GpuTelemetry, TelemetryMirror, telemetryIntervalMs, visibleGpuIndices } from './telemetry.js';
export type { GpuPeak, GpuSample, TelemetryState, TelemetryView } from './telemetry.js';
export { RunWatch, watchStepOf } from './watch.js';
