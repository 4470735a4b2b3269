/**
 * Every number PROFILE.md pins, in one place. Nothing else in the repo restates one.
 */

/** PROFILE §4: field sizes, in Unicode code points. */
export const FIELD_LIMITS = {
  name: { min: 1, max: 100 },
  bio: { min: 0, max: 2000 },
  trait: { min: 1, max: 50, maxItems: 20 },
  expertise: { min: 1, max: 100, maxItems: 50 },
  knowledgeBase: { min: 1, max: 200, maxItems: 20 },
  objective: { min: 1, max: 200, maxItems: 20 },
  motivation: { min: 1, max: 200, maxItems: 20 },
  plugin: { maxItems: 20, pattern: /^[a-z0-9][a-z0-9-]{0,63}$/ },
  provider: { min: 1, max: 50 },
  model: { min: 1, max: 100 },
  temperature: { min: 0, max: 2 },
  maxTokens: { min: 1, max: 32768 },
  agentId: { pattern: /^[A-Za-z0-9_-]{1,64}$/ },
} as const;

/** PROFILE §5 Send Message body sizes. */
export const MESSAGE_LIMITS = {
  text: { min: 1, max: 4000 },
  userId: { min: 1, max: 128 },
  roomId: { min: 1, max: 128 },
  /** `context` serialised as JSON, in UTF-8 bytes. */
  contextJsonBytes: 16 * 1024,
} as const;

/** PROFILE §5 List query. */
export const LIST_LIMITS = {
  page: { min: 1, default: 1 },
  limit: { min: 1, max: 100, default: 20 },
  /** "beyond 2^53−1" is rejected. */
  maxInteger: Number.MAX_SAFE_INTEGER,
  integerPattern: /^-?[0-9]+$/,
} as const;

/** PROFILE §7 Sizes. */
export const BODY_LIMIT_BYTES = 65_536;

/** PROFILE §1: the X-Request-Id a server must echo. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** PROFILE §7 Limits and §11 defaults. */
export const RATE_LIMITS = {
  defaultWindowSeconds: 60,
  /** per key and endpoint */
  perKeyEndpoint: { createAgent: 10, listAgents: 60, getAgent: 60, updateAgent: 30, deleteAgent: 10 },
  /** per agent, all keys of its account */
  perAgentMessages: 60,
  /** per account, all endpoints together */
  tiers: { standard: 60, pro: 300 },
  /** in-flight Send Message requests per agent */
  messageConcurrency: 10,
  /** `Retry-After` of a concurrency 429 */
  concurrencyRetryAfterSeconds: 1,
  /** `X-RateLimit-Reset` is at most W + this from now */
  resetSlackSeconds: 1,
} as const;

/**
 * PROFILE §6, §7: is an answer counted in the buckets its request belongs to? Every
 * authenticated request is, whatever its outcome, except one answered 429 RATE_LIMIT_EXCEEDED;
 * a 401 was never authenticated. A 429 INSUFFICIENT_QUOTA is counted like any request. A 429
 * whose code is missing or unknown breaks §3 (the status-pairing and envelope checks report it)
 * and is counted: the exception names one code, and a pacer that counts a request too many
 * waits a little, while one that counts too few trips the limit it paces for.
 */
export function isCountedInBuckets(status: number, code: string | undefined): boolean {
  return status !== 401 && !(status === 429 && code === "RATE_LIMIT_EXCEEDED");
}

/** PROFILE §5 time budget and §10 mock models. */
export const MESSAGE_TIMING = {
  defaultBudgetSeconds: 30,
  /** heartbeat comment at least this often while the model is silent */
  heartbeatSeconds: 15,
  slowModelSeconds: 2,
  slowModelMinDeltas: 20,
} as const;

/**
 * PROFILE §5: a message whose exchange outlasts the budget is answered 503 AGENT_UNAVAILABLE (a
 * stream closes with that `error` event instead). Whether an answer is that one, as the client saw
 * it: measured from sending, the service's from arrival, so at least the budget (a twentieth
 * spared for the timers' grain). A check that needed another answer then judges nothing: the
 * runner or the service was too slow for the run's budget, which is no defect.
 */
export const endedByTheBudget = (code: string | undefined, elapsedMs: number, budgetSeconds: number): boolean =>
  code === "AGENT_UNAVAILABLE" && elapsedMs >= 0.95 * budgetSeconds * 1000;

/**
 * The words every check uses when such an answer left it unjudged: one phrase, so that whoever
 * reads a run (a person, the configuration matrix) can tell this reason from any other.
 */
export const budgetEndedWords = (budgetSeconds: number): string => `the ${budgetSeconds} s message budget ended it`;

/**
 * The least a mock-slow reply may take and still be PROFILE §10's "about 2 s", as every check
 * reads it: half of it. A check may rely on a held mock-slow exchange keeping its slot this long.
 */
export const SLOW_REPLY_MIN_MS = (MESSAGE_TIMING.slowModelSeconds * 1000) / 2;

/** PROFILE §10: the model names a reference-compatible target answers in its own ways. */
export const MOCK_MODELS = { slow: "mock-slow", error: "mock-error", timeout: "mock-timeout" } as const;
export type MockModel = (typeof MOCK_MODELS)[keyof typeof MOCK_MODELS];

export type RateLimitedEndpoint = keyof typeof RATE_LIMITS.perKeyEndpoint;
