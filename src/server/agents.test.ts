import { describe, expect, test } from "vitest";
import { type AgentBoundaries, expandFixture, loadFixture } from "../../fixtures/expand.js";
import { makeServer, type TestServer } from "./test-support.js";
import { agentOf, expectBodyRefused, expectError, fieldsOf, listOf, replyOf } from "./test-support-answers.js";

type Body = Record<string, unknown>;
/** The one boundary family (fixtures/boundaries/agent.json): every row, on every endpoint it applies to. */
const boundaries = loadFixture<AgentBoundaries>("agent.json");
/** A row's body as sent: generators expanded, the name "A" unless the row gives one or omits it on purpose. */
function bodyOf(raw: Body, name = "A"): Body {
  const { $omitName, ...rest } = raw;
  const body = expandFixture(rest, { name }) as Body;
  return $omitName || "name" in body ? body : { name, ...body };
}
const createRows = boundaries.accepted.map((row) => ({ title: row.title, body: bodyOf(row.body) }));
const update = { base: bodyOf(boundaries.base, "Ada") };
/** PROFILE §4: platforms given on input read {enabled, tokenSet}. */
const asRead = (fields: Body): Body =>
  fields.platforms && typeof fields.platforms === "object"
    ? {
        ...fields,
        platforms: Object.fromEntries(
          Object.entries(fields.platforms as Record<string, { enabled: boolean; token?: string; tokenSet?: boolean }>).map(
            ([p, v]) => [p, "tokenSet" in v ? v : { enabled: v.enabled, tokenSet: typeof v.token === "string" }],
          ),
        ),
      }
    : fields;
const rejectedOn = (endpoint: "create" | "update") =>
  boundaries.rejected.filter((row) => row.on[endpoint]).map((row) => ({ ...row, body: bodyOf(row.body) }));

const RECORD_KEYS = [
  "bio",
  "createdAt",
  "goals",
  "id",
  "knowledge",
  "modelSettings",
  "name",
  "personality",
  "platforms",
  "plugins",
  "status",
  "updatedAt",
];
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const get = async (s: TestServer, id: string) => agentOf(await s.call("GET", `/v1/agents/${id}`));
const patch = (s: TestServer, id: string, body: unknown, contentType?: string) =>
  s.call("PATCH", `/v1/agents/${id}`, { body, contentType });
const total = async (s: TestServer) => listOf(await s.call("GET", "/v1/agents")).pagination.total;

describe("§4 the agent record", () => {
  test("§4 a record has exactly the §4 fields; ids are unique and match the id pattern", async () => {
    const s = makeServer();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const agent = await s.createAgent({ name: `A${i}` });
      expect(Object.keys(agent).sort()).toEqual(RECORD_KEYS);
      expect(agent.id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      ids.add(agent.id);
    }
    expect(ids.size).toBe(5);
  });

  test("§4 omitted configuration takes the defaults", async () => {
    const agent = await makeServer().createAgent({ name: "Ada" });
    // a deliberate restatement of PROFILE §4's defaults (STYLE §2), not AGENT_DEFAULTS from the contract it checks
    expect(agent).toMatchObject({
      name: "Ada",
      bio: "",
      personality: { traits: [] },
      knowledge: { expertise: [], knowledgeBases: [] },
      goals: { objectives: [], motivations: [] },
      platforms: {},
      plugins: [],
      modelSettings: { provider: "mock", model: "mock-1" },
      status: "active",
    });
    expect(Object.keys(agent.modelSettings).sort()).toEqual(["model", "provider"]);
  });

  test("§4 createdAt and updatedAt are RFC 3339 UTC with milliseconds, at the server's clock", async () => {
    const s = makeServer();
    await s.clock.advance(123);
    const agent = await s.createAgent();
    expect(agent.createdAt).toMatch(TIMESTAMP);
    expect(agent.createdAt).toBe(new Date(s.clock.now()).toISOString());
    expect(agent.updatedAt).toBe(agent.createdAt);
  });

  test.for(createRows)("§4 §5 create boundary: $title → 201", async (row) => {
    const agent = agentOf(await makeServer().call("POST", "/v1/agents", { body: row.body }), 201);
    expect(agent.name).toBe(row.body.name);
    expect(agent).toMatchObject(asRead(row.body));
  });

  test.for(rejectedOn("create"))("§4 §5 create boundary: $title → 400", async (row) => {
    const s = makeServer();
    const res = await s.call("POST", "/v1/agents", { body: row.body });
    expectError(res, 400, "INVALID_REQUEST");
    expect(fieldsOf(res)).toEqual([row.fields[0]]);
    expect(await total(s)).toBe(0); // PROFILE §5: a rejected create creates nothing
  });

  test("§4 a platform token is write-only: no response shows it, platforms read {enabled, tokenSet}", async () => {
    const s = makeServer();
    const token = "tok-SECRET-4f1c9a";
    const created = await s.call("POST", "/v1/agents", {
      body: { name: "Ada", platforms: { discord: { enabled: true, token }, twitter: { enabled: false } } },
    });
    const id = agentOf(created, 201).id;
    expect(agentOf(created, 201).platforms).toEqual({
      discord: { enabled: true, tokenSet: true },
      twitter: { enabled: false, tokenSet: false },
    });
    const answers = [
      created,
      await s.call("GET", `/v1/agents/${id}`),
      await s.call("GET", "/v1/agents"),
      await s.call("PATCH", `/v1/agents/${id}`, { body: { platforms: { telegram: { enabled: true, token: `${token}-2` } } } }),
      await s.call("PATCH", `/v1/agents/${id}`, { body: { platforms: { telegram: { tokenSet: true } } } }),
      await s.send(id, { text: `what is ${token.slice(0, 4)}?` }),
      await s.call("DELETE", `/v1/agents/${id}`),
    ];
    for (const res of answers) expect(res.body).not.toContain(token);
  });
});

