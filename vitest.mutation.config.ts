import { defineConfig } from "vitest/config";
import { CHECK_TAGS } from "./src/plan/profiles.js";

/**
 * Mutation mode (`npm run mutation`, stryker.config.json): the harness's own suites —
 * functional, property and the load scenarios — as Stryker's test command. No globalSetup: each
 * worker starts its embedded reference server itself (suites/support/worker-target.ts), so the
 * mutated server runs where Stryker records which test reached which mutant. The server's own
 * unit tests (src/server/*.test.ts) are not here: the score says what the harness catches.
 * The load project runs its quick scenarios at the embedded budget (4.5 s), not the real 30 s.
 */
const suite = (name: string, include: string, testTimeout: number, groupOrder: number) => ({
  extends: true as const,
  test: {
    name,
    // functional first: most mutants are killed by a quick functional check, and Stryker bails on the first failure
    sequence: { groupOrder },
    include: [include],
    setupFiles: ["suites/support/worker-target.ts"],
    pool: "forks" as const,
    fileParallelism: false,
    isolate: false,
    testTimeout,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    expect: { requireAssertions: true },
    tags: CHECK_TAGS,
    reporters: ["default"],
    projects: [
      suite("functional", "suites/functional/**/*.test.ts", 60_000, 0),
      suite("property", "suites/property/**/*.test.ts", 300_000, 1),
      suite("load", "suites/load/quick-*.test.ts", 120_000, 2),
    ],
  },
});
