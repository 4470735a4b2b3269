import autocannon from "autocannon";
import { errorCodeOf, parseJson, parseRateHeaders } from "../client/index.js";
import { networkSettings, tlsOptionsOf } from "../client/network.js";
import { HEADERS, JSON_CONTENT_TYPE } from "../contract/index.js";
import { pipelinedClient } from "./autocannon-client.js";
import { nextRequestId } from "./concurrency-checks.js";
import { closesConnections, noteConnectionHeader, noteConnectionsClosed } from "./connection-close.js";
import { InconclusiveError } from "./context.js";
import type { LoadRecorder, LoadResponse } from "./recorder.js";
import { BURST_PIPELINING, type LoadRequest, labelOf } from "./requests.js";

/** An answer waits at most this long unless told otherwise (a slow message takes about 2 s). */
const DEFAULT_TIMEOUT_SECONDS = 30;

/** autocannon's sample interval for a bounded shot, ms: how soon it ends once every answer is in */
const BOUNDED_SAMPLE_MS = 10;

let idSeq = 0;
const ID_PREFIX = Date.now().toString(36);
const uniqueId = () => `${ID_PREFIX}${(++idSeq).toString(36)}`;

/**
 * An answer as the scenarios read it, from its status, headers (any case, repeated ones
 * joined) and body text; received now.
 */
export function answerOf(
  request: LoadRequest,
  url: string,
  answer: { status: number; headers: Record<string, string | string[] | undefined>; text: string; latencyMs: number },
): LoadResponse {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(answer.headers))
    if (v !== undefined) lower[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
  const json = parseJson(answer.text);
  noteConnectionHeader(url, lower);
  return {
    method: request.method,
    url,
    endpoint: labelOf(request),
    status: answer.status,
    headers: lower,
    bodyText: answer.text,
    json,
    code: errorCodeOf(json),
    rate: parseRateHeaders(lower),
    requestId: lower[HEADERS.requestId],
    receivedAt: Date.now(),
    latencyMs: answer.latencyMs,
  };
}

interface Shot {
  baseUrl: string;
  key: string;
  request: LoadRequest;
  /**
   * Several shapes of `request`'s endpoint (`request` among them), each connection sending them
   * in turn, so they reach the server interleaved (concurrent PATCHes of different fields)
   */
  mix?: readonly LoadRequest[];
  /** simultaneous connections; each sends `amount / connections` requests in turn */
  connections: number;
  /** requests written at once per connection (HTTP/1.1 pipelining; default 1) */
  pipelining?: number;
  /** total requests */
  amount?: number;
  /** or: keep sending for this many seconds */
  durationSeconds?: number;
  recorder: LoadRecorder;
  /** hands an answer to the response checks (ScenarioContext.judge: the client layers, sampled at high rates) */
  judge: (request: LoadRequest, res: LoadResponse) => void;
  /** keep every answer in the returned list (a burst); a long run keeps none, only the recorder's figures */
  keep?: boolean;
  /** per-request timeout, seconds (default 30) */
  timeoutSeconds?: number;
  /** `[<id>]` in the body is replaced by a unique id per request */
  uniqueIds?: boolean;
  /**
   * The first seconds of `durationSeconds` are a warm-up: the answers to requests sent then are
   * counted, checked and in the timeline, but not in the latency figures. One run, not two:
   * autocannon drops the answers in flight when it stops, and a create answered unseen would
   * read back as a create the harness never saw.
   */
  warmUpSeconds?: number;
  /** called with each answer as it arrives */
  onResponse?: (res: LoadResponse) => void;
  signal?: AbortSignal;
}

/** What a shot brings back: the answers when kept, and how many requests never got one. */
export interface ShotResult {
  answers: LoadResponse[];
  /**
   * Requests sent but never answered: a transport error, or in flight when autocannon stopped
   * (it closes its connections at its next one-second tick, whatever the target was doing).
   */
  unanswered: number;
}

/**
 * One request shape as autocannon sends it. PROFILE §1: each request gets an X-Request-Id of its
 * own, so each answer can be told to be its own, and a unique value where the body says `[<id>]`
 * (content-length follows the body); each answer, read as the scenarios read it, goes to `answered`.
 */
function autocannonRequest(
  shot: Shot,
  shape: LoadRequest,
  on: { sentWithId: (requestId: string) => void; answered: (answer: LoadResponse) => void },
) {
  const body = shape.body === undefined ? undefined : JSON.stringify(shape.body);
  const shapeUrl = new URL(shot.baseUrl.replace(/\/+$/, "") + shape.path);
  return {
    method: shape.method,
    ...(shot.mix ? { path: shapeUrl.pathname + shapeUrl.search } : {}),
    headers: {
      authorization: `Bearer ${shot.key}`,
      ...(body !== undefined ? { "content-type": JSON_CONTENT_TYPE } : {}),
    },
    ...(body !== undefined ? { body } : {}),
    setupRequest: (req: autocannon.Request) => {
      const requestId = nextRequestId();
      on.sentWithId(requestId);
      return {
        ...req,
        headers: { ...req.headers, [HEADERS.requestId]: requestId },
        ...(shot.uniqueIds && body !== undefined ? { body: body.replaceAll("[<id>]", uniqueId()) } : {}),
      };
    },
    onResponse: (status: number, text: string, _context: unknown, headers: autocannon.Request["headers"]) =>
      on.answered(answerOf(shape, shapeUrl.toString(), { status, headers: headers ?? {}, text, latencyMs: 0 })),
  };
}

