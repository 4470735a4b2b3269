import type { FastifyRequest } from "fastify";
import type { Principal } from "./keyring.js";
import type { RateBucket } from "./ratelimit.js";

/**
 * The named points where an injected fault (faults/) may change the server. The server's own
 * code calls them and their defaults change nothing; a fault installs into this object instead
 * of reaching into private state, so the guard, the store and the routes can change freely.
 * Faults may also wrap the public methods of the store, the key ring, the limiter and the gate.
 */
export interface FaultSeam {
  /** the rate buckets one authenticated request is counted in (PROFILE §7), as the guard chose them */
  rateBuckets(buckets: readonly RateBucket[], principal: Principal, req: FastifyRequest): readonly RateBucket[];
  /** the length of one message exchange's time budget (PROFILE §5), in milliseconds */
  messageBudgetMs(configuredMs: number, req: FastifyRequest): number;
  /** the rewriter of one event stream's frames (PROFILE §5): the frame to write, or null to drop it */
  streamFrames(): (frame: string) => string | null;
}

export const cleanSeam = (): FaultSeam => ({
  rateBuckets: (buckets) => buckets,
  messageBudgetMs: (ms) => ms,
  streamFrames: () => (frame) => frame,
});
