import type { LiteralSearch } from "../client/literals.js";
import { type ClauseId, type EndpointSpec, isRecord } from "../contract/index.js";

/** What a response-level check sees of one exchange (a structural subset of the client's Exchange). */
export interface ObservedExchange {
  request: { method: string; url: string; headers: Readonly<Record<string, string>> };
  response: {
    status: number;
    headers: Readonly<Record<string, string | string[] | undefined>>;
    bodyText: string;
    json?: unknown;
  };
  /** where the client found one of its keys in the answer (and redacted it): `body`, `header:<name>` */
  leaks?: readonly string[];
}

export interface CheckContext {
  /** the endpoint the request addressed, when it matches one exactly */
  endpoint: EndpointSpec | undefined;
  /** the request carried a key the target should accept */
  authenticated: boolean;
  /** the run's API keys: none may appear in any response (PROFILE §6) */
  keys: readonly string[];
  /** platform tokens the run sent: write-only, none may come back (PROFILE §4) */
  tokens: LiteralSearch;
  windowSeconds: number;
  /** when the response arrived, harness clock, ms */
  receivedAt: number;
  /**
   * when the request was sent, harness clock, ms, when known: the target's "now" (PROFILE §7)
   * lies between the two, which matters under load, where an answer may wait in a queue
   */
  sentAt?: number;
  /** tolerated clock difference between harness and target, seconds (beyond the known offset) */
  clockSkewSeconds: number;
  /**
   * the target's clock minus the harness's, seconds, as estimated from its Date header (default 0):
   * PROFILE §7 X-RateLimit-Reset is a time on the target's clock
   */
  clockOffsetSeconds?: number;
  /** the record's identifier field (PROFILE §11, default `id`) */
  idField?: string;
}

/** A clause broken by one response: what was expected, what came. */
export interface Violation {
  check: string;
  clause: ClauseId;
  expected: string;
  received: string;
}

export interface ResponseCheck {
  readonly id: string;
  readonly clause: ClauseId;
  /**
   * A response breaking this rule cannot be read for its code or data (a broken envelope, a
   * status with another status's codes): a check that failed while such a response was in its
   * hands is blocked by this rule's finding, not a defect of its own.
   */
  readonly masksAnswer?: true;
  applies(ex: ObservedExchange, ctx: CheckContext): boolean;
  /** a list of problems; empty when the response keeps the clause (a problem may name a narrower clause) */
  run(ex: ObservedExchange, ctx: CheckContext): Array<Omit<Violation, "check" | "clause"> & { clause?: ClauseId }>;
}

/** One response-level rule (STYLE §3): every client runs every applicable check on every response. */
export function defineCheck(check: ResponseCheck): ResponseCheck {
  return check;
}

export const header = (ex: ObservedExchange, name: string): string | undefined => {
  const v = ex.response.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
};

export const isStream = (ex: ObservedExchange) => /^text\/event-stream\b/i.test(header(ex, "content-type") ?? "");

export const errorOf = (ex: ObservedExchange): Record<string, unknown> | undefined => {
  const json = ex.response.json;
  return isRecord(json) && json.success === false && isRecord(json.error) ? json.error : undefined;
};

/** A response's body and header values as one text: where a secret would show if it leaked. */
export const responseText = (ex: ObservedExchange) =>
  `${ex.response.bodyText}\n${Object.values(ex.response.headers).flat().join("\n")}`;
