import { describe, expect, test } from "vitest";
import {
  ACCOUNTS,
  CALL_ENDPOINT,
  KEYS,
  makeServer,
  SMALL_TIER,
  seedAgents,
  TestClock,
  type TestServer,
  WINDOW_SECONDS,
} from "./test-support.js";
import { agentOf, expectError, listOf, num, type Res, replyOf } from "./test-support-answers.js";

const nowSeconds = (s: TestServer) => s.clock.now() / 1000;

/** PROFILE §7 headers of a 429 RATE_LIMIT_EXCEEDED from an empty bucket. */
function expect429(s: TestServer, res: Res, limit: number): void {
  expectError(res, 429, "RATE_LIMIT_EXCEEDED");
  const retryAfter = res.headers["retry-after"] ?? "";
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
  expect(num(res, "x-ratelimit-limit")).toBe(limit);
  expect(num(res, "x-ratelimit-remaining")).toBe(0);
  const reset = num(res, "x-ratelimit-reset");
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThan(nowSeconds(s));
  expect(reset).toBeLessThanOrEqual(nowSeconds(s) + WINDOW_SECONDS + 1);
  // Retry-After and X-RateLimit-Reset agree
  expect(Math.abs(nowSeconds(s) + Number(retryAfter) - reset)).toBeLessThanOrEqual(1);
}

const headersOf = (res: Res) => ({
  limit: num(res, "x-ratelimit-limit"),
  remaining: num(res, "x-ratelimit-remaining"),
});

/** One endpoint's bucket (its size restated from PROFILE §7): a request that is counted whatever it answers. */
const BUCKETS = (
  [
    ["create", 10],
    ["list", 60],
    ["get", 60],
    ["update", 30],
    ["delete", 10],
    ["send", 60],
  ] as const
).map(([name, size]) => [name, size, (s: TestServer, id: string, n: number) => CALL_ENDPOINT[name](s, id, { n })] as const);

