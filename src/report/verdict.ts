import { CLAUSE_BY_ID, type ClauseId } from "../contract/clauses.js";

/**
 * Two kinds of red (STYLE §7), and a third that is neither: what an error thrown by a check
 * means for its verdict. Suites throw these; `classify` reads them back — in the test's worker,
 * or in the CLI from the error as vitest serialized it (its name and own fields survive).
 */

/** The target broke a clause: the check's own, or the narrower one named (a finding is made under it). */
export class ConformanceFailure extends Error {
  override name = "ConformanceFailure";
  constructor(
    message: string,
    readonly clause?: ClauseId,
  ) {
    // the clause leads the headline too: a reader sees which rule broke before what was received
    super(clause ? `PROFILE ${CLAUSE_BY_ID.get(clause)?.section ?? ""} ${clause}: ${message}` : message);
  }
}

/** An earlier defect kept the check from judging (its setup failed, or the answer could not be read): `blocked`. */
export class Blocked extends Error {
  override name = "Blocked";
  constructor(
    message: string,
    /** the clause the failed setup call broke: one finding under it names every check it blocked */
    readonly clause?: ClauseId,
  ) {
    super(message);
  }
}

/**
 * Another client's activity in the account (agents the run did not make, Remaining spent by
 * someone else) kept the check from judging, and what is the run's own did not prove the clause
 * either way: `inconclusive`, naming what was seen. Never a finding, never a pass.
 */
export class Inconclusive extends Error {
  override name = "Inconclusive";
}

/**
 * The name a load scenario's InconclusiveError carries (src/load/context.ts): the service's answers
 * left its measurement nothing to judge (a window turned in every burst, streams ended first), no
 * other client needed. Its report's message starts with it, which is how a report tells the causes apart.
 */
export const MEASUREMENT_INCONCLUSIVE = "InconclusiveError";

/**
 * Words an Inconclusive's message holds when the deployment's own model failed a message the check
 * needed answered: PROFILE §5 allows a model failure (500 MODEL_ERROR, the agent then in error),
 * so a check that cannot go on without the reply judges nothing. Found by these words.
 */
export const MODEL_FAILED = "the deployment's own model failed";

/** The causes of an inconclusive check, in the reports' words. */
const INCONCLUSIVE_CAUSES = {
  client: "another client's activity in the account",
  measurement: "a load measurement the service's answers left nothing to judge",
  model: `${MODEL_FAILED} (PROFILE §5 allows it)`,
} as const;

/** What kept these inconclusive checks (their messages) from judging, in the reports' words. */
export function inconclusiveCause(messages: readonly (string | undefined)[]): string {
  // a message may name two causes (a property's cases, some not judged for each); one naming none is another client's
  const causesOf = (m: string | undefined): (keyof typeof INCONCLUSIVE_CAUSES)[] => {
    if (m?.startsWith(`${MEASUREMENT_INCONCLUSIVE}:`)) return ["measurement"];
    const named = [
      ...(m?.includes(INCONCLUSIVE_CAUSES.client) ? (["client"] as const) : []),
      ...(m?.includes(MODEL_FAILED) ? (["model"] as const) : []),
    ];
    return named.length ? named : ["client"];
  };
  const seen = new Set(messages.flatMap(causesOf));
  const causes = (Object.keys(INCONCLUSIVE_CAUSES) as (keyof typeof INCONCLUSIVE_CAUSES)[]).filter((c) => seen.has(c));
  return (causes.length ? causes : (["client"] as const)).map((c) => INCONCLUSIVE_CAUSES[c]).join(", or ");
}

/** The harness cannot judge (missing capability, bad configuration, a timing it could not keep). */
export class HarnessError extends Error {
  override name = "HarnessError";
}

/** A thrown error as a check's task records it. */
export interface ThrownError {
  name?: string;
  message: string;
  clause?: unknown;
}

/** The verdict on a check that threw: the target's failure, blocked by an earlier defect, or the harness's error. */
export interface Verdict {
  status: "failed" | "blocked" | "error" | "inconclusive";
  /** the clause a ConformanceFailure or Blocked named, when it named one */
  clauseAtFault?: string;
}

