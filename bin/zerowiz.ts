// The shipped entry point: wires the plain CLI (src/) to the lazily loaded terminal views (components/), and
// runs the two roles a launch starts the bin in: a local run's supervisor and its watchdog's finisher.
import { fileURLToPath } from 'node:url';
import { JOB_WATCH_ARG, SUPERVISOR_ARG, WATCHDOG_ARG, setBinPath } from '../src/launch/index.js';

setBinPath(fileURLToPath(import.meta.url));
if (process.argv[2] === WATCHDOG_ARG) {
  // Run by the watchdog of a supervisor that ended before its run did (src/launch/watchdog.ts).
  await (await import('../src/launch/watchdog.js')).finishAfterZerowiz(process.argv.slice(3));
} else if (process.argv[2] === SUPERVISOR_ARG) {
  // A local run's supervisor (src/launch/supervisor.ts): started by `zerowiz launch` with the plan on stdin.
  await (await import('../src/launch/supervisor.js')).superviseMain();
} else if (process.argv[2] === JOB_WATCH_ARG) {
  // A Slurm job's watch on its batch node (src/slurm/job-watch.ts): its series and notifications, started by the job's script.
  await (await import('../src/slurm/job-watch.js')).jobWatchMain(process.argv.slice(3));
} else {
  // The command line loads only here: the supervisor and the finisher above never pay for it.
  const { main } = await import('../src/main.js');
  const code = await main(process.argv.slice(2), {
    runWizard: async (opts) => (await import('../components/wizard/run.js')).runWizard(opts),
    runLogPane: async (opts) => (await import('../components/pane/run.js')).runLogPane(opts),
  });
  process.exitCode = code;
}
