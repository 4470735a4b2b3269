import { performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import { HEADERS, SSE_CONTENT_TYPE } from "../../contract/index.js";
import type { Clock } from "../clock.js";
import { type Exchange, parseJson, TransportError } from "../exchange.js";
import { networkHint } from "../network.js";
import { parseRateHeaders } from "../rate.js";
import { EventStreamCollector } from "../sse.js";
import type { Dispatch, OutgoingRequest } from "./dispatch.js";

/** Bodies are kept up to this many bytes; the rest is read and dropped. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The innermost dispatch: one request over undici, the answer read whole (or as an event
 * stream when asked for and answered with one), recorded as sent and received. Nothing here
 * is redacted: the redaction layer does that.
 */
export function undiciTransport(dispatcher: Dispatcher, clock: Clock): Dispatch {
  return async (request) => {
    const timeout = request.stream ? undefined : AbortSignal.timeout(request.timeoutMs);
    const sentAt = clock.now();
    const started = performance.now();
    // to the microsecond: the load profile reads latencies well under a millisecond
    const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
    const fail = (error: unknown) => transportError(error, timeout, request);

    let response: Dispatcher.ResponseData;
    try {
      response = await send(dispatcher, request, timeout);
    } catch (error) {
      throw fail(error);
    }
    const receivedAt = clock.now();
    const status = response.statusCode;
    const headers = flattenHeaders(response.headers);
    const rate = parseRateHeaders(response.headers);
    request.onHead?.({ status, rate, receivedAt });

    const isStream = request.stream !== undefined && mediaType(headers["content-type"]) === SSE_CONTENT_TYPE;
    let read: BodyRead;
    if (isStream) read = await readStream(response.body, request, elapsed);
    else {
      try {
        read = { bodyText: await readCapped(response.body), aborted: false };
      } catch (error) {
        throw fail(error);
      }
    }
    const { bodyText, stream, aborted, midStreamError } = read;
    const exchange: Exchange = {
      request: recordedRequest(request),
      response: { status, headers, bodyText, json: isStream ? undefined : parseJson(bodyText) },
      durationMs: elapsed(),
      sentAt,
      receivedAt,
      requestId: headers[HEADERS.requestId],
      rate,
      ...(rate?.retryAfter !== undefined ? { retryAfterSeconds: rate.retryAfter } : {}),
      curl: "",
      attempt: request.attempt,
      ...(request.endpoint !== undefined ? { endpoint: request.endpoint } : {}),
      ...(request.agentId !== undefined ? { agentId: request.agentId } : {}),
      leaks: [],
    };
    return { exchange, ...(stream ? { stream } : {}), aborted, ...(midStreamError ? { transportError: midStreamError } : {}) };
  };
}

/** A body as read: whole, or the event stream with how it ended. */
interface BodyRead {
  bodyText: string;
  stream?: EventStreamCollector;
  aborted: boolean;
  midStreamError?: string;
}

function send(dispatcher: Dispatcher, request: OutgoingRequest, timeout: AbortSignal | undefined) {
  const signals = [timeout, request.signal].filter((s): s is AbortSignal => s !== undefined);
  return dispatcher.request({
    origin: request.origin,
    path: request.path,
    method: request.method,
    headers: request.headers,
    body: request.body === undefined ? null : Buffer.from(request.body),
    headersTimeout: request.timeoutMs,
    bodyTimeout: request.timeoutMs,
    signal: signals.length === 0 ? null : signals.length === 1 ? signals[0] : AbortSignal.any(signals),
  });
}

/** An event stream fed to the collector as it arrives; a caller's abort or a broken connection ends it. */
async function readStream(body: AsyncIterable<Buffer>, request: OutgoingRequest, elapsed: () => number): Promise<BodyRead> {
  // An exception in the caller's onEvent is the caller's, not the transport's: it is rethrown.
  let callbackError: { error: unknown } | undefined;
  const onEvent = request.stream?.onEvent;
  const stream = new EventStreamCollector(
    elapsed,
    onEvent &&
      ((event) => {
        try {
          onEvent(event);
        } catch (error) {
          callbackError = { error };
          throw error;
        }
      }),
  );
  let aborted = false;
  let midStreamError: string | undefined;
  try {
    for await (const chunk of body) stream.feed(chunk);
  } catch (error) {
    if (callbackError !== undefined) throw callbackError.error;
    if (request.signal?.aborted) aborted = true;
    else midStreamError = describe(error);
  } finally {
    stream.end();
  }
  return { bodyText: stream.raw, stream, aborted, ...(midStreamError ? { midStreamError } : {}) };
}

function recordedRequest(request: OutgoingRequest): Exchange["request"] {
  return {
    method: request.method,
    url: request.origin + request.path,
    headers: { ...request.headers },
    bodyBytes: request.body?.byteLength ?? 0,
  };
}

function transportError(error: unknown, timeout: AbortSignal | undefined, request: OutgoingRequest): TransportError {
  const code = error instanceof Error && "code" in error ? error.code : undefined;
  const timedOut = timeout?.aborted === true || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT";
  const kind = request.signal?.aborted ? "aborted" : timedOut ? "timeout" : "network";
  const url = request.origin + request.path;
  // a proxy or TLS setup that failed says which flag or variable fixes it
  const hint = kind === "network" ? networkHint(error, url) : undefined;
  const message = `${request.method} ${url}: ${kind === "timeout" ? "no answer in time" : describe(error)}${hint ? ` — ${hint}` : ""}`;
  return new TransportError(kind, message, recordedRequest(request), "");
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(";")[0]?.trim().toLowerCase();
}

async function readCapped(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < MAX_BODY_BYTES) chunks.push(chunk.subarray(0, MAX_BODY_BYTES - size));
    size += chunk.byteLength; // keep reading past the cap: the body must be consumed
  }
  return Buffer.concat(chunks).toString("utf8");
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return "code" in error && typeof error.code === "string" ? `${error.code}: ${error.message}` : error.message;
}
