/**
 * The ZeRO picture over the body (`p` on the ZeRO question): what each GPU and the CPU (or NVMe) hold of the
 * highlighted mode, drawn by src/wizard/picture.ts from the table's own estimate (tradeoff.ts pictureOf). ↑↓
 * move the highlight here too, so the picture follows it; Enter chooses the mode.
 */
import type React from 'react';
import { memo } from 'react';
import { Box, Text } from 'ink';
import { useSurface } from '../common/index.js';
import { COLOR_ENABLED, PICTURE_PALETTE } from '../common/index.js';
import { drawPicture, type Segment } from '../../src/wizard/index.js';
import { pictureOf, type Tradeoff } from '../../src/wizard/index.js';
import { wrap } from '../../src/text/index.js';
import { modeItems } from '../../src/wizard/index.js';

/** Props of the picture. */
export interface PictureViewProps {
  tradeoff: Tradeoff;
  /** The highlighted row of the ZeRO table. */
  rowKey: string;
  width: number;
  height: number;
  isActive: boolean;
  color?: boolean;
  onMove: (key: string) => void;
  onChoose: (key: string) => void;
}

/** The picture, coloured by role (plain glyphs without colour). */
export function PictureView(p: PictureViewProps): React.JSX.Element {
  const keys = modeItems(p.tradeoff).map((i) => i.key);
  const at = Math.max(0, keys.indexOf(p.rowKey));
  useSurface(
    'list',
    (command, input) => {
      if (keys.length === 0) return 'unhandled';
      if (command === 'up' || command === 'down') {
        p.onMove(keys[(at + (command === 'up' ? -1 : 1) + keys.length) % keys.length]!);
        return 'handled';
      }
      if (command === 'choose') {
        p.onChoose(keys[at]!);
        return 'handled';
      }
      if (command === 'pick' && Number(input) <= keys.length) {
        p.onChoose(keys[Number(input) - 1]!);
        return 'handled';
      }
      return 'unhandled';
    },
    { isActive: p.isActive },
  );
  const color = p.color ?? COLOR_ENABLED;
  const lines = pictureLines(p.tradeoff, keys[at] ?? p.rowKey, p.width, p.height, color);
  if (!lines) {
    return (
      <Box flexDirection="column">
        {wrap(`The picture needs the estimate: ${p.tradeoff.reason} (p or Esc closes this)`, p.width).map((l, i) => (
          <Text key={i}>{l}</Text>
        ))}
      </Box>
    );
  }
  return (
    <Box flexDirection="column">
      {lines.map((runs, i) => (
        <PictureLine key={i} runs={runs} />
      ))}
    </Box>
  );
}

/** Pictures drawn, per table (a new table takes its entries with it) and row and size: ↑↓ back to a row draws nothing. */
const drawn = new WeakMap<Tradeoff, Map<string, Segment[][] | null>>();

/** The picture of a row as runs of one role per line, memoised. */
function pictureLines(t: Tradeoff, key: string, width: number, height: number, color: boolean): Segment[][] | null {
  let byRow = drawn.get(t);
  if (!byRow) {
    byRow = new Map();
    drawn.set(t, byRow);
  }
  const id = `${key}\0${width}\0${height}\0${color}`;
  let lines = byRow.get(id);
  if (lines === undefined) {
    const b = pictureOf(t, key);
    lines = b ? drawPicture(b, { width, height, color }).lines.map(runs) : null;
    byRow.set(id, lines);
  }
  return lines;
}

/**
 * One line of the picture: one text node per run of one role (Ink's cost per frame grows with the nodes and styled
 * characters). Memoised on its runs' text and roles: the lines two rows' pictures share skip React's work.
 */
const PictureLine = memo(
  function PictureLine({ runs }: { runs: readonly Segment[] }): React.JSX.Element {
    return (
      <Text wrap="truncate">
        {runs.map((s, j) =>
          s.role === null ? (
            s.text
          ) : (
            <Text key={j} color={PICTURE_PALETTE[s.role]} bold={s.role === 'title'}>
              {s.text}
            </Text>
          ),
        )}
      </Text>
    );
  },
  (a, b) =>
    a.runs.length === b.runs.length && a.runs.every((s, i) => s.text === b.runs[i]?.text && s.role === b.runs[i]?.role),
);

/** Adjacent segments of the same role joined. */
function runs(segments: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if (last && last.role === s.role) last.text += s.text;
    else out.push({ ...s });
  }
  return out;
}
