/**
 * The steps screen's text, pure: the config row's words, the steps as tabs, the rows around the editor's, and
 * the screen's key help. The view (components/wizard/StepsScreen.tsx) draws them; the layout counts them.
 */
import { noDeepSpeedConfigPath } from '../config/accelerate-config.js';
import type { SetupFiles } from '../config/setup.js';
import { stepConfig } from '../config/step-args.js';
import { clip, padEnd, wrap } from '../text.js';
import { KEY_TABLES } from './keytable.js';
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

/** Rows the editor shows above its rows and below them, besides the rows themselves. */
export function stepsChromeRows(e: StepsEditorState, findings: number): number {
  return 2 + (e.message ? 1 : 0) + findings;
}

/** The steps screen's lines for the steps' key help (`?`). */
export function stepsHelpLines(width: number): string[] {
  return [
    'Keys of the steps screen:',
    // One row each (wrap would fold the padding): key, what it does.
    ...KEY_TABLES.steps.filter((b) => b.label !== '').map((b) => clip(`  ${padEnd(b.keys, 8)} ${b.label}`, width)),
    ...wrap(
      'Editing a value that other steps share (the cache path, a model id, LoRA options) offers to change it everywhere. `~` and $VARS in a value are expanded when you accept it, as a shell would. (? closes this · g: glossary)',
      width,
    ),
  ];
}
