import { AUTHORIZATION_HEADER, redactAuthorizationValue, redactSecrets } from "../client/redact.js";
import type { RunResult } from "./model.js";

export { redactAuthorizationValue, redactSecrets };

/**
 * No API key reaches a report (PROFILE §6: keys never appear in any response — nor in what we
 * write about them). Every writer renders `reportableRun(run, options)`, which calls `redactRun`, so a key
 * is scrubbed once, before any escaping could change its spelling.
 */
/** What every writer takes besides the run. */
export interface ReportOptions {
  /** API keys and any other strings that must never appear in a report */
  secrets?: readonly string[];
}

/**
 * A copy of `value` with `change` applied to every string in it, object keys included; a string
 * held under an object key is changed knowing that key.
 */
function mapStrings(value: unknown, change: (text: string, key?: string) => string): unknown {
  if (typeof value === "string") return change(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, change));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        change(key),
        typeof inner === "string" ? change(inner, key) : mapStrings(inner, change),
      ]),
    );
  return value;
}

/** CSI sequences (colours, cursor moves) and OSC sequences (titles, links) of a terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched
const ANSI_SEQUENCE = /\u001b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\))/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_SEQUENCE, "");
}

/** A copy of `value` (plain objects, arrays, strings) with every string scrubbed; the original is untouched. */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  const redact = (text: string, key?: string) => {
    const redacted = redactSecrets(text, secrets);
    // a header map: the credential of an Authorization header, whatever the key
    return key !== undefined && AUTHORIZATION_HEADER.test(key) ? redactAuthorizationValue(redacted) : redacted;
  };
  return mapStrings(value, redact) as T; // cast: mapStrings copies the value string by string, shape unchanged
}

/** A copy of the run with every string scrubbed; the original is untouched. */
export function redactRun(run: RunResult, secrets: readonly string[]): RunResult {
  return redactValue(run, secrets);
}

/**
 * What every writer renders: check messages and notes without terminal colour codes (a vitest
 * diff carries them), then the run redacted. Evidence is left byte for byte: an escape sequence in
 * a response body is itself evidence. A writer that drops characters (XML's forbidden ones, a
 * Markdown line's control characters) names them in `writerDrops`: they go before the redaction
 * too, since a key with a colour code or a control character inside it would otherwise be missed
 * by the redaction and made whole again by the writer.
 */
export function reportableRun(run: RunResult, options: ReportOptions = {}, writerDrops?: (text: string) => string): RunResult {
  const plain: RunResult = {
    ...run,
    checks: run.checks.map((check) => ({
      ...check,
      ...(check.message === undefined ? {} : { message: stripAnsi(check.message) }),
      ...(check.note === undefined ? {} : { note: stripAnsi(check.note) }),
    })),
  };
  // cast: mapStrings copies the run string by string, shape unchanged
  return redactRun(writerDrops ? (mapStrings(plain, (text) => writerDrops(text)) as RunResult) : plain, options.secrets ?? []);
}
