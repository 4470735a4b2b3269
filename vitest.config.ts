import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    expect: { requireAssertions: true },
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["src/**/*.test.ts"], testTimeout: 20_000 },
      },
      {
        extends: true,
        test: {
          name: "functional",
          include: ["suites/functional/**/*.test.ts"],
          globalSetup: ["suites/support/global-setup.ts"],
          // one worker, files in turn: the target's rate buckets are shared, so checks take turns
          pool: "forks",
          fileParallelism: false,
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: "meta",
          include: ["suites/meta/**/*.test.ts"],
          // each fault is a whole verify run in a child process: two at a time on two cores
          maxConcurrency: 2,
          testTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: { name: "container", include: ["suites/container/**/*.test.ts"], testTimeout: 180_000, hookTimeout: 300_000 },
      },
    ],
  },
});
