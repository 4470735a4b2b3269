import { setMaxListeners } from "node:events";
import { connect as netConnect, type Socket } from "node:net";
import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { connect as tlsConnect } from "node:tls";
import { type Dispatcher, request } from "undici";
import { networkAgent } from "../../client/network.js";
import { JSON_CONTENT_TYPE, newApiKey } from "../../contract/index.js";
import { CoreWatch } from "../../target/cores.js";
import { type LoadRequest, messageTo, requestTo } from "../requests.js";

/**
 * The shapes a real runaway client takes, each a phase of noisy-neighbour's flood (PROFILE §7: one
 * account's excess is refused without harming the others):
 * - refusal-storm: one tenant as fast as its connections allow, up to `--flood-rate` (a retry loop
 *   with no back-off): nearly every answer a 429;
 * - unknown-key-storm: the same rate with keys the service does not know (a leaked key, revoked,
 *   still in a script): every answer a 401;
 * - stream-hog: one tenant holding its agent's ten message slots open until the time budget
 *   ends each (a model that never answers), back to back;
 * - connection-hog: many idle keep-alive sockets; meanwhile a new client connects every
 *   `PROBE_EVERY_MS` as another tenant, and must be served.
 */
/** How a run says a flood fell short: no verdict on it, the generator's headroom (exit 2). */
export const FLOOD_SHORT = "the flood did not reach what it set out to do";

export const FLOOD_SHAPES = ["refusal-storm", "unknown-key-storm", "stream-hog", "connection-hog"] as const;
export type FloodShape = (typeof FLOOD_SHAPES)[number];

export const FLOOD_DEFAULTS = {
  /** requests a second of the two storms: more than a thousand reach the reference on two cores */
  ratePerSecond: 1500,
  /** idle sockets of the connection hog */
  sockets: 256,
  /** a flood that reached less than this share of what it intended is no flood: inconclusive */
  reachedShare: 0.9,
} as const;

/** The connection hog's fresh clients: one new connection this often, as another tenant. */
const PROBE_EVERY_MS = 250;
/**
 * A connection hog's socket the service closed is opened again after this long, as a pool keeping
 * idle connections reconnects: not at once. A service that closes every connection after its
 * answer (HTTP/1.1 allows it) keeps no idle socket, and reopening at once would turn the hog into a
 * storm of new connections bounded by nothing.
 */
const REOPEN_AFTER_CLOSE_MS = 1000;
/**
 * Connections the storms send on, one request at a time each (a runaway's pool): at 1,500 a second
 * a round trip may take up to 85 ms before the pool is the bound, and a service that holds each
 * request 300 ms still sees over 400 a second. No request waits in the client
 * for a connection: one that would is counted as held back, not queued (a queue in the generator
 * would measure the generator).
 */
const STORM_CONNECTIONS = 128;
/** The storms' scheduler ticks this often; a tick later than GENERATOR_LATE_MS is the generator falling behind. */
const TICK_MS = 5;
const GENERATOR_LATE_MS = 50;
/** The storm's ticks that may run late (a GC pause, a busy neighbour) before its own lateness decides its rate. */
const LATE_TICKS_SHARE = 0.05;
/**
 * The generator's event loop busy this share of a flood or more: it never idled, so its own queue
 * grew, and every answer it timed (the others' too: they are timed in this process) waited in it
 * for as long as it grew. Between the loop a server that closes each connection after its answer
 * saturates and the loop the reference's storm faults leave it (docs/load.md gives both).
 */
export const GENERATOR_SATURATED = 0.98;
/** A storm held back by the service: every connection awaited an answer while requests were due, in this share of its ticks. */
const HELD_BACK_SHARE = 0.5;

/**
 * One flood phase (ms after the drive starts): the flood runs from `fromMs` to `toMs`, then stops
 * until `endMs`; the others' figures of the whole span are the shape's, so what a flood leaves
 * behind (a lock's backlog, a stall after the last message) is charged to it, not to the next.
 */
export interface FloodSegment {
  shape: FloodShape;
  fromMs: number;
  toMs: number;
  endMs: number;
}

/** The share of each segment after its flood stops: its after-effects, still the shape's. */
const SETTLE_SHARE = 0.3;

/** The flood phase (from `fromMs` to the drive's end) cut in equal segments, one per shape, in the order given. */
export function floodSegments(fromMs: number, endMs: number, shapes: readonly FloodShape[]): FloodSegment[] {
  const span = (endMs - fromMs) / Math.max(1, shapes.length);
  return shapes.map((shape, i) => ({
    shape,
    fromMs: fromMs + i * span,
    toMs: fromMs + (i + 1 - SETTLE_SHARE) * span,
    endMs: fromMs + (i + 1) * span,
  }));
}

