import { HEADERS, RATE_LIMITS } from "../contract/index.js";
import { defineCheck, errorOf, header } from "./define.js";

const INTEGER = /^[0-9]+$/;

/**
 * PROFILE §7: every authenticated response (429 included) carries X-RateLimit-Limit,
 * -Remaining (0 ≤ Remaining ≤ Limit) and -Reset (after now, at most W + 1 s ahead). "Now" is
 * the moment the request was counted or the moment its answer leaves, either reading is
 * conformant: so Reset need only be after the request was sent and within W + 1 s of the answer.
 */
/**
 * The X-RateLimit-Reset values PROFILE §7 allows an answer (Unix seconds on the target's clock):
 * over `after` and at most `atMost`. "Now" is when the request was counted or when its answer
 * left, anywhere between sending and receiving (a slow hop, a stream's headers leaving when it
 * opens): after the request was sent, at most W + 1 s after the answer came; `skewSeconds` is how
 * far the estimate of the target's clock (`offsetSeconds`, from its Date header) may be off, and
 * the 1 s below is Reset's rounding to whole seconds.
 */
export function resetBounds(at: {
  sentAt: number;
  receivedAt: number;
  offsetSeconds: number;
  windowSeconds: number;
  skewSeconds: number;
}): { sent: number; after: number; atMost: number } {
  const sent = at.sentAt / 1000 + at.offsetSeconds;
  const received = at.receivedAt / 1000 + at.offsetSeconds;
  return {
    sent,
    after: sent - at.skewSeconds - 1,
    atMost: received + at.windowSeconds + RATE_LIMITS.resetSlackSeconds + at.skewSeconds,
  };
}

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
    const bounds = resetBounds({
      sentAt: ctx.sentAt ?? ctx.receivedAt,
      receivedAt: ctx.receivedAt,
      offsetSeconds: ctx.clockOffsetSeconds ?? 0,
      windowSeconds: ctx.windowSeconds,
      skewSeconds: ctx.clockSkewSeconds,
    });
    if (reset <= bounds.after)
      problems.push({ expected: `${HEADERS.reset} after now (${Math.floor(bounds.sent)})`, received: String(reset) });
    if (reset > bounds.atMost)
      problems.push({
        expected: `${HEADERS.reset} at most W + 1 s ahead (≤ ${Math.ceil(bounds.atMost)})`,
        received: String(reset),
      });
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
