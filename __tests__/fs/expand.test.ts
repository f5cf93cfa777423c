// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these are shell words written the way users type them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandPath, expandWord, homeFromPasswd, type ExpandContext } from '../../src/fs/expand.js';

const ctx = (env: NodeJS.ProcessEnv = {}, extra: Partial<ExpandContext> = {}): ExpandContext => ({
  env: { HOME: '/home/ada', ...env },
  cwd: '/work/run',
  homeOf: (u) => (u === 'bob' ? '/users/bob' : null),
  ...extra,
});
const value = (r: ReturnType<typeof expandPath>) => (r.ok ? r.value : `ERROR ${r.error}`);

describe('expandPath: what a shell would make of a path, resolved against the launch directory', () => {
  it.each([
    ['~', '/home/ada'],
    ['~/configs', '/home/ada/configs'],
    ['~/configs/', '/home/ada/configs'],
    ['~bob/cfg', '/users/bob/cfg'],
    ['~bob', '/users/bob'],
    ['$DATA/cache', '/mnt/data/cache'],
    ['${DATA}/cache', '/mnt/data/cache'],
    ['${DATA}x', '/mnt/datax'],
    ['$DATA-old', '/mnt/data-old'],
    ['${NOPE:-/tmp}/x', '/tmp/x'],
    ['${EMPTY:-/tmp}/x', '/tmp/x'],
    ['${EMPTY-/tmp}/x', '/x'], // set but empty: bash keeps the empty value
    ['cfg', '/work/run/cfg'],
    ['./cfg/../out', '/work/run/out'],
    ['/abs//path/', '/abs/path'],
    ['a$', '/work/run/a$'],
    ['price$5', '/work/run/price$5'], // bash would expand the positional $5; zerowiz has none and keeps it
    ['x/~/y', '/work/run/x/~/y'],
  ])('%s -> %s', (text, want) => {
    expect(value(expandPath(text, ctx({ DATA: '/mnt/data', EMPTY: '' })))).toBe(want);
  });

  it('never leaves a leading ~ to become a directory named "~"', () => {
    for (const t of ['~', '~/', '~/cfg', '~/a/b']) {
      const r = expandPath(t, ctx());
      expect(r.ok && !r.value.includes('~')).toBe(true);
    }
  });

  it('says so when a variable is unset instead of expanding it to nothing', () => {
    const r = expandPath('$OUT/cfg', ctx());
    expect(r).toMatchObject({ ok: false });
    if (!r.ok) {
      expect(r.error).toMatch(/\$OUT is not set/);
      expect(r.hint).toMatch(/export OUT=/);
    }
    expect(expandPath('${OUT}', ctx()).ok).toBe(false);
  });

  it('refuses an unknown ~user, an unclosed ${ and an empty path', () => {
    expect(expandPath('~nobody/x', ctx())).toMatchObject({
      ok: false,
      error: expect.stringMatching(/no user 'nobody'/),
    });
    expect(expandPath('${DATA/x', ctx({ DATA: '/d' }))).toMatchObject({ ok: false });
    expect(expandPath('${1}', ctx())).toMatchObject({ ok: false });
    expect(expandPath('   ', ctx())).toMatchObject({ ok: false, error: 'the path is empty' });
  });

  it('uses the given home when HOME is unset or empty', () => {
    expect(value(expandPath('~/x', { env: {}, cwd: '/', home: '/h' }))).toBe('/h/x');
    expect(value(expandPath('~/x', { env: { HOME: '' }, cwd: '/', home: '/h' }))).toBe('/h/x');
  });

  it('reports whether anything changed (the review shows the absolute result)', () => {
    expect(expandPath('/abs', ctx())).toEqual({ ok: true, value: '/abs', changed: false });
    expect(expandPath('rel', ctx())).toEqual({ ok: true, value: '/work/run/rel', changed: true });
  });
});

describe('expandWord: for arguments passed to a script (no relative resolution)', () => {
  it('expands ~ and variables but keeps a relative path relative', () => {
    expect(expandWord('~/data', ctx())).toEqual({ ok: true, value: '/home/ada/data', changed: true });
    expect(expandWord('./models/train', ctx())).toEqual({ ok: true, value: './models/train', changed: false });
    expect(expandWord('$RUN/out', ctx({ RUN: 'runs/7' }))).toEqual({ ok: true, value: 'runs/7/out', changed: true });
  });
});

describe('homeFromPasswd', () => {
  it('reads a user home from a passwd file, and null for an unknown user or a missing file', () => {
    const d = mkdtempSync(join(tmpdir(), 'zw-passwd-'));
    const f = join(d, 'passwd');
    writeFileSync(f, 'root:x:0:0:root:/root:/bin/bash\nbob:x:1000:1000:Bob,,,:/users/bob:/bin/sh\n');
    expect(homeFromPasswd('bob', f)).toBe('/users/bob');
    expect(homeFromPasswd('root', f)).toBe('/root');
    expect(homeFromPasswd('ann', f)).toBeNull();
    expect(homeFromPasswd('bob', join(d, 'missing'))).toBeNull();
  });
});