/** What a flood achieved: the generator's proof that it flooded, and what the service answered it. */
export interface FloodOutcome {
  shape: FloodShape;
  /** what it set out to hold: requests a second, slots or sockets */
  intended: number;
  achieved: number;
  unit: "req/s" | "slots" | "sockets";
  /** the flood's answers refused (429 or 401) a second */
  refusedPerSecond: number;
  /** how long it ran */
  seconds: number;
  /** its segment, its after-effects included: the span the others' figures of the shape cover */
  spanSeconds?: number;
  /** the machine's 1-minute load average when it ended: a service on this machine shares what is left */
  loadAverage?: number;
  /** a service on cores of its own: the share (0–1) of them that other work took while the flood ran */
  otherOnServiceCores?: number;
  /** a service on cores of its own: the share (0–1) of them that its own processes took while the flood ran */
  serviceBusy?: number;
  /**
   * the share (0–1) of the flood's time this process's event loop was busy (Node's event-loop
   * utilisation): the others' latency is measured here too, so a loop that never idles adds its
   * own queue to each of their answers
   */
  generatorBusy?: number;
  /**
   * a service sharing this machine's cores with the generator: the share (0–1) of the machine that
   * work of neither took while the flood ran (another job's spike the load average is too slow to show)
   */
  otherOnMachine?: number;
  /** requests the flood sent (sockets opened, for the connection hog) */
  sent: number;
  /** how the service, not the generator, kept the flood short of its intent (every connection awaiting answers; sockets closed): it flooded enough */
  heldBack?: string;
  /** why this flood could not be made at these settings at all (the stream hog in a segment shorter than the time budget) */
  cannot?: string;
  /** the storm's own scheduler ran late (more than GENERATOR_LATE_MS, in more than LATE_TICKS_SHARE of its ticks): its rate says nothing of the service */
  generatorLate?: { share: number; worstMs: number };
  /** the connection hog's fresh clients: tried, and those that got no answer */
  probes?: { tried: number; failed: number; firstFailure?: string };
}

