/**
 * What each role of the bin loads before it can do its work, bundled as the bin bundles it (lazy imports left out:
 * they load when called). The wizard's first frame is painted before Ink loads, from what the start screen needs
 * only; the command line's surface leaves the question catalog and the estimator to the commands that use them; a
 * launch leaves its supervisor's code to the supervisor's process, which loads no command line.
 */
import { describe, expect, it } from 'vitest';
import { bundledInputs } from '../helpers/bundle.js';

/** The inputs of `entry` among `heavy` (node_modules packages by name, project files by path). */
async function loaded(entry: string, heavy: readonly string[]): Promise<string[]> {
  const inputs = await bundledInputs(entry);
  return heavy.filter((h) => inputs.some((f) => f.includes(h)));
}

describe('what loads', () => {
  it("the wizard's first frame: no YAML, no schemas, no question catalog, no estimator, no layout of the other screens", async () => {
    const heavy = [
      'node_modules/yaml/',
      'node_modules/zod/',
      'src/config/questions.ts',
      'src/config/keys.ts',
      'src/estimate/',
      'src/wizard/layout.ts',
    ];
    expect(await loaded('components/wizard/run.ts', heavy)).toEqual([]);
  }, 30_000);

  it('the command line: no question catalog and no estimator before a command runs', async () => {
    expect(
      await loaded('src/main.ts', ['src/config/questions.ts', 'src/estimate/estimate.ts', 'node_modules/yaml/']),
    ).toEqual([]);
  }, 30_000);

  it("a launch: none of its supervisor's code; the supervisor: no command line", async () => {
    // The checks of the first pass are the launch's own (they run before the pane opens: src/launch/precheck.ts).
    const supervisorCode = ['src/launch/supervisor.ts', 'src/launch/runner.ts', 'src/launch/watchdog.ts'];
    expect(await loaded('src/commands/launch-run.ts', supervisorCode)).toEqual([]);
    expect(
      await loaded('src/launch/supervisor.ts', ['node_modules/commander/', 'src/cli.ts', 'src/commands/']),
    ).toEqual([]);
    expect(await loaded('bin/zerowiz.ts', ['src/main.ts', 'src/launch/supervisor.ts'])).toEqual([]);
  }, 30_000);
});
