import type React from 'react';
import { useEffect, useLayoutEffect, useMemo, useState } from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/List.js';
import type { Answers } from '../../src/config/questions.js';
import { MODE_INFO, modeOffloads, rowFromKey } from '../../src/config/modes.js';
import type { ModelEntry } from '../../src/estimate/models.js';
import type { Interconnect } from '../../src/estimate/peak.js';
import {
  SPLIT_ROW_KEY,
  explainRow,
  keyLabel,
  modeKeys,
  startKey,
  tradeoffOf,
  type Tradeoff,
  type TradeoffRow,
} from '../../src/wizard/tradeoff.js';
import { bar, clip, padEnd, padStart, wrap } from '../../src/text.js';
import { tint } from '../common/theme.js';
import { Indicator } from './parts.js';

const LABEL_W = 19;
const NUM_W = 8;
const COMM_W = 5;
const TIME_W = 7;

/** Bar width for a terminal width: 5 cells at 80 columns, 10 from 110. */
function barWidth(width: number): number {
  return width >= 110 ? 10 : 5;
}

/** The table header, aligned with the rows. */
export function headerText(width: number): string {
  const b = barWidth(width);
  return `  ${padEnd('mode', LABEL_W)} ${padStart('GPU peak', NUM_W)} ${' '.repeat(b)}  ${padStart('CPU/node', NUM_W)} ${' '.repeat(b)}  ${padStart('comm', COMM_W)}  ${padStart('+s/step', TIME_W)}  fit`;
}

/** ✓, ✗, or ✗ with what fails when it is not the GPU (the GPU bar is then not red). */
export function fitMark(r: Pick<TradeoffRow, 'fits' | 'failsOn'>): string {
  if (r.fits === null) return '?';
  if (r.fits) return '✓';
  return r.failsOn.length > 0 && !r.failsOn.includes('GPU') ? `✗ ${r.failsOn.join('+')}` : '✗';
}

/** The items of the mode list: the tradeoff rows, or the five modes without a model size. */
export function modeItems(t: Tradeoff): { key: string; label: string; value: string }[] {
  return modeKeys(t).map((key) => ({ key, label: key, value: key }));
}

/** Rows of text the mode question needs (without the prompt and progress lines). */
export function modeHeight(t: Tradeoff, width: number, withPanel = true): number {
  const items = modeItems(t);
  // With the help open, the help takes the rows of the reason and the panel.
  const reason = withPanel ? wrap(reasonText(t), width).length : 0;
  const panel = !withPanel ? 0 : Math.max(...items.map((i) => panelLines(t, i.key, width).length));
  return 1 + (t.available ? 1 : 0) + items.length + reason + panel;
}

/** The panel under the table for one row: its label and figures, its line items, what it shards and costs. */
export function panelLines(t: Tradeoff, key: string, width: number): string[] {
  const [first, ...rest] = explainRow(t, key);
  return [...wrap(`▸ ${keyLabel(t, key)}: ${first}`, width), ...rest.flatMap((l) => wrap(l, width))];
}

function reasonText(t: Tradeoff): string {
  if (!t.available) return t.reason;
  const rec = t.rows.find((r) => r.recommended);
  return rec ? `★ ${t.reason}` : `✗ ${t.reason}`;
}

