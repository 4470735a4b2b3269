import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { type Agent, API_PREFIX, detailsFromIssues, ENDPOINTS, type EndpointId, listQuerySchema } from "../../contract/index.js";
import type { ServerContext } from "../context.js";
import { agentIdParam, parseJsonBody, sendError } from "../http.js";
import { agentJson } from "../store.js";

const route = (id: EndpointId) => ({
  method: ENDPOINTS[id].method,
  url: API_PREFIX + ENDPOINTS[id].path,
  config: { endpoint: id },
});

const notFound = "No agent with this id in your account";

/** PROFILE §2 success envelope around one agent, whose JSON text the store keeps until it changes. */
const sendAgent = (reply: FastifyReply, agent: Agent, status = 200) =>
  reply
    .code(status)
    .type("application/json; charset=utf-8")
    .send(`{"success":true,"data":${agentJson(agent)}}`);

/** PROFILE §5 Create, List, Get, Update, Delete: a fastify plugin, registered with the server's context. */
export const agentRoutes: FastifyPluginAsync<{ ctx: ServerContext }> = async (app, { ctx }) => {
  const { store } = ctx;

  app.route({
    ...route("createAgent"),
    handler: async (req, reply) => {
      const body = parseJsonBody(req, reply, ENDPOINTS.createAgent.body);
      if (!body.ok) return reply;
      const created = store.create(req.principal.account.id, body.value);
      if (!created.ok) return sendError(reply, "INVALID_REQUEST", "The request has invalid fields", created.details);
      return sendAgent(reply, created.agent, ENDPOINTS.createAgent.successStatus);
    },
  });

  app.route({
    ...route("listAgents"),
    handler: async (req, reply) => {
      const query = listQuerySchema.safeParse(req.query);
      if (!query.success)
        return sendError(reply, "INVALID_REQUEST", "Invalid query parameters", detailsFromIssues(query.error.issues));
      return { success: true, ...store.list(req.principal.account.id, query.data) };
    },
  });

  app.route({
    ...route("getAgent"),
    handler: async (req, reply) => {
      const agent = store.get(req.principal.account.id, agentIdParam(req));
      if (!agent) return sendError(reply, "AGENT_NOT_FOUND", notFound);
      return sendAgent(reply, agent);
    },
  });

  app.route({
    ...route("updateAgent"),
    handler: async (req, reply) => {
      const id = agentIdParam(req);
      // existence first: a patch of a missing agent is 404 whatever its body
      if (!store.get(req.principal.account.id, id)) return sendError(reply, "AGENT_NOT_FOUND", notFound);
      const patch = parseJsonBody(req, reply, ENDPOINTS.updateAgent.body, { mergePatch: true });
      if (!patch.ok) return reply;
      const updated = store.update(req.principal.account.id, id, patch.value);
      if (!updated) return sendError(reply, "AGENT_NOT_FOUND", notFound);
      if (!updated.ok) return sendError(reply, "INVALID_REQUEST", "The request has invalid fields", updated.details);
      return sendAgent(reply, updated.agent);
    },
  });

  app.route({
    ...route("deleteAgent"),
    handler: async (req, reply) => {
      const id = agentIdParam(req);
      if (!store.delete(req.principal.account.id, id)) return sendError(reply, "AGENT_NOT_FOUND", notFound);
      return { success: true, data: { id, deleted: true } };
    },
  });
};
