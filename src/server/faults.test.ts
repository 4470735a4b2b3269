/**
 * The injected defects are real: for every fault, one probe through the public HTTP API
 * whose answer on the clean server is what PROFILE asks, and differs with the fault on.
 */
import { describe, expect, test } from "vitest";
import { CLAUSE_BY_ID } from "../contract/index.js";
import { buildServer } from "./app.js";
import { CAPACITY_FAULTS } from "./faults/capacity.js";
import { CONCURRENCY_FAULTS } from "./faults/concurrency.js";
import { FAULT_NAMES as ALL_FAULT_NAMES, FAULTS } from "./faults/index.js";
import { SHED_AFTER_MS } from "./faults/limits.js";
import { LOAD_FAULTS } from "./faults/load.js";
import {
  ACCOUNTS,
  BUDGET_SECONDS,
  eventually,
  KEYS,
  makeServer,
  QUOTA,
  SMALL_TIER,
  seedAgents,
  type TestServer,
  testKeys,
  track,
  WINDOW_SECONDS,
} from "./test-support.js";
import { listOf, num, type Res } from "./test-support-answers.js";
import { collect, commentsOf, eventsOf, listen, parseSse } from "./test-support-http.js";

type Obj = Record<string, unknown>;
const BUDGET_MS = BUDGET_SECONDS * 1000;

/** Read answers loosely: a faulty server's answers need not parse as the contract says. */
const dataOf = (res: Res) => ((res.json as { data?: unknown } | undefined)?.data ?? {}) as Obj;
const paginationOf = (res: Res) => (res.json as { pagination: Obj }).pagination;
const codeOf = (res: Res) => (res.json as { error?: { code?: string } } | undefined)?.error?.code;
const seedOne = (s: TestServer, body: Obj = { name: "Ada" }, account: string = ACCOUNTS.main) =>
  seedAgents(s.ctx, account, [body])[0]!;
/** A streamed message to a new agent of `model`, once its `timers` timers are set and the clock has moved `ms`. */
async function streamOnceTimed(s: TestServer, model: string, timers: number, ms: number): Promise<Res> {
  const pending = s.send(seedOne(s, { name: "S", modelSettings: { model } }).id, { text: "hi", stream: true });
  await s.clock.untilTimers(timers);
  await s.clock.advance(ms);
  return pending;
}
/**
 * A message to a new agent of the mock-timeout model: the clock moves `first` ms once its budget
 * timer is set, then `rest` ms; how many timers were still pending after `first` (the budget
 * timer has fired, or not).
 */
async function budgetTimersAfter(s: TestServer, first: number, rest: number): Promise<number> {
  const pending = s.send(seedOne(s, { name: "T", modelSettings: { model: "mock-timeout" } }).id, { text: "hi" });
  await s.clock.untilTimers(1);
  await s.clock.advance(first);
  const stillTiming = s.clock.pendingTimers;
  await s.clock.advance(rest);
  await pending;
  return stillTiming;
}
const repeat = async (n: number, request: () => Promise<Res>) => {
  let last: Res | undefined;
  for (let i = 0; i < n; i++) last = await request();
  return last!;
};
const sseEvents = (res: Res) => eventsOf(parseSse(res.body));

/** A fresh mock-timeout agent with ten messages in flight: `run` sees it while they fill the cap, then the budget ends them. */
async function whileCapFull<T>(s: TestServer, run: (id: string) => Promise<T>): Promise<{ id: string; result: T }> {
  const id = seedOne(s, { name: "T", modelSettings: { model: "mock-timeout" } }).id;
  const inFlight = Array.from({ length: 10 }, () => s.send(id, { text: "hi" }));
  await s.clock.untilTimers(10);
  const result = await run(id);
  await s.clock.advance(BUDGET_MS);
  await Promise.all(inFlight);
  return { id, result };
}

/** X-RateLimit-Remaining of the last of five messages refused by the cap of 10 in flight to a fresh agent. */
const refusalRemaining = async (s: TestServer) =>
  num((await whileCapFull(s, (id) => repeat(5, () => s.send(id, { text: "hi" })))).result, "x-ratelimit-remaining");

/** A mock-timeout agent and a stream to it over a real socket, which `leave` abandons (the client goes away). */
async function streamToLeave(s: TestServer, net: Awaited<ReturnType<typeof listen>>, extra: Record<string, string>) {
  const id = seedOne(s, { name: "G", modelSettings: { model: "mock-timeout" } }).id;
  const abort = new AbortController();
  const res = await net.http("POST", `/v1/agents/${id}/messages`, {
    body: { text: "hi", ...extra, stream: true },
    signal: abort.signal,
  });
  const body = collect(res.body);
  const leave = async () => {
    abort.abort();
    await body.done;
  };
  return { id, leave };
}

