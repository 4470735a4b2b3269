import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { HEADERS, REQUEST_ID_PATTERN } from "../../contract/index.js";
import type { KeyRing } from "../keyring.js";

/**
 * PROFILE §1: every response carries X-Request-Id; a well-formed client id is echoed —
 * unless it is an API key, since §6 says keys never appear in any response (a key is also
 * well-formed, so the two clauses meet here; §6 wins).
 *
 * The id is fastify's own request id (`req.id`, made by the generator set here, which fastify
 * calls for every request anyway); `stampRequestId` writes it on the answer, from the first
 * hook that runs: the guard's (one hook fewer per request than a hook of its own: `npm run bench`).
 */
export function installRequestId(app: FastifyInstance, keyRing: KeyRing): void {
  // unique per process start plus a counter: as unique as random ids, without a syscall per request
  const prefix = `req_${randomBytes(6).toString("base64url")}`;
  let seq = 0;
  app.setGenReqId((req) => {
    const sent = req.headers[HEADERS.requestId];
    const echo = typeof sent === "string" && REQUEST_ID_PATTERN.test(sent) && !keyRing.lookup(sent);
    // Stryker disable next-line UpdateOperator: ids counting down are as unique as ids counting up
    return echo ? sent : `${prefix}${(++seq).toString(36)}`;
  });
}

export const stampRequestId = (req: FastifyRequest, reply: FastifyReply): void => {
  reply.header(HEADERS.requestId, req.id);
};
