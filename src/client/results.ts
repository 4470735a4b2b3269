import type { Agent, EndpointId, ErrorDetail, MessageReply, Pagination } from "../contract/index.js";
import type { Exchange } from "./exchange.js";
import type { ParseIssue } from "./parse-issues.js";
import type { RetryPolicy } from "./retry.js";
import type { SseEvent, StreamError } from "./sse.js";

/** What the client's calls take and give: options, queries, and each answer as a typed result. */

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
  details?: ErrorDetail[];
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
