/** `zerowiz generate`'s work, loaded only when the command runs. */
import { UsageError } from '../text/index.js';
import { toAccelerateYaml, toDeepSpeedJson } from '../config/index.js';
import { answerFindings, fileFindings, validate } from '../rules/index.js';
import { formatWrite } from '../fs/index.js';
import { setupInDir, writeConfigFiles } from '../config/index.js';
import { launchLines } from '../config/index.js';
import { whichSync } from '../proc/index.js';
import { envFromDetection, processPlan } from '../rules/index.js';
import { withDefaults, type DetectedEnv } from '../config/index.js';
import { pathFlag } from '../fs/index.js';
import { setupFromOptions } from './setup-from-flags.js';
import { reportFindings, reportImportNotes } from './report.js';
import * as output from './output.js';

/** Validates, then prints or writes; resolves with the exit code. */
export async function runGenerate(opts: Record<string, unknown>): Promise<number> {
  if (opts.out === undefined && opts.print === undefined) {
    throw new UsageError(
      'generate needs --out DIR or --print yaml|json',
      'e.g. zerowiz generate --mode 2 --num-processes 8 --out ./configs',
    );
  }
  if (opts.out !== undefined && opts.print !== undefined)
    throw new UsageError('--out and --print cannot be used together', 'pick one');
  if (typeof opts.out === 'string' && opts.out.trim() === '')
    throw new UsageError('--out is empty', 'give a directory, e.g. --out . or --out ./configs');
  const out = typeof opts.out === 'string' ? pathFlag('--out', opts.out) : undefined;
  const { flagged, given, setup: fromFlags, importNotes, importFindings } = setupFromOptions(opts);
  let setup = fromFlags;
  // The process count: the flag, the preset's or the imported file's; else the GPUs detected here x the
  // machines (as the wizard's default), and a flag is checked against them.
  let env: DetectedEnv | null = null;
  // Without nvidia-smi on PATH there is nothing to detect (and its spawner never loads).
  if ((!('num_processes' in given) || flagged.includes('num_processes')) && whichSync('nvidia-smi') !== null) {
    const { detectHost } = await import('../machine/detect.js');
    env = envFromDetection(await detectHost({}));
    // Only the defaults depend on what was detected: the preset or --from file is not read again.
    setup = { ...setup, answers: withDefaults(given, env) };
  }
  if (out !== undefined) setup = setupInDir(setup, out);
  const plan = env ? processPlan(given, env) : null;
  if (plan?.source === 'detected')
    output.note(
      `num_processes ${plan.numProcesses}: the ${env!.gpuCount} GPU(s) nvidia-smi found here x ${setup.answers.num_machines} machine(s) (--num-processes overrides it)`,
    );
  const findings = [
    ...importFindings,
    ...validate(setup),
    ...answerFindings(setup.answers, flagged, 'flag'),
    ...fileFindings(setup, 'flag'),
    ...(plan?.findings ?? []),
  ];
  // A refusal is one line and its hint: what the import changed is said only for a setup that is written.
  const firstError = findings.find((f) => f.level === 'error');
  if (firstError && !opts.force) {
    throw new UsageError(`${firstError.message}`, `${firstError.fix} (or pass --force to write it anyway)`);
  }
  reportImportNotes(importNotes);
  reportFindings(findings);
  if (firstError) for (const f of findings) output.finding(f);
  if (opts.print === 'yaml') {
    output.data(toAccelerateYaml(setup));
    return 0;
  }
  if (opts.print === 'json') {
    output.data(`${toDeepSpeedJson(setup)}\n`);
    return 0;
  }
  const results = await writeConfigFiles(setup);
  output.lines(results.map((r) => formatWrite(r)));
  output.lines(launchLines(setup).map((line) => `run: ${line}`));
  return 0;
}
