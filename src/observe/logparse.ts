/**
 * Reading training progress out of log text: tqdm bars (the shape accelerate/DiffSynth scripts print,
 * `{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]`,
 * and the unknown-total shape `{desc}: {n_fmt}{unit} [{elapsed}, {rate_fmt}{postfix}]`) and loss values
 * (`loss=0.12` in a tqdm postfix, `'loss': 0.12` in a HF-style dict, `loss: 0.12` in a log line).
 */

/** One tqdm update, parsed. */
export interface Progress {
  /** The bar's description (`Steps`, `Epoch 1`), '' if none. */
  desc: string;
  /** 0..100, or null when the total is unknown. */
  percent: number | null;
  n: number;
  total: number | null;
  /** Elapsed seconds, as tqdm printed it. */
  elapsedS: number | null;
  /** Remaining seconds (tqdm's ETA), null when unknown (`?`). */
  remainingS: number | null;
  /** Units per second (converted from `s/it` when tqdm prints that), null when unknown (`?it/s`). */
  ratePerS: number | null;
  /** The rate as tqdm printed it (`6.00it/s`, `12.34s/it`). */
  rateText: string;
  /** The postfix after the rate, without the leading comma (`loss=0.1234, lr=1e-4`). */
  postfix: string;
  /** The loss in the postfix, if any. */
  loss: number | null;
  /** The update as printed (one `\r` segment). */
  text: string;
}

const SCALE: Record<string, number> = {
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Z: 1e21,
  Y: 1e24,
};
const NUM = String.raw`\d+(?:\.\d+)?(?:[eE][-+]?\d+)?[kKMGTPEZY]?`;

// Known total: "Steps:  3%|▎         | 30/1000 [00:05<02:41,  6.00it/s, loss=0.1234]"
const BAR_RE = new RegExp(
  String.raw`^(?<desc>.*?)(?<pct>\d{1,3})%\|(?<bar>[^|]*)\|\s*(?<n>${NUM})\/(?<total>${NUM})\s*\[(?<elapsed>[^<\]]*)<(?<remaining>[^,\]]*),\s*(?<rate>[^,\]]*?)\s*(?:,\s*(?<postfix>[^\]]*))?\]\s*$`,
);
// A bar with more text after it: a line written while the bar was the open line (stdout and stderr in one log).
const BAR_HEAD_RE = new RegExp(BAR_RE.source.replace(String.raw`\]\s*$`, String.raw`\]`));
// Unknown total: "Steps: 123it [00:01, 99.50it/s, loss=0.1]"
const OPEN_RE = new RegExp(
  String.raw`^(?<desc>.*?)(?<n>${NUM})(?<unit>[A-Za-z]*) \[(?<elapsed>[\d:d ]+),\s*(?<rate>(?:\?|${NUM})\s*[A-Za-z]*\/[A-Za-z]+)\s*(?:,\s*(?<postfix>[^\]]*))?\]\s*$`,
);

