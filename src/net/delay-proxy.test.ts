import { createServer as createHttpServer, type Server } from "node:http";
import { createServer, type Server as TcpServer } from "node:net";
import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";
import { afterEach, describe, expect, test } from "vitest";
import { mulberry32 } from "../arbitraries/mulberry32.js";
import { DelayLine, type DelayProxy, parseDelay, startDelayProxy } from "./delay-proxy.js";
import { ResponseFramer } from "./response-framer.js";

describe("parseDelay", () => {
  test.for([
    ["40±20", { ms: 40, jitterMs: 20 }],
    ["150+-50", { ms: 150, jitterMs: 50 }],
    [" 40 ~ 20 ms", { ms: 40, jitterMs: 20 }],
    ["0", { ms: 0, jitterMs: 0 }],
    ["40±50", undefined],
    ["-5", undefined],
    ["fast", undefined],
  ] as const)("%s", ([text, delay]) => {
    expect(parseDelay(text)).toEqual(delay);
  });
});

describe("DelayLine", () => {
  test("each chunk leaves at max(previous release, arrival + delay ± jitter): in order, within the jitter", () => {
    const random = mulberry32(7);
    const line = new DelayLine({ ms: 40, jitterMs: 20 }, random, () => {});
    const arrivals = Array.from({ length: 500 }, (_, i) => i * 3);
    const releases = arrivals.map((a) => line.releaseAt(a));
    for (let i = 0; i < releases.length; i++) {
      expect(releases[i]! - arrivals[i]!, `chunk ${i}`).toBeGreaterThanOrEqual(20);
      if (i) expect(releases[i], `chunk ${i} never overtakes chunk ${i - 1}`).toBeGreaterThanOrEqual(releases[i - 1]!);
    }
    // the jitter is used: some chunks wait more than the delay, some are held back only by the one ahead
    const waits = releases.map((r, i) => r - arrivals[i]!);
    expect(Math.max(...waits)).toBeGreaterThan(55);
    expect(Math.min(...waits)).toBeLessThan(25);
  });

  test("a late chunk holds back an early one behind it (never below its own delay)", () => {
    const draws = [1, 0];
    const line = new DelayLine(
      { ms: 100, jitterMs: 50 },
      () => draws.shift()!,
      () => {},
    );
    expect(line.releaseAt(0)).toBe(150);
    // its own draw says 50 + 10 = 60, but the chunk ahead leaves at 150
    expect(line.releaseAt(10)).toBe(150);
  });
});

describe("ResponseFramer", () => {
  const ends = (framer: ResponseFramer, text: string, step = text.length) => {
    const found: number[] = [];
    for (let i = 0; i < text.length; i += step)
      for (const end of framer.push(Buffer.from(text.slice(i, i + step), "latin1"))) found.push(i + end);
    return found;
  };
  const fixed = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";
  const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n";
  const empty = "HTTP/1.1 204 No Content\r\nx: y\r\n\r\n";
  const info = "HTTP/1.1 100 Continue\r\n\r\n";

  test.for([1, 2, 3, 7, 1000])("responses end where they end, fed %i bytes at a time", (step) => {
    const text = fixed + chunked + empty + info + fixed;
    const framer = new ResponseFramer();
    const a = fixed.length;
    const b = a + chunked.length;
    const c = b + empty.length;
    expect(ends(framer, text, step)).toEqual([a, b, c, text.length]);
    expect(framer.completed).toBe(4);
  });

  test("a response with no length ends only when the connection does", () => {
    const framer = new ResponseFramer();
    expect(ends(framer, "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: 1\n\n")).toEqual([]);
  });
});

describe("startDelayProxy", () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
  });

  async function listen<T extends Server | TcpServer>(server: T): Promise<{ port: number; close: () => Promise<void> }> {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const handle = {
      port,
      close: () =>
        new Promise<void>((resolve) => {
          if ("closeAllConnections" in server) server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
    open.push(handle);
    return handle;
  }

  async function proxy(port: number, conditions: Parameters<typeof startDelayProxy>[1]): Promise<DelayProxy> {
    const p = await startDelayProxy({ host: "127.0.0.1", port }, conditions);
    open.unshift(p);
    return p;
  }

  test("a round trip takes both delays; a byte stream arrives whole and in order despite the jitter", async () => {
    const echo = createServer({ allowHalfOpen: true }, (s) => s.pipe(s));
    const { port } = await listen(echo);
    const p = await proxy(port, { up: { ms: 30, jitterMs: 20 }, down: { ms: 30, jitterMs: 20 }, seed: 3 });
    const { connect } = await import("node:net");
    const socket = connect({ host: "127.0.0.1", port: p.port, noDelay: true });
    const sent = Array.from({ length: 200 }, (_, i) => `${i},`);
    const received: Buffer[] = [];
    const started = performance.now();
    let firstAt = 0;
    const done = new Promise<void>((resolve) => {
      socket.on("data", (c: Buffer) => {
        firstAt ||= performance.now() - started;
        received.push(c);
      });
      socket.on("end", () => resolve());
    });
    // chunks a millisecond or so apart: each is delayed on its own
    for (const part of sent) {
      socket.write(part);
      await new Promise((r) => setImmediate(r));
    }
    socket.end();
    await done;
    expect(Buffer.concat(received).toString()).toBe(sent.join(""));
    expect(firstAt, "the first byte back took both delays (at least 10 + 10 ms)").toBeGreaterThanOrEqual(20);
  });

  test("close-after-response: every answer arrives, each on a connection of its own", async () => {
    const server = createHttpServer((req, res) => res.end(`you asked ${req.url}`));
    const { port } = await listen(server);
    const p = await proxy(port, { up: { ms: 5, jitterMs: 5 }, down: { ms: 5, jitterMs: 5 }, closeAfterResponse: true });
    const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
    open.push(dispatcher);
    const bodies: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request(`http://127.0.0.1:${p.port}/n${i}`, { dispatcher });
      bodies.push(await res.body.text());
    }
    expect(bodies).toEqual([0, 1, 2, 3, 4].map((i) => `you asked /n${i}`));
    expect(p.stats).toMatchObject({ connections: 5, closedAfterResponse: 5 });
  });

  test("buffer-responses: a response spread over time arrives at once, after its last byte", async () => {
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n");
      setTimeout(() => res.end("data: 2\n\n"), 300);
    });
    const { port } = await listen(server);
    const p = await proxy(port, { up: { ms: 0, jitterMs: 0 }, down: { ms: 0, jitterMs: 0 }, bufferResponses: true });
    const started = performance.now();
    const res = await request(`http://127.0.0.1:${p.port}/`);
    const arrivals: number[] = [];
    for await (const _ of res.body) arrivals.push(performance.now() - started);
    expect(arrivals[0], "the first event waited for the last").toBeGreaterThanOrEqual(290);
    expect(p.stats.responses).toBe(1);
  });
});
