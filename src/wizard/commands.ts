/**
 * The wizard's key commands as data, pure: what each command of the key tables (./keytable.ts) does on the
 * surface it reached, as the actions of the wizard's reducer (./shell.ts), for the keys the shell handles
 * itself (the focused list or text field handles its own). The view runs `shellCommand` for the surface a key
 * reached and dispatches what it returns, so it holds no key logic of its own; the sizes a scroll needs (a
 * page, the end of a window) come from the layout (./layout.ts) in `CommandContext`.
 */
import { noDeepSpeedConfigPath } from '../config/index.js';
import type { QuestionId } from '../config/index.js';
import { expandPath, expandWord, type ExpandContext } from '../fs/index.js';
import { SLURM_FIELDS, type SlurmField, type SlurmPartition } from './finishState.js';
import { glossaryTermFor } from './glossary.js';
import type { KeyPress } from '../text/index.js';
import type { Command, Surface } from './keytable.js';
import { screenOf, type WizardAction, type WizardState } from './shell.js';
import { nextStepConfig, stepRows, type StepsAction } from './steps.js';

/** A window's scroll position: where it starts and how far it can go. */
export interface Scrolled {
  top: number;
  maxTop: number;
}

/** What a command needs to know beyond the state: the question shown, the pages and windows the layout made. */
export interface CommandContext {
  /** The question on the screen, if any (the help's glossary opens at its term). */
  question: QuestionId | null;
  /** Rows one PgUp/PgDn moves: the preview's text, the glossary's, the explain view's, the overwrite diff's. */
  pages: { preview: number; glossary: number; explain: number; diff: number };
  /** The glossary's window, when it is open. */
  glossary: Scrolled | null;
  /** The explain view's window, when it is open. */
  explain: Scrolled | null;
  /** The overwrite diff's last top row (its length less the rows shown). */
  diffMaxTop: number;
  /** The directory the steps run in (the launch directory's field starts with it). */
  cwd: string;
}

/** The surfaces whose keys the shell handles (the focused list and text fields handle their own). */
export const SHELL_SURFACES = [
  'always',
  'app',
  'explain',
  'glossary',
  'start',
  'startSub',
  'question',
  'modeQuestion',
  'help',
  'picture',
  'review',
  'finish',
  'diff',
  'launchAsk',
  'dialog',
  'steps',
  'editing',
  'offer',
  'templates',
  'paste',
] as const satisfies readonly (Surface | 'always')[];

/** The steps screen's keys that are one editor action each. */
const STEP_ACTIONS: Partial<Record<Command, StepsAction>> = {
  up: { type: 'move', delta: -1 },
  down: { type: 'move', delta: 1 },
  editFlag: { type: 'startEdit', part: 'flag' },
  addArg: { type: 'addArg' },
  removeArg: { type: 'removeArg' },
  moveArgUp: { type: 'moveArg', delta: -1 },
  moveArgDown: { type: 'moveArg', delta: 1 },
  addStep: { type: 'addStep' },
  removeStep: { type: 'removeStep' },
  templates: { type: 'pickTemplate' },
};

const steps = (action: StepsAction): WizardAction[] => [{ type: 'steps', action }];

/**
 * A window scrolled a line, a page or to an end: the reducer's action for it. The window's top as drawn (`w.top`:
 * the glossary opens at an entry, a resize clamps it) can differ from the overlay's own (`stored`): the delta
 * is from the stored one, so the move starts where the user sees it start.
 */
function scrollBy(
  c: Command,
  w: Scrolled | null,
  stored: number,
  page: number,
): { delta: number; maxTop: number } | null {
  const top = w?.top ?? 0;
  const maxTop = w?.maxTop ?? 0;
  const by: Partial<Record<Command, number>> = { up: -1, down: 1, scrollUp: -page, scrollDown: page };
  const move = c === 'top' ? -top : c === 'bottom' ? maxTop - top : by[c];
  return move === undefined ? null : { delta: top + move - stored, maxTop };
}

/** The overlay's own top, when it is the one named. */
function overlayTop(s: WizardState, kind: 'glossary' | 'explain'): number {
  return s.overlay?.kind === kind ? s.overlay.top : 0;
}

