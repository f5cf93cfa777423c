import type React from 'react';
import { useMemo, useState } from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/index.js';
import { TextField } from '../common/index.js';
import type { Answers, DetectedEnv, Question } from '../../src/config/index.js';
import type { Finding } from '../../src/config/index.js';
import type { ModelEntry } from '../../src/estimate/index.js';
import { processContext, type ExpandContext } from '../../src/fs/index.js';
import { fieldStart } from '../../src/wizard/index.js';
import type { Tradeoff } from '../../src/wizard/index.js';
import { formatCount } from '../../src/text/index.js';
import { clip } from '../../src/text/index.js';
import { tint } from '../common/index.js';
import { ModeQuestion } from './ModeQuestion.js';
import { LIST_LIMIT, choiceItems, helpLines, modelListShown, parseTyped, promptLines } from '../../src/wizard/index.js';
import { Indicator, PlainItem } from './parts.js';

/** A select or yes/no question. */
function SelectQuestion({ q, a, width, isActive, onAnswer, onDraft }: BodyProps): React.JSX.Element {
  const items = choiceItems(q, width);
  const current = String(a[q.id]);
  const initialIndex = Math.max(
    0,
    items.findIndex((i) => i.value === current),
  );
  const toValue = (v: string) => (q.choices ?? []).find((c) => String(c.value) === v)?.value;
  return (
    <List
      items={items}
      initialIndex={initialIndex}
      more
      limit={Math.min(LIST_LIMIT, items.length)}
      isFocused={isActive}
      renderIndicator={Indicator}
      renderItem={PlainItem}
      onHighlight={(item) => onDraft({ [q.id]: toValue(item.value) } as Partial<Answers>)}
      onSelect={(item) => onAnswer({ [q.id]: toValue(item.value) } as Partial<Answers>)}
    />
  );
}

/** A typed answer, validated as you type; Enter is refused while it is invalid. */
function TextQuestion({ q, a, width, isActive, onAnswer, onDraft, paths }: BodyProps): React.JSX.Element {
  const [start] = useState(() => fieldStart(q.id, a));
  const [text, setText] = useState(start.text);
  const [refused, setRefused] = useState(false);
  const parsed = useMemo(() => parseTyped(q, text, a, start, paths), [q, text, a, start, paths]);
  return (
    <Box flexDirection="column">
      <Box>
        <Text color={tint('accent')}>{'❯ '}</Text>
        <TextField
          value={text}
          focus={isActive}
          surface="answerField"
          width={width - 2}
          onChange={(v) => {
            setText(v);
            setRefused(false);
            const p = parseTyped(q, v, a, start, paths);
            onDraft(p.ok ? ({ [q.id]: p.value } as Partial<Answers>) : null);
          }}
          onSubmit={() => {
            if (parsed.ok) onAnswer({ [q.id]: parsed.value } as Partial<Answers>);
            else setRefused(true);
          }}
        />
      </Box>
      {parsed.ok ? (
        <Text color={tint('dim')} wrap="truncate">
          {clip(
            parsed.expanded !== undefined
              ? `= ${parsed.expanded}  (Enter to accept)`
              : parsed.note !== undefined
                ? `${parsed.note}  (Enter to accept)`
                : text.trim() === ''
                  ? 'empty: Enter keeps it empty (see ? for what that means)'
                  : 'Enter to accept',
            width,
          )}
        </Text>
      ) : (
        <Text color={tint('bad')} wrap="truncate">
          {clip(`${refused ? 'Enter refused: ' : '✗ '}${parsed.error}`, width)}
        </Text>
      )}
    </Box>
  );
}

/** The model size question: a model from the catalog, a typed count, or no estimate. */
function ModelQuestion(
  props: BodyProps & { models: ModelEntry[]; typed: boolean; onType: () => void },
): React.JSX.Element {
  const { a, models, width } = props;
  if (!modelListShown(a, models, props.typed)) return <TextQuestion {...props} />;
  const items = [
    ...models.map((m) => ({
      key: m.id,
      value: m.id,
      label: clip(
        `${m.name}: ${formatCount(m.params)} params, largest layer ${formatCount(m.largestLayer)}`,
        width - 2,
      ),
    })),
    { key: '__type', value: '__type', label: 'Type a parameter count (e.g. 20.4B, 7e9, 350M)…' },
    { key: '__skip', value: '__skip', label: 'Skip: no memory estimate' },
  ];
  const current =
    models.find((m) => m.params === a.model_params)?.id ??
    (a.model_params === null && 'model_params' in (props.givenIds ?? {}) ? '__skip' : models[0]?.id);
  const initialIndex = Math.max(
    0,
    items.findIndex((i) => i.value === current),
  );
  const pick = (v: string): Partial<Answers> | null => {
    const m = models.find((x) => x.id === v);
    return m
      ? {
          model_params: m.params,
          largest_layer_params: m.largestLayer,
          model_name: m.name,
          // A UNet is an image model too: its tokens come from the image size.
          model_kind: m.kind === 'lm' ? 'lm' : m.kind === 'video' ? 'video' : 'dit',
        }
      : v === '__skip'
        ? { model_params: null }
        : null;
  };
  return (
    <List
      items={items}
      initialIndex={initialIndex}
      more
      limit={Math.min(LIST_LIMIT, items.length)}
      isFocused={props.isActive}
      renderIndicator={Indicator}
      renderItem={PlainItem}
      onHighlight={(item) => props.onDraft(pick(item.value))}
      onSelect={(item) => {
        if (item.value === '__type') {
          props.onType();
          return;
        }
        const v = pick(item.value);
        if (v) props.onAnswer(v);
      }}
    />
  );
}

