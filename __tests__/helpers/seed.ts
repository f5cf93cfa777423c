/** The seed document's facts the tests compare against. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as shellParse } from 'shell-quote';
import { SEED_DIR } from './paths.js';

/** The seed document's two `accelerate launch` commands, as argv after `accelerate`. */
export function seedCommands(): string[][] {
  const text = readFileSync(join(SEED_DIR, '000_727647c9fffbab57.txt'), 'utf8');
  const cmds = [...text.matchAll(/^accelerate launch[\s\S]*?(?=\n\n)/gm)].map((m) => m[0].replace(/\\\n/g, ' '));
  return cmds.map((c) => (shellParse(c) as string[]).slice(1));
}
