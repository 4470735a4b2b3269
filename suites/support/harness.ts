import { test as base, type TestContext } from "vitest";
import type { ServiceClient } from "../../src/client/index.js";
import { CLAUSE_BY_ID, type ClauseId, selectionTags } from "../../src/contract/index.js";
import { observationMessage } from "../../src/report/findings.js";
import { ConformanceFailure, classify, HarnessError } from "../../src/report/verdict.js";
import { needsOfFile } from "../../src/run/suite-needs.js";
import { type FlaggedRole, KEY_ROLES, type KeyRoleName, needsKey } from "../../src/target/key-roles.js";
import { AgentFactory } from "./agents.js";
import { beginCheck, clientFor, currentExchangeLog, type ExchangeLog, endCheck } from "./exchanges.js";
import { FINDINGS_COLLECTED, mainKeyFor, target } from "./target.js";

/**
 * The suite kit's front door: the extended `test` whose fixtures give a check its clients (one per
 * key role, skipped naming the flag a missing key needs), its agents and the response-level checks
 * on every exchange, and `check`/`smoke`, which cite PROFILE clauses. The pieces live beside it:
 * target.ts (the target and this worker's keys), exchanges.ts (clients, judging, ledger, pacing),
 * agents.ts (agents made and deleted), assertions.ts (the answer matchers).
 */

export { expect } from "vitest";
// what the suites use, from one import
export { Blocked, ConformanceFailure, HarnessError, Inconclusive, MODEL_FAILED } from "../../src/report/verdict.js";
export { AgentFactory, sharedAgent } from "./agents.js";
export {
  expectError,
  expectInvalid,
  expectOk,
  namingIn,
  unlessEndedByTheBudget,
  unlessTheModelFailed,
} from "./assertions.js";
export { afterQuotaLane, budget, clientFor, observeExchanges, rememberToken, waitForRefill } from "./exchanges.js";
export { SERVICE_CLOCK, target } from "./target.js";

interface Fixtures {
  /** the response-level checks on every exchange of the test */
  conformance: ExchangeLog;
  api: ServiceClient;
  readOnlyApi: ServiceClient;
  otherApi: ServiceClient;
  quotaApi: ServiceClient;
  /** an account no check creates an agent in (a target the harness started); on a deployment, the other account */
  agentlessApi: ServiceClient;
  agents: AgentFactory;
}

/**
 * A check uses a key role its file declared (declareFile): the planner gives each file the keys
 * it declared, so one undeclared would be skipped in a lane without it, as if the key had not been
 * given — a check moved into a file must move its file's declaration with it.
 */
function assertDeclared(file: { filepath: string; name: string }, role: Exclude<KeyRoleName, "main">): void {
  const declared = needsOfFile(file.filepath);
  if (declared && !declared.keys?.includes(role))
    throw new HarnessError(`${file.name} uses the ${role} key without declaring it: add it to its declareFile({ keys })`);
}

const optionalClient =
  (role: Exclude<FlaggedRole, "main">) =>
  async (
    { conformance: _c, skip, task }: { conformance: ExchangeLog; skip: (note?: string) => never; task: TestContext["task"] },
    use: (c: ServiceClient) => Promise<void>,
  ) => {
    assertDeclared(task.file, role);
    // a check that needs a key the run was not given is skipped, naming the flag that enables it
    const value = target.keys[role];
    if (!value) skip(needsKey(role));
    await use(clientFor(value!, KEY_ROLES[role].account));
  };

export const test = base.extend<Fixtures>({
  conformance: [
    async ({ task }, use) => {
      const log = beginCheck(`${task.file.name}::${task.fullTestName ?? task.name}`);
      await use(log);
      endCheck(task.file.name);
      const errors = task.result?.errors ?? [];
      if (errors.length) task.meta.verdict = classify(errors);
      if (task.result?.state === "fail" || errors.length) task.meta.evidence = log.evidence();
      // a response-level violation is a finding of its own check, not this test's failure (STYLE §10)
      if (log.observations.size) task.meta.observations = [...log.observations.values()];
      // without verify's reporter nothing would report it: fail the test rather than pass in silence
      if (log.observations.size && !FINDINGS_COLLECTED)
        throw new ConformanceFailure(
          `response-level checks found:\n${[...log.observations.values()].map(observationMessage).join("\n")}`,
        );
    },
    { auto: true },
  ],
  api: async ({ conformance: _c, task }, use) => use(clientFor(mainKeyFor(task.fullTestName ?? task.name), "main")),
  readOnlyApi: optionalClient("readOnly"),
  otherApi: optionalClient("otherAccount"),
  quotaApi: optionalClient("quota"),
  agentlessApi: async ({ conformance: _c, skip, task }, use) => {
    assertDeclared(task.file, "agentless");
    const stand = KEY_ROLES.agentless.standsIn;
    const role = target.keys.agentless ? "agentless" : stand;
    const key = target.keys[role];
    if (!key) skip(needsKey(stand));
    await use(clientFor(key!, KEY_ROLES[role].account));
  },
  agents: async ({ api, task }, use) => {
    const factory = new AgentFactory(api, task.id.replace(/[^A-Za-z0-9]/g, "").slice(-8));
    await use(factory);
    currentExchangeLog()?.endBody();
    await factory.cleanup();
  },
});

/** A check: a vitest test citing the PROFILE clauses it verifies (STYLE §3). */
export function check(
  clauses: ClauseId | ClauseId[],
  title: string,
  fn: (ctx: Fixtures & TestContext) => Promise<void> | void,
  tags: string[] = [],
) {
  const clauseIds = Array.isArray(clauses) ? clauses : [clauses];
  for (const id of clauseIds) if (!CLAUSE_BY_ID.has(id)) throw new Error(`unknown clause ${id}`);
  const sections = [...new Set(clauseIds.map((id) => CLAUSE_BY_ID.get(id)!.section))].join(" ");
  // tagged with its sections and clauses too: --sections selects by them (src/run/suites.ts)
  return test(`${sections} ${title}`, { meta: { clauseIds }, tags: [...selectionTags(clauseIds), ...tags] }, fn as never);
}

/** A check of `--profile smoke` too: an endpoint's main success or error path, the per-deploy gate. */
export function smoke(clauses: ClauseId | ClauseId[], title: string, fn: (ctx: Fixtures & TestContext) => Promise<void> | void) {
  return check(clauses, title, fn, ["smoke"]);
}