/** The steps screen's commands. */
function stepsCommand(s: WizardState, c: Command, ctx: CommandContext): WizardAction[] | null {
  if (!s.steps) return null;
  const plain = STEP_ACTIONS[c];
  if (plain) return steps(plain);
  const step = s.steps.steps[s.steps.step];
  switch (c) {
    case 'edit':
      // Enter on the config row moves its config on, as `c` does; on any other row it edits.
      if (step && stepRows(step)[s.steps.row]?.kind === 'config') return stepsCommand(s, 'config', ctx);
      return steps({ type: 'startEdit' });
    case 'prevStep':
    case 'nextStep':
      return steps({ type: 'selectStep', index: s.steps.step + (c === 'prevStep' ? -1 : 1) });
    case 'config':
      return step ? steps({ type: 'setConfig', config: nextStepConfig(step, noDeepSpeedConfigPath(s.flow.base)) }) : [];
    case 'launchDir':
      return [{ type: 'launchDirEdit', text: ctx.cwd }];
    case 'paste':
      return [{ type: 'pasteOpen' }];
    case 'review':
      return [{ type: 'stepsDone' }];
    case 'back':
      return [{ type: 'stepsBack' }];
    case 'help':
      return [{ type: 'toggleHelp' }];
    default:
      return null;
  }
}

/**
 * What a command does on the surface it reached, as reducer actions; null when this surface lets it pass (the
 * next surface out tries). An empty list handles the key and changes nothing.
 */
export function shellCommand(
  s: WizardState,
  surface: Surface | 'always',
  c: Command,
  key: KeyPress,
  ctx: CommandContext,
): WizardAction[] | null {
  const one = (a: WizardAction) => [a];
  switch (surface) {
    case 'always':
      return c === 'abort' ? one({ type: 'abort' }) : null;
    case 'app':
      if (c === 'nextTab') return one({ type: 'nextTab' });
      if (c === 'scrollUp') return one({ type: 'scroll', delta: -ctx.pages.preview });
      if (c === 'scrollDown') return one({ type: 'scroll', delta: ctx.pages.preview });
      if (c === 'quit') return one({ type: 'quit' });
      if (c === 'explain') return one({ type: 'openExplain' });
      return null;
    case 'explain': {
      if (c === 'close') return one({ type: 'closeOverlay' });
      const by = scrollBy(c, ctx.explain, overlayTop(s, 'explain'), ctx.pages.explain);
      return by ? one({ type: 'explainScroll', ...by }) : null;
    }
    case 'glossary': {
      if (c === 'close') return one({ type: 'closeOverlay' });
      if (!ctx.glossary) return [];
      const by = scrollBy(c, ctx.glossary, overlayTop(s, 'glossary'), ctx.pages.glossary);
      return by ? one({ type: 'glossaryScroll', ...by }) : null;
    }
    case 'start':
      return c === 'quit' ? one({ type: 'quit' }) : null;
    case 'startSub':
      return c === 'back' ? one({ type: 'startView', view: 'menu' }) : null;
    case 'question':
      if (c === 'back') return one({ type: 'flow', action: { type: 'back' } });
      if (c === 'help') return one({ type: 'toggleHelp' });
      if (c === 'review') return one({ type: 'flow', action: { type: 'review' } });
      return null;
    case 'modeQuestion':
      return c === 'picture' ? one({ type: 'togglePicture' }) : null;
    case 'help': {
      if (c === 'close') return one({ type: 'closeOverlay' });
      if (c !== 'glossary') return null;
      const at = glossaryTermFor(ctx.question);
      return one({ type: 'openGlossary', ...(at ? { at } : {}) });
    }
    case 'picture':
      if (c === 'close') return one({ type: 'closeOverlay' });
      if (c === 'glossary') return one({ type: 'openGlossary', at: 'sharding' });
      return null;
    case 'review':
      return c === 'back' ? one({ type: 'flow', action: { type: 'back' } }) : null;
    case 'finish':
      return c === 'back' ? one({ type: 'finish', action: { type: 'choose', item: 'back' } }) : null;
    case 'diff': {
      if (c === 'yes') return one({ type: 'finish', action: { type: 'confirm' } });
      if (c === 'no') return one({ type: 'finish', action: { type: 'cancel' } });
      if (c !== 'up' && c !== 'down') return null;
      // A line with the arrows, a page with PgUp/PgDn.
      const by = key.pageUp || key.pageDown ? ctx.pages.diff : 1;
      return one({ type: 'finish', action: { type: 'scroll', delta: c === 'up' ? -by : by, maxTop: ctx.diffMaxTop } });
    }
    case 'launchAsk':
      if (c === 'yes') return one({ type: 'finish', action: { type: 'confirm' } });
      if (c === 'no') return one({ type: 'finish', action: { type: 'cancel' } });
      return null;
    case 'dialog':
      if (c === 'yes') return one({ type: 'dialog', answer: 'yes' });
      if (c === 'no') return one({ type: 'dialog', answer: 'no' });
      return null;
    case 'steps':
      return stepsCommand(s, c, ctx);
    case 'editing': {
      if (c !== 'no') return null;
      const screen = screenOf(s);
      if (screen === 'start') return one({ type: 'startView', view: 'menu' });
      if (screen === 'steps' && s.launchDirEdit !== null) return one({ type: 'launchDirCancel' });
      if (screen === 'steps') return steps({ type: 'cancelEdit' });
      return one({ type: 'finish', action: { type: 'cancel' } });
    }
    case 'paste':
      // Ctrl+D is read by the view (it parses the text with the environment); Esc closes the box.
      return c === 'no' ? [{ type: 'pasteClose' }] : null;
    case 'offer':
      if (c === 'yes') return steps({ type: 'acceptOffer' });
      if (c === 'no') return steps({ type: 'declineOffer' });
      return null;
    case 'templates':
      if (c === 'paste') return [{ type: 'pasteOpen' }];
      if (c !== 'back') return null;
      // Back from the templates: to the steps when there are some, else out of the steps screen.
      if (s.steps && s.steps.steps.length > 0) return steps({ type: 'template', steps: s.steps.steps });
      return one({ type: 'stepsBack' });
    default:
      return null;
  }
}

