/**
 * What the live preview shows: the exact file texts, the launch commands and the validation findings of
 * a setup. Pure but for one existence check (a ds_config_path that names no file); the view memoises it on the answers so a keypress that changes nothing costs nothing.
 */
import { effectiveLines } from '../explain/index.js';
import { processFindings } from '../rules/index.js';
import { launchLines, type Setup } from '../config/index.js';
import type { StepCheckContext, StepFinding } from '../rules/index.js';
import { stepFindings } from '../rules/index.js';
import { fileFindings, validate } from '../rules/index.js';
import type { Finding } from '../config/index.js';
import { memoLast } from '../text/index.js';
import { setupFiles, type SetupFileRole } from '../config/index.js';

export { PREVIEW_TABS, nextTab, type PreviewTab } from './tabs.js';

/** Everything the preview pane can show. */
export interface Preview {
  yaml: string;
  json: string;
  commands: string;
  /** validate's findings, then the steps' (those carry the step and, when zerowiz can make it, the fix). */
  findings: (Finding | StepFinding)[];
}

/** How many previews are kept: moving a highlight back and forth costs a lookup, not an emit + validate. */
export const PREVIEW_CACHE_SIZE = 32;
const cache = memoLast<Preview>(PREVIEW_CACHE_SIZE);

/**
 * The preview of a setup, memoised on its content. With `steps` (where the steps run, accelerate's default
 * config, the GPUs detected) the findings include the steps' and the process count's.
 */
export function previewOf(setup: Setup, steps?: StepCheckContext): Preview {
  const key = `${JSON.stringify(setup)}\n${steps ? `${steps.cwd}\n${steps.gpuCount}\n${JSON.stringify(steps.defaultConfig)}` : ''}`;
  return cache.get(key, () => computePreview(setup, steps));
}

function computePreview(setup: Setup, steps?: StepCheckContext): Preview {
  // One serialisation: the YAML and the JSON are the texts the files would be written with.
  const all = setupFiles(setup, steps?.cwd);
  const text = (role: SetupFileRole) => all.find((f) => f.role === role)?.text ?? '';
  const yaml = text('accelerate');
  const json = text('deepspeed');
  const files = all.filter((f) => f.role === 'noDeepSpeed');
  const lines = launchLines(setup);
  let atLaunch: string[];
  try {
    atLaunch = effectiveLines(setup);
  } catch (e) {
    atLaunch = [`# (what accelerate fills at launch could not be worked out: ${(e as Error).message})`];
  }
  // The commands first: on a small terminal they are what the finish screen's few rows must show.
  const commands = [
    setup.steps.length === 0 ? '# run your training script with:' : `# ${setup.steps.length} step(s):`,
    ...lines,
    `# files: ${[setup.files.accelerateConfig, setup.files.dsConfig, ...files.map((f) => f.path)].join(', ')}`,
    '',
    ...atLaunch,
  ].join('\n');
  let findings: (Finding | StepFinding)[];
  try {
    findings = [...validate(setup), ...fileFindings(setup, 'answer')];
    if (steps) {
      findings.push(
        ...processFindings(setup.answers.num_processes, setup.answers.num_machines, steps.gpuCount),
        ...stepFindings(setup, steps),
      );
    }
  } catch (e) {
    findings = [
      { level: 'error', rule: 'internal', message: `validation failed: ${(e as Error).message}`, fix: 'report this' },
    ];
  }
  return { yaml, json: json.replace(/\n$/, ''), commands, findings };
}
