import type { FastifyInstance } from "fastify";
import { HEADERS, REQUEST_ID_PATTERN } from "../../contract/index.js";
import { newId } from "../store.js";

/** PROFILE §1: every response carries X-Request-Id; a well-formed client id is echoed. */
export function installRequestId(app: FastifyInstance): void {
  app.addHook("onRequest", async (req, reply) => {
    const sent = req.headers[HEADERS.requestId];
    const id = typeof sent === "string" && REQUEST_ID_PATTERN.test(sent) ? sent : newId("req");
    reply.header(HEADERS.requestId, id);
  });
}
