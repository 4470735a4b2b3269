import { connect, createServer, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { mulberry32 } from "../arbitraries/mulberry32.js";
import { ResponseFramer } from "./response-framer.js";

/**
 * A TCP proxy that puts a network between the harness and a service (STYLE §12: the world is
 * not loopback): each direction of each connection is delayed by its own delay ± jitter, in
 * order, and the proxy may behave as two intermediaries a deployment often has — a load
 * balancer that closes the connection after every response, and a proxy that buffers a whole
 * response before it passes it on.
 */

/** One direction's delay: each chunk leaves `ms` ± up to `jitterMs` (uniform) after it arrived, never before the chunk ahead of it. */
export interface Delay {
  ms: number;
  jitterMs: number;
}

export interface NetworkConditions {
  /** client → service */
  up: Delay;
  /** service → client */
  down: Delay;
  /** close the connection after every response (a load balancer without keep-alive) */
  closeAfterResponse?: boolean;
  /** hold each response until its last byte, then pass it on at once (a buffering proxy) */
  bufferResponses?: boolean;
  /** seed of the jitter draws (default 1): a run's delays can be replayed */
  seed?: number;
}

/** `40±20`, `40+-20`, `40~20` or `40` (milliseconds): a delay ± jitter; undefined when the text is not one. */
export function parseDelay(text: string): Delay | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:(?:±|\+-|\+\/-|~)\s*(\d+(?:\.\d+)?))?\s*(?:ms)?\s*$/.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]);
  const jitterMs = Number(m[2] ?? 0);
  return jitterMs > ms ? undefined : { ms, jitterMs };
}

export const formatDelay = (d: Delay) => `${d.ms} ± ${d.jitterMs} ms`;

type Item = Buffer | "end" | "close" | "reset";

/**
 * One direction of one connection. Chunk i leaves at max(release of chunk i − 1, arrival +
 * delay ± jitter): jitter spreads the chunks yet never reorders a byte stream (TCP delivers in
 * order; a late segment holds back the ones behind it).
 */
export class DelayLine {
  private readonly queue: { at: number; item: Item }[] = [];
  private lastRelease = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delay: Delay,
    private readonly random: () => number,
    private readonly deliver: (item: Item) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The release time of an item arriving at `arrival` (and the next item's lower bound). */
  releaseAt(arrival: number): number {
    const jitter = (2 * this.random() - 1) * this.delay.jitterMs;
    this.lastRelease = Math.max(this.lastRelease, arrival + Math.max(0, this.delay.ms + jitter));
    return this.lastRelease;
  }

  push(item: Item) {
    this.queue.push({ at: this.releaseAt(this.now()), item });
    this.schedule();
  }

  /** Queue `item` to leave together with the item ahead of it (a FIN sent right behind the last bytes). */
  follow(item: Item) {
    this.queue.push({ at: Math.max(this.lastRelease, this.now()), item });
    this.schedule();
  }

  /** Drop what is still on the wire (the connection is gone). */
  clear() {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }

  private schedule() {
    if (this.timer || !this.queue.length) return;
    this.timer = setTimeout(() => this.flush(), Math.max(0, this.queue[0]!.at - this.now()));
  }

  private flush() {
    this.timer = undefined;
    // a timer may fire a fraction of a millisecond early: release what is due within 1 ms
    const due = this.now() + 1;
    while (this.queue.length && this.queue[0]!.at <= due) this.deliver(this.queue.shift()!.item);
    this.schedule();
  }
}

export interface DelayProxy {
  host: string;
  port: number;
  /** `baseUrl` with its origin replaced by the proxy's */
  urlFor(baseUrl: string): string;
  conditions: NetworkConditions;
  stats: { connections: number; responses: number; closedAfterResponse: number };
  close(): Promise<void>;
}

interface Connection {
  client: Socket;
  service: Socket;
  lines: DelayLine[];
}

/** What every connection of one proxy shares. */
interface Relay {
  upstream: { host: string; port: number };
  conditions: NetworkConditions;
  random: () => number;
  stats: DelayProxy["stats"];
  live: Set<Connection>;
}

/**
 * The service's bytes on their way down the line: as they come, or (framing the responses) held
 * until each response is whole, and the connection let go after the first one.
 */
class Downstream {
  /** the connection is being let go after a response: nothing more passes either way */
  closing = false;
  private held: Buffer[] = [];
  private readonly framer: ResponseFramer | undefined;

