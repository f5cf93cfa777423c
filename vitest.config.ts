import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__tests__/**/*.test.{ts,tsx}'],
    // __tests__/real needs the real accelerate: `npm run test:real` (vitest.real.config.ts) runs it.
    exclude: ['**/node_modules/**', '__tests__/real/**'],
    // Every run on a hostile host (a GPU box and Slurm login node), each file sealed from it: helpers/seal.ts.
    globalSetup: ['__tests__/helpers/global-setup.ts'],
    setupFiles: ['__tests__/helpers/setup-env.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real-terminal and subprocess tests spawn the built bin; two cores, so keep workers modest.
    maxWorkers: 2,
  },
});
