/**
 * The finish screen as a pure state machine: the menu, the directory and preset-name fields, the write
 * (planned, shown as a diff when files would change, confirmed, written) and the save. The slow parts
 * (planning, writing, saving) are effects: `finishEffect(state)` names the one to run, and the view runs it
 * and dispatches its result. Leaving the screen (back, quit, launch, exit) is the wizard's business: see
 * shell.ts, which also owns the one "Quit without writing?" dialog.
 */
import type { Setup } from '../config/index.js';
import type { SlurmShape } from '../slurm/index.js';
import type { WritePlan, WriteTarget } from './finish.js';

/** The Slurm form's fields, in the order asked. */
export const SLURM_FIELDS = ['partition', 'nodes', 'gpusPerNode', 'time', 'account'] as const;
/** One field of the Slurm form. */
export type SlurmField = (typeof SLURM_FIELDS)[number];
/** The Slurm form's answers as typed. */
export type SlurmValues = Record<SlurmField, string>;
/** A partition as the form lists it (sinfo's name, and whether it is the cluster's default). */
export interface SlurmPartition {
  name: string;
  isDefault: boolean;
}

/** Where the finish screen is. */
export type FinishStep =
  | { step: 'menu' }
  | { step: 'dir'; text: string }
  | { step: 'planning'; target: WriteTarget }
  /** The overwrite diff; `launch`: the files a Launch writes, then it starts (else: the write asked for). */
  | { step: 'confirm'; plan: WritePlan; scroll: number; launch?: boolean }
  | { step: 'writing'; plan: WritePlan }
  | { step: 'written' }
  | { step: 'presetName'; text: string; after: 'menu' | 'written' }
  | { step: 'saving'; name: string; after: 'menu' | 'written' }
  /** Submitting to Slurm: the partitions are being listed (sinfo) and the setup's shape worked out. */
  | { step: 'slurmLoading' }
  /**
   * The Slurm form: one field at a time (`field` indexes SLURM_FIELDS), each starting from its default;
   * `partitions` lists what sinfo knows (empty when it could not tell).
   */
  | { step: 'slurm'; field: number; values: SlurmValues; partitions: SlurmPartition[]; listError: string | null }
  /**
   * Launch or Submit chosen: the launch entry checks the setup as `zerowiz launch` would (the setup, its steps
   * against accelerate's default config, accelerate, the scripts) before the wizard ends; a refusal comes
   * back here with the fix, the answers kept. `slurm`: the Slurm form's answers, for a submission.
   */
  | { step: 'checkingLaunch'; slurm: SlurmValues | null; after: 'menu' | 'written' }
  /** Launch chosen: it starts training on this machine, so it asks first (y/Enter: go on, n/Esc: back). */
  | { step: 'launchAsk'; after: 'menu' | 'written' }
  /** The launch was accepted: the wizard ends and starts it (shell.ts reads it). */
  | { step: 'launchReady'; slurm: SlurmValues | null }

  /** The machine checks of the steps are running (src/checks/), then back to `after`. */
  | { step: 'checking'; after: 'menu' | 'written' };

/** The finish screen's state. */
export interface FinishState {
  step: FinishStep;
  /** What the last action said: a saved preset's path, or why nothing was written. */
  note: string | null;
  /** After a write: the lines printed at exit and the setup as written. */
  written: { lines: string[]; setup: Setup } | null;
  /** The preset saved on this screen, if any: a launch is recorded under its name. */
  savedPreset?: string | null;
  /** The last machine checks: their count and the lines of what to fix (zerowiz check's, short). */
  checks?: { summary: string; lines: string[] } | null;
  /** The menu entry last chosen: the highlight stays on it when the menu comes back. */
  cursor?: FinishItem;
}

/** The entries of the finish menu. */
export type FinishItem =
  | 'dir'
  | 'default'
  | 'preset'
  | 'check'
  | 'launch'
  | 'slurm'
  | 'csvLog'
  | 'back'
  | 'quit'
  | 'exit';

