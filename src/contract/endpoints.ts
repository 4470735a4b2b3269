import type { z } from "zod";
import type { ClauseId } from "./clauses.js";
import type { ErrorStatus } from "./errors.js";
import { LIST_LIMITS, RATE_LIMITS, type RateLimitedEndpoint } from "./limits.js";
import {
  agentEnvelopeSchema,
  createAgentBodySchema,
  deleteEnvelopeSchema,
  listEnvelopeSchema,
  listQuerySchema,
  messageBodySchema,
  messageEnvelopeSchema,
  updateAgentBodySchema,
} from "./schemas.js";

/** PROFILE §6: the permissions a key may hold. */
export const PERMISSIONS = ["agents:read", "agents:write", "agents:delete", "messages:send"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type RateBucketKind =
  | { kind: "keyEndpoint"; endpoint: RateLimitedEndpoint; size: number }
  | { kind: "agentMessages"; size: number };

/** One row of the endpoint table; ENDPOINTS keeps each row's own schema types (see BodyOf, DataOf). */
export interface EndpointSpec {
  readonly id: EndpointId;
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** relative to {base_url}; `:agentId` is the path parameter */
  readonly path: string;
  readonly permission: Permission;
  /** besides the account's tier bucket, which every endpoint counts in (PROFILE §7) */
  readonly bucket: RateBucketKind;
  readonly successStatus: 200 | 201;
  readonly body?: z.ZodType;
  readonly query?: z.ZodType;
  readonly response: z.ZodType;
  /** the clause a success body that breaks `response` breaks (PROFILE §4, §5) */
  readonly responseClause: ClauseId;
  /** the error statuses PROFILE allows this endpoint (beyond 401, which every endpoint has) */
  readonly errorStatuses: readonly ErrorStatus[];
  /** the media types the body may be sent as (default: JSON alone) */
  readonly bodyContentTypes?: readonly string[];
  readonly summary: string;
  /** one request the endpoint accepts, typed by its schemas so it cannot drift from them */
  readonly example: { readonly body?: unknown; readonly query?: Readonly<Record<string, string>> };
}

export type EndpointId = "createAgent" | "listAgents" | "getAgent" | "updateAgent" | "deleteAgent" | "sendMessage";

const keyBucket = (endpoint: RateLimitedEndpoint): RateBucketKind => ({
  kind: "keyEndpoint",
  endpoint,
  size: RATE_LIMITS.perKeyEndpoint[endpoint],
});

/** Errors every endpoint may answer: auth, permission, rate limit, routing, generic 5xx. */
const COMMON: readonly ErrorStatus[] = [401, 403, 429, 500, 503];
/** PROFILE §7 Sizes: any body over the limit, a DELETE's included → 400 (or 413) */
const BODY_SIZE: readonly ErrorStatus[] = [400, 413];
/** PROFILE §7: a POST or PATCH body also → 400 (or 415) without a JSON content type */
const BODY: readonly ErrorStatus[] = [...BODY_SIZE, 415];

/** Content types a body may carry (PROFILE §5 Update also accepts merge-patch). */
export const JSON_CONTENT_TYPE = "application/json";
export const MERGE_PATCH_CONTENT_TYPE = "application/merge-patch+json";

/** What a row says beyond its route: its schemas, errors, summary and example (and any other bucket or success status). */
type RowDetails = Omit<EndpointSpec, "id" | "method" | "path" | "permission" | "bucket" | "successStatus" | "responseClause"> &
  Partial<Pick<EndpointSpec, "bucket" | "successStatus" | "responseClause">>;

/** A row of the table: its own key bucket, 200 and an agent record's shape (§4) unless `details` says otherwise. */
const row = <const Id extends RateLimitedEndpoint, const M extends EndpointSpec["method"], const D extends RowDetails>(
  id: Id,
  method: M,
  path: string,
  permission: Permission,
  details: D,
): Omit<
  {
    id: Id;
    method: M;
    path: string;
    permission: Permission;
    bucket: RateBucketKind;
    successStatus: 200;
    responseClause: ClauseId;
  },
  keyof D
> &
  D => ({
  id,
  method,
  path,
  permission,
  bucket: keyBucket(id),
  successStatus: 200,
  responseClause: "record.shape",
  ...details,
});

/** PROFILE §5 with §6 permissions and §7 buckets: the one endpoint table. */
export const ENDPOINTS = {
  createAgent: row("createAgent", "POST", "/agents", "agents:write", {
    successStatus: 201,
    body: createAgentBodySchema,
    response: agentEnvelopeSchema,
    errorStatuses: [...COMMON, ...BODY],
    summary: "Create an agent",
    example: { body: { name: "Example agent" } satisfies z.input<typeof createAgentBodySchema> },
  }),
  listAgents: row("listAgents", "GET", "/agents", "agents:read", {
    query: listQuerySchema,
    response: listEnvelopeSchema,
    errorStatuses: [...COMMON, 400],
    summary: "List the account's agents",
    example: { query: { limit: String(LIST_LIMITS.limit.default) } satisfies z.input<typeof listQuerySchema> },
  }),
  getAgent: row("getAgent", "GET", "/agents/:agentId", "agents:read", {
    response: agentEnvelopeSchema,
    errorStatuses: [...COMMON, 404],
    summary: "Read one agent",
    example: {},
  }),
  updateAgent: row("updateAgent", "PATCH", "/agents/:agentId", "agents:write", {
    body: updateAgentBodySchema,
    response: agentEnvelopeSchema,
    errorStatuses: [...COMMON, ...BODY, 404],
    bodyContentTypes: [JSON_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE],
    summary: "Update an agent (JSON Merge Patch)",
    example: { body: { bio: "Updated by the example" } satisfies z.input<typeof updateAgentBodySchema> },
  }),
  deleteAgent: row("deleteAgent", "DELETE", "/agents/:agentId", "agents:delete", {
    response: deleteEnvelopeSchema,
    responseClause: "delete.ok",
    // a GET's body has no meaning (RFC 9110 §9.3.1) and is not read; a DELETE's is, and may be too large
    errorStatuses: [...COMMON, ...BODY_SIZE, 404],
    summary: "Delete an agent and its conversations",
    example: {},
  }),
  sendMessage: {
    id: "sendMessage",
    method: "POST",
    path: "/agents/:agentId/messages",
    permission: "messages:send",
    // PROFILE §7: Send Message counts per agent, across all keys of the account
    bucket: { kind: "agentMessages", size: RATE_LIMITS.perAgentMessages },
    successStatus: 200,
    body: messageBodySchema,
    response: messageEnvelopeSchema,
    responseClause: "message.reply",
    errorStatuses: [...COMMON, ...BODY, 404],
    summary: "Send a message to an agent (optionally streamed as SSE)",
    example: { body: { text: "hello" } satisfies z.input<typeof messageBodySchema> },
  },
} as const satisfies Record<EndpointId, EndpointSpec>;

export type Endpoints = typeof ENDPOINTS;
type SchemaAt<E extends EndpointId, K extends string> = Endpoints[E] extends { readonly [P in K]: infer S extends z.ZodType }
  ? S
  : never;
/** What a client sends as the body of `E` (`never` when it takes none). */
export type BodyOf<E extends EndpointId> = z.input<SchemaAt<E, "body">>;
/** The body of `E` once its schema parsed it: what a route handler works with. */
export type ParsedBodyOf<E extends EndpointId> = z.output<SchemaAt<E, "body">>;
export type QueryOf<E extends EndpointId> = z.output<SchemaAt<E, "query">>;
/** The success envelope of `E`, and its `data`. */
export type ResponseOf<E extends EndpointId> = z.output<Endpoints[E]["response"]>;
export type DataOf<E extends EndpointId> = ResponseOf<E>["data"];

export const ENDPOINT_LIST: readonly EndpointSpec[] = Object.values(ENDPOINTS);

/** The table as seen by generic code: indexed with a type parameter `E`, it keeps `E`'s own types. */
type GenericTable = { readonly [E in EndpointId]: { readonly response: z.ZodType<ResponseOf<E>> } };
const GENERIC_TABLE: GenericTable = ENDPOINTS;

/** The success envelope schema of `endpoint`, typed for a generic caller (`E extends EndpointId`). */
export const responseSchemaOf = <E extends EndpointId>(endpoint: E): z.ZodType<ResponseOf<E>> => GENERIC_TABLE[endpoint].response;

/** Fill `:agentId` in an endpoint path. */
export function endpointPath(spec: EndpointSpec, agentId?: string): string {
  return agentId === undefined ? spec.path : spec.path.replace(":agentId", encodeURIComponent(agentId));
}

export interface EndpointMatch {
  spec: EndpointSpec;
  /** the `:agentId` segment, percent-decoded */
  agentId?: string;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const PATTERNS = ENDPOINT_LIST.map((spec) => ({
  spec,
  exact: new RegExp(`^${escapeRegex(spec.path).replace(":agentId", "([^/]+)")}$`),
  lenient: new RegExp(`^${escapeRegex(spec.path).replace(":agentId", "([^/]+)")}$`, "i"),
}));

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a malformed escape: taken as sent
  }
};

