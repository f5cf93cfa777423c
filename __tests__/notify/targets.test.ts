/**
 * The targets of --notify, a preset's notify: list and ZEROWIZ_NOTIFY: URLs with their style (from the host or
 * a prefix), commands as words or argument arrays, bad ones refused with one line, and labels that never hold a
 * URL's secret parts.
 */
import { describe, expect, it } from 'vitest';
import {
  envTextOf,
  parseTarget,
  specsOfEnvText,
  targetsFromEnv,
  uniqueTargets,
  type NotifyTarget,
} from '../../src/notify/index.js';
import { UsageError } from '../../src/text/index.js';

const SLACK = 'https://hooks.slack.com/services/T0001/B0002/SeCrEtToKeN123';
const DISCORD = 'https://discord.com/api/webhooks/1234567890/DiScOrDsEcReT';

function url(t: NotifyTarget): Extract<NotifyTarget, { kind: 'url' }> {
  if (t.kind !== 'url') throw new Error(`not a URL target: ${t.label}`);
  return t;
}

describe('a URL target', () => {
  it('takes its style from the host: ntfy.sh, Slack, Discord, Teams, else JSON', () => {
    expect(url(parseTarget('https://ntfy.sh/my-runs-7f3a')).style).toBe('ntfy');
    expect(url(parseTarget(SLACK)).style).toBe('slack');
    expect(url(parseTarget(DISCORD)).style).toBe('discord');
    expect(url(parseTarget('https://acme.webhook.office.com/webhookb2/abc')).style).toBe('teams');
    expect(url(parseTarget('https://prod-12.westeurope.logic.azure.com:443/workflows/x')).style).toBe('teams');
    expect(url(parseTarget('http://127.0.0.1:8080/hook')).style).toBe('json');
    // discord.com outside its webhook path is any endpoint.
    expect(url(parseTarget('https://discord.com/other')).style).toBe('json');
  });

  it('takes a style before the scheme (a self-hosted ntfy), and refuses an unknown one', () => {
    const t = url(parseTarget('ntfy+https://ntfy.example.org/topic'));
    expect(t).toMatchObject({ style: 'ntfy', url: 'https://ntfy.example.org/topic' });
    expect(() => parseTarget('pager+https://x.example/y')).toThrow(/'pager\+' is not a notification style/);
  });

  it('labels show the scheme and host only, with a fingerprint that tells two apart', () => {
    const a = parseTarget(SLACK);
    const b = parseTarget(SLACK.replace('123', '124'));
    expect(a.label).toMatch(/^https:\/\/hooks\.slack\.com\/… \[[0-9a-f]{4}\]$/);
    expect(a.label).not.toBe(b.label);
    const withUser = parseTarget('https://alice:pa55word@example.org/x?token=abc');
    expect(withUser.label).not.toMatch(/alice|pa55word|token|abc/);
    expect(parseTarget('https://example.org').label).toMatch(/^https:\/\/example\.org \[/);
  });

  it('refuses other schemes, and a bad URL without echoing it', () => {
    expect(() => parseTarget('ftp://example.org/x')).toThrow(/only http:\/\/ and https:\/\/ URLs/);
    try {
      parseTarget('https://[not-a-host/SeCrEt');
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(UsageError);
      expect((e as Error).message).not.toContain('SeCrEt');
    }
  });
});

describe('a command target', () => {
  it('is split into words as written, quotes grouping, nothing expanded', () => {
    const t = parseTarget('mail -s "zerowiz: {title}" me@example.org');
    expect(t).toMatchObject({ kind: 'command', argv: ['mail', '-s', 'zerowiz: {title}', 'me@example.org'] });
    expect(parseTarget('echo $HOME *.txt')).toMatchObject({ argv: ['echo', '$HOME', '*.txt'] });
    expect(t.label).toMatch(/^command mail \[[0-9a-f]{4}\]$/);
  });

  it('refuses shell syntax (it runs without a shell), with the way to use one', () => {
    for (const bad of ['mail me < /etc/passwd', 'a | b', 'a; b', 'a && b'])
      expect(() => parseTarget(bad)).toThrow(/runs without a shell/);
  });

  it('takes an argument array as it is', () => {
    expect(parseTarget(['sendmail', '-t', 'a b'])).toMatchObject({ kind: 'command', argv: ['sendmail', '-t', 'a b'] });
    expect(() => parseTarget([])).toThrow(/needs at least the program/);
  });
});

describe('ZEROWIZ_NOTIFY', () => {
  it('holds one target per line; a line of URLs is one target each; a JSON array is an argument array', () => {
    const text = `https://ntfy.sh/a https://ntfy.sh/b\nmail -s x me@example.org\n["logger", "-t", "zerowiz run"]\n\n`;
    expect(specsOfEnvText(text)).toEqual([
      'https://ntfy.sh/a',
      'https://ntfy.sh/b',
      'mail -s x me@example.org',
      ['logger', '-t', 'zerowiz run'],
    ]);
    expect(targetsFromEnv({ ZEROWIZ_NOTIFY: text })).toHaveLength(4);
    expect(targetsFromEnv({})).toEqual([]);
    expect(() => targetsFromEnv({ ZEROWIZ_NOTIFY: '["a", 1]' })).toThrow(/JSON array of strings/);
  });

  it('written back by the launcher, gives the same targets (styles that the host does not imply kept)', () => {
    const targets = [
      parseTarget('ntfy+https://ntfy.example.org/t'),
      parseTarget(SLACK),
      parseTarget(['mail', '-s', 'a b', 'me@example.org']),
      parseTarget('slack+http://127.0.0.1:9/x'),
    ];
    const again = targetsFromEnv({ ZEROWIZ_NOTIFY: envTextOf(targets) });
    expect(again).toEqual(targets);
  });

  it('a target given twice (preset and flag) is sent to once', () => {
    const t = parseTarget('https://ntfy.sh/a');
    expect(uniqueTargets([t, parseTarget('https://ntfy.sh/a'), parseTarget('https://ntfy.sh/b')])).toHaveLength(2);
  });
});
