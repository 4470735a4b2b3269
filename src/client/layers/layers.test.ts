import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FakeClock } from "../clock.js";
import type { Exchange } from "../exchange.js";
import { RateBudget } from "../rate-budget.js";
import { Redactor } from "../recorder.js";
import { compose, type Layer } from "./dispatch.js";
import { pacing, recording, redaction, retrying, undiciTransport } from "./index.js";
import { outgoing, scripted } from "./test-support.js";

const KEY = "ak_test_secretsecret";
const RETRY = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 };

describe("compose", () => {
  test("layers run outermost first, on the way in and out", async () => {
    const trace: string[] = [];
    const named =
      (name: string): Layer =>
      (next) =>
      async (request) => {
        trace.push(`>${name}`);
        const outcome = await next(request);
        trace.push(`<${name}`);
        return outcome;
      };
    await compose(named("a"), named("b"))(scripted([{ status: 200 }]))(outgoing());
    expect(trace).toEqual([">a", ">b", "<b", "<a"]);
  });
});

describe("recording", () => {
  test("every exchange reaches onExchange, retries included", async () => {
    const seen: Exchange[] = [];
    const transport = scripted([{ status: 503 }, { status: 200 }]);
    const dispatch = compose(
      retrying(RETRY, new FakeClock(), () => 0),
      recording((ex) => seen.push(ex)),
    )(transport);
    await dispatch(outgoing());
    expect(seen.map((ex) => [ex.response.status, ex.attempt])).toEqual([
      [503, 1],
      [200, 2],
    ]);
  });
});

describe("retrying", () => {
  test("waits at least Retry-After, and not at all without a policy", async () => {
    const clock = new FakeClock();
    const transport = scripted([{ status: 429, headers: { "retry-after": "2" } }, { status: 200 }]);
    const retryAfter: Layer = (next) => async (request) => {
      const outcome = await next(request);
      return { ...outcome, exchange: { ...outcome.exchange, retryAfterSeconds: 2 } };
    };
    const outcome = await compose(
      retrying(RETRY, clock, () => 0),
      retryAfter,
    )(transport)(outgoing());
    expect(outcome.exchange.response.status).toBe(200);
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(2000);
    const once = scripted([{ status: 503 }, { status: 200 }]);
    expect((await retrying(false, clock)(once)(outgoing())).exchange.response.status).toBe(503);
  });

  test("a spent quota is final (PROFILE §7)", async () => {
    const transport = scripted([{ status: 429, body: '{"success":false,"error":{"code":"INSUFFICIENT_QUOTA","message":""}}' }]);
    await retrying(RETRY, new FakeClock(), () => 0)(transport)(outgoing());
    expect(transport.seen).toHaveLength(1);
  });
});

describe("redaction", () => {
  test("keys leave the record; an echoed key is listed as a leak", async () => {
    const transport = scripted([{ status: 200, headers: { "x-echo": KEY }, body: `{"key":"${KEY}"}` }]);
    const { exchange } = await redaction(new Redactor(KEY))(transport)(outgoing({ path: `/v1/agents?k=${KEY}` }));
    expect(JSON.stringify(exchange)).not.toContain(KEY);
    expect(exchange.leaks).toEqual(["body", "header:x-echo"]);
    expect(exchange.request.headers.authorization).toBe("Bearer ***");
    expect(exchange.response.json).toEqual({ key: "***" });
    expect(exchange.curl).toContain('"$AGENT_API_KEY"');
    expect(transport.seen[0]?.headers.authorization, "the transport still sends the key").toBe(`Bearer ${KEY}`);
  });
});

describe("pacing", () => {
  test("counts authenticated requests in the endpoint's bucket, and waits when it is empty", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ clock, windowSeconds: 60 });
    const empty = { limit: 10, remaining: 0, reset: Math.ceil(clock.now() / 1000) + 30, malformed: [] };
    const dispatch = pacing(budget, { key: "key:1" })(
      scripted([{ status: 201, rate: empty }, { status: 200 }], () => clock.now()),
    );
    await dispatch(outgoing({ method: "POST", relativePath: "/agents" }));
    await dispatch(outgoing({ method: "GET", relativePath: "/agents" }));
    expect(clock.sleeps, "another endpoint's bucket is not the Create bucket").toEqual([]);
    await dispatch(outgoing({ method: "POST", relativePath: "/agents/" }));
    expect(clock.sleeps.length, "a create after the Create bucket emptied waits for its reset").toBe(1);
    await pacing(budget, { key: "key:1" })(scripted([{ status: 401 }]))(outgoing({ headers: {} }));
    expect(clock.sleeps.length, "an unauthenticated request is not paced").toBe(1);
  });
});

describe("undiciTransport", () => {
  let server: Server;
  let origin = "";
  const dispatcher = new Agent();
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end('event: delta\ndata: {"text":"hi"}\n\n: beat\n\n');
        return;
      }
      res.writeHead(404, { "content-type": "application/json", "x-request-id": "r1" });
      res.end('{"success":false,"error":{"code":"NOT_FOUND","message":"no"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await dispatcher.close();
    await new Promise((resolve) => server.close(resolve));
  });

  test("records the answer as received: status, headers, JSON, request id", async () => {
    const heads: number[] = [];
    const { exchange } = await undiciTransport(
      dispatcher,
      new FakeClock(),
    )(outgoing({ origin, path: "/x", onHead: (h) => heads.push(h.status) }));
    expect([exchange.response.status, exchange.requestId, heads]).toEqual([404, "r1", [404]]);
    expect(exchange.response.json).toMatchObject({ error: { code: "NOT_FOUND" } });
  });

  test("reads an event stream when asked for one", async () => {
    const events: string[] = [];
    const outcome = await undiciTransport(
      dispatcher,
      new FakeClock(),
    )(outgoing({ origin, path: "/stream", stream: { onEvent: (e) => events.push(e.event) } }));
    expect(events).toEqual(["delta"]);
    expect(outcome.stream?.commentAtMs).toHaveLength(1);
    expect(outcome.exchange.response.json).toBeUndefined();
  });

  test("an unreachable target is a TransportError, not an answer", async () => {
    await expect(undiciTransport(dispatcher, new FakeClock())(outgoing({ origin: "http://127.0.0.1:9" }))).rejects.toMatchObject({
      name: "TransportError",
      kind: "network",
    });
  });
});
