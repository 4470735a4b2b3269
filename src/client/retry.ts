import type { ErrorCode } from "../contract/index.js";

/**
 * Optional retry of 429 and 503 answers: exponential backoff with full jitter, never sooner than
 * the answer's `Retry-After`, bounded in attempts and in total time. Off unless asked for, and a
 * check that expects a 429 turns it off for its request.
 */
export interface RetryPolicy {
  /** attempts in all, the first included */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** no retry starts once this much time has passed since the first attempt (default 130 s: two windows) */
  maxTotalMs?: number;
}

const DEFAULT_RETRY_TOTAL_MS = 130_000;

/** Codes a retry cannot cure: a spent quota stays spent, an inactive agent stays inactive (PROFILE §5, §7). */
const FINAL_CODES: ReadonlySet<string> = new Set<ErrorCode>(["INSUFFICIENT_QUOTA", "AGENT_UNAVAILABLE"]);

export interface RetryableAnswer {
  status: number;
  /** `error.code` of the body, when it has one */
  code?: string | undefined;
  retryAfterSeconds?: number | undefined;
}

export function isRetryable(answer: RetryableAnswer): boolean {
  if (answer.status !== 429 && answer.status !== 503) return false;
  return answer.code === undefined || !FINAL_CODES.has(answer.code);
}

/**
 * How long to wait before attempt `attempt + 1` (attempt counts from 1): a uniform draw in
 * [0, min(maxDelay, base·2^(attempt−1))], raised to `Retry-After` when the answer gave one.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterSeconds: number | undefined,
  random: () => number,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  return retryAfterSeconds === undefined ? jittered : Math.max(jittered, retryAfterSeconds * 1000);
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

/** Retry after `attempt` (1-based) that got `answer`, `elapsedMs` after the first attempt began? */
export function decideRetry(
  policy: RetryPolicy,
  attempt: number,
  answer: RetryableAnswer,
  elapsedMs: number,
  random: () => number,
): RetryDecision {
  if (!isRetryable(answer)) return { retry: false, reason: "not retryable" };
  if (attempt >= policy.maxAttempts) return { retry: false, reason: `${policy.maxAttempts} attempts made` };
  const delayMs = retryDelayMs(policy, attempt, answer.retryAfterSeconds, random);
  const budget = policy.maxTotalMs ?? DEFAULT_RETRY_TOTAL_MS;
  if (elapsedMs + delayMs > budget) return { retry: false, reason: `waiting ${delayMs} ms would pass ${budget} ms in all` };
  return { retry: true, delayMs };
}
