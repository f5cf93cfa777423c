/** The face of src/estimate/: what other folders may use of it (an architecture test holds every import to it). */
export { ADDITIONAL_BUFFER_FACTOR, CPU_HEADROOM_FRACTION, DEFAULT_HEADROOM_PERCENT } from './headroom.js';
export {
  DEEPSPEED_ESTIMATOR_WHY,
  EstimateInputError,
  MAX_GPU_MEMORY_BYTES,
  MAX_HOST_BYTES,
  MAX_KNOB_ELEMS,
  MAX_PARAMS,
  commMultipleText,
  compareRows,
  ddpBytesOf,
  estimateModes,
  estimatePlacement,
  fitsWords,
  normalizeInput,
  timeWords,
  timesText,
  zeroPaperBytes,
} from './estimate.js';
export type { BaselineEstimate, EstimateInput, EstimateReport, ModeEstimate } from './estimate.js';
export { saveCostOfInput, saveCostOfSetup, saveCostText } from './gather.js';
export {
  estimateInputFromSetup,
  gpuLinksAnswer,
  interconnectOfAnswer,
  placementOfAnswers,
  precisionOf,
  topology,
} from './input.js';
export type { ShapeOverrides } from './input.js';
export {
  accumulationOf,
  measuredContradiction,
  measuredPeaks,
  measuredStepText,
  measuredSteps,
  measuredText,
  placementKey,
  stepSecondsOfRate,
} from './measured.js';
export type { MeasuredPeak, MeasuredRun, MeasuredStep } from './measured.js';
export { findModel, loadModelCatalog, lookupModel, modelCatalogOrNone } from './models.js';
export type { BlockKind, ModelEntry } from './models.js';
export { loraParams, memoryLayout, pictureBreakdown, weightBytes } from './peak.js';
export type { PictureBreakdown } from './peak.js';
export {
  DEFAULT_GPU_ID,
  DEFAULT_HOST_CORES,
  GPU_CATALOG,
  defaultGpu,
  describeInternode,
  findGpu,
  gpuMemoryBytes,
  gpuOfSmiName,
  lookupGpu,
  parseInternode,
} from './gpus.js';
export type { GpuSpec, Internode } from './gpus.js';
export { NVME_BYTES_PER_S, TERM_WORDS, boundWords, formatBand } from './time.js';
export type { StepTimeBand, TimeContext, TimeTerm } from './time.js';
export { globalBatchOf, minBox, pipelineOf, stepsOf } from './pipeline.js';
export type { MinBoxRow, PipelineEstimate, StepCount } from './pipeline.js';