/** The names of the errors the harness throws: the client's TransportError is the harness's too. */
const HARNESS_ERRORS = new Set(["HarnessError", "TransportError"]);
/**
 * vitest's own words when a check or its hook outlasts the time the run gave it (a plain Error): the
 * harness's bound ran out before the check could say anything of the service, as a time limit the
 * check keeps itself (a HarnessError) does. Never a failure of the check's clauses.
 */
const RAN_OUT_OF_TIME = /^(Test|Hook) timed out in \d+ms/;
const isHarnessError = (e: ThrownError) => HARNESS_ERRORS.has(e.name ?? "") || RAN_OUT_OF_TIME.test(e.message);
/**
 * Another client's activity: an Inconclusive, and the client's RefusedAgain (a request refused
 * again and again though the service's own answers left room: something other than this run
 * spends the bucket, src/client/refusal.ts).
 */
const INCONCLUSIVE = new Set(["Inconclusive", "RefusedAgain"]);
/** The client's RateLimitBreach is a ConformanceFailure of a §7 bucket clause, proven by the service's own headers. */
const IN_CLAUSE_WORDS = new Set(["ConformanceFailure", "Blocked", "RateLimitBreach", ...INCONCLUSIVE, ...HARNESS_ERRORS]);

/**
 * One place that reads a check's errors: any harness error makes it an error; else, when every
 * error is an Inconclusive, inconclusive (a failure beside one is still the check's failure); else
 * any Blocked blocked; else failed.
 */
export function classify(errors: readonly ThrownError[]): Verdict {
  const status = errors.some(isHarnessError)
    ? "error"
    : errors.length > 0 && errors.every((e) => INCONCLUSIVE.has(e.name ?? ""))
      ? "inconclusive"
      : errors.some((e) => e.name === "Blocked")
        ? "blocked"
        : "failed";
  const clause = errors.map((e) => e.clause).find((c): c is string => typeof c === "string" && CLAUSE_BY_ID.has(c));
  return clause ? { status, clauseAtFault: clause } : { status };
}

/** An error the harness wrote speaks the clause's words already; a bare assertion's message does not. */
export const speaksInClauseWords = (error: ThrownError): boolean => IN_CLAUSE_WORDS.has(error.name ?? "");

/** A matcher's sentence (`expected '' to match /\S/`), optionally after the label the check gave it. */
const MATCHER_SENTENCE = /^(?:(.+?):\s+)?expected\s[\s\S]*?\sto\s/;
/** The longest received value a headline quotes; the whole diff stays in the message below it. */
const RECEIVED_CHARS = 80;

/**
 * A matcher's own text (`expected '' to match /\S/ // Object.is equality`) is never the headline:
 * the headline is the clause the check verifies, in the clause's words, then what the check saw
 * (`WWW-Authenticate: received ""`). The matcher's sentence and diff follow on the lines below,
 * for the person who debugs the check. A ConformanceFailure already speaks in the clause's words.
 */
export function inClauseWords(error: { name?: string; message: string; actual?: unknown }, clauseIds: readonly string[]): string {
  if (speaksInClauseWords(error)) return error.message;
  const clause = CLAUSE_BY_ID.get(clauseIds[0] ?? "");
  if (!clause) return error.message;
  const [first = "", ...rest] = error.message.split("\n");
  const matcher = MATCHER_SENTENCE.exec(first);
  if (!matcher) return [`PROFILE ${clause.section} ${clause.id}: ${clause.text} — ${first}`, ...rest].join("\n");
  // a matcher on numbers leaves a number here (toBeGreaterThanOrEqual), not a string
  const actual = error.actual === undefined ? undefined : String(error.actual).replace(/\s+/g, " ").trim();
  const received =
    actual === undefined || actual === ""
      ? undefined
      : `received ${actual.length > RECEIVED_CHARS ? `${actual.slice(0, RECEIVED_CHARS - 1)}…` : actual}`;
  const said = [matcher[1], received].filter((part) => part !== undefined).join(": ");
  return [`PROFILE ${clause.section} ${clause.id}: ${clause.text}${said ? ` — ${said}` : ""}`, first, ...rest].join("\n");
}
