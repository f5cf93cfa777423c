import type React from 'react';
import { memo, useEffect, useLayoutEffect, useMemo, useState } from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/index.js';
import type { Answers } from '../../src/config/index.js';
import { MODE_INFO } from '../../src/config/index.js';
import type { ModelEntry } from '../../src/estimate/index.js';
import type { Interconnect } from '../../src/config/index.js';
import { startKey, tradeoffOf, type Tradeoff, type TradeoffRow } from '../../src/wizard/index.js';
import { bar, clip, padEnd, padStart, wrap } from '../../src/text/index.js';
import { tint } from '../common/index.js';
import { Indicator, TextLine } from './parts.js';
import {
  COMM_W,
  LABEL_W,
  NUM_W,
  TIME_W,
  barWidth,
  draftFor,
  fitMark,
  headerText,
  modeItems,
  panelLines,
  reasonText,
} from '../../src/wizard/index.js';

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
  const items = useMemo(() => modeItems(t), [t]);
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
  const byKey = useMemo(() => new Map(t.rows.map((r) => [r.key, r])), [t]);
  const renderItem = ({ label, isSelected }: { label: string; isSelected?: boolean }) => (
    <ModeRow row={byKey.get(label)} rowKey={label} selected={isSelected === true} barCells={b} width={width} />
  );

  const panel = panelLines(t, highlighted, width);
  const reason = useMemo(() => wrap(reasonText(t), width), [t, width]);
  return (
    <Box flexDirection="column">
      <TextLine color={tint('dim')} truncate text={clip(`for ${t.context}`, width)} />
      {t.available ? <TextLine color={tint('dim')} truncate text={clip(headerText(width), width)} /> : null}
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
      {props.hidePanel ? null : reason.map((l, i) => <TextLine key={`r${i}`} color={tint('recommended')} text={l} />)}
      {props.hidePanel ? null : panel.map((l, i) => <TextLine key={`p${i}`} bold={i === 0} text={l} />)}
    </Box>
  );
}

/**
 * One row of the table, memoised: a keypress redraws the two rows the highlight left and reached, and the others
 * (the same row object, width and state) skip React's work.
 */
const ModeRow = memo(function ModeRow({
  row: r,
  rowKey,
  selected,
  barCells: b,
  width,
}: {
  row: TradeoffRow | undefined;
  rowKey: string;
  selected: boolean;
  barCells: number;
  width: number;
}): React.JSX.Element {
  if (!r) {
    const info = MODE_INFO[rowKey as keyof typeof MODE_INFO];
    return (
      <Text bold={selected} wrap="truncate">
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
      <Text bold={selected}>{padEnd(r.label, LABEL_W)}</Text> {padStart(r.gpu, NUM_W)}{' '}
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
});
