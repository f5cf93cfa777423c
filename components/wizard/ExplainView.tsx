/**
 * The explain view over the body (`e` wherever the preview is): every value accelerate and DeepSpeed will use
 * for each step of the setup, where it comes from and why, the same lines as `zerowiz explain` prints
 * (src/config/explain.ts explainLines). The app builds the window (explainWindow): its keys need its top and
 * length.
 */
import type React from 'react';
import { Box, Text } from 'ink';
import { clip } from '../../src/text/index.js';
import { tint } from '../common/index.js';
import type { ExplainWindow } from '../../src/wizard/index.js';

/** The view: a title with the position, then the window (step headers bold, rules and losers dimmed). */
export function ExplainView({ width, view }: { width: number; view: ExplainWindow | null }): React.JSX.Element {
  if (!view) return <Text color={tint('dim')}>working out every value of the run…</Text>;
  return (
    <Box flexDirection="column">
      <Text bold color={tint('accent')} wrap="truncate">
        {clip(`Explain · ${view.position} · every value the run will use, where it comes from and why`, width)}
      </Text>
      {view.lines.map((l, i) => (
        <Text
          key={i}
          bold={l.startsWith('step ')}
          color={/^\s+(why|over):/.test(l) ? tint('dim') : /^\s+error:/.test(l) ? tint('bad') : undefined}
          wrap="truncate"
        >
          {l}
        </Text>
      ))}
    </Box>
  );
}
