import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ENDPOINTS, HEADERS, RATE_LIMITS } from "../../contract/index.js";
import type { ServerContext } from "../context.js";
import { agentIdParam, sendError } from "../http.js";
import { agentSlotKey, type BucketState, rateBucketsOf } from "../ratelimit.js";
import { stampRequestId } from "./request-id.js";

const BEARER = /^bearer[ ]+(\S+)\s*$/i;

/**
 * PROFILE §3 precedence, in order: 401 (counted nowhere, §6), then 429 RATE_LIMIT_EXCEEDED
 * (counted nowhere, §7), then the request is counted in every bucket it belongs to, then 403.
 * §7: Remaining is what is left *now* and Reset is after now — when the answer leaves, which
 * for a slow message is seconds after admission: an admitted request's buckets are described
 * then, once (a stream, which skips onSend, describes them when it opens).
 */
export function installGuard(app: FastifyInstance, ctx: ServerContext): void {
  // declared up front, so every request object has the same shape from its start: a property
  // added per request would move each one through V8's map transitions, a cost on every request
  app.decorateRequest("principal");
  app.decorateRequest("rateBuckets");
  // callback hooks: no promise per request; a hook that answers does not call done (fastify's rule)
  app.addHook("onRequest", (req, reply, done) => {
    stampRequestId(req, reply); // PROFILE §1: every answer, the guard's refusals included
    if (admit(ctx, req, reply)) done();
  });
  app.addHook("onSend", (req, reply, payload, done) => {
    describeRateBuckets(ctx, req, reply);
    done(null, payload);
  });
}

/** true when the request may go on; otherwise the answer is already sent. */
function admit(ctx: ServerContext, req: FastifyRequest, reply: FastifyReply): boolean {
  const config = req.routeOptions.config;
  // Stryker disable next-line OptionalChaining: fastify always gives a route (and the 404 handler) a config object
  if (config?.public) return true;

  // Stryker disable next-line StringLiteral: no Authorization header: any non-Bearer text is refused the same way
  const match = BEARER.exec(req.headers.authorization ?? "");
  const principal = match?.[1] ? ctx.keyRing.lookup(match[1]) : undefined;
  if (!principal) {
    reply.header(HEADERS.wwwAuthenticate, 'Bearer realm="agents"');
    sendError(
      reply,
      "UNAUTHORIZED",
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      "A valid API key is required (Authorization: Bearer <key>)",
    );
    // Stryker disable next-line BooleanLiteral: fastify ends the request once a hook has answered: calling done() after the 401/403/429 runs no handler (the checks that the refused request had no effect pass)
    return false;
  }
  req.principal = principal;

  // Stryker disable next-line OptionalChaining: fastify always gives a route (and the 404 handler) a config object
  const endpoint = config?.endpoint ? ENDPOINTS[config.endpoint] : undefined;
  const agentId = agentIdParam(req);
  const buckets = ctx.seam.rateBuckets(rateBucketsOf(principal, endpoint, agentId), principal, req);
  const agentKey = endpoint?.id === "sendMessage" ? agentSlotKey(principal, agentId) : undefined;

  if (agentKey !== undefined && !ctx.gate.available(agentKey)) {
    return refuseRateLimited(
      reply,
      ctx.limiter.tightest(buckets),
      RATE_LIMITS.concurrencyRetryAfterSeconds,
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      "Too many messages in flight for this agent",
    );
  }
  const admission = ctx.limiter.admit(buckets);
  // an admitted request's buckets are described when its answer leaves (describeRateBuckets)
  if (admission.admitted) req.rateBuckets = buckets;
  else
    return refuseRateLimited(
      reply,
      admission.headers,
      admission.retryAfterSeconds,
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      "Rate limit exceeded; retry after the reset",
    );
  // PROFILE §7: a slot frees when the exchange ends: reply sent, stream closed or client gone
  const release = agentKey !== undefined ? ctx.gate.tryAcquire(agentKey) : undefined;
  if (release) reply.raw.once("close", release);

  if (endpoint && !principal.permissions.has(endpoint.permission)) {
    sendError(
      reply,
      "FORBIDDEN",
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      `This key lacks the ${endpoint.permission} permission`,
    );
    // Stryker disable next-line BooleanLiteral: fastify ends the request once a hook has answered: calling done() after the 401/403/429 runs no handler (the checks that the refused request had no effect pass)
    return false;
  }
  return true;
}

export function describeRateBuckets(ctx: ServerContext, req: FastifyRequest, reply: FastifyReply): void {
  if (req.rateBuckets) setRateHeaders(reply, ctx.limiter.tightest(req.rateBuckets));
}

function setRateHeaders(reply: FastifyReply, state: BucketState): void {
  reply.header(HEADERS.limit, String(state.size));
  reply.header(HEADERS.remaining, String(Math.max(0, state.remaining)));
  reply.header(HEADERS.reset, String(Math.ceil(state.resetAt / 1000))); // Unix seconds, rounded up
}

/** PROFILE §7: a 429 RATE_LIMIT_EXCEEDED with the bucket it met and Retry-After; the hook has answered. */
function refuseRateLimited(reply: FastifyReply, bucket: BucketState, retryAfterSeconds: number, message: string): false {
  setRateHeaders(reply, bucket);
  reply.header(HEADERS.retryAfter, String(retryAfterSeconds));
  sendError(reply, "RATE_LIMIT_EXCEEDED", message);
  // Stryker disable next-line BooleanLiteral: fastify ends the request once a hook has answered: calling done() after the 401/403/429 runs no handler (the checks that the refused request had no effect pass)
  return false;
}
