/**
 * The request each kind of endpoint takes for one payload: ntfy's text with headers, Slack's, Discord's and
 * Teams' webhook JSON, the payload itself for any other endpoint, and the stdin, words and environment of a
 * command target. Pure: no I/O.
 */
import type { NotifyPayload, Severity } from './message.js';
import type { NotifyStyle } from './targets.js';

/** One HTTP request's headers and body. */
export interface HttpRequestBody {
  headers: Record<string, string>;
  body: string;
}

/** ntfy's largest message (bytes; a longer one becomes an attachment, which ntfy.sh limits). */
const NTFY_MAX_BYTES = 4096;
/** Discord's largest `content`. */
const DISCORD_MAX_CHARS = 2000;
/** Slack's and Teams' text, cut well inside their limits. */
const CHAT_MAX_CHARS = 3500;

/** ntfy's tag (an emoji short code) per severity. */
const NTFY_TAGS: Record<Severity, string> = {
  info: 'information_source',
  success: 'white_check_mark',
  warning: 'warning',
  error: 'rotating_light',
};
/** ntfy's priority (1-5) per severity. */
const NTFY_PRIORITY: Record<Severity, string> = { info: '3', success: '3', warning: '4', error: '5' };
/** A Teams card's colour per severity. */
const TEAMS_COLOR: Record<Severity, string> = { info: '0078D4', success: '2E7D32', warning: 'B26A00', error: 'C62828' };

/** A header value: ASCII as is, anything else as an RFC 2047 encoded word (ntfy decodes them). */
export function headerValue(text: string): string {
  const one = text.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(one) ? one : `=?UTF-8?B?${Buffer.from(one, 'utf8').toString('base64')}?=`;
}

/** Text cut to `max` characters, marked. */
function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Text cut to `max` UTF-8 bytes (never inside a character). */
function cutBytes(text: string, max: number): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  let out = text.slice(0, max);
  while (Buffer.byteLength(`${out}…`, 'utf8') > max) out = out.slice(0, -1);
  return `${out}…`;
}

/** Slack's mrkdwn reads `<`, `>` and `&` as markup (`<!channel>` pings everyone): escaped. */
function slackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** The request a URL target of `style` gets. */
export function httpRequestFor(style: NotifyStyle, p: NotifyPayload): HttpRequestBody {
  switch (style) {
    case 'ntfy':
      return {
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          title: headerValue(cut(p.title, 250)),
          tags: NTFY_TAGS[p.severity],
          priority: NTFY_PRIORITY[p.severity],
        },
        body: cutBytes(p.text, NTFY_MAX_BYTES),
      };
    case 'slack':
      return {
        headers: JSON_HEADERS,
        body: JSON.stringify({ text: cut(slackText(`*${p.title}*\n${p.text}`), CHAT_MAX_CHARS) }),
      };
    case 'discord':
      return {
        headers: JSON_HEADERS,
        // No mention in a log line may ping anyone.
        body: JSON.stringify({
          username: 'zerowiz',
          content: cut(`**${p.title}**\n${p.text}`, DISCORD_MAX_CHARS),
          allowed_mentions: { parse: [] },
        }),
      };
    case 'teams':
      return { headers: JSON_HEADERS, body: JSON.stringify(teamsCard(p)) };
    case 'json':
      return { headers: JSON_HEADERS, body: JSON.stringify(p) };
  }
}

/** A Teams message card (an incoming webhook's format): the title, the colour, the text a line each. */
function teamsCard(p: NotifyPayload): Record<string, unknown> {
  const text = cut(p.text, CHAT_MAX_CHARS).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: cut(p.title, 250),
    title: cut(p.title, 250),
    themeColor: TEAMS_COLOR[p.severity],
    text: text.split('\n').join('\n\n'),
  };
}

/** What a command target gets: its words with `{title}`, `{event}` and `{run}` filled, stdin, environment. */
export function commandRequestFor(argv: readonly string[], p: NotifyPayload) {
  const fill = (w: string) =>
    w.replace(/\{(title|event|run)\}/g, (_m, k: string) =>
      k === 'title' ? p.title : k === 'event' ? p.event : p.run.id,
    );
  return {
    argv: argv.map(fill),
    stdin: `${p.title}\n\n${p.text}\n`,
    env: {
      ZEROWIZ_EVENT: p.event,
      ZEROWIZ_TITLE: p.title,
      ZEROWIZ_RUN_ID: p.run.id,
      ZEROWIZ_PAYLOAD: JSON.stringify(p),
    },
  };
}
