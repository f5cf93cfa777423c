/**
 * The steps screen: the `accelerate launch` passes of the setup, from a template, edited in place. It renders
 * the steps editor's state (src/wizard/steps.ts) and sends its text fields' changes back; every other key is
 * the wizard's (surface `steps` in src/wizard/keytable.ts). The preview below shows the commands as they
 * will run, so an edit shows in both passes at once.
 */
import type React from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/index.js';
import { TextField } from '../common/index.js';
import { tint } from '../common/index.js';
import type { SetupFiles } from '../../src/config/index.js';
import type { StepArg } from '../../src/config/index.js';
import type { Finding } from '../../src/config/index.js';
import { STEP_TEMPLATES, stepRows, type StepRow, type StepsEditorState } from '../../src/wizard/index.js';
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
  onTemplate: (id: (typeof STEP_TEMPLATES)[number]['id']) => void;
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
  if (e.picking) {
    const items = STEP_TEMPLATES.map((t) => ({ key: t.id, value: t.id, label: clip(t.label, w - 2) }));
    return (
      <Box flexDirection="column">
        <Text bold wrap="truncate">
          {clip('What does this setup run? Pick the steps to start from (you edit them next):', w)}
        </Text>
        <List
          items={items}
          isFocused={p.isActive}
          renderIndicator={Indicator}
          renderItem={PlainItem}
          onSelect={(item) => p.onTemplate(item.value as (typeof STEP_TEMPLATES)[number]['id'])}
        />
        {wrap(
          `The steps run in ${p.cwd ?? '.'}, where zerowiz started: their relative paths are read there. Start zerowiz in your trainer's checkout, or press L on the next screen.`,
          w,
        ).map((l, i) => (
          <Text key={`w${i}`} color={tint('accent')} wrap="truncate">
            {l}
          </Text>
        ))}
        {STEP_TEMPLATES.flatMap((t) => wrap(`${t.label}: ${t.description}`, w)).map((l, i) => (
          <Text key={i} color={tint('dim')} wrap="truncate">
            {l}
          </Text>
        ))}
      </Box>
    );
  }
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
