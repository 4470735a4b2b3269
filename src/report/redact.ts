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
  return redactDeep(run, secrets) as RunResult; // cast: redactDeep copies the run string by string, shape unchanged
}

/**
 * What every writer renders: the run redacted, and check messages and notes without terminal colour
 * codes (a vitest diff carries them). Evidence is left byte for byte: an escape sequence in a
 * response body is itself evidence.
 */
export function reportableRun(run: RunResult, options: ReportOptions = {}): RunResult {
  const redacted = redactRun(run, options.secrets ?? []);
  return {
    ...redacted,
    checks: redacted.checks.map((check) => ({
      ...check,
      ...(check.message === undefined ? {} : { message: stripAnsi(check.message) }),
      ...(check.note === undefined ? {} : { note: stripAnsi(check.note) }),
    })),
  };
}
