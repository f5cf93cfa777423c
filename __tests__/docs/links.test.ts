/**
 * The documentation's links hold: in README.md and every page under docs/, each relative link names a file or
 * folder of the checkout and each `#anchor` a heading of its page (GitHub's slugs, duplicates numbered as GitHub
 * numbers them); each repository path written in backticks (`src/...`, `__tests__/...`, `scripts/...`, ...)
 * exists; and each test a promise names (docs/design/promises.md: `__tests__/x.test.ts`: "its name ...") is in
 * the file it cites. Markdown is read with marked's lexer, slugs are github-slugger's.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import GithubSlugger from 'github-slugger';
import { type Token, type Tokens, marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

/** Top-level folders whose paths, written in backticks, must exist. */
const REPO_PATH_RE = /^(src|__tests__|scripts|components|bin|presets|docs|\.ci)\/[\w.@/-]*$/;
/** A module of this repository, by its extension (what users write is YAML, JSON or Python). */
const MODULE_RE = /^[\w.@/-]+\.(ts|tsx|mjs)$/;
/** A repository path to a file written in prose (outside backticks and code blocks). */
const PROSE_PATH_RE = /\b(?:src|__tests__|scripts|components|bin)\/[\w.@/-]*\.(?:tsx?|mjs|py|json|yaml)\b/g;
/** A link that leaves the checkout: a URL with a scheme, or a protocol-relative one. */
const EXTERNAL_RE = /^([a-z][a-z0-9+.-]*:|\/\/)/i;

/** README.md and every Markdown page under docs/, as paths relative to the checkout. */
function docFiles(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    if (!existsSync(join(ROOT, dir))) return;
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk('docs');
  return out;
}

/** The tokens of a Markdown file, every nested token (table cells, list items, emphasis) visited. */
function tokensOf(file: string): Token[] {
  const all: Token[] = [];
  marked.walkTokens(marked.lexer(readFileSync(join(ROOT, file), 'utf8')), (t) => {
    all.push(t);
  });
  return all;
}

/** A heading's text as GitHub renders it (code without its backticks, emphasis and links as their text). */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((t) => {
      if ('tokens' in t && t.tokens && t.type !== 'codespan') return plainText(t.tokens);
      if (t.type === 'html') return '';
      return 'text' in t ? t.text : '';
    })
    .join('');
}

/** The anchors a page offers: GitHub's slug of each heading (a repeated one gets -1, -2, ...). */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const t of tokensOf(file))
    if (t.type === 'heading') anchors.add(slugger.slug(plainText((t as Tokens.Heading).tokens)));
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let a = anchorCache.get(file);
  if (!a) {
    a = anchorsOf(file);
    anchorCache.set(file, a);
  }
  return a;
}

