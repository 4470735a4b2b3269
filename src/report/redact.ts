import type { RunResult } from "./model.js";

/**
 * No API key reaches a report (PROFILE §6: keys never appear in any response — nor in what we
 * write about them). Every writer renders `reportableRun(run, options)`, which calls `redactRun`, so a key
 * is scrubbed once, before any escaping could change its spelling.
 */
export const MASK = "***";

/** What every writer takes besides the run. */
export interface ReportOptions {
  /** API keys and any other strings that must never appear in a report */
  secrets?: readonly string[];
}

/** A shell variable reference (`$KEY`, `${KEY}`) is not a secret: a curl that uses one stays replayable. */
const ENV_REFERENCE = /^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$/;
const AUTH_SCHEMES = new Set(["bearer", "basic", "digest", "token", "negotiate", "apikey"]);

/** `Authorization: <scheme> <credentials>` in free text: a curl, a header dump, JSON. */
const AUTHORIZATION_IN_TEXT = /(\b(?:proxy-)?authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?)([^"'\r\n\\]*)/gi;
const AUTHORIZATION_HEADER = /^(?:proxy-)?authorization$/i;

const keepsAsIs = (token: string) => token === "" || token === MASK || ENV_REFERENCE.test(token);

/** "Bearer ak_test_1" → "Bearer ***"; "bEaReR x" → "bEaReR ***" (the scheme stays: §6 checks its case); "Bearer" and "" stay. */
export function redactAuthorizationValue(value: string): string {
  const match = /^(\s*)(\S+)(\s+)([\s\S]*?)(\s*)$/.exec(value);
  if (match) {
    const [, lead = "", scheme = "", gap = "", credentials = "", tail = ""] = match;
    return `${lead}${scheme}${gap}${keepsAsIs(credentials) ? credentials : MASK}${tail}`;
  }
  const token = value.trim();
  if (keepsAsIs(token) || AUTH_SCHEMES.has(token.toLowerCase())) return value;
  return value.replace(token, MASK);
}

/** Every occurrence of every secret (also percent-encoded), then every Authorization credential, becomes `***`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  const spellings = new Set<string>();
  for (const secret of secrets) {
    if (secret === "") continue;
    spellings.add(secret);
    spellings.add(encodeURIComponent(secret));
  }
  let out = text;
  // Longest first, so a key that contains another key is scrubbed whole.
  for (const spelling of [...spellings].sort((a, b) => b.length - a.length)) out = out.split(spelling).join(MASK);
  return out.replace(AUTHORIZATION_IN_TEXT, (_all, prefix: string, value: string) => prefix + redactAuthorizationValue(value));
}

function redactDeep(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return redactSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, secrets));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      const redacted = redactDeep(inner, secrets);
      // A header map: the credential of an Authorization header, whatever the key.
      out[redactSecrets(key, secrets)] =
        AUTHORIZATION_HEADER.test(key) && typeof redacted === "string" ? redactAuthorizationValue(redacted) : redacted;
    }
    return out;
  }
  return value;
}

/** CSI sequences (colours, cursor moves) and OSC sequences (titles, links) of a terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched
const ANSI_SEQUENCE = /\u001b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\))/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_SEQUENCE, "");
}

/** A copy of the run with every string scrubbed; the original is untouched. */
export function redactRun(run: RunResult, secrets: readonly string[]): RunResult {
  return redactDeep(run, secrets) as RunResult;
}

/**
 * What every writer renders: the run redacted, and check messages without terminal colour
 * codes (a vitest diff carries them). Evidence is left byte for byte: an escape sequence in a
 * response body is itself evidence.
 */
export function reportableRun(run: RunResult, options: ReportOptions = {}): RunResult {
  const redacted = redactRun(run, options.secrets ?? []);
  return {
    ...redacted,
    checks: redacted.checks.map((check) =>
      check.message === undefined ? check : { ...check, message: stripAnsi(check.message) },
    ),
  };
}
