import { describe, expect, test } from "vitest";
import { isRecord } from "../contract/index.js";
import { ACCOUNTS, KEYS, loadBoundaries, makeServer, SMALL_TIER, seedAgents, type TestServer } from "./test-support.js";
import { expectError, listOf, type Res } from "./test-support-answers.js";

/** PROFILE §3 as the fixture transcribes it from the PROFILE text (STYLE §2), not as the contract it checks says. */
const PAIRS = loadBoundaries<{ pairs: Record<number, string[]> }>("status-codes.json").pairs;

/** Faulty requests, each answered with one error; the server is fresh for each. */
const FAULTY: [string, number, string, (s: TestServer, key?: string | null) => Promise<Res>][] = [
  ["malformed JSON", 400, "INVALID_REQUEST", (s, key) => s.call("POST", "/v1/agents", { key, raw: "{" })],
  ["invalid query", 400, "INVALID_REQUEST", (s, key) => s.call("GET", "/v1/agents?page=0", { key })],
  ["missing permission", 403, "FORBIDDEN", (s) => s.call("DELETE", "/v1/agents/agt_x", { key: KEYS.readOnly })],
  ["unknown agent", 404, "AGENT_NOT_FOUND", (s, key) => s.call("GET", "/v1/agents/agt_missing", { key })],
  ["unknown route", 404, "NOT_FOUND", (s, key) => s.call("GET", "/v1/agentz", { key })],
  ["method lacking", 405, "METHOD_NOT_ALLOWED", (s, key) => s.call("PUT", "/v1/agents/agt_x", { key, body: {} })],
  [
    "body too large",
    413,
    "PAYLOAD_TOO_LARGE",
    (s, key) => s.call("POST", "/v1/agents", { key, raw: `{"name":"${"x".repeat(66_000)}"}` }),
  ],
  [
    "not JSON",
    415,
    "UNSUPPORTED_MEDIA_TYPE",
    (s, key) => s.call("POST", "/v1/agents", { key, raw: "name=x", contentType: "application/x-www-form-urlencoded" }),
  ],
  [
    "inactive agent",
    503,
    "AGENT_UNAVAILABLE",
    async (s, key) => {
      const [agent] = seedAgents(s.ctx, key === KEYS.small ? ACCOUNTS.small : ACCOUNTS.main, [
        { name: "Off", status: "inactive" },
      ]);
      return s.send(agent!.id, { text: "hi" }, key ?? undefined);
    },
  ],
  [
    "model failure",
    500,
    "MODEL_ERROR",
    async (s, key) => {
      const [agent] = seedAgents(s.ctx, key === KEYS.small ? ACCOUNTS.small : ACCOUNTS.main, [
        { name: "Err", modelSettings: { model: "mock-error" } },
      ]);
      return s.send(agent!.id, { text: "hi" }, key ?? undefined);
    },
  ],
];

/** The faulty requests that take the key they are given. */
const KEYED = FAULTY.filter(([name]) => name !== "missing permission");

describe("§2 envelopes", () => {
  test("§2 a success answer is exactly {success: true, data: <object>}", async () => {
    const s = makeServer();
    const created = await s.call("POST", "/v1/agents", { body: { name: "Ada" } });
    const id = (created.json as { data: { id: string } }).data.id;
    const answers = [
      created,
      await s.call("GET", `/v1/agents/${id}`),
      await s.call("PATCH", `/v1/agents/${id}`, { body: { bio: "b" } }),
      await s.send(id, { text: "hi" }),
      await s.call("DELETE", `/v1/agents/${id}`),
    ];
    for (const res of answers) {
      const env = res.json as Record<string, unknown>;
      expect(Object.keys(env).sort()).toEqual(["data", "success"]);
      expect(env.success).toBe(true);
      expect(isRecord(env.data)).toBe(true);
    }
  });

  test("§2 a list answer is exactly {success, data[], pagination{page, limit, total, totalPages, hasMore}}", async () => {
    const s = makeServer();
    seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }]);
    const res = await s.call("GET", "/v1/agents");
    const env = res.json as Record<string, unknown>;
    expect(Object.keys(env).sort()).toEqual(["data", "pagination", "success"]);
    expect(Object.keys(env.pagination as object).sort()).toEqual(["hasMore", "limit", "page", "total", "totalPages"]);
    expect(listOf(res).pagination).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1, hasMore: false });
  });

  const pagination = loadBoundaries<{
    rows: { total: number; limit: number; page: number; items: number; totalPages: number; hasMore: boolean }[];
  }>("pagination.json").rows;

  test.for(
    pagination,
  )("§2 pagination of $total agents, limit $limit, page $page: totalPages $totalPages, hasMore $hasMore, $items items", async (row) => {
    const s = makeServer();
    seedAgents(
      s.ctx,
      ACCOUNTS.main,
      Array.from({ length: row.total }, (_, i) => ({ name: `agent ${i}` })),
    );
    const { data, pagination: p } = listOf(await s.call("GET", `/v1/agents?limit=${row.limit}&page=${row.page}`));
    expect({ ...p, items: data.length }).toEqual({
      page: row.page,
      limit: row.limit,
      total: row.total,
      totalPages: row.totalPages,
      hasMore: row.hasMore,
      items: row.items,
    });
  });

  test.for(FAULTY)("§2 an error answer is {success: false, error: {code, message, details?}}: %s", async ([, , , request]) => {
    const res = await request(makeServer());
    const env = res.json as { success: unknown; error: Record<string, unknown> };
    expect(Object.keys(env).sort()).toEqual(["error", "success"]);
    expect(env.success).toBe(false);
    expect(Object.keys(env.error).every((k) => ["code", "message", "details"].includes(k))).toBe(true);
    expect(typeof env.error.message).toBe("string");
    if ("details" in env.error)
      for (const d of env.error.details as unknown[]) expect(Object.keys(d as object).sort()).toEqual(["field", "issue"]);
  });

  test("§2 details[].field names the dotted body path and the query parameter at fault", async () => {
    const s = makeServer();
    const body = await s.call("POST", "/v1/agents", { body: { name: "A", modelSettings: { temperature: 3 } } });
    expect(expectError(body, 400, "INVALID_REQUEST").details?.map((d) => d.field)).toEqual(["modelSettings.temperature"]);
    const query = await s.call("GET", "/v1/agents?limit=101");
    expect(expectError(query, 400, "INVALID_REQUEST").details?.map((d) => d.field)).toEqual(["limit"]);
  });
});

