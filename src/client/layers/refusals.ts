import type { Clock } from "../clock.js";
import { RateLimitBreach, RefusedAgain } from "../refusal.js";
import type { Layer } from "./dispatch.js";

/** How many times one request goes again after a 429 the pacing did not expect, before the harness gives up judging it. */
export const REFUSAL_RETRIES = 3;

/**
 * Acts on the pacing's word about a 429 it did not expect (src/client/refusal.ts): a breach the
 * service's own answers prove is thrown as a finding of the bucket's clause, never handed to the
 * check as an answer; otherwise the request waits for exactly the Retry-After and goes again, so
 * the check judges the answer the service gives when the bucket has room. Sits outside recording:
 * every attempt is recorded and judged by the response checks.
 */
export function refusals(clock: Clock): Layer {
  return (next) => async (request) => {
    for (let again = 0; ; again++) {
      const outcome = await next({ ...request, attempt: request.attempt + again });
      const refusal = outcome.refusal;
      if (refusal === undefined) return outcome;
      const { method, origin, path } = request;
      if (refusal.kind === "breach") throw new RateLimitBreach(`${method} ${origin}${path}: ${refusal.message}`, refusal.clause);
      if (again >= REFUSAL_RETRIES)
        throw new RefusedAgain(
          `${method} ${origin}${path} was refused 429 RATE_LIMIT_EXCEEDED ${again + 1} times although the pacing expected room, each time after its Retry-After; the last: ${refusal.why} (${refusal.bucket}). Something other than this run spends that bucket: the check cannot judge`,
        );
      const waitMs = (refusal.waitMs ?? 0) - (clock.now() - outcome.exchange.receivedAt);
      if (waitMs > 0) await clock.sleep(waitMs);
    }
  };
}