describe("§7 rate buckets", () => {
  test.for(BUCKETS)("§7 %s: %i per window, then 429 with Retry-After, Remaining 0 and a near Reset", async ([
    ,
    size,
    request,
  ]) => {
    const s = makeServer();
    const [agent] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "Target" }]);
    for (let i = 0; i < size; i++) {
      const res = await request(s, agent!.id, i);
      expect(res.status, res.body).toBeLessThan(429);
      expect(headersOf(res)).toEqual({ limit: size, remaining: size - 1 - i });
    }
    expect429(s, await request(s, agent!.id, size), size);
  });

  test.for(BUCKETS)("§7 %s recovers once the reset time passes, and refills to exactly its size", async ([, size, request]) => {
    const s = makeServer();
    const [agent] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "Target" }]);
    for (let i = 0; i < size; i++) await request(s, agent!.id, i);
    const refused = await request(s, agent!.id, size);
    expect(refused.status).toBe(429);
    await s.clock.advance(num(refused, "x-ratelimit-reset") * 1000 - s.clock.now());
    for (let i = 0; i < size; i++) expect((await request(s, agent!.id, i)).status).toBeLessThan(429);
    expect((await request(s, agent!.id, size)).status).toBe(429);
  });

  test("§7 Retry-After seconds later the request succeeds", async () => {
    const s = makeServer({ clock: new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0, 250)) });
    for (let i = 0; i < 10; i++) {
      await s.call("POST", "/v1/agents", { body: { name: `A${i}` } });
      await s.clock.advance(1_234);
    }
    const refused = await s.call("POST", "/v1/agents", { body: { name: "late" } });
    expect429(s, refused, 10);
    await s.clock.advance(Number(refused.headers["retry-after"]) * 1000);
    expect((await s.call("POST", "/v1/agents", { body: { name: "late" } })).status).toBe(201);
  });

  test("§7 X-RateLimit-Reset is whole Unix seconds rounded up, after now and at most W + 1 s ahead", async () => {
    const s = makeServer({ clock: new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0, 1)) });
    for (let i = 0; i < 5; i++) {
      const res = await s.call("GET", "/v1/agents");
      const reset = num(res, "x-ratelimit-reset");
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThan(nowSeconds(s));
      expect(reset).toBeLessThanOrEqual(nowSeconds(s) + WINDOW_SECONDS + 1);
      await s.clock.advance(13_999);
    }
  });

  test("§7 a 429 has no effect: no agent created, updated, deleted or messaged", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Keep", bio: "kept" });
    for (let i = 1; i < 10; i++) await s.call("POST", "/v1/agents", { body: { name: `A${i}` } });
    expect429(s, await s.call("POST", "/v1/agents", { body: { name: "Eleventh" } }), 10);
    expect(listOf(await s.call("GET", "/v1/agents?limit=100")).pagination.total).toBe(10);

    for (let i = 0; i < 30; i++) await s.call("PATCH", `/v1/agents/${agent.id}`, { body: {} });
    expect429(s, await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { bio: "changed" } }), 30);

    for (let i = 0; i < 10; i++) await s.call("DELETE", "/v1/agents/agt_missing");
    expect429(s, await s.call("DELETE", `/v1/agents/${agent.id}`), 10);
    expect(agentOf(await s.call("GET", `/v1/agents/${agent.id}`))).toEqual(agent);

    const target = await s.createAgent({ name: "Msg" }, KEYS.mainSecond);
    for (let i = 0; i < 60; i++) await s.send(target.id, { text: "hi", userId: `u${i}` });
    expect429(s, await s.send(target.id, { text: "hi", userId: "u0" }), 60);
    await s.clock.advance(WINDOW_SECONDS * 1000);
    expect(replyOf(await s.send(target.id, { text: "hi", userId: "u0" })).turn).toBe(2);
  });

  test("§7 the create bucket is per key: another key of the account has its own", async () => {
    const s = makeServer();
    for (let i = 0; i < 10; i++) await s.call("POST", "/v1/agents", { body: { name: `A${i}` } });
    expect((await s.call("POST", "/v1/agents", { body: { name: "x" } })).status).toBe(429);
    expect((await s.call("POST", "/v1/agents", { key: KEYS.mainSecond, body: { name: "x" } })).status).toBe(201);
  });

  test("§7 the message bucket is per agent and shared by all keys of its account", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const other = await s.createAgent({ name: "Other" });
    for (let i = 0; i < 60; i++) replyOf(await s.send(agent.id, { text: `m${i}` }, i % 2 ? KEYS.main : KEYS.mainSecond));
    expect429(s, await s.send(agent.id, { text: "more" }, KEYS.main), 60);
    expect429(s, await s.send(agent.id, { text: "more" }, KEYS.mainSecond), 60);
    const free = await s.send(other.id, { text: "hi" });
    expect({ status: free.status, ...headersOf(free) }).toEqual({ status: 200, limit: 60, remaining: 59 });
  });

  test("§7 the tier bucket counts every endpoint of the account together; a 429 is counted in none", async () => {
    const s = makeServer();
    const key = KEYS.small;
    for (let i = 0; i < 10; i++) expect((await s.call("POST", "/v1/agents", { key, body: { name: `A${i}` } })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect429(s, await s.call("POST", "/v1/agents", { key, body: { name: "x" } }), 10);
    const agentId = listOf(await s.call("GET", "/v1/agents", { key })).data[0]!.id;
    expect((await s.call("GET", `/v1/agents/${agentId}`, { key })).status).toBe(200);
    expect429(s, await s.call("GET", "/v1/agents", { key }), SMALL_TIER);
    expect429(s, await s.send(agentId, { text: "hi" }, key), SMALL_TIER);
    // another account is not affected
    expect((await s.call("GET", "/v1/agents")).status).toBe(200);
  });
});