describe("§5 create", () => {
  test("§5 201 with the full record, the body merged over the defaults; a nested object may be partial", async () => {
    const agent = await makeServer().createAgent({
      name: "Ada",
      modelSettings: { model: "mock-slow" },
      knowledge: { expertise: ["math"] },
      plugins: ["images"],
    });
    expect(agent).toMatchObject({
      modelSettings: { provider: "mock", model: "mock-slow" },
      knowledge: { expertise: ["math"], knowledgeBases: [] },
      plugins: ["images"],
    });
  });

  test("§5 §8 created active unless the create says inactive", async () => {
    const s = makeServer();
    expect((await s.createAgent({ name: "A" })).status).toBe("active");
    expect((await s.createAgent({ name: "B", status: "active" })).status).toBe("active");
    expect((await s.createAgent({ name: "C", status: "inactive" })).status).toBe("inactive");
  });

  test("§5 the created record is what Get answers", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Ada", bio: "b", platforms: { discord: { enabled: true, token: "t" } } });
    expect(await get(s, agent.id)).toEqual(agent);
  });
});

describe("§5 get", () => {
  test.for([
    "agt_missing",
    "x",
    "!!",
    "a%20b",
    "a".repeat(65),
    "%F0%9F%98%80",
    "agt_..",
    "%00",
  ])("§5 unknown or malformed id %j → 404 AGENT_NOT_FOUND", async (id) => {
    const s = makeServer();
    await s.createAgent();
    expectError(await s.call("GET", `/v1/agents/${id}`), 404, "AGENT_NOT_FOUND");
  });
});

describe("§5 update (JSON Merge Patch)", () => {
  test.for(boundaries.merge)("§5 update: $title → 200", async (row) => {
    const s = makeServer();
    const before = await s.createAgent(update.base);
    await s.clock.advance(1000);
    const after = agentOf(await patch(s, before.id, expandFixture(row.patch, { name: "Ada" })));
    expect(after).toEqual({
      ...before,
      ...asRead(expandFixture(row.expect, { name: "Ada" }) as Body),
      updatedAt: new Date(s.clock.now()).toISOString(),
    });
    expect(after.createdAt).toBe(before.createdAt);
    expect(await get(s, before.id)).toEqual(after);
  });

  test.for(rejectedOn("update"))("§5 update: $title → 400", async (row) => {
    const s = makeServer();
    const before = await s.createAgent(update.base);
    await s.clock.advance(1000);
    const res = await patch(s, before.id, row.body);
    expectError(res, 400, "INVALID_REQUEST");
    expect(fieldsOf(res)).toEqual([row.fields[0]]);
    expect(await get(s, before.id)).toEqual(before); // PROFILE §5: a rejected update changes nothing
  });

  test("§5 {} is a no-op: 200 and updatedAt unchanged", async () => {
    const s = makeServer();
    const before = await s.createAgent(update.base);
    await s.clock.advance(5000);
    const res = await patch(s, before.id, {});
    expect(agentOf(res)).toEqual(before);
    expect(await get(s, before.id)).toEqual(before);
  });

  test("§5 §4 updatedAt changes on every effective update, createdAt never", async () => {
    const s = makeServer();
    const created = await s.createAgent();
    const stamps = [created.updatedAt];
    for (const bio of ["one", "two", "three"]) {
      await s.clock.advance(10);
      const after = agentOf(await patch(s, created.id, { bio }));
      expect(after.createdAt).toBe(created.createdAt);
      stamps.push(after.updatedAt);
    }
    expect(new Set(stamps).size).toBe(4);
    expect([...stamps].sort()).toEqual(stamps);
  });

  test.for([
    ["application/json", '{"bio":"x"}', true],
    ["application/json; charset=utf-8", '{"bio":"x"}', true],
    ["application/merge-patch+json", '{"bio":"x"}', true],
    ["Application/JSON", '{"bio":"x"}', true],
    ["text/plain", '{"bio":"x"}', false],
    ["application/x-www-form-urlencoded", "bio=x", false],
    [null, '{"bio":"x"}', false],
    ["application/json", '{"bio":', false],
    ["application/json", '["bio"]', false],
    ["application/json", "null", false],
    ["application/json", "", false],
  ] as const)("§5 §7 a body as %s %j: accepted %s (else 400/415, changing nothing)", async ([contentType, raw, accepted]) => {
    const s = makeServer();
    const agent = await s.createAgent();
    const res = await s.call("PATCH", `/v1/agents/${agent.id}`, { raw, contentType });
    if (accepted) expect(agentOf(res).bio).toBe("x");
    else {
      expectBodyRefused(res);
      expect(await get(s, agent.id)).toEqual(agent);
    }
  });

  test("§5 status moves active ↔ inactive in any direction, and out of error", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Ada", modelSettings: { model: "mock-error" } });
    const status = async (body: Body) => agentOf(await patch(s, agent.id, body)).status;
    expect(await status({ status: "inactive" })).toBe("inactive");
    expect(await status({ status: "inactive" })).toBe("inactive");
    expect(await status({ status: "active" })).toBe("active");
    expectError(await s.send(agent.id, { text: "fail" }), 500, "MODEL_ERROR");
    expect((await get(s, agent.id)).status).toBe("error");
    expect(await status({ status: "inactive" })).toBe("inactive");
    expectError(await s.send(agent.id, { text: "fail" }), 503, "AGENT_UNAVAILABLE");
    expect(await status({ status: "active" })).toBe("active");
  });

  test("§5 PATCH of an unknown agent → 404 AGENT_NOT_FOUND", async () => {
    expectError(await patch(makeServer(), "agt_missing", { bio: "x" }), 404, "AGENT_NOT_FOUND");
  });
});

