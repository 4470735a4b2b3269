import { describe } from "vitest";
import { type Agent, RATE_LIMITS } from "../../src/contract/index.js";
import { check, expect, expectError, expectOk, HarnessError, target, waitForRefill } from "../support/harness.js";
import { NOT_COUNTED, PER_KEY, SHARED_BY_KEYS } from "../support/limit-buckets.js";
import {
  drainBucket,
  expectEmptyBucket429,
  expectTierLimit,
  inBatches,
  MAX_DRAIN_ATTEMPTS,
  MISSING_ID,
  type Probe,
  type Result,
  SIZES,
} from "../support/limits.js";

/**
 * PROFILE §7 beyond one endpoint's bucket: per key, per agent, 429s not counted, quota. The
 * tier, concurrency and path variants are in limits-tier.test.ts (a parallel worker).
 */

// Each of these needs a bucket emptied that a row of limits.test.ts / limits-buckets.test.ts empties
// anyway: when the run has what they need, the row's check does it while its bucket is empty
// (issue 10 §2: one window, not two); otherwise they are here, and say what they need.
const UNMERGED = !PER_KEY.enabled || !SHARED_BY_KEYS.enabled || !NOT_COUNTED.enabled;
describe.runIf(UNMERGED)("PROFILE §7 buckets, one 429 each", () => {
  if (!PER_KEY.enabled)
    check(
      "limits.endpoint-bucket",
      "endpoint buckets are per key: another key of the account still gets through",
      async ({ api, agents, readOnlyApi }) => {
        const limited = await drainBucket(SIZES.createAgent, (pace) => api.call("createAgent", { body: { name: "" }, pace }));
        expectEmptyBucket429(limited, SIZES.createAgent);
        // 429 beats 403 (PROFILE §3): a 403 shows this key's Create bucket is not the drained one
        const other = await readOnlyApi.createAgent({ name: agents.name("-ro") }, { pace: false });
        if (other.status === 201) agents.track((other.data as Agent).id);
        expectError(other, "FORBIDDEN");
        await waitForRefill(limited.exchange);
      },
    );

  if (!SHARED_BY_KEYS.enabled)
    check(
      ["limits.agent-bucket", "status.precedence"],
      "the message bucket is per agent and shared by the account's keys; 429 beats 403",
      async ({ api, agents, readOnlyApi }) => {
        const agent = await agents.create();
        const another = await agents.create();
        const limited = await drainBucket(RATE_LIMITS.perAgentMessages, (pace) =>
          api.call("sendMessage", { agentId: agent.id, body: { text: "" }, pace }),
        );
        expectEmptyBucket429(limited, RATE_LIMITS.perAgentMessages);

        // a key without messages:send reaches the same empty bucket: 429, not 403
        const readOnly = await readOnlyApi.sendMessage(agent.id, { text: "hello" }, { pace: false });
        expectEmptyBucket429(readOnly, RATE_LIMITS.perAgentMessages);

        // another agent's bucket is its own (unless the tier itself ran out)
        const elsewhere = await api.sendMessage(another.id, { text: "hello" }, { pace: false });
        if (elsewhere.status === 429) expectTierLimit(elsewhere);
        else expectOk(elsewhere);

        await waitForRefill(readOnly.exchange);
        expectError(await readOnlyApi.sendMessage(agent.id, { text: "hello" }), "FORBIDDEN");
      },
    );

  if (!NOT_COUNTED.enabled)
    check(
      "limits.429-not-counted",
      "a 429 counts in no bucket: a tier's worth of them leaves the tier intact",
      async ({ api, skip }) => {
        const tier = target.tierLimit;
        if (tier === undefined) return skip("needs --tier");
        if (tier > 1000) return skip(`a tier of ${tier} is too large to flood`);
        const delete404: Probe = (pace) => api.deleteAgent(MISSING_ID, { pace });
        // a window that ends mid-flood refills the Delete bucket: inconclusive, so flood again in the next
        let flood: Result[] = [];
        for (let attempt = 1; attempt <= MAX_DRAIN_ATTEMPTS; attempt++) {
          const limited = await drainBucket(SIZES.deleteAgent, delete404);
          expectEmptyBucket429(limited, SIZES.deleteAgent);
          // were 429s counted in the account's tier, these alone would empty it
          flood = await inBatches(
            tier,
            25,
            () => delete404(false),
            () => false,
          );
          const admitted = flood.find((r) => r.status !== 429);
          if (admitted === undefined) break;
          if (attempt === MAX_DRAIN_ATTEMPTS)
            throw new HarnessError(`the Delete bucket refilled during the flood ${attempt} times: inconclusive`);
          await waitForRefill(flood.at(-1)!.exchange);
        }
        const list = await api.listAgents({ limit: 1 }, { pace: false });
        expect(list.status, `after ${tier} answers 429 the tier (${tier}) still admits a request`).not.toBe(429);
        expectOk(list);
        await waitForRefill(flood.at(-1)!.exchange);
      },
    );
});

/* ---------------------------------------------------------------- quota */

check(
  "limits.quota",
  "a spent quota → 429 INSUFFICIENT_QUOTA without Retry-After, still counted; other endpoints keep working",
  async ({ quotaApi, agents, skip }) => {
    if (!target.referenceFaults) skip("needs --reference-faults (a quota account)");
    const made: string[] = [];
    try {
      const agent = expectOk(await quotaApi.createAgent({ name: agents.name("-quota") }), 201);
      made.push(agent.id);
      // PROFILE §7: answers 400 and 404 spend no quota
      for (let i = 0; i < 3; i++) expectError(await quotaApi.sendMessage(agent.id, { text: "" }), "INVALID_REQUEST");
      expectError(await quotaApi.sendMessage(MISSING_ID, { text: "hello" }), "AGENT_NOT_FOUND");

      const BOUND = 20;
      let spent = 0;
      let refused: Result | undefined;
      while (refused === undefined && spent < BOUND) {
        const res = await quotaApi.sendMessage(agent.id, { text: "spend" });
        if (res.status === 200) spent++;
        else refused = res;
      }
      expect(refused, `INSUFFICIENT_QUOTA within ${BOUND} messages`).toBeDefined();
      expectError(refused!, "INSUFFICIENT_QUOTA");
      expect(refused!.exchange.response.headers["retry-after"], "no Retry-After").toBeUndefined();
      // A reference target the harness started says its quota; this is the only check that spends it,
      // so every unit went to a message that got through (the 400s and the 404 above spent none).
      if (target.messageQuota !== undefined) expect(spent, "units spent only by answered messages").toBe(target.messageQuota);

      // counted like any request: the next refusal finds one fewer in the same window
      const again = await quotaApi.sendMessage(agent.id, { text: "spend" });
      expectError(again, "INSUFFICIENT_QUOTA");
      const [a, b] = [refused!.exchange.rate, again.exchange.rate];
      if (a?.reset === b?.reset && a?.limit === b?.limit)
        expect(b?.remaining, "X-RateLimit-Remaining after a counted refusal").toBe((a?.remaining ?? 0) - 1);

      expectOk(await quotaApi.listAgents({ limit: 1 }));
      expectOk(await quotaApi.getAgent(agent.id));
      const second = expectOk(await quotaApi.createAgent({ name: agents.name("-quota") }), 201);
      made.push(second.id);
    } finally {
      // the quota account's agents are not the main key's to delete
      for (const id of made) await quotaApi.deleteAgent(id);
    }
  },
);
