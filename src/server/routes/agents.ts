import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { type Agent, detailsFromIssues, ENDPOINTS, listQuerySchema } from "../../contract/index.js";
import type { ServerContext } from "../context.js";
import { agentIdParam, agentNotFound, invalidFields, parseJsonBody, route, sendError } from "../http.js";
import { agentEnvelopeJson } from "../store.js";

/** PROFILE §2 success envelope around one agent, whose JSON text the store keeps until it changes. */
const sendAgent = (reply: FastifyReply, agent: Agent, status = 200) =>
  reply.code(status).type("application/json; charset=utf-8").send(agentEnvelopeJson(agent));

/** PROFILE §5 Create, List, Get, Update, Delete: a fastify plugin, registered with the server's context. */
export const agentRoutes: FastifyPluginAsync<{ ctx: ServerContext }> = async (app, { ctx: { store } }) => {
  app.route(
    route("createAgent", async (req, reply) => {
      const body = parseJsonBody(req, reply, ENDPOINTS.createAgent.body);
      if (!body.ok) return reply;
      const created = store.create(req.principal.account.id, body.value);
      if (!created.ok) return invalidFields(reply, created.details);
      return sendAgent(reply, created.agent, ENDPOINTS.createAgent.successStatus);
    }),
  );

  app.route(
    route("listAgents", async (req, reply) => {
      const query = listQuerySchema.safeParse(req.query);
      if (!query.success)
        return sendError(reply, "INVALID_REQUEST", "Invalid query parameters", detailsFromIssues(query.error.issues));
      return { success: true, ...store.list(req.principal.account.id, query.data) };
    }),
  );

  app.route(
    route("getAgent", async (req, reply) => {
      const agent = store.get(req.principal.account.id, agentIdParam(req));
      return agent ? sendAgent(reply, agent) : agentNotFound(reply);
    }),
  );

  app.route(
    route("updateAgent", async (req, reply) => {
      const id = agentIdParam(req);
      // existence first: a patch of a missing agent is 404 whatever its body
      if (!store.get(req.principal.account.id, id)) return agentNotFound(reply);
      const patch = parseJsonBody(req, reply, ENDPOINTS.updateAgent.body, { mergePatch: true });
      if (!patch.ok) return reply;
      const updated = store.update(req.principal.account.id, id, patch.value);
      if (!updated) return agentNotFound(reply);
      return updated.ok ? sendAgent(reply, updated.agent) : invalidFields(reply, updated.details);
    }),
  );

  app.route(
    route("deleteAgent", async (req, reply) => {
      const id = agentIdParam(req);
      if (!store.delete(req.principal.account.id, id)) return agentNotFound(reply);
      return { success: true, data: { id, deleted: true } };
    }),
  );
};