describe("§7 headers", () => {
  test("§7 the headers describe the bucket with the fewest remaining requests", async () => {
    const s = makeServer();
    const key = KEYS.small;
    expect(headersOf(await s.call("GET", "/v1/agents", { key }))).toEqual({ limit: SMALL_TIER, remaining: SMALL_TIER - 1 });
    expect(headersOf(await s.call("GET", "/v1/agents"))).toEqual({ limit: 60, remaining: 59 });
  });

  test("§7 on a tie the endpoint's bucket is described", async () => {
    const s = makeServer();
    const key = KEYS.small;
    await s.call("GET", "/v1/agents", { key });
    await s.call("GET", "/v1/agents", { key });
    // create bucket 10 → 9, tier 12 → 9
    expect(headersOf(await s.call("POST", "/v1/agents", { key, body: { name: "A" } }))).toEqual({ limit: 10, remaining: 9 });
  });

  test("§7 on a 429 from several empty buckets, the one that refills last is described", async () => {
    const s = makeServer();
    const key = KEYS.small;
    await s.call("GET", "/v1/agents", { key });
    await s.call("GET", "/v1/agents", { key });
    const tierStart = s.clock.now();
    await s.clock.advance(10_000);
    for (let i = 0; i < 10; i++) await s.call("POST", "/v1/agents", { key, body: { name: `A${i}` } });
    // both the create bucket (started 10 s later) and the tier are empty now
    const refused = await s.call("POST", "/v1/agents", { key, body: { name: "x" } });
    expect429(s, refused, 10);
    expect(num(refused, "x-ratelimit-reset")).toBe(Math.ceil(s.clock.now() / 1000) + WINDOW_SECONDS);
    expect(num(refused, "x-ratelimit-reset")).toBeGreaterThan((tierStart + WINDOW_SECONDS * 1000) / 1000);
    expect(refused.headers["retry-after"]).toBe(String(WINDOW_SECONDS));
  });

  // the other order, which the suites cannot line up without a computed sleep (docs/architecture.md, mutation testing)
  test("§7 on a 429 from several empty buckets, the tier is described when its window opened after Create's", async () => {
    const s = makeServer();
    const key = KEYS.small;
    await s.call("GET", "/v1/agents", { key });
    await s.clock.advance(10_000);
    for (let i = 0; i < 10; i++) await s.call("POST", "/v1/agents", { key, body: { name: `A${i}` } });
    // the tier's window (opened 10 s before Create's) ends; a new one opens while Create's runs
    await s.clock.advance((WINDOW_SECONDS - 10) * 1000);
    for (let i = 0; i < SMALL_TIER; i++) await s.call("GET", "/v1/agents", { key });
    const refused = await s.call("POST", "/v1/agents", { key, body: { name: "x" } });
    expect429(s, refused, SMALL_TIER);
    expect(num(refused, "x-ratelimit-reset")).toBe(Math.ceil(s.clock.now() / 1000) + WINDOW_SECONDS);
  });

  test("§7 on a 429 from two empty buckets whose windows end together, the endpoint's is described", async () => {
    const s = makeServer();
    const key = KEYS.small;
    // one create opens both windows: they end in the same millisecond
    for (let i = 0; i < 10; i++) await s.call("POST", "/v1/agents", { key, body: { name: `A${i}` } });
    for (let i = 0; i < SMALL_TIER - 10; i++) await s.call("GET", "/v1/agents", { key });
    expect429(s, await s.call("POST", "/v1/agents", { key, body: { name: "x" } }), 10);
  });

  test.for([
    ["200", (s: TestServer) => s.call("GET", "/v1/agents")],
    ["201", (s: TestServer) => s.call("POST", "/v1/agents", { body: { name: "A" } })],
    ["400", (s: TestServer) => s.call("POST", "/v1/agents", { body: {} })],
    ["403", (s: TestServer) => s.call("DELETE", "/v1/agents/agt_x", { key: KEYS.readOnly })],
    ["404", (s: TestServer) => s.call("GET", "/v1/agents/agt_missing")],
    ["404 route", (s: TestServer) => s.call("GET", "/v1/unknown")],
    ["405", (s: TestServer) => s.call("DELETE", "/v1/agents")],
    ["413", (s: TestServer) => s.call("POST", "/v1/agents", { raw: " ".repeat(70_000) })],
    ["415", (s: TestServer) => s.call("POST", "/v1/agents", { raw: "{}", contentType: "text/plain" })],
    [
      "500",
      async (s: TestServer) =>
        s.send((await s.createAgent({ name: "E", modelSettings: { model: "mock-error" } })).id, { text: "x" }),
    ],
    ["503", async (s: TestServer) => s.send((await s.createAgent({ name: "I", status: "inactive" })).id, { text: "x" })],
  ] as const)("§7 every authenticated response carries X-RateLimit-*: %s", async ([, request]) => {
    const res = await request(makeServer());
    expect(res.headers["x-ratelimit-limit"]).toMatch(/^[1-9][0-9]*$/);
    expect(res.headers["x-ratelimit-remaining"]).toMatch(/^[0-9]+$/);
    expect(res.headers["x-ratelimit-reset"]).toMatch(/^[0-9]+$/);
  });
});