/** A tqdm count with tqdm's unit_scale suffix (`1.23k` -> 1230). */
export function parseScaled(text: string): number {
  const m = /^(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)([kKMGTPEZY]?)$/.exec(text.trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * (SCALE[m[2] ?? ''] ?? 1);
}

/** tqdm's `format_interval` text (`05:07`, `1:02:03`, `2d 1:02:03`) in seconds; null for `?`. */
export function parseInterval(text: string): number | null {
  const t = text.trim();
  const m = /^(?:(\d+)d\s*)?(?:(\d+):)?(\d+):(\d{2})$/.exec(t);
  if (!m) return null;
  return Number(m[1] ?? 0) * 86_400 + Number(m[2] ?? 0) * 3600 + Number(m[3]) * 60 + Number(m[4]);
}

/** tqdm's rate (`6.00it/s`, `1.2kit/s`, `12.34s/it`, `?it/s`) as units per second. */
export function parseRate(text: string): number | null {
  const t = text.trim();
  let m = /^(\d+(?:\.\d+)?)([kKMGTPEZY]?)[A-Za-z]*\/s$/.exec(t);
  if (m) return Number(m[1]) * (SCALE[m[2] ?? ''] ?? 1);
  m = /^(\d+(?:\.\d+)?)s\/[A-Za-z]+$/.exec(t);
  if (m) {
    const v = Number(m[1]);
    return v > 0 ? 1 / v : null;
  }
  return null;
}

const TRAIN_PREFIX_RE = /train[_ ]/iy;
// kohya's sd-scripts and musubi-tuner put the moving average in the tqdm postfix as `avr_loss=`.
const AVERAGE_PREFIX_RE = /av[rg]_/iy;

function isWordChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/**
 * The loss value in a line, or null. `loss_scale`, `val_loss` and the like are not the training loss;
 * `train_loss`, `train loss` and kohya's `avr_loss` are. The regex is only tried where `oss` occurs, anchored
 * there: a log line costs an indexOf, not a regex scan.
 */
export function parseLoss(line: string): number | null {
  for (let j = line.indexOf('oss'); j !== -1; j = line.indexOf('oss', j + 3)) {
    const at = j - 1; // where `loss` starts
    if (at < 0) continue;
    const l = line.charCodeAt(at);
    if (l !== 0x6c && l !== 0x4c) continue; // l or L
    // Not part of a longer word, unless that word is `train_` / `train ` / `avr_`.
    if (at > 0 && isWordChar(line.charCodeAt(at - 1)) && !prefixedBy(line, at, TRAIN_PREFIX_RE, 6)) {
      if (!prefixedBy(line, at, AVERAGE_PREFIX_RE, 4)) continue;
    }
    const v = lossValueAt(line, at + 4);
    if (v !== null) return v;
  }
  return null;
}

/**
 * Whether `text` may hold a line whose parseLoss is NaN or infinite: what such a loss must look like (`oss`,
 * then lossValueAt's quote, spaces, `=` or `:`, spaces, quote, sign and `nan` or `inf`), looser in case and
 * spaces. One scan for a run of lines; only a run it matches needs parseLoss line by line (when another source
 * gives the loss, a log line's finite loss is not taken, and its NaN still raises the alert).
 */
export function mayHoldNonFiniteLoss(text: string): boolean {
  return NON_FINITE_LOSS_RE.test(text);
}
const NON_FINITE_LOSS_RE = /oss['"]?\s*[=:]\s*['"]?[-+]?(?:[nN][aA][nN]|[iI][nN][fF])/;

function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0;
}

/** Whether `line` has `word` (lower case) at `i`, in any case. */
function wordAt(line: string, i: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) if ((line.charCodeAt(i + k) | 0x20) !== word.charCodeAt(k)) return false;
  return true;
}

/**
 * What follows `loss` at `i`: an optional quote, `=` or `:` (spaces around it), an optional quote, then the
 * value, not followed by a word character or a dot: a decimal (`0.1`, `.5`, `1.`, `2.5e-3`, signed) or Python's
 * non-finite floats (`nan`, `inf`, `-inf`, any case); null when it is not that. Scanned by hand: it runs for
 * every log line that says `loss`.
 */