/**
 * The endpoint a method and a path relative to the base URL (`/agents/agt_1`, a query allowed)
 * address. Exact by default, as PROFILE §9 routes: a variant (trailing slash, other case)
 * matches none. `lenient` takes such variants and percent-encoded paths as the endpoint they
 * resemble, for pacing that would rather count a request too many than too few.
 * With `baseUrl`, `path` is an absolute URL under it.
 */
export function matchEndpoint(
  method: string,
  path: string,
  options: { lenient?: boolean; baseUrl?: string } = {},
): EndpointMatch | undefined {
  let rel = path.split(/[?#]/)[0] ?? "";
  if (options.baseUrl !== undefined) {
    const base = new URL(options.baseUrl).pathname.replace(/\/+$/, "");
    const absolute = new URL(path).pathname;
    if (!absolute.startsWith(`${base}/`)) return undefined;
    rel = absolute.slice(base.length);
  }
  if (options.lenient) rel = decoded(rel).replace(/\/+$/, "");
  const upper = method.toUpperCase();
  for (const { spec, exact, lenient } of PATTERNS) {
    if (spec.method !== upper) continue;
    const match = (options.lenient ? lenient : exact).exec(rel);
    const agentId = match?.[1];
    if (match) return agentId === undefined ? { spec } : { spec, agentId: options.lenient ? agentId : decoded(agentId) };
  }
  return undefined;
}

/** The endpoints at an exact path, whatever their method: a 405 names their methods in Allow (PROFILE §9). */
export function endpointsAtPath(relativePath: string): EndpointSpec[] {
  return PATTERNS.filter((p) => p.exact.test(relativePath)).map((p) => p.spec);
}

/** PROFILE §1 / §10 headers. */
export const HEADERS = {
  requestId: "x-request-id",
  limit: "x-ratelimit-limit",
  remaining: "x-ratelimit-remaining",
  reset: "x-ratelimit-reset",
  retryAfter: "retry-after",
  wwwAuthenticate: "www-authenticate",
} as const;

/** PROFILE §1 Reference: the health route, outside /v1. */
export const HEALTH_PATH = "/health";
export const API_PREFIX = "/v1";
