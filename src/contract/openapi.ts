import { z } from "zod";
import { ENDPOINT_LIST, HEADERS } from "./endpoints.js";
import { type ErrorStatus, errorEnvelopeSchema, STATUS_CODES } from "./errors.js";
import { LIST_LIMITS } from "./limits.js";
import { AGENT_STATUSES, SORT_FIELDS, SORT_ORDERS, SSE_EVENTS } from "./schemas.js";

type Json = { [key: string]: unknown };

/** JSON Schema (2020-12) of one contract schema, as OpenAPI 3.1 embeds it. */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output" = "output"): Json {
  const { $schema: _ignored, ...rest }: Json = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

const rateHeaders: Json = {
  "X-RateLimit-Limit": { schema: { type: "integer" }, description: "size of the tightest bucket" },
  "X-RateLimit-Remaining": { schema: { type: "integer", minimum: 0 }, description: "requests left in it" },
  "X-RateLimit-Reset": { schema: { type: "integer" }, description: "Unix seconds when it refills" },
  "X-Request-Id": { schema: { type: "string" } },
};

const listParameters = [
  { name: "page", schema: { type: "integer", minimum: LIST_LIMITS.page.min, default: LIST_LIMITS.page.default } },
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

/** The OpenAPI 3.1 document, emitted from the contract (PROFILE.md is its source). */
export function openApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const ep of ENDPOINT_LIST) {
    const oaPath = ep.path.replace(":agentId", "{agentId}");
    const responses: Json = {
      [ep.successStatus]: {
        description: ep.summary,
        headers: rateHeaders,
        content: {
          "application/json": { schema: jsonSchemaOf(ep.response) },
          ...(ep.id === "sendMessage"
            ? { "text/event-stream": { schema: { type: "string", description: sseDescription() } } }
            : {}),
        },
      },
    };
    const statuses: readonly ErrorStatus[] = [401, ...ep.errorStatuses];
    for (const status of statuses) {
      responses[status] = {
        description: `one of ${STATUS_CODES[status].join(", ")}`,
        headers: status === 429 ? { ...rateHeaders, [HEADERS.retryAfter]: { schema: { type: "integer" } } } : rateHeaders,
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
      };
    }
    const operation: Json = {
      operationId: ep.id,
      summary: ep.summary,
      "x-permission": ep.permission,
      "x-rate-bucket": ep.bucket,
      parameters: [
        ...(ep.path.includes(":agentId") ? [{ name: "agentId", in: "path", required: true, schema: { type: "string" } }] : []),
        ...(ep.query ? listParameters : []),
      ],
      ...(ep.body
        ? { requestBody: { required: true, content: { "application/json": { schema: jsonSchemaOf(ep.body, "input") } } } }
        : {}),
      responses,
    };
    paths[oaPath] = { ...(paths[oaPath] ?? {}), [ep.method.toLowerCase()]: operation };
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
      schemas: { ErrorEnvelope: jsonSchemaOf(errorEnvelopeSchema) },
    },
  };
}

function sseDescription(): string {
  return `Server-sent events: ${Object.keys(SSE_EVENTS).join(", ")}; comment lines are heartbeats.`;
}
