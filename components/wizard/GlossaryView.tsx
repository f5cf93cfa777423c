/** The glossary over the body (`g` from a help screen or the picture, Ctrl+G under a text field). */
import type React from 'react';
import { Box, Text } from 'ink';
import { tint } from '../common/theme.js';
import { clip } from '../../src/text.js';
import { glossaryView, type GlossaryContext } from '../../src/wizard/glossary.js';

/** The rows the glossary's own title takes. */
export const GLOSSARY_TITLE_ROWS = 1;

/** The glossary window: its title with the position, then the lines (terms bold, table effects dimmed). */
export function GlossaryView(p: {
  width: number;
  height: number;
  top: number;
  at?: string | undefined;
  ctx: GlossaryContext;
}): React.JSX.Element {
  const v = glossaryView(p.width, Math.max(1, p.height - GLOSSARY_TITLE_ROWS), p.top, p.ctx, p.at);
  return (
    <Box flexDirection="column">
      <Text bold color={tint('accent')} wrap="truncate">
        {clip(`Glossary · ${v.position} · each word with the number it changes in the ZeRO table`, p.width)}
      </Text>
      {v.lines.map((l, i) => (
        <Text
          key={i}
          bold={l.role === 'term'}
          color={l.role === 'changes' ? tint('recommended') : undefined}
          wrap="truncate"
        >
          {l.text}
        </Text>
      ))}
    </Box>
  );
}
