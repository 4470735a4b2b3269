import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newRunId } from "../../src/report/index.js";
import { EMBEDDED_DEFAULTS, type HarnessTarget, runPrefixFor, startReferenceTarget } from "../../src/target/harness-target.js";

declare global {
  /** the embedded reference server of this worker, in mutation mode (`npm run mutation`) */
  var agentHarnessWorkerTarget: HarnessTarget | undefined;
}

/**
 * Mutation mode (`npm run mutation`, vitest.mutation.config.ts): a setup file that
 * starts the embedded reference server inside the test worker, once per worker process, instead
 * of in globalSetup's main process. Stryker sees which test runs which server line only there.
 * `suites/support/harness.ts` takes this target over `inject("target")` when it is set.
 */
if (!globalThis.agentHarnessWorkerTarget) {
  const runId = newRunId();
  const ledgerFile = join(mkdtempSync(join(tmpdir(), "agent-harness-mutation-")), "ledger.jsonl");
  const seed = Number(process.env.AGENT_HARNESS_SEED ?? 1);
  // one key set: the worker is alone (Stryker runs one worker per test runner)
  const { target, stop } = await startReferenceTarget(
    "embedded",
    { ...EMBEDDED_DEFAULTS, workers: 1 },
    { runPrefix: runPrefixFor(runId), ledgerFile, seed },
  );
  globalThis.agentHarnessWorkerTarget = target;
  process.once("beforeExit", () => void stop());
}