  constructor(
    private readonly down: DelayLine,
    private readonly conditions: NetworkConditions,
    private readonly stats: DelayProxy["stats"],
  ) {
    this.framer = conditions.closeAfterResponse || conditions.bufferResponses ? new ResponseFramer() : undefined;
  }

  data(chunk: Buffer): void {
    if (this.closing) return;
    if (!this.framer) {
      this.down.push(chunk);
      return;
    }
    let from = 0;
    for (const end of this.framer.push(chunk)) {
      this.stats.responses++;
      const part = chunk.subarray(from, end);
      from = end;
      if (this.conditions.bufferResponses) {
        this.down.push(Buffer.concat([...this.held, part]));
        this.held = [];
      } else this.down.push(part);
      if (this.conditions.closeAfterResponse) {
        this.closing = true;
        this.down.follow("close");
        return;
      }
    }
    const rest = chunk.subarray(from);
    if (!rest.length) return;
    if (this.conditions.bufferResponses) this.held.push(rest);
    else this.down.push(rest);
  }

  end(): void {
    if (this.closing) return;
    if (this.held.length) this.down.push(Buffer.concat(this.held));
    this.held = [];
    this.down.push("end");
  }
}

/** One client's connection: a connection of its own to the service and a delay line each way. */
function relay(client: Socket, { upstream, conditions, random, stats, live }: Relay): void {
  stats.connections++;
  const service = connect({ host: upstream.host, port: upstream.port, allowHalfOpen: true, noDelay: true });
  const send = (socket: Socket) => (item: Item) => {
    if (socket.destroyed) return;
    if (item === "end") socket.end();
    else if (item === "reset") socket.destroy();
    else if (item === "close") {
      // a load balancer done with the connection: its answer is out, both sides are let go
      stats.closedAfterResponse++;
      client.end();
      service.destroy();
    } else socket.write(item);
  };
  const up = new DelayLine(conditions.up, random, send(service));
  const down = new DelayLine(conditions.down, random, send(client));
  const connection = { client, service, lines: [up, down] };
  live.add(connection);
  const downstream = new Downstream(down, conditions, stats);

  client.on("data", (chunk: Buffer) => !downstream.closing && up.push(chunk));
  // a client's FIN travels the network too: the service sees it one delay later
  client.on("end", () => up.push("end"));
  client.on("error", () => up.push("reset"));
  service.on("data", (chunk: Buffer) => downstream.data(chunk));
  service.on("end", () => downstream.end());
  service.on("error", () => down.push("reset"));
  const forget = () => {
    if (!client.destroyed || !service.destroyed) return;
    for (const line of connection.lines) line.clear();
    live.delete(connection);
  };
  client.on("close", forget);
  service.on("close", forget);
}

/** Start a proxy on 127.0.0.1 (a free port unless told) in front of `upstream`. */
export async function startDelayProxy(
  upstream: { host: string; port: number },
  conditions: NetworkConditions,
  listen: { host?: string; port?: number } = {},
): Promise<DelayProxy> {
  const stats = { connections: 0, responses: 0, closedAfterResponse: 0 };
  const live = new Set<Connection>();
  const shared: Relay = { upstream, conditions, random: mulberry32(conditions.seed ?? 1), stats, live };
  const server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => relay(client, shared));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port ?? 0, listen.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : (listen.port ?? 0);
  const host = listen.host ?? "127.0.0.1";
  return {
    host,
    port,
    conditions,
    stats,
    urlFor(baseUrl: string) {
      const url = new URL(baseUrl);
      url.host = `${host.includes(":") ? `[${host}]` : host}:${port}`;
      return url.toString().replace(/\/$/, baseUrl.endsWith("/") ? "/" : "");
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, service, lines } of live) {
          for (const line of lines) line.clear();
          client.destroy();
          service.destroy();
        }
        live.clear();
        server.close(() => resolve());
      }),
  };
}