/** Why the flood did not do what it set out to (its rate, slots or sockets, unless the service held it back; its generator on time); undefined when it did. */
export function floodShortBecause(o: FloodOutcome): string | undefined {
  if (o.cannot) return o.cannot;
  if (o.generatorLate)
    return `the generator's own scheduler ran over ${GENERATOR_LATE_MS} ms late in ${Math.round(o.generatorLate.share * 100)}% of its ticks (worst ${o.generatorLate.worstMs} ms)`;
  if (generatorSaturated(o))
    return `the generator's event loop was busy ${Math.round((o.generatorBusy ?? 0) * 100)}% of the flood${o.serviceBusy === undefined ? "" : ` (the service's own processes ${Math.round(o.serviceBusy * 100)}% of its cores)`}: its own queue is in every answer it timed`;
  if (o.heldBack === undefined && o.achieved < o.intended * FLOOD_DEFAULTS.reachedShare)
    return `it reached ${Math.round((o.achieved / Math.max(1, o.intended)) * 100)}% of its intent, under ${FLOOD_DEFAULTS.reachedShare * 100}%`;
  return undefined;
}

/** Whether the generator's own loop bounded the flood, and with it the others' timings (GENERATOR_SATURATED). */
export const generatorSaturated = (o: Pick<FloodOutcome, "generatorBusy">) => (o.generatorBusy ?? 0) >= GENERATOR_SATURATED;

/** What a flood needs of the drive: the target, the flooding tenant, a calm tenant for the fresh clients. */
export interface FloodTarget {
  baseUrl: string;
  /** the flooding tenant's key and its agent (a Get on it for the refusal storm) */
  floodKey: string;
  floodAgent: string;
  /** the agent the stream hog holds: one whose replies run to the time budget */
  hogAgent: string | undefined;
  /** the connection hog's fresh client: a request of another tenant on a new connection; what went wrong, if anything */
  freshClient: () => Promise<string | undefined>;
  messageTimeoutSeconds: number;
  ratePerSecond: number;
  sockets: number;
  signal: AbortSignal;
  /** a service on CPUs of its own (src/target/cores.ts): what else ran on them is measured */
  serviceCores?: { cpus: number[]; pids: number[] };
  /** a service sharing this machine's CPUs: them, and the processes of the service and the generator, whose work is not other work */
  machine?: { cpus: number[]; pids: number[] };
}

type Answer = { status: number } | { error: string };

/** Run one flood segment; `startedAt` is the drive's start (Date.now()). */
export async function runFlood(segment: FloodSegment, target: FloodTarget, startedAt: number): Promise<FloodOutcome> {
  const wait = startedAt + segment.fromMs - Date.now();
  if (wait > 0) await sleep(wait, undefined, { signal: target.signal }).catch(() => undefined);
  const onServiceCores = coreShares(target.serviceCores);
  const onMachine = coreShares(target.machine);
  const loopBefore = performance.eventLoopUtilization();
  const outcome = await flood(segment, target, startedAt);
  const [service, machine] = [onServiceCores(), onMachine()];
  const generatorBusy = Math.round(performance.eventLoopUtilization(loopBefore).utilization * 100) / 100;
  return {
    ...outcome,
    generatorBusy,
    spanSeconds: Math.round((segment.endMs - segment.fromMs) / 100) / 10,
    loadAverage: Math.round(loadavg()[0]! * 10) / 10,
    ...(service === undefined ? {} : { otherOnServiceCores: service.other, serviceBusy: service.own }),
    ...(machine === undefined ? {} : { otherOnMachine: machine.other }),
  };
}

/**
 * Start watching `cpus`; the returned function gives, since, the share (0–1, two decimals) that
 * processes other than `pids` took of them, and the share `pids` took.
 */
function coreShares(watched: { cpus: number[]; pids: number[] } | undefined): () => { other: number; own: number } | undefined {
  const watch = watched && new CoreWatch(watched.cpus, watched.pids);
  const before = watch?.read();
  const twoDecimals = (share: number) => Math.round(share * 100) / 100;
  return () => {
    const after = watch?.read();
    return watch && before && after
      ? { other: twoDecimals(watch.otherShare(before, after)), own: twoDecimals(watch.ownShare(before, after)) }
      : undefined;
  };
}

async function flood(segment: FloodSegment, target: FloodTarget, startedAt: number): Promise<FloodOutcome> {
  const until = startedAt + segment.toMs;
  switch (segment.shape) {
    case "refusal-storm":
      return storm(
        segment.shape,
        target,
        until,
        () => requestTo("getAgent", { agentId: target.floodAgent }),
        () => target.floodKey,
      );
    case "unknown-key-storm": {
      // a handful of revoked keys, as a leaked key copied into a few scripts
      const revoked = Array.from({ length: 4 }, () => newApiKey());
      let n = 0;
      return storm(
        segment.shape,
        target,
        until,
        () => requestTo("listAgents", { query: { limit: "1" } }),
        () => revoked[n++ % 4]!,
      );
    }
    case "stream-hog":
      return streamHog(target, until);
    case "connection-hog":
      return connectionHog(target, until);
  }
}

async function send(dispatcher: Dispatcher, target: FloodTarget, req: LoadRequest, key: string): Promise<Answer> {
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  try {
    const answer = await request(target.baseUrl.replace(/\/+$/, "") + req.path, {
      method: req.method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": JSON_CONTENT_TYPE } : {}) },
      ...(body !== undefined ? { body } : {}),
      dispatcher,
      signal: target.signal,
      headersTimeout: (target.messageTimeoutSeconds + 30) * 1000,
      bodyTimeout: (target.messageTimeoutSeconds + 30) * 1000,
    });
    await answer.body.dump();
    return { status: answer.statusCode };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

const refused = (a: Answer) => "status" in a && (a.status === 429 || a.status === 401);

/**
 * Requests at the rate, each sent when due whatever the answers before it (an open model: a service
 * that slows does not slow the storm), on STORM_CONNECTIONS connections. A request due while every
 * connection awaits an answer is not sent (a runaway's pool is full too): the service held the storm
 * back. What is still in flight at the segment's end is abandoned, so a storm never spills into the
 * next phase.
 */
async function storm(
  shape: FloodShape,
  target: FloodTarget,
  until: number,
  next: () => LoadRequest,
  key: () => string,
): Promise<FloodOutcome> {
  const dispatcher = networkAgent(STORM_CONNECTIONS);
  const stop = new AbortController();
  const signal = AbortSignal.any([target.signal, stop.signal]);
  // one listener a request in flight: as many as connections, by design
  setMaxListeners(STORM_CONNECTIONS * 2, signal);
  const from = Date.now();
  const total = Math.ceil(((until - from) * target.ratePerSecond) / 1000);
  let sent = 0;
  let dropped = 0;
  let refusals = 0;
  let fullTicks = 0;
  let lateTicks = 0;
  let worstLateMs = 0;
  let ticks = 0;
  let inFlight = 0;
  let tickDue = from;
  while (!signal.aborted && Date.now() < until) {
    const now = Date.now();
    ticks++;
    if (now - tickDue > GENERATOR_LATE_MS) lateTicks++;
    worstLateMs = Math.max(worstLateMs, now - tickDue);
    const due = Math.min(Math.floor(((now - from) * target.ratePerSecond) / 1000), total);
    while (sent + dropped < due && inFlight < STORM_CONNECTIONS) {
      sent++;
      inFlight++;
      void send(dispatcher, { ...target, signal }, next(), key()).then((a) => {
        inFlight--;
        if (refused(a)) refusals++;
      });
    }
    // what the full pool could not send is dropped, not owed: the next tick sends at the intended rate
    if (sent + dropped < due) {
      fullTicks++;
      dropped = due - sent;
    }
    tickDue = Date.now() + TICK_MS;
    await sleep(TICK_MS);
  }
  const seconds = Math.max(0.001, (Date.now() - from) / 1000);
  stop.abort();
  await dispatcher.destroy().catch(() => undefined);
  const late = lateTicks > ticks * LATE_TICKS_SHARE;
  return {
    shape,
    intended: target.ratePerSecond,
    achieved: Math.round(sent / seconds),
    unit: "req/s",
    refusedPerSecond: Math.round(refusals / seconds),
    seconds: Math.round(seconds * 10) / 10,
    sent,
    ...(fullTicks > ticks * HELD_BACK_SHARE
      ? {
          heldBack: `all ${STORM_CONNECTIONS} connections awaited answers in ${Math.round((fullTicks / ticks) * 100)}% of its ticks`,
        }
      : {}),
    ...(late ? { generatorLate: { share: Math.round((lateTicks / ticks) * 100) / 100, worstMs: worstLateMs } } : {}),
  };
}

/**
 * Ten messages held to the time budget on one agent, each sent again as soon as it ends, while one
 * more fits before the flood's end: the last end at their budget inside the flood, so what their
 * end does to the service falls in this shape's span.
 */
async function streamHog(target: FloodTarget, until: number): Promise<FloodOutcome> {
  const slots = 10;
  const from = Date.now();
  const hogAgent = target.hogAgent;
  const budgetMs = target.messageTimeoutSeconds * 1000;
  let heldMs = 0;
  let lastEnd = from;
  let sent = 0;
  let refusals = 0;
  if (hogAgent && from + budgetMs <= until) {
    const dispatcher = networkAgent(slots);
    const slot = async () => {
      while (!target.signal.aborted && Date.now() + budgetMs <= until) {
        const start = Date.now();
        sent++;
        const answer = await send(dispatcher, target, messageTo(hogAgent, { text: "hold" }), target.floodKey);
        heldMs += Math.min(Date.now(), until) - start;
        lastEnd = Math.max(lastEnd, Math.min(Date.now(), until));
        if (refused(answer)) {
          refusals++;
          // a refusal frees nothing: wait the window out rather than storm (that is another shape)
          await sleep(Math.min(1000, Math.max(0, until - Date.now())));
        }
      }
    };
    await Promise.all(Array.from({ length: slots }, slot));
    await dispatcher.destroy();
  }
  const ms = Math.max(1, Date.now() - from);
  const flooding = Math.max(1, until - from);
  return {
    shape: "stream-hog",
    intended: slots,
    // while it held anything: a slot idles at the flood's end when no whole budget fits there
    achieved: Math.round((heldMs / Math.max(1, lastEnd - from)) * 10) / 10,
    unit: "slots",
    refusedPerSecond: Math.round(refusals / (ms / 1000)),
    seconds: Math.round(ms / 100) / 10,
    sent,
    ...(from + budgetMs > until
      ? {
          cannot: `its flood (${(flooding / 1000).toFixed(1)} s) is shorter than the time budget (${target.messageTimeoutSeconds} s): a longer --duration or a shorter --message-timeout`,
        }
      : {}),
  };
}

/** One keep-alive socket: a request of the flooding tenant, answered, then idle until closed. */
function idleSocket(target: FloodTarget): Promise<Socket> {
  const url = new URL(target.baseUrl);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const path = `${url.pathname.replace(/\/+$/, "")}/agents?limit=1`;
  return new Promise((resolve, reject) => {
    const socket: Socket =
      url.protocol === "https:"
        ? tlsConnect({ host: url.hostname, port, servername: url.hostname, rejectUnauthorized: false })
        : netConnect({ host: url.hostname, port });
    socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")));
    socket.once("error", reject);
    // a service past a connection cap closes a new socket at once, with no answer and often no error
    socket.once("close", () => reject(new Error("closed by the service before it answered")));
    socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${target.floodKey}\r\nconnection: keep-alive\r\n\r\n`,
      ),
    );
    socket.once("data", () => {
      socket.setTimeout(0);
      socket.removeAllListeners("close");
      socket.removeListener("error", reject);
      socket.on("error", () => socket.destroy());
      resolve(socket);
    });
  });
}

/** `sockets` idle keep-alive sockets held (reopened when the service closes one), and fresh clients of another tenant. */
async function connectionHog(target: FloodTarget, until: number): Promise<FloodOutcome> {
  const from = Date.now();
  const open = new Set<Socket>();
  let openedMs = 0;
  let sent = 0;
  let lastChange = from;
  const account = () => {
    const now = Date.now();
    openedMs += open.size * (now - lastChange);
    lastChange = now;
  };
  let turnedAway = 0;
  /** sockets the service closed after answering, while the hog still held them (it keeps no idle connection) */
  let dropped = 0;
  const hold = async () => {
    while (!target.signal.aborted && Date.now() < until) {
      sent++;
      const socket = await idleSocket(target).catch(() => undefined);
      if (!socket) {
        turnedAway++;
        await sleep(Math.min(100, Math.max(0, until - Date.now())));
        continue;
      }
      account();
      open.add(socket);
      const closed = await new Promise<boolean>((resolve) => {
        socket.once("close", () => resolve(true));
        const left = until - Date.now();
        setTimeout(() => resolve(false), Math.max(0, left)).unref();
      });
      if (closed && !target.signal.aborted) dropped++;
      account();
      open.delete(socket);
      socket.destroy();
      if (closed)
        await sleep(Math.min(REOPEN_AFTER_CLOSE_MS, Math.max(0, until - Date.now())), undefined, { signal: target.signal }).catch(
          () => undefined,
        );
    }
  };
  const probes: NonNullable<FloodOutcome["probes"]> = { tried: 0, failed: 0 };
  /** sockets held when each fresh client was tried: what the hog achieved is what they met */
  let heldAtProbes = 0;
  const probe = async () => {
    while (!target.signal.aborted && Date.now() < until) {
      await sleep(PROBE_EVERY_MS);
      if (Date.now() >= until) break;
      probes.tried++;
      heldAtProbes += open.size;
      const failure = await target.freshClient();
      if (failure) {
        probes.failed++;
        probes.firstFailure ??= failure;
      }
    }
  };
  await Promise.all([...Array.from({ length: target.sockets }, hold), probe()]);
  account();
  for (const s of open) s.destroy();
  const ms = Math.max(1, Date.now() - from);
  const achieved = probes.tried ? Math.round(heldAtProbes / probes.tried) : Math.round(openedMs / ms);
  // the service's closes explain the sockets missing only when there were at least as many (one
  // idle timeout among a generator's own shortfall explains nothing of it)
  const closedByService = turnedAway + dropped >= target.sockets - achieved;
  return {
    shape: "connection-hog",
    intended: target.sockets,
    achieved,
    unit: "sockets",
    refusedPerSecond: 0,
    seconds: Math.round(ms / 100) / 10,
    sent,
    // sockets the service closed or refused: it, not the generator, kept the hog short (a service that
    // closes a connection after each answer, as HTTP/1.1 allows, holds no idle socket for long)
    ...((turnedAway || dropped) && closedByService ? { heldBack: closedBecause(turnedAway, dropped) } : {}),
    probes,
  };
}

/** How the service kept the connection hog from its sockets: closed before answering, or after. */
function closedBecause(turnedAway: number, dropped: number): string {
  return [
    ...(turnedAway ? [`the service closed ${turnedAway} of its sockets before answering`] : []),
    ...(dropped ? [`the service closed ${dropped} idle socket(s) after answering on them`] : []),
  ].join("; ");
}

/** For the report and findings: "refusal-storm 1,480 req/s of 1,500 (1,400 refused a second)". */
export function floodLine(o: FloodOutcome): string {
  const refusedPart = o.refusedPerSecond ? `, ${o.refusedPerSecond.toLocaleString("en")} refused a second` : "";
  const heldPart = o.heldBack ? `, held back by the service (${o.heldBack})` : "";
  const probePart = o.probes ? `, fresh clients ${o.probes.tried - o.probes.failed} of ${o.probes.tried} served` : "";
  return `${o.shape} ${o.achieved.toLocaleString("en")} ${o.unit} of ${o.intended.toLocaleString("en")}${refusedPart}${heldPart}${probePart}`;
}
