import { describe } from "vitest";
import type { ServiceClient } from "../../src/client/index.js";
import { type Agent, type ClauseId, RATE_LIMITS } from "../../src/contract/index.js";
import { type AgentFactory, check, expect, expectOk, waitForRefill } from "./harness.js";
import { drainBucket, expectEmptyBucket429, MISSING_ID, type Probe, type Result, SIZES } from "./limits.js";

/**
 * PROFILE §7: each endpoint's bucket, one row each. The rows are checked in two files
 * (limits.test.ts, limits-buckets.test.ts) so they run in two parallel workers: every row waits
 * out a refill.
 */

/* ---------------------------------------------------------------- per endpoint */

export interface BucketCase {
  /** counted in the bucket whatever its outcome (a 400 or 404 costs no agent) */
  counted: Probe;
  /** the request the 429 must leave without effect; sent again after the refill */
  effect: Probe;
  noEffect?: () => Promise<void>;
  recovered: (res: Result) => Promise<void> | void;
}

export interface BucketRow {
  name: string;
  size: number;
  clause: ClauseId;
  arrange: (fx: { api: ServiceClient; agents: AgentFactory }) => Promise<BucketCase>;
}

export const BUCKETS: BucketRow[] = [
  {
    name: "Create",
    size: SIZES.createAgent,
    clause: "limits.endpoint-bucket",
    arrange: async ({ api, agents }) => {
      const name = agents.name("-limited");
      const before = await api.listAgents({ limit: 100 });
      expectOk(before);
      return {
        counted: (pace) => api.call("createAgent", { body: { name: "" }, pace }),
        effect: (pace) => api.createAgent({ name }, { pace }),
        noEffect: async () => {
          const after = await api.listAgents({ limit: 100 });
          const made = expectOk(after).find((a) => a.name === name);
          if (made) agents.track(made.id);
          expect(made, "the 429 create made no agent").toBeUndefined();
          expect(after.pagination?.total, "list total unchanged").toBe(before.pagination?.total);
        },
        recovered: (res) => {
          if (res.status === 201) agents.track((res.data as Agent).id);
          expectOk(res, 201);
        },
      };
    },
  },
  {
    name: "List",
    size: SIZES.listAgents,
    clause: "limits.endpoint-bucket",
    arrange: async ({ api }) => {
      const list: Probe = (pace) => api.listAgents({ limit: 1 }, { pace });
      return { counted: list, effect: list, recovered: (res) => void expectOk(res) };
    },
  },
  {
    name: "Get",
    size: SIZES.getAgent,
    clause: "limits.endpoint-bucket",
    arrange: async ({ api, agents }) => {
      const agent = await agents.create();
      const get: Probe = (pace) => api.getAgent(agent.id, { pace });
      return { counted: get, effect: get, recovered: (res) => void expect(expectOk(res)).toMatchObject({ id: agent.id }) };
    },
  },
  {
    name: "Update",
    size: SIZES.updateAgent,
    clause: "limits.endpoint-bucket",
    arrange: async ({ api, agents }) => {
      const agent = await agents.create({ bio: "before" });
      return {
        counted: (pace) => api.updateAgent(agent.id, {}, { pace }),
        effect: (pace) => api.updateAgent(agent.id, { bio: "after" }, { pace }),
        noEffect: async () => {
          const now = expectOk(await api.getAgent(agent.id));
          expect({ bio: now.bio, updatedAt: now.updatedAt }, "the 429 update changed nothing").toEqual({
            bio: "before",
            updatedAt: agent.updatedAt,
          });
        },
        recovered: (res) => void expect((expectOk(res) as Agent).bio).toBe("after"),
      };
    },
  },
  {
    name: "Delete",
    size: SIZES.deleteAgent,
    clause: "limits.endpoint-bucket",
    arrange: async ({ api, agents }) => {
      const agent = await agents.create();
      return {
        // PROFILE §7: counted "whatever its outcome", so 404s empty the bucket without agents to spare
        counted: (pace) => api.deleteAgent(MISSING_ID, { pace }),
        effect: (pace) => api.deleteAgent(agent.id, { pace }),
        noEffect: async () => void expectOk(await api.getAgent(agent.id)),
        recovered: (res) => void expect(expectOk(res)).toEqual({ id: agent.id, deleted: true }),
      };
    },
  },
  {
    name: "Send Message (per agent)",
    size: RATE_LIMITS.perAgentMessages,
    clause: "limits.agent-bucket",
    arrange: async ({ api, agents }) => {
      const agent = await agents.create();
      return {
        counted: (pace) => api.call("sendMessage", { agentId: agent.id, body: { text: "" }, pace }),
        effect: (pace) => api.sendMessage(agent.id, { text: "hello", userId: "u-limited" }, { pace }),
        // the 429 took no turn: the first message that gets through opens the conversation
        recovered: (res) => void expect(expectOk(res)).toMatchObject({ turn: 1, userId: "u-limited" }),
      };
    },
  },
];

/**
 * One check per row: the bucket empties at its size, the 429 has no effect, the reset refills it.
 * `part` of `of` files takes every `of`-th row, so together they check every row.
 */
export function bucketChecks({ part, of }: { part: number; of: number }): void {
  describe("PROFILE §7 buckets, one 429 each", () => {
    for (const row of BUCKETS.filter((_, i) => i % of === part)) {
      check(
        [row.clause, "limits.429", "limits.recovery"],
        `${row.name}: ${row.size} per window; one more → 429 RATE_LIMIT_EXCEEDED with no effect; after the reset it succeeds`,
        async ({ api, agents }) => {
          const bucket = await row.arrange({ api, agents });
          const limited = await drainBucket(row.size, bucket.counted, bucket.effect);
          expectEmptyBucket429(limited, row.size);
          await bucket.noEffect?.();
          await waitForRefill(limited.exchange);
          await bucket.recovered(await bucket.effect(true));
        },
      );
    }
  });
}
