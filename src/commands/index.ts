/** The face of src/commands/: what other folders may use of it (an architecture test holds every import to it). */
export { registerAttach } from './attach.js';
export { registerCheck } from './check.js';
export type { CommandContext } from './context.js';
export { registerEstimate } from './estimate.js';
export { registerExplain } from './explain.js';
export { registerExport } from './export.js';
export { registerGenerate } from './generate.js';
export { registerLaunch } from './launch.js';
export { configureOutput, error } from './output.js';
export { handOnTargets, launchTargets } from './notify-targets.js';
export { registerNotify } from './notify.js';
export { registerPreset } from './preset.js';
export { registerReport } from './html-report.js';
export type { UiLoaders, WizardOptions } from './ui.js';
export { ZerowizCommand } from './usage.js';
export { offerTopology } from './topology-offer.js';
export { setAsideNow } from './topology-offer.js';
