import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { TestProject } from "vitest/node";
import { MESSAGE_TIMING } from "../../src/contract/index.js";
import { newRunId } from "../../src/report/index.js";
import { EMBEDDED_DEFAULTS, runPrefixFor, startReferenceTarget } from "../../src/target/harness-target.js";
import { releaseClaims } from "../../src/target/key-set-claim.js";

/**
 * `npm test` runs the functional suites against an embedded reference server started here
 * (STYLE §4: the target is a fixture). `agent-harness verify` provides its own target instead.
 */
export default async function setup(project: TestProject) {
  const runId = newRunId();
  const ledgerFile = join(mkdtempSync(join(tmpdir(), "agent-harness-")), "ledger.jsonl");
  const seed = Number(process.env.AGENT_HARNESS_SEED ?? Date.now() % 2 ** 31);
  // the load project streams at the real budget (PROFILE §5: 30 s): streams-at-budget measures it
  const plan =
    project.name === "load"
      ? { ...EMBEDDED_DEFAULTS, messageTimeoutSeconds: MESSAGE_TIMING.defaultBudgetSeconds }
      : EMBEDDED_DEFAULTS;
  const { target, stop } = await startReferenceTarget("embedded", plan, {
    runPrefix: runPrefixFor(runId),
    ledgerFile,
    seed,
  });
  project.provide("target", target);
  // the server gone, its ledger and its workers' key-set claims (src/target/key-set-claim.ts) are of no more use
  return async () => {
    await stop();
    releaseClaims(target);
    rmSync(dirname(ledgerFile), { recursive: true, force: true });
  };
}
