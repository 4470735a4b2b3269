import { describe, expect, test } from "vitest";
import {
  ACCOUNTS,
  BUDGET_SECONDS,
  KEYS,
  loadBoundaries,
  makeServer,
  QUOTA,
  seedAgents,
  type TestServer,
  track,
} from "./test-support.js";
import { agentOf, expectBodyRefused, expectError, fieldsOf, replyOf } from "./test-support-answers.js";
import { eventsOf, parseSse } from "./test-support-http.js";

const bodyRows = loadBoundaries<{
  rows: { title: string; body: Record<string, unknown>; status: 200 | 400; fields?: string[] }[];
}>("send-message.json").rows;

const REPLY_KEYS = ["agentId", "conversationId", "createdAt", "id", "roomId", "text", "turn", "userId"];
const BUDGET_MS = BUDGET_SECONDS * 1000;

const status = async (s: TestServer, id: string, key: string = KEYS.main) =>
  agentOf(await s.call("GET", `/v1/agents/${id}`, { key })).status;

describe("§5 send message: body", () => {
  test.for(bodyRows)("§5 message body: $title → $status", async (row) => {
    const s = makeServer();
    const agent = await s.createAgent();
    const res = await s.send(agent.id, row.body);
    if (row.status === 200) {
      expect(replyOf(res).agentId).toBe(agent.id);
    } else {
      expectError(res, 400, "INVALID_REQUEST");
      expect(fieldsOf(res).sort()).toEqual([...(row.fields ?? [])].sort());
    }
  });

  test.for([
    ["text/plain", '{"text":"hi"}'],
    [null, '{"text":"hi"}'],
    ["application/merge-patch+json", '{"text":"hi"}'],
    ["application/json", '{"text":'],
    ["application/json", '"hi"'],
    ["application/json", "[]"],
  ] as const)("§5 §7 a message body as %s %j → 400 or 415", async ([contentType, raw]) => {
    const s = makeServer();
    const agent = await s.createAgent();
    expectBodyRefused(await s.call("POST", `/v1/agents/${agent.id}/messages`, { raw, contentType }));
  });
});

describe("§5 send message: reply and conversations", () => {
  test("§5 a non-stream reply is {id msg_…, agentId, conversationId, turn, userId, roomId, text, createdAt}", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    await s.clock.advance(42);
    const res = await s.send(agent.id, { text: "hello" });
    const reply = replyOf(res);
    expect(Object.keys((res.json as { data: object }).data).sort()).toEqual(REPLY_KEYS);
    expect(reply).toMatchObject({ agentId: agent.id, turn: 1, userId: null, roomId: null });
    expect(reply.id).toMatch(/^msg_[A-Za-z0-9_-]+$/);
    expect(reply.text.length).toBeGreaterThan(0);
    expect(reply.createdAt).toBe(new Date(s.clock.now()).toISOString());
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
  });

  test("§5 userId and roomId are echoed; message ids are unique", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const a = replyOf(await s.send(agent.id, { text: "hi", userId: "u1", roomId: "r1" }));
    const b = replyOf(await s.send(agent.id, { text: "hi", userId: "u1" }));
    const c = replyOf(await s.send(agent.id, { text: "hi", roomId: "r1" }));
    expect([a, b, c].map((r) => [r.userId, r.roomId])).toEqual([
      ["u1", "r1"],
      ["u1", null],
      [null, "r1"],
    ]);
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
  });

  test("§5 conversationId is the same for the same (agent, userId, roomId) and turns count up", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const other = await s.createAgent({ name: "Other" });
    const send = async (id: string, ids: Record<string, string>) => replyOf(await s.send(id, { text: "hi", ...ids }));
    const u1 = [
      await send(agent.id, { userId: "u1" }),
      await send(agent.id, { userId: "u1" }),
      await send(agent.id, { userId: "u1" }),
    ];
    expect(u1.map((r) => r.turn)).toEqual([1, 2, 3]);
    expect(new Set(u1.map((r) => r.conversationId)).size).toBe(1);

    const variants = [
      await send(agent.id, { userId: "u2" }),
      await send(agent.id, { userId: "u1", roomId: "r1" }),
      await send(agent.id, { roomId: "r1" }),
      await send(agent.id, { roomId: "u1" }),
      await send(other.id, { userId: "u1" }),
    ];
    const conversations = new Set([u1[0]!.conversationId, ...variants.map((r) => r.conversationId)]);
    expect(conversations.size).toBe(6);
    expect(variants.map((r) => r.turn)).toEqual([1, 1, 1, 1, 1]);

    const again = [await send(agent.id, { userId: "u1", roomId: "r1" }), await send(agent.id, { roomId: "r1" })];
    expect(again.map((r) => [r.conversationId, r.turn])).toEqual([
      [variants[1]!.conversationId, 2],
      [variants[2]!.conversationId, 2],
    ]);
  });

  test("§5 with neither userId nor roomId every message opens a new conversation", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(replyOf(await s.send(agent.id, { text: "hi" })));
    expect(replies.map((r) => r.turn)).toEqual([1, 1, 1, 1]);
    expect(new Set(replies.map((r) => r.conversationId)).size).toBe(4);
  });

  test("§5 a failed exchange (model error, time budget) takes no turn", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const ids = { userId: "u1", roomId: "r1" };
    expect(replyOf(await s.send(agent.id, { text: "one", ...ids })).turn).toBe(1);

    agentOf(await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { modelSettings: { model: "mock-error" } } }));
    expectError(await s.send(agent.id, { text: "two", ...ids }), 500, "MODEL_ERROR");

    agentOf(
      await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { status: "active", modelSettings: { model: "mock-timeout" } } }),
    );
    const timedOut = track(s.send(agent.id, { text: "three", ...ids }));
    await s.clock.untilTimers(1);
    await s.clock.advance(BUDGET_MS);
    expectError(await timedOut.promise, 503, "AGENT_UNAVAILABLE");

    agentOf(await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { modelSettings: { model: null } } }));
    expect(replyOf(await s.send(agent.id, { text: "four", ...ids })).turn).toBe(2);
  });
});

