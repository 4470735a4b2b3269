import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Agent as UndiciAgent } from "undici";
import type { z } from "zod";
import {
  type Agent,
  type CreateAgentBody,
  type DataOf,
  type deleteResultSchema,
  ENDPOINTS,
  type EndpointId,
  type EndpointSpec,
  endpointPath,
  errorEnvelopeSchema,
  HEADERS,
  HEALTH_PATH,
  healthSchema,
  JSON_CONTENT_TYPE,
  type MessageBody,
  type MessageReply,
  matchEndpoint,
  type Pagination,
  type RawListQuery,
  responseSchemaOf,
  SSE_CONTENT_TYPE,
  type UpdateAgentBody,
} from "../contract/index.js";
import { type Clock, systemClock } from "./clock.js";
import { type Exchange, TransportError } from "./exchange.js";
import { type ParseIssue, parseWith } from "./parse-issues.js";
import { parseRateHeaders } from "./rate.js";
import { endpointBucket, type PaceRequest, type PaceTicket, type RateBudget } from "./rate-budget.js";
import { bodyExcerpt, curlCommand, Redactor } from "./recorder.js";
import { decideRetry, type RetryPolicy } from "./retry.js";
import { EventStreamCollector, type SseEvent, type StreamError, summarizeStream } from "./sse.js";

export interface ServiceClientOptions {
  /** ends with /v1 (PROFILE §1) */
  baseUrl: string;
  apiKey: string;
  /** per request; a stream's limit on silence between chunks (default 30 s) */
  timeoutMs?: number;
  /** the record's identifier field (PROFILE §11, default "id"); renamed to `id` before parsing */
  idField?: string;
  /** off by default */
  retry?: RetryPolicy | false;
  /** off by default; one budget may be shared by several clients */
  pacing?: RateBudget | false;
  /** an account label: the account's keys then share its tier and per-agent buckets in the budget */
  account?: string;
  /** the account's tier limit, when known from configuration (PROFILE §11) */
  tierLimit?: number;
  /** for retry and pacing waits and exchange times */
  clock?: Clock;
  /** every exchange, each retry attempt included */
  onExchange?: (exchange: Exchange) => void;
  /** more strings never to record (other keys of the run) */
  secrets?: readonly string[];
  /** retry jitter source (default Math.random) */
  random?: () => number;
  /** connections per origin (default 16) */
  connections?: number;
}

export type AuthMode = "bearer" | "none" | { header: string };
export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined;
/** A record (arrays repeat a parameter) or a raw query string sent as is. */
export type Query = Readonly<Record<string, QueryValue>> | string;

/** Per-request options every typed method takes. */
export interface CallOptions {
  /** extra headers; `null` removes one the client would send */
  headers?: Readonly<Record<string, string | null | undefined>>;
  auth?: AuthMode;
  retry?: RetryPolicy | false;
  /** wait for the rate budget before sending (default true); false still counts the request */
  pace?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface SendOptions extends CallOptions {
  method: string;
  /** relative to baseUrl and sent exactly as given; an absolute http(s) URL is used as is */
  path: string;
  query?: Query;
  /** serialised as JSON */
  body?: unknown;
  /** sent byte for byte; wins over `body` */
  rawBody?: string | Uint8Array;
  /** default application/json when there is a body; null sends none */
  contentType?: string | null;
  /** the endpoint aimed at, for pacing and the record; matched from method and path when absent */
  endpoint?: EndpointId;
  agentId?: string;
}

export interface ApiError {
  code: string;
  message: string;
  details?: Array<{ field: string; issue: string }>;
}

/** A typed call's outcome. A body that breaks its schema is reported in `parseIssues`, never thrown. */
export interface ApiResult<T> {
  exchange: Exchange;
  status: number;
  /** the envelope's `data`, when the body is a valid success envelope */
  data?: T;
  /** the envelope's `error`, when the body is an error envelope (best effort when it is malformed) */
  error?: ApiError;
  /** the JSON body, with the identifier field renamed to `id` */
  body: unknown;
  parseIssues: ParseIssue[];
}

export interface ListResult extends ApiResult<Agent[]> {
  pagination?: Pagination;
}

export interface StreamResult {
  exchange: Exchange;
  status: number;
  events: SseEvent[];
  /** comment lines: heartbeats */
  comments: number;
  /** ms since sending, one per comment line */
  commentAtMs: number[];
  /** the deltas' text, joined */
  text: string;
  done?: MessageReply;
  /** the `error` event, or the JSON error of an answer that did not stream */
  error?: StreamError | ApiError;
  parseIssues: ParseIssue[];
  /** the caller's signal ended the stream */
  aborted: boolean;
  /** the connection failed mid-stream */
  transportError?: string;
}

export interface StreamOptions extends CallOptions {
  onEvent?: (event: SseEvent) => void;
}

type DeleteResult = z.infer<typeof deleteResultSchema>;
type ListQueryInput = Readonly<Record<string, QueryValue>> | RawListQuery | string;

const DEFAULT_TIMEOUT_MS = 30_000;
/** Bodies are kept up to this many bytes; the rest is read and dropped. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The harness's HTTP client for the Agent Management Service v1. Typed methods derive method,
 * path and schemas from ENDPOINTS; `send` sends anything, exactly as given, for the checks that
 * need malformed requests. Every call yields an Exchange record.
 */
export class ServiceClient {
  readonly baseUrl: string;
  /** identifies the key in logs and budgets; never the key */
  readonly keyFingerprint: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly idField: string;
  private readonly retry: RetryPolicy | false;
  private readonly budget: RateBudget | undefined;
  private readonly account: string | undefined;
  private readonly tierLimit: number | undefined;
  private readonly clock: Clock;
  private readonly onExchange: ((exchange: Exchange) => void) | undefined;
  private readonly random: () => number;
  private readonly redactor: Redactor;
  private readonly dispatcher: UndiciAgent;