function lossValueAt(line: string, start: number): number | null {
  let i = start;
  const n = line.length;
  let c = line.charCodeAt(i);
  if (c === 0x27 || c === 0x22) c = line.charCodeAt(++i);
  while (isSpace(c)) c = line.charCodeAt(++i);
  if (c !== 0x3d && c !== 0x3a) return null; // = or :
  c = line.charCodeAt(++i);
  while (isSpace(c)) c = line.charCodeAt(++i);
  if (c === 0x27 || c === 0x22) c = line.charCodeAt(++i);
  const from = i;
  let neg = false;
  if (c === 0x2d || c === 0x2b) {
    neg = c === 0x2d;
    c = line.charCodeAt(++i);
  }
  let value: number;
  if (wordAt(line, i, 'nan') || wordAt(line, i, 'inf')) {
    value = (line.charCodeAt(i) | 0x20) === 0x6e ? Number.NaN : neg ? -Infinity : Infinity;
    i += 3;
  } else {
    let digits = 0;
    while (c >= 0x30 && c <= 0x39) {
      digits++;
      c = line.charCodeAt(++i);
    }
    if (c === 0x2e) {
      c = line.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39) {
        digits++;
        c = line.charCodeAt(++i);
      }
    }
    if (digits === 0) return null;
    if (c === 0x65 || c === 0x45) {
      let k = i + 1;
      let e = line.charCodeAt(k);
      if (e === 0x2d || e === 0x2b) e = line.charCodeAt(++k);
      if (!(e >= 0x30 && e <= 0x39)) return null; // `1e` then a word character: not a number
      while (e >= 0x30 && e <= 0x39) e = line.charCodeAt(++k);
      i = k;
    }
    value = decimal(line.slice(from, i));
  }
  if (i < n) {
    const next = line.charCodeAt(i);
    if (isWordChar(next) || next === 0x2e) return null;
  }
  return value;
}

/** Whether the `len` characters before `at` are the word `re` matches (itself not the end of a longer word). */
function prefixedBy(line: string, at: number, re: RegExp, len: number): boolean {
  const t = at - len;
  if (t < 0) return false;
  re.lastIndex = t;
  return re.test(line) && !(t > 0 && isWordChar(line.charCodeAt(t - 1)));
}

const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
  1e21, 1e22,
];

/**
 * `Number(text)` for a decimal the loss regex matched, without the string-to-double conversion when the
 * digits fit: at most 15 significant digits and a power of ten up to 1e22 are exact doubles, so one
 * multiplication or division rounds correctly (Clinger's fast path). Anything else goes to Number().
 */
export function decimal(text: string): number {
  let i = 0;
  let neg = false;
  const c0 = text.charCodeAt(0);
  if (c0 === 0x2d || c0 === 0x2b) {
    neg = c0 === 0x2d;
    i = 1;
  }
  let mant = 0;
  let digits = 0;
  let scale = 0; // digits after the point
  let seenPoint = false;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      seenPoint = true;
      continue;
    }
    const d = c - 0x30;
    if (d < 0 || d > 9) break;
    if (mant !== 0 || d !== 0) digits++;
    mant = mant * 10 + d;
    if (seenPoint) scale++;
  }
  let exp = 0;
  if (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x65 && c !== 0x45) return Number(text);
    const e = Number(text.slice(i + 1));
    if (!Number.isInteger(e)) return Number(text);
    exp = e;
  }
  const p = exp - scale;
  if (digits > 15 || p < -22 || p > 22) return Number(text);
  const v = p >= 0 ? mant * POW10[p]! : mant / POW10[-p]!;
  return neg ? -v : v;
}

/**
 * Whether a UTF-16 unit is white space as String.prototype.trim and a regex's `\s` see it (the bars' regexes
 * allow any after the closing `]`, and stream mode compares bar lines trimmed). Spaces answer first.
 */
