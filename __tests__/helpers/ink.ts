/** Helpers for component tests with ink-testing-library: wait for frames and for Ink's stdin, never sleep. */
import type { render } from 'ink-testing-library';
import type { AppDeps } from '../../components/wizard/App.js';

/** What ink-testing-library's render returns. */
export type Rendered = ReturnType<typeof render>;

/** Resolves with the first frame that satisfies `pred` (polls the frames Ink writes; no fixed sleep). */
export async function frame(r: Rendered, pred: (f: string) => boolean, timeoutMs = 5000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const f = r.lastFrame() ?? '';
    if (pred(f)) return f;
    if (Date.now() > end) throw new Error(`timed out; last frame:\n${f}`);
    await new Promise((res) => setImmediate(res));
  }
}

/** Resolves once `fn` has been called (or rejects with the frame after a while). */
export async function called(r: Rendered, fn: { mock: { calls: unknown[] } }, timeoutMs = 4000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (fn.mock.calls.length === 0) {
    if (Date.now() > end) throw new Error(`not called; last frame:\n${r.lastFrame()}`);
    await new Promise((res) => setImmediate(res));
  }
}

/**
 * Resolves once Ink reads the test stdin. A real terminal keeps keys typed before that in its buffer;
 * the test stdin only signals them once, so a test writes after this.
 */
export async function listening(r: Rendered): Promise<void> {
  const stdin = r.stdin as unknown as NodeJS.EventEmitter;
  const end = Date.now() + 4000;
  while (stdin.listenerCount('readable') === 0) {
    if (Date.now() > end) throw new Error('Ink never listened to stdin');
    await new Promise((res) => setImmediate(res));
  }
}

/** Wizard dependencies that do nothing (no presets, no import, no writes); override what a test needs. */
export function standInDeps(over: Partial<AppDeps> = {}): AppDeps {
  return {
    detect: async () => ({
      env: { gpuCount: 8, gpuMemoryBytes: 80 * 2 ** 30, cpuMemoryBytes: 2 ** 40 },
      description: '8 GPUs (stand-in)',
    }),
    listPresets: () => ({ presets: [], problems: [] }),
    importConfig: () => {
      throw new Error('no import in this test');
    },
    loadModels: () => [],
    defaultConfigExists: false,
    defaultConfigPath: '/nonexistent/default_config.yaml',
    planWrite: () => {
      throw new Error('no write in this test');
    },
    carryOut: async () => [],
    summarize: () => [],
    savePreset: async () => '',
    ...over,
  };
}
