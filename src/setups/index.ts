/** The face of src/setups/: the setups a user brings (presets, an imported accelerate config, DiffSynth-Studio's templates, a pasted script), read into zerowiz's setup. */
export { IMPORT_REPAIRS, importAccelerateConfig } from './import.js';
export type { ImportResult } from './import.js';
export {
  deletePreset,
  findPreset,
  listPresets,
  loadPreset,
  presetFileFor,
  presetName,
  renderPresetFile,
  renderStepsYaml,
  savePresetFile,
} from './presets.js';
export type { Preset, PresetProblem } from './presets.js';
export { savePreset } from './presets.js';
export { scriptSteps, splitCommands, stepsForSetup } from './shell-script.js';
export type { ScriptNote, ScriptSteps } from './shell-script.js';
export {
  loadTemplates,
  stepModelRepos,
  stepTuning,
  templateScriptSteps,
  templatesOrNone,
} from './templates.js';
export type { DiffSynthTemplate, TemplateCatalog, TemplateTuning } from './templates.js';
