/**
 * The finish screen: it renders the finish machine (src/wizard/finishState.ts) that the wizard's reducer
 * holds: the menu, the directory and preset-name fields, the overwrite diff, the Slurm form, and what was
 * written. It owns no state and no keys but its list's and its fields' (the wizard handles Esc, y/n and the
 * diff's scrolling through the key tables).
 */
import type React from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/index.js';
import { TextField } from '../common/index.js';
import type { Answers } from '../../src/config/index.js';
import type { Setup } from '../../src/config/index.js';
import type { SlurmShape } from '../../src/slurm/index.js';
import type { WriteResult } from '../../src/fs/index.js';
import type { DiffLine, WritePlan, WriteTarget } from '../../src/wizard/index.js';
import {
  SLURM_FIELDS,
  type FinishItem,
  type FinishState,
  type SlurmField,
  type SlurmPartition,
  type SlurmValues,
} from '../../src/wizard/index.js';
import { clip, softWrap } from '../../src/text/index.js';
import { tint } from '../common/index.js';
import { Indicator, PlainItem } from './parts.js';
import { DIFF_CHROME_ROWS, FINISH_NOTE_MAX_ROWS, finishCheckRows } from '../../src/wizard/index.js';

/** What the finish screen needs from outside (real functions in the bin, stand-ins in tests). */
export interface FinishDeps {
  planWrite(setup: Setup, target: WriteTarget): WritePlan;
  carryOut(plan: WritePlan): Promise<WriteResult[]>;
  /** The lines printed after a write: paths and the launch command. */
  summarize(results: WriteResult[], setup: Setup): string[];
  /** `from`: the preset the wizard started from (its notify: list goes with the setup), or null. */
  savePreset(
    name: string,
    setup: Setup,
    description: string,
    given: Partial<Answers>,
    from: string | null,
  ): Promise<string>;
  defaultConfigPath: string;
  /** Slurm, when its sbatch is on PATH: the partitions (sinfo) and the check of a form field. */
  slurm?: SlurmDeps | null;
  /**
   * Checks a launch (or, with the Slurm form's answers, a submission) as `zerowiz launch` checks it, before the
   * wizard ends: null when it can start, else its one line and fix. Absent: every launch is accepted.
   */
  checkLaunch?(
    setup: Setup,
    slurm: SlurmValues | null,
    csvLog: boolean | 'auto' | undefined,
  ): Promise<{ error: string; hint: string | null } | null>;
  /**
   * The machine checks of a setup's steps run in `cwd` (src/checks/summary.ts checkSummary; a test's
   * stand-in otherwise): their count and the lines of what to fix.
   */
  runChecks?(setup: Setup, cwd: string): Promise<{ summary: string; lines: string[] }>;
}

/** What the Slurm form opens with. */
export interface SlurmForm {
  /** sinfo's partitions; empty, with `error` saying why, when it could not tell. */
  partitions: SlurmPartition[];
  error: string | null;
  /** The setup's own shape (src/slurm/shape.ts shapeOfSetup): the nodes and GPUs fields' defaults. */
  shape: SlurmShape;
}

/** What the Slurm finish action needs. */
export interface SlurmDeps {
  /** Loads the Slurm modules (never before the form opens) and lists the partitions; rejects only if they cannot load. */
  openForm(setup: Setup): Promise<SlurmForm>;
  /** Why a field's value cannot be submitted (the same checks as `launch --slurm`'s flags), or null. */
  checkField(field: SlurmField, value: string, partitions: readonly SlurmPartition[]): string | null;
}

/** What the diff's file headers say: the file on disk (---) against what zerowiz would write (+++). */
export const DIFF_LABELS = { old: '--- on disk: ', new: '+++ zerowiz: ' } as const;

/** `…` and the end of `text` when it is wider than `width` (a path keeps its file name). */
function clipStart(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? '…'.slice(0, width) : `…${text.slice(text.length - (width - 1))}`;
}

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

const SLURM_LABELS: Record<SlurmField, string> = {
  partition: 'Partition',
  nodes: 'Nodes',
  gpusPerNode: 'GPUs per node',
  time: 'Time limit',
  account: 'Account',
};
const SLURM_HELP: Record<SlurmField, string> = {
  partition: 'the partition to run in (empty: the cluster default)',
  nodes: "nodes for the job (default: the setup's machines)",
  gpusPerNode: "GPUs of each node (default: the setup's processes per machine)",
  time: 'HH:MM:SS or D-HH:MM:SS (empty: the partition limit)',
  account: 'the account to charge (empty: your default)',
};

