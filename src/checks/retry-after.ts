import { HEADERS, RATE_LIMITS } from "../contract/index.js";
import { defineCheck, errorOf, header } from "./define.js";

/**
 * PROFILE §7: a 429 RATE_LIMIT_EXCEEDED carries Retry-After (integer seconds ≥ 1) agreeing with
 * X-RateLimit-Reset (a 429 INSUFFICIENT_QUOTA carries none: quota-no-retry-after.ts).
 */
export default defineCheck({
  id: "retry-after",
  clause: "limits.429",
  applies: (ex) => ex.response.status === 429 && errorOf(ex)?.code === "RATE_LIMIT_EXCEEDED",
  run: (ex, ctx) => {
    const raw = header(ex, HEADERS.retryAfter);
    if (raw === undefined || !/^[0-9]+$/.test(raw.trim()) || Number(raw) < 1)
      return [{ expected: "Retry-After: integer seconds ≥ 1", received: raw === undefined ? "missing" : `Retry-After: ${raw}` }];
    const retryAfter = Number(raw);
    const reset = Number(header(ex, HEADERS.reset));
    const remaining = Number(header(ex, HEADERS.remaining));
    // a concurrency 429 (Retry-After 1) describes the buckets as any response does: Remaining 0 too,
    // when the last admitted message emptied one (the 11th in flight is refused by the cap, whichever
    // a service checks first), so on Send Message a Retry-After of 1 need not agree with Reset
    const concurrencyCap = ctx.endpoint?.id === "sendMessage" && retryAfter === RATE_LIMITS.concurrencyRetryAfterSeconds;
    if (!Number.isFinite(reset) || remaining !== 0 || concurrencyCap) return [];
    // the target's "now" lies between sending and receiving; Reset and Retry-After each round up
    const now = reset - retryAfter;
    // sending and receiving on the target's clock (its offset estimated from its Date header)
    const offset = ctx.clockOffsetSeconds ?? 0;
    const [earliest, latest] = [(ctx.sentAt ?? ctx.receivedAt) / 1000 + offset, ctx.receivedAt / 1000 + offset];
    const gap = now < earliest ? earliest - now : now > latest ? now - latest : 0;
    return gap <= 1 + ctx.clockSkewSeconds
      ? []
      : [
          {
            expected: `Retry-After (${retryAfter} s) to agree with X-RateLimit-Reset (${reset})`,
            received: `${gap.toFixed(1)} s apart`,
          },
        ];
  },
});
