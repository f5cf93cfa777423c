/**
 * A setup compiled once: its accelerate config and DeepSpeed config as objects (what the rules read) and as the
 * texts written to disk (what the preview shows, a launch writes and the run record keeps). Every reader of what a
 * setup writes takes this value instead of emitting again: the rules, the preview, `explain`, the effective config,
 * the checks, a launch and its record. It is memoised on the setup's content, so planning, writing and recording a
 * launch emit once, and a wizard keypress that changes nothing emits nothing. The objects are frozen: their readers
 * share them, and one that wrote into them would change what every other reader sees.
 */
import {
  accelerateConfigObject,
  deepSpeedConfigObject,
  dumpYaml,
  type JsonOut,
  plainJson,
  stringifyJson,
} from './emit.js';
import { memoLast } from '../text/index.js';
import type { Setup } from './setup.js';

/** A setup's output, compiled once (see the module's comment). */
export interface CompiledSetup {
  /** The setup compiled (the first of equal ones). */
  readonly setup: Setup;
  /** The accelerate config as an object (keys unsorted; the YAML sorts them). */
  readonly accelerateConfig: Readonly<Record<string, unknown>>;
  /** The DeepSpeed config as the emitter builds it (in the seed's order, with its short scientific numbers). */
  readonly deepSpeedConfig: Readonly<Record<string, JsonOut>>;
  /** The DeepSpeed config as a JSON parser reads the written file back. */
  readonly deepSpeedJson: Readonly<Record<string, unknown>>;
  /** The accelerate YAML's text, byte for byte as accelerate saves it. */
  readonly yaml: string;
  /** The DeepSpeed JSON's text in the seed's layout (no final newline; the file gets one). */
  readonly json: string;
}

/** How many compiled setups are kept: a highlight moved back and forth in the wizard costs a lookup. */
export const COMPILED_SETUPS_KEPT = 32;
const kept = memoLast<CompiledSetup>(COMPILED_SETUPS_KEPT);

/** Freezes a value and everything in it (arrays, objects, the emitter's numbers). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A value whose parts are computed on first use (the YAML text is not needed by the rules). */
function compile(setup: Setup): CompiledSetup {
  const accelerateConfig = deepFreeze(accelerateConfigObject(setup));
  const deepSpeedConfig = deepFreeze(deepSpeedConfigObject(setup));
  let json: Readonly<Record<string, unknown>> | undefined;
  let yaml: string | undefined;
  let text: string | undefined;
  return {
    setup,
    accelerateConfig,
    deepSpeedConfig,
    get deepSpeedJson() {
      json ??= deepFreeze(plainJson(deepSpeedConfig) as Record<string, unknown>);
      return json;
    },
    get yaml() {
      yaml ??= dumpYaml(accelerateConfig);
      return yaml;
    },
    get json() {
      text ??= stringifyJson(deepSpeedConfig as Record<string, JsonOut>);
      return text;
    },
  };
}

/** THE compiled value of a setup: memoised on its content (the last COMPILED_SETUPS_KEPT are kept). */
export function compileSetup(setup: Setup): CompiledSetup {
  return kept.get(JSON.stringify(setup), () => compile(setup));
}
