import { HEADERS, isRecord } from "../../contract/index.js";
import { agentIdParam } from "../http.js";
import { newId } from "../store.js";
import { accountOf, endpointOf, errorCode, type FaultRecord, fault, replaceError, rewriteJson, wrap } from "./tools.js";

/** Injected faults of PROFILE §1 transport, §2 envelopes, §3 status ↔ code. */
export const TRANSPORT_FAULTS: FaultRecord = {
  /* §1 transport */
  "drop-request-id": fault("transport.request-id", "JSON answers carry no X-Request-Id", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      reply.removeHeader(HEADERS.requestId);
      return payload;
    });
  }),
  "request-id-not-echoed": fault("transport.request-id-echo", "a well-formed client X-Request-Id is replaced", (app) => {
    app.addHook("onSend", async (req, reply, payload) => {
      if (req.headers[HEADERS.requestId]) reply.header(HEADERS.requestId, newId("req"));
      return payload;
    });
  }),
  "json-as-text-plain": fault("transport.json-content-type", "JSON answers are labelled text/plain", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      if (String(reply.getHeader("content-type") ?? "").startsWith("application/json"))
        reply.header("content-type", "text/plain; charset=utf-8");
      return payload;
    });
  }),

  /* §2 envelopes */
  "total-pages-floor": fault("envelope.list", "totalPages is floor(total / limit)", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const r = orig(accountId, q);
      const totalPages = Math.floor(r.pagination.total / q.limit);
      return { ...r, pagination: { ...r.pagination, totalPages, hasMore: q.page < totalPages } };
    });
  }),
  "has-more-always-true": fault("envelope.list", "hasMore is true on every page", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const r = orig(accountId, q);
      return { ...r, pagination: { ...r.pagination, hasMore: true } };
    });
  }),
  "error-as-string": fault("envelope.error", "the error envelope's error is its message as a plain string", (app) => {
    // as some frameworks answer by default: {"success": false, "error": "Agent not found"}
    rewriteJson(app, (body) => {
      if (isRecord(body.error) && typeof body.error.message === "string") body.error = body.error.message;
    });
  }),
  "error-details-object": fault("envelope.error", "error details are an object keyed by field, not an array", (app) => {
    rewriteJson(app, (body) => {
      if (isRecord(body.error) && Array.isArray(body.error.details))
        body.error.details = Object.fromEntries(body.error.details.map((d) => (isRecord(d) ? [d.field, d.issue] : [d, d])));
    });
  }),

  /* §3 status ↔ code */
  "validation-422": fault("status.pairing", "INVALID_REQUEST is answered with status 422", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      if (reply.statusCode === 400) reply.code(422);
      return payload;
    });
  }),
  "malformed-query-500": fault("status.no-5xx-on-input", "a non-numeric page or limit crashes the list (500)", (app) => {
    app.addHook("preHandler", async (req) => {
      if (endpointOf(req) !== "listAgents") return;
      const q = isRecord(req.query) ? req.query : {};
      for (const name of ["page", "limit"]) {
        const value = q[name];
        if (typeof value === "string" && Number.isNaN(Number.parseInt(value, 10))) throw new TypeError(`cannot read ${name}`);
      }
    });
  }),
  "lookup-before-rate-limit": fault(
    "status.precedence",
    "an unknown agent answers 404 even when a bucket is empty",
    (app, ctx) => {
      rewriteJson(app, (body, req, reply) => {
        const id = agentIdParam(req);
        const account = accountOf(req);
        if (
          reply.statusCode === 429 &&
          errorCode(body) === "RATE_LIMIT_EXCEEDED" &&
          id &&
          account &&
          !ctx.store.get(account, id)
        ) {
          reply.removeHeader(HEADERS.retryAfter);
          replaceError(reply, body, 404, "AGENT_NOT_FOUND");
        }
      });
    },
  ),
};
