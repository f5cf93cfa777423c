/**
 * zod, as every schema in src/ uses it: zod/mini (the same checks as the classic API at ~14 KB of bundle
 * instead of ~450 KB to compile at start-up) with the English messages, so a problem reads
 * "Unrecognized key: 'colour'" rather than "Invalid input".
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

z.config(en());

export { z };
