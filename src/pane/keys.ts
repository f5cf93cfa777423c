/**
 * Raw terminal input to key presses, for the log pane (which reads stdin itself instead of through
 * Ink). One read can hold several keys (typed fast, pasted, or queued behind a busy moment): each is
 * reported on its own, in order, with the same `(input, key)` shape as Ink's useInput.
 */
import type { KeyPress } from '../text/index.js';

// CSI (ESC [) and SS3 (ESC O) finals the pane knows; the rest are ignored.
const CSI_LETTER: Record<string, KeyPress> = {
  A: { upArrow: true },
  B: { downArrow: true },
  H: { home: true },
  F: { end: true },
  Z: { tab: true, shift: true },
};
const CSI_TILDE: Record<string, KeyPress> = {
  '1': { home: true },
  '7': { home: true },
  '4': { end: true },
  '8': { end: true },
  '5': { pageUp: true },
  '6': { pageDown: true },
  '3': { delete: true },
};

/**
 * The key presses in one read from a raw-mode terminal, each as `[input, key]` (printable text in `input`, special
 * keys as flags with input ''), as the wizard's keys come from Ink.
 */
export function parseKeys(data: string): [string, KeyPress][] {
  const out: [string, KeyPress][] = [];
  let i = 0;
  while (i < data.length) {
    const c = data[i]!;
    if (c === '\x1b') {
      const next = data[i + 1];
      if (next === '[' || next === 'O') {
        // ESC [ params final, or ESC O final.
        let j = i + 2;
        while (j < data.length && /[0-9;?]/.test(data[j]!)) j++;
        if (j >= data.length) {
          out.push(['', { escape: true }]);
          i += 1;
          continue;
        }
        const params = data.slice(i + 2, j);
        const final = data[j]!;
        let key: KeyPress | undefined;
        if (final === '~') key = CSI_TILDE[params.split(';')[0]!];
        else if (/[a-zA-Z]/.test(final)) {
          key = CSI_LETTER[final];
          // Modifier parameter (e.g. ESC [1;2A): 2 = shift.
          const mod = Number(params.split(';')[1] ?? 1) - 1;
          if (key && mod > 0 && mod & 1) key = { ...key, shift: true };
          if (key && mod > 0 && mod & 4) key = { ...key, ctrl: true };
        }
        out.push(['', key ?? {}]);
        i = j + 1;
        continue;
      }
      if (next === undefined || next === '\x1b') {
        out.push(['', { escape: true }]);
        i += 1;
        continue;
      }
      // ESC + a key: Alt/Meta held.
      const cp = data.codePointAt(i + 1)!;
      const ch = String.fromCodePoint(cp);
      out.push([ch, { meta: true }]);
      i += 1 + ch.length;
      continue;
    }
    const code = c.charCodeAt(0);
    if (c === '\r' || c === '\n') out.push(['', { return: true }]);
    else if (c === '\t') out.push(['', { tab: true }]);
    else if (c === '\x7f' || c === '\b') out.push(['', { backspace: true }]);
    else if (code < 0x20) out.push([String.fromCharCode(code + 0x60), { ctrl: true }]);
    else {
      const cp = data.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      out.push([ch, {}]);
      i += ch.length;
      continue;
    }
    i += 1;
  }
  return out;
}
