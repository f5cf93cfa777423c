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
  formatStepSeconds,
  normalizeInput,
} from './estimate.js';
export type { EstimateInput, EstimateReport, ModeEstimate } from './estimate.js';
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
export { measuredContradiction, measuredPeaks, measuredText, placementKey } from './measured.js';
export type { MeasuredPeak, MeasuredRun } from './measured.js';
export { findModel, loadModelCatalog, lookupModel, modelCatalogOrNone } from './models.js';
export type { BlockKind, ModelEntry } from './models.js';
export { NVME_BYTES_PER_S, loraParams, memoryLayout, pictureBreakdown, weightBytes } from './peak.js';
export type { PictureBreakdown } from './peak.js';
