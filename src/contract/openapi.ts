import { z } from "zod";
import { ENDPOINT_LIST, type EndpointSpec, HEADERS } from "./endpoints.js";
import { type ErrorStatus, STATUS_CODES } from "./errors.js";
import { LIST_LIMITS } from "./limits.js";
import { AGENT_STATUSES, SORT_FIELDS, SORT_ORDERS, SSE_EVENTS } from "./schemas.js";

type Json = { [key: string]: unknown };

const SCHEMA_PREFIX = "#/components/schemas/";

/** JSON Schema (2020-12) of one contract schema, as OpenAPI 3.1 embeds it. */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output" = "output"): Json {
  const { $schema: _ignored, ...rest }: Json = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

/** Every named contract schema (`.meta({ id })`), each in the direction a client meets it. */
function componentSchemas(): Record<string, Json> {
  const emit = (io: "input" | "output"): Record<string, Json> =>
    z.toJSONSchema(z.globalRegistry, { io, unrepresentable: "any", uri: (id) => `${SCHEMA_PREFIX}${id}` }).schemas;
  const output = emit("output");
  const input = emit("input");
  const requestBodies = new Set(ENDPOINT_LIST.flatMap((ep) => (ep.body ? [idOf(ep.body)] : [])));
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(output)) {
    const { $schema: _s, $id: _i, ...rest } = (requestBodies.has(id) ? input[id] : schema) ?? schema;
    out[id] = rest;
  }
  return out;
}

function idOf(schema: z.ZodType): string {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error("a request or response schema of the endpoint table has no .meta({ id })");
  return id;
}

const ref = (schema: z.ZodType) => ({ $ref: `${SCHEMA_PREFIX}${idOf(schema)}` });

const integerHeader = (description: string, minimum?: number): Json => ({
  required: true,
  description,
  schema: { type: "integer", ...(minimum !== undefined ? { minimum } : {}) },
});

/** PROFILE §1, §7: every response has X-Request-Id; every authenticated one the X-RateLimit-* headers. */
const requestIdHeader: Json = { "X-Request-Id": { required: true, schema: { type: "string" } } };
const rateHeaders: Json = {
  ...requestIdHeader,
  "X-RateLimit-Limit": integerHeader("size of the bucket described (the tightest)", 1),
  "X-RateLimit-Remaining": integerHeader("requests left in it", 0),
  "X-RateLimit-Reset": integerHeader("Unix time in whole seconds when it refills", 0),
};

const listParameters = [
  {
    name: "page",
    schema: {
      type: "integer",
      minimum: LIST_LIMITS.page.min,
      maximum: LIST_LIMITS.maxInteger,
      default: LIST_LIMITS.page.default,
    },
  },
  {
    name: "limit",
    schema: {
      type: "integer",
      minimum: LIST_LIMITS.limit.min,
      maximum: LIST_LIMITS.limit.max,
      default: LIST_LIMITS.limit.default,
    },
  },
  { name: "status", schema: { type: "string", enum: AGENT_STATUSES } },
  { name: "sortBy", schema: { type: "string", enum: SORT_FIELDS, default: "createdAt" } },
  { name: "order", schema: { type: "string", enum: SORT_ORDERS, default: "desc" } },
].map((p) => ({ ...p, in: "query", required: false }));

const errorContent = { "application/json": { schema: { $ref: `${SCHEMA_PREFIX}ErrorEnvelope` } } };

function errorResponse(status: ErrorStatus): Json {
  const codes = STATUS_CODES[status].join(", ");
  if (status === 401)
    return {
      description: `${codes}: no key, an unknown key or a scheme other than Bearer (counted in no bucket)`,
      headers: {
        ...requestIdHeader,
        "WWW-Authenticate": { required: true, schema: { type: "string", pattern: "^Bearer" } },
      },
      content: errorContent,
    };
  if (status === 429)
    return {
      description: `${codes}: a bucket is empty (with Retry-After) or the message quota is spent (without)`,
      headers: { ...rateHeaders, "Retry-After": { required: false, schema: { type: "integer", minimum: 1 } } },
      content: errorContent,
    };
  return { description: `one of ${codes}`, headers: rateHeaders, content: errorContent };
}

/** PROFILE §9: a known path with a method it lacks → 404, or 405 naming the methods it has. */
const methodNotAllowed: Json = {
  description: "METHOD_NOT_ALLOWED: the path has no such method; Allow names those it has",
  headers: { ...rateHeaders, Allow: { required: true, schema: { type: "string" } } },
  content: errorContent,
};

/** PROFILE §5: the events of a streamed reply, each described; OpenAPI 3.1 has no event schema, so an extension carries them. */
function eventStream(): Json {
  const events = Object.fromEntries(
    Object.entries(SSE_EVENTS).map(([name, schema]) => [
      name,
      z.globalRegistry.get(schema)?.id ? ref(schema) : jsonSchemaOf(schema),
    ]),
  );
  return {
    schema: {
      type: "string",
      description:
        "Server-sent events: `delta` {text} as the reply is made, then `done` (the MessageReply) or `error` {code, message}; comment lines are heartbeats.",
    },
    "x-sse-events": events,
  };
}

/** Create → the operations that take the new agent's id, so stateful tools can chain calls. */
const agentLinks: Json = Object.fromEntries(
  ENDPOINT_LIST.filter((ep) => ep.path.includes(":agentId")).map((ep) => [
    ep.id,
    { operationId: ep.id, parameters: { agentId: "$response.body#/data/id" }, description: `${ep.summary} just created` },
  ]),
);

function operation(ep: EndpointSpec): Json {
  const responses: Json = {
    [ep.successStatus]: {
      description: ep.summary,
      headers: rateHeaders,
      content: {
        "application/json": { schema: ref(ep.response) },
        ...(ep.id === "sendMessage" ? { "text/event-stream": eventStream() } : {}),
      },
      ...(ep.id === "createAgent" ? { links: agentLinks } : {}),
    },
  };
  const statuses: readonly ErrorStatus[] = [401, ...ep.errorStatuses];
  for (const status of statuses) responses[status] = errorResponse(status);
  responses[405] = methodNotAllowed;
  return {
    operationId: ep.id,
    summary: ep.summary,
    "x-permission": ep.permission,
    "x-rate-bucket": ep.bucket,
    parameters: [
      ...(ep.path.includes(":agentId") ? [{ name: "agentId", in: "path", required: true, schema: { type: "string" } }] : []),
      ...(ep.query ? listParameters : []),
    ],
    ...(ep.body ? { requestBody: { required: true, content: { "application/json": { schema: ref(ep.body) } } } } : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document, emitted from the contract (PROFILE.md is its source). */
export function openApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const ep of ENDPOINT_LIST) {
    const oaPath = ep.path.replace(":agentId", "{agentId}");
    paths[oaPath] = { ...(paths[oaPath] ?? {}), [ep.method.toLowerCase()]: operation(ep) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Agent Management Service",
      version: "v1",
      description: "Emitted from agent-harness src/contract (PROFILE.md).",
    },
    servers: [{ url: "{base_url}", variables: { base_url: { default: "http://127.0.0.1:8080/v1" } } }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: componentSchemas(),
    },
  };
}

export { HEADERS };