/** What the finish screen can be told. */
export type FinishAction =
  | {
      type: 'choose';
      item: FinishItem;
      presetName?: string;
      /** The loss-log toggle's state as shown when it was chosen (the choice turns it around). */
      csvLogOn?: boolean;
    }
  | { type: 'text'; text: string }
  | { type: 'submit' }
  | { type: 'cancel' }
  | { type: 'confirm' }
  | { type: 'scroll'; delta: number; maxTop: number }
  | { type: 'planned'; plan: WritePlan }
  | { type: 'planFailed'; error: string }
  | { type: 'wrote'; lines: string[]; setup: Setup }
  | { type: 'writeFailed'; error: string }
  | { type: 'saved'; name: string; path: string; warning?: string | null }
  | { type: 'saveFailed'; error: string }
  /**
   * The Slurm form opens: sinfo's partitions (empty, with why, when it could not tell) and the setup's own
   * shape (src/slurm/shape.ts shapeOfSetup), the nodes and GPUs fields' defaults.
   */
  | { type: 'partitions'; partitions: SlurmPartition[]; error?: string | null; shape: SlurmShape }
  /** The Slurm form could not be opened at all: why (back to the menu). */
  | { type: 'slurmFailed'; error: string }
  /** A Slurm field was refused: why (the field stays). */
  | { type: 'slurmRefused'; error: string }
  /** Launch (or Submit) chosen: check it first (the wizard ends only once it is accepted). */
  | { type: 'launch' }
  /** The launch entry accepted the launch. */
  | { type: 'launchChecked' }
  /** The launch entry refused it: its one line and fix (the screen stays, the answers kept). */
  | { type: 'launchRefused'; error: string; hint?: string | null }

  /** The machine checks ended: their count and what to fix. */
  | { type: 'checked'; summary: string; lines: string[] }
  /** The checks could not run at all: why. */
  | { type: 'checkFailed'; error: string };

/** The slow part to run now, if any. */
export type FinishEffect =
  | { kind: 'plan'; target: WriteTarget }
  | { kind: 'write'; plan: WritePlan }
  | { kind: 'save'; name: string }
  | { kind: 'partitions' }
  /** Check the launch (Slurm's form answers for a submission, else a local launch). */
  | { kind: 'checkLaunch'; slurm: SlurmValues | null }
  | { kind: 'check' }
  | null;

/** The finish screen as it opens. */
export const FINISH_START: FinishState = { step: { step: 'menu' }, note: null, written: null, checks: null };

/** The directory the directory field starts with. */
export const DEFAULT_DIR_TEXT = '.';