describe("§7 sizes and content types", () => {
  const padded = (json: string, bytes: number) => json + " ".repeat(bytes - Buffer.byteLength(json));

  test.for([
    ["create", "POST", "/v1/agents", '{"name":"A"}'],
    ["update", "PATCH", "/v1/agents/:id", '{"bio":"b"}'],
    ["send", "POST", "/v1/agents/:id/messages", '{"text":"hi"}'],
  ] as const)("§7 %s: a body of 65,536 bytes is read; 65,537 → 413 (or 400)", async ([, method, path, json]) => {
    const s = makeServer();
    const agent = await s.createAgent();
    const url = path.replace(":id", agent.id);
    expect((await s.call(method, url, { raw: padded(json, 65_536) })).status).toBeLessThan(300);
    const res = await s.call(method, url, { raw: padded(json, 65_537) });
    expect([400, 413]).toContain(res.status);
    expectError(res, res.status, res.status === 413 ? "PAYLOAD_TOO_LARGE" : "INVALID_REQUEST");
  });

  test("§7 a multi-byte body is measured in bytes, not characters", async () => {
    const s = makeServer();
    const json = '{"name":"A","bio":"é"}';
    const res = await s.call("POST", "/v1/agents", { raw: json + " ".repeat(65_536 - json.length) });
    expect([400, 413]).toContain(res.status);
  });

  test.for([
    ["no Content-Type", null, '{"name":"A"}'],
    ["text/plain", "text/plain", '{"name":"A"}'],
    ["merge-patch on a POST", "application/merge-patch+json", '{"name":"A"}'],
    ["form", "application/x-www-form-urlencoded", "name=A"],
    ["malformed JSON", "application/json", '{"name":"A"'],
    ["JSON array", "application/json", '[{"name":"A"}]'],
    ["JSON string", "application/json", '"A"'],
    ["JSON number", "application/json", "1"],
    ["JSON null", "application/json", "null"],
    ["empty body", "application/json", ""],
    ["trailing garbage", "application/json", '{"name":"A"} x'],
  ] as const)("§7 create with %s → 400 (or 415) and nothing created", async ([, contentType, raw]) => {
    const s = makeServer();
    const res = await s.call("POST", "/v1/agents", { raw, contentType });
    expect(contentType === "application/json" ? [400] : [400, 415]).toContain(res.status);
    expectError(res, res.status, res.status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "INVALID_REQUEST");
    expect(listOf(await s.call("GET", "/v1/agents")).pagination.total).toBe(0);
  });
});

describe("§7 windows on whole seconds (--windows-on-whole-seconds)", () => {
  test("a window opened mid-second ends W after that second began, and its Reset says so exactly", async () => {
    const s = makeServer({ windowStart: "whole-second" });
    await s.clock.advance(700); // 0.7 s into a second
    const first = await s.call("GET", "/v1/agents");
    const secondBegan = Math.floor(s.clock.now() / 1000);
    expect(num(first, "x-ratelimit-reset")).toBe(secondBegan + WINDOW_SECONDS);
    // the clean server's window would start at the request: W later, rounded up
    const clean = makeServer();
    await clean.clock.advance(700);
    expect(num(await clean.call("GET", "/v1/agents"), "x-ratelimit-reset")).toBe(Math.ceil(nowSeconds(clean) + WINDOW_SECONDS));
  });
});
