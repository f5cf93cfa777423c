/**
 * What the live preview shows: the exact file texts, the launch commands and the validation findings of
 * a setup. Pure but for one existence check (a ds_config_path that names no file); the view memoises it on the answers so a keypress that changes nothing costs nothing.
 */
import { effectiveLines } from '../effective.js';
import { launchLines, type Setup } from '../setup.js';
import { fileFindings, validate, type Finding } from '../validate.js';
import { configTexts } from '../write.js';

export { PREVIEW_TABS, nextTab, type PreviewTab } from './tabs.js';

/** Everything the preview pane can show. */
export interface Preview {
  yaml: string;
  json: string;
  commands: string;
  findings: Finding[];
}

/** How many previews are kept: moving a highlight back and forth costs a lookup, not an emit + validate. */
export const PREVIEW_CACHE_SIZE = 32;
const cache = new Map<string, Preview>();

/** The preview of a setup, memoised on its content. */
export function previewOf(setup: Setup): Preview {
  const key = JSON.stringify(setup);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const p = computePreview(setup);
  cache.set(key, p);
  if (cache.size > PREVIEW_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return p;
}

function computePreview(setup: Setup): Preview {
  const { yaml, json } = configTexts(setup);
  const lines = launchLines(setup);
  let atLaunch: string[];
  try {
    atLaunch = effectiveLines(setup);
  } catch (e) {
    atLaunch = [`# (what accelerate fills at launch could not be worked out: ${(e as Error).message})`];
  }
  const commands = [
    `# files: ${setup.files.accelerateConfig}, ${setup.files.dsConfig}`,
    setup.steps.length === 0 ? '# run your training script with:' : `# ${setup.steps.length} step(s):`,
    ...lines,
    '',
    ...atLaunch,
  ].join('\n');
  let findings: Finding[];
  try {
    findings = [...validate(setup), ...fileFindings(setup, 'answer')];
  } catch (e) {
    findings = [
      { level: 'error', rule: 'internal', message: `validation failed: ${(e as Error).message}`, fix: 'report this' },
    ];
  }
  return { yaml, json: json.replace(/\n$/, ''), commands, findings };
}
