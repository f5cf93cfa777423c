/** The glossary over the body (`g` from a help screen or the picture, Ctrl+G under a text field). */
import type React from 'react';
import { Box, Text } from 'ink';
import { tint } from '../common/index.js';
import { clip } from '../../src/text/index.js';
import type { GlossaryView as GlossaryWindow } from '../../src/wizard/index.js';

/**
 * The glossary window: its title with the position, then the lines (terms bold, table effects dimmed). The
 * app builds the window (glossary.ts glossaryView, for the body's rows less GLOSSARY_TITLE_ROWS): its keys
 * need its top and length too.
 */
export function GlossaryView({ width, view: v }: { width: number; view: GlossaryWindow }): React.JSX.Element {
  return (
    <Box flexDirection="column">
      <Text bold color={tint('accent')} wrap="truncate">
        {clip(`Glossary · ${v.position} · each word with the number it changes in the ZeRO table`, width)}
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
