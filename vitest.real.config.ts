import { defineConfig } from 'vitest/config';

// The real accelerate tier (`npm run test:real`): tests that run the real accelerate from .venv-real.
// One file at a time: a real `accelerate launch` keeps both cores busy.
export default defineConfig({
  test: {
    include: ['__tests__/real/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
