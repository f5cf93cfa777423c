/** The face of src/checkpoints/: what other folders may use of it (an architecture test holds every import to it). */
export { TOPOLOGY_CHOICES, TOPOLOGY_CHOICE_TEXT } from './choices.js';
export { readLatest } from './deepspeed.js';
export { NO_EXPECTATION, expectationOf } from './expect.js';
export type { Expectation } from './expect.js';
export { outputRoots, verifyFound } from './find.js';
export type { FoundCheckpoint } from './find.js';
export { LAYOUT_DESCRIPTIONS, LORA_LAYOUTS, layoutKey, planLayout, writeRenamed } from './lora-layout.js';
export type { ExportLayout } from './lora-layout.js';
export { applyTopologyChoice, isTopologyChoice, relaunchChecks } from './relaunch.js';
export type { TopologyChoice, TopologyPlan } from './relaunch.js';
export { checkpointBlocksProblem } from './record-blocks.js';
export type { TopologyJson, TopologyWarningsJson } from './record-blocks.js';
export {
  checkpointsOf,
  foreignCheckpointsOf,
  formatCheckpointLines,
  formatForeignLines,
  recordCheckpoints,
  runCheckpointCandidates,
  storedCheckpoints,
} from './runs.js';
export type { CheckpointJson } from './runs.js';
export { stepWindows } from './attribution.js';
export type { ForeignCheckpoint } from './attribution.js';
export { readSafetensorsHeader } from './safetensors.js';
export { captureTopology, pythonOfAccelerate, recordTopology, recordedTopology, setAside } from './topology.js';
export { loraLayoutOf, verifyWeightsFile } from './verify.js';
export type { CheckpointVerdict } from './verify.js';
export { CHECKPOINT_POLL_INTERVAL_MS, CheckpointWatcher } from './watch.js';
export type { CheckpointEvent } from './watch.js';
