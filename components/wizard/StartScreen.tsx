import type React from 'react';
import { useEffect, useState } from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/List.js';
import { TextField } from '../common/TextField.js';
import type { Preset, PresetProblem } from '../../src/presets.js';
import { clip, padEnd } from '../common/text.js';
import { tint } from '../common/theme.js';
import { useKeys } from '../common/keys.js';
import { Indicator, PlainItem } from './parts.js';
import { START_PROMPT, startItems } from './startText.js';

/** Props of the start screen. */
export interface StartScreenProps {
  presets: Preset[];
  problems: PresetProblem[];
  defaultConfigPath: string;
  defaultConfigExists: boolean;
  message: string | null;
  width: number;
  height: number;
  isActive: boolean;
  /** Tells the app when a text field has the keys (q, r and ← then type). */
  onTyping?: (typing: boolean) => void;
  onNew: () => void;
  onPreset: (p: Preset) => void;
  onImport: (path: string) => void;
  onQuit: () => void;
}

/** The first screen: a new setup, a preset, or an existing accelerate config. */
export function StartScreen(p: StartScreenProps): React.JSX.Element {
  const [view, setView] = useState<'menu' | 'presets' | 'path'>('menu');
  const [path, setPath] = useState('');
  useKeys(
    (_i, key) => {
      if (key.escape || (key.leftArrow && view === 'presets')) setView('menu');
    },
    { isActive: p.isActive && view !== 'menu' },
  );
  const w = p.width;
  // biome-ignore lint/correctness/useExhaustiveDependencies: reports the view upward when it changes only.
  useEffect(() => p.onTyping?.(view === 'path'), [view]);
  if (view === 'presets') {
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
  if (view === 'path') {
    return (
      <Box flexDirection="column">
        <Text bold>Path of an accelerate config YAML to import (Esc: back):</Text>
        <Box>
          <Text color={tint('accent')}>{'❯ '}</Text>
          <TextField
            value={path}
            focus={p.isActive}
            onChange={setPath}
            onSubmit={(v) => v.trim() !== '' && p.onImport(v.trim())}
          />
        </Box>
      </Box>
    );
  }
  const items = startItems({
    presetCount: p.presets.length,
    defaultConfigExists: p.defaultConfigExists,
    defaultConfigPath: p.defaultConfigPath,
    width: w,
  });
  return (
    <Box flexDirection="column">
      <Text bold>{START_PROMPT}</Text>
      <List
        items={items}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(item) => {
          if (item.value === 'new') p.onNew();
          else if (item.value === 'preset') setView('presets');
          else if (item.value === 'default') p.onImport(p.defaultConfigPath);
          else if (item.value === 'path') setView('path');
          else p.onQuit();
        }}
      />
      {p.message ? <Text color={tint('warn')}>{p.message}</Text> : null}
    </Box>
  );
}
