import { z } from "zod";
import { ENDPOINT_LIST, type EndpointSpec, HEADERS, JSON_CONTENT_TYPE, type RateBucketKind } from "./endpoints.js";
import { type ErrorStatus, STATUS_CODES } from "./errors.js";
import { BODY_LIMIT_BYTES, LIST_LIMITS, RATE_LIMITS } from "./limits.js";
import { AGENT_STATUSES, type ListQuery, listQuerySchema, SORT_FIELDS, SORT_ORDERS, SSE_EVENTS } from "./schemas.js";

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

/** PROFILE §5 List: what each parameter takes, as a client writes it; each default is the schema's own. */
const LIST_DEFAULTS = listQuerySchema.parse({});
const listParameterSchemas: { [K in keyof ListQuery]-?: Json } = {
  page: { type: "integer", minimum: LIST_LIMITS.page.min, maximum: LIST_LIMITS.maxInteger },
  limit: { type: "integer", minimum: LIST_LIMITS.limit.min, maximum: LIST_LIMITS.limit.max },
  status: { type: "string", enum: AGENT_STATUSES },
  sortBy: { type: "string", enum: SORT_FIELDS },
  order: { type: "string", enum: SORT_ORDERS },
};
const listParameters = Object.entries(listParameterSchemas).map(([name, schema]) => {
  const fallback: unknown = Reflect.get(LIST_DEFAULTS, name);
  return { name, in: "query", required: false, schema: { ...schema, ...(fallback !== undefined ? { default: fallback } : {}) } };
});

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
  if (status === 413)
    return {
      description: `${codes}: the body is over ${BODY_LIMIT_BYTES} bytes (PROFILE §7; 400 INVALID_REQUEST is as conformant)`,
      headers: rateHeaders,
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

/** PROFILE §6, §7: who may call the operation, and the buckets it counts in. */
function operationDescription(ep: EndpointSpec): string {
  const bucket = (kind: RateBucketKind) =>
    kind.kind === "keyEndpoint"
      ? `the key's own bucket for this operation (${kind.size} per window)`
      : `the agent's message bucket (${kind.size} per window, across every key of the account)`;
  const tiers = Object.entries(RATE_LIMITS.tiers)
    .map(([tier, size]) => `${tier} ${size}`)
    .join(", ");
  return [
    `${ep.summary}.`,
    `Needs a key holding \`${ep.permission}\`, else 403 FORBIDDEN (PROFILE §6).`,
    `Counted in ${bucket(ep.bucket)} and in the account's tier bucket (${tiers} per window; PROFILE §7).`,
  ].join(" ");
}

/** The tag of an operation: the resource its permission names (`agents:write` → agents). */
const tagOf = (ep: EndpointSpec) => ep.permission.split(":")[0] ?? ep.permission;

function requestBody(ep: EndpointSpec, body: z.ZodType): Json {
  const media = { schema: ref(body) };
  return {
    required: true,
    description: `At most ${BODY_LIMIT_BYTES} bytes; a larger body is answered 400 or 413 (PROFILE §7).`,
    content: Object.fromEntries((ep.bodyContentTypes ?? [JSON_CONTENT_TYPE]).map((type) => [type, media])),
  };
}

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
    description: operationDescription(ep),
    tags: [tagOf(ep)],
    "x-permission": ep.permission,
    "x-rate-bucket": ep.bucket,
    parameters: [
      ...(ep.path.includes(":agentId") ? [{ name: "agentId", in: "path", required: true, schema: { type: "string" } }] : []),
      ...(ep.query ? listParameters : []),
    ],
    ...(ep.body ? { requestBody: requestBody(ep, ep.body) } : {}),
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
    tags: [...new Set(ENDPOINT_LIST.map(tagOf))].map((name) => ({
      name,
      description: `The operations on ${name}: ${ENDPOINT_LIST.filter((ep) => tagOf(ep) === name)
        .map((ep) => ep.summary)
        .join("; ")}.`,
    })),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: componentSchemas(),
    },
  };
}

export { HEADERS };
