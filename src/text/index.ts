/** The face of src/text/: what other folders may use of it (an architecture test holds every import to it). */
export { RunError, UsageError, describeError, describeWriteError, fileError, isOsError } from './errors.js';
export { formatDuration, formatUtcMinute, plural } from './format.js';
export { BLOCK_NEEDS_DISPLAY_CLEAN_RE, displayLine, hasControl, printable, printableLines } from './printable.js';
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
export { NearMiss, nearMissHint, orList } from './suggest.js';
export { bar, clip, colorAllowed, fitHints, padEnd, padStart, softWrap, wrap } from './text.js';
export {
  formatBytes,
  formatBytesExact,
  formatBytesShort,
  formatCount,
  formatCountExact,
  decimalSizeNote,
  parseBytes,
  parseCount,
  parseInteger,
} from './units.js';
