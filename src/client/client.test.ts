import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { AGENT_DEFAULTS, matchEndpoint } from "../contract/index.js";
import { ServiceClient, type ServiceClientOptions } from "./client.js";
import { FakeClock } from "./clock.js";
import { type Exchange, TransportError } from "./exchange.js";
import { RateBudget } from "./rate-budget.js";

const KEY = "sk_test_client_0123456789";

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}
type Handler = (req: Received, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let handler: Handler;
const received: Received[] = [];
const clients: ServiceClient[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterEach(async () => {
  received.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(options: Partial<ServiceClientOptions> = {}): ServiceClient {
  const c = new ServiceClient({ baseUrl, apiKey: KEY, ...options });
  clients.push(c);
  return c;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | number> = {}) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "x-request-id": "req-1", ...headers });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
}

/** A record the contract accepts: the PROFILE §4 defaults with a name, an id and timestamps. */
const agent = {
  ...AGENT_DEFAULTS,
  id: "ag_1",
  name: "Ada",
  createdAt: "2026-11-22T12:00:00.000Z",
  updatedAt: "2026-11-22T12:00:00.000Z",
};

const reply = {
  id: "msg_1",
  agentId: "ag_1",
  conversationId: "c_1",
  turn: 1,
  userId: null,
  roomId: null,
  text: "Hi there",
  createdAt: "2026-11-22T12:00:00.000Z",
};

const rateHeaders = { "x-ratelimit-limit": 10, "x-ratelimit-remaining": 9, "x-ratelimit-reset": 1_795_000_000 };

function expectNoKey(exchange: Exchange) {
  expect(JSON.stringify(exchange)).not.toContain(KEY);
}

describe("typed methods", () => {
  test("createAgent: bearer auth, JSON body, parsed record, redacted record of the exchange", async () => {
    handler = (_req, res) => json(res, 201, { success: true, data: agent }, rateHeaders);
    const result = await client().createAgent({ name: "Ada" });

    expect(received[0]).toMatchObject({ method: "POST", url: "/v1/agents" });
    expect(received[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(received[0]?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(received[0]?.body.toString() ?? "")).toEqual({ name: "Ada" });

    expect(result.status).toBe(201);
    expect(result.data?.id).toBe("ag_1");
    expect(result.parseIssues).toEqual([]);
    const { exchange } = result;
    expect(exchange.request.headers.authorization).toBe("Bearer ***");
    expect(exchange.request.body).toBe('{"name":"Ada"}');
    expect(exchange.requestId).toBe("req-1");
    expect(exchange.rate).toEqual({ limit: 10, remaining: 9, reset: 1_795_000_000, malformed: [] });
    expect(exchange.endpoint).toBe("createAgent");
    expect(exchange.curl).toContain('"$AGENT_API_KEY"');
    expectNoKey(exchange);
  });

  test("a body that breaks the schema is reported in parseIssues, not thrown", async () => {
    handler = (_req, res) => json(res, 200, { success: true, data: { ...agent, secret: "x", name: "" } });
    const result = await client().getAgent("ag_1");
    expect(result.data).toBeUndefined();
    expect(result.parseIssues.map((i) => i.path)).toEqual(expect.arrayContaining(["data", "data.name"]));
    expect(result.body).toMatchObject({ data: { id: "ag_1" } });
  });

  test("an error body is read with the error envelope", async () => {
    handler = (_req, res) =>
      json(res, 404, {
        success: false,
        error: { code: "AGENT_NOT_FOUND", message: "no", details: [{ field: "id", issue: "x" }] },
      });
    const result = await client().getAgent("missing");
    expect(result.status).toBe(404);
    expect(result.error?.code).toBe("AGENT_NOT_FOUND");
    expect(result.parseIssues).toEqual([]);
  });

  test("a malformed error envelope still tells its code, and says what is wrong", async () => {
    handler = (_req, res) => json(res, 400, { success: false, error: { code: "BAD_THING", message: "no" } });
    const result = await client().deleteAgent("ag_1");
    expect(result.error?.code).toBe("BAD_THING");
    expect(result.parseIssues.map((i) => i.path)).toEqual(["error.code"]);
  });

  test("a body that is not JSON", async () => {
    handler = (_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<h1>Bad gateway</h1>");
    };
    const result = await client().listAgents();
    expect(result.exchange.response.json).toBeUndefined();
    expect(result.exchange.response.bodyText).toBe("<h1>Bad gateway</h1>");
    expect(result.parseIssues).toEqual([{ path: "", code: "invalid_json", message: "the body is not JSON" }]);
  });

  test("listAgents: a repeated parameter is sent twice; pagination is parsed", async () => {
    handler = (_req, res) =>
      json(res, 200, {
        success: true,
        data: [agent],
        pagination: { page: 1, limit: 5, total: 1, totalPages: 1, hasMore: false },
      });
    const result = await client().listAgents({ limit: 5, status: ["active", "inactive"], order: undefined });
    expect(received[0]?.url).toBe("/v1/agents?limit=5&status=active&status=inactive");
    expect(result.data).toHaveLength(1);
    expect(result.pagination?.total).toBe(1);
  });

  test("an identifier field other than id is renamed before parsing (PROFILE §11)", async () => {
    const { id, ...rest } = agent;
    handler = (req, res) =>
      req.method === "GET"
        ? json(res, 200, {
            success: true,
            data: [{ agentId: id, ...rest }],
            pagination: { page: 1, limit: 20, total: 1, totalPages: 1, hasMore: false },
          })
        : json(res, 200, { success: true, data: { agentId: id, ...rest } });
    const c = client({ idField: "agentId" });
    expect((await c.updateAgent("ag_1", { bio: "b" })).data?.id).toBe("ag_1");
    expect((await c.listAgents()).data?.[0]?.id).toBe("ag_1");
  });

  test("updateAgent may send application/merge-patch+json", async () => {
    handler = (_req, res) => json(res, 200, { success: true, data: agent });
    await client().updateAgent("ag_1", { status: "inactive" }, { contentType: "application/merge-patch+json" });
    expect(received[0]).toMatchObject({ method: "PATCH", url: "/v1/agents/ag_1" });
    expect(received[0]?.headers["content-type"]).toBe("application/merge-patch+json");
  });

  test("sendMessage parses the reply", async () => {
    handler = (_req, res) => json(res, 200, { success: true, data: reply });
    const result = await client().sendMessage("ag_1", { text: "Hello", userId: "u1" });
    expect(received[0]?.url).toBe("/v1/agents/ag_1/messages");
    expect(result.data?.text).toBe("Hi there");
  });

  test("health is outside /v1 and sends no key", async () => {
    handler = (_req, res) => json(res, 200, { status: "ok" });
    const result = await client().health();
    expect(received[0]?.url).toBe("/health");
    expect(received[0]?.headers.authorization).toBeUndefined();
    expect(result.data).toEqual({ status: "ok" });
  });
});

describe("send: requests exactly as given", () => {
  test.for([
    "/agents/",
    "/AGENTS",
    "/agents/%61g_1",
    "//agents",
    "/agents/ag_1/../ag_2",
  ])("path %s is not normalised", async (path) => {
    handler = (_req, res) => json(res, 404, { success: false, error: { code: "NOT_FOUND", message: "no" } });
    const exchange = await client().send({ method: "GET", path });
    expect(received[0]?.url).toBe(`/v1${path}`);
    expect(exchange.request.url).toBe(`${baseUrl}${path}`);
  });

  test("a raw body, another content type, no content type", async () => {
    handler = (_req, res) => json(res, 400, { success: false, error: { code: "INVALID_REQUEST", message: "no" } });
    const c = client();
    await c.send({ method: "POST", path: "/agents", rawBody: '{"name":', contentType: "text/plain" });
    await c.send({ method: "POST", path: "/agents", rawBody: "{}", contentType: null });
    expect(received[0]?.body.toString()).toBe('{"name":');
    expect(received[0]?.headers["content-type"]).toBe("text/plain");
    expect(received[1]?.headers["content-type"]).toBeUndefined();
  });

  test("a body over 64 KiB goes out whole", async () => {
    handler = (_req, res) => json(res, 413, { success: false, error: { code: "PAYLOAD_TOO_LARGE", message: "no" } });
    const exchange = await client().send({ method: "POST", path: "/agents", body: { name: "x".repeat(70_000) } });
    expect(received[0]?.body.byteLength).toBe(70_011);
    expect(exchange.request.bodyBytes).toBe(70_011);
    expect(exchange.request.body?.length).toBeLessThan(3_000);
  });

  test.for([
    ["none", undefined, undefined],
    [{ header: `bearer ${KEY}` }, `bearer ${KEY}`, "bearer ***"],
    [{ header: "Token abc" }, "Token abc", "Token ***"],
  ] as const)("auth %j", async ([auth, sent, recorded]) => {
    handler = (_req, res) => json(res, 401, { success: false, error: { code: "UNAUTHORIZED", message: "no" } });
    const exchange = await client().send({ method: "GET", path: "/agents", auth });
    expect(received[0]?.headers.authorization).toBe(sent);
    expect(exchange.request.headers.authorization).toBe(recorded);
    expectNoKey(exchange);
  });

  test("a header may be removed or added", async () => {
    handler = (_req, res) => json(res, 200, {});
    await client().send({ method: "GET", path: "/agents", headers: { accept: null, "X-Request-Id": "mine.1" } });
    expect(received[0]?.headers.accept).toBeUndefined();
    expect(received[0]?.headers["x-request-id"]).toBe("mine.1");
  });

  test("a key the target echoes is redacted and reported as a leak", async () => {
    handler = (req, res) => json(res, 200, { auth: req.headers.authorization }, { "x-debug": String(req.headers.authorization) });
    const exchange = await client().send({ method: "GET", path: "/agents" });
    expect(exchange.leaks).toEqual(["body", "header:x-debug"]);
    expect(exchange.response.json).toEqual({ auth: "Bearer ***" });
    expectNoKey(exchange);
  });

  test("matchEndpoint finds the endpoint of a path and its variants", () => {
    const lenient = (method: string, path: string) => {
      const m = matchEndpoint(method, path, { lenient: true });
      return m && { endpoint: m.spec.id, ...(m.agentId !== undefined ? { agentId: m.agentId } : {}) };
    };
    expect(lenient("POST", "/agents")).toEqual({ endpoint: "createAgent" });
    expect(lenient("get", "/AGENTS/ag_1/")).toEqual({ endpoint: "getAgent", agentId: "ag_1" });
    expect(lenient("POST", "/agents/%61g_1/messages")).toEqual({ endpoint: "sendMessage", agentId: "ag_1" });
    expect(lenient("PUT", "/agents/ag_1")).toBeUndefined();
    expect(matchEndpoint("get", "/AGENTS/ag_1/"), "exact by default").toBeUndefined();
  });
});

describe("transport failures", () => {
  test("past the timeout: a TransportError that holds no key", async () => {
    handler = () => {}; // never answers
    const error = await client({ timeoutMs: 50 })
      .send({ method: "GET", path: "/agents" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).kind).toBe("timeout");
    expect(JSON.stringify({ ...(error as TransportError), message: (error as Error).message })).not.toContain(KEY);
  });

  test("nothing listening", async () => {
    const c = new ServiceClient({ baseUrl: "http://127.0.0.1:1/v1", apiKey: KEY });
    clients.push(c);
    const error = await c.getAgent("x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).kind).toBe("network");
    expect((error as TransportError).curl).toContain("$AGENT_API_KEY");
  });
});

describe("retry", () => {
  const policy = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 };
  const rateLimited = (res: ServerResponse) =>
    json(res, 429, { success: false, error: { code: "RATE_LIMIT_EXCEEDED", message: "slow" } }, { "retry-after": 2 });

  test("waits at least Retry-After, then tries again", async () => {
    let n = 0;
    handler = (_req, res) => (n++ === 0 ? rateLimited(res) : json(res, 201, { success: true, data: agent }));
    const clock = new FakeClock();
    const seen: number[] = [];
    const result = await client({ retry: policy, clock, random: () => 0.5, onExchange: (e) => seen.push(e.attempt) }).createAgent(
      {
        name: "Ada",
      },
    );
    expect(result.status).toBe(201);
    expect(result.exchange.attempt).toBe(2);
    expect(clock.sleeps).toEqual([2_000]);
    expect(seen).toEqual([1, 2]);
  });

  test("is off by default, and off per request", async () => {
    handler = (_req, res) => rateLimited(res);
    const clock = new FakeClock();
    expect((await client({ clock }).createAgent({ name: "a" })).status).toBe(429);
    expect((await client({ clock, retry: policy }).createAgent({ name: "a" }, { retry: false })).status).toBe(429);
    expect(received).toHaveLength(2);
    expect(clock.sleeps).toEqual([]);
  });

  test("gives up after maxAttempts", async () => {
    handler = (_req, res) => rateLimited(res);
    const clock = new FakeClock();
    const result = await client({ clock, retry: policy, random: () => 0 }).getAgent("ag_1");
    expect(result.status).toBe(429);
    expect(received).toHaveLength(3);
    expect(clock.sleeps).toEqual([2_000, 2_000]);
  });
});

describe("pacing", () => {
  /** Every answer says the endpoint's bucket of 10 is empty until `seconds` after the clock's now. */
  function answerWithEmptyBucket(clock: FakeClock, seconds: number, status: number, body: unknown) {
    const reset = Math.ceil(clock.now() / 1000) + seconds;
    handler = (_req, res) =>
      json(res, status, body, { "x-ratelimit-limit": 10, "x-ratelimit-remaining": 0, "x-ratelimit-reset": reset });
  }

  test("waits for X-RateLimit-Reset once the endpoint's bucket is empty, and logs it", async () => {
    const clock = new FakeClock();
    answerWithEmptyBucket(clock, 30, 201, { success: true, data: agent });
    const waits: string[] = [];
    const pacing = new RateBudget({ clock, onWait: (w) => waits.push(`${w.bucket} ${w.waitMs}`) });
    const c = client({ clock, pacing });
    await c.createAgent({ name: "a" });
    await c.createAgent({ name: "b" });
    expect(clock.sleeps).toEqual([30_250]);
    expect(waits).toEqual([`${c.keyFingerprint}/keyEndpoint:createAgent 30250`]);
    expect(waits.join()).not.toContain(KEY);
  });

  test("pace: false sends at once (a check exhausting the bucket on purpose)", async () => {
    const clock = new FakeClock();
    answerWithEmptyBucket(clock, 30, 201, { success: true, data: agent });
    const c = client({ clock, pacing: new RateBudget({ clock }) });
    await c.createAgent({ name: "a" });
    await c.createAgent({ name: "b" }, { pace: false });
    expect(clock.sleeps).toEqual([]);
  });

  test("a raw request is paced by the endpoint its path reaches", async () => {
    const clock = new FakeClock();
    answerWithEmptyBucket(clock, 5, 200, {});
    const c = client({ clock, pacing: new RateBudget({ clock }) });
    await c.deleteAgent("ag_1");
    await c.send({ method: "DELETE", path: "/agents/ag_2/" });
    expect(clock.sleeps).toEqual([5_250]);
  });
});

describe("streamMessage", () => {
  function sse(res: ServerResponse, frames: string[]) {
    res.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "req-s", ...rateHeaders });
    for (const frame of frames) res.write(frame);
    res.end();
  }

  test("reads deltas, heartbeats and done", async () => {
    handler = (_req, res) =>
      sse(res, [
        ": heartbeat\n\n",
        'event: delta\ndata: {"text":"Hi"}\n\n',
        ":\n\n",
        'event: delta\ndata: {"text":" there"}\n\n',
        `event: done\ndata: ${JSON.stringify(reply)}\n\n`,
      ]);
    const result = await client().streamMessage("ag_1", { text: "Hello" });
    expect(JSON.parse(received[0]?.body.toString() ?? "")).toEqual({ text: "Hello", stream: true });
    expect(received[0]?.headers.accept).toBe("text/event-stream");
    expect(result.status).toBe(200);
    expect(result.events.map((e) => e.event)).toEqual(["delta", "delta", "done"]);
    expect(result.comments).toBe(2);
    expect(result.text).toBe("Hi there");
    expect(result.done?.text).toBe(result.text);
    expect(result.parseIssues).toEqual([]);
    expect(result.exchange.response.bodyText).toContain("event: done");
    expect(result.exchange.rate?.limit).toBe(10);
  });

  test("an error event", async () => {
    handler = (_req, res) =>
      sse(res, ['event: delta\ndata: {"text":"Hi"}\n\n', 'event: error\ndata: {"code":"MODEL_ERROR","message":"x"}\n\n']);
    const result = await client().streamMessage("ag_1", { text: "Hello" });
    expect(result.error?.code).toBe("MODEL_ERROR");
    expect(result.done).toBeUndefined();
  });

  test("a fault found before streaming is an ordinary JSON error", async () => {
    handler = (_req, res) => json(res, 503, { success: false, error: { code: "AGENT_UNAVAILABLE", message: "inactive" } });
    const result = await client().streamMessage("ag_1", { text: "Hello" });
    expect(result.status).toBe(503);
    expect(result.events).toEqual([]);
    expect(result.error?.code).toBe("AGENT_UNAVAILABLE");
  });

  test("an exception in onEvent reaches the caller", async () => {
    handler = (_req, res) => sse(res, ['event: delta\ndata: {"text":"Hi"}\n\n']);
    const failing = client().streamMessage(
      "ag_1",
      { text: "Hello" },
      {
        onEvent: () => {
          throw new Error("assertion in onEvent");
        },
      },
    );
    await expect(failing).rejects.toThrow("assertion in onEvent");
  });

  test("the caller may leave mid-stream", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: delta\ndata: {"text":"Hi"}\n\n'); // and never ends
    };
    const controller = new AbortController();
    const result = await client().streamMessage(
      "ag_1",
      { text: "Hello" },
      { signal: controller.signal, onEvent: () => controller.abort() },
    );
    expect(result.aborted).toBe(true);
    expect(result.text).toBe("Hi");
  });
});
