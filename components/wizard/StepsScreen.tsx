/**
 * The steps screen: the `accelerate launch` passes of the setup, from a template, edited in place. It renders
 * the steps editor's state (src/wizard/steps.ts) and sends its text fields' changes back; every other key is
 * the wizard's (surface `steps` in src/wizard/keytable.ts). The preview below shows the commands as they
 * will run, so an edit shows in both passes at once.
 */
import type React from 'react';
import { Box, Text } from 'ink';
import { useState } from 'react';
import { List, useRawKeys } from '../common/index.js';
import { TextField } from '../common/index.js';
import { tint } from '../common/index.js';
import type { SetupFiles } from '../../src/config/index.js';
import type { StepArg } from '../../src/config/index.js';
import type { Finding } from '../../src/config/index.js';
import { resolveKey, stepRows, type StepRow, type StepsEditorState } from '../../src/wizard/index.js';
import type { PasteBox, StepTemplate } from '../../src/wizard/index.js';
import type { KeyPress } from '../../src/text/index.js';
import { clip, padEnd, wrap } from '../../src/text/index.js';
import { Indicator, PlainItem } from './parts.js';
import { configText, stepFindingLines, stepTabs, stepsChromeRows, withRunsIn } from '../../src/wizard/index.js';

const LABEL_W = 22;

function argText(a: StepArg): [string, string] {
  if (a.role === 'script') return ['script', a.value ?? ''];
  const label = a.flag ?? '(word)';
  return [a.role === 'launch' ? `${label} (accelerate)` : label, a.value ?? (a.flag ? '(no value)' : '')];
}

function rowText(e: StepsEditorState, r: StepRow, files: SetupFiles): [string, string] {
  const step = e.steps[e.step]!;
  if (r.kind === 'name') return ['name', step.name];
  if (r.kind === 'config') return ['config', configText(e, files)];
  return argText(r.arg);
}

/** Props of the steps screen. */
export interface StepsScreenProps {
  editor: StepsEditorState;
  files: SetupFiles;
  /** Findings about the shown step (the preview's step findings): the first whole, the others a line each. */
  findings: Finding[];
  width: number;
  height: number;
  isActive: boolean;
  /** The templates offered (src/wizard/steps.ts stepTemplates). */
  templates: readonly StepTemplate[];
  onTemplate: (id: string) => void;
  /** The paste box (P), or null. */
  paste?: PasteBox | null;
  onPasteKey?: (input: string, key: KeyPress) => void;
  onPasteDone?: () => void;
  onPasteClose?: () => void;
  onAbort?: () => void;
  onEditText: (text: string) => void;
  onCommit: () => void;
  /** The directory the steps run in (relative paths are read there). */
  cwd?: string;
  /** The launch directory's field while it is typed (L), else null. */
  launchDirEdit?: string | null;
  onLaunchDirText?: (text: string) => void;
  onLaunchDirSubmit?: (text: string) => void;
}

/** The steps screen. */
export function StepsScreen(p: StepsScreenProps): React.JSX.Element {
  const e = p.editor;
  const w = p.width;
  if (p.paste) return <PasteView {...p} paste={p.paste} />;
  if (e.picking) return <TemplatePicker {...p} />;
  if (e.offer) {
    const o = e.offer;
    return (
      <Box flexDirection="column">
        <Text bold wrap="truncate">
          {clip(`Changed ${o.before} → ${o.after}. The same value is used ${o.changes.length} more time(s):`, w)}
        </Text>
        {o.changes.slice(0, Math.max(1, p.height - 3)).map((c, i) => (
          <Text key={i} wrap="truncate">
            {clip(`  ${c.stepName} ${c.what}: ${c.before} → ${c.after}`, w)}
          </Text>
        ))}
        <Text bold color={tint('accent')}>
          Change it everywhere? y: yes, every step · n/Esc: only here
        </Text>
      </Box>
    );
  }
  if (p.launchDirEdit != null) {
    return (
      <Box flexDirection="column">
        <Text bold wrap="truncate">
          {clip("Where do the steps run? The trainer's checkout (~ and $VARS work; Enter: set, Esc: back):", w)}
        </Text>
        <Box>
          <Text color={tint('accent')}>{'❯ '}</Text>
          <TextField
            value={p.launchDirEdit}
            focus={p.isActive}
            selected
            width={w - 2}
            onChange={(t) => p.onLaunchDirText?.(t)}
            onSubmit={(t) => p.onLaunchDirSubmit?.(t)}
          />
        </Box>
        {wrap(
          'Relative paths of the steps (the script, the dataset, the cache) are read there, the run record is kept there, and the commands run there.',
          w,
        ).map((l, i) => (
          <Text key={i} color={tint('dim')}>
            {l}
          </Text>
        ))}
        {e.message ? (
          <Text color={tint('warn')} wrap="truncate">
            {clip(e.message, w)}
          </Text>
        ) : null}
      </Box>
    );
  }
  const step = e.steps[e.step];
  // The first finding whole (its fix too), the others a line each; `?` shows them all whole.
  const findingLines = stepFindingLines(p.findings, w);
  const findingColor = p.findings.some((f) => f.level === 'error') ? tint('bad') : tint('warn');
  // A new argument's flag is typed before it is in the step: a row of its own at the cursor.
  const real: (StepRow | null)[] = step ? stepRows(step) : [];
  const rows = e.edit?.adding && e.edit.part === 'flag' ? [...real.slice(0, e.row), null, ...real.slice(e.row)] : real;
  const room = Math.max(1, p.height - stepsChromeRows(e, findingLines.length));
  const top = Math.max(0, Math.min(e.row - Math.floor(room / 2), rows.length - room));
  const shown = rows.slice(top, top + room);
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate">
        {clip(`Steps (the accelerate launch passes, in order): ${stepTabs(e)}`, w)}
      </Text>
      <Text color={tint('dim')} wrap="truncate">
        {clip(
          step
            ? withRunsIn(
                `step ${e.step + 1}/${e.steps.length} · rows ${top + 1}-${top + shown.length} of ${rows.length}`,
                p.cwd ?? '.',
                w,
              )
            : withRunsIn('N adds a step, t a template, r the review', p.cwd ?? '.', w),
          w,
        )}
      </Text>
      {shown.map((r, i) => {
        const index = top + i;
        const selected = index === e.row;
        const [label, value] = r === null ? ['new argument', ''] : rowText(e, r, p.files);
        const editing = selected && e.edit !== null;
        const valueW = Math.max(8, w - 2 - LABEL_W - 1);
        return (
          <Box key={index}>
            {Indicator({ isSelected: selected })}
            <Text bold={selected}>
              {padEnd(clip(editing && e.edit!.part === 'flag' ? 'flag' : label, LABEL_W), LABEL_W)}{' '}
            </Text>
            {editing ? (
              <TextField
                value={e.edit!.text}
                focus={p.isActive}
                width={valueW}
                onChange={p.onEditText}
                onSubmit={() => p.onCommit()}
              />
            ) : (
              <Text wrap="truncate" color={r?.kind === 'config' ? tint('accent') : undefined}>
                {clip(value, valueW)}
              </Text>
            )}
          </Box>
        );
      })}
      {e.message ? (
        <Text color={tint('warn')} wrap="truncate">
          {clip(e.message, w)}
        </Text>
      ) : null}
      {findingLines.map((l, i) => (
        <Text key={`f${i}`} color={findingColor} wrap="truncate">
          {l}
        </Text>
      ))}
    </Box>
  );
}

