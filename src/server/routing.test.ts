import { describe, expect, test } from "vitest";
import type { Agent } from "../contract/index.js";
import { ACCOUNTS, makeServer, seedAgents, type TestServer } from "./test-support.js";
import { expectError, type Res } from "./test-support-answers.js";

const UNKNOWN = [
  "/v1",
  "/v1/",
  "/v1/nope",
  "/v1/agent",
  "/v1/agents/agt_x/extra",
  "/v1/agents/agt_x/messages/1",
  "/v1/agents/agt_x/message",
  "/v1/health",
  "/v1/agents%2F",
  "/v1/%zz",
];

const LACKING: [string, string, string[]][] = [
  ["PUT", "/v1/agents", ["GET", "POST"]],
  ["DELETE", "/v1/agents", ["GET", "POST"]],
  ["PATCH", "/v1/agents", ["GET", "POST"]],
  ["POST", "/v1/agents/agt_x", ["DELETE", "GET", "PATCH"]],
  ["PUT", "/v1/agents/agt_x", ["DELETE", "GET", "PATCH"]],
  ["GET", "/v1/agents/agt_x/messages", ["POST"]],
  ["DELETE", "/v1/agents/agt_x/messages", ["POST"]],
  ["OPTIONS", "/v1/agents", ["GET", "POST"]],
  // a method the server knows no route for (found by an outside fuzzer: it answered 400)
  ["QUERY", "/v1/agents", ["GET", "POST"]],
  ["QUERY", "/v1/agents/agt_x", ["DELETE", "GET", "PATCH"]],
  ["PROPFIND", "/v1/agents/agt_x/messages", ["POST"]],
];

/** PROFILE §3 precedence, on a fresh server: without a key the request is 401 whatever its route; then the answer with one. */
async function keyedAfter401(method: string, path: string, body?: unknown): Promise<Res> {
  const s = makeServer();
  expectError(await s.call(method, path, { key: null, body }), 401, "UNAUTHORIZED");
  return s.call(method, path, { body });
}

describe("§9 routing", () => {
  test("§9 an unknown method on an unknown path → 404 NOT_FOUND, not 400", async () => {
    const s = makeServer();
    expectError(await s.call("QUERY", "/v1/nope"), 404, "NOT_FOUND");
  });

  test.for(UNKNOWN)("§9 unknown path %s → 401 without a key, 404 NOT_FOUND with one", async (path) => {
    const res = await keyedAfter401("GET", path);
    expect(res.status).toBe(404);
    expectError(res, 404, (res.json as { error: { code: string } }).error.code);
    expect(["NOT_FOUND", "AGENT_NOT_FOUND"]).toContain((res.json as { error: { code: string } }).error.code);
  });

  test.for(LACKING)("§9 %s %s: a method the path lacks → 401 without a key, else 404 or 405 with Allow", async ([
    method,
    path,
    allow,
  ]) => {
    const body = ["GET", "DELETE", "OPTIONS", "QUERY", "PROPFIND"].includes(method) ? undefined : {};
    const res = await keyedAfter401(method, path, body);
    if (res.status === 405) {
      expectError(res, 405, "METHOD_NOT_ALLOWED");
      const listed = (res.headers.allow ?? "").split(",").map((m) => m.trim());
      expect(listed.filter((m) => m !== "HEAD").sort()).toEqual(allow);
    } else {
      expectError(res, 404, "NOT_FOUND");
    }
  });

  test.for([
    ["GET", "/v1/agents/"],
    ["PATCH", "/v1/agents/"],
    ["DELETE", "/v1/agents/"],
    ["POST", "/v1/agents//messages"],
  ])("§9 %s %s with an empty id → 404", async ([method, path]) => {
    const s = makeServer();
    await s.createAgent();
    const res = await s.call(method!, path!, { body: method === "GET" || method === "DELETE" ? undefined : { text: "hi" } });
    expect(res.status).toBe(404);
    expect(["NOT_FOUND", "AGENT_NOT_FOUND"]).toContain((res.json as { error: { code: string } }).error.code);
  });

  test("§9 paths are case-sensitive: other letter case is not another route to the resource", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    for (const path of ["/V1/agents", "/v1/Agents", "/v1/AGENTS", `/v1/agents/${agent.id.toUpperCase()}`])
      expect((await s.call("GET", path)).status).toBe(404);
  });
});

/**
 * PROFILE §9: a variant of a path answers 404 or is the same resource counted in the same
 * buckets. Fill the bucket through the canonical path; then every variant must be 404 or 429.
 */
