import { describe, expect, test } from "vitest";
import { KEYS, loadBoundaries, makeServer, type TestServer } from "./test-support.js";
import type { Res } from "./test-support-answers.js";

const SERVER_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** One request of each kind of answer the server gives, so every rule below sees them all. */
const ANSWERS: [string, (s: TestServer, headers: Record<string, string>) => Promise<Res>][] = [
  ["200 health", (s, headers) => s.call("GET", "/health", { key: null, headers })],
  ["200 list", (s, headers) => s.call("GET", "/v1/agents", { headers })],
  ["201 create", (s, headers) => s.call("POST", "/v1/agents", { body: { name: "Ada" }, headers })],
  ["400 invalid body", (s, headers) => s.call("POST", "/v1/agents", { body: { name: "" }, headers })],
  ["400 invalid query", (s, headers) => s.call("GET", "/v1/agents?limit=0", { headers })],
  ["401 no key", (s, headers) => s.call("GET", "/v1/agents", { key: null, headers })],
  ["403 permission", (s, headers) => s.call("POST", "/v1/agents", { key: KEYS.readOnly, body: { name: "Ada" }, headers })],
  ["404 agent", (s, headers) => s.call("GET", "/v1/agents/agt_missing", { headers })],
  ["404 route", (s, headers) => s.call("GET", "/v1/nowhere", { headers })],
  ["404 undecodable path", (s, headers) => s.call("GET", "/v1/agents/%zz", { headers })],
  ["405 method", (s, headers) => s.call("PUT", "/v1/agents", { body: {}, headers })],
  ["413 body", (s, headers) => s.call("POST", "/v1/agents", { raw: `{"name":"${"x".repeat(70_000)}"}`, headers })],
  ["415 content type", (s, headers) => s.call("POST", "/v1/agents", { raw: "{}", contentType: "text/plain", headers })],
  [
    "429 rate limit",
    async (s, headers) => {
      for (let i = 0; i < 10; i++) await s.call("DELETE", "/v1/agents/agt_missing");
      return s.call("DELETE", "/v1/agents/agt_missing", { headers });
    },
  ],
  [
    "500 model error",
    async (s, headers) => {
      const agent = await s.createAgent({ name: "Err", modelSettings: { model: "mock-error" } });
      return s.call("POST", `/v1/agents/${agent.id}/messages`, { body: { text: "hi" }, headers });
    },
  ],
  [
    "503 inactive agent",
    async (s, headers) => {
      const agent = await s.createAgent({ name: "Off", status: "inactive" });
      return s.call("POST", `/v1/agents/${agent.id}/messages`, { body: { text: "hi" }, headers });
    },
  ],
];

describe("§1 transport", () => {
  test.for(ANSWERS)("§1 every response carries X-Request-Id: %s", async ([, answer]) => {
    const res = await answer(makeServer(), {});
    expect(res.headers["x-request-id"]).toMatch(SERVER_ID);
  });

  test.for(ANSWERS)("§1 a well-formed client X-Request-Id is echoed: %s", async ([, answer]) => {
    const res = await answer(makeServer(), { "x-request-id": "client-Id.42_x" });
    expect(res.headers["x-request-id"]).toBe("client-Id.42_x");
  });

  test.for(ANSWERS)("§1 every JSON response is application/json: %s", async ([, answer]) => {
    const res = await answer(makeServer(), {});
    expect(res.headers["content-type"]).toMatch(/^application\/json(\s*;\s*charset=utf-8)?$/i);
    expect(() => JSON.parse(res.body)).not.toThrow();
  });

  const ids = loadBoundaries<{ echoed: string[]; replaced: string[] }>("request-ids.json");

  test.for(ids.echoed)("§1 X-Request-Id %j matches the pattern and is echoed", async (id) => {
    const res = await makeServer().call("GET", "/v1/agents", { headers: { "x-request-id": id } });
    expect(res.headers["x-request-id"]).toBe(id);
  });

  test.for(ids.replaced)("§1 X-Request-Id %j does not match and is replaced by a server id", async (id) => {
    const res = await makeServer().call("GET", "/v1/agents", { headers: { "x-request-id": id } });
    expect(res.headers["x-request-id"]).not.toBe(id);
    expect(res.headers["x-request-id"]).toMatch(SERVER_ID);
  });

  test("§1 the server makes a different request id for each request", async () => {
    const s = makeServer();
    const seen = new Set<string | undefined>();
    for (let i = 0; i < 5; i++) seen.add((await s.call("GET", "/v1/agents")).headers["x-request-id"]);
    expect(seen.size).toBe(5);
  });

  test("§1 Reference: GET /health answers 200 {status: ok} without a key and counts in no bucket", async () => {
    const s = makeServer();
    const res = await s.call("GET", "/health", { key: null });
    expect({ status: res.status, json: res.json }).toEqual({ status: 200, json: { status: "ok" } });
    expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
  });
});

describe("§1 ∩ §6: a key sent as X-Request-Id", () => {
  test("is not echoed, though it matches the echo pattern: keys never appear in a response", async () => {
    const s = makeServer();
    const res = await s.call("GET", "/v1/agents", { headers: { "x-request-id": KEYS.main } });
    expect(SERVER_ID.test(KEYS.main)).toBe(true);
    expect(res.headers["x-request-id"]).toBeDefined();
    expect(res.headers["x-request-id"]).not.toBe(KEYS.main);
  });
});
