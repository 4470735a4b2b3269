import type { Clock } from "../clock.js";
import { errorCodeOf } from "../exchange.js";
import { decideRetry, type RetryPolicy } from "../retry.js";
import type { Layer } from "./dispatch.js";

/**
 * Retries a 429 or 503 under the request's policy (or `fallback`), numbering the attempts; the
 * policy decides how long to wait, never less than the answer's Retry-After.
 */
export function retrying(fallback: RetryPolicy | false, clock: Clock, random: () => number = Math.random): Layer {
  return (next) => async (request) => {
    const policy = request.retry ?? fallback;
    const firstAt = clock.now();
    for (let attempt = request.attempt; ; attempt++) {
      const outcome = await next({ ...request, attempt });
      if (!policy) return outcome;
      const { response, retryAfterSeconds } = outcome.exchange;
      const answer = { status: response.status, code: errorCodeOf(response.json), retryAfterSeconds };
      const decision = decideRetry(policy, attempt, answer, clock.now() - firstAt, random);
      if (!decision.retry) return outcome;
      await clock.sleep(decision.delayMs);
    }
  };
}
