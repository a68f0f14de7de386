import { defineConfig } from 'vitest/config';

// One config for every package. System tests (real sshd, nginx, databases, Pebble) live under
// test/system and need the environment that scripts/test-env/setup.sh prepares.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    exclude: process.env.SITEPLANE_SYSTEM_TESTS === '1' ? [] : ['packages/*/test/system/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