/** Props of the finish screen. */
export interface FinishScreenProps {
  finish: FinishState;
  items: { id: FinishItem; label: string }[];
  /** The diff shown while an overwrite waits for y/n. */
  diff: DiffLine[];
  hasErrors: boolean;
  width: number;
  height: number;
  isActive: boolean;
  onChoose: (item: FinishItem) => void;
  onText: (text: string) => void;
  onSubmit: () => void;
  /** Where a Launch writes the setup's config files (finish.ts launchWritesNote), said under the menu. */
  launchNote?: string | null;
  /** What a Launch starts (finish.ts launchQuestion): asked before it does. */
  launchQuestion?: string;
  /** The run before it starts (src/wizard/finish.ts finishEstimateLines): step time, ETA and price, one per line. */
  estimateNote?: string | null;
}

/** The finish screen. */
export function FinishScreen(p: FinishScreenProps): React.JSX.Element {
  const st = p.finish.step;
  const w = p.width;
  const note = p.finish.note;
  // The note is read whole (a refused launch's reason and its fix): wrapped, at most NOTE_MAX_ROWS rows.
  const noteLine = note ? (
    <Box flexDirection="column">
      {softWrap(note, w)
        .slice(0, FINISH_NOTE_MAX_ROWS)
        .map((l, i) => (
          <Text key={i} color={tint('warn')} wrap="truncate">
            {l}
          </Text>
        ))}
    </Box>
  ) : null;
  const field = (prompt: string, text: string) => (
    <Box flexDirection="column">
      <Text bold wrap="truncate">
        {clip(prompt, w)}
      </Text>
      <Box>
        <Text color={tint('accent')}>{'❯ '}</Text>
        <TextField
          value={text}
          focus={p.isActive}
          selected
          width={w - 2}
          onChange={p.onText}
          onSubmit={() => p.onSubmit()}
        />
      </Box>
      {noteLine}
    </Box>
  );
  if (st.step === 'dir')
    return field(
      'Directory for accelerate_config.yaml and ds_config.json (~ and $VARS work; Enter: write, Esc: back):',
      st.text,
    );
  if (st.step === 'presetName')
    return field('Name of the user preset (letters, digits, . _ -; Enter: save, Esc: back):', st.text);
  if (st.step === 'confirm') {
    const rows = Math.max(3, p.height - DIFF_CHROME_ROWS);
    const maxTop = Math.max(0, p.diff.length - rows);
    const top = Math.min(st.scroll, maxTop);
    const shown = p.diff.slice(top, top + rows);
    const where = p.diff.length > rows ? ` · lines ${top + 1}-${top + shown.length} of ${p.diff.length}` : '';
    return (
      <Box flexDirection="column">
        <Text bold wrap="truncate">
          {clip(
            st.launch
              ? `The launch writes these files; they exist and would change (a backup of each is kept)${where}:`
              : `These files exist and would change (a backup of each is kept)${where}:`,
            w,
          )}
        </Text>
        {shown.map((l, i) => (
          <DiffRow key={i} line={l} width={w} />
        ))}
        <Text bold wrap="truncate">
          {clip(
            st.launch
              ? 'Overwrite? y: write (backups kept) and launch · n/Esc: cancel · ↑↓ PgUp/PgDn: scroll'
              : 'Overwrite? y: write (backups kept) · n/Esc: cancel · ↑↓ PgUp/PgDn: scroll',
            w,
          )}
        </Text>
      </Box>
    );
  }
  if (st.step === 'launchAsk')
    return (
      <Box flexDirection="column">
        {softWrap(p.launchQuestion ?? 'Launch the steps now?', w).map((l, i) => (
          <Text key={i} bold>
            {l}
          </Text>
        ))}
        <Text color={tint('accent')} wrap="truncate">
          {clip('y/Enter: launch now · n/Esc: not now (back to the menu)', w)}
        </Text>
      </Box>
    );
  if (st.step === 'planning' && st.target.kind === 'launch')
    return <Text>Looking at the files the launch writes…</Text>;
  if (st.step === 'planning' || st.step === 'writing') return <Text>Writing…</Text>;
  if (st.step === 'saving') return <Text>Saving the preset…</Text>;
  if (st.step === 'slurmLoading') return <Text>Asking Slurm for its partitions (sinfo)…</Text>;
  if (st.step === 'checkingLaunch' || st.step === 'launchReady')
    return (
      <Text>
        {st.slurm
          ? 'Checking the job as `zerowiz launch --slurm` would…'
          : 'Checking the launch as `zerowiz launch` would…'}
      </Text>
    );
  if (st.step === 'checking')
    return (
      <Text wrap="truncate">
        {clip(
          "Checking this machine for the steps (accelerate's Python, the driver, DeepSpeed's ops, memory, disks)…",
          w,
        )}
      </Text>
    );
  if (st.step === 'slurm') {
    const parts = st.partitions.map((x) => (x.isDefault ? `${x.name} (default)` : x.name));
    return (
      <Box flexDirection="column">
        <Text bold wrap="truncate">
          {clip('Submit to Slurm: the same job as `zerowiz launch --slurm` (Enter: next, Esc: back)', w)}
        </Text>
        {SLURM_FIELDS.map((f, i) => {
          const label = `${SLURM_LABELS[f]}:`.padEnd(15);
          if (i === st.field)
            return (
              <Box key={f}>
                <Text color={tint('accent')}>{'❯ '}</Text>
                <Text bold>{label}</Text>
                <TextField
                  value={st.values[f]}
                  focus={p.isActive}
                  selected
                  width={w - 2 - label.length}
                  onChange={p.onText}
                  onSubmit={() => p.onSubmit()}
                />
              </Box>
            );
          return (
            <Text key={f} color={i < st.field ? undefined : tint('dim')} wrap="truncate">
              {clip(`  ${label}${st.values[f] === '' ? '(none)' : st.values[f]}`, w)}
            </Text>
          );
        })}
        <Text color={tint('dim')} wrap="truncate">
          {clip(SLURM_HELP[SLURM_FIELDS[st.field]!], w)}
        </Text>
        {SLURM_FIELDS[st.field] === 'partition' ? (
          <Text color={tint('dim')} wrap="truncate">
            {clip(
              st.listError
                ? `sinfo did not answer (${st.listError}); sbatch checks the partition`
                : `partitions: ${parts.join(', ') || '(none listed)'}`,
              w,
            )}
          </Text>
        ) : null}
        {noteLine}
      </Box>
    );
  }
  // The menu, or the menu after a write with the files written above it (wrapped, never cut); the commands
  // are in the preview's commands tab below, whole.
  const all = st.step === 'written' && p.finish.written ? p.finish.written.lines : null;
  const run = all ? all.indexOf('run:') : -1;
  const written = all
    ? [...(run >= 0 ? all.slice(0, run) : all), 'the commands to run: the preview below (Tab: commands)']
    : null;
  const checkRows = finishCheckRows(p.finish.checks, w);
  return (
    <Box flexDirection="column">
      {checkRows.map((l, i) => (
        <Text
          key={`c${i}`}
          wrap="truncate"
          color={/^FAIL/.test(l) ? tint('bad') : /^WARN/.test(l) ? tint('warn') : undefined}
        >
          {clip(l, w)}
        </Text>
      ))}
      {written ? (
        written
          .flatMap((l, i) => softWrap(l, w).map((x) => [x, i] as const))
          .map(([l, i], j) => (
            <Text key={j} color={i === written.length - 1 ? tint('good') : undefined}>
              {l}
            </Text>
          ))
      ) : (
        <Text bold>
          {p.hasErrors ? 'Finish (validation reports errors: see the preview; writing is still allowed):' : 'Finish:'}
        </Text>
      )}
      <List
        items={p.items.map((i) => ({ key: i.id, value: i.id, label: clip(i.label, w - 2) }))}
        initialIndex={Math.max(
          0,
          p.items.findIndex((i) => i.id === p.finish.cursor),
        )}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(item) => p.onChoose(item.value as FinishItem)}
      />
      {noteLine}
      {p.estimateNote
        ? p.estimateNote.split('\n').map((l, i) => (
            <Text key={`e${i}`} color={tint('dim')} wrap="truncate">
              {clip(l, w)}
            </Text>
          ))
        : null}
      {p.launchNote && !note && p.items.some((i) => i.id === 'launch')
        ? softWrap(p.launchNote, w).map((l, i) => (
            <Text key={`l${i}`} color={tint('dim')}>
              {l}
            </Text>
          ))
        : null}
    </Box>
  );
}