/**
 * Enter in a step's field: the edit committed, with `~` and $VARS in a value expanded as a shell would (zerowiz
 * runs the steps without one; a relative path stays relative: the steps run in the directory zerowiz runs in),
 * or the reason it cannot be, said on the screen.
 */
export function commitStepEdit(s: WizardState, paths: ExpandContext): WizardAction[] {
  const e = s.steps?.edit;
  if (e && e.part === 'value' && (e.text.startsWith('~') || e.text.includes('$'))) {
    const x = expandWord(e.text, paths);
    if (!x.ok) return steps({ type: 'say', text: `${x.error}; ${x.hint}` });
    return [...steps({ type: 'editText', text: x.value }), ...steps({ type: 'commitEdit' })];
  }
  return steps({ type: 'commitEdit' });
}

/** Why a Slurm form field's value cannot be submitted, or null (the checks of `launch --slurm`'s flags). */
export type SlurmFieldCheck = (
  field: SlurmField,
  value: string,
  partitions: readonly SlurmPartition[],
) => string | null;

/** Enter in a finish screen's field: the Slurm form's field checked first (refused with why), else submitted. */
export function submitFinishField(s: WizardState, check: SlurmFieldCheck | null): WizardAction[] {
  const st = s.finish.step;
  if (st.step === 'slurm') {
    const field = SLURM_FIELDS[st.field]!;
    const why = check?.(field, st.values[field].trim(), st.partitions) ?? null;
    if (why) return [{ type: 'finish', action: { type: 'slurmRefused', error: why } }];
  }
  return [{ type: 'finish', action: { type: 'submit' } }];
}

/**
 * Enter in the launch directory's field: the path as a shell reads it (`~`, `$VAR`, relative to where the steps
 * run now), then `setDir` (the process moves there; null: it did) says whether it can be; the actions that follow.
 */
export function launchDirActions(
  text: string,
  paths: ExpandContext,
  setDir: ((dir: string) => string | null) | undefined,
): WizardAction[] {
  const x = expandPath(text.trim() === '' ? '.' : text, paths);
  if (!x.ok) return [{ type: 'launchDirRefused', error: `${x.error}; ${x.hint}` }];
  const why = setDir ? setDir(x.value) : null;
  return [why ? { type: 'launchDirRefused', error: why } : { type: 'launchDirSet', dir: x.value }];
}