describe("§5 send message: failures", () => {
  test("§5 an inactive or error agent → 503 AGENT_UNAVAILABLE, stream or not", async () => {
    const s = makeServer();
    const inactive = await s.createAgent({ name: "Off", status: "inactive" });
    const failing = await s.createAgent({ name: "Err", modelSettings: { model: "mock-error" } });
    await s.send(failing.id, { text: "x" });
    for (const id of [inactive.id, failing.id])
      for (const stream of [false, true]) expectError(await s.send(id, { text: "hi", stream }), 503, "AGENT_UNAVAILABLE");
  });

  test("§5 a model failure → 500 MODEL_ERROR, status becomes error; PATCH active brings it back", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Err", modelSettings: { model: "mock-error" } });
    expectError(await s.send(agent.id, { text: "hi" }), 500, "MODEL_ERROR");
    expect(await status(s, agent.id)).toBe("error");
    agentOf(await s.call("PATCH", `/v1/agents/${agent.id}`, { body: { status: "active", modelSettings: { model: "mock-1" } } }));
    expect(await status(s, agent.id)).toBe("active");
    expect(replyOf(await s.send(agent.id, { text: "hi" })).turn).toBe(1);
  });

  test("§5 past the time budget a non-stream message → 503 AGENT_UNAVAILABLE, not before", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Slow", modelSettings: { model: "mock-timeout" } });
    const pending = track(s.send(agent.id, { text: "hi" }));
    await s.clock.untilTimers(1);
    await s.clock.advance(BUDGET_MS - 1);
    expect(pending.settled).toBe(false);
    await s.clock.advance(1);
    expectError(await pending.promise, 503, "AGENT_UNAVAILABLE");
    expect(await status(s, agent.id)).toBe("active"); // a spent budget is not a model failure
  });

  test("§5 an unknown agent, or another account's → 404 AGENT_NOT_FOUND, stream or not", async () => {
    const s = makeServer();
    const [theirs] = seedAgents(s.ctx, ACCOUNTS.other, [{ name: "Theirs" }]);
    for (const id of ["agt_missing", theirs!.id])
      for (const stream of [false, true]) expectError(await s.send(id, { text: "hi", stream }), 404, "AGENT_NOT_FOUND");
  });
});

