import { HEADERS } from "../contract/index.js";

/** A rate header that is present but not a usable value; reported, never thrown (PROFILE §7). */
interface MalformedRateHeader {
  header: string;
  value: string;
  issue: string;
}

/**
 * PROFILE §7 rate headers as the target sent them. A field is undefined when the header is absent
 * or malformed; a malformed one is listed in `malformed` so a check can report it.
 */
export interface RateHeaders {
  /** X-RateLimit-Limit: the size of the bucket described */
  limit?: number;
  /** X-RateLimit-Remaining: requests left in it */
  remaining?: number;
  /** X-RateLimit-Reset: Unix time in whole seconds when it refills */
  reset?: number;
  /** Retry-After in seconds (only the integer form PROFILE §7 asks for) */
  retryAfter?: number;
  malformed: MalformedRateHeader[];
}

type HeaderValue = string | readonly string[] | undefined;
export type HeaderSource = Readonly<Record<string, HeaderValue>>;

const NON_NEGATIVE_INTEGER = /^[0-9]+$/;

type ParsedInteger = { value: number } | { issue: string };

/** A non-negative decimal integer, nothing else: no sign, fraction, exponent, or second value. */
export function parseHeaderInteger(value: HeaderValue): ParsedInteger | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") {
    if (value.length === 1 && value[0] !== undefined) return parseHeaderInteger(value[0]);
    return { issue: `sent ${value.length} times` };
  }
  const trimmed = value.trim();
  if (trimmed.includes(",")) return { issue: "holds more than one value" };
  if (!NON_NEGATIVE_INTEGER.test(trimmed)) return { issue: "is not a non-negative integer" };
  const n = Number(trimmed);
  if (!Number.isSafeInteger(n)) return { issue: "is beyond 2^53-1" };
  return { value: n };
}

function headerOf(headers: HeaderSource, name: string): HeaderValue {
  // Node and undici lowercase header names; a hand-made record may not.
  if (name in headers) return headers[name];
  const found = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return found === undefined ? undefined : headers[found];
}

const FIELDS = [
  ["limit", HEADERS.limit],
  ["remaining", HEADERS.remaining],
  ["reset", HEADERS.reset],
  ["retryAfter", HEADERS.retryAfter],
] as const;

/**
 * Parse `X-RateLimit-Limit/Remaining/Reset` and `Retry-After` from response headers.
 * Undefined when none of the four is present (e.g. a 401, which counts against no limit).
 */
export function parseRateHeaders(headers: HeaderSource): RateHeaders | undefined {
  const rate: RateHeaders = { malformed: [] };
  let present = false;
  for (const [field, header] of FIELDS) {
    const raw = headerOf(headers, header);
    const parsed = parseHeaderInteger(raw);
    if (parsed === undefined) continue;
    present = true;
    if ("value" in parsed) rate[field] = parsed.value;
    else rate.malformed.push({ header, value: Array.isArray(raw) ? raw.join(", ") : String(raw), issue: parsed.issue });
  }
  return present ? rate : undefined;
}
