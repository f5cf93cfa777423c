/**
 * THE numeric environment settings zerowiz reads (grace periods, poll intervals, timeouts, the stall watchdog's
 * thresholds), each with its bounds and unit in one table, and one parser: unset or empty keeps the reader's
 * default; anything else must be a number within the bounds, or it is bad input (one line and a hint, exit 2).
 * A launch checks them all before anything runs (envNumbersProblem), so its supervisor never meets a bad one.
 */
import { UsageError } from './errors.js';

/** The bounds and the unit of one setting. */
export interface EnvNumberRule {
  /** The smallest value taken. */
  min: number;
  /** Whether `min` itself is refused (a factor or a duration that must be above zero). */
  aboveMin?: boolean;
  /** What the number counts, for the message: `milliseconds`, `seconds`, `times the median step`. */
  unit: string;
}

/** Every numeric setting, by name. */
export const ENV_NUMBERS = {
  ZEROWIZ_SIGINT_GRACE_MS: { min: 0, unit: 'milliseconds' },
  ZEROWIZ_SIGTERM_GRACE_MS: { min: 0, unit: 'milliseconds' },
  ZEROWIZ_LOCK_WAIT_MS: { min: 0, unit: 'milliseconds' },
  ZEROWIZ_LIVE_SAVE_MS: { min: 100, unit: 'milliseconds' },
  ZEROWIZ_TELEMETRY_MS: { min: 100, unit: 'milliseconds' },
  ZEROWIZ_SLURM_POLL_MS: { min: 50, unit: 'milliseconds' },
  ZEROWIZ_SLURM_TIMEOUT_MS: { min: 0, aboveMin: true, unit: 'milliseconds' },
  ZEROWIZ_STALL_FACTOR: { min: 0, aboveMin: true, unit: 'times the median step' },
  ZEROWIZ_STALL_MIN_S: { min: 0, aboveMin: true, unit: 'seconds' },
  ZEROWIZ_STALL_STARTUP_S: { min: 0, aboveMin: true, unit: 'seconds' },
  ZEROWIZ_NOTIFY_TIMEOUT_MS: { min: 50, unit: 'milliseconds' },
  ZEROWIZ_NOTIFY_RETRY_MS: { min: 10, unit: 'milliseconds' },
  ZEROWIZ_PROBE_TIMEOUT_MS: { min: 100, unit: 'milliseconds' },
} as const satisfies Record<string, EnvNumberRule>;

/** The name of a numeric setting. */
export type EnvNumberName = keyof typeof ENV_NUMBERS;

/** Why the setting's value is not taken, or null (unset, empty, or a number within its bounds). */
function problem(name: EnvNumberName, text: string | undefined): UsageError | null {
  if (text === undefined || text.trim() === '') return null;
  const rule: EnvNumberRule = ENV_NUMBERS[name];
  const v = Number(text);
  const bound = `${rule.aboveMin ? 'above' : 'at least'} ${rule.min}`;
  if (Number.isFinite(v) && (rule.aboveMin ? v > rule.min : v >= rule.min)) return null;
  return new UsageError(
    `${name}=${JSON.stringify(text)} is not a number of ${rule.unit} ${bound}`,
    `set it to a number ${bound}, or unset it for zerowiz's default`,
  );
}

/** The setting's value, or `fallback` when it is unset or empty. Throws UsageError for any other value out of its bounds. */
export function envNumber(env: NodeJS.ProcessEnv, name: EnvNumberName, fallback: number): number {
  const p = problem(name, env[name]);
  if (p) throw p;
  const text = env[name];
  return text === undefined || text.trim() === '' ? fallback : Number(text);
}

/** The first numeric setting of `env` that is not taken, as the UsageError to throw, or null. */
export function envNumbersProblem(env: NodeJS.ProcessEnv): UsageError | null {
  for (const name of Object.keys(ENV_NUMBERS) as EnvNumberName[]) {
    const p = problem(name, env[name]);
    if (p) return p;
  }
  return null;
}
