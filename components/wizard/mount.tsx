import { render } from 'ink';
import { App, type AppDeps } from './App.js';
import type { WizardResult } from '../../src/wizard/index.js';

/**
 * Makes the first frame Ink writes start from a cleared screen, in the same write: whatever was painted
 * ahead (see startText.ts) can never show through, and nothing blinks in between.
 */
function clearUnderFirstFrame(out: NodeJS.WriteStream): () => void {
  const write = out.write;
  out.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === 'string' && chunk.includes('\n')) {
      out.write = write;
      return (write as (...a: unknown[]) => boolean).call(out, `\x1b[H\x1b[J${chunk}`, ...rest);
    }
    return (write as (...a: unknown[]) => boolean).call(out, chunk, ...rest);
  } as typeof out.write;
  return () => {
    out.write = write;
  };
}

/** Renders the wizard until it finishes; resolves with how it ended. The caller restores the terminal. */
export async function mountWizard(
  deps: AppDeps,
  configPath: string | undefined,
  painted = false,
  startIndex = 0,
): Promise<WizardResult> {
  const unpatch = painted ? clearUnderFirstFrame(process.stdout) : () => undefined;
  try {
    return await run(deps, configPath, startIndex);
  } finally {
    unpatch();
  }
}

async function run(deps: AppDeps, configPath: string | undefined, startIndex: number): Promise<WizardResult> {
  let result: WizardResult = { code: 1, summary: ['zerowiz: the wizard stopped unexpectedly; nothing written.'] };
  let resolveResult: (r: WizardResult) => void = () => undefined;
  const got = new Promise<WizardResult>((res) => {
    resolveResult = res;
  });
  const app = render(
    <App deps={deps} configPath={configPath} startIndex={startIndex} onExit={(r: WizardResult) => resolveResult(r)} />,
    {
      exitOnCtrlC: false,
      patchConsole: false,
      maxFps: 120,
    },
  );
  result = await Promise.race([got, app.waitUntilExit().then(() => result)]);
  app.unmount();
  await app.waitUntilExit().catch(() => undefined);
  return result;
}