describe("§3 status and error code", () => {
  test.for(FAULTY)("§3 %s → %i %s, a conformant pair", async ([, status, code, request]) => {
    const res = await request(makeServer());
    expectError(res, status, code);
    expect(PAIRS[res.status]).toContain(code);
  });

  test.for(KEYED)("§3 401 beats everything: %s without a valid key → 401", async ([, , , request]) => {
    const res = await request(makeServer(), "ak_not_a_key");
    expectError(res, 401, "UNAUTHORIZED");
  });

  test.for(KEYED)("§3 429 RATE_LIMIT_EXCEEDED beats every other error: %s on a spent tier → 429", async ([, , , request]) => {
    const s = makeServer();
    for (let i = 0; i < SMALL_TIER; i++) await s.call("GET", "/v1/agents", { key: KEYS.small });
    expectError(await request(s, KEYS.small), 429, "RATE_LIMIT_EXCEEDED");
  });

  test("§3 429 beats 403: a key lacking the permission is counted, then limited", async () => {
    const s = makeServer();
    for (let i = 0; i < 10; i++)
      expectError(await s.call("POST", "/v1/agents", { key: KEYS.readOnly, body: { name: "A" } }), 403, "FORBIDDEN");
    expectError(await s.call("POST", "/v1/agents", { key: KEYS.readOnly, body: { name: "A" } }), 429, "RATE_LIMIT_EXCEEDED");
  });

  test("§3 401 beats 429: a spent bucket does not change the answer to a request without a key", async () => {
    const s = makeServer();
    for (let i = 0; i < SMALL_TIER; i++) await s.call("GET", "/v1/agents", { key: KEYS.small });
    expectError(await s.call("GET", "/v1/agents", { key: KEYS.small }), 429, "RATE_LIMIT_EXCEEDED");
    expectError(await s.call("GET", "/v1/agents", { key: null }), 401, "UNAUTHORIZED");
  });

  test("§3 no 5xx for hostile input: odd bodies, queries and paths answer 4xx", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const answers = await Promise.all([
      s.call("POST", "/v1/agents", { raw: '{"__proto__": {"name": "x"}}' }),
      s.call("POST", "/v1/agents", { raw: '{"constructor": {"prototype": {}}}' }),
      s.call("POST", "/v1/agents", { raw: "[]" }),
      s.call("POST", "/v1/agents", { raw: "null" }),
      s.call("POST", "/v1/agents", { raw: '"text"' }),
      s.call("POST", "/v1/agents", { raw: "" }),
      s.call("POST", "/v1/agents", { raw: "\u0000" }),
      s.call("POST", "/v1/agents", { raw: `${"[".repeat(5000)}${"]".repeat(5000)}` }),
      s.call("PATCH", `/v1/agents/${agent.id}`, { raw: '{"name": {"$ne": 1}}' }),
      s.call("GET", "/v1/agents?page[]=1"),
      s.call("GET", "/v1/agents?page[a]=1"),
      s.call("GET", "/v1/agents?limit=%FF"),
      s.call("GET", "/v1/agents?sortBy=__proto__"),
      s.call("GET", "/v1/agents/%C0%AF"),
      s.call("GET", `/v1/agents/${"a".repeat(5000)}`),
      s.send(agent.id, { text: "hi", context: { deep: JSON.parse(`${"[".repeat(1000)}${"]".repeat(1000)}`) } }),
    ]);
    for (const res of answers) {
      expect(res.status, res.body).toBeGreaterThanOrEqual(200);
      expect(res.status, res.body).toBeLessThan(500);
      if (res.status >= 400) expect(PAIRS[res.status]).toContain((res.json as { error: { code: string } }).error.code);
    }
  });
});