/** The reducer. Actions that do not fit the current step are ignored. */
export function finishReducer(state: FinishState, a: FinishAction): FinishState {
  let s = state;
  const st = s.step;
  const back = (after: 'menu' | 'written'): FinishStep =>
    after === 'written' && s.written ? { step: 'written' } : { step: 'menu' };
  switch (a.type) {
    case 'choose': {
      if (st.step !== 'menu' && st.step !== 'written') return s;
      s = { ...s, cursor: a.item };
      if (a.item === 'dir' && st.step === 'menu')
        return { ...s, step: { step: 'dir', text: DEFAULT_DIR_TEXT }, note: null };
      if (a.item === 'default' && st.step === 'menu')
        return { ...s, step: { step: 'planning', target: { kind: 'default' } }, note: null };
      if (a.item === 'preset')
        return { ...s, step: { step: 'presetName', text: a.presetName ?? 'my-setup', after: st.step }, note: null };
      if (a.item === 'slurm') return { ...s, step: { step: 'slurmLoading' }, note: null };
      if (a.item === 'check') return { ...s, step: { step: 'checking', after: st.step }, note: null };
      return s; // back, quit, launch and exit leave the screen: the wizard handles them
    }
    case 'text':
      if (st.step === 'dir' || st.step === 'presetName') return { ...s, step: { ...st, text: a.text } };
      if (st.step === 'slurm') {
        const field = SLURM_FIELDS[st.field]!;
        return { ...s, step: { ...st, values: { ...st.values, [field]: a.text } }, note: null };
      }
      return s;
    case 'submit':
      if (st.step === 'dir') {
        const dir = st.text.trim() === '' ? DEFAULT_DIR_TEXT : st.text.trim();
        return { ...s, step: { step: 'planning', target: { kind: 'dir', dir } } };
      }
      if (st.step === 'presetName') {
        const name = st.text.trim();
        if (name === '') return { ...s, note: 'type a name for the preset' };
        return { ...s, step: { step: 'saving', name, after: st.after }, note: null };
      }
      if (st.step === 'slurm') {
        const next = st.field + 1;
        if (next < SLURM_FIELDS.length) return { ...s, step: { ...st, field: next }, note: null };
        return {
          ...s,
          step: { step: 'checkingLaunch', slurm: trimmed(st.values), after: s.written ? 'written' : 'menu' },
          note: null,
        };
      }
      return s;
    case 'cancel':
      if (st.step === 'launchAsk') return { ...s, step: back(st.after) };
      if (st.step === 'confirm' && st.launch) return { ...s, step: back(s.written ? 'written' : 'menu') };
      if (st.step === 'dir' || st.step === 'confirm') return { ...s, step: { step: 'menu' } };
      if (st.step === 'presetName') return { ...s, step: back(st.after) };
      if (st.step === 'slurmLoading') return { ...s, step: back(s.written ? 'written' : 'menu') };
      if (st.step === 'slurm')
        return st.field > 0
          ? { ...s, step: { ...st, field: st.field - 1 }, note: null }
          : { ...s, step: back(s.written ? 'written' : 'menu'), note: null };
      return s;
    case 'confirm':
      if (st.step === 'launchAsk') return { ...s, step: { step: 'checkingLaunch', slurm: null, after: st.after } };
      if (st.step !== 'confirm') return s;
      // The launch writes its files itself (the launch entry, backups kept): the wizard only asked first.
      return { ...s, step: st.launch ? { step: 'launchReady', slurm: null } : { step: 'writing', plan: st.plan } };
    case 'scroll':
      if (st.step !== 'confirm') return s;
      return { ...s, step: { ...st, scroll: Math.max(0, Math.min(a.maxTop, st.scroll + a.delta)) } };
    case 'planned':
      if (st.step !== 'planning') return s;
      if (st.target.kind === 'launch')
        return {
          ...s,
          step: a.plan.changesExisting
            ? { step: 'confirm', plan: a.plan, scroll: 0, launch: true }
            : { step: 'launchReady', slurm: null },
        };
      return {
        ...s,
        step: a.plan.changesExisting ? { step: 'confirm', plan: a.plan, scroll: 0 } : { step: 'writing', plan: a.plan },
      };
    case 'planFailed':
      if (st.step !== 'planning') return s;
      if (st.target.kind === 'launch')
        return { ...s, step: back(s.written ? 'written' : 'menu'), note: `cannot launch: ${a.error}` };
      return { ...s, step: { step: 'menu' }, note: `cannot write: ${a.error}` };
    case 'wrote':
      return st.step === 'writing'
        ? { ...s, step: { step: 'written' }, note: null, written: { lines: a.lines, setup: a.setup } }
        : s;
    case 'writeFailed':
      return st.step === 'writing' ? { ...s, step: { step: 'menu' }, note: `nothing written: ${a.error}` } : s;
    case 'saved':
      if (st.step !== 'saving') return s;
      return {
        ...s,
        step: back(st.after),
        note: `saved preset ${a.name}: ${a.path}${a.warning ? `. Note: ${a.warning}` : ''}`,
        savedPreset: a.name,
      };
    case 'saveFailed':
      if (st.step !== 'saving') return s;
      return { ...s, step: { step: 'presetName', text: st.name, after: st.after }, note: `not saved: ${a.error}` };
    case 'partitions': {
      if (st.step !== 'slurmLoading') return s;
      const values: SlurmValues = {
        // The cluster's default partition first, as sbatch would pick it.
        partition: a.partitions.find((p) => p.isDefault)?.name ?? a.partitions[0]?.name ?? '',
        nodes: String(a.shape.nodes),
        gpusPerNode: String(a.shape.gpusPerNode),
        time: '',
        account: '',
      };
      return {
        ...s,
        step: { step: 'slurm', field: 0, values, partitions: a.partitions, listError: a.error ?? null },
      };
    }
    case 'slurmRefused':
      return st.step === 'slurm' ? { ...s, note: a.error } : s;
    case 'checked':
      return st.step === 'checking'
        ? { ...s, step: back(st.after), checks: { summary: a.summary, lines: a.lines } }
        : s;
    case 'checkFailed':
      return st.step === 'checking' ? { ...s, step: back(st.after), note: `the checks could not run: ${a.error}` } : s;
    case 'slurmFailed':
      if (st.step !== 'slurmLoading') return s;
      return { ...s, step: back(s.written ? 'written' : 'menu'), note: `cannot open the Slurm form: ${a.error}` };
    case 'launch':
      if (st.step !== 'menu' && st.step !== 'written') return s;
      return { ...s, step: { step: 'launchAsk', after: st.step }, note: null, cursor: 'launch' };
    case 'launchChecked':
      if (st.step !== 'checkingLaunch') return s;
      // A Slurm job's configs go into its run record; a local launch writes the setup's own: planned first, so a
      // file that would change is shown before it does.
      return {
        ...s,
        step: st.slurm ? { step: 'launchReady', slurm: st.slurm } : { step: 'planning', target: { kind: 'launch' } },
      };
    case 'launchRefused':
      if (st.step !== 'checkingLaunch') return s;
      return {
        ...s,
        step: back(st.after),
        note: `cannot ${st.slurm ? 'submit' : 'launch'}: ${a.error}${a.hint ? `; fix: ${a.hint}` : ''}`,
      };
  }
}