function isTrimSpace(c: number): boolean {
  if (c === 0x20) return true;
  if (c < 0xa0) return c >= 0x09 && c <= 0x0d;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * Whether a finished line can be a tqdm bar at all: both shapes end with `]` and then only white space (a
 * log line that starts with a `[timestamp]` does not). A test of its last characters, before any parse.
 */
export function mayBeProgress(text: string): boolean {
  let k = text.length - 1;
  while (k >= 0 && isTrimSpace(text.charCodeAt(k))) k--;
  return k > 0 && text.charCodeAt(k) === 0x5d;
}

/**
 * Whether any line of `text` (lines joined by `\n`) passes mayBeProgress: the end of each line is tested,
 * found with indexOf, nothing sliced.
 */
export function mayHoldProgress(text: string): boolean {
  let s = 0;
  for (;;) {
    const nl = text.indexOf('\n', s);
    let k = (nl === -1 ? text.length : nl) - 1;
    while (k >= s && isTrimSpace(text.charCodeAt(k))) k--;
    if (k > s && text.charCodeAt(k) === 0x5d) return true;
    if (nl === -1) return false;
    s = nl + 1;
  }
}

/**
 * A finished line that is a tqdm bar with other text glued after it: in a log where stdout and stderr are one
 * stream (as a terminal shows them), a line printed while tqdm's bar was the open line continues that line
 * (`  5%|▌   | 5/100 [00:00<00:02, 43.26it/s][2026-... step=10`). Returns the bar and the line that was
 * printed, or null when `text` is not such a line.
 */
export function splitGluedBar(text: string): { bar: string; rest: string } | null {
  if (!text.includes('%|')) return null;
  const m = BAR_HEAD_RE.exec(text);
  if (!m || m[0].length >= text.length) return null;
  const rest = text.slice(m[0].length);
  return rest.trim() === '' ? null : { bar: m[0], rest };
}

/** Parses one tqdm update (one `\r` segment, ANSI already stripped); null if the text is not a bar. */
export function parseProgress(segment: string): Progress | null {
  if (!segment.includes('[')) return null;
  if (segment.includes('%|')) {
    const m = BAR_RE.exec(segment);
    if (!m) return null;
    const g = m.groups!;
    const n = parseScaled(g.n!);
    const total = parseScaled(g.total!);
    if (Number.isNaN(n) || Number.isNaN(total)) return null;
    const postfix = (g.postfix ?? '').trim();
    return {
      desc: cleanDesc(g.desc!),
      percent: Number(g.pct),
      n,
      total,
      elapsedS: parseInterval(g.elapsed!),
      remainingS: parseInterval(g.remaining!),
      ratePerS: parseRate(g.rate!),
      rateText: g.rate!.trim(),
      postfix,
      loss: postfix === '' ? null : parseLoss(postfix),
      text: segment,
    };
  }
  if (!segment.includes('/')) return null;
  const m = OPEN_RE.exec(segment);
  if (!m) return null;
  const g = m.groups!;
  const n = parseScaled(g.n!);
  if (Number.isNaN(n)) return null;
  const postfix = (g.postfix ?? '').trim();
  return {
    desc: cleanDesc(g.desc!),
    percent: null,
    n,
    total: null,
    elapsedS: parseInterval(g.elapsed!),
    remainingS: null,
    ratePerS: parseRate(g.rate!),
    rateText: g.rate!.trim(),
    postfix,
    loss: postfix === '' ? null : parseLoss(postfix),
    text: segment,
  };
}

function cleanDesc(d: string): string {
  return d.trim().replace(/:$/, '').trim();
}

/** A loss as the pane and stream mode show it: 4 decimals, exponent form for tiny or huge values, `nan`. */
export function formatLoss(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return Math.abs(v) >= 1000 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : v.toFixed(4);
}

/**
 * `0.1234 (min 0.1011)`: the last loss and the lowest, the lowest left out when it is the last. `last` may be
 * run.json's text for a non-finite loss (`nan`, `inf`, `-inf`).
 */
export function formatLossPair(last: number | string, min: number | null): string {
  const lastText = typeof last === 'number' ? formatLoss(last) : last;
  return min === null || min === last ? lastText : `${lastText} (min ${formatLoss(min)})`;
}

const SPARK = '▁▂▃▄▅▆▇█';

/** A one-line sparkline of the last `width` values (NaN/infinite values show as a gap). */
export function sparkline(values: readonly number[], width: number): string {
  const v = values.slice(-width);
  const finite = v.filter((x) => Number.isFinite(x));
  if (finite.length === 0) return '';
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of finite) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  const span = hi - lo;
  let out = '';
  for (const x of v) {
    if (!Number.isFinite(x)) out += ' ';
    else out += SPARK[span === 0 ? 3 : Math.min(7, Math.floor(((x - lo) / span) * 8))];
  }
  return out;
}
