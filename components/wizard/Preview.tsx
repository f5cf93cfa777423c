import type React from 'react';
import { memo } from 'react';
import { Box, Text } from 'ink';
import type { Preview as PreviewData } from '../../src/wizard/index.js';
import { PREVIEW_TABS, type PreviewTab } from '../../src/wizard/index.js';
import { clip, softWrap } from '../../src/text/index.js';
import { tint } from '../common/index.js';
import { previewFindingRows, previewTextRows } from '../../src/wizard/index.js';

const TAB_LABEL: Record<PreviewTab, string> = { yaml: 'YAML', json: 'JSON', commands: 'commands' };

/** The text of the preview tab. */
export function tabText(p: PreviewData, tab: PreviewTab): string {
  return tab === 'yaml' ? p.yaml.replace(/\n$/, '') : tab === 'json' ? p.json : p.commands;
}

function valueRole(v: string): 'string' | 'number' | 'boolean' | 'comment' | undefined {
  const t = v.replace(/,$/, '').trim();
  if (t === '') return undefined;
  if (t === 'true' || t === 'false') return 'boolean';
  if (/^-?[0-9][0-9.e+-]*$/.test(t)) return 'number';
  if (t === '{' || t === '[' || t === '}' || t === ']') return undefined;
  return 'string';
}

/** One preview line with its key and value coloured; memoised (moving the ZeRO highlight changes a few lines). */
const Line = memo(function Line({ text, width }: { text: string; width: number }): React.JSX.Element {
  const s = clip(text, width);
  if (s.startsWith('#')) return <Text color={tint('comment')}>{s}</Text>;
  const m = /^(\s*(?:- )?)("[^"]*"|[A-Za-z0-9_.-]+)(:\s?)(.*)$/.exec(s);
  if (!m) return <Text>{s}</Text>;
  const [, indent = '', key = '', colon = '', value = ''] = m;
  const role = valueRole(value);
  return (
    <Text>
      {indent}
      <Text color={tint('key')}>{key}</Text>
      {colon}
      <Text color={role ? tint(role) : undefined}>{value}</Text>
    </Text>
  );
});

/**
 * The lines a tab shows at `width`: the commands soft-wrapped (a command is never cut: each line is exactly
 * the `commands.sh` line, spread over rows), the files' lines as they are (clipped by the view).
 */
export function tabLines(p: PreviewData, tab: PreviewTab, width: number): string[] {
  const lines = tabText(p, tab).split('\n');
  return tab === 'commands' ? lines.flatMap((l) => softWrap(l, width)) : lines;
}

/** The live preview: tabs, a window of the current text, and the validation findings under it. */
export function Preview({
  preview,
  tab,
  width,
  height,
  scroll,
  note,
}: {
  preview: PreviewData;
  tab: PreviewTab;
  width: number;
  height: number;
  scroll: number;
  /** Said on the tab line: what the preview shows when it is not the answers (the highlighted ZeRO row). */
  note?: string | null;
}): React.JSX.Element {
  const lines = tabLines(preview, tab, width);
  // A note (the ZeRO row shown is the highlighted one, not the answer) takes a row of the text, above it.
  const noteRows = note ? 1 : 0;
  const errors = preview.findings.filter((f) => f.level === 'error').length;
  const warnings = preview.findings.length - errors;
  const findingRows = previewFindingRows(height, preview.findings.length);
  const bodyRows = previewTextRows(height, preview.findings.length, noteRows > 0);
  const maxScroll = Math.max(0, lines.length - bodyRows);
  const top = Math.min(Math.max(0, scroll), maxScroll);
  const shown = lines.slice(top, top + bodyRows);
  const more =
    lines.length > bodyRows && bodyRows > 0
      ? ` ${top + 1}-${Math.min(lines.length, top + bodyRows)}/${lines.length}`
      : '';
  const status =
    errors + warnings === 0
      ? 'no findings'
      : `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
  return (
    <Box flexDirection="column" width={width} height={height} overflowY="hidden" flexShrink={0}>
      <Text wrap="truncate">
        {PREVIEW_TABS.map((t) => (
          <Text key={t} inverse={t === tab} bold={t === tab}>{` ${TAB_LABEL[t]} `}</Text>
        ))}
        <Text color={tint('dim')}>{more}</Text>
        <Text color={errors > 0 ? tint('bad') : warnings > 0 ? tint('warn') : tint('good')}>{`  ${status}`}</Text>
      </Text>
      {note ? (
        <Text color={tint('recommended')} wrap="truncate">
          {clip(`▸ ${note}`, width)}
        </Text>
      ) : null}
      {shown.map((l, i) => (
        <Line key={i} text={l} width={width} />
      ))}
      {preview.findings.slice(0, findingRows).map((f, i) => {
        const last = i === findingRows - 1 && preview.findings.length > findingRows;
        const text = `${f.level === 'error' ? '✗' : '!'} ${f.message}`;
        const tail = last ? ` (+${preview.findings.length - findingRows} more in review)` : '';
        return (
          <Text key={`f${i}`} color={f.level === 'error' ? tint('bad') : tint('warn')} wrap="truncate">
            {clip(text, width - tail.length) + tail}
          </Text>
        );
      })}
    </Box>
  );
}
