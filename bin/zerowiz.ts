// The shipped entry point: wires the plain CLI (src/) to the lazily loaded Ink views (components/).
import { fileURLToPath } from 'node:url';
import { WATCHDOG_ARG, setBinPath } from '../src/launch/entry.js';
import { main } from '../src/main.js';

if (process.argv[2] === WATCHDOG_ARG) {
  // Run by the watchdog of a zerowiz that ended before its run did (src/launch/watchdog.ts).
  await (await import('../src/launch/watchdog.js')).finishAfterZerowiz(process.argv.slice(3));
} else {
  setBinPath(fileURLToPath(import.meta.url));
  const code = await main(process.argv.slice(2), {
    runWizard: async (opts) => (await import('../components/wizard/run.js')).runWizard(opts),
    runLogPane: async (opts) => (await import('../components/launch/run.js')).runLogPane(opts),
  });
  process.exitCode = code;
}
