/**
 * Where a run's notifications go: the targets of `launch --notify TARGET` (repeatable), a preset's `notify:`
 * list and the ZEROWIZ_NOTIFY environment variable, parsed once here.
 *
 * - A URL (`https://` or `http://`) gets a POST. Its style decides the body: ntfy (the text, with Title, Tags
 *   and Priority headers), Slack, Discord and Teams incoming webhooks (their own JSON), or any other endpoint
 *   (the whole payload as JSON). The style is read from the host (ntfy.sh, hooks.slack.com, discord.com,
 *   *.webhook.office.com, *.logic.azure.com), or given before the scheme: `ntfy+https://ntfy.example.org/t`.
 * - Anything else is a command, run without a shell: its words as written (`mail -s {title} me@example.org`;
 *   quotes group words, nothing is expanded), or an argument array (a YAML list, or a JSON array on a line of
 *   ZEROWIZ_NOTIFY). `{title}`, `{event}` and `{run}` in a word become the event's.
 *
 * A URL's secret parts never leave this module except to the request itself: every other place shows its
 * label (text/redact.ts redactUrl: `https://hooks.slack.com/… [3fa2]`).
 */
import { basename } from 'node:path';
import { parse as parseShellWords } from 'shell-quote';
import { UsageError } from '../text/index.js';
import { printable } from '../text/index.js';
import { redactUrl, secretPrint } from '../text/index.js';

/** How a URL target wants its body. */
export type NotifyStyle = 'ntfy' | 'slack' | 'discord' | 'teams' | 'json';

/** Every style, as a URL's prefix names it (`slack+https://...`). */
export const NOTIFY_STYLES: readonly NotifyStyle[] = ['ntfy', 'slack', 'discord', 'teams', 'json'];

/** One target, parsed. `label` is what may be shown or recorded (never a secret). */
export type NotifyTarget =
  | { kind: 'url'; url: string; style: NotifyStyle; label: string }
  | { kind: 'command'; argv: string[]; label: string };

/** A target as written: one string (a URL or a command line), or an argument array. */
export type TargetSpec = string | readonly string[];

/** The environment variable that holds targets (one per line), for every launch. */
export const NOTIFY_ENV = 'ZEROWIZ_NOTIFY';

/** The longest target text accepted (a webhook URL is ~150 characters). */
const MAX_TARGET_CHARS = 4096;

const HINT =
  'a target is a URL (https://ntfy.sh/TOPIC, a Slack, Discord or Teams webhook, any JSON endpoint) or a command such as `mail -s {title} me@example.org`';

/** The style a URL's host implies. */
function styleOfHost(u: URL): NotifyStyle {
  const host = u.hostname.toLowerCase();
  if (host === 'ntfy.sh') return 'ntfy';
  if (host === 'hooks.slack.com') return 'slack';
  if ((host === 'discord.com' || host === 'discordapp.com') && u.pathname.startsWith('/api/webhooks/'))
    return 'discord';
  if (host.endsWith('.webhook.office.com') || host.endsWith('.logic.azure.com')) return 'teams';
  return 'json';
}

/** A URL target (`STYLE+` before the scheme names the style). Throws UsageError. */
function urlTarget(text: string, where: string): NotifyTarget {
  const m = /^([a-z]+)\+(https?:\/\/.*)$/i.exec(text);
  const url = m ? m[2]! : text;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`${where}: ${redactUrl(url)} is not a URL`, HINT);
  }
  if (u.hostname === '') throw new UsageError(`${where}: ${redactUrl(url)} names no host`, HINT);
  const style = m ? m[1]!.toLowerCase() : styleOfHost(u);
  if (!(NOTIFY_STYLES as readonly string[]).includes(style))
    throw new UsageError(
      `${where}: '${printable(style)}+' is not a notification style`,
      `the styles: ${NOTIFY_STYLES.map((s) => `${s}+https://...`).join(', ')}`,
    );
  return { kind: 'url', url, style: style as NotifyStyle, label: redactUrl(url) };
}

