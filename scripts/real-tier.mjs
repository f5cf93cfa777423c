#!/usr/bin/env node
/**
 * `npm run test:real`: the real accelerate tier.
 *
 * 1. A project-local virtual environment, .venv-real/ (git-ignored), with torch, accelerate==1.15.0,
 *    transformers, safetensors and peft (the checkpoint tests write real LoRA files with them), installed
 *    ONLY from this machine's local wheel stores: the find-links, index and extra-index URLs and the
 *    constraints file that `pip config list` names, passed as the only indexes (the default PyPI index is
 *    unreachable here and pip would spend minutes retrying it). A marker file with the installed versions
 *    lets the next run reuse a good environment.
 * 2. vitest with vitest.real.config.ts (the tests under __tests__/real), with ZEROWIZ_REAL_PYTHON set.
 *
 * When the environment cannot be made (no python3, no local wheel store, pip fails) it prints a block that
 * says SKIPPED and why, and exits 0: a skip is never silent. `--venv-only` stops after step 1.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The environment's folder (ZEROWIZ_REAL_VENV moves it, e.g. for a test of the skip). */
export const VENV_DIR = process.env.ZEROWIZ_REAL_VENV ?? join(ROOT, '.venv-real');
const PY = join(VENV_DIR, 'bin', 'python');
const MARKER = join(VENV_DIR, 'zerowiz-real.json');
/** What the tier installs; accelerate is pinned to the version the tests were written against. */
const REQUIREMENTS = ['torch', 'accelerate==1.15.0', 'transformers', 'safetensors', 'peft'];
const MARKER_VERSION = 1;
const VERSIONS_PY =
  'import json, sys, torch, accelerate, transformers, yaml, safetensors, peft; print(json.dumps({"python": sys.version.split()[0], "torch": torch.__version__, "accelerate": accelerate.__version__, "transformers": transformers.__version__, "safetensors": safetensors.__version__, "peft": peft.__version__}))';

function log(line) {
  process.stderr.write(`real tier: ${line}\n`);
}

function skip(reason) {
  const bar = '='.repeat(78);
  process.stderr.write(`\n${bar}\nreal accelerate tier SKIPPED: ${reason}\n${bar}\n\n`);
  return { ready: false, reason };
}

/** Settings from `pip config list` (`scope.key='value'` lines); values of repeated keys are all kept. */
export function pipConfig(python) {
  const r = spawnSync(python, ['-m', 'pip', 'config', 'list'], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  const out = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^[^.]*\.([a-z-]+)='(.*)'$/.exec(line.trim());
    if (!m) continue;
    out[m[1]] = [...(out[m[1]] ?? []), ...m[2].split(/\s+/).filter(Boolean)];
  }
  return out;
}

/** pip's arguments for the local stores only, or a reason there are none. */
export function localIndexArgs(cfg) {
  const unique = (xs) => [...new Set(xs ?? [])];
  const indexes = unique([...(cfg['index-url'] ?? []), ...(cfg['extra-index-url'] ?? [])]).filter(
    (u) => u.startsWith('file:') || u.startsWith('/'),
  );
  const links = unique(cfg['find-links']).filter((l) => existsSync(l.replace(/^file:\/\//, '')));
  if (indexes.length === 0 && links.length === 0) return { reason: '`pip config list` names no local wheel store' };
  const args = [];
  if (indexes.length > 0) {
    args.push('--index-url', indexes[0]);
    for (const u of indexes.slice(1)) args.push('--extra-index-url', u);
  } else args.push('--no-index');
  for (const l of links) args.push('--find-links', l);
  for (const c of unique(cfg.constraint)) if (existsSync(c)) args.push('--constraint', c);
  return { args };
}

function versions() {
  if (!existsSync(PY)) return null;
  const r = spawnSync(PY, ['-c', VERSIONS_PY], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop());
  } catch {
    return null;
  }
}

/** Makes (or reuses) .venv-real; resolves with { ready, python } or { ready: false, reason }. */
export function ensureRealVenv() {
  const started = Date.now();
  if (existsSync(MARKER)) {
    try {
      const marker = JSON.parse(readFileSync(MARKER, 'utf8'));
      const now = versions();
      if (marker.version === MARKER_VERSION && now && JSON.stringify(now) === JSON.stringify(marker.installed)) {
        log(
          `reusing .venv-real (torch ${now.torch}, accelerate ${now.accelerate}, transformers ${now.transformers}, safetensors ${now.safetensors}, peft ${now.peft})`,
        );
        return { ready: true, python: PY, versions: now };
      }
    } catch {
      // a broken marker: make the environment again
    }
  }
  const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
  if (!python) return skip('no python3 on PATH');
  const cfg = pipConfig(python);
  if (!cfg) return skip(`\`${python} -m pip config list\` failed: no pip for ${python}`);
  const idx = localIndexArgs(cfg);
  if (!idx.args) return skip(idx.reason);
  log(`making .venv-real with ${python}; pip uses only: ${idx.args.join(' ')}`);
  rmSync(VENV_DIR, { recursive: true, force: true });
  const venv = spawnSync(python, ['-m', 'venv', VENV_DIR], { stdio: 'inherit' });
  if (venv.status !== 0) return skip(`\`${python} -m venv\` failed (exit ${venv.status})`);
  const pip = spawnSync(
    PY,
    [
      '-m',
      'pip',
      'install',
      '--disable-pip-version-check',
      '--no-input',
      '--retries',
      '0',
      '--timeout',
      '10',
      ...idx.args,
      ...REQUIREMENTS,
    ],
    // Nothing from pip's config files or PIP_* variables may add the default index back.
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PIP_'))),
        PIP_CONFIG_FILE: '/dev/null',
      },
    },
  );
  if (pip.status !== 0)
    return skip(`pip could not install ${REQUIREMENTS.join(' ')} from the local stores (exit ${pip.status})`);
  const now = versions();
  if (!now) return skip('the new environment cannot import torch, accelerate, transformers, safetensors and peft');
  writeFileSync(MARKER, `${JSON.stringify({ version: MARKER_VERSION, installed: now }, null, 2)}\n`);
  log(
    `made .venv-real in ${((Date.now() - started) / 1000).toFixed(0)} s: torch ${now.torch}, accelerate ${now.accelerate}, transformers ${now.transformers}, safetensors ${now.safetensors}, peft ${now.peft}`,
  );
  return { ready: true, python: PY, versions: now };
}

function main() {
  const started = Date.now();
  const venv = ensureRealVenv();
  if (!venv.ready) process.exit(0);
  if (process.argv.includes('--venv-only')) process.exit(0);
  const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const r = spawnSync(process.execPath, [vitest, 'run', '--config', join(ROOT, 'vitest.real.config.ts')], {
    stdio: 'inherit',
    cwd: ROOT,
    env: { ...process.env, ZEROWIZ_REAL_PYTHON: venv.python },
  });
  log(`finished in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  process.exit(r.status ?? 1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