  constructor(options: ServiceClientOptions) {
    const base = new URL(options.baseUrl);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, "");
    this.baseUrl = this.origin + this.basePath;
    this.apiKey = options.apiKey;
    this.keyFingerprint = `key:${createHash("sha256").update(options.apiKey).digest("hex").slice(0, 12)}`;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.idField = options.idField ?? "id";
    this.retry = options.retry ?? false;
    this.budget = options.pacing || undefined;
    this.account = options.account;
    this.tierLimit = options.tierLimit;
    this.clock = options.clock ?? systemClock;
    this.onExchange = options.onExchange;
    this.random = options.random ?? Math.random;
    this.redactor = new Redactor(options.apiKey, options.secrets);
    this.dispatcher = new UndiciAgent({ connections: options.connections ?? 16 });
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /* ------------------------------------------------------------ typed methods */

  createAgent(body: CreateAgentBody, options?: CallOptions): Promise<ApiResult<Agent>> {
    return this.call("createAgent", { body, ...options });
  }

  listAgents(query: ListQueryInput = {}, options?: CallOptions): Promise<ListResult> {
    return this.call("listAgents", { query, ...options });
  }

  getAgent(id: string, options?: CallOptions): Promise<ApiResult<Agent>> {
    return this.call("getAgent", { agentId: id, ...options });
  }

  /** `contentType` may be application/merge-patch+json (PROFILE §5 Update). */
  updateAgent(id: string, patch: UpdateAgentBody, options?: CallOptions & { contentType?: string }): Promise<ApiResult<Agent>> {
    return this.call("updateAgent", { agentId: id, body: patch, ...options });
  }

  deleteAgent(id: string, options?: CallOptions): Promise<ApiResult<DeleteResult>> {
    return this.call("deleteAgent", { agentId: id, ...options });
  }

  /** Non-stream Send Message. */
  sendMessage(id: string, body: MessageBody, options?: CallOptions): Promise<ApiResult<MessageReply>> {
    return this.call("sendMessage", { agentId: id, body, ...options });
  }

  /** Send Message with `stream: true`, read to the end as server-sent events. */
  async streamMessage(id: string, body: Omit<MessageBody, "stream">, options: StreamOptions = {}): Promise<StreamResult> {
    const spec = ENDPOINTS.sendMessage;
    const { onEvent, ...callOptions } = options;
    const send: SendOptions = {
      method: spec.method,
      path: endpointPath(spec, id),
      body: { ...body, stream: true },
      endpoint: spec.id,
      agentId: id,
      ...callOptions,
    };
    const outcome = await this.withRetry(send, (attempt) => this.perform(send, attempt, { onEvent }));
    const { exchange, stream } = outcome;
    if (stream === undefined) {
      // Answered before streaming began: an ordinary JSON answer (PROFILE §5).
      const result = this.interpret(spec.id, exchange);
      const parseIssues = [...result.parseIssues];
      if (exchange.response.status < 300)
        parseIssues.push({ path: "", code: "not_event_stream", message: `expected Content-Type ${SSE_CONTENT_TYPE}` });
      return {
        exchange,
        status: exchange.response.status,
        events: [],
        comments: 0,
        commentAtMs: [],
        text: "",
        ...(result.error ? { error: result.error } : {}),
        parseIssues,
        aborted: outcome.aborted,
      };
    }
    const summary = summarizeStream(stream.events);
    const framing = stream.framingIssues.map((message) => ({ path: "", code: "sse_framing", message }));
    return {
      exchange,
      status: exchange.response.status,
      events: stream.events,
      comments: stream.comments,
      commentAtMs: stream.commentAtMs,
      text: summary.text,
      ...(summary.done ? { done: summary.done } : {}),
      ...(summary.error ? { error: summary.error } : {}),
      parseIssues: [...summary.parseIssues, ...framing],
      aborted: outcome.aborted,
      ...(outcome.transportError ? { transportError: outcome.transportError } : {}),
    };
  }

