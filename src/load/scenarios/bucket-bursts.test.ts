import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PERMISSIONS, RATE_LIMITS } from "../../contract/index.js";
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
 * the Create bucket at once: a proxy of the same key in front of the reference. Once it has seen a
 * create refused, it holds each create it forwards until its own creates (the bucket's worth at
 * once) have filled the window the create would go into: while they are refused under the window
 * the burst emptied it tries again, and a window it filled lets the create through (to its 429).
 * So the first requests after the announced Reset all meet windows someone else emptied. No
 * finding of limits.recovery: inconclusive, naming the other client.
 */
test(
  "recovery beside another client that empties each next window first: inconclusive, no finding",
  { timeout: 60_000 },
  async () => {
    const reference = await startReferenceServer({ windowSeconds: W, keys });
    const key = keyOf(10);
    let emptiedWindow: string | null = null;
    const filled = new Set<string | null>();
    const forward = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
      const res = await fetch(`${reference.baseUrl.replace(/\/v1$/, "")}${path}`, { method, headers, body });
      return {
        status: res.status,
        headers: [...res.headers],
        body: await res.text(),
        reset: res.headers.get("x-ratelimit-reset"),
      };
    };
    /** The other client: the bucket's worth of creates at once, until they fill a window or meet one they filled. */
    const fillNextWindow = async () => {
      const theirs = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      for (let tries = 0; tries < 1000; tries++) {
        const answers = await Promise.all(
          Array.from({ length: RATE_LIMITS.perKeyEndpoint.createAgent }, (_, n) =>
            forward("POST", "/v1/agents", theirs, JSON.stringify({ name: `someone-else-${n}` })),
          ),
        );
        for (const a of answers) if (a.status === 201) filled.add(a.reset);
        if (answers.some((a) => a.status === 201 || filled.has(a.reset))) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === "string" && !["host", "connection", "content-length"].includes(k)) headers[k] = v;
        const body = chunks.length ? Buffer.concat(chunks).toString() : undefined;
        const create = req.method === "POST" && req.url === "/v1/agents";
        if (create && emptiedWindow !== null) await fillNextWindow();
        const answer = await forward(req.method ?? "GET", req.url ?? "/", headers, body);
        if (create && answer.status === 429 && emptiedWindow === null) emptiedWindow = answer.reset;
        for (const [k, v] of answer.headers)
          if (!["connection", "keep-alive", "transfer-encoding", "content-length"].includes(k)) res.setHeader(k, v);
        res.writeHead(answer.status).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const scenario = BUCKET_BURSTS.find((s) => s.id === "bucket-createAgent");
      if (!scenario) throw new Error("no scenario bucket-createAgent");
      const baseUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
      const report = await runScenario(targetOf(baseUrl, key), scenario);
      expect(filled.size, "the other client filled a window after the first").toBeGreaterThan(0);
      expect(report.failures.map((f) => `${f.clause}: expected ${f.expected}; received ${f.received}`)).toEqual([]);
      expect(report.status, report.message).toBe("inconclusive");
      expect(report.message).toMatch(/met the next window already empty.*another client on the same key/);
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await reference.close();
    }
  },
);
