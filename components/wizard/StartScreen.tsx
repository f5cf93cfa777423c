import type React from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/index.js';
import { TextField } from '../common/index.js';
import type { Preset, PresetProblem } from '../../src/setups/index.js';
import { clip, padEnd, wrap } from '../../src/text/index.js';
import { tint } from '../common/index.js';
import { Indicator, PlainItem } from './parts.js';
import { START_PROMPT, startItems } from './startText.js';

/** Props of the start screen: its sub-view and path field live in the wizard's state (src/wizard/shell.ts). */
export interface StartScreenProps {
  view: 'menu' | 'presets' | 'path';
  /** The menu's highlighted entry when it first shows. */
  initialIndex?: number;
  path: string;
  presets: Preset[];
  /** False while the presets are still being read (the menu shows no count yet). */
  presetsLoaded?: boolean;
  problems: PresetProblem[];
  defaultConfigPath: string;
  defaultConfigExists: boolean;
  message: string | null;
  width: number;
  height: number;
  isActive: boolean;
  onView: (view: 'menu' | 'presets' | 'path') => void;
  onPath: (text: string) => void;
  onNew: () => void;
  onPreset: (p: Preset) => void;
  onImport: (path: string) => void;
  onQuit: () => void;
}

/** The first screen: a new setup, a preset, or an existing accelerate config. */
export function StartScreen(p: StartScreenProps): React.JSX.Element {
  const w = p.width;
  if (p.view === 'presets') {
    const nameW = Math.min(30, Math.max(...p.presets.map((x) => x.name.length + 7), 10));
    const items = p.presets.map((x, i) => ({
      key: `${i}`,
      value: `${i}`,
      label: clip(`${padEnd(`${x.name}${x.source === 'user' ? ' (user)' : ''}`, nameW)} ${x.description}`, w - 2),
    }));
    return (
      <Box flexDirection="column">
        <Text bold>Start from a preset (Esc: back). Built-in presets first, then yours:</Text>
        {items.length === 0 ? <Text color={tint('dim')}>No presets found.</Text> : null}
        <List
          items={items}
          more
          limit={Math.max(3, Math.min(items.length, p.height - 3))}
          isFocused={p.isActive}
          renderIndicator={Indicator}
          renderItem={PlainItem}
          onSelect={(item) => {
            const chosen = p.presets[Number(item.value)];
            if (chosen) p.onPreset(chosen);
          }}
        />
        {p.problems.map((x, i) => (
          <Text key={i} color={tint('warn')} wrap="truncate">
            {clip(`! skipped ${x.path}${x.key ? ` (${x.key})` : ''}: ${x.problem}`, w)}
          </Text>
        ))}
      </Box>
    );
  }
  if (p.view === 'path') {
    return (
      <Box flexDirection="column">
        <Text bold>Path of an accelerate config YAML to import (~ and $VARS work; Esc: back):</Text>
        <Box>
          <Text color={tint('accent')}>{'❯ '}</Text>
          <TextField
            value={p.path}
            focus={p.isActive}
            width={w - 2}
            onChange={p.onPath}
            onSubmit={(v) => v.trim() !== '' && p.onImport(v.trim())}
          />
        </Box>
        <Message text={p.message} width={w} />
      </Box>
    );
  }
  const items = startItems({
    presetCount: p.presetsLoaded === false ? null : p.presets.length,
    defaultConfigExists: p.defaultConfigExists,
    defaultConfigPath: p.defaultConfigPath,
    width: w,
  });
  return (
    <Box flexDirection="column">
      <Text bold>{START_PROMPT}</Text>
      <List
        items={items}
        initialIndex={p.initialIndex ?? 0}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(item) => {
          if (item.value === 'new') p.onNew();
          else if (item.value === 'preset') p.onView('presets');
          else if (item.value === 'default') p.onImport(p.defaultConfigPath);
          else if (item.value === 'path') p.onView('path');
          else p.onQuit();
        }}
      />
      <Message text={p.message} width={w} />
    </Box>
  );
}

/** What the last action said (an import that failed), wrapped: a path in it is never cut. */
function Message({ text, width }: { text: string | null; width: number }): React.JSX.Element | null {
  if (!text) return null;
  return (
    <>
      {wrap(text, width).map((l, i) => (
        <Text key={i} color={tint('warn')}>
          {l}
        </Text>
      ))}
    </>
  );
}
