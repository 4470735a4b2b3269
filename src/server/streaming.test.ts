/**
 * What needs a socket: streams as the client reads them, heartbeats while the model is
 * silent, the time budget on an open stream, concurrency slots and clients that go away.
 * Time is still the server's ManualClock; nothing here waits on the wall clock.
 */
import { describe, expect, onTestFinished, test } from "vitest";
import { messageReplySchema } from "../contract/index.js";
import { BUDGET_SECONDS, eventually, KEYS, makeServer, type TestServer } from "./test-support.js";
import { agentOf } from "./test-support-answers.js";
import { collect, commentsOf, eventsOf, type Listening, listen, parseSse } from "./test-support-http.js";

async function started(options: Parameters<typeof makeServer>[0] = {}): Promise<{ s: TestServer; net: Listening }> {
  const s = makeServer(options);
  const net = await listen(s);
  onTestFinished(() => net.close());
  return { s, net };
}

const deltasOf = (text: string) =>
  eventsOf(parseSse(text))
    .filter((e) => e.event === "delta")
    .map((e) => (e.data as { text: string }).text);

describe("§5 streaming", () => {
  test("§5 a stream is text/event-stream: deltas, then done whose text is the joined deltas, then close", async () => {
    const { s, net } = await started();
    const agent = await s.createAgent();
    const res = await net.http("POST", `/v1/agents/${agent.id}/messages`, {
      body: { text: "hello there", userId: "u1", stream: true },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/event-stream\b/);
    expect(res.headers["x-request-id"]).toBeTruthy();
    expect(res.headers["x-ratelimit-remaining"]).toBeTruthy();
    const text = await res.body.text(); // resolves only once the server closes the response
    const events = eventsOf(parseSse(text));
    expect(events.map((e) => e.event)).toEqual([...events.slice(0, -1).map(() => "delta"), "done"]);
    expect(events.length).toBeGreaterThanOrEqual(2);
    const done = messageReplySchema.parse(events.at(-1)!.data);
    expect(done).toMatchObject({ agentId: agent.id, userId: "u1", roomId: null, turn: 1 });
    expect(done.text).toBe(deltasOf(text).join(""));
  });

  test("§5 §10 mock-slow streams at least 20 deltas", async () => {
    const { s, net } = await started();
    const agent = await s.createAgent({ name: "Slow", modelSettings: { model: "mock-slow" } });
    const res = await net.http("POST", `/v1/agents/${agent.id}/messages`, { body: { text: "hi", stream: true } });
    const body = collect(res.body);
    await s.clock.untilTimers(3); // the budget, the heartbeat, the model's first pause
    await s.clock.advance(2100);
    await body.done;
    const deltas = deltasOf(body.text);
    expect(deltas.length).toBeGreaterThanOrEqual(20);
    const done = eventsOf(parseSse(body.text)).at(-1)!;
    expect({ event: done.event, text: (done.data as { text: string }).text }).toEqual({ event: "done", text: deltas.join("") });
  });

  test("§5 while the model is silent the stream carries a comment at least every 15 s", async () => {
    const { s, net } = await started({ messageTimeoutSeconds: 60 });
    const agent = await s.createAgent({ name: "Silent", modelSettings: { model: "mock-timeout" } });
    const res = await net.http("POST", `/v1/agents/${agent.id}/messages`, { body: { text: "hi", stream: true } });
    const body = collect(res.body);
    await s.clock.untilTimers(2);
    let seen = commentsOf(parseSse(body.text)).length;
    for (let step = 0; step < 3; step++) {
      await s.clock.advance(15_000);
      await eventually(() => commentsOf(parseSse(body.text)).length > seen, `a comment within 15 s (step ${step})`);
      seen = commentsOf(parseSse(body.text)).length;
    }
    expect(body.ended).toBe(false);
    await s.clock.advance(15_000);
    await body.done;
  });

  test("§5 past the time budget a stream ends with event: error AGENT_UNAVAILABLE, then close", async () => {
    const { s, net } = await started();
    const agent = await s.createAgent({ name: "Silent", modelSettings: { model: "mock-timeout" } });
    const res = await net.http("POST", `/v1/agents/${agent.id}/messages`, { body: { text: "hi", stream: true } });
    expect(res.statusCode).toBe(200);
    const body = collect(res.body);
    await s.clock.untilTimers(2);
    await s.clock.advance(BUDGET_SECONDS * 1000);
    await body.done;
    const events = eventsOf(parseSse(body.text));
    expect(events.map((e) => e.event)).toEqual(["error"]);
    expect(events[0]!.data).toMatchObject({ code: "AGENT_UNAVAILABLE" });
    expect(commentsOf(parseSse(body.text)).length).toBeGreaterThanOrEqual(2);
  });

  test("§5 a model failure after the stream opened is event: error MODEL_ERROR; the agent's status becomes error", async () => {
    const { s, net } = await started();
    const agent = await s.createAgent({ name: "Err", modelSettings: { model: "mock-error" } });
    const res = await net.http("POST", `/v1/agents/${agent.id}/messages`, { body: { text: "hi", stream: true } });
    expect(res.statusCode).toBe(200);
    const events = eventsOf(parseSse(await res.body.text()));
    expect(events.map((e) => [e.event, (e.data as { code?: string }).code])).toEqual([["error", "MODEL_ERROR"]]);
    expect(Object.keys(events[0]!.data as object).sort()).toEqual(["code", "message"]);
    expect(agentOf(await s.call("GET", `/v1/agents/${agent.id}`)).status).toBe("error");
  });
});

describe("§7 concurrency", () => {
  const open = (net: Listening, agentId: string, key: string = KEYS.main) =>
    net.http("POST", `/v1/agents/${agentId}/messages`, { key, body: { text: "hi", stream: true } });

  test("§7 10 messages in flight per agent; the 11th → 429 Retry-After: 1, counted nowhere; a slot frees when the budget is spent", async () => {
    const { s, net } = await started();
    const agent = await s.createAgent({ name: "Busy", modelSettings: { model: "mock-timeout" } });
    const other = await s.createAgent({ name: "Free" });
    const streams = [];
    for (let i = 0; i < 10; i++) {
      const res = await open(net, agent.id, i % 2 ? KEYS.main : KEYS.mainSecond);
      expect(res.statusCode).toBe(200);
      streams.push(collect(res.body));
    }
    const refused = await net.http("POST", `/v1/agents/${agent.id}/messages`, { body: { text: "hi" } });
    expect({ status: refused.statusCode, retryAfter: refused.headers["retry-after"] }).toEqual({ status: 429, retryAfter: "1" });
    expect(((await refused.body.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(refused.headers["x-ratelimit-remaining"]).toBe("50"); // the agent's bucket after 10 counted requests

    // another agent of the account is not held up
    const free = await net.http("POST", `/v1/agents/${other.id}/messages`, { body: { text: "hi" } });
    expect(free.statusCode).toBe(200);
    await free.body.dump();

    await s.clock.advance(BUDGET_SECONDS * 1000);
    await Promise.all(streams.map((b) => b.done));
    const next = await open(net, agent.id);
    expect(next.statusCode).toBe(200);
    expect(next.headers["x-ratelimit-remaining"]).toBe("49"); // the 429 was counted in no bucket
    const rest = collect(next.body);
    await s.clock.untilTimers(2);
    await s.clock.advance(BUDGET_SECONDS * 1000);
    await rest.done;
  });

  test("§7 a slot frees when its client goes away", async () => {
    const { s, net } = await started();
    const agent = await s.createAgent({ name: "Busy", modelSettings: { model: "mock-timeout" } });
    const aborts: AbortController[] = [];
    const streams = [];
    for (let i = 0; i < 10; i++) {
      const abort = new AbortController();
      aborts.push(abort);
      const res = await net.http("POST", `/v1/agents/${agent.id}/messages`, {
        body: { text: "hi", stream: true },
        signal: abort.signal,
      });
      streams.push(collect(res.body));
    }
    await s.clock.untilTimers(20);
    const refused = await open(net, agent.id);
    expect(refused.statusCode).toBe(429);
    await refused.body.dump();

    aborts[0]!.abort();
    await streams[0]!.done;
    // the server ends that exchange: its budget and heartbeat timers go away
    await eventually(() => s.clock.pendingTimers === 18, "the server to see the client go");
    const admitted = await open(net, agent.id);
    expect(admitted.statusCode).toBe(200);
    const rest = collect(admitted.body);
    await s.clock.advance(BUDGET_SECONDS * 1000);
    await Promise.all([rest.done, ...streams.slice(1).map((b) => b.done)]);
  });

  test("§7 a slot frees when the reply is sent", async () => {
    const { s, net } = await started();
    const agent = await s.createAgent();
    for (let i = 0; i < 15; i++) {
      const res = await net.http("POST", `/v1/agents/${agent.id}/messages`, { body: { text: `hi ${i}`, stream: i % 2 === 0 } });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
  });
});