/** The ZeRO mode question: the modes with their tradeoff, the recommendation, and a panel on the highlighted one. */
export function ModeQuestion(props: {
  answers: Answers;
  zeroInit: boolean | undefined;
  /** The model catalog (for the model's shape) and the detected GPU links. */
  models?: readonly ModelEntry[];
  interconnect?: Interconnect;
  given: boolean;
  width: number;
  isActive: boolean;
  onAnswer: (a: Partial<Answers>) => void;
  onDraft: (a: Partial<Answers> | null) => void;
  /** Computes (and caches) the preview of a draft in idle time, so moving the highlight stays cheap. */
  prefetch?: (a: Partial<Answers>) => void;
  /** The help is open: it takes the rows of the reason and the panel, so the whole help fits at 80x24. */
  hidePanel?: boolean;
  /** The table, when the app has it already. */
  tradeoff?: Tradeoff;
  /** The row to start on, when the app has it already (tradeoff.ts startKey); else the answer's or the recommendation. */
  start?: string;
}): React.JSX.Element {
  const { answers, width } = props;
  const { models, interconnect } = props;
  const t = useMemo(
    () =>
      props.tradeoff ??
      tradeoffOf(answers, props.zeroInit, { ...(models ? { models } : {}), ...(interconnect ? { interconnect } : {}) }),
    [props.tradeoff, answers, props.zeroInit, models, interconnect],
  );
  const items = modeItems(t);
  const first = props.start ?? startKey(t, answers, props.given);
  const initialIndex = Math.max(
    0,
    items.findIndex((i) => i.key === first),
  );
  const [highlighted, setHighlighted] = useState(items[initialIndex]?.key ?? first);
  // The preview shows the highlighted row from the start (not the answer the highlight is not on). At commit
  // (a layout effect), so it is in before any key moves the highlight: a passive effect could land after it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, for the row the list starts on.
  useLayoutEffect(() => {
    props.onDraft(draftFor(items[initialIndex]?.key ?? first, answers));
  }, []);
  const keys = items.map((i) => i.key).join(',');
  // Warm the preview cache one row per idle turn of the event loop: a key pressed meanwhile waits
  // for one preview at most, never for all of them.
  useEffect(() => {
    const prefetch = props.prefetch;
    if (!prefetch) return;
    const todo = keys.split(',');
    let timer: NodeJS.Timeout | null = null;
    const step = () => {
      const k = todo.shift();
      if (k === undefined) return;
      prefetch(draftFor(k, answers));
      timer = setTimeout(step, 0);
    };
    timer = setTimeout(step, 0);
    return () => {
      if (timer) clearTimeout(timer);
    };
  }, [keys, props.prefetch, answers]);
  const b = barWidth(width);
  const byKey = new Map(t.rows.map((r) => [r.key, r]));

  const renderItem = ({ label, isSelected }: { label: string; isSelected?: boolean }) => {
    const r = byKey.get(label);
    if (!r) {
      const info = MODE_INFO[label as keyof typeof MODE_INFO];
      return (
        <Text bold={isSelected} wrap="truncate">
          {clip(`${padEnd(info.label, 15)} ${info.shards}`, width - 2)}
        </Text>
      );
    }
    const fitColor = r.fits === null ? undefined : r.fits ? tint('good') : tint('bad');
    // Each bar is red only for its own memory: a row that fails on the CPU alone keeps a green GPU bar.
    const gpuColor = r.fits === null ? undefined : r.failsOn.includes('GPU') ? tint('bad') : tint('good');
    const cpuColor = r.failsOn.includes('CPU') ? tint('bad') : tint('accent');
    return (
      <Text wrap="truncate">
        <Text bold={isSelected}>{padEnd(r.label, LABEL_W)}</Text> {padStart(r.gpu, NUM_W)}{' '}
        <Text color={gpuColor}>{bar(r.gpuBar, b)}</Text>
        {'  '}
        {padStart(r.cpu, NUM_W)} <Text color={cpuColor}>{bar(r.cpuBar, b)}</Text>
        {'  '}
        {padStart(r.comm, COMM_W)}
        {'  '}
        {padStart(r.time, TIME_W)}
        {'  '}
        <Text color={fitColor}>{fitMark(r)}</Text>
        <Text color={tint('recommended')}>{r.recommended ? ' ★' : ''}</Text>
      </Text>
    );
  };

  const panel = panelLines(t, highlighted, width);
  return (
    <Box flexDirection="column">
      <Text color={tint('dim')} wrap="truncate">
        {clip(`for ${t.context}`, width)}
      </Text>
      {t.available ? (
        <Text color={tint('dim')} wrap="truncate">
          {clip(headerText(width), width)}
        </Text>
      ) : null}
      <List
        items={items}
        initialIndex={initialIndex}
        isFocused={props.isActive}
        renderIndicator={Indicator}
        renderItem={renderItem}
        onHighlight={(item) => {
          setHighlighted(item.value);
          props.onDraft(draftFor(item.value, answers));
        }}
        onSelect={(item) => props.onAnswer(draftFor(item.value, answers))}
      />
      {props.hidePanel
        ? null
        : wrap(reasonText(t), width).map((l, i) => (
            <Text key={`r${i}`} color={tint('recommended')}>
              {l}
            </Text>
          ))}
      {props.hidePanel
        ? null
        : panel.map((l, i) => (
            <Text key={`p${i}`} bold={i === 0}>
              {l}
            </Text>
          ))}
    </Box>
  );
}

/**
 * The answers a row key stands for: the mode, the offload device of offload modes, and the parameters'
 * device back to the mode's own (undefined: its default), so a plain row ends a split; the split row keeps
 * the answers' own devices.
 */
export function draftFor(key: string, a: Pick<Answers, 'mode' | 'offload_device'>): Partial<Answers> {
  if (key === SPLIT_ROW_KEY) return { mode: a.mode, offload_device: a.offload_device };
  const row = rowFromKey(key);
  if (!row) return {};
  const end = { offload_param_device: undefined } as unknown as Partial<Answers>;
  return modeOffloads(row.mode)
    ? { mode: row.mode, offload_device: row.device ?? 'cpu', ...end }
    : { mode: row.mode, ...end };
}
