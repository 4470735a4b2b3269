import { ENDPOINTS, matchEndpoint } from "../../contract/index.js";
import { errorCodeOf } from "../exchange.js";
import { endpointBucket, type PaceAnswer, type RateBudget } from "../rate-budget.js";
import { judgeRefusal } from "../refusal.js";
import type { Layer, OutgoingRequest } from "./dispatch.js";

export interface PacingIdentity {
  /** identifies the key in the budget; never the key */
  key: string;
  /** an account label: the account's keys share its tier and per-agent buckets */
  account?: string | undefined;
  tierLimit?: number | undefined;
}

/**
 * Waits for the shared rate budget before sending and tells it what the answer said. A request
 * without Authorization counts against no limit (PROFILE §6) and is not paced. The endpoint is the
 * request's own, else the one its path resembles (lenient: better to count one too many).
 */
export function pacing(budget: RateBudget, identity: PacingIdentity): Layer {
  return (next) => async (request) => {
    if (request.headers.authorization === undefined) return next(request);
    const ticket = await budget.acquire({ ...identity, bucket: bucketOf(request) }, { wait: request.pace !== false });
    let settled = false;
    const settle = (answer: PaceAnswer | undefined) => {
      if (settled) return;
      settled = true;
      budget.settle(ticket, answer);
    };
    try {
      const outcome = await next({
        ...request,
        // a stream was counted when it opened: the budget need not wait for its end
        onHead: (head) => {
          request.onHead?.(head);
          if (request.stream) settle(head);
        },
      });
      const { response, rate, receivedAt } = outcome.exchange;
      const answer = { status: response.status, code: errorCodeOf(response.json), rate, receivedAt };
      settle(answer);
      // a 429 the pacing did not expect: a §7 breach the service's answers prove, or a wait (src/client/refusal.ts)
      if (!ticket.paced || answer.status !== 429 || answer.code !== "RATE_LIMIT_EXCEEDED") return outcome;
      const decision = judgeRefusal(budget.refusal(ticket, answer));
      if (decision.kind === "wait") {
        const waitMs = decision.waitMs ?? budget.unannouncedWaitMs;
        budget.refusalWait(ticket, answer, decision.why, waitMs, decision.refusedWithRoomIn);
        return { ...outcome, refusal: { ...decision, waitMs } };
      }
      return { ...outcome, refusal: decision };
    } catch (error) {
      settle(undefined); // counted or not, unknown
      throw error;
    }
  };
}

function bucketOf(request: OutgoingRequest) {
  if (request.endpoint !== undefined) return endpointBucket(ENDPOINTS[request.endpoint], request.agentId);
  if (request.relativePath === undefined) return undefined;
  const matched = matchEndpoint(request.method, request.relativePath, { lenient: true });
  return matched && endpointBucket(matched.spec, matched.agentId);
}
