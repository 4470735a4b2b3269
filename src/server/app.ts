import Fastify, { type FastifyInstance, LogController } from "fastify";
import { BODY_LIMIT_BYTES, HEALTH_PATH } from "../contract/index.js";
import { type BuildOptions, ServerContext } from "./context.js";
import { installFaults } from "./faults/index.js";
import { installErrors, literalIfUndecodable } from "./plugins/errors.js";
import { installGuard } from "./plugins/guard.js";
import { installRequestId } from "./plugins/request-id.js";
import { agentRoutes } from "./routes/agents.js";
import { messageRoutes } from "./routes/messages.js";
import { holdTickShape } from "./tick-shape.js";

export type { BuildOptions } from "./context.js";

/**
 * The reference server of PROFILE.md. fastify over node:http: its router, body limits,
 * hooks and inject() keep the server about 1,000 lines at close to node:http speed.
 */
export function buildServer(options: BuildOptions): { app: FastifyInstance; ctx: ServerContext } {
  holdTickShape(); // a random 20% slowdown of every request, otherwise (tick-shape.ts)
  const ctx = new ServerContext(options);
  const app = Fastify({
    logger: false, // PROFILE §6: keys never reach a log line; the server logs nothing per request
    // nor builds the log records it would drop (an object and a clock read each)
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // PROFILE §3, §5: an over-long id is a malformed id (404 from the route), never the router's bare 414
    routerOptions: {
      caseSensitive: true,
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      maxParamLength: Number.MAX_SAFE_INTEGER,
    },
    // Stryker disable next-line StringLiteral: node's http server always sets req.url: the default is unreachable
    rewriteUrl: (req) => literalIfUndecodable(req.url ?? "/"),
    return503OnClosing: false,
  });

  // The whole server's parts go straight onto the root instance, not through register(): they
  // must reach every route and the 404 handler (a 404 is answered after auth too), which
  // as plugins would take fastify-plugin to escape encapsulation; and register() loads them
  // at ready(), after the faults, which install synchronously (tests seed a store a fault has
  // already wrapped) and whose hooks must run after these. Hook order is install order.
  installRequestId(app, ctx.keyRing);
  // a skewed clock shows in the HTTP Date header too (node writes the machine's otherwise);
  // before the guard, whose refusals end the onRequest hooks
  if (options.clockSkewSeconds)
    app.addHook("onRequest", (_req, reply, done) => {
      reply.header("date", new Date(ctx.clock.now()).toUTCString());
      done();
    });
  installErrors(app);
  installGuard(app, ctx);
  // Stryker disable next-line ArrayDeclaration: the harness's server is always started with a fault list (empty): the default serves other callers
  installFaults(app, ctx, options.faults ?? []);
  app.get(HEALTH_PATH, { config: { public: true } }, async () => ({ status: "ok" }));
  // each route file is an encapsulated plugin that decorates nothing and hooks nothing outside itself
  app.register(agentRoutes, { ctx });
  app.register(messageRoutes, { ctx });
  return { app, ctx };
}