const VARIANTS: [string, number, (s: TestServer, id: string) => Promise<number>, string[]][] = [
  [
    "create",
    10,
    async (s) => (await s.call("POST", "/v1/agents", { body: { name: "A" } })).status,
    ["POST /v1/agents/", "POST /v1/Agents", "POST /v1/%61gents", "POST /v1/agents%2F", "POST //v1/agents", "POST /v1//agents"],
  ],
  [
    "list",
    60,
    async (s) => (await s.call("GET", "/v1/agents")).status,
    ["GET /v1/agents/", "GET /V1/agents", "GET /v1/agent%73", "GET /v1/agents?", "GET /v1/agents#x", "GET /v1/./agents"],
  ],
  [
    "get",
    60,
    async (s, id) => (await s.call("GET", `/v1/agents/${id}`)).status,
    ["GET /v1/agents/:id/", "GET /v1/Agents/:id", "GET /v1/agents/:pct", "GET /v1/%61gents/:id", "GET /v1/agents/:id?x=1"],
  ],
  [
    "send message",
    60,
    async (s, id) => (await s.send(id, { text: "hi" })).status,
    [
      "POST /v1/agents/:id/messages/",
      "POST /v1/agents/:id/Messages",
      "POST /v1/agents/:pct/messages",
      "POST /v1/agents/:id/%6Dessages",
      "POST /v1/agents/:id//messages",
    ],
  ],
];

describe("§9 path variants", () => {
  test.for(VARIANTS)("§9 %s: once its bucket is empty, every variant answers 404 or 429", async ([
    ,
    size,
    canonical,
    variants,
  ]) => {
    const s = makeServer();
    const [agent] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "Target" }]) as [Agent];
    // percent-encode every character of the id
    const pct = [...agent.id].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join("");
    for (let i = 0; i < size; i++) expect(await canonical(s, agent.id)).toBeLessThan(400);
    expect(await canonical(s, agent.id)).toBe(429);
    for (const variant of variants) {
      const [method, path] = variant.replace(":id", agent.id).replace(":pct", pct).split(" ") as [string, string];
      const res = await s.call(method, path, { body: method === "POST" ? { name: "A", text: "hi" } : undefined });
      expect([404, 429], `${variant} → ${res.status} ${res.body}`).toContain(res.status);
    }
  });

  test("§9 a percent-encoded id is the same agent, counted in the same bucket", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const pct = [...agent.id].map((c) => `%${c.charCodeAt(0).toString(16)}`).join("");
    const plain = await s.call("GET", `/v1/agents/${agent.id}`);
    const encoded = await s.call("GET", `/v1/agents/${pct}`);
    expect(encoded.status).toBe(200);
    expect(encoded.json).toEqual(plain.json);
    expect(Number(encoded.headers["x-ratelimit-remaining"])).toBe(Number(plain.headers["x-ratelimit-remaining"]) - 1);
  });

  test.for([
    "/v1/agents/%zz",
    "/v1/agents/%",
    "/v1/agents/%C0%AF",
    "/v1/agents/%E2%82",
    "/v1/agents/%zz/messages",
  ])("§9 §3 an undecodable path %s is answered like any unknown agent: 401 first, then 404, with X-Request-Id", async (path) => {
    const method = path.endsWith("messages") ? "POST" : "GET";
    const res = await keyedAfter401(method, path, method === "POST" ? { text: "hi" } : undefined);
    expectError(res, 404, "AGENT_NOT_FOUND");
    expect(res.headers["x-request-id"]).toBeTruthy();
    expect(res.headers["x-ratelimit-limit"]).toBeTruthy();
  });
});

describe("§3 §5 over-long ids", () => {
  test.for([
    101, 2_049, 10_000,
  ])("§3 §5 an id of %i characters is a malformed id: 404 AGENT_NOT_FOUND, never 414", async (length) => {
    const s = makeServer();
    const id = "a".repeat(length);
    for (const [method, path, body] of [
      ["GET", `/v1/agents/${id}`, undefined],
      ["PATCH", `/v1/agents/${id}`, { bio: "x" }],
      ["DELETE", `/v1/agents/${id}`, undefined],
      ["POST", `/v1/agents/${id}/messages`, { text: "hi" }],
    ] as const) {
      const res = await s.call(method, path, { body });
      expectError(res, 404, "AGENT_NOT_FOUND");
      expect(res.headers["x-request-id"]).toBeTruthy();
    }
  });
});