/** How autocannon connects and when it stops, for one shot. */
function connectionOptions(shot: Shot) {
  // autocannon never verifies the target's certificate (it connects with rejectUnauthorized: false),
  // so the CA is left out: with it, each connection parsed Node's whole default trust store again
  // (about 140 certificates; a burst of 20 connections took 1.3 s to open on a busy machine). A
  // client certificate the target demands (--client-cert) is still presented.
  const tls = tlsOptionsOf(networkSettings());
  const clientCertificate = typeof tls === "object" && tls.cert ? { cert: tls.cert, key: tls.key } : undefined;
  return {
    connections: shot.connections,
    pipelining: shot.pipelining ?? 1,
    // autocannon ends a run at its next sample tick (1 s by default) once every client is done:
    // a bounded shot ticks every 10 ms, so a burst answered in 20 ms is not a second long (a
    // measurement around it, before and after, then fits one window of the target's)
    ...(shot.amount !== undefined
      ? { amount: shot.amount, sampleInt: BOUNDED_SAMPLE_MS }
      : { duration: shot.durationSeconds ?? 1 }),
    timeout: shot.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    excludeErrorStats: false,
    ...(clientCertificate ? { tlsOptions: clientCertificate } : {}),
  };
}

/**
 * Drive one request shape with autocannon's programmatic API: every answer goes to the
 * recorder (latency, status timeline), through the response-level checks, and, when `keep`, back to
 * the scenario. Bounded by `amount` or `durationSeconds`, and by a per-request timeout.
 */
export async function shoot(shot: Shot): Promise<ShotResult> {
  const kept: LoadResponse[] = [];
  let [sent, answered] = [0, 0];
  const url = new URL(shot.baseUrl.replace(/\/+$/, "") + shot.request.path);
  const label = labelOf(shot.request);
  let pending: LoadResponse | undefined;
  // several shapes: each connection sends them in turn; an answer finds its shape by the id it was sent with
  const shapes = shot.mix ?? [shot.request];
  const shapeOfId = new Map<string, LoadRequest>();
  let finished!: (result: autocannon.Result) => void;
  let failed!: (err: unknown) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  const measureFrom = Date.now() + (shot.warmUpSeconds ?? 0) * 1000;
  const instance = autocannon(
    {
      url: url.toString(),
      ...connectionOptions(shot),
      requests: shapes.map((shape) =>
        autocannonRequest(shot, shape, {
          sentWithId: (requestId) => {
            if (shot.mix) shapeOfId.set(requestId, shape);
          },
          answered: (answer) => {
            pending = answer;
          },
        }),
      ),
      setupClient: (client) => {
        const { nextAnsweredId } = pipelinedClient(client, {
          onSent: () => sent++,
          onLost: () => noteConnectionsClosed(url.toString()),
        });
        // autocannon reports the answer's timing right after its body: pair the two
        client.on("response", (_status: number, _bytes: number, durationMs: number) => {
          answered++;
          const res = pending;
          pending = undefined;
          const sentRequestId = nextAnsweredId();
          const shape = (sentRequestId !== undefined && shapeOfId.get(sentRequestId)) || shot.request;
          if (sentRequestId !== undefined) shapeOfId.delete(sentRequestId);
          if (!res) return;
          res.latencyMs = durationMs;
          res.request = shape;
          if (sentRequestId !== undefined) res.sentRequestId = sentRequestId;
          shot.recorder.observe(res, res.receivedAt - res.latencyMs >= measureFrom);
          shot.judge(shape, res);
          shot.onResponse?.(res);
          if (shot.keep) kept.push(res);
        });
      },
    },
    (err, result) => (err ? failed(err) : finished(result)),
  );
  instance.on("reqError", (err: Error) => shot.recorder.transportError(`${label}: ${err.message}`));
  const stop = () => instance.stop();
  shot.signal?.addEventListener("abort", stop, { once: true });
  try {
    // a timeout is one of autocannon's reqError events ("request timed out"): counted there already
    await done;
  } finally {
    shot.signal?.removeEventListener("abort", stop);
  }
  return { answers: kept, unanswered: Math.max(0, sent - answered) };
}

/**
 * Several request shapes at once: one simultaneous burst. Requests are pipelined, up to
 * BURST_PIPELINING per connection, so they reach the server together (one write per
 * connection), the way a spike from many clients does; to a target that closes connections
 * after an answer, each request has a connection of its own. A request that got no answer leaves
 * the burst unjudgeable (how many the target counted is unknown): InconclusiveError, never a
 * judgement on the answers that came.
 */
export async function burst(
  base: Omit<Shot, "request" | "connections" | "amount" | "durationSeconds" | "keep" | "pipelining">,
  groups: Array<{ request: LoadRequest; count: number; mix?: readonly LoadRequest[] }>,
): Promise<LoadResponse[]> {
  const perConnection = closesConnections(base.baseUrl) ? 1 : BURST_PIPELINING;
  const shots = await Promise.all(
    groups.map((g) =>
      shoot({
        ...base,
        request: g.request,
        ...(g.mix ? { mix: g.mix } : {}),
        connections: Math.ceil(g.count / perConnection),
        pipelining: Math.min(g.count, perConnection),
        amount: g.count,
        keep: true,
      }),
    ),
  );
  const unanswered = shots.reduce((n, shot) => n + shot.unanswered, 0);
  if (unanswered > 0 && !base.signal?.aborted)
    throw new InconclusiveError(
      `${unanswered} of a burst's ${groups.reduce((n, g) => n + g.count, 0)} requests got no answer (a connection lost or timed out): what the target counted is unknown`,
    );
  return shots.flatMap((shot) => shot.answers).sort((a, b) => a.receivedAt - b.receivedAt);
}
