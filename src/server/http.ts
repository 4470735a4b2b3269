import type { FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from "fastify";
import type { z } from "zod";
import {
  API_PREFIX,
  detailsFromIssues,
  ENDPOINTS,
  type EndpointId,
  type ErrorCode,
  type ErrorDetail,
  JSON_CONTENT_TYPE,
  MERGE_PATCH_CONTENT_TYPE,
  STATUS_OF_CODE,
} from "../contract/index.js";

/** The route of one endpoint of the contract's table, tagged with its id for the guard (permission, buckets). */
export const route = (id: EndpointId, handler: RouteHandlerMethod): RouteOptions => ({
  method: ENDPOINTS[id].method,
  url: API_PREFIX + ENDPOINTS[id].path,
  config: { endpoint: id },
  handler,
});

/** PROFILE §2 error envelope with the §3 status of its code. */
export function sendError(reply: FastifyReply, code: ErrorCode, message: string, details?: ErrorDetail[]) {
  return reply
    .code(STATUS_OF_CODE[code])
    .type("application/json; charset=utf-8")
    .send({ success: false, error: { code, message, ...(details?.length ? { details } : {}) } });
}

export const invalidFields = (reply: FastifyReply, details: ErrorDetail[]) =>
  sendError(reply, "INVALID_REQUEST", "The request has invalid fields", details);

export const agentNotFound = (reply: FastifyReply) =>
  sendError(reply, "AGENT_NOT_FOUND", "No agent with this id in your account");

type Parsed<T> = { ok: true; value: T } | { ok: false };

/**
 * PROFILE §7: a body must come as application/json (PATCH also merge-patch+json), parse as
 * JSON, be an object, and then satisfy the endpoint's schema. Answers the error itself.
 */
export function parseJsonBody<S extends z.ZodType>(
  req: FastifyRequest,
  reply: FastifyReply,
  schema: S,
  opts: { mergePatch?: boolean } = {},
): Parsed<z.output<S>> {
  const mediaType = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  const accepted = opts.mergePatch ? [JSON_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE] : [JSON_CONTENT_TYPE];
  if (!mediaType || !accepted.includes(mediaType)) {
    sendError(reply, "UNSUPPORTED_MEDIA_TYPE", `Content-Type must be ${accepted.join(" or ")}`, [
      { field: "Content-Type", issue: `must be ${accepted.join(" or ")}` },
    ]);
    return { ok: false };
  }
  const raw = Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "";
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    sendError(reply, "INVALID_REQUEST", "The body is not valid JSON", [{ field: "(body)", issue: "malformed JSON" }]);
    return { ok: false };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    sendError(reply, "INVALID_REQUEST", "The body must be a JSON object", [{ field: "(body)", issue: "must be a JSON object" }]);
    return { ok: false };
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    invalidFields(reply, detailsFromIssues(result.error.issues));
    return { ok: false };
  }
  return { ok: true, value: result.data };
}

/** `:agentId` as routed (already percent-decoded by the router). */
export function agentIdParam(req: FastifyRequest): string {
  const params = req.params;
  return typeof params === "object" && params !== null && "agentId" in params && typeof params.agentId === "string"
    ? params.agentId
    : "";
}