interface BodyProps {
  q: Question;
  a: Answers;
  width: number;
  isActive: boolean;
  givenIds?: Partial<Answers>;
  /** Where typed paths are expanded against. */
  paths: ExpandContext;
  onAnswer: (values: Partial<Answers>) => void;
  onDraft: (values: Partial<Answers> | null) => void;
}

/** Props of the question screen. */
export interface QuestionScreenProps {
  q: Question;
  answers: Answers;
  given: Partial<Answers>;
  env: DetectedEnv;
  width: number;
  help: boolean;
  isActive: boolean;
  models: ModelEntry[];
  /** The user chose to type a parameter count instead of picking from the catalog (kept by the app). */
  modelTyped?: boolean;
  onTypeModel?: () => void;
  onAnswer: (values: Partial<Answers>) => void;
  onDraft: (values: Partial<Answers> | null) => void;
  prefetch?: (values: Partial<Answers>) => void;
  /** Where typed paths are expanded against (default: this process's environment and directory). */
  paths?: ExpandContext;
  /** What Enter chooses now, for the help's "Default" (see display.ts enterChoice). */
  enter?: string;
  /** The key that opens the glossary from the help (`g`; `^G` where a text field takes `g`). */
  glossaryKey?: string;
  /** The ZeRO table (the app computes it once per answers); the mode question computes it when absent. */
  tradeoff?: Tradeoff;
  /** The ZeRO row to start on (tradeoff.ts startKey: the highlight the picture left, the answer's, the recommendation). */
  modeStart?: string;
  /** The findings that point at this question: the help shows them whole. */
  findings?: readonly Finding[];
}

const DEFAULT_PATHS: ExpandContext = processContext();

/** One question, rendered from the catalog. */
export function QuestionScreen(p: QuestionScreenProps): React.JSX.Element {
  const { q, width } = p;
  const body: BodyProps = {
    q,
    a: p.answers,
    width,
    isActive: p.isActive,
    givenIds: p.given,
    paths: p.paths ?? DEFAULT_PATHS,
    onAnswer: p.onAnswer,
    onDraft: p.onDraft,
  };
  let content: React.JSX.Element;
  if (q.id === 'mode') {
    content = (
      <ModeQuestion
        hidePanel={p.help}
        answers={p.answers}
        zeroInit={p.given.zero3_init}
        models={p.models}
        {...(p.env.interconnect ? { interconnect: p.env.interconnect } : {})}
        given={'mode' in p.given}
        width={width}
        isActive={p.isActive}
        onAnswer={p.onAnswer}
        onDraft={p.onDraft}
        {...(p.prefetch ? { prefetch: p.prefetch } : {})}
        {...(p.tradeoff ? { tradeoff: p.tradeoff } : {})}
        {...(p.modeStart !== undefined ? { start: p.modeStart } : {})}
      />
    );
  } else if (q.id === 'model_params') {
    content = (
      <ModelQuestion
        {...body}
        models={p.models}
        typed={p.modelTyped ?? false}
        onType={p.onTypeModel ?? (() => undefined)}
      />
    );
  } else if (q.kind === 'text') {
    content = <TextQuestion {...body} />;
  } else {
    content = <SelectQuestion {...body} />;
  }
  return (
    <Box flexDirection="column">
      {promptLines(q, width).map((l, i) => (
        <Text key={i} bold>
          {l}
        </Text>
      ))}
      {content}
      {p.help ? (
        <Box flexDirection="column">
          {helpLines(q, p.answers, p.env, width, p.enter, p.glossaryKey, p.findings).map((l, i) => (
            <Text key={i} color={tint('accent')}>
              {l}
            </Text>
          ))}
        </Box>
      ) : null}
    </Box>
  );
}