  /** PROFILE §1 Reference: `GET /health`, outside /v1 and without auth. */
  async health(options?: CallOptions): Promise<ApiResult<z.infer<typeof healthSchema>>> {
    const exchange = await this.send({ method: "GET", path: `${this.origin}${HEALTH_PATH}`, auth: "none", ...options });
    const json = exchange.response.json;
    const parsed = parseWith(healthSchema, json);
    return {
      exchange,
      status: exchange.response.status,
      ...(parsed.value ? { data: parsed.value } : {}),
      body: json,
      parseIssues: json === undefined ? [notJson()] : parsed.issues,
    };
  }

  /**
   * Any endpoint of the table, with any body: the typed methods in one, for checks that send
   * what the types would refuse. The answer is still parsed with the endpoint's schemas.
   */
  async call<E extends EndpointId>(
    endpoint: E,
    input: CallOptions & {
      agentId?: string;
      body?: unknown;
      rawBody?: string | Uint8Array;
      query?: Query;
      contentType?: string | null;
    } = {},
  ): Promise<ApiResult<DataOf<E>> & { pagination?: Pagination }> {
    const spec: EndpointSpec = ENDPOINTS[endpoint];
    const exchange = await this.send({
      ...input,
      method: spec.method,
      path: endpointPath(spec, input.agentId),
      endpoint,
    });
    return this.interpret(endpoint, exchange);
  }

  /* ---------------------------------------------------------------- raw send */

  /** Send one request as given (retrying only when a retry policy applies) and record it. */
  async send(options: SendOptions): Promise<Exchange> {
    const outcome = await this.withRetry(options, (attempt) => this.perform(options, attempt, undefined));
    return outcome.exchange;
  }

  private async withRetry<T extends { exchange: Exchange }>(options: SendOptions, attemptOnce: (attempt: number) => Promise<T>) {
    const policy = options.retry ?? this.retry;
    const firstAt = this.clock.now();
    for (let attempt = 1; ; attempt++) {
      const outcome = await attemptOnce(attempt);
      if (!policy) return outcome;
      const { exchange } = outcome;
      const decision = decideRetry(
        policy,
        attempt,
        {
          status: exchange.response.status,
          code: errorCodeOf(exchange.response.json),
          retryAfterSeconds: exchange.retryAfterSeconds,
        },
        this.clock.now() - firstAt,
        this.random,
      );
      if (!decision.retry) return outcome;
      await this.clock.sleep(decision.delayMs);
    }
  }

