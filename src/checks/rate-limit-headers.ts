import { HEADERS, RATE_LIMITS } from "../contract/index.js";
import { defineCheck, errorOf, header } from "./define.js";

const INTEGER = /^[0-9]+$/;

/**
 * PROFILE §7: every authenticated response (429 included) carries X-RateLimit-Limit,
 * -Remaining (0 ≤ Remaining ≤ Limit) and -Reset (after now, at most W + 1 s ahead). "Now" is
 * the moment the request was counted or the moment its answer leaves, either reading is
 * conformant: so Reset need only be after the request was sent and within W + 1 s of the answer.
 */
export default defineCheck({
  id: "rate-limit-headers",
  clause: "limits.headers",
  applies: (ex, ctx) => ctx.authenticated && ex.response.status !== 401,
  run: (ex, ctx) => {
    const problems: { expected: string; received: string }[] = [];
    const values: Record<string, number> = {};
    for (const name of [HEADERS.limit, HEADERS.remaining, HEADERS.reset]) {
      const raw = header(ex, name);
      if (raw === undefined || !INTEGER.test(raw.trim()))
        problems.push({ expected: `${name}: <integer>`, received: raw ?? "missing" });
      else values[name] = Number(raw);
    }
    if (problems.length) return problems;
    const limit = values[HEADERS.limit]!;
    const remaining = values[HEADERS.remaining]!;
    const reset = values[HEADERS.reset]!;
    if (limit < 1) problems.push({ expected: `${HEADERS.limit} ≥ 1`, received: String(limit) });
    if (remaining > limit)
      problems.push({ expected: `${HEADERS.remaining} ≤ ${HEADERS.limit} (${limit})`, received: String(remaining) });
    // on the target's clock (its offset from the harness's, estimated from its Date header)
    const offset = ctx.clockOffsetSeconds ?? 0;
    const now = ctx.receivedAt / 1000 + offset;
    // PROFILE §7: "now" is when the request was counted or its answer left: between sending and
    // receiving (a stream's headers leave when it opens, long before its last byte)
    const sent = (ctx.sentAt ?? ctx.receivedAt) / 1000 + offset;
    const latest = now + ctx.windowSeconds + RATE_LIMITS.resetSlackSeconds + ctx.clockSkewSeconds;
    if (reset <= sent - ctx.clockSkewSeconds - 1)
      problems.push({ expected: `${HEADERS.reset} after now (${Math.floor(sent)})`, received: String(reset) });
    if (reset > latest)
      problems.push({ expected: `${HEADERS.reset} at most W + 1 s ahead (≤ ${Math.ceil(latest)})`, received: String(reset) });
    if (
      ex.response.status === 429 &&
      errorOf(ex)?.code === "RATE_LIMIT_EXCEEDED" &&
      remaining !== 0 &&
      // without Retry-After a concurrency 429 cannot be told apart: the retry-after check reports that
      header(ex, HEADERS.retryAfter) !== undefined &&
      header(ex, HEADERS.retryAfter) !== "1"
    )
      problems.push({ expected: `${HEADERS.remaining}: 0 on a 429 from an empty bucket`, received: String(remaining) });
    return problems;
  },
});
