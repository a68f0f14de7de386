import { defineConfig } from 'vitest/config';

// One config for every package. System tests (real sshd, nginx, databases, Pebble) live under
// test/system and need the environment that scripts/test-env prepares (setup.sh, pebble.sh and the
// pristine test host of test-host.sh).
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    // The pristine-host suites (test/system/fresh) run first, in their own invocation (run-tests.mjs).
    exclude: [
      ...(process.env.SITEPLANE_SYSTEM_TESTS === '1' ? [] : ['packages/*/test/system/**']),
      ...(process.env.SITEPLANE_SKIP_FRESH === '1' ? ['packages/*/test/system/fresh/**'] : []),
    ],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
