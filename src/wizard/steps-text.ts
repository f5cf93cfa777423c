/**
 * The steps screen's text, pure: the config row's words, the steps as tabs, the rows around the editor's, and
 * the screen's key help. The view (components/wizard/StepsScreen.tsx) draws them; the layout counts them.
 */
import { noDeepSpeedConfigPath } from '../config/index.js';
import type { SetupFiles } from '../config/index.js';
import { stepConfig } from '../config/index.js';
import { clip, padEnd, wrap } from '../text/index.js';
import type { Finding } from '../config/index.js';
import { findingLines, findingMark } from './finding-text.js';
import { KEY_TABLES, longLabel } from './keytable.js';
import type { StepsEditorState } from './steps.js';

/** What a step's config row says: which accelerate config the step runs with. */
export function configText(e: StepsEditorState, files: SetupFiles): string {
  const step = e.steps[e.step];
  if (!step) return '';
  const c = stepConfig(step);
  if (c.kind === 'setup') return `this setup's (--config_file ${files.accelerateConfig}: DeepSpeed)`;
  if (c.kind === 'default') return "none: accelerate's default config, if there is one (see the findings)";
  const own = c.path === noDeepSpeedConfigPath({ files });
  return `pinned: ${c.path}${own ? ' (no DeepSpeed; written with the setup)' : ''}`;
}

/** The steps as tabs: `data_process ▸ [train]`. */
export function stepTabs(e: StepsEditorState): string {
  if (e.steps.length === 0) return 'no steps (N: add one · t: a template)';
  return e.steps.map((s, i) => (i === e.step ? `[${s.name}]` : s.name)).join(' ▸ ');
}

/** The most rows the shown step's findings take under its rows. */
export const STEP_FINDING_MAX_ROWS = 4;

/**
 * The shown step's findings under its rows: the first whole (its message and fix, wrapped), the others one line
 * each, in at most `max` rows (the last says how many more there are; `?` shows them all whole).
 */
export function stepFindingLines(findings: readonly Finding[], width: number, max = STEP_FINDING_MAX_ROWS): string[] {
  if (findings.length === 0) return [];
  const [first, ...rest] = findings;
  const lines = [...findingLines(first!, width), ...rest.map((f) => clip(`${findingMark(f)} ${f.message}`, width))];
  if (lines.length <= max) return lines;
  const shown = lines.slice(0, Math.max(1, max - 1));
  return [...shown, clip(`(${findings.length} finding(s) in all: ? shows them whole)`, width)];
}

/** Rows the editor shows above its rows and below them, besides the rows themselves. */
export function stepsChromeRows(e: StepsEditorState, findingRows: number): number {
  return 2 + (e.message ? 1 : 0) + findingRows;
}

/**
 * The steps screen's help (`?`): each key with what it does (in more words than the hint row under it), then the
 * shown step's findings whole.
 */
export function stepsHelpLines(width: number, findings: readonly Finding[] = []): string[] {
  const keys = KEY_TABLES.steps.filter((b) => b.label !== '');
  const keyW = Math.max(...keys.map((b) => b.keys.length)) + 2;
  return [
    'Keys of the steps screen:',
    ...keys.flatMap((b) =>
      wrap(longLabel('steps', b), Math.max(20, width - keyW - 2)).map(
        (l, i) => `  ${padEnd(i === 0 ? b.keys : '', keyW)}${l}`,
      ),
    ),
    ...wrap(
      "Shared values can change everywhere; `~`, $VARS expand. Steps run where zerowiz does: start zerowiz in your trainer's checkout. (?: close · g: glossary)",
      width,
    ),
    ...(findings.length > 0 ? ['', "This step's findings:", ...findings.flatMap((f) => findingLines(f, width))] : []),
  ];
}

/**
 * `text · runs in DIR (L: change)` in `width` columns: where the steps run is always said, the directory shortened
 * from its start when it must be (`…/DiffSynth-Studio`), never the key that changes it.
 */
export function withRunsIn(text: string, cwd: string, width: number): string {
  const tail = ' (L: change)';
  const head = `${text} · runs in `;
  const room = width - head.length - tail.length;
  const dir = cwd.length <= room ? cwd : room > 1 ? `…${cwd.slice(cwd.length - (room - 1))}` : '';
  return clip(`${head}${dir}${tail}`, width);
}
