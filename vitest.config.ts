import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__tests__/**/*.test.{ts,tsx}'],
    exclude: ['**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real-terminal and subprocess tests spawn the built bin; two cores, so keep workers modest.
    maxWorkers: 2,
  },
});
