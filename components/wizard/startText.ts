/**
 * The start screen as plain text: its entries, and the whole first frame as the wizard draws it. No
 * Ink here, so run.ts can paint this frame the moment the terminal is set up, while Ink and the views
 * load (about 0.2-0.3 s); Ink then draws the same frame over it. Keys typed meanwhile wait in the
 * terminal (raw mode is on) and are handled as soon as Ink reads them.
 */
import { clip } from '../../src/text/index.js';
import { START_STACK, hintLines } from '../../src/wizard/index.js';
import { DETECTING, bodyRows } from '../../src/wizard/index.js';
import { PALETTE, COLOR_ENABLED } from '../common/index.js';

/** The start screen's question. */
export const START_PROMPT = 'zerowiz: accelerate + DeepSpeed ZeRO, explained. What do you want to do?';

/** The start menu's entries. */
export function startItems(p: {
  /** The presets found, or null while they are still being read (no count is shown then, never a 0). */
  presetCount: number | null;
  defaultConfigExists: boolean;
  defaultConfigPath: string;
  width: number;
}): { key: string; value: string; label: string }[] {
  return [
    { key: 'new', value: 'new', label: 'New setup: answer the questions (as `accelerate config`, with estimates)' },
    {
      key: 'preset',
      value: 'preset',
      label: `Start from a preset${p.presetCount === null ? '' : ` (${p.presetCount} found)`}…`,
    },
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
  selected = 0,
): Row[] | null {
  if (START_PROMPT.length > columns || columns < 20) return null;
  const footer = hintLines(START_STACK, columns);
  const body = bodyRows(rows, footer.length);
  const items = startItems({ presetCount: null, ...p, width: columns });
  if (items.length + 1 > body || items.some((i) => i.label.length + 2 > columns)) return null;
  const out: Row[] = [
    { text: clip(`zerowiz · start · ${DETECTING}`, columns), color: 'accent' },
    { text: START_PROMPT, bold: true },
  ];
  for (const [i, it] of items.entries())
    out.push({ text: `${i === selected ? '❯ ' : '  '}${it.label}`, marker: true, bold: i === selected });
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
  selected = 0,
): string[] | null {
  return frameRows(columns, rows, p, selected)?.map((r) => r.text) ?? null;
}

const SGR: Record<string, string> = { cyan: '36', gray: '90', green: '32', red: '31', yellow: '33', magenta: '35' };

/**
 * The first frame as terminal output: each row at its place (cleared first, so it can be painted again over
 * itself with another entry highlighted), the cursor hidden and left at the top.
 */
export function paintStartFrame(
  columns: number,
  rows: number,
  p: { defaultConfigExists: boolean; defaultConfigPath: string },
  color = COLOR_ENABLED,
  selected = 0,
): string | null {
  const frame = frameRows(columns, rows, p, selected);
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
    out += `\x1b[${i + 1};1H\x1b[2K${t}`;
  });
  return `${out}\x1b[H`;
}

/** The number of entries of the start menu (the painted list wraps around them as the Ink list does). */
export const START_ITEM_COUNT = startItems({
  presetCount: null,
  defaultConfigExists: false,
  defaultConfigPath: '',
  width: 80,
}).length;

/** What the early keys did: the highlighted entry, and the input they left for the wizard (null: none). */
export interface EarlyKeys {
  index: number;
  rest: Buffer | null;
}

const UP = ['\x1b[A', '\x1bOA', 'k'];
const DOWN = ['\x1b[B', '\x1bOB', 'j'];

/**
 * The start menu's ↑/↓ (and k/j) answered while Ink loads, on the painted frame: the highlight moves at once
 * instead of after Ink's ~150 ms. The first key of any other kind (Enter, a digit, Ctrl+C) ends it: that
 * key and everything after it wait, unread, for the wizard, which starts with the list on `index`.
 */
export function earlyStartKeys(stdin: NodeJS.ReadStream, paint: (index: number) => void): { stop(): EarlyKeys } {
  let index = 0;
  let rest: Buffer | null = null;
  const take = (buf: Buffer) => {
    if (rest) {
      rest = Buffer.concat([rest, buf]);
      return;
    }
    let text = buf.toString('latin1');
    let moved = false;
    for (;;) {
      const up = UP.find((k) => text.startsWith(k));
      const down = DOWN.find((k) => text.startsWith(k));
      if (!up && !down) break;
      index = (index + (up ? -1 : 1) + START_ITEM_COUNT) % START_ITEM_COUNT;
      text = text.slice((up ?? down)!.length);
      moved = true;
    }
    if (text !== '') rest = Buffer.from(text, 'latin1');
    if (moved) paint(index);
  };
  // Read in paused mode ('readable'), as Ink does: when this listener goes, the terminal stays read (the
  // process stays alive) and whatever arrives meanwhile waits in the stream for Ink's own listener.
  const onReadable = () => {
    for (let chunk = stdin.read(); chunk !== null; chunk = stdin.read())
      take(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  };
  stdin.on('readable', onReadable);
  return {
    stop() {
      stdin.off('readable', onReadable);
      return { index, rest };
    },
  };
}
