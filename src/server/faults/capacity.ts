import type { RateBucket } from "../ratelimit.js";
import { type FaultRecord, fault } from "./tools.js";

/**
 * Defects only many tenants at once reveal: each stays invisible while few accounts are active
 * (every functional, property and load check uses a handful) and shows when dozens are. The
 * capacity scenario (`load --scenario capacity --profile noisy-neighbour`) catches each.
 */

/**
 * Accounts with a request in the last window, from which the many-tenant defects switch on:
 * more than a verify run of the reference ever serves (its accounts per worker times its
 * workers; the meta suite checks), so every other suite passes against each.
 */
export const MANY_TENANTS = 45;

export const CAPACITY_FAULTS: FaultRecord = {
  "refusals-charge-neighbour-tier": fault(
    "limits.tier",
    `with ${MANY_TENANTS}+ accounts active, a refusal is counted in the tier of the account served before it`,
    (_app, ctx) => {
      const limiter = ctx.limiter;
      const admit = limiter.admit.bind(limiter);
      const windowMs = ctx.options.windowSeconds * 1000;
      /** each account's tier bucket → when it last had a request */
      const active = new Map<string, number>();
      let lastServed: RateBucket | undefined;
      limiter.admit = (buckets) => {
        const now = ctx.clock.now();
        const tier = buckets.find((b) => b.scope === "tier");
        if (tier) active.set(tier.key, now);
        const answer = admit(buckets);
        if (answer.admitted) {
          lastServed = tier;
          return answer;
        }
        for (const [key, at] of active) if (now - at >= windowMs) active.delete(key);
        // a shared "current tenant" slot: the refusal is charged to whoever was served last
        if (active.size >= MANY_TENANTS && lastServed && lastServed.key !== tier?.key) admit([lastServed]);
        return answer;
      };
    },
  ),
};