describe("§5 delete", () => {
  test("§5 200 {success: true, data: {id, deleted: true}}; afterwards every path answers 404 and lists omit it", async () => {
    const s = makeServer();
    const keep = await s.createAgent({ name: "Keep" });
    const gone = await s.createAgent({ name: "Gone" });
    await s.send(gone.id, { text: "hi", userId: "u1" });
    const res = await s.call("DELETE", `/v1/agents/${gone.id}`);
    expect({ status: res.status, json: res.json }).toEqual({
      status: 200,
      json: { success: true, data: { id: gone.id, deleted: true } },
    });
    expectError(await s.call("GET", `/v1/agents/${gone.id}`), 404, "AGENT_NOT_FOUND");
    expectError(await patch(s, gone.id, { bio: "x" }), 404, "AGENT_NOT_FOUND");
    expectError(await s.send(gone.id, { text: "hi", userId: "u1" }), 404, "AGENT_NOT_FOUND");
    expectError(await s.send(gone.id, { text: "hi", stream: true }), 404, "AGENT_NOT_FOUND");
    expectError(await s.call("DELETE", `/v1/agents/${gone.id}`), 404, "AGENT_NOT_FOUND");
    expect(listOf(await s.call("GET", "/v1/agents")).data.map((a) => a.id)).toEqual([keep.id]);
    for (const status of ["active", "inactive", "error"])
      expect(listOf(await s.call("GET", `/v1/agents?status=${status}`)).data.map((a) => a.id)).not.toContain(gone.id);
    expect(await get(s, keep.id)).toEqual(keep);
  });

  test("§5 delete of an unknown agent → 404 AGENT_NOT_FOUND", async () => {
    expectError(await makeServer().call("DELETE", "/v1/agents/agt_missing"), 404, "AGENT_NOT_FOUND");
  });
});

describe("§8 status of an agent", () => {
  test("§8 inactive keeps config and conversation history; only delete removes them", async () => {
    const s = makeServer();
    const agent = await s.createAgent(update.base);
    const first = replyOf(await s.send(agent.id, { text: "hi", userId: "u1" }));
    agentOf(await patch(s, agent.id, { status: "inactive" }));
    const back = agentOf(await patch(s, agent.id, { status: "active" }));
    expect({ ...back, updatedAt: agent.updatedAt }).toEqual(agent);
    const second = replyOf(await s.send(agent.id, { text: "hi", userId: "u1" }));
    expect({ conversationId: second.conversationId, turn: second.turn }).toEqual({
      conversationId: first.conversationId,
      turn: 2,
    });
  });

  test("§8 only the service sets error: a client cannot create or patch it", async () => {
    const s = makeServer();
    expectError(await s.call("POST", "/v1/agents", { body: { name: "A", status: "error" } }), 400, "INVALID_REQUEST");
    const agent = await s.createAgent();
    expectError(await patch(s, agent.id, { status: "error" }), 400, "INVALID_REQUEST");
    expect((await get(s, agent.id)).status).toBe("active");
    expect(listOf(await s.call("GET", "/v1/agents?status=error")).pagination.total).toBe(0);
  });

  test("§8 the account's other agents are untouched by one agent's model failure", async () => {
    const s = makeServer();
    const failing = await s.createAgent({ name: "F", modelSettings: { model: "mock-error" } });
    const healthy = await s.createAgent({ name: "H" });
    await s.send(failing.id, { text: "x" });
    expect((await get(s, healthy.id)).status).toBe("active");
  });
});
