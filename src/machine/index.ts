/** The face of src/machine/: what other folders may use of it (an architecture test holds every import to it). */
export { NVIDIA_SMI_TIMEOUT_MS, describeGpus, describeInterconnect, detectHost } from './detect.js';
export type { HostDetection } from './detect.js';
export { detectGpus } from './detect.js';
export { nvmeSpeedFile, rememberNvmeSpeed, rememberedNvmeSpeed } from './nvme-speed.js';
export type { NvmeSpeed } from './nvme-speed.js';
