/**
 * Mounts the wizard on the terminal and resolves with the exit code. The terminal module (src/terminal.ts)
 * restores the terminal (alternate screen left, cursor shown, raw mode off) on every way out: finishing,
 * q, Ctrl+C, a signal, an exception, the terminal closing. Files are only written by the finish step's
 * atomic writes, so an abort never leaves one. The Launch action goes through the same launch lifecycle as
 * `zerowiz launch` (src/launch/lifecycle.ts).
 */
import { existsSync } from 'node:fs';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import v8 from 'node:v8';
import {
  SIGNAL_EXIT_CODES,
  Screen,
  drainOutput,
  endAfterHangup,
  onHangup,
  onTerminalSignals,
  writeErr,
  writeOut,
} from '../../src/terminal.js';
import type { WizardOptions } from '../../src/ui.js';
import { accelerateDefaultConfig } from '../../src/paths.js';
import { formatBytesShort } from '../../src/units.js';
import type { AppDeps } from './App.js';
import type { WizardResult } from './FinishScreen.js';
import { paintStartFrame } from './startText.js';

const MIN_COLUMNS = 80;
const MIN_ROWS = 24;

/**
 * The real dependencies: detection, presets, import, the model catalog and the writers. The modules
 * behind them (execa, zod, diff, ...) load after the first frame, off the start-up path.
 */
