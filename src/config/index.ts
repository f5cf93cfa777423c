/** The face of src/config/: what other folders may use of it (an architecture test holds every import to it). */
export {
  NO_DEEPSPEED_CONFIG_NAME,
  describeAccelerateConfig,
  extraConfigFiles,
  isZero3Offload,
  noDeepSpeedConfigPath,
  pinSteps,
  readAccelerateConfigSummary,
  withFiles,
} from './accelerate-config.js';
export type { AccelerateConfigSummary, DeepSpeedSummary } from './accelerate-config.js';
export { checkAccelerateConfig, checkDeepSpeedConfig } from './accept.js';
export { earlierOutputs, launchMixedPrecision, missingScripts, prepareCommands, trainingScript } from './argv.js';
export type { PreparedCommand } from './argv.js';
export { compileSetup } from './compile.js';
export type { CompiledSetup } from './compile.js';
export { DEEPSPEED_DEFAULTS } from './deepspeed-defaults.js';
export {
  CSV_LOG_FLAG,
  csvLogOffer,
  csvLogSteps,
  diffSynthOutputPath,
  diffSynthSchedule,
  isDiffSynthStep,
  metadataRows,
  planCsvLog,
  withCsvLog,
} from './diffsynth.js';
export type { CsvLogChoice, CsvLogOffer, DiffSynthSchedule } from './diffsynth.js';
export {
  accelerateConfigObject,
  deepMerge,
  deepSpeedConfigObject,
  isPlainObject,
  plainJson,
  toAccelerateYaml,
  toDeepSpeedJson,
} from './emit.js';
export { inReportOrder, launchConfigFiles, setupFiles, setupInDir } from './files.js';
export type { SetupFileRole } from './files.js';
export { writeConfigFiles, writeLaunchConfigFiles } from './write-files.js';
export { err, formatFinding, warn } from './finding.js';
export type { Finding } from './finding.js';
export { autoFill, numberDefault } from './keys.js';
export {
  MODES,
  MODE_INFO,
  modeDevice,
  modeOffloads,
  modeRows,
  placementOf,
  rowFromKey,
  rowKey,
  rowLabel,
} from './modes.js';
export type { Mode, OffloadDevice, OffloadTarget, Placement } from './modes.js';
export {
  QUESTIONS,
  activeQuestions,
  flagName,
  movedTo,
  optimizerOffloadDevice,
  paramOffloadDevice,
  parseAnswers,
  question,
  withDefaults,
} from './questions.js';
export type { Answers, DetectedEnv, Parsed, Question, QuestionId } from './questions.js';
export { presetSource, sourceOfRecord, sourcePreset, sourceText } from './source.js';
export type { LaunchSource } from './source.js';
export {
  DEFAULT_FILES,
  SAFE_NAME_RE,
  UNNAMED_SETUP,
  dropKeptFor,
  launchLines,
  noStepsNote,
  toLaunchCommands,
} from './setup.js';
export type { LaunchStep, Setup, SetupFiles } from './setup.js';
export { argValue, flattenArgs, groupArgs, isDataPass, isFlag, stepConfig, withStepConfig } from './step-args.js';
export type { StepArg, StepConfig } from './step-args.js';
export { OPTIMIZER_KINDS } from './training.js';
export type { Interconnect, MasterWeights, OptimizerKind, Precision } from './training.js';
export { ACCELERATE_KEYS_REFUSED_WITH_DS_FILE } from './keys.js';
export { AnswerKeyError } from './questions.js';
export { BATCH_KEYS } from './emit.js';
export { CONFIG_KEYS } from './keys.js';
export { DEPRECATED_JSON_KEYS } from './keys.js';
export { HIDDEN_SIZE_KEYS } from './keys.js';
export type { KeyInfo } from './keys.js';
export { PLUGIN_KEYS } from './keys.js';
export { autoRule } from './keys.js';
export { canonicalPath } from './keys.js';
export { defaultOf } from './keys.js';
export { dsConfigReference } from './setup.js';
export { dumpYaml } from './emit.js';
export { formatSci } from './questions.js';
export { keyInfo } from './keys.js';
export { modeFromStage } from './modes.js';
export { mustKey } from './keys.js';
export type { LaunchPrecision } from './argv.js';
export { deepSpeedDefault } from './keys.js';
export { noDeepSpeedConfigObject } from './accelerate-config.js';
export { parseDeepSpeedJson } from './json-file.js';
