/**
 * The work of `zerowiz notify test [TARGET...]`: the sample event (src/notify/sample.ts) to each target, one
 * attempt each with a run's time limits, and a line per target saying what happened (never a URL's secret).
 */
import { UsageError } from '../text/index.js';
import { findPreset } from '../setups/index.js';
import { attemptLimits, deliverOnce, samplePayload } from '../notify/index.js';
import { NOTIFY_ENV } from '../notify/index.js';
import { launchTargets } from './notify-targets.js';
import * as output from './output.js';

/** `zerowiz notify test`; resolves with the exit code. */
export async function notifyCommand(_action: string, given: string[], flags: { preset?: string }): Promise<number> {
  const preset = flags.preset !== undefined ? findPreset(flags.preset) : null;
  const env = given.length > 0 || preset ? { ...process.env, [NOTIFY_ENV]: undefined } : process.env;
  const targets = launchTargets({ notify: given }, preset, env);
  if (targets.length === 0)
    throw new UsageError(
      'no notification target to test',
      `give one: zerowiz notify test https://ntfy.sh/YOUR-TOPIC (or set ${NOTIFY_ENV}, or --preset NAME)`,
    );
  const payload = samplePayload(process.cwd());
  const limits = attemptLimits(process.env);
  const childEnv = { ...process.env, [NOTIFY_ENV]: undefined };
  const results = await Promise.all(targets.map((t) => deliverOnce(t, payload, limits, childEnv)));
  let failed = 0;
  results.forEach((r, i) => {
    const took = `${(r.ms / 1000).toFixed(2)} s`;
    if (r.ok) output.say(`${targets[i]!.label}: sent (${r.why}, ${took})`);
    else {
      failed++;
      output.warn(`${targets[i]!.label}: not sent: ${r.why} (${took})`);
    }
  });
  return failed > 0 ? 1 : 0;
}
