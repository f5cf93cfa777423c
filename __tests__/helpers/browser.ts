/**
 * Debian's chromium, driven by playwright-core, for the tests that read a page as a person would: headless,
 * no sandbox (tests run as root), a fresh profile, and no network at all (offline, and every request that
 * is not the page's own file recorded, so a test can say none left). `browserMissing()` says why the tests
 * cannot run here (they are then skipped with that reason, never passed).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from './paths.js';

/** Where Debian installs chromium. */
export const CHROMIUM = '/usr/bin/chromium';
/** Screenshots and other things a person may want to look at after a run of the tests (gitignored). */
export const ARTIFACTS = join(ROOT, '__tests__', '.artifacts');

/** Why chromium cannot be used here, or null. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM) ? null : `no ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`;
}

/** A browser session: its context, and the folder of its profile (removed by close). */
export interface BrowserSession {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Starts chromium with a fresh profile and the network off. */
export async function startBrowser(): Promise<BrowserSession> {
  const profile = mkdtempSync(join(tmpdir(), 'zw-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    offline: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** What a page did while it was open: console messages of level error, requests, dialogs, page errors. */
export interface PageWatch {
  errors: string[];
  requests: string[];
  dialogs: string[];
}

/** Opens a file in a new page at a width, recording what it does. */
export async function openFile(
  s: BrowserSession,
  file: string,
  opts: { width: number; height?: number; colorScheme?: 'light' | 'dark' },
): Promise<{ page: Page; watch: PageWatch }> {
  const page = await s.context.newPage();
  const watch: PageWatch = { errors: [], requests: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') watch.errors.push(m.text());
  });
  page.on('pageerror', (e) => watch.errors.push(String(e)));
  page.on('request', (r) => watch.requests.push(r.url()));
  page.on('dialog', (d) => {
    watch.dialogs.push(d.message());
    void d.dismiss();
  });
  await page.setViewportSize({ width: opts.width, height: opts.height ?? 900 });
  await page.emulateMedia({ colorScheme: opts.colorScheme ?? 'light' });
  await page.goto(`file://${file}`);
  return { page, watch };
}

/** A folder of the artefacts for one test file (made if needed). */
export function artifactDir(name: string): string {
  const d = join(ARTIFACTS, name);
  mkdirSync(d, { recursive: true });
  return d;
}
