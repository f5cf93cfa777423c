/**
 * The ZeRO picture over the body (`p` on the ZeRO question): what each GPU and the CPU (or NVMe) hold of the
 * highlighted mode, drawn by src/wizard/picture.ts from the table's own estimate (tradeoff.ts pictureOf). ↑↓
 * move the highlight here too, so the picture follows it; Enter chooses the mode.
 */
import type React from 'react';
import { Box, Text } from 'ink';
import { useSurface } from '../common/keys.js';
import { COLOR_ENABLED, PICTURE_PALETTE } from '../common/theme.js';
import { drawPicture, type Segment } from '../../src/wizard/picture.js';
import { pictureOf, type Tradeoff } from '../../src/wizard/tradeoff.js';
import { wrap } from '../../src/text.js';
import { modeItems } from '../../src/wizard/mode-table.js';

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
  const b = pictureOf(p.tradeoff, keys[at] ?? p.rowKey);
  if (!b) {
    return (
      <Box flexDirection="column">
        {wrap(`The picture needs the estimate: ${p.tradeoff.reason} (p or Esc closes this)`, p.width).map((l, i) => (
          <Text key={i}>{l}</Text>
        ))}
      </Box>
    );
  }
  const color = p.color ?? COLOR_ENABLED;
  const picture = drawPicture(b, { width: p.width, height: p.height, color });
  // One text node per run of one role: Ink's cost per frame grows with the nodes and styled characters.
  return (
    <Box flexDirection="column">
      {picture.lines.map((segments, i) => (
        <Text key={i} wrap="truncate">
          {runs(segments).map((s, j) =>
            s.role === null ? (
              s.text
            ) : (
              <Text key={j} color={PICTURE_PALETTE[s.role]} bold={s.role === 'title'}>
                {s.text}
              </Text>
            ),
          )}
        </Text>
      ))}
    </Box>
  );
}

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
