import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { type Agent, detailsFromIssues, ENDPOINTS, listQuerySchema } from "../../contract/index.js";
import type { ServerContext } from "../context.js";
import { agentIdParam, agentNotFound, invalidFields, parseJsonBody, route, sendError } from "../http.js";
import { agentEnvelopeJson } from "../store.js";

/** PROFILE §2 success envelope around one agent, whose JSON text the store keeps until it changes. */
const sendAgent = (reply: FastifyReply, agent: Agent, status = 200): void => {
  reply.code(status).type("application/json; charset=utf-8").send(agentEnvelopeJson(agent));
};

/**
 * PROFILE §5 Create, List, Get, Update, Delete: a fastify plugin, registered with the server's context.
 * The handlers are synchronous (nothing here waits): each either sends and returns nothing, or
 * returns the payload for fastify to send. An async handler costs a promise per request, and one
 * that returns `reply` a second promise job besides, since a reply is a thenable (`npm run bench`).
 */
export const agentRoutes: FastifyPluginAsync<{ ctx: ServerContext }> = async (app, { ctx: { store } }) => {
  app.route(
    route("createAgent", (req, reply) => {
      const body = parseJsonBody(req, reply, ENDPOINTS.createAgent.body);
      if (!body.ok) return;
      const created = store.create(req.principal.account.id, body.value);
      if (created.ok) sendAgent(reply, created.agent, ENDPOINTS.createAgent.successStatus);
      else invalidFields(reply, created.details);
    }),
  );

  app.route(
    route("listAgents", (req, reply) => {
      const query = listQuerySchema.safeParse(req.query);
      if (query.success) return { success: true, ...store.list(req.principal.account.id, query.data) };
      sendError(
        reply,
        "INVALID_REQUEST",
        // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
        "Invalid query parameters",
        detailsFromIssues(query.error.issues),
      );
    }),
  );

  app.route(
    route("getAgent", (req, reply) => {
      const agent = store.get(req.principal.account.id, agentIdParam(req));
      if (agent) sendAgent(reply, agent);
      else agentNotFound(reply);
    }),
  );

  app.route(
    route("updateAgent", (req, reply) => {
      const id = agentIdParam(req);
      // existence first: a patch of a missing agent is 404 whatever its body
      if (!store.get(req.principal.account.id, id)) {
        agentNotFound(reply);
        return;
      }
      const patch = parseJsonBody(req, reply, ENDPOINTS.updateAgent.body, { mergePatch: true });
      if (!patch.ok) return;
      const updated = store.update(req.principal.account.id, id, patch.value);
      if (!updated) agentNotFound(reply);
      else if (updated.ok) sendAgent(reply, updated.agent);
      else invalidFields(reply, updated.details);
    }),
  );

  app.route(
    route("deleteAgent", (req, reply) => {
      const id = agentIdParam(req);
      if (store.delete(req.principal.account.id, id)) return { success: true, data: { id, deleted: true } };
      agentNotFound(reply);
    }),
  );
};