  private async perform(
    options: SendOptions,
    attempt: number,
    streaming: { onEvent?: ((event: SseEvent) => void) | undefined } | undefined,
  ): Promise<{ exchange: Exchange; stream?: EventStreamCollector; aborted: boolean; transportError?: string }> {
    const target = this.target(options);
    const headers = this.requestHeaders(options, streaming !== undefined);
    const body = requestBody(options);
    const url = target.origin + target.path;
    const curl = curlCommand({ method: options.method, url, headers, body }, this.redactor);
    const request: Exchange["request"] = {
      method: options.method,
      url: this.redactor.text(url),
      headers: this.redactor.headers(headers),
      ...(body !== undefined ? { body: bodyExcerpt(body, this.redactor) } : {}),
      bodyBytes: body?.byteLength ?? 0,
    };

    const pace = this.paceRequest(options, target.relativePath);
    const ticket: PaceTicket | undefined =
      pace && this.budget ? await this.budget.acquire(pace, { wait: options.pace !== false }) : undefined;
    let settled = false;
    const settle = (answer: Parameters<RateBudget["settle"]>[1]) => {
      if (settled || ticket === undefined || this.budget === undefined) return;
      settled = true;
      this.budget.settle(ticket, answer);
    };

    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const timeout = streaming ? undefined : AbortSignal.timeout(timeoutMs);
    const signals = [timeout, options.signal].filter((s): s is AbortSignal => s !== undefined);
    const sentAt = this.clock.now();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    let response: Awaited<ReturnType<UndiciAgent["request"]>>;
    try {
      response = await this.dispatcher.request({
        origin: target.origin,
        path: target.path,
        method: options.method as "GET",
        headers,
        body: body === undefined ? null : Buffer.from(body),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: signals.length === 0 ? null : signals.length === 1 ? signals[0] : AbortSignal.any(signals),
      });
    } catch (error) {
      settle(undefined);
      throw this.transportError(error, timeout, options.signal, request, curl);
    }
    const receivedAt = this.clock.now();
    const status = response.statusCode;
    const rawHeaders = response.headers;
    const responseHeaders = flattenHeaders(rawHeaders);
    const rate = parseRateHeaders(rawHeaders);
    const isStream = streaming !== undefined && mediaType(responseHeaders["content-type"]) === SSE_CONTENT_TYPE;

    let rawText: string;
    let stream: EventStreamCollector | undefined;
    let aborted = false;
    let transportError: string | undefined;
    if (isStream) {
      // The server counted the request when it opened the stream; the budget need not wait for the end.
      settle({ status, rate, receivedAt });
      // An exception in the caller's onEvent is the caller's, not the transport's: it is rethrown.
      let callbackError: { error: unknown } | undefined;
      const onEvent = streaming.onEvent;
      stream = new EventStreamCollector(
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
      try {
        for await (const chunk of response.body) stream.feed(chunk as Buffer);
      } catch (error) {
        if (callbackError !== undefined) throw callbackError.error;
        if (options.signal?.aborted) aborted = true;
        else transportError = this.redactor.text(describe(error));
      } finally {
        stream.end();
      }
      rawText = stream.raw;
    } else {
      try {
        rawText = await readCapped(response.body);
      } catch (error) {
        settle(undefined);
        throw this.transportError(error, timeout, options.signal, request, curl);
      }
    }

    const leaks = [
      ...(this.redactor.leaks(rawText) ? ["body"] : []),
      ...Object.entries(responseHeaders)
        .filter(([, value]) => this.redactor.leaks(value))
        .map(([name]) => `header:${name}`),
    ];
    const bodyText = this.redactor.text(rawText);
    const json = isStream ? undefined : parseJson(bodyText);
    settle({ status, code: errorCodeOf(json), rate, receivedAt });

    const exchange: Exchange = {
      request,
      response: { status, headers: this.redactor.headers(responseHeaders), bodyText, json },
      durationMs: elapsed(),
      sentAt,
      receivedAt,
      requestId: responseHeaders[HEADERS.requestId],
      rate,
      ...(rate?.retryAfter !== undefined ? { retryAfterSeconds: rate.retryAfter } : {}),
      curl,
      attempt,
      ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
      ...(options.agentId !== undefined ? { agentId: options.agentId } : {}),
      leaks,
    };
    this.onExchange?.(exchange);
    return { exchange, ...(stream ? { stream } : {}), aborted, ...(transportError ? { transportError } : {}) };
  }

  /* ---------------------------------------------------------------- helpers */

  /** Where a request goes: the path exactly as given, under the base path or as an absolute URL. */
  private target(options: SendOptions): { origin: string; path: string; relativePath: string | undefined } {
    let origin = this.origin;
    let path: string;
    let relativePath: string | undefined;
    if (/^https?:\/\//i.test(options.path)) {
      origin = new URL(options.path).origin;
      path = options.path.slice(origin.length) || "/";
    } else {
      path = this.basePath + options.path;
      relativePath = options.path;
      if (!path.startsWith("/")) path = `/${path}`;
    }
    const query = queryString(options.query);
    if (query !== "") path += (path.includes("?") ? "&" : "?") + query;
    return { origin, path, relativePath };
  }

  private requestHeaders(options: SendOptions, streaming: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      accept: streaming ? SSE_CONTENT_TYPE : JSON_CONTENT_TYPE,
      "user-agent": "agent-harness",
    };
    const auth = options.auth ?? "bearer";
    if (auth === "bearer") headers.authorization = `Bearer ${this.apiKey}`;
    else if (auth !== "none") headers.authorization = auth.header;
    const hasBody = options.rawBody !== undefined || options.body !== undefined;
    const contentType = options.contentType === undefined ? (hasBody ? JSON_CONTENT_TYPE : null) : options.contentType;
    if (contentType !== null) headers["content-type"] = contentType;
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      const key = name.toLowerCase();
      if (value === null || value === undefined) delete headers[key];
      else headers[key] = value;
    }
    return headers;
  }

