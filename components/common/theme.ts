/**
 * Colours, off when NO_COLOR is set (https://no-color.org; src/text/text.ts colorAllowed, the rule the plain commands
 * use too). Views ask `tint(name)` for a colour prop; with NO_COLOR it is undefined and Ink prints plain text
 * (bold/inverse still mark the highlight).
 */
import { colorAllowed } from '../../src/text/index.js';

/** True when colours are allowed. */
export const COLOR_ENABLED = colorAllowed();

/** Named colours of the wizard. */
export const PALETTE = {
  key: 'cyan',
  string: 'green',
  number: 'yellow',
  boolean: 'magenta',
  comment: 'gray',
  accent: 'cyan',
  good: 'green',
  bad: 'red',
  warn: 'yellow',
  dim: 'gray',
  recommended: 'yellow',
} as const;

/** The colour for a role, or undefined without colour. */
export function tint(role: keyof typeof PALETTE, enabled = COLOR_ENABLED): string | undefined {
  return enabled ? PALETTE[role] : undefined;
}

/** The ZeRO picture's colours: one per model state, the traffic, the dim "another GPU's slice" dots. */
export const PICTURE_PALETTE = {
  params: 'cyan',
  grads: 'magenta',
  master: 'yellow',
  momentum: 'green',
  variance: 'blue',
  dim: 'gray',
  title: 'cyan',
  traffic: 'yellow',
} as const;