interface Probe {
  /** what PROFILE asks of the probe's answer */
  expected: unknown;
  probe(s: TestServer): Promise<unknown>;
}

/** the load-only, many-tenant and concurrency faults have their probes beside them (faults/load.test.ts, faults/capacity.test.ts, faults/concurrency.test.ts) */
const FAULT_NAMES = ALL_FAULT_NAMES.filter(
  (name) => !(name in LOAD_FAULTS) && !(name in CAPACITY_FAULTS) && !(name in CONCURRENCY_FAULTS),
);

const PROBES: Record<string, Probe> = {
  /* §1 */
  "drop-request-id": {
    expected: true,
    probe: async (s) => (await s.call("GET", "/v1/agents")).headers["x-request-id"] !== undefined,
  },
  "request-id-not-echoed": {
    expected: "probe-42",
    probe: async (s) => (await s.call("GET", "/v1/agents", { headers: { "x-request-id": "probe-42" } })).headers["x-request-id"],
  },
  "json-as-text-plain": {
    expected: true,
    probe: async (s) => /^application\/json/.test((await s.call("GET", "/v1/agents")).headers["content-type"] ?? ""),
  },

  /* §2 */
  "total-pages-floor": {
    expected: 2,
    probe: async (s) => {
      seedAgents(
        s.ctx,
        ACCOUNTS.main,
        Array.from({ length: 21 }, (_, i) => ({ name: `A${i}` })),
      );
      return paginationOf(await s.call("GET", "/v1/agents?limit=20")).totalPages;
    },
  },
  "has-more-always-true": {
    expected: false,
    probe: async (s) => {
      seedOne(s);
      return paginationOf(await s.call("GET", "/v1/agents")).hasMore;
    },
  },
  "error-as-string": {
    expected: "object",
    probe: async (s) => typeof ((await s.call("GET", "/v1/agents/agt_missing")).json as { error?: unknown }).error,
  },
  "error-details-object": {
    expected: true,
    probe: async (s) => {
      const res = await s.call("POST", "/v1/agents", { body: { name: "" } });
      return Array.isArray((res.json as { error: { details: unknown } }).error.details);
    },
  },

  /* §3 */
  "validation-422": { expected: 400, probe: async (s) => (await s.call("POST", "/v1/agents", { body: { name: "" } })).status },
  "malformed-query-500": { expected: 400, probe: async (s) => (await s.call("GET", "/v1/agents?page=abc")).status },
  "lookup-before-rate-limit": {
    expected: 429,
    probe: async (s) => (await repeat(61, () => s.call("GET", "/v1/agents/agt_missing"))).status,
  },

  /* §4 */
  "utf16-name-length": {
    expected: 201,
    probe: async (s) => (await s.call("POST", "/v1/agents", { body: { name: "😀".repeat(60) } })).status,
  },
  "token-echoed": {
    expected: false,
    probe: async (s) => {
      const agent = seedOne(s, { name: "Ada", platforms: { discord: { enabled: true, token: "tok-probe" } } });
      return (await s.call("GET", `/v1/agents/${agent.id}`)).body.includes("tok-probe");
    },
  },
  "unknown-keys-dropped": {
    expected: 400,
    probe: async (s) => (await s.call("POST", "/v1/agents", { body: { name: "A", color: "red" } })).status,
  },
  "read-only-fields-ignored": {
    expected: 400,
    probe: async (s) => (await s.call("POST", "/v1/agents", { body: { name: "A", id: "agt_mine" } })).status,
  },
  "account-id-exposed": {
    expected: false,
    probe: async (s) => "accountId" in dataOf(await s.call("POST", "/v1/agents", { body: { name: "A" } })),
  },
  "bio-default-null": {
    expected: "",
    probe: async (s) => dataOf(await s.call("POST", "/v1/agents", { body: { name: "A" } })).bio,
  },
  "timestamps-behind-clock": {
    expected: true,
    probe: async (s) =>
      Date.parse(String(dataOf(await s.call("POST", "/v1/agents", { body: { name: "A" } })).createdAt)) === s.clock.now(),
  },
  "updated-before-created": {
    expected: true,
    probe: async (s) => {
      const id = String(dataOf(await s.call("POST", "/v1/agents", { body: { name: "A" } })).id);
      await s.clock.advance(5);
      const got = dataOf(await s.call("PATCH", `/v1/agents/${id}`, { body: { name: "B" } }));
      return Date.parse(String(got.updatedAt)) >= Date.parse(String(got.createdAt));
    },
  },
  "timestamps-without-ms": {
    expected: true,
    probe: async (s) => /\.\d{3}Z$/.test(String(dataOf(await s.call("POST", "/v1/agents", { body: { name: "A" } })).createdAt)),
  },

  /* §5 create */
  "create-on-invalid": {
    expected: 0,
    probe: async (s) => {
      await s.call("POST", "/v1/agents", { body: { name: "A", bio: 5 } });
      return paginationOf(await s.call("GET", "/v1/agents")).total;
    },
  },
  "create-ignores-inactive": {
    expected: "inactive",
    probe: async (s) => dataOf(await s.call("POST", "/v1/agents", { body: { name: "A", status: "inactive" } })).status,
  },
  "platform-enabled-defaulted": {
    expected: 400,
    probe: async (s) =>
      (await s.call("POST", "/v1/agents", { body: { name: "A", platforms: { discord: { token: "t" } } } })).status,
  },

  /* §5 list */
  "limit-clamped": { expected: 400, probe: async (s) => (await s.call("GET", "/v1/agents?limit=101")).status },
  "tie-break-ascending": {
    expected: true,
    probe: async (s) => {
      const ids = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }, { name: "C" }]).map((a) => a.id);
      const listed = ((await s.call("GET", "/v1/agents")).json as { data: { id: string }[] }).data.map((a) => a.id);
      return JSON.stringify(listed) === JSON.stringify([...ids].sort().reverse());
    },
  },
  "past-end-zero-total": {
    expected: 3,
    probe: async (s) => {
      seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }, { name: "C" }]);
      return paginationOf(await s.call("GET", "/v1/agents?page=5")).total;
    },
  },
  "page-overlap": {
    expected: true,
    probe: async (s) => {
      seedAgents(
        s.ctx,
        ACCOUNTS.main,
        Array.from({ length: 5 }, (_, i) => ({ name: `A${i}` })),
      );
      const listed: string[] = [];
      for (const page of [1, 2, 3])
        listed.push(
          ...((await s.call("GET", `/v1/agents?limit=2&page=${page}`)).json as { data: { id: string }[] }).data.map((a) => a.id),
        );
      return listed.length === new Set(listed).size;
    },
  },
  "status-filter-ignored": {
    expected: 1,
    probe: async (s) => {
      seedAgents(s.ctx, ACCOUNTS.main, [{ name: "On" }, { name: "Off", status: "inactive" }]);
      return paginationOf(await s.call("GET", "/v1/agents?status=inactive")).total;
    },
  },
  "lists-all-accounts": {
    expected: 1,
    probe: async (s) => {
      seedOne(s, { name: "Theirs" }, ACCOUNTS.other);
      seedOne(s, { name: "Mine" });
      return paginationOf(await s.call("GET", "/v1/agents")).total;
    },
  },

  /* §5 get */
  "other-account-403": {
    expected: 404,
    probe: async (s) => (await s.call("GET", `/v1/agents/${seedOne(s, { name: "Theirs" }, ACCOUNTS.other).id}`)).status,
  },

  /* §5 update */
  "merge-replaces-nested": {
    expected: "openai",
    probe: async (s) => {
      const agent = seedOne(s, { name: "A", modelSettings: { provider: "openai", model: "gpt" } });
      const res = await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { modelSettings: { temperature: 1 } } });
      return (dataOf(res).modelSettings as Obj).provider;
    },
  },
  "null-ignored": {
    expected: "",
    probe: async (s) =>
      dataOf(await s.call("PATCH", `/v1/agents/${seedOne(s, { name: "A", bio: "b" }).id}`, { body: { bio: null } })).bio,
  },
  "null-name-accepted": {
    expected: 400,
    probe: async (s) => (await s.call("PATCH", `/v1/agents/${seedOne(s).id}`, { body: { name: null } })).status,
  },
  "status-error-settable": {
    expected: 400,
    probe: async (s) => (await s.call("PATCH", `/v1/agents/${seedOne(s).id}`, { body: { status: "error" } })).status,
  },
  "merge-patch-type-rejected": {
    expected: 200,
    probe: async (s) =>
      (await s.call("PATCH", `/v1/agents/${seedOne(s).id}`, { body: { bio: "x" }, contentType: "application/merge-patch+json" }))
        .status,
  },
  "rejected-update-applies-valid-fields": {
    expected: "kept",
    probe: async (s) => {
      const agent = seedOne(s, { name: "A", bio: "kept" });
      await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { bio: "changed", name: "" } });
      return dataOf(await s.call("GET", `/v1/agents/${agent.id}`)).bio;
    },
  },
  "noop-bumps-updated-at": {
    expected: true,
    probe: async (s) => {
      const agent = seedOne(s);
      await s.clock.advance(1000);
      return dataOf(await s.call("PATCH", `/v1/agents/${agent.id}`, { body: {} })).updatedAt === agent.updatedAt;
    },
  },

  /* §5 delete */
  "soft-delete-listed": {
    expected: 0,
    probe: async (s) => {
      await s.call("DELETE", `/v1/agents/${seedOne(s).id}`);
      return paginationOf(await s.call("GET", "/v1/agents")).total;
    },
  },
  "delete-without-permission": {
    expected: 403,
    probe: async (s) => (await s.call("DELETE", `/v1/agents/${seedOne(s).id}`, { key: KEYS.readOnly })).status,
  },
  "delete-account-unguarded": {
    expected: 404,
    // a fresh server: the other account has never created an agent
    probe: async (s) => (await s.call("DELETE", "/v1/agents/agt_missing", { key: KEYS.other })).status,
  },
  "delete-without-deleted-flag": {
    expected: true,
    probe: async (s) => dataOf(await s.call("DELETE", `/v1/agents/${seedOne(s).id}`)).deleted,
  },

  /* §5 send message */
  "message-null-accepted": {
    expected: 400,
    probe: async (s) => (await s.send(seedOne(s).id, { text: "hi", userId: null })).status,
  },
  "reply-id-without-prefix": {
    expected: true,
    probe: async (s) => /^msg_/.test(String(dataOf(await s.send(seedOne(s).id, { text: "hi" })).id)),
  },
  "conversation-ignores-room": {
    expected: false,
    probe: async (s) => {
      const id = seedOne(s).id;
      const a = dataOf(await s.send(id, { text: "hi", userId: "u1", roomId: "r1" }));
      const b = dataOf(await s.send(id, { text: "hi", userId: "u1", roomId: "r2" }));
      return a.conversationId === b.conversationId;
    },
  },
  "failed-exchange-takes-turn": {
    expected: 1,
    probe: async (s) => {
      const id = seedOne(s, { name: "E", modelSettings: { model: "mock-error" } }).id;
      await s.send(id, { text: "hi", userId: "u1" });
      await s.call("PATCH", `/v1/agents/${id}`, { body: { status: "active", modelSettings: { model: "mock-1" } } });
      return dataOf(await s.send(id, { text: "hi", userId: "u1" })).turn;
    },
  },
  "abandoned-stream-runs-on": {
    expected: 1,
    probe: async (s) => {
      const net = await listen(s);
      try {
        const { id, leave } = await streamToLeave(s, net, { userId: "u1" });
        await s.clock.untilTimers(2); // the exchange's budget and heartbeat
        await leave();
        await eventually(() => s.clock.pendingTimers < 2, "the server to see the client go");
        await s.clock.advance(10_000);
        await s.call("PATCH", `/v1/agents/${id}`, { body: { modelSettings: { model: "mock-1" } } });
        return dataOf(await s.send(id, { text: "hi", userId: "u1" })).turn;
      } finally {
        await net.close();
      }
    },
  },
  "done-text-mismatch": {
    expected: true,
    probe: async (s) => {
      const events = sseEvents(await s.send(seedOne(s).id, { text: "hello", stream: true }));
      const deltas = events.filter((e) => e.event === "delta").map((e) => (e.data as Obj).text);
      return (events.at(-1)?.data as Obj).text === deltas.join("");
    },
  },
  "stream-error-dropped": {
    expected: ["error"],
    probe: async (s) => {
      const id = seedOne(s, { name: "E", modelSettings: { model: "mock-error" } }).id;
      return sseEvents(await s.send(id, { text: "hi", stream: true })).map((e) => e.event);
    },
  },
  "no-heartbeat": {
    expected: true,
    probe: async (s) => {
      return commentsOf(parseSse((await streamOnceTimed(s, "mock-timeout", 2, BUDGET_MS)).body)).length > 0;
    },
  },
  "budget-never-enforced": {
    expected: 0,
    probe: (s) => budgetTimersAfter(s, 10 * BUDGET_MS, 2_000_000_000),
  },
  "budget-tripled": {
    expected: 0,
    probe: (s) => budgetTimersAfter(s, BUDGET_MS, 3 * BUDGET_MS),
  },
  "inactive-agent-answers": {
    expected: 503,
    probe: async (s) => (await s.send(seedOne(s, { name: "Off", status: "inactive" }).id, { text: "hi" })).status,
  },
  "model-error-keeps-status": {
    expected: "error",
    probe: async (s) => {
      const id = seedOne(s, { name: "E", modelSettings: { model: "mock-error" } }).id;
      await s.send(id, { text: "hi" });
      return dataOf(await s.call("GET", `/v1/agents/${id}`)).status;
    },
  },

  /* §6 */
  "lowercase-bearer-rejected": {
    expected: 200,
    probe: async (s) =>
      (await s.call("GET", "/v1/agents", { key: null, headers: { authorization: `bearer ${KEYS.main}` } })).status,
  },
  "no-www-authenticate": {
    expected: true,
    probe: async (s) => (await s.call("GET", "/v1/agents", { key: null })).headers["www-authenticate"] !== undefined,
  },
  "bad-scheme-counted": {
    expected: String(SMALL_TIER - 1),
    probe: async (s) => {
      await repeat(3, () => s.call("GET", "/v1/agents", { key: null, headers: { authorization: `Basic ${KEYS.small}` } }));
      return (await s.call("GET", "/v1/agents", { key: KEYS.small })).headers["x-ratelimit-remaining"];
    },
  },
  "key-in-403": {
    expected: false,
    probe: async (s) => (await s.call("DELETE", "/v1/agents/agt_x", { key: KEYS.readOnly })).body.includes(KEYS.readOnly),
  },
  "key-in-header": {
    expected: false,
    probe: async (s) => Object.values((await s.call("GET", "/v1/agents")).headers).some((v) => v?.includes(KEYS.main)),
  },
  "cross-account-read": {
    expected: 404,
    probe: async (s) => (await s.call("GET", `/v1/agents/${seedOne(s, { name: "Theirs" }, ACCOUNTS.other).id}`)).status,
  },
  "send-without-permission": {
    expected: 403,
    probe: async (s) => (await s.send(seedOne(s).id, { text: "hi" }, KEYS.noSend)).status,
  },

  /* §7 */
  "no-retry-after": {
    expected: true,
    probe: async (s) => (await repeat(11, () => s.call("DELETE", "/v1/agents/agt_missing"))).headers["retry-after"] !== undefined,
  },
  "rate-limited-delete-deletes": {
    expected: 200,
    probe: async (s) => {
      const id = seedOne(s).id;
      await repeat(10, () => s.call("DELETE", "/v1/agents/agt_missing"));
      await s.call("DELETE", `/v1/agents/${id}`);
      return (await s.call("GET", `/v1/agents/${id}`)).status;
    },
  },
  "remaining-off-by-one": {
    expected: "59",
    probe: async (s) => (await s.call("GET", "/v1/agents")).headers["x-ratelimit-remaining"],
  },
  "remaining-never-decrements": {
    expected: "58",
    probe: async (s) => {
      await s.call("GET", "/v1/agents");
      return (await s.call("GET", "/v1/agents")).headers["x-ratelimit-remaining"];
    },
  },
  "reset-in-milliseconds": {
    expected: true,
    probe: async (s) =>
      Number((await s.call("GET", "/v1/agents")).headers["x-ratelimit-reset"]) <= s.clock.now() / 1000 + WINDOW_SECONDS + 1,
  },
  "reset-behind-clock": {
    expected: true,
    probe: async (s) =>
      Number((await s.call("GET", "/v1/agents")).headers["x-ratelimit-reset"]) ===
      Math.ceil(s.clock.now() / 1000 + WINDOW_SECONDS),
  },
  "create-bucket-of-11": {
    expected: 429,
    probe: async (s) => (await repeat(11, () => s.call("POST", "/v1/agents", { body: { name: "A" } }))).status,
  },
  "delete-counted-twice": {
    expected: "9",
    probe: async (s) => (await s.call("DELETE", "/v1/agents/agt_missing")).headers["x-ratelimit-remaining"],
  },
  "create-refused-with-room": {
    expected: 201,
    probe: async (s) => (await repeat(6, () => s.call("POST", "/v1/agents", { body: { name: "A" } }))).status,
  },
  "create-refused-uncounted": {
    expected: 201,
    probe: async (s) => (await repeat(7, () => s.call("POST", "/v1/agents", { body: { name: "A" } }))).status,
  },
  "agent-bucket-per-key": {
    expected: 429,
    probe: async (s) => {
      const id = seedOne(s).id;
      await repeat(60, () => s.send(id, { text: "hi" }, KEYS.main));
      return (await s.send(id, { text: "hi" }, KEYS.mainSecond)).status;
    },
  },
  "tier-per-endpoint": {
    expected: 429,
    probe: async (s) => {
      await repeat(SMALL_TIER, () => s.call("GET", "/v1/agents", { key: KEYS.small }));
      return (await s.call("GET", "/v1/agents/agt_missing", { key: KEYS.small })).status;
    },
  },
  "tier-split-messages-apart": {
    expected: 429,
    probe: async (s) => {
      await repeat(SMALL_TIER, () => s.send("agt_missing", { text: "hi" }, KEYS.small));
      return (await s.call("GET", "/v1/agents", { key: KEYS.small })).status;
    },
  },
  "tier-admits-past-limit": {
    expected: "429 0",
    probe: async (s) => {
      await repeat(SMALL_TIER, () => s.call("GET", "/v1/agents", { key: KEYS.small }));
      const past = await s.call("POST", "/v1/agents", { key: KEYS.small, body: { name: "A" } });
      return `${past.status} ${past.headers["x-ratelimit-remaining"]}`;
    },
  },
  "tier-shared-by-accounts": {
    expected: 200,
    probe: async (s) => {
      await repeat(SMALL_TIER, () => s.call("GET", "/v1/agents"));
      return (await s.call("GET", "/v1/agents", { key: KEYS.small })).status;
    },
  },
  "forbidden-not-counted": {
    expected: 1,
    probe: async (s) => {
      const forbidden = () => s.call("POST", "/v1/agents", { key: KEYS.readOnly, body: { name: "A" } });
      const first = await forbidden();
      return num(first, "x-ratelimit-remaining") - num(await forbidden(), "x-ratelimit-remaining");
    },
  },
  "budget-keeps-slot": {
    expected: 400,
    probe: async (s) => {
      const { id } = await whileCapFull(s, async () => undefined);
      return (await s.send(id, { text: "" })).status;
    },
  },
  "sheds-past-eight-in-flight": {
    // ten budgets running while the ten are held: none may end before the budget
    expected: 10,
    probe: async (s) =>
      (
        await whileCapFull(s, async () => {
          await s.clock.advance(SHED_AFTER_MS);
          return s.clock.pendingTimers;
        })
      ).result,
  },
  "gone-client-keeps-slot": {
    expected: 400,
    probe: async (s) => {
      const net = await listen(s);
      try {
        const { id, leave } = await streamToLeave(s, net, {});
        // the other nine slots: a budget timer each, the stream's budget and heartbeat
        const inFlight = Array.from({ length: 9 }, () => s.send(id, { text: "hi" }));
        await s.clock.untilTimers(11);
        await leave();
        await eventually(() => s.clock.pendingTimers < 11, "the server to see the client go");
        // a blank text is answered 400 once admitted, 429 while the cap is full
        const status = (await s.send(id, { text: "" })).status;
        await s.clock.advance(BUDGET_MS);
        await Promise.all(inFlight);
        return status;
      } finally {
        await net.close();
      }
    },
  },
  "concurrency-refusal-counted": { expected: 50, probe: (s) => refusalRemaining(s) },
  "concurrency-refusal-reads-empty": { expected: 50, probe: (s) => refusalRemaining(s) },
  "rate-limited-counted": {
    expected: 200,
    probe: async (s) => {
      await repeat(11, () => s.call("POST", "/v1/agents", { key: KEYS.small, body: { name: "A" } }));
      return (await repeat(2, () => s.call("GET", "/v1/agents", { key: KEYS.small }))).status;
    },
  },
  "bucket-stays-locked": {
    expected: 404,
    probe: async (s) => {
      await repeat(11, () => s.call("DELETE", "/v1/agents/agt_missing"));
      await s.clock.advance(WINDOW_SECONDS * 1000);
      return (await s.call("DELETE", "/v1/agents/agt_missing")).status;
    },
  },
  "concurrency-unlimited": {
    expected: 429,
    probe: async (s) => {
      const id = seedOne(s, { name: "T", modelSettings: { model: "mock-timeout" } }).id;
      const inFlight = Array.from({ length: 10 }, () => s.send(id, { text: "hi" }));
      await s.clock.untilTimers(10);
      const eleventh = track(s.send(id, { text: "hi" }));
      // refused at once, or in flight with its own budget timer
      await eventually(() => eleventh.settled || s.clock.pendingTimers >= 11, "the 11th message to settle or start");
      await s.clock.advance(BUDGET_MS);
      await Promise.all(inFlight);
      return (await eleventh.promise).status;
    },
  },
  "quota-not-enforced": {
    expected: "INSUFFICIENT_QUOTA",
    probe: async (s) => {
      const id = seedOne(s, { name: "Q" }, ACCOUNTS.quota).id;
      return codeOf(await repeat(QUOTA + 1, () => s.send(id, { text: "hi" }, KEYS.quota)));
    },
  },
  "oversize-body-500": {
    expected: 413,
    probe: async (s) => (await s.call("POST", "/v1/agents", { raw: `{"name":"${"x".repeat(70_000)}"}` })).status,
  },
  "content-type-ignored": {
    expected: 415,
    probe: async (s) => (await s.call("POST", "/v1/agents", { raw: '{"name":"A"}', contentType: "text/plain" })).status,
  },

  /* §8 */
  "deactivate-wipes-config": {
    expected: "kept",
    probe: async (s) =>
      dataOf(await s.call("PATCH", `/v1/agents/${seedOne(s, { name: "A", bio: "kept" }).id}`, { body: { status: "inactive" } }))
        .bio,
  },

  /* §9 */
  "unknown-path-before-auth": { expected: 401, probe: async (s) => (await s.call("GET", "/v1/nowhere", { key: null })).status },
  "no-allow-header": {
    expected: true,
    probe: async (s) => (await s.call("PUT", "/v1/agents", { body: {} })).headers.allow !== undefined,
  },
  "unknown-method-400": { expected: 405, probe: async (s) => (await s.call("QUERY", "/v1/agents")).status },
  "empty-id-500": { expected: 404, probe: async (s) => (await s.call("GET", "/v1/agents/")).status },
  "trailing-slash-bypass": {
    expected: 404,
    probe: async (s) => {
      await repeat(10, () => s.call("POST", "/v1/agents", { body: { name: "A" } }));
      return (await s.call("POST", "/v1/agents/", { body: { name: "A" } })).status;
    },
  },

  /* §10 */
  "reply-not-deterministic": {
    expected: true,
    probe: async (s) => {
      const id = seedOne(s).id;
      const a = dataOf(await s.send(id, { text: "hi", userId: "u1" }));
      const b = dataOf(await s.send(id, { text: "hi", userId: "u2" }));
      return a.text === b.text;
    },
  },
  "mock-slow-single-delta": {
    expected: true,
    probe: async (s) => {
      return sseEvents(await streamOnceTimed(s, "mock-slow", 3, 2100)).filter((e) => e.event === "delta").length >= 20;
    },
  },

  /* the faults only the property suites catch: each shows for some inputs or histories only */
  "name-nfc-normalized": {
    expected: "Ade\u0301",
    probe: async (s) => dataOf(await s.call("POST", "/v1/agents", { body: { name: "Ade\u0301" } })).name,
  },
  "list-filter-after-page": {
    expected: ["B"],
    probe: async (s) => {
      seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A", status: "inactive" }, { name: "B" }, { name: "C" }]);
      const res = await s.call("GET", "/v1/agents?status=active&sortBy=name&order=asc&limit=1");
      return ((res.json as { data: Obj[] }).data ?? []).map((a) => a.name);
    },
  },
  "same-status-bumps-updated-at": {
    expected: true,
    probe: async (s) => {
      const agent = seedOne(s);
      await s.clock.advance(1000);
      return (
        dataOf(await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { status: "active" } })).updatedAt === agent.updatedAt
      );
    },
  },
  "temperature-two-decimals": {
    expected: 0.123,
    probe: async (s) =>
      (
        dataOf(await s.call("POST", "/v1/agents", { body: { name: "T", modelSettings: { temperature: 0.123 } } }))
          .modelSettings as Obj
      )?.temperature,
  },
  "knowledge-bases-appended": {
    expected: ["b"],
    probe: async (s) => {
      const agent = seedOne(s, { name: "K", knowledge: { knowledgeBases: ["a"] } });
      const res = await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { knowledge: { knowledgeBases: ["b"] } } });
      return (dataOf(res).knowledge as Obj)?.knowledgeBases;
    },
  },
  "rename-keeps-sort-key": {
    expected: ["B", "C"],
    probe: async (s) => {
      const [a] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }]);
      await s.call("PATCH", `/v1/agents/${a!.id}`, { body: { name: "C" } });
      const res = await s.call("GET", "/v1/agents?sortBy=name&order=asc");
      return (res.json as { data: Obj[] }).data.map((x) => x.name);
    },
  },
  "list-total-stale-after-delete": {
    expected: 1,
    probe: async (s) => {
      const [a] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }]);
      await s.call("DELETE", `/v1/agents/${a!.id}`);
      return paginationOf(await s.call("GET", "/v1/agents")).total;
    },
  },

  /* where random data rarely goes */
  "rename-to-taken-name-refused": {
    expected: 200,
    probe: async (s) => {
      const [, b] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }]);
      return (await s.call("PATCH", `/v1/agents/${b!.id}`, { body: { name: "A" } })).status;
    },
  },
  "model-change-clears-error": {
    expected: "error",
    probe: async (s) => {
      const id = seedOne(s, { name: "E", modelSettings: { model: "mock-error" } }).id;
      await s.send(id, { text: "hi" });
      return dataOf(await s.call("PATCH", `/v1/agents/${id}`, { body: { modelSettings: { model: "mock-1" } } })).status;
    },
  },
  "created-at-ties-by-id-ascending": {
    expected: true,
    probe: async (s) => {
      // seeded on a clock that does not move: all three tie on createdAt
      seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }, { name: "C" }]);
      const ids = listOf(await s.call("GET", "/v1/agents?sortBy=createdAt&order=desc")).data.map((a) => a.id);
      return JSON.stringify(ids) === JSON.stringify([...ids].sort().reverse());
    },
  },
  "conversation-ids-recycled": {
    expected: false,
    probe: async (s) => {
      const first = seedOne(s).id;
      const used = new Set<string>();
      for (let i = 0; i < 8; i++) used.add(String(dataOf(await s.send(first, { text: "hi", userId: `u${i}` })).conversationId));
      await s.call("DELETE", `/v1/agents/${first}`);
      const later = dataOf(await s.send(seedOne(s).id, { text: "hi", userId: "u0" })).conversationId;
      return used.has(String(later));
    },
  },

  /* on the roads out of error and inactive */
  "error-reactivation-new-conversations": {
    expected: true,
    probe: async (s) => {
      const id = seedOne(s, { name: "E" }).id;
      const before = dataOf(await s.send(id, { text: "hi", userId: "u1" })).conversationId;
      await s.call("PATCH", `/v1/agents/${id}`, { body: { modelSettings: { model: "mock-error" } } });
      await s.send(id, { text: "hi" });
      await s.call("PATCH", `/v1/agents/${id}`, { body: { status: "active", modelSettings: { model: "mock-1" } } });
      return dataOf(await s.send(id, { text: "hi", userId: "u1" })).conversationId === before;
    },
  },
  "error-to-inactive-listed-as-error": {
    expected: ["inactive"],
    probe: async (s) => {
      const id = seedOne(s, { name: "E", modelSettings: { model: "mock-error" } }).id;
      await s.send(id, { text: "hi" });
      await s.call("PATCH", `/v1/agents/${id}`, { body: { status: "inactive" } });
      return listOf(await s.call("GET", "/v1/agents?status=inactive")).data.map((a) => a.status);
    },
  },
  "error-patch-stores-active": {
    expected: "error",
    probe: async (s) => {
      const id = seedOne(s, { name: "E", modelSettings: { model: "mock-error" } }).id;
      await s.send(id, { text: "hi" });
      await s.call("PATCH", `/v1/agents/${id}`, { body: { bio: "still broken" } });
      return dataOf(await s.call("GET", `/v1/agents/${id}`)).status;
    },
  },
  "error-delete-still-readable": {
    expected: 404,
    probe: async (s) => {
      const id = seedOne(s, { name: "E", modelSettings: { model: "mock-error" } }).id;
      await s.send(id, { text: "hi" });
      await s.call("DELETE", `/v1/agents/${id}`);
      return (await s.call("GET", `/v1/agents/${id}`)).status;
    },
  },
  "reactivation-restarts-turns": {
    expected: 2,
    probe: async (s) => {
      const id = seedOne(s, { name: "I" }).id;
      await s.send(id, { text: "hi", userId: "u1" });
      await s.call("PATCH", `/v1/agents/${id}`, { body: { status: "inactive" } });
      await s.call("PATCH", `/v1/agents/${id}`, { body: { status: "active" } });
      return dataOf(await s.send(id, { text: "hi", userId: "u1" })).turn;
    },
  },
  "inactive-repatch-moves-updated-at": {
    expected: true,
    probe: async (s) => {
      const id = seedOne(s, { name: "I", status: "inactive" }).id;
      const first = dataOf(await s.call("PATCH", `/v1/agents/${id}`, { body: { bio: "b" } })).updatedAt;
      return dataOf(await s.call("PATCH", `/v1/agents/${id}`, { body: { bio: "b" } })).updatedAt === first;
    },
  },
  "inactive-delete-stays-listed": {
    expected: 0,
    probe: async (s) => {
      const id = seedOne(s, { name: "I", status: "inactive" }).id;
      await s.call("DELETE", `/v1/agents/${id}`);
      return paginationOf(await s.call("GET", "/v1/agents?status=inactive")).total;
    },
  },
};