/** Rows of the picker besides its list: the title, where the steps run (2), the highlighted one's description (3). */
const PICKER_CHROME_ROWS = 6;

/** The template list: the one highlighted described under it; a list longer than the room says so. */
function TemplatePicker(p: StepsScreenProps): React.JSX.Element {
  const w = p.width;
  const [at, setAt] = useState(0);
  const items = p.templates.map((t) => ({ key: t.id, value: t.id, label: clip(t.label, w - 2) }));
  const shown = p.templates.find((t) => t.id === items[at]?.value) ?? p.templates[0];
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate">
        {clip(
          'What does this setup run? Pick the steps to start from (you edit them next), or P to paste a command:',
          w,
        )}
      </Text>
      <List
        items={items}
        more
        limit={Math.max(3, p.height - PICKER_CHROME_ROWS)}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onHighlight={(item) => setAt(items.findIndex((i) => i.value === item.value))}
        onSelect={(item) => p.onTemplate(item.value)}
      />
      {wrap(
        `The steps run in ${p.cwd ?? '.'}, where zerowiz started: their relative paths are read there. Start zerowiz in your trainer's checkout, or press L on the next screen.`,
        w,
      )
        .slice(0, 2)
        .map((l, i) => (
          <Text key={`w${i}`} color={tint('accent')} wrap="truncate">
            {l}
          </Text>
        ))}
      {shown
        ? wrap(`${shown.label}: ${shown.description}`, w)
            .slice(0, 3)
            .map((l, i) => (
              <Text key={i} color={tint('dim')} wrap="truncate">
                {l}
              </Text>
            ))
        : null}
    </Box>
  );
}

/** The paste box: the text so far (its last lines), then what reading it said. Keys reach it whole (a paste). */
function PasteView(p: StepsScreenProps & { paste: PasteBox }): React.JSX.Element {
  const w = p.width;
  const box = p.paste;
  useRawKeys(
    (input, key) => {
      const command = resolveKey(['paste'], input, key)?.binding.command;
      if (command === 'abort') p.onAbort?.();
      else if (command === 'done') p.onPasteDone?.();
      else if (command === 'no' || (box.taken && key.return)) p.onPasteClose?.();
      else if (!box.taken) p.onPasteKey?.(input, key);
    },
    { isActive: p.isActive },
  );
  const lines = box.text.split('\n');
  const read = box.read ?? [];
  const room = Math.max(1, p.height - 3 - read.length);
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate">
        {clip(
          box.taken
            ? 'Read from the paste (Enter/Esc: to the steps):'
            : 'Paste an `accelerate launch ...` line or a whole example .sh (^D: read the steps · Esc: cancel):',
          w,
        )}
      </Text>
      {box.taken
        ? null
        : lines.slice(-room).map((l, i) => (
            <Text key={`t${i}`} wrap="truncate">
              {clip(l, w)}
            </Text>
          ))}
      <Text color={tint('dim')} wrap="truncate">
        {clip(`${lines.length} line(s), ${box.text.length} characters`, w)}
      </Text>
      {read.flatMap((l, i) =>
        wrap(l, w).map((x, j) => (
          <Text key={`r${i}-${j}`} color={i === 0 && box.taken ? tint('good') : tint('warn')} wrap="truncate">
            {x}
          </Text>
        )),
      )}
    </Box>
  );
}
