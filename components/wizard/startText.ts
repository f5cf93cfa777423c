/**
 * The start screen as plain text: its entries, and the whole first frame as the wizard draws it. No
 * Ink here, so run.ts can paint this frame the moment the terminal is set up, while Ink and the views
 * load (about 0.2-0.3 s); Ink then draws the same frame over it. Keys typed meanwhile wait in the
 * terminal (raw mode is on) and are handled as soon as Ink reads them.
 */
import { clip, wrap } from '../common/text.js';
import { PALETTE, COLOR_ENABLED } from '../common/theme.js';
import { footerKeys } from './keymap.js';

/** The start screen's question. */
export const START_PROMPT = 'zerowiz: accelerate + DeepSpeed ZeRO, explained. What do you want to do?';
/** The header's detection part until detection answers. */
export const DETECTING = 'detecting GPUs…';
/** Rows kept free below the frame, so Ink never has to clear the whole screen. */
export const SPARE_ROWS = 1;

/** The start menu's entries. */
export function startItems(p: {
  presetCount: number;
  defaultConfigExists: boolean;
  defaultConfigPath: string;
  width: number;
}): { key: string; value: string; label: string }[] {
  return [
    { key: 'new', value: 'new', label: 'New setup: answer the questions (as `accelerate config`, with estimates)' },
    { key: 'preset', value: 'preset', label: `Start from a preset (${p.presetCount} found)…` },
    {
      key: 'default',
      value: 'default',
      label: clip(
        p.defaultConfigExists
          ? `Import accelerate's default config: ${p.defaultConfigPath}`
          : `Import accelerate's default config (none at ${p.defaultConfigPath})`,
        p.width - 2,
      ),
    },
    { key: 'path', value: 'path', label: 'Import another accelerate config file…' },
    { key: 'quit', value: 'quit', label: 'Quit' },
  ];
}

/** The footer's lines (at most two) for a key list. */
export function footerLines(keys: string, columns: number): string[] {
  return wrap(keys, columns).slice(0, 2);
}

/** Rows of the body between the header and the footer. */
export function bodyRows(rows: number, footerCount: number): number {
  return Math.max(4, rows - 1 - footerCount - SPARE_ROWS);
}

/** One row of the first frame: its text and how it is styled. */
interface Row {
  text: string;
  color?: keyof typeof PALETTE;
  bold?: boolean;
  /** The list marker, coloured apart from the (bold) label. */
  marker?: boolean;
}

function frameRows(
  columns: number,
  rows: number,
  p: { defaultConfigExists: boolean; defaultConfigPath: string },
): Row[] | null {
  if (START_PROMPT.length > columns || columns < 20) return null;
  const footer = footerLines(footerKeys({ textInput: false, screen: 'start' }), columns);
  const body = bodyRows(rows, footer.length);
  const items = startItems({ presetCount: 0, ...p, width: columns });
  if (items.length + 1 > body || items.some((i) => i.label.length + 2 > columns)) return null;
  const out: Row[] = [
    { text: clip(`zerowiz · start · ${DETECTING}`, columns), color: 'accent' },
    { text: START_PROMPT, bold: true },
  ];
  for (const [i, it] of items.entries())
    out.push({ text: `${i === 0 ? '❯ ' : '  '}${it.label}`, marker: true, bold: i === 0 });
  while (out.length < 1 + body) out.push({ text: '' });
  for (const l of footer) out.push({ text: l, color: 'dim' });
  return out;
}

/**
 * The first frame's lines as the wizard draws them (for tests), or null when this terminal size needs
 * wrapping that only Ink should do (then nothing is painted ahead).
 */
export function startFrameLines(
  columns: number,
  rows: number,
  p: { defaultConfigExists: boolean; defaultConfigPath: string },
): string[] | null {
  return frameRows(columns, rows, p)?.map((r) => r.text) ?? null;
}

const SGR: Record<string, string> = { cyan: '36', gray: '90', green: '32', red: '31', yellow: '33', magenta: '35' };

/** The first frame as terminal output: each row at its place, the cursor hidden and left at the top. */
export function paintStartFrame(
  columns: number,
  rows: number,
  p: { defaultConfigExists: boolean; defaultConfigPath: string },
  color = COLOR_ENABLED,
): string | null {
  const frame = frameRows(columns, rows, p);
  if (!frame) return null;
  const fg = (role: keyof typeof PALETTE | undefined, s: string) =>
    color && role ? `\x1b[${SGR[PALETTE[role]] ?? '39'}m${s}\x1b[39m` : s;
  const bold = (s: string) => `\x1b[1m${s}\x1b[22m`;
  let out = '\x1b[?25l';
  frame.forEach((r, i) => {
    if (r.text === '') return;
    let t: string;
    if (r.marker) {
      const mark = r.text.slice(0, 2);
      const label = r.text.slice(2);
      t = (r.bold ? fg('accent', mark) : mark) + (r.bold ? bold(label) : label);
    } else t = fg(r.color, r.bold ? bold(r.text) : r.text);
    out += `\x1b[${i + 1};1H${t}`;
  });
  return `${out}\x1b[H`;
}
