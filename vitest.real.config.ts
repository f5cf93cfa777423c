import { defineConfig } from 'vitest/config';

// The real accelerate tier (`npm run test:real`): tests that run the real accelerate from .venv-real.
// One file at a time: a real `accelerate launch` keeps both cores busy.
export default defineConfig({
  test: {
    include: ['__tests__/real/**/*.test.ts'],
    // The same hostile host and seal as the unit tier (vitest.config.ts).
    globalSetup: ['__tests__/helpers/global-setup.ts'],
    setupFiles: ['__tests__/helpers/setup-env-real.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