/** A command line's words as written (quotes group, nothing expanded). Throws UsageError on shell syntax. */
function commandWords(text: string, where: string): string[] {
  const words: string[] = [];
  for (const w of parseShellWords(text, (name: string) => `$${name}`)) {
    if (typeof w === 'string') words.push(w);
    else if ('pattern' in w) words.push(w.pattern);
    else
      throw new UsageError(
        `${where}: a command target runs without a shell, so '${printable('op' in w ? String(w.op) : '#')}' has no meaning in it`,
        "write the command's words only; for a shell, give it as a command: sh -c '...'",
      );
  }
  return words;
}

/** A command target's label: its program's name (its arguments may hold an address or a token). */
function commandLabel(argv: readonly string[]): string {
  return `command ${printable(basename(argv[0] ?? ''))} [${secretPrint(argv.join('\0'))}]`;
}

/** Parses one target. `where` names its origin in the message (`--notify`, `ZEROWIZ_NOTIFY`, `preset x: notify.1`). */
export function parseTarget(spec: TargetSpec, where = '--notify'): NotifyTarget {
  if (typeof spec !== 'string') {
    const argv = [...spec];
    if (argv.length === 0 || argv[0] === '')
      throw new UsageError(`${where}: a command target needs at least the program`, HINT);
    return { kind: 'command', argv, label: commandLabel(argv) };
  }
  const text = spec.trim();
  if (text === '') throw new UsageError(`${where}: the target is empty`, HINT);
  if (text.length > MAX_TARGET_CHARS)
    throw new UsageError(`${where}: the target is longer than ${MAX_TARGET_CHARS} characters`, HINT);
  if (/^([a-z]+\+)?https?:\/\//i.test(text)) return urlTarget(text, where);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text))
    throw new UsageError(`${where}: only http:// and https:// URLs can be notified`, HINT);
  const argv = commandWords(text, where);
  if (argv.length === 0) throw new UsageError(`${where}: the command target is empty`, HINT);
  return { kind: 'command', argv, label: commandLabel(argv) };
}

/**
 * The target specs of ZEROWIZ_NOTIFY: one per line; a line of URLs separated by spaces is one target per URL;
 * a line that is a JSON array of strings is an argument array.
 */
export function specsOfEnvText(text: string): TargetSpec[] {
  const out: TargetSpec[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('[')) {
      out.push(jsonArgv(line));
      continue;
    }
    const words = line.split(/\s+/);
    if (words.length > 1 && words.every((w) => /^([a-z]+\+)?https?:\/\//i.test(w))) out.push(...words);
    else out.push(line);
  }
  return out;
}

/** A JSON array of strings, as a line of ZEROWIZ_NOTIFY gives an argument array. */
function jsonArgv(line: string): string[] {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    v = null;
  }
  if (!Array.isArray(v) || !v.every((w) => typeof w === 'string'))
    throw new UsageError(`${NOTIFY_ENV}: a line starting with [ must be a JSON array of strings`, HINT);
  return v as string[];
}

/** The targets of the environment (none when ZEROWIZ_NOTIFY is unset or blank). Throws UsageError. */
export function targetsFromEnv(env: NodeJS.ProcessEnv): NotifyTarget[] {
  const text = env[NOTIFY_ENV];
  if (text === undefined || text.trim() === '') return [];
  return specsOfEnvText(text).map((s, i) => parseTarget(s, `${NOTIFY_ENV} (target ${i + 1})`));
}

/** Targets written back as ZEROWIZ_NOTIFY's text (what the launcher hands its supervisor or a Slurm job). */
export function envTextOf(targets: readonly NotifyTarget[]): string {
  return targets.map((t) => (t.kind === 'url' ? prefixed(t) : JSON.stringify(t.argv))).join('\n');
}

/** A URL with its style named when the host alone would not give it back. */
function prefixed(t: Extract<NotifyTarget, { kind: 'url' }>): string {
  let implied: NotifyStyle = 'json';
  try {
    implied = styleOfHost(new URL(t.url));
  } catch {}
  return implied === t.style ? t.url : `${t.style}+${t.url}`;
}

/** The same targets once each (a preset's and the flag's may repeat one), in the order first given. */
export function uniqueTargets(targets: readonly NotifyTarget[]): NotifyTarget[] {
  const seen = new Set<string>();
  return targets.filter((t) => {
    const key = t.kind === 'url' ? `u:${t.style}:${t.url}` : `c:${JSON.stringify(t.argv)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
