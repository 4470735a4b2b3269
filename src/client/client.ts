import { createHash } from "node:crypto";
import type { Dispatcher } from "undici";
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
  HEALTH_PATH,
  healthSchema,
  isRecord,
  JSON_CONTENT_TYPE,
  type MessageBody,
  type MessageReply,
  type Pagination,
  type RawListQuery,
  responseSchemaOf,
  SSE_CONTENT_TYPE,
  type UpdateAgentBody,
} from "../contract/index.js";
import { type Clock, systemClock } from "./clock.js";
import { type Exchange, errorCodeOf } from "./exchange.js";
import { renameIdField } from "./id-field.js";
import {
  compose,
  type Dispatch,
  type Layer,
  type OutgoingRequest,
  pacing,
  recording,
  redaction,
  refusals,
  retrying,
  undiciTransport,
} from "./layers/index.js";
import { networkAgent } from "./network.js";
import { type ParseIssue, parseWith } from "./parse-issues.js";
import type { RateBudget } from "./rate-budget.js";
import { Redactor } from "./recorder.js";
import type {
  ApiError,
  ApiResult,
  CallOptions,
  ListResult,
  Query,
  QueryValue,
  SendOptions,
  StreamOptions,
  StreamResult,
} from "./results.js";
import type { RetryPolicy } from "./retry.js";
import { summarizeStream } from "./sse.js";

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
  /** the shell variable a curl line reads this client's key from (default AGENT_API_KEY) */
  keyVariable?: string;
  /** retry jitter source (default Math.random) */
  random?: () => number;
  /** connections per origin (default 16) */
  connections?: number;
  /** more layers between recording and redaction: they see each exchange redacted, `leaks` filled (the response checks) */
  layers?: readonly Layer[];
}

type DeleteResult = z.infer<typeof deleteResultSchema>;
type ListQueryInput = Readonly<Record<string, QueryValue>> | RawListQuery | string;

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The harness's HTTP client for the Agent Management Service v1. Typed methods derive method,
 * path and schemas from ENDPOINTS; `send` sends anything, exactly as given, for the checks that
 * need malformed requests. Every call yields an Exchange record.
 */
export type * from "./results.js";

export class ServiceClient {
  readonly baseUrl: string;
  /** identifies the key in logs and budgets; never the key */
  readonly keyFingerprint: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  /** the record's identifier field (PROFILE §11): answers are read with it renamed to `id` */
  readonly idField: string;
  private readonly dispatcher: Dispatcher;
  /** retry → (with pacing: act on a 429 it did not expect) → record → (the caller's layers) → redact → pace → undici (src/client/layers) */
  private readonly dispatch: Dispatch;

  constructor(options: ServiceClientOptions) {
    const base = new URL(options.baseUrl);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, "");
    this.baseUrl = this.origin + this.basePath;
    this.apiKey = options.apiKey;
    this.keyFingerprint = `key:${createHash("sha256").update(options.apiKey).digest("hex").slice(0, 12)}`;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.idField = options.idField ?? "id";
    const clock = options.clock ?? systemClock;
    this.dispatcher = networkAgent(options.connections ?? 16);
    const identity = { key: this.keyFingerprint, account: options.account, tierLimit: options.tierLimit };
    this.dispatch = compose(
      retrying(options.retry ?? false, clock, options.random),
      ...(options.pacing ? [refusals(clock)] : []),
      recording(options.onExchange),
      ...(options.layers ?? []),
      redaction(new Redactor(options.apiKey, options.secrets, options.keyVariable)),
      ...(options.pacing ? [pacing(options.pacing, identity)] : []),
    )(undiciTransport(this.dispatcher, clock));
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
    const outcome = await this.dispatch(this.outgoing(send, { onEvent }));
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
    return (await this.dispatch(this.outgoing(options, undefined))).exchange;
  }

  /* ---------------------------------------------------------------- helpers */

  /** The request as the layers see it: the path exactly as given, under the base path or as an absolute URL. */
  private outgoing(options: SendOptions, stream: OutgoingRequest["stream"]): OutgoingRequest {
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
    return {
      method: options.method,
      origin,
      path,
      relativePath,
      headers: this.requestHeaders(options, stream !== undefined),
      body: requestBody(options),
      endpoint: options.endpoint,
      agentId: options.agentId,
      timeoutMs: options.timeoutMs ?? this.timeoutMs,
      signal: options.signal,
      stream,
      pace: options.pace,
      retry: options.retry,
      attempt: 1,
    };
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

  private interpret<E extends EndpointId>(endpoint: E, exchange: Exchange): ApiResult<DataOf<E>> & { pagination?: Pagination } {
    const status = exchange.response.status;
    const json = exchange.response.json;
    const body = endpoint === "sendMessage" ? json : renameIdField(json, this.idField);
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
}

/* ------------------------------------------------------------------ functions */

/** A query as the request line carries it, without its "?": the order and repeats as given. */
export function queryString(query: Query | undefined): string {
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

/** An error envelope that broke its schema still says what code it meant, for the report. */
function looseError(body: unknown): ApiError | undefined {
  const code = errorCodeOf(body);
  if (code === undefined || !isRecord(body) || !isRecord(body.error)) return undefined;
  const message = body.error.message;
  return { code, message: typeof message === "string" ? message : "" };
}

function notJson(): ParseIssue {
  return { path: "", code: "invalid_json", message: "the body is not JSON" };
}