describe("harness §7 injected faults", () => {
  test("every fault has a probe and every probe a fault; FAULT_NAMES is sorted", () => {
    expect(Object.keys(PROBES).sort()).toEqual(FAULT_NAMES);
    expect([...FAULT_NAMES].sort()).toEqual(FAULT_NAMES);
    expect(FAULT_NAMES.length).toBeGreaterThanOrEqual(22);
  });

  test("every fault cites a PROFILE clause and describes itself in one line", () => {
    for (const [name, fault] of Object.entries(FAULTS)) {
      expect(CLAUSE_BY_ID.has(fault.clause), `${name} cites ${fault.clause}`).toBe(true);
      expect(fault.description).toMatch(/^[^\n]{10,100}$/);
    }
  });

  test("the faults reach every PROFILE section §1–§10", () => {
    const sections = new Set(Object.values(FAULTS).map((f) => CLAUSE_BY_ID.get(f.clause)?.section));
    expect([...sections].sort((a, b) => Number(a?.slice(1)) - Number(b?.slice(1)))).toEqual([
      "§1",
      "§2",
      "§3",
      "§4",
      "§5",
      "§6",
      "§7",
      "§8",
      "§9",
      "§10",
    ]);
  });

  test("all faults install together, and an unknown name is refused", async () => {
    const { app } = buildServer({ keys: testKeys(), faults: [...FAULT_NAMES] });
    expect((await app.inject({ url: "/health" })).statusCode).toBe(200);
    expect(() => buildServer({ keys: testKeys(), faults: ["no-such-fault"] })).toThrow(/unknown fault/);
  });

  test.for(FAULT_NAMES)("%s changes what the server answers", async (name) => {
    const { expected, probe } = PROBES[name]!;
    expect(await probe(makeServer()), "the clean server").toEqual(expected);
    expect(await probe(makeServer({ faults: [name] })), `with ${name}`).not.toEqual(expected);
  });
});
