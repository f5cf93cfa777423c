/** The face of src/wizard/: what other folders may use of it (an architecture test holds every import to it). */
export { SHELL_SURFACES, commitStepEdit, launchDirActions, shellCommand, submitFinishField } from './commands.js';
export { enterChoice, fieldStart } from './display.js';
export { editField, fieldOf, fieldWindow } from './field.js';
export type { FieldState } from './field.js';
export {
  FINISH_CHECK_LINES,
  csvLogLabel,
  diffLines,
  finishCheckRows,
  finishEstimateLines,
  launchQuestion,
  launchWritesNote,
  presetDescription,
} from './finish.js';
export type { DiffLine, WritePlan, WriteTarget } from './finish.js';
export { SLURM_FIELDS, finishEffect, finishItems } from './finishState.js';
export type { FinishItem, FinishState, SlurmField, SlurmPartition, SlurmValues } from './finishState.js';
export { answersOf, presetGiven } from './flow.js';
export { glossaryView } from './glossary.js';
export type { GlossaryView } from './glossary.js';
export { KEY_TABLES, START_STACK, dispatchKey, hintLines, resolveKey } from './keytable.js';
export type { Command, Surface, SurfaceHandler } from './keytable.js';
export {
  DIFF_CHROME_ROWS,
  EXPLAIN_TITLE_ROWS,
  FINISH_NOTE_MAX_ROWS,
  GLOSSARY_TITLE_ROWS,
  explainWindow,
  finishRows,
  previewFindingRows,
  previewTextRows,
  questionRows,
  reviewDetailMaxRows,
  reviewRows,
  scrollPages,
  stepsRows,
  wizardLayout,
} from './layout.js';
export type { ExplainWindow } from './layout.js';
export { DETECTING, bodyRows } from './frame.js';
export {
  COMM_W,
  LABEL_W,
  NUM_W,
  TIME_W,
  barWidth,
  draftFor,
  fitMark,
  headerText,
  modeItems,
  panelLines,
  reasonText,
} from './mode-table.js';
export { drawPicture } from './picture.js';
export type { Segment } from './picture.js';
export type { Preview } from './preview.js';
export { LIST_LIMIT, choiceItems, helpLines, modelListShown, parseTyped, promptLines } from './question-text.js';
export { idleGpusLines, importLines, reviewDetailLines, reviewDetailRows, reviewItems } from './review.js';
export type { ReviewItem } from './review.js';
export {
  initialWizard,
  keyStack,
  previewAnswers,
  previewShown,
  reviewIndex,
  screenOf,
  wizardHeader,
  wizardReducer,
} from './shell.js';
export type { WizardAction, WizardResult, WizardState } from './shell.js';
export { configText, stepFindingLines, stepTabs, stepsChromeRows, stepsHelpLines, withRunsIn } from './steps-text.js';
export { STEP_TEMPLATES, stepRows, stepTemplates, templateSteps } from './steps.js';
export type { StepTemplate } from './steps.js';
export type { StepRow, StepsEditorState } from './steps.js';
export { PREVIEW_TABS } from './tabs.js';
export type { PreviewTab } from './tabs.js';
export { glossaryContext, keyLabel, modeStart, pictureOf, selectedKey, startKey, tradeoffOf } from './tradeoff.js';
export type { Tradeoff, TradeoffRow } from './tradeoff.js';
export { previewOf } from './preview.js';
export { planWrite } from './finish.js';
export { carryOut } from './finish.js';
export { summaryLines } from './finish.js';
export { EMPTY_PASTE, pasteKey, readPaste } from './paste.js';
export type { PasteBox } from './paste.js';
