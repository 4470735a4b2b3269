import { randomBytes } from "node:crypto";
import { createAgentBodySchema, HEADERS, isRecord } from "../../contract/index.js";
import { agentIdParam, parseJsonBody, sendError } from "../http.js";
import { endpointOf, type FaultRecord, fault, parseObj, replaceError, rewriteJson, rewriteStream, wrap } from "./tools.js";

/** Injected faults of PROFILE §8 status, §9 routing, §10 reference-compatible. */
export const ROUTING_FAULTS: FaultRecord = {
  /* §8 status */
  "deactivate-wipes-config": fault("status.lifecycle", "setting status inactive resets the configuration", (_app, ctx) => {
    wrap(
      ctx.store,
      "update",
      (orig) => (accountId, id, patch) =>
        patch.status === "inactive"
          ? orig(accountId, id, { ...patch, bio: null, personality: null, knowledge: null, goals: null, plugins: null })
          : orig(accountId, id, patch),
    );
  }),

  /* §9 routing */
  "unknown-path-before-auth": fault("routing.unknown", "an unknown path answers 404 before authentication", (app) => {
    rewriteJson(app, (body, req, reply) => {
      const config = req.routeOptions.config;
      if (reply.statusCode === 401 && !config?.endpoint && !config?.public) {
        reply.removeHeader(HEADERS.wwwAuthenticate);
        replaceError(reply, body, 404, "NOT_FOUND");
      }
    });
  }),
  "no-allow-header": fault("routing.unknown", "405 answers carry no Allow header", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      reply.removeHeader("allow");
      return payload;
    });
  }),
  "unknown-method-400": fault(
    "routing.unknown",
    "a method no route has (QUERY) answers 400 INVALID_REQUEST, as fastify's error handler did",
    (app) => {
      rewriteJson(app, (body, req, reply) => {
        if (!["GET", "HEAD", "POST", "PATCH", "DELETE"].includes(req.method) && [404, 405].includes(reply.statusCode)) {
          reply.removeHeader("allow");
          replaceError(reply, body, 400, "INVALID_REQUEST");
        }
      });
    },
  ),
  "empty-id-500": fault("routing.empty-id", "/agents/ with an empty id crashes (500)", (app) => {
    app.addHook("preHandler", async (req) => {
      if (endpointOf(req) && isRecord(req.params) && "agentId" in req.params && agentIdParam(req) === "")
        throw new Error("empty agent id");
    });
  }),
  "trailing-slash-bypass": fault("routing.variants", "POST /agents/ creates agents outside the Create bucket", (app, ctx) => {
    app.post("/v1/agents/", { config: {} }, async (req, reply) => {
      const body = parseJsonBody(req, reply, createAgentBodySchema);
      if (!body.ok) return reply;
      const created = ctx.store.create(req.principal.account.id, body.value);
      if (!created.ok) return sendError(reply, "INVALID_REQUEST", "The request has invalid fields", created.details);
      return reply.code(201).send({ success: true, data: created.agent });
    });
  }),

  /* §10 reference-compatible */
  "reply-not-deterministic": fault("reference.deterministic", "replies carry a random suffix", (app) => {
    rewriteJson(app, (body, req) => {
      if (endpointOf(req) === "sendMessage" && body.success === true && isRecord(body.data))
        body.data.text = `${body.data.text} (${randomBytes(3).toString("hex")})`;
    });
  }),
  "mock-slow-single-delta": fault("reference.mock-models", "a streamed reply comes as one delta", (_app, ctx) => {
    rewriteStream(ctx, () => {
      let joined = "";
      return (frame) => {
        const prefix = "event: delta\ndata: ";
        if (frame.startsWith(prefix)) {
          joined += String(parseObj(frame.slice(prefix.length)).text);
          return null;
        }
        return frame.startsWith("event: done") ? `${prefix}${JSON.stringify({ text: joined })}\n\n${frame}` : frame;
      };
    });
  }),
};
