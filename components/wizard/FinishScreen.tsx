import type React from 'react';
import { useEffect, useState } from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/List.js';
import { TextField } from '../common/TextField.js';
import type { Answers } from '../../src/questions.js';
import { modeDevice, rowLabel } from '../../src/modes.js';
import type { Setup } from '../../src/setup.js';
import type { WriteResult } from '../../src/write.js';
import { diffLines, type DiffLine, type WritePlan, type WriteTarget } from '../../src/wizard/finish.js';
import { clip } from '../common/text.js';
import { tint } from '../common/theme.js';
import { useKeyHold, useKeys } from '../common/keys.js';
import { Indicator, PlainItem } from './parts.js';

/** What the finish screen needs from outside (real functions in the bin, stand-ins in tests). */
export interface FinishDeps {
  planWrite(setup: Setup, target: WriteTarget): WritePlan;
  carryOut(plan: WritePlan): Promise<WriteResult[]>;
  /** The lines printed after a write: paths and the launch command. */
  summarize(results: WriteResult[], setup: Setup): string[];
  savePreset(name: string, setup: Setup, description: string, given: Partial<Answers>): Promise<string>;
  defaultConfigPath: string;
}

/** How the wizard ends. */
export interface WizardResult {
  code: number;
  /** Lines printed after the terminal is restored (paths written, the launch command). */
  summary: string[];
  /** Set when the user chose to launch: the written setup. */
  launch?: Setup;
}

type Step =
  | { step: 'menu' }
  | { step: 'dir'; text: string }
  | { step: 'confirm'; plan: WritePlan; scroll: number }
  | { step: 'writing' }
  | { step: 'written'; lines: string[]; setup: Setup }
  | { step: 'presetName'; text: string; after: 'menu' | 'written' }
  | { step: 'quitConfirm' };

/** Props of the finish screen. */
export interface FinishScreenProps {
  setup: Setup;
  given: Partial<Answers>;
  dirty: boolean;
  hasErrors: boolean;
  width: number;
  height: number;
  isActive: boolean;
  /** Tells the app when a text field has the keys (q, r and ← then type). */
  onTyping?: (typing: boolean) => void;
  /** Tells the app when the overwrite diff is shown: it takes the preview's rows and its own footer keys. */
  onConfirming?: (confirming: boolean) => void;
  deps: FinishDeps;
  onBack: () => void;
  /** The files were written; `setup` is the setup as written (its files at the target). */
  /** The files were written: the setup as written and the lines that say what was written. */
  onWritten: (setup: Setup, lines: string[]) => void;
  onExit: (r: WizardResult) => void;
}

function describe(setup: Setup): string {
  const a = setup.answers;
  return `${rowLabel(a.mode, modeDevice(a.mode, a.offload_device))} on ${a.num_processes} GPU(s), ${a.mixed_precision}; saved from the zerowiz wizard`;
}

/** `…` and the end of `text` when it is wider than `width` (a path keeps its file name). */
function clipStart(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? '…'.slice(0, width) : `…${text.slice(text.length - (width - 1))}`;
}

/** What the diff's file headers say: the file on disk (---) against what zerowiz would write (+++). */
export const DIFF_LABELS = { old: '--- on disk: ', new: '+++ zerowiz: ' } as const;

/** One line of the overwrite diff, coloured; a file header keeps its label whole and shortens the path. */
function DiffRow({ line, width }: { line: DiffLine; width: number }): React.JSX.Element {
  if (line.kind === 'old' || line.kind === 'new') {
    const label = DIFF_LABELS[line.kind];
    return (
      <Text bold wrap="truncate" color={line.kind === 'old' ? tint('bad') : tint('good')}>
        {clip(label + clipStart(line.text, Math.max(0, width - label.length)), width)}
      </Text>
    );
  }
  const color =
    line.kind === 'add'
      ? tint('good')
      : line.kind === 'del'
        ? tint('bad')
        : line.kind === 'hunk'
          ? tint('accent')
          : undefined;
  return (
    <Text wrap="truncate" color={color}>
      {clip(line.text, width)}
    </Text>
  );
}

