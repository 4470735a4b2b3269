/**
 * The many-tenant faults are real, and asleep below MANY_TENANTS active accounts: the probe
 * fills one account's tier, serves another, and lets the first be refused once more.
 */
import { connect, type Socket } from "node:net";
import { Client } from "undici";
import { describe, expect, test } from "vitest";
import { PERMISSIONS } from "../../contract/index.js";
import { BUDGET_SECONDS, KEYS, makeServer, SMALL_TIER, type TestServer } from "../test-support.js";
import { FLOOD_FAULTS, MANY_TENANT_FAULTS, MANY_TENANTS } from "./capacity.js";

const TIER = 3;

/** `accounts` accounts with one key each: every one sends once, then the probe. The neighbour's next status. */
async function neighbourAfterRefusal(accounts: number, faults: string[]): Promise<number> {
  const ids = Array.from({ length: accounts }, (_, i) => i);
  const s = makeServer({
    faults,
    keys: {
      accounts: ids.map((i) => ({ id: `acct_${i}`, tierLimit: TIER, messageQuota: null })),
      keys: ids.map((i) => ({ key: `key_${i}`, account: `acct_${i}`, permissions: [...PERMISSIONS] })),
    },
  });
  const list = (i: number) => s.call("GET", "/v1/agents", { key: `key_${i}` });
  for (const i of ids) await list(i);
  // the flooding account empties its tier; its neighbour is served (2 of 3); the flood is refused
  while ((await list(0)).status !== 429);
  expect((await list(1)).status).toBe(200);
  expect((await list(0)).status).toBe(429);
  return (await list(1)).status;
}

describe("faults only many tenants reveal", () => {
  test("refusals-charge-neighbour-tier: from MANY_TENANTS accounts on, a refusal fills the neighbour's tier", async () => {
    expect(Object.keys(MANY_TENANT_FAULTS)).toEqual(["refusals-charge-neighbour-tier"]);
    expect(await neighbourAfterRefusal(MANY_TENANTS, [])).toBe(200);
    expect(await neighbourAfterRefusal(MANY_TENANTS - 1, ["refusals-charge-neighbour-tier"])).toBe(200);
    expect(await neighbourAfterRefusal(MANY_TENANTS, ["refusals-charge-neighbour-tier"])).toBe(429);
  });
});

/** The traffic of each flood shape of noisy-neighbour (src/load/capacity/floods.ts), in small. */
const PATTERNS = {
  // a tier emptied, then 250 refused at once (more than the fault's 200 a second)
  "refusal-storm": async (s: TestServer) => {
    await Promise.all(Array.from({ length: 250 + SMALL_TIER }, () => s.call("GET", "/v1/agents", { key: KEYS.small })));
  },
  "unknown-key-storm": async (s: TestServer) => {
    const revoked = (i: number) => s.call("GET", "/v1/agents", { key: `ak_revoked_${i % 4}_0123456789` });
    await Promise.all(Array.from({ length: 250 }, (_, i) => revoked(i)));
    // the storm's last request just before the neighbour's: settling 250 answers takes a busy machine a while
    await revoked(0);
  },
  // a message that never answers, stopped at its time budget
  "stream-hog": async (s: TestServer) => {
    const { id } = await s.createAgent({ name: "hog", modelSettings: { provider: "mock", model: "mock-timeout" } });
    const pending = s.send(id, { text: "hold" });
    await s.clock.untilTimers(1);
    await s.clock.advance(BUDGET_SECONDS * 1000);
    expect((await pending).status).toBe(503);
  },
} as const;

/** Idle sockets held while `run` goes: the connection hog, in small. */
async function withIdleSockets<T>(port: number, count: number, run: () => Promise<T>): Promise<T> {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connect({ host: "127.0.0.1", port }, () => resolve(socket));
          socket.on("error", () => resolve(socket));
        }),
    ),
  );
  try {
    return await run();
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}

/** A request of another tenant on a new connection: what went wrong, or how long it took. */
async function neighbour(port: number): Promise<string | number> {
  const client = new Client(`http://127.0.0.1:${port}`);
  const started = performance.now();
  try {
    const res = await client.request({
      method: "GET",
      path: "/v1/agents",
      headers: { authorization: `Bearer ${KEYS.other}` },
      headersTimeout: 5_000,
    });
    await res.body.dump();
    return res.statusCode === 200 ? performance.now() - started : `status ${res.statusCode}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.destroy();
  }
}

/** Each flood fault and the shape that wakes it: the others are harmed under that shape only. */
const SHAPE_OF = {
  "refusal-storm-slows-everyone": "refusal-storm",
  "unknown-key-global-lock": "unknown-key-storm",
  "budget-end-stalls-server": "stream-hog",
  "connection-cap": "connection-hog",
} as const;
/** The fault's harm (a stall of 300 ms at least, or a refused connection) is told from a loaded machine's jitter by this. */
const HARMED_MS = 200;
const SHAPES = ["refusal-storm", "unknown-key-storm", "stream-hog", "connection-hog"] as const;

/** A neighbour's request on a fresh server with `faults`, after the shape's traffic (or during it, for the connection hog). */
async function underShape(faults: string[], shape: (typeof SHAPES)[number]): Promise<string | number> {
  const s = makeServer({ faults });
  await s.app.listen({ host: "127.0.0.1", port: 0 });
  const address = s.app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  try {
    // the first request of a process pays for its code paths: not the fault's doing
    await neighbour(port);
    return shape === "connection-hog"
      ? await withIdleSockets(port, 250, () => neighbour(port))
      : await PATTERNS[shape](s).then(() => neighbour(port));
  } finally {
    await s.app.close();
  }
}

describe("faults a runaway client reveals: each harms the others under its own flood shape only", () => {
  test("every flood fault has its shape", () => {
    expect(Object.keys(SHAPE_OF)).toEqual(Object.keys(FLOOD_FAULTS));
  });

  test.for([["a clean server", undefined] as const, ...Object.entries(SHAPE_OF)])("%s", async ([name, own]) => {
    const harmed: string[] = [];
    const seen: string[] = [];
    for (const shape of SHAPES) {
      // a fault's harm comes every time; a busy machine's stall does not: harmed only if harmed twice
      let times = 0;
      for (let attempt = 0; attempt < 2; attempt++) {
        const answer = await underShape(own ? [name] : [], shape);
        seen.push(`${shape}: ${typeof answer === "string" ? answer : `${Math.round(answer)} ms`}`);
        if (typeof answer === "string" || answer > HARMED_MS) times++;
        else break;
      }
      if (times === 2) harmed.push(shape);
    }
    expect(harmed, seen.join("; ")).toEqual(own ? [own] : []);
  });
});
