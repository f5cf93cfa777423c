/**
 * Before each test file: the seal (seal.ts) between the test and the machine, so the suite passes alike on a
 * laptop, a GPU box with `nvidia-smi` and an accelerate default config, and a Slurm login node.
 *
 * The unit tier's launches run stand-in trainers through a stand-in accelerate (a Node script, not Python),
 * which the checks before each pass would rightly refuse: those launches leave the checks out with the
 * launch's own environment variable. The tests of the checks before a pass (__tests__/e2e/launch-gate.test.ts)
 * clear it; `zerowiz check` ignores it.
 */
import { sealProcessEnv } from './seal.js';

sealProcessEnv();
process.env.ZEROWIZ_SKIP_CHECKS = 'all';
