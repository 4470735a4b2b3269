import { type EndpointId, isRecord } from "../contract/index.js";
import type { RateHeaders } from "./rate.js";

/**
 * One request and its answer as the harness records it: what checks read, what reports print.
 * Keys never appear in it: the Authorization credential reads `***`, the curl line reads
 * `$AGENT_API_KEY`, and any key the target echoed is replaced by `***` (and listed in `leaks`).
 */
export interface Exchange {
  request: {
    method: string;
    /** exactly as sent: the path is not normalised */
    url: string;
    /** lowercased names; Authorization redacted (`Bearer ***`) */
    headers: Record<string, string>;
    /** the start of the body as text, when there was one */
    body?: string;
    bodyBytes: number;
  };
  response: {
    status: number;
    /** lowercased names; a header sent twice reads as its values joined by ", " */
    headers: Record<string, string>;
    /** the body as text (a stream: everything received) */
    bodyText: string;
    /** the body parsed as JSON, whatever its Content-Type; undefined when it is not JSON */
    json: unknown;
  };
  /** from sending to the end of the body, in real milliseconds */
  durationMs: number;
  /** clock time the request was sent and the answer's headers arrived (the client's clock) */
  sentAt: number;
  receivedAt: number;
  /** the answer's X-Request-Id */
  requestId: string | undefined;
  /** the rate headers as sent; undefined when the answer had none */
  rate: RateHeaders | undefined;
  /** Retry-After in seconds, when it was a valid integer */
  retryAfterSeconds?: number;
  /** a copy-pastable command reproducing the request; reads the key from $AGENT_API_KEY */
  curl: string;
  /** 1 for the first attempt, more when retried */
  attempt: number;
  /** the endpoint the request was aimed at, when the client knows it */
  endpoint?: EndpointId;
  agentId?: string;
  /** where a secret the client holds appeared in the answer (`body`, `header:<name>`): PROFILE §6 broken */
  leaks: string[];
}

/** The target did not answer: unreachable, reset, or past the client's timeout. Not a conformance verdict. */
export class TransportError extends Error {
  override readonly name = "TransportError";

  constructor(
    readonly kind: "timeout" | "aborted" | "network",
    message: string,
    readonly request: Exchange["request"],
    readonly curl: string,
  ) {
    // No `cause`: the underlying error is summarised in the message, already redacted.
    super(message);
  }
}

/** A body as JSON; undefined when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `error.code` of an error envelope, when the body has one. */
export function errorCodeOf(json: unknown): string | undefined {
  if (!isRecord(json) || !isRecord(json.error)) return undefined;
  return typeof json.error.code === "string" ? json.error.code : undefined;
}
