import type { z } from "zod";
import type { ErrorStatus } from "./errors.js";
import { RATE_LIMITS, type RateLimitedEndpoint } from "./limits.js";
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
  /** the error statuses PROFILE allows this endpoint (beyond 401, which every endpoint has) */
  readonly errorStatuses: readonly ErrorStatus[];
  readonly summary: string;
}

export type EndpointId = "createAgent" | "listAgents" | "getAgent" | "updateAgent" | "deleteAgent" | "sendMessage";

const keyBucket = (endpoint: RateLimitedEndpoint): RateBucketKind => ({
  kind: "keyEndpoint",
  endpoint,
  size: RATE_LIMITS.perKeyEndpoint[endpoint],
});

/** Errors every endpoint may answer: auth, permission, rate limit, routing, generic 5xx. */
const COMMON: readonly ErrorStatus[] = [401, 403, 429, 500, 503];
const BODY: readonly ErrorStatus[] = [400, 413, 415];

/** PROFILE §5 with §6 permissions and §7 buckets: the one endpoint table. */
export const ENDPOINTS: Readonly<Record<EndpointId, EndpointSpec>> = {
  createAgent: {
    id: "createAgent",
    method: "POST",
    path: "/agents",
    permission: "agents:write",
    bucket: keyBucket("createAgent"),
    successStatus: 201,
    body: createAgentBodySchema,
    response: agentEnvelopeSchema,
    errorStatuses: [...COMMON, ...BODY],
    summary: "Create an agent",
  },
  listAgents: {
    id: "listAgents",
    method: "GET",
    path: "/agents",
    permission: "agents:read",
    bucket: keyBucket("listAgents"),
    successStatus: 200,
    query: listQuerySchema,
    response: listEnvelopeSchema,
    errorStatuses: [...COMMON, 400],
    summary: "List the account's agents",
  },
  getAgent: {
    id: "getAgent",
    method: "GET",
    path: "/agents/:agentId",
    permission: "agents:read",
    bucket: keyBucket("getAgent"),
    successStatus: 200,
    response: agentEnvelopeSchema,
    errorStatuses: [...COMMON, 404],
    summary: "Read one agent",
  },
  updateAgent: {
    id: "updateAgent",
    method: "PATCH",
    path: "/agents/:agentId",
    permission: "agents:write",
    bucket: keyBucket("updateAgent"),
    successStatus: 200,
    body: updateAgentBodySchema,
    response: agentEnvelopeSchema,
    errorStatuses: [...COMMON, ...BODY, 404],
    summary: "Update an agent (JSON Merge Patch)",
  },
  deleteAgent: {
    id: "deleteAgent",
    method: "DELETE",
    path: "/agents/:agentId",
    permission: "agents:delete",
    bucket: keyBucket("deleteAgent"),
    successStatus: 200,
    response: deleteEnvelopeSchema,
    errorStatuses: [...COMMON, 404],
    summary: "Delete an agent and its conversations",
  },
  sendMessage: {
    id: "sendMessage",
    method: "POST",
    path: "/agents/:agentId/messages",
    permission: "messages:send",
    bucket: { kind: "agentMessages", size: RATE_LIMITS.perAgentMessages },
    successStatus: 200,
    body: messageBodySchema,
    response: messageEnvelopeSchema,
    errorStatuses: [...COMMON, ...BODY, 404],
    summary: "Send a message to an agent (optionally streamed as SSE)",
  },
};

export const ENDPOINT_LIST: readonly EndpointSpec[] = Object.values(ENDPOINTS);

/** Content types a body may carry (PROFILE §5 Update also accepts merge-patch). */
export const JSON_CONTENT_TYPE = "application/json";
export const MERGE_PATCH_CONTENT_TYPE = "application/merge-patch+json";

/** Fill `:agentId` in an endpoint path. */
export function endpointPath(spec: EndpointSpec, agentId?: string): string {
  return agentId === undefined ? spec.path : spec.path.replace(":agentId", encodeURIComponent(agentId));
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