export async function realDeps(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<AppDeps> {
  const defaultConfigPath = accelerateDefaultConfig(env);
  const later = () =>
    Promise.all([
      import('../../src/presets.js'),
      import('../../src/import.js'),
      import('../../src/models.js'),
      import('../../src/wizard/finish.js'),
    ]);
  let mods: Awaited<ReturnType<typeof later>> | null = null;
  // Loading starts when the app asks (after its first frame), so it never competes with Ink's start-up.
  let kick: () => void = () => undefined;
  const kicked = new Promise<void>((res) => {
    kick = res;
  });
  const loaded = kicked.then(later).then((m) => (mods = m));
  const need = () => {
    if (!mods) throw new Error('still loading; try again');
    return mods;
  };
  return {
    ready: loaded.then(() => undefined),
    startLoading: () => kick(),
    async detect() {
      const { detectHost, describeGpus } = await import('../../src/detect.js');
      const host = await detectHost({ env, topology: true });
      const g = host.gpu;
      const gpuEnv = {
        gpuCount: g.detected ? g.gpus.length : null,
        gpuMemoryBytes: g.minMemoryBytes,
        cpuMemoryBytes: host.cpuMemoryBytes,
        interconnect: host.interconnect,
      };
      const text = g.detected ? describeGpus(g) : 'GPUs not detected: asked instead';
      return { env: gpuEnv, description: `${text} · RAM ${formatBytesShort(host.cpuMemoryBytes)}` };
    },
    listPresets: () => need()[0].listPresets(env),
    importConfig: (path) => need()[1].importAccelerateConfig(path, cwd),
    loadModels: () => need()[2].loadModelCatalog(),
    defaultConfigPath,
    defaultConfigExists: existsSync(defaultConfigPath),
    planWrite: (setup, target) => need()[3].planWrite(setup, target, env, cwd),
    carryOut: (plan) => need()[3].carryOut(plan),
    summarize: (results, setup) => need()[3].summaryLines(results, setup),
    savePreset: (name, setup, description, given) => need()[0].savePreset(name, setup, description, given, env),
  };
}

/**
 * Runs `load` with the global `fetch` hidden. yoga-layout (Ink's layout engine) ships its WebAssembly
 * inline as base64 and, when `fetch` exists, decodes it by fetching a data: URL, which makes Node load
 * its whole HTTP client (undici) first: 40-80 ms of start-up. Without `fetch` it decodes the bytes
 * directly. `fetch` is put back as it was (a lazy getter) before anything else runs.
 */
export async function withoutFetch<T>(load: () => Promise<T>): Promise<T> {
  const desc = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (!desc?.configurable) return load();
  Object.defineProperty(globalThis, 'fetch', { value: undefined, configurable: true, writable: true });
  try {
    return await load();
  } finally {
    Object.defineProperty(globalThis, 'fetch', desc);
  }
}

/**
 * How far the young generation may grow while the wizard runs: semi-spaces of 8 MiB (V8's default
 * lets them grow to 16 MiB). Ink builds every frame cell by cell, so each frame allocates megabytes of
 * short-lived objects (about 6 MB at 100x30), and V8 answers that rate by growing the young
 * generation to its maximum: 32 MB of semi-spaces, which is what took the wizard's peak memory from
 * about 90 MB to 113 MB during a few dozen key presses. At 8 MiB a frame still dies young; at 4 MiB
 * its live objects are promoted mid-frame and the old space fills with them (median lower, but some
 * runs peaked at 111 MB); 1-2 MiB slows keypresses. A power of two, so that doubling lands on it.
 */
export const YOUNG_SEMI_SPACE_CAP = 8 * 2 ** 20;

/**
 * Caps the young generation's semi-spaces at `cap` bytes from now on: after each scavenge, growth is
 * turned off (`--semi-space-growth-factor=1`) once the new space has reached the cap, and back on if V8
 * has shrunk it below. `--max-semi-space-size` would do this but is read only when the heap is set
 * up; the growth factor is read at each growth, so it works at run time. Returns the undo.
 */
export function capYoungGeneration(cap = YOUNG_SEMI_SPACE_CAP): () => void {
  let growing = true;
  const setGrowth = (grow: boolean) => {
    if (grow === growing) return;
    growing = grow;
    v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
  };
  const check = () => {
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    // new_space's size counts both semi-spaces.
    if (space) setGrowth(space.space_size / 2 < cap);
  };
  const observer = new PerformanceObserver((list) => {
    if (
      list
        .getEntries()
        .some((e) => (e as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR)
    )
      check();
  });
  observer.observe({ entryTypes: ['gc'] });
  check();
  return () => {
    observer.disconnect();
    setGrowth(true);
  };
}

/** Mounts the wizard; resolves with the exit code (0 done or quit, 130 aborted, 1 an unexpected error). */
export async function runWizard(opts: WizardOptions): Promise<number> {
  const out = process.stdout;
  const uncapYoung = capYoungGeneration();
  // Raw mode from the start: keys typed while the views load wait in the terminal, unechoed, and Ink
  // reads them as soon as it listens.
  const screen = Screen.open({ altScreen: true, home: true, raw: true });
  const restore = () => {
    uncapYoung();
    screen.restore();
  };
  // A signal (or the terminal closing) ends the wizard at once: nothing is half written, since every
  // write is atomic, and the terminal is put back first.
  const offSignals = onTerminalSignals((signal) => {
    restore();
    if (signal === 'SIGHUP') endAfterHangup();
    else process.exit(SIGNAL_EXIT_CODES[signal]);
  });
  // The terminal gone without a signal (its input failed or ended): nobody is left to answer.
  const offHangup = onHangup(() => {
    restore();
    endAfterHangup();
  });
  let result: WizardResult = { code: 1, summary: ['zerowiz: the wizard stopped unexpectedly; nothing written.'] };
  try {
    const deps = await realDeps();
    // The start screen, painted now as Ink will draw it: the user reads it while Ink loads.
    const painted = out.isTTY ? paintStartFrame(out.columns || MIN_COLUMNS, out.rows || MIN_ROWS, deps) : null;
    if (painted) screen.write(painted);
    const { mountWizard } = await withoutFetch(() => import('./mount.js'));
    result = await mountWizard(deps, opts.configPath, painted !== null);
  } catch (err) {
    result = {
      code: 1,
      summary: [
        `zerowiz: unexpected error: ${err instanceof Error ? err.message : String(err)}`,
        'nothing was written by the step that failed.',
      ],
    };
  } finally {
    restore();
    offSignals();
    offHangup();
  }
  // Ink's last frame and the screen's restore go before the summary.
  await drainOutput();
  const write = result.code === 0 ? writeOut : writeErr;
  for (const line of result.summary) write(`${line}\n`);
  if (result.launch) {
    const { launch } = await import('../../src/launch/lifecycle.js');
    const { runLogPane } = await import('../launch/run.js');
    return launch({ setup: result.launch, source: 'wizard', pane: runLogPane });
  }
  return result.code;
}
