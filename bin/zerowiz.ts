// The shipped entry point: wires the plain CLI (src/) to the lazily loaded Ink views (components/).
import { main } from '../src/main.js';

const code = await main(process.argv.slice(2), {
  runWizard: async (opts) => (await import('../components/wizard/run.js')).runWizard(opts),
  runLogPane: async (opts) => (await import('../components/launch/run.js')).runLogPane(opts),
});
process.exitCode = code;