/** Write (default location or a directory, with a diff and a confirmation), save a preset, launch, or quit. */
export function FinishScreen(p: FinishScreenProps): React.JSX.Element {
  const [s, setS] = useState<Step>({ step: 'menu' });
  const [note, setNote] = useState<string | null>(null);
  const [written, setWritten] = useState<{ lines: string[]; setup: Setup } | null>(null);
  const w = p.width;
  // Keys typed while the files are written go to the screen that follows (typeahead), not to nobody.
  useKeyHold(s.step === 'writing');
  // These report the screen's mode upward when it changes (not when the parent's callbacks do).
  // biome-ignore lint/correctness/useExhaustiveDependencies: fires on a step change only.
  useEffect(() => p.onTyping?.(s.step === 'dir' || s.step === 'presetName'), [s.step]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: fires on a step change only.
  useEffect(() => p.onConfirming?.(s.step === 'confirm'), [s.step]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: on unmount only.
  useEffect(() => () => p.onConfirming?.(false), []);
  // The overwrite diff: every row below its title and above its key line.
  const diff = s.step === 'confirm' ? diffLines(s.plan.files) : [];
  const diffRows = Math.max(3, p.height - 2);
  const maxTop = Math.max(0, diff.length - diffRows);

  const startWrite = (target: WriteTarget) => {
    let plan: WritePlan;
    try {
      plan = p.deps.planWrite(p.setup, target);
    } catch (e) {
      setNote(`cannot write: ${(e as Error).message}`);
      setS({ step: 'menu' });
      return;
    }
    if (plan.changesExisting) setS({ step: 'confirm', plan, scroll: 0 });
    else void doWrite(plan);
  };
  const doWrite = async (plan: WritePlan) => {
    setS({ step: 'writing' });
    try {
      const results = await p.deps.carryOut(plan);
      const lines = p.deps.summarize(results, plan.setup);
      p.onWritten(plan.setup, lines);
      setWritten({ lines, setup: plan.setup });
      setS({ step: 'written', lines, setup: plan.setup });
    } catch (e) {
      setNote(`nothing written: ${(e as Error).message}`);
      setS({ step: 'menu' });
    }
  };

  useKeys(
    (input, key) => {
      if (s.step === 'confirm') {
        if (input === 'y' || input === 'Y') void doWrite(s.plan);
        else if (input === 'n' || input === 'N' || key.escape) setS({ step: 'menu' });
        else if (key.downArrow || key.pageDown)
          setS({ ...s, scroll: Math.min(maxTop, s.scroll + (key.pageDown ? Math.max(1, diffRows - 1) : 1)) });
        else if (key.upArrow || key.pageUp)
          setS({ ...s, scroll: Math.max(0, s.scroll - (key.pageUp ? Math.max(1, diffRows - 1) : 1)) });
      } else if (s.step === 'quitConfirm') {
        if (input === 'y' || input === 'Y') p.onExit({ code: 0, summary: ['zerowiz: quit without writing.'] });
        else if (input === 'n' || input === 'N' || key.escape) setS({ step: 'menu' });
      } else if (s.step === 'dir' || s.step === 'presetName') {
        if (key.escape)
          setS(
            s.step === 'presetName' && s.after === 'written' && written
              ? { step: 'written', ...written }
              : { step: 'menu' },
          );
      } else if (s.step === 'menu' && (key.escape || key.leftArrow)) {
        p.onBack();
      }
    },
    { isActive: p.isActive },
  );

  const quit = () =>
    p.dirty
      ? setS({ step: 'quitConfirm' })
      : p.onExit({ code: 0, summary: written ? written.lines : ['zerowiz: nothing written.'] });
  const noteLine = note ? (
    <Text color={tint('warn')} wrap="truncate">
      {clip(note, w)}
    </Text>
  ) : null;

  if (s.step === 'dir') {
    return (
      <Box flexDirection="column">
        <Text bold>Directory for accelerate_config.yaml and ds_config.json (Enter: write, Esc: back):</Text>
        <Box>
          <Text color={tint('accent')}>{'❯ '}</Text>
          <TextField
            value={s.text}
            focus={p.isActive}
            onChange={(t) => setS({ step: 'dir', text: t })}
            onSubmit={(t) => startWrite({ kind: 'dir', dir: t.trim() === '' ? '.' : t.trim() })}
          />
        </Box>
      </Box>
    );
  }
  if (s.step === 'presetName') {
    return (
      <Box flexDirection="column">
        <Text bold>Name of the user preset (letters, digits, . _ -; Enter: save, Esc: back):</Text>
        <Box>
          <Text color={tint('accent')}>{'❯ '}</Text>
          <TextField
            value={s.text}
            focus={p.isActive}
            onChange={(t) => setS({ ...s, text: t })}
            onSubmit={async (t) => {
              try {
                const path = await p.deps.savePreset(t.trim(), written?.setup ?? p.setup, describe(p.setup), p.given);
                setNote(`saved preset ${t.trim()}: ${path}`);
                setS(s.after === 'written' && written ? { step: 'written', ...written } : { step: 'menu' });
              } catch (e) {
                setNote(`not saved: ${(e as Error).message}`);
              }
            }}
          />
        </Box>
        {noteLine}
      </Box>
    );
  }
  if (s.step === 'confirm') {
    const top = Math.min(s.scroll, maxTop);
    const shown = diff.slice(top, top + diffRows);
    const where = diff.length > diffRows ? ` · lines ${top + 1}-${top + shown.length} of ${diff.length}` : '';
    return (
      <Box flexDirection="column">
        <Text bold wrap="truncate">
          {clip(`These files exist and would change (a backup of each is kept)${where}:`, w)}
        </Text>
        {shown.map((l, i) => (
          <DiffRow key={i} line={l} width={w} />
        ))}
        <Text bold wrap="truncate">
          {clip('Overwrite? y: write (backups kept) · n/Esc: cancel · ↑↓ PgUp/PgDn: scroll', w)}
        </Text>
      </Box>
    );
  }
  if (s.step === 'quitConfirm') {
    return (
      <Box flexDirection="column">
        <Text bold>Quit without writing? Your answers changed and will be lost.</Text>
        <Text>y: quit · n/Esc: stay</Text>
      </Box>
    );
  }
  if (s.step === 'writing') return <Text>Writing…</Text>;

  const launchable = p.setup.steps.length > 0;
  const items =
    s.step === 'written'
      ? [
          { key: 'exit', value: 'exit', label: 'Done: exit (the paths and the command are printed)' },
          { key: 'preset', value: 'preset', label: 'Save these answers as a user preset…' },
          ...(launchable ? [{ key: 'launch', value: 'launch', label: 'Launch now in the log pane' }] : []),
        ]
      : [
          { key: 'dir', value: 'dir', label: 'Write to a directory (accelerate_config.yaml + ds_config.json)…' },
          {
            key: 'default',
            value: 'default',
            label: clip(`Write as accelerate's default config: ${p.deps.defaultConfigPath}`, w - 2),
          },
          { key: 'preset', value: 'preset', label: 'Save the answers as a user preset…' },
          ...(launchable
            ? [
                {
                  key: 'launch',
                  value: 'launch',
                  label: `Launch the ${p.setup.steps.length} step(s) in the log pane (writes the setup's two config files first)`,
                },
              ]
            : []),
          { key: 'back', value: 'back', label: 'Back to the review' },
          { key: 'quit', value: 'quit', label: 'Quit without writing' },
        ];
  return (
    <Box flexDirection="column">
      {s.step === 'written' ? (
        s.lines.map((l, i) => (
          <Text key={i} color={i === s.lines.length - 1 ? tint('good') : undefined} wrap="truncate">
            {clip(l, w)}
          </Text>
        ))
      ) : (
        <Text bold>
          {p.hasErrors ? 'Finish (validation reports errors: see the preview; writing is still allowed):' : 'Finish:'}
        </Text>
      )}
      <List
        items={items}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(item) => {
          setNote(null);
          if (item.value === 'dir') setS({ step: 'dir', text: '.' });
          else if (item.value === 'default') startWrite({ kind: 'default' });
          else if (item.value === 'preset')
            setS({
              step: 'presetName',
              text: p.setup.name === 'custom' ? 'my-setup' : p.setup.name,
              after: s.step === 'written' ? 'written' : 'menu',
            });
          else if (item.value === 'launch') {
            if (s.step === 'written') p.onExit({ code: 0, summary: s.lines, launch: s.setup });
            // The launch writes the setup's own files (a preset's paths), with backups, before the first step.
            else p.onExit({ code: 0, summary: [], launch: p.setup });
          } else if (item.value === 'back') p.onBack();
          else if (item.value === 'exit') p.onExit({ code: 0, summary: s.step === 'written' ? s.lines : [] });
          else quit();
        }}
      />
      {noteLine}
    </Box>
  );
}
