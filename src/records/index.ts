/** The face of src/records/: what other folders may use of it (an architecture test holds every import to it). */
export { loadMeasuredRuns } from './measured-runs.js';
export { ensureRunsRoot, writeRecordFile } from './record-files.js';
export {
  RUNS_DIR,
  RecordError,
  TMP_SUFFIX,
  createRunRecord,
  displayDir,
  findRunRecord,
  listRunRecords,
  parseStoredSetup,
  pendingStepJson,
  readRecordSetup,
  readRunRecord,
  recordEnd,
  recordStepEnd,
  recordStepStart,
  releaseReserve,
  runDirName,
  saveRunJson,
  setupOfRecord,
  stepLogName,
  stepLogPath,
} from './record.js';
export type { DamagedRecord, RecordCheck, RunJson, RunRecord } from './record.js';
export { EVENTS_FILE, EventsReader, EventsWriter, readLive, writeLive } from './run-files.js';
export type { LiveSnapshot, RunEvent } from './run-files.js';
export { predictedStepTime } from './predicted.js';
export type { PredictedStepTime } from './predicted.js';