/** What is wrong with one link of `file`, or null when it resolves. */
function brokenLink(file: string, href: string): string | null {
  if (EXTERNAL_RE.test(href)) return null;
  const hash = href.indexOf('#');
  const pathPart = decodeURIComponent(hash < 0 ? href : href.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(href.slice(hash + 1));
  const target = pathPart === '' ? file : relative(ROOT, join(ROOT, dirname(file), pathPart));
  if (target.startsWith('..')) return `${href}: leaves the checkout`;
  if (!existsSync(join(ROOT, target))) return `${href}: no file ${target}`;
  if (anchor === null) return null;
  if (!target.endsWith('.md') || statSync(join(ROOT, target)).isDirectory())
    return `${href}: an anchor into a non-page`;
  return anchors(target).has(anchor) ? null : `${href}: ${target} has no heading #${anchor}`;
}

/** Every broken link of a page. */
function brokenLinks(file: string): string[] {
  const out: string[] = [];
  for (const t of tokensOf(file)) {
    if (t.type !== 'link' && t.type !== 'image') continue;
    const why = brokenLink(file, (t as Tokens.Link).href);
    if (why) out.push(why);
  }
  return out;
}

/** What is wrong with a path a page writes in backticks, or null: a repository path must exist, and a module of
 * ours (`.ts`, `.tsx`, `.mjs`) is written as its repository path, so a reader finds it. */
function badCodePath(text: string): string | null {
  const p = text.trim();
  if (REPO_PATH_RE.test(p)) return existsSync(join(ROOT, p)) ? null : `${p}: no such file or folder`;
  if (MODULE_RE.test(p) && !existsSync(join(ROOT, p))) return `${p}: a module named without its repository path`;
  return null;
}

/** Every repository path a page names that does not exist: in backticks, and in its prose. */
function missingPaths(file: string): string[] {
  const out: string[] = [];
  for (const t of tokensOf(file)) {
    if (t.type === 'codespan') {
      const why = badCodePath((t as Tokens.Codespan).text);
      if (why) out.push(why);
    } else if (t.type === 'text' && !('tokens' in t && t.tokens)) {
      for (const m of (t as Tokens.Text).text.matchAll(PROSE_PATH_RE))
        if (!existsSync(join(ROOT, m[0]))) out.push(`${m[0]}: no such file or folder`);
    }
  }
  return out;
}

/** A promise's test citations: `path`: "name", "name" (`...` in a name stands for words left out). */
function citations(cell: string): { path: string; names: string[] }[] {
  const out: { path: string; names: string[] }[] = [];
  for (const part of cell.split(/;\s+(?=`)/)) {
    const m = /^`([^`]+\.(?:test\.tsx?|scenario\.mjs))`:?\s*(.*)$/s.exec(part.trim());
    if (!m) continue;
    const names = [...m[2]!.matchAll(/"((?:[^"\\]|\\.)+)"/g)].map((q) => q[1]!.replace(/\\(.)/g, '$1'));
    out.push({ path: m[1]!, names });
  }
  return out;
}

/** Apostrophes as typed or as typeset, one character. */
const sameQuotes = (s: string) => s.replace(/[\u2018\u2019]/g, "'");

/** Whether a test file holds a cited name: each part between the `...` that leave words out, in order. */
function holdsName(text: string, name: string): boolean {
  const body = sameQuotes(text);
  let at = 0;
  for (const part of sameQuotes(name).split('...')) {
    const p = part.trim();
    if (p === '') continue;
    const i = body.indexOf(p, at);
    if (i < 0) return false;
    at = i + p.length;
  }
  return true;
}

/** Every test name a promise cites that its file does not hold. */
function missingTestNames(file: string): string[] {
  const out: string[] = [];
  for (const t of tokensOf(file)) {
    if (t.type !== 'table') continue;
    for (const row of (t as Tokens.Table).rows) {
      const cell = row[row.length - 1]?.text ?? '';
      for (const c of citations(cell)) {
        if (!existsSync(join(ROOT, c.path))) continue; // named by missingPaths
        const text = readFileSync(join(ROOT, c.path), 'utf8');
        for (const n of c.names) if (!holdsName(text, n)) out.push(`${c.path}: "${n}"`);
      }
    }
  }
  return out;
}

/** Every page of docs/ (or docs/design/) that a module, script or test names and that does not exist. */
function missingPagesNamedByCode(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'fixtures' && e.name !== 'node_modules') walk(p);
      } else if (/\.(tsx?|mjs)$/.test(e.name)) {
        for (const m of readFileSync(join(ROOT, p), 'utf8').matchAll(/\bdocs\/(?:design\/)?[\w-]+\.md\b/g))
          if (!existsSync(join(ROOT, m[0]))) out.push(`${p}: ${m[0]}`);
      }
    }
  };
  for (const d of ['src', 'components', 'bin', 'scripts', '__tests__']) walk(d);
  return out;
}

describe('the documentation', () => {
  const files = docFiles();

  it('is README.md and the pages under docs/', () => {
    expect(files).toContain('README.md');
  });

  it.each(files)('%s: every relative link and #anchor resolves', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it.each(files)('%s: every repository path in backticks exists', (file) => {
    expect(missingPaths(file)).toEqual([]);
  });

  it.each(files)('%s: every test a promise names is in the file it cites', (file) => {
    expect(missingTestNames(file)).toEqual([]);
  });

  it('every docs page the code names exists (in a message or a comment)', () => {
    expect(missingPagesNamedByCode()).toEqual([]);
  });

  it('README.md is a page a user reads: at most 400 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(400);
  });
});
