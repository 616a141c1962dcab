import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests share one Redis; each uses its own key prefix, so files may run in parallel.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
