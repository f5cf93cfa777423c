/** The face of src/text/: what other folders may use of it (an architecture test holds every import to it). */
export { RunError, UsageError, describeError, describeWriteError, fileError, isOsError } from './errors.js';
export { formatDuration } from './format.js';
export { MAX_JSON_DEPTH, parseJsonBounded } from './json.js';
export type { BoundedJson } from './json.js';
export {
  BLOCK_NEEDS_DISPLAY_CLEAN_RE,
  displayLine,
  hasControl,
  printable,
  printableLines,
  printableText,
} from './printable.js';
export { shellArgs, shellJoin, shellWord } from './quote.js';
export {
  redactArgv,
  redactRunJson,
  redactSetup,
  restoreSecrets,
  secretEnv,
  secretGuards,
  secretsIn,
} from './redact.js';
export { NearMiss, nearMissHint, orList } from './suggest.js';
export { bar, clip, colorAllowed, fitHints, padEnd, padStart, softWrap, wrap } from './text.js';
export {
  formatBytes,
  formatBytesExact,
  formatBytesShort,
  formatCount,
  formatCountExact,
  parseBytes,
  parseCount,
  parseInteger,
} from './units.js';
