/** The face of src/text/: what other folders may use of it (an architecture test holds every import to it). */
export { RunError, UsageError, describeError, describeWriteError, fileError, isOsError } from './errors.js';
export { ENV_NUMBERS, envNumber, envNumbersProblem } from './env.js';
export type { EnvNumberName } from './env.js';
export {
  formatByteRate,
  formatBytes,
  formatBytesCompact,
  formatBytesExact,
  formatBytesShort,
  formatCap,
  decimalSizeNote,
  formatClock,
  formatCount,
  formatCountExact,
  formatDuration,
  formatSeconds,
  formatGiB,
  formatUtcMinute,
  formatTally,
  formatTallyRate,
  gibFigure,
  gibFigureShort,
  plural,
  timestamp,
  wholeGiBUp,
} from './format.js';
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
  redactUrl,
  restoreSecrets,
  secretEnv,
  secretGuards,
  secretPrint,
  secretsIn,
} from './redact.js';
export { NO_KEY, ctrlKey, firstBinding, keyTableMarkdown, plainKey, pressesFor } from './keytable.js';
export type { KeyBinding, KeyPress, KeyRow } from './keytable.js';
export { memoLast } from './memo.js';
export type { Memo } from './memo.js';
export { NearMiss, nearMissHint, orList } from './suggest.js';
export { bar, clip, colorAllowed, fitHints, padEnd, padStart, softWrap, wrap } from './text.js';
export { parseBytes, parseCount, parseInteger } from './units.js';
