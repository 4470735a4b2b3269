import { inspect } from "node:util";
import { describe, expect, test } from "vitest";
import { ACCOUNTS, CALL_ENDPOINT, KEYS, makeServer, SMALL_TIER, seedAgents, type TestServer } from "./test-support.js";
import { agentOf, expectError, listOf, num, type Res, replyOf } from "./test-support-answers.js";

type Request = (s: TestServer, agentId: string, headers: Record<string, string>, key?: string | null) => Promise<Res>;

/** Every endpoint, plus an unknown route and a method a path lacks (PROFILE §9: after auth). */
const ENDPOINTS: [string, Request][] = [
  ...Object.entries(CALL_ENDPOINT).map(([name, call]): [string, Request] => [
    name,
    (s, id, headers, key) => call(s, id, { headers, key }),
  ]),
  [
    "send (stream)",
    (s, id, headers, key) => s.call("POST", `/v1/agents/${id}/messages`, { key, headers, body: { text: "hi", stream: true } }),
  ],
  ["unknown route", (s, _id, headers, key) => s.call("GET", "/v1/nothing-here", { key, headers })],
  ["method lacking", (s, _id, headers, key) => s.call("PUT", "/v1/agents", { key, headers, body: {} })],
];

const BAD_AUTH: [string, Record<string, string>][] = [
  ["no Authorization header", {}],
  ["Basic scheme", { authorization: `Basic ${Buffer.from(`user:${KEYS.main}`).toString("base64")}` }],
  ["Basic scheme with the key", { authorization: `Basic ${KEYS.main}` }],
  ["another scheme", { authorization: `Token ${KEYS.main}` }],
  ["no scheme", { authorization: KEYS.main }],
  ["empty key", { authorization: "Bearer " }],
  ["scheme only", { authorization: "Bearer" }],
  ["unknown key", { authorization: "Bearer ak_unknown_0123456789" }],
  ["key with a suffix", { authorization: `Bearer ${KEYS.main}x` }],
  ["key prefix", { authorization: `Bearer ${KEYS.main.slice(0, -1)}` }],
  ["two keys", { authorization: `Bearer ${KEYS.main} ${KEYS.main}` }],
];

const ROWS = ENDPOINTS.flatMap(([endpoint, request]) =>
  BAD_AUTH.map(([fault, headers]) => ({ endpoint, fault, request, headers })),
);

describe("§6 authentication", () => {
  test.for(ROWS)("§6 $endpoint with $fault → 401 UNAUTHORIZED, WWW-Authenticate: Bearer", async (row) => {
    const s = makeServer();
    const agent = await s.createAgent();
    const res = await row.request(s, agent.id, row.headers, null);
    expectError(res, 401, "UNAUTHORIZED");
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer\b/i);
  });

  test.for(["bearer", "BEARER", "BeArEr", "Bearer"])("§6 the scheme matches case-insensitively: %s", async (scheme) => {
    const s = makeServer();
    const res = await s.call("GET", "/v1/agents", { key: null, headers: { authorization: `${scheme} ${KEYS.main}` } });
    expect(res.status).toBe(200);
  });

  test("§6 unauthenticated requests count against no rate limit", async () => {
    const s = makeServer();
    for (const [, headers] of BAD_AUTH)
      for (let i = 0; i < 3; i++) {
        expectError(await s.call("POST", "/v1/agents", { key: null, headers, body: { name: "x" } }), 401, "UNAUTHORIZED");
        const wrongScheme = { authorization: `Token ${KEYS.small}` };
        expectError(await s.call("GET", "/v1/agents", { key: null, headers: wrongScheme }), 401, "UNAUTHORIZED");
      }
    const first = await s.call("POST", "/v1/agents", { body: { name: "A" } });
    expect({
      status: first.status,
      limit: num(first, "x-ratelimit-limit"),
      remaining: num(first, "x-ratelimit-remaining"),
    }).toEqual({ status: 201, limit: 10, remaining: 9 });
    const small = await s.call("GET", "/v1/agents", { key: KEYS.small });
    expect({ limit: num(small, "x-ratelimit-limit"), remaining: num(small, "x-ratelimit-remaining") }).toEqual({
      limit: SMALL_TIER,
      remaining: SMALL_TIER - 1,
    });
  });
});

