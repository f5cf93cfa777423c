/**
 * The steps screen's paste box (P): a whole `accelerate launch ...` line or an example `.sh` pasted as text,
 * read into steps as a shell would split it (src/setups/shell-script.ts) and made for the setup (a data pass
 * pinned to its config without DeepSpeed), with what the reading said about each line.
 */
import type { LaunchStep, Setup } from '../config/index.js';
import { scriptSteps, stepsForSetup } from '../setups/index.js';

/** The box: the text so far and, once read, what the reading said (its first line is the summary). */
export interface PasteBox {
  text: string;
  read: string[] | null;
  /** Whether the steps were taken from it (Enter then goes to them). */
  taken: boolean;
}

/** An empty box. */
export const EMPTY_PASTE: PasteBox = { text: '', read: null, taken: false };

/** The box's text after one key: text typed or pasted (newlines as `\n`), Enter a newline, Backspace one less. */
export function pasteKey(
  box: PasteBox,
  input: string,
  key: { return?: boolean; backspace?: boolean; delete?: boolean },
): PasteBox {
  if (key.backspace || key.delete) return { text: box.text.slice(0, -1), read: null, taken: false };
  const add = key.return && input === '' ? '\n' : input.replace(/\r\n?/g, '\n');
  return add === '' ? box : { text: box.text + add, read: null, taken: false };
}

/** What reading the box gives: the steps for `setup` and the lines to show, or why there are none. */
export function readPaste(
  text: string,
  env: Record<string, string | undefined>,
  setup: Pick<Setup, 'files'>,
): { steps: LaunchStep[] | null; lines: string[] } {
  const r = scriptSteps(text, env);
  if (r.steps.length === 0)
    return {
      steps: null,
      lines: [
        'no `accelerate launch` in what was pasted: paste the whole command (accelerate launch SCRIPT --flags...) or the example script',
        ...r.notes.map((n) => `line ${n.line}: ${n.text}`),
      ],
    };
  const names = r.steps.map((s) => s.name).join(', ');
  return {
    steps: stepsForSetup(r.steps, setup),
    lines: [
      `read ${r.steps.length === 1 ? 'one step' : `${r.steps.length} steps`} (${names}); they replace the steps`,
      ...r.notes.map((n) => `line ${n.line}: ${n.text}`),
    ],
  };
}
