import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

/**
 * globalSetup of the projects whose tests start the CLI in child processes, each a verify run (the
 * meta fault runs, the network rows, the matrix, the meta-cli files): the CLI is compiled once into
 * the folder their config names in AGENT_HARNESS_COMPILED, which bin/agent-harness.js then runs
 * instead of the TypeScript sources, so no child pays tsx's start-up. Compiled here, from the
 * sources of this checkout: never a stale tree. (vitest runs every project's globalSetup before
 * the first test of the run, one after another: each compile, well under a second with esbuild,
 * adds to the run's start.) One folder per project: two projects' setups never empty each other's
 * tree.
 */
export default function setup(project: TestProject) {
  const outdir = project.config.env.AGENT_HARNESS_COMPILED;
  if (!outdir) throw new Error(`project ${project.name}: compiled-cli.ts needs AGENT_HARNESS_COMPILED in its test.env`);
  execFileSync(process.execPath, ["scripts/build-package.mjs", "--outdir", outdir], { stdio: "pipe", timeout: 120_000 });
  // what the project's files share (suites/meta/clean-run.ts, every run's reports:
  // suites/meta/verify-run.ts): a folder of this run's own
  const shared = mkdtempSync(join(tmpdir(), `agent-harness-${project.name}-shared-`));
  project.provide("sharedDir", shared);
  // kept for a reader when a test failed or an error went unhandled; else deleted, or each run of
  // the suites would leave some hundreds of report folders in the temporary folder for good
  return () => {
    const state = project.vitest.state;
    if (state.getCountOfFailedTests() === 0 && state.getUnhandledErrors().length === 0)
      rmSync(shared, { recursive: true, force: true });
  };
}
