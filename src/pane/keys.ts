/**
 * Raw terminal input to key presses, for the log pane (which reads stdin itself instead of through
 * Ink). One read can hold several keys (typed fast, pasted, or queued behind a busy moment): each is
 * reported on its own, in order, with the same `(input, key)` shape as Ink's useInput.
 */
import type { KeyInfo } from './state.js';

/** A key as the pane handles it: printable text in `input`, special keys as flags (input ''). */
export interface KeyPress {
  input: string;
  key: KeyInfo & { meta?: boolean };
}

// CSI (ESC [) and SS3 (ESC O) finals the pane knows; the rest are ignored.
const CSI_LETTER: Record<string, KeyInfo> = {
  A: { upArrow: true },
  B: { downArrow: true },
  H: { home: true },
  F: { end: true },
  Z: { tab: true, shift: true },
};
const CSI_TILDE: Record<string, KeyInfo> = {
  '1': { home: true },
  '7': { home: true },
  '4': { end: true },
  '8': { end: true },
  '5': { pageUp: true },
  '6': { pageDown: true },
  '3': { delete: true },
};

/** The key presses in one read from a raw-mode terminal. */
export function parseKeys(data: string): KeyPress[] {
  const out: KeyPress[] = [];
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
          out.push({ input: '', key: { escape: true } });
          i += 1;
          continue;
        }
        const params = data.slice(i + 2, j);
        const final = data[j]!;
        let key: KeyInfo | undefined;
        if (final === '~') key = CSI_TILDE[params.split(';')[0]!];
        else if (/[a-zA-Z]/.test(final)) {
          key = CSI_LETTER[final];
          // Modifier parameter (e.g. ESC [1;2A): 2 = shift.
          const mod = Number(params.split(';')[1] ?? 1) - 1;
          if (key && mod > 0 && mod & 1) key = { ...key, shift: true };
          if (key && mod > 0 && mod & 4) key = { ...key, ctrl: true };
        }
        out.push({ input: '', key: key ?? {} });
        i = j + 1;
        continue;
      }
      if (next === undefined || next === '\x1b') {
        out.push({ input: '', key: { escape: true } });
        i += 1;
        continue;
      }
      // ESC + a key: Alt/Meta held.
      const cp = data.codePointAt(i + 1)!;
      const ch = String.fromCodePoint(cp);
      out.push({ input: ch, key: { meta: true } });
      i += 1 + ch.length;
      continue;
    }
    const code = c.charCodeAt(0);
    if (c === '\r' || c === '\n') out.push({ input: '', key: { return: true } });
    else if (c === '\t') out.push({ input: '', key: { tab: true } });
    else if (c === '\x7f' || c === '\b') out.push({ input: '', key: { backspace: true } });
    else if (code < 0x20) out.push({ input: String.fromCharCode(code + 0x60), key: { ctrl: true } });
    else {
      const cp = data.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      out.push({ input: ch, key: {} });
      i += ch.length;
      continue;
    }
    i += 1;
  }
  return out;
}