describe("§7 message quota", () => {
  test("§7 answers 400/404/503 spend no quota; model failures do; then 429 INSUFFICIENT_QUOTA without Retry-After", async () => {
    const s = makeServer();
    const key = KEYS.quota;
    const [agent, off, failing] = seedAgents(s.ctx, ACCOUNTS.quota, [
      { name: "Q" },
      { name: "Off", status: "inactive" },
      { name: "Err", modelSettings: { model: "mock-error" } },
    ]);
    expectError(await s.send(agent!.id, { text: "" }, key), 400, "INVALID_REQUEST");
    expectError(await s.send("agt_missing", { text: "hi" }, key), 404, "AGENT_NOT_FOUND");
    expectError(await s.send(off!.id, { text: "hi" }, key), 503, "AGENT_UNAVAILABLE");
    expectError(await s.send(failing!.id, { text: "hi" }, key), 500, "MODEL_ERROR");
    for (let i = 1; i < QUOTA; i++) replyOf(await s.send(agent!.id, { text: `hi ${i}` }, key));

    for (const stream of [false, true]) {
      const res = await s.send(agent!.id, { text: "one more", stream }, key);
      expectError(res, 429, "INSUFFICIENT_QUOTA");
      expect(res.headers["retry-after"]).toBeUndefined();
      expect(res.headers["x-ratelimit-limit"]).toBeDefined();
      expect(res.headers["x-ratelimit-remaining"]).toBeDefined();
    }
  });

  test("§7 once the quota is spent other endpoints keep working", async () => {
    const s = makeServer();
    const key = KEYS.quota;
    const agent = await s.createAgent({ name: "Q" }, key);
    for (let i = 0; i < QUOTA; i++) replyOf(await s.send(agent.id, { text: "hi" }, key));
    expectError(await s.send(agent.id, { text: "hi" }, key), 429, "INSUFFICIENT_QUOTA");
    expect((await s.call("GET", "/v1/agents", { key })).status).toBe(200);
    expect((await s.call("GET", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    expect((await s.call("PATCH", `/v1/agents/${agent.id}`, { key, body: { bio: "b" } })).status).toBe(200);
    expect((await s.call("POST", "/v1/agents", { key, body: { name: "New" } })).status).toBe(201);
    expect((await s.call("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    // and other accounts are not affected
    const mine = await s.createAgent();
    expect(replyOf(await s.send(mine.id, { text: "hi" })).turn).toBe(1);
  });
});

describe("§10 reference-compatible mock models", () => {
  test("§10 the reply is a deterministic function of the agent, the text and the turn", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const text = async (body: Record<string, unknown>) => replyOf(await s.send(agent.id, body)).text;
    const first = await text({ text: "hello", userId: "u1" });
    expect(await text({ text: "hello", userId: "u2" })).toBe(first);
    expect(await text({ text: "hello", roomId: "r9" })).toBe(first);
    expect(await text({ text: "hello" })).toBe(first);
    const secondTurn = await text({ text: "hello", userId: "u1" });
    expect(await text({ text: "hello", userId: "u2" })).toBe(secondTurn);
  });

  test("§10 a streamed reply joins to the same text as the non-stream reply", async () => {
    const s = makeServer();
    const agent = await s.createAgent();
    const plain = replyOf(await s.send(agent.id, { text: "hello" })).text;
    const res = await s.send(agent.id, { text: "hello", stream: true });
    const events = eventsOf(parseSse(res.body));
    const deltas = events.filter((e) => e.event === "delta").map((e) => (e.data as { text: string }).text);
    expect(deltas.join("")).toBe(plain);
  });

  test("§10 mock-slow without streaming answers after about 2 s of clock time", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "Slow", modelSettings: { model: "mock-slow" } });
    const pending = track(s.send(agent.id, { text: "hi" }));
    await s.clock.untilTimers(2); // the budget and the model's first pause
    await s.clock.advance(1000);
    expect(pending.settled).toBe(false);
    await s.clock.advance(1100);
    expect(replyOf(await pending.promise).turn).toBe(1);
  });

  test("§10 overlapping exchanges of one conversation take turns: each reply is the one for its turn", async () => {
    const s = makeServer({ messageTimeoutSeconds: 10 }); // room for both slow replies, one after the other
    const agent = await s.createAgent({ name: "Slow", modelSettings: { model: "mock-slow" } });
    const first = track(s.send(agent.id, { text: "hi", userId: "u1" }));
    await s.clock.untilTimers(2); // the first one's budget and its model's first pause
    const second = track(s.send(agent.id, { text: "hi", userId: "u1" }));
    await s.clock.untilTimers(3); // the second one's budget: it waits for its turn
    await s.clock.advance(2100);
    const a = replyOf(await first.promise);
    expect(second.settled).toBe(false);
    await s.clock.advance(2100);
    const b = replyOf(await second.promise);
    expect([a.turn, b.turn]).toEqual([1, 2]);
    expect(a.text).toContain("(turn 1,");
    expect(b.text).toContain("(turn 2,");
  });

  test("§10 mock-slow past a shorter budget → 503 AGENT_UNAVAILABLE", async () => {
    const s = makeServer({ messageTimeoutSeconds: 1 });
    const agent = await s.createAgent({ name: "Slow", modelSettings: { model: "mock-slow" } });
    const pending = track(s.send(agent.id, { text: "hi" }));
    await s.clock.untilTimers(2);
    await s.clock.advance(1000);
    expectError(await pending.promise, 503, "AGENT_UNAVAILABLE");
  });

  test("§10 every provider is answered by the mock model", async () => {
    const s = makeServer();
    const agent = await s.createAgent({ name: "P", modelSettings: { provider: "openai", model: "gpt-4o" } });
    expect(replyOf(await s.send(agent.id, { text: "hi" })).text.length).toBeGreaterThan(0);
  });
});
