import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PERMISSIONS } from "../../contract/index.js";
import { buildServer } from "../../server/app.js";
import { startReferenceServer } from "../../target/embedded.js";
import type { StartedReference } from "../../target/types.js";
import { runScenario } from "../scenario-run.js";
import { deploymentAt } from "../test-support.js";
import { BUCKET_BURSTS } from "./bucket-bursts.js";

/**
 * The bucket bursts against a conformant reference whose scenario key another client uses too,
 * as the main key is when no --load-key is given: that client's requests spend the same per-key
 * buckets, unseen by the harness. No finding is due (a pass, or inconclusive naming the other
 * client). Then the faults a burst must still catch: a bucket that refuses while its own count
 * says there is room (the same shortfall in every window) and a bucket one over its size.
 */
const W = 2;
const keyOf = (i: number) => `ak_test_bucket_bursts_${String(i).padStart(2, "0")}_main`;
const keys = {
  accounts: [{ id: "main", tierLimit: 100_000, messageQuota: null }],
  keys: Array.from({ length: 12 }, (_, i) => ({ key: keyOf(i), account: "main", permissions: [...PERMISSIONS] })),
};
const targetOf = (baseUrl: string, key: string) =>
  deploymentAt(baseUrl, { keys: { main: key }, tierLimit: 100_000, windowSeconds: W, messageTimeoutSeconds: 5 });

/**
 * Another client of the key: an agent made, listed and deleted, a request every `pauseMs` or so,
 * until stopped (at most 2,000 rounds).
 */
function neighbour(baseUrl: string, key: string, pauseMs: number): { stop: () => Promise<number> } {
  let stopped = false;
  let sent = 0;
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    sent++;
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch(() => undefined);
    return (await res?.json().catch(() => undefined)) as { data?: { id?: string } } | undefined;
  };
  const loop = (async () => {
    for (let i = 0; i < 2000 && !stopped; i++) {
      const made = await call("POST", "/agents", { name: `someone-else-${i}` });
      await call("GET", "/agents?limit=5");
      if (made?.data?.id) {
        await call("GET", `/agents/${made.data.id}`);
        await call("PATCH", `/agents/${made.data.id}`, { bio: "theirs" });
        await call("DELETE", `/agents/${made.data.id}`);
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return sent;
    },
  };
}

describe("bucket bursts beside another client on the same key", () => {
  let reference: StartedReference;
  beforeAll(async () => {
    reference = await startReferenceServer({ windowSeconds: W, keys });
  });
  afterAll(() => reference.close());

  // each scenario with a key of its own, and that key's other client (a round of five requests
  // every 100 ms or so: more than a Create or Delete bucket a window at W = 2 s): the five at once
  test("a conformant service: no finding", { timeout: 120_000 }, async () => {
    const runs = BUCKET_BURSTS.map(async (scenario, i) => {
      const key = keyOf(i);
      const other = neighbour(reference.baseUrl, key, 100);
      try {
        const report = await runScenario(targetOf(reference.baseUrl, key), scenario);
        return { report, sent: await other.stop() };
      } finally {
        await other.stop();
      }
    });
    for (const { report, sent } of await Promise.all(runs)) {
      expect(sent, "the other client sent requests throughout").toBeGreaterThan(5);
      expect(report.failures.map((f) => `${report.id} ${f.clause}: expected ${f.expected}; received ${f.received}`)).toEqual([]);
      expect(["passed", "inconclusive"], `${report.id}: ${report.message}`).toContain(report.status);
      if (report.status === "inconclusive") expect(report.message).toMatch(/another client on the same key/i);
    }
  });
});

describe("bucket bursts still catch a miscounting bucket", () => {
  test.for([
    ["create-refused-uncounted", "bucket-createAgent"],
    ["create-bucket-of-11", "bucket-createAgent"],
  ] as const)("%s: a limits.endpoint-bucket finding of %s", { timeout: 60_000 }, async ([fault, id]) => {
    const reference = await startReferenceServer({ windowSeconds: W, keys, faults: [fault] });
    try {
      const scenario = BUCKET_BURSTS.find((s) => s.id === id);
      if (!scenario) throw new Error(`no scenario ${id}`);
      const report = await runScenario(targetOf(reference.baseUrl, keyOf(11)), scenario);
      expect(report.status, report.message).toBe("failed");
      expect(report.failures.map((f) => f.clause)).toContain("limits.endpoint-bucket");
    } finally {
      await reference.close();
    }
  });
});

/**
 * Recovery beside another client that is first into every window after the first and empties
 * the Create bucket at once (conformant: each of its requests is counted, as any client's): the
 * first requests after the announced Reset all meet a new window someone else emptied. That is
 * no finding of limits.recovery: inconclusive, naming the other client.
 */
test(
  "recovery beside another client that empties each next window first: inconclusive, no finding",
  { timeout: 60_000 },
  async () => {
    const { app, ctx } = buildServer({ keys, windowSeconds: W, faults: [] });
    let opened = 0;
    const admit = ctx.limiter.admit.bind(ctx.limiter);
    ctx.limiter.admit = (buckets) => {
      const create = buckets.find((b) => b.scope === "keyEndpoint" && b.key.endsWith(":createAgent"));
      // a Create window not yet open: after the first, the other client's requests come first
      if (create && ctx.limiter.tightest([create]).remaining === create.size && ++opened > 1)
        for (let i = 0; i < create.size; i++) admit([create]);
      return admit(buckets);
    };
    await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const address = app.server.address();
      const baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/v1`;
      const scenario = BUCKET_BURSTS.find((s) => s.id === "bucket-createAgent");
      if (!scenario) throw new Error("no scenario bucket-createAgent");
      const report = await runScenario(targetOf(baseUrl, keyOf(10)), scenario);
      expect(opened, "the other client emptied a window after the first").toBeGreaterThan(1);
      expect(report.failures.map((f) => `${f.clause}: expected ${f.expected}; received ${f.received}`)).toEqual([]);
      expect(report.status, report.message).toBe("inconclusive");
      expect(report.message).toMatch(/met the next window already empty.*another client on the same key/);
    } finally {
      await app.close();
    }
  },
);