  private paceRequest(options: SendOptions, relativePath: string | undefined): PaceRequest | undefined {
    // PROFILE §6: unauthenticated requests count against no limit.
    if (this.budget === undefined || options.auth === "none") return undefined;
    let endpoint: EndpointId | undefined = options.endpoint;
    let agentId = options.agentId;
    if (endpoint === undefined && relativePath !== undefined) {
      const matched = matchEndpoint(options.method, relativePath, { lenient: true });
      endpoint = matched?.spec.id;
      agentId = matched?.agentId;
    }
    return {
      key: this.keyFingerprint,
      account: this.account,
      tierLimit: this.tierLimit,
      bucket: endpoint === undefined ? undefined : endpointBucket(ENDPOINTS[endpoint], agentId),
    };
  }

  /** PROFILE §11: a deployment may name the identifier field otherwise; the contract's schemas say `id`. */
  private renameIdField(endpoint: EndpointId, json: unknown): unknown {
    if (this.idField === "id" || endpoint === "sendMessage" || !isObject(json)) return json;
    const rename = (record: unknown): unknown => {
      if (!isObject(record) || !(this.idField in record) || "id" in record) return record;
      const { [this.idField]: id, ...rest } = record;
      return { id, ...rest };
    };
    const data = json.data;
    return { ...json, data: Array.isArray(data) ? data.map(rename) : rename(data) };
  }

  private interpret<E extends EndpointId>(endpoint: E, exchange: Exchange): ApiResult<DataOf<E>> & { pagination?: Pagination } {
    const status = exchange.response.status;
    const json = exchange.response.json;
    const body = this.renameIdField(endpoint, json);
    const result: ApiResult<DataOf<E>> & { pagination?: Pagination } = { exchange, status, body, parseIssues: [] };
    if (json === undefined) {
      result.parseIssues.push(notJson());
      return result;
    }
    if (status >= 200 && status < 300) {
      const parsed = parseWith(responseSchemaOf(endpoint), body);
      result.parseIssues = parsed.issues;
      if (parsed.value !== undefined) {
        result.data = parsed.value.data;
        if ("pagination" in parsed.value) result.pagination = parsed.value.pagination;
      }
    } else {
      const parsed = parseWith(errorEnvelopeSchema, body);
      result.parseIssues = parsed.issues;
      const error = parsed.value?.error ?? looseError(body);
      if (error !== undefined) result.error = error;
    }
    return result;
  }

  private transportError(
    error: unknown,
    timeout: AbortSignal | undefined,
    signal: AbortSignal | undefined,
    request: Exchange["request"],
    curl: string,
  ): TransportError {
    const code = (error as { code?: unknown })?.code;
    const timedOut = timeout?.aborted === true || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT";
    const kind = signal?.aborted ? "aborted" : timedOut ? "timeout" : "network";
    const message = `${request.method} ${request.url}: ${kind === "timeout" ? "no answer in time" : this.redactor.text(describe(error))}`;
    return new TransportError(kind, message, request, curl);
  }
}

/* ------------------------------------------------------------------ functions */

function queryString(query: Query | undefined): string {
  if (query === undefined) return "";
  if (typeof query === "string") return query.replace(/^\?/, "");
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(v))}`);
  }
  return parts.join("&");
}

function requestBody(options: SendOptions): Uint8Array | undefined {
  if (options.rawBody !== undefined)
    return typeof options.rawBody === "string" ? Buffer.from(options.rawBody, "utf8") : options.rawBody;
  if (options.body !== undefined) return Buffer.from(JSON.stringify(options.body), "utf8");
  return undefined;
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

async function readCapped(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    if (size < MAX_BODY_BYTES) chunks.push(buffer.subarray(0, MAX_BODY_BYTES - size));
    size += buffer.byteLength; // keep reading past the cap: the body must be consumed
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorCodeOf(json: unknown): string | undefined {
  if (!isObject(json) || !isObject(json.error)) return undefined;
  return typeof json.error.code === "string" ? json.error.code : undefined;
}

/** An error envelope that broke its schema still says what code it meant, for the report. */
function looseError(body: unknown): ApiError | undefined {
  const code = errorCodeOf(body);
  if (code === undefined || !isObject(body) || !isObject(body.error)) return undefined;
  const message = body.error.message;
  return { code, message: typeof message === "string" ? message : "" };
}

function notJson(): ParseIssue {
  return { path: "", code: "invalid_json", message: "the body is not JSON" };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