describe("§6 permissions", () => {
  const FORBIDDEN: [string, string, string][] = [
    ["create", "read-only", KEYS.readOnly],
    ["create", "no agents:write", KEYS.noWrite],
    ["list", "no agents:read", KEYS.noRead],
    ["get", "no agents:read", KEYS.noRead],
    ["update", "read-only", KEYS.readOnly],
    ["update", "no agents:write", KEYS.noWrite],
    ["delete", "read-only", KEYS.readOnly],
    ["delete", "no agents:delete", KEYS.noDelete],
    ["send", "read-only", KEYS.readOnly],
    ["send", "no messages:send", KEYS.noSend],
    ["send (stream)", "no messages:send", KEYS.noSend],
  ];

  test.for(FORBIDDEN)("§6 %s with a %s key → 403 FORBIDDEN, and nothing changes", async ([endpoint, , key]) => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Ada", bio: "kept" });
    const request = ENDPOINTS.find(([name]) => name === endpoint)![1];
    expectError(await request(s, agent.id, {}, key), 403, "FORBIDDEN");
    const { data } = listOf(await s.call("GET", "/v1/agents"));
    expect(data).toEqual([agent]);
    expect(replyOf(await s.send(agent.id, { text: "hi", userId: "u1" })).turn).toBe(1);
  });

  test.for([
    ["read-only", KEYS.readOnly, ["list", "get"]],
    ["no agents:write", KEYS.noWrite, ["list", "get", "send", "delete"]],
    ["no agents:delete", KEYS.noDelete, ["create", "list", "get", "update", "send"]],
    ["no messages:send", KEYS.noSend, ["create", "list", "get", "update", "delete"]],
    ["no agents:read", KEYS.noRead, ["create", "update", "send", "delete"]],
  ] as const)("§6 a %s key may do what it holds", async ([, key, allowed]) => {
    const s = makeServer();
    for (const endpoint of allowed) {
      const agent = await s.createAgent();
      const request = ENDPOINTS.find(([name]) => name === endpoint)![1];
      const res = await request(s, agent.id, {}, key);
      expect(res.status, `${endpoint}: ${res.body}`).toBeLessThan(300);
    }
  });
});

describe("§6 accounts", () => {
  test.for(
    ENDPOINTS.filter(([name]) => ["get", "update", "delete", "send", "send (stream)"].includes(name)),
  )("§6 another account's agent is invisible: %s → 404 AGENT_NOT_FOUND, never 403", async ([, request]) => {
    const s = makeServer();
    const [theirs] = seedAgents(s.ctx, ACCOUNTS.other, [{ name: "Theirs", bio: "untouched" }]);
    const before = agentOf(await s.call("GET", `/v1/agents/${theirs!.id}`, { key: KEYS.other }));
    expectError(await request(s, theirs!.id, {}, KEYS.main), 404, "AGENT_NOT_FOUND");
    expect(agentOf(await s.call("GET", `/v1/agents/${theirs!.id}`, { key: KEYS.other }))).toEqual(before);
    expect(listOf(await s.call("GET", "/v1/agents", { key: KEYS.main })).pagination.total).toBe(0);
  });

  test("§6 two keys of one account see the same agents", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Shared" }, KEYS.main);
    expect(agentOf(await s.call("GET", `/v1/agents/${agent.id}`, { key: KEYS.mainSecond }))).toEqual(agent);
    const a = replyOf(await s.send(agent.id, { text: "hi", userId: "u1" }, KEYS.main));
    const b = replyOf(await s.send(agent.id, { text: "hi", userId: "u1" }, KEYS.mainSecond));
    expect([b.conversationId, b.turn]).toEqual([a.conversationId, 2]);
  });

  test("§6 keys never appear in any response", async () => {
    const s = makeServer();
    const answers: Res[] = [];
    for (const key of Object.values(KEYS)) {
      const agent = await s.call("POST", "/v1/agents", { key, body: { name: "A", platforms: { discord: { enabled: true } } } });
      const id = (agent.json as { data?: { id: string } }).data?.id ?? "agt_missing";
      for (const [, request] of ENDPOINTS) answers.push(await request(s, id, {}, key));
      answers.push(agent);
    }
    for (const [, headers] of BAD_AUTH) answers.push(await s.call("GET", "/v1/agents", { key: null, headers }));
    answers.push(await s.call("GET", "/v1/agents", { key: null, headers: { authorization: "Bearer ak_unknown_0123456789" } }));
    const secrets = [...Object.values(KEYS), "ak_unknown_0123456789"];
    for (const res of answers) {
      const seen = `${res.body}\n${JSON.stringify(res.headers)}`;
      for (const secret of secrets) expect(seen).not.toContain(secret);
    }
  });

  test("§6 Reference: only the SHA-256 of each key is kept", () => {
    const s = makeServer();
    const kept = inspect(s.ctx, { depth: 20, showHidden: true });
    for (const key of Object.values(KEYS)) expect(kept).not.toContain(key);
    expect(s.ctx.keyRing.lookup(KEYS.main)?.account.id).toBe(ACCOUNTS.main);
  });
});
