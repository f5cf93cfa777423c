/**
 * The command line's `--enable_csv_log` offer (the wizard has its own toggle): a DiffSynth-Studio training
 * step prints no loss, so before a launch zerowiz offers to add the flag for that run. On a terminal it asks
 * (y/n per step) when the checkout is known to take the flag (its parsers.py declares it); otherwise
 * `--csv-log` / `--no-csv-log` decide and a hint line says so. The flag goes into
 * the run's argv, commands.sh and run.json (the setup the run keeps), never into the preset.
 */
import { CSV_LOG_FLAG, csvLogOffer, withCsvLog, type CsvLogOffer } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { askLine } from '../proc/index.js';
import { RunError } from '../text/index.js';
import * as output from './output.js';

/** The flags that decide the offer. */
export interface CsvLogFlags {
  /** --csv-log (true), --no-csv-log (false), neither (undefined). */
  csvLog?: boolean;
  dryRun?: boolean;
}

/** Where DiffSynth will write the loss, as the user wrote the path. */
function where(s: CsvLogOffer['steps'][number]): string {
  return `${s.outputPath.replace(/\/+$/, '')}/loss.csv`;
}

/**
 * The setup to launch: with --enable_csv_log added to the DiffSynth training steps that lack it when the
 * user says so (`--csv-log`, or y at the question on a terminal); unchanged otherwise. Says what it did not
 * add and why (an older checkout, or a hint without a terminal). The offer is the wizard's (csvLogOffer).
 */
export async function offerCsvLog(
  setup: Setup,
  flags: CsvLogFlags,
  opts: { cwd: string; interactive: boolean },
): Promise<Setup> {
  const offer = csvLogOffer(setup.steps, opts.cwd);
  if (offer.note) output.note(offer.note);
  const accepted: CsvLogOffer['steps'] = [];
  for (const s of offer.steps) {
    if (flags.csvLog === true) accepted.push(s);
    if (flags.csvLog !== undefined) continue;
    const unsure = s.certain
      ? ''
      : `; zerowiz could not read diffsynth/diffusion/parsers.py to check this checkout has it (one without it stops with "unrecognized arguments")`;
    // Asked only when the checkout is known to take the flag: an unsure yes would stop the step.
    if (!opts.interactive || flags.dryRun || !s.certain) {
      output.hint(
        `step ${s.name} (DiffSynth-Studio) prints no loss${unsure}; --csv-log adds ${CSV_LOG_FLAG} for this run (DiffSynth then writes ${where(s)}), --no-csv-log leaves it out`,
      );
      continue;
    }
    const q = askLine(
      `zerowiz: step ${s.name} (DiffSynth-Studio) prints no loss; add ${CSV_LOG_FLAG} for this run so zerowiz can show it (DiffSynth writes ${where(s)}; the preset stays as it is)? [Y/n] `,
    );
    const a = (await q.answer)?.toLowerCase() ?? null;
    if (q.interrupted()) throw new RunError('Ctrl+C at the question: nothing was started', 130);
    const yes = a !== null && (a === '' || a === 'y' || a === 'yes');
    if (yes) accepted.push(s);
  }
  if (accepted.length > 0)
    output.say(`adding ${CSV_LOG_FLAG} to ${accepted.map((s) => s.name).join(', ')} for this run`);
  return withCsvLog(setup, { ...offer, steps: accepted }, true);
}
