import { beforeAll } from "vitest";
import type { Agent } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { afterQuotaLane, Blocked, check, expect, expectError, expectOk, HarnessError, target } from "../support/harness.js";
import { HAND_OFF_TIMEOUT_MS, label, MAX_DRAIN_ATTEMPTS, MISSING_ID, type Result } from "../support/limits.js";

declareFile({
  keys: ["quota", "readOnly"],
  sendsMessages: true,
  sendsUnpaced: true,
  readsRemainingAcrossAnswers: true,
  spendsQuota: true,
});

/**
 * PROFILE §7: a refusal for a missing permission is counted, and the message quota. The per-key,
 * shared-message-bucket and 429-not-counted checks need a bucket emptied that a row of
 * suites/support/limit-buckets.ts empties anyway: they run inside that row's check while its bucket
 * is empty: one window of a deployment run, not two.
 */

// The quota check counts X-RateLimit-Remaining of the quota account from one answer to the next:
// on a deployment with account lanes that account has a lane of its own, so this file waits for
// its end (src/plan/lanes.ts).
beforeAll(() => afterQuotaLane(HAND_OFF_TIMEOUT_MS), HAND_OFF_TIMEOUT_MS + 10_000);

/* ---------------------------------------------------------------- counted whatever the outcome */

// PROFILE §7: "Every authenticated request is counted in each bucket it belongs to, whatever its
// outcome" — a refusal for a missing permission too, or a key without it could knock for free.
check(
  "limits.endpoint-bucket",
  "a 403 is counted: a second create with the read-only key finds one fewer left",
  async ({ readOnlyApi, agents }) => {
    for (let attempt = 1; attempt <= MAX_DRAIN_ATTEMPTS; attempt++) {
      const first = await readOnlyApi.createAgent({ name: agents.name("-ro") });
      const second = await readOnlyApi.createAgent({ name: agents.name("-ro") }, { pace: false });
      for (const res of [first, second]) if (res.status === 201) agents.track((res.data as Agent).id);
      expectError(first, "FORBIDDEN");
      expectError(second, "FORBIDDEN");
      const [a, b] = [first.exchange.rate, second.exchange.rate];
      if (a?.remaining === undefined || b?.remaining === undefined)
        throw new Blocked(`${label(first)} carried no X-RateLimit-Remaining to count with`);
      // the same bucket in the same window, or a window turned between the two: read again
      if (a.reset !== b.reset || a.limit !== b.limit) continue;
      expect(b.remaining, `${label(second)}: X-RateLimit-Remaining after ${a.remaining} and one more 403`).toBe(a.remaining - 1);
      return;
    }
    throw new HarnessError(`a window turned between two requests in each of ${MAX_DRAIN_ATTEMPTS} attempts: inconclusive`);
  },
);

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
      // PROFILE §7: answers 400 and 404 spend no quota. A quota spent before this check began (an
      // earlier run's, on a deployment: it never refills) may refuse them first: PROFILE §3 lets any
      // applicable error answer a request with two faults. Then only the refusal is judged here
      const invalid = await quotaApi.sendMessage(agent.id, { text: "" });
      // (a reference the harness started says its quota: fresh, never spent before)
      const spentBefore =
        target.messageQuota === undefined && invalid.status === 429 && invalid.error?.code === "INSUFFICIENT_QUOTA";
      if (!spentBefore) {
        expectError(invalid, "INVALID_REQUEST");
        for (let i = 0; i < 2; i++) expectError(await quotaApi.sendMessage(agent.id, { text: "" }), "INVALID_REQUEST");
        expectError(await quotaApi.sendMessage(MISSING_ID, { text: "hello" }), "AGENT_NOT_FOUND");
      }

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
      if (target.messageQuota !== undefined && !spentBefore)
        expect(spent, "units spent only by answered messages").toBe(target.messageQuota);
      // a spent quota stays spent (PROFILE §7 names no refill): nothing is answered after it refused
      if (spentBefore) expect(spent, "messages answered after the quota refused one").toBe(0);

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
