/**
 * What a launch ran, as a type: a preset (a name or a file, as typed), the newest run again (`--last`), or the
 * wizard's setup (saved as a preset, or not). The run record keeps it as text (sourceText); a fix that names the
 * preset to change takes it from here (sourcePreset), and has none to name for `--last` or an unsaved wizard setup.
 */

/** What a launch ran. */
export type LaunchSource =
  | { kind: 'preset'; ref: string }
  | { kind: 'last'; runId: string }
  | { kind: 'wizard'; preset: string | null };

/** A preset, by name or file, as typed. */
export function presetSource(ref: string): LaunchSource {
  return { kind: 'preset', ref };
}

/** The text run.json keeps: `NAME` (or the file), `--last (RUN)`, `wizard` (or the preset the wizard saved). */
export function sourceText(s: LaunchSource): string {
  switch (s.kind) {
    case 'preset':
      return s.ref;
    case 'last':
      return `--last (${s.runId})`;
    case 'wizard':
      return s.preset ?? 'wizard';
  }
}

/** The preset (name or file) a fix can name to change the setup, or null when the run came from none. */
export function sourcePreset(s: LaunchSource): string | null {
  return s.kind === 'preset' ? s.ref : s.kind === 'wizard' ? s.preset : null;
}

/** The source a run record's text stands for (sourceText read back): what `attach` knows of a run's launch. */
export function sourceOfRecord(text: string): LaunchSource {
  const last = /^--last \((.*)\)$/.exec(text);
  if (last) return { kind: 'last', runId: last[1]! };
  if (text === 'wizard') return { kind: 'wizard', preset: null };
  return { kind: 'preset', ref: text };
}