function trimmed(v: SlurmValues): SlurmValues {
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x.trim()])) as SlurmValues;
}

/** The effect the view runs for this state (once per state it enters), or null. */
export function finishEffect(s: FinishState): FinishEffect {
  const st = s.step;
  if (st.step === 'planning') return { kind: 'plan', target: st.target };
  if (st.step === 'writing') return { kind: 'write', plan: st.plan };
  if (st.step === 'saving') return { kind: 'save', name: st.name };
  if (st.step === 'slurmLoading') return { kind: 'partitions' };
  if (st.step === 'checkingLaunch') return { kind: 'checkLaunch', slurm: st.slurm };
  if (st.step === 'checking') return { kind: 'check' };
  return null;
}

/** What the finish menu offers besides writing and saving. */
export interface FinishContext {
  steps: number;
  defaultConfigPath: string;
  /** Slurm's sbatch is on PATH: offer to submit the steps as a job. */
  slurm?: boolean;
  /** Offer the machine checks of the steps (zerowiz check). */
  checks?: boolean;
  /**
   * The loss-log offer for a DiffSynth training step (`--enable_csv_log`): its label, or null when no step
   * gets one.
   */
  csvLog?: string | null;
}

/** The menu entries for the step: before writing, or after it. */
export function finishItems(s: FinishState, ctx: FinishContext): { id: FinishItem; label: string }[] {
  const launch =
    ctx.steps > 0
      ? [
          {
            id: 'launch' as const,
            label:
              s.step.step === 'written'
                ? `Launch the ${ctx.steps} step(s) now in the log pane`
                : `Launch the ${ctx.steps} step(s) in the log pane (writes the config files below first)`,
          },
        ]
      : [];
  const slurm =
    ctx.steps > 0 && ctx.slurm
      ? [
          {
            id: 'slurm' as const,
            label: `Submit the ${ctx.steps} step(s) to Slurm (partition, nodes, time)…`,
          },
        ]
      : [];
  const csv = ctx.steps > 0 && ctx.csvLog ? [{ id: 'csvLog' as const, label: ctx.csvLog }] : [];
  const check =
    ctx.steps > 0 && ctx.checks
      ? [
          {
            id: 'check' as const,
            label: s.checks
              ? 'Check this machine again (zerowiz check)'
              : 'Check this machine for the steps (zerowiz check: Python, driver, ops, memory, disks, inputs)',
          },
        ]
      : [];
  if (s.step.step === 'written')
    return [
      { id: 'exit', label: 'Done: exit (the paths and the commands are printed)' },
      { id: 'preset', label: 'Save these answers and steps as a user preset…' },
      ...launch,
      ...slurm,
      ...csv,
      ...check,
    ];
  return [
    { id: 'dir', label: 'Write to a directory (accelerate_config.yaml + ds_config.json)…' },
    { id: 'default', label: `Write as accelerate's default config: ${ctx.defaultConfigPath}` },
    { id: 'preset', label: 'Save the answers and steps as a user preset…' },
    ...launch,
    ...slurm,
    ...csv,
    ...check,
    { id: 'back', label: 'Back to the review' },
    { id: 'quit', label: 'Quit without writing' },
  ];
}

/** True while a text field of the finish screen has the keys. */
export function finishTyping(s: FinishState): boolean {
  return s.step.step === 'dir' || s.step.step === 'presetName' || s.step.step === 'slurm';
}
