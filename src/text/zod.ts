/**
 * Every schema in src/ uses zod/mini (the same checks as the classic API; esbuild keeps only the parts
 * used, ~12 KB instead of ~450 KB to compile). Importing this module once gives its messages in English,
 * so a problem reads "Unrecognized key: 'colour'" rather than "Invalid input". Import zod/mini itself
 * with `import * as z from 'zod/mini'` next to it: re-exporting the namespace would defeat tree shaking.
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());
