/**
 * The one set of redaction rules (PROFILE §6: keys never appear in any response or log line,
 * nor in what the harness records or reports). The client's Redactor and the report writers
 * both scrub with these.
 */

import { literalsOf } from "./literals.js";

/** What a redacted secret reads as. */
const MASK = "***";

/** A shell variable reference (`$KEY`, `${KEY}`) is not a secret: a curl that uses one stays replayable. */
const ENV_REFERENCE = /^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$/;
const AUTH_SCHEMES = new Set(["bearer", "basic", "digest", "token", "negotiate", "apikey"]);

/** `Authorization: <scheme> <credentials>` in free text: a curl, a header dump, JSON. */
const AUTHORIZATION_IN_TEXT = /(\b(?:proxy-)?authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?)([^"'\r\n\\]*)/gi;
export const AUTHORIZATION_HEADER = /^(?:proxy-)?authorization$/i;

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

/**
 * The spellings to scrub for one list of secrets, longest first (a key that contains another is
 * scrubbed whole): made once per list, not once per string — a run's reports redact every string
 * of every check against every key of every worker's key set.
 */
const SPELLINGS = new WeakMap<readonly string[], readonly string[]>();

function spellingsOf(secrets: readonly string[]): readonly string[] {
  let spellings = SPELLINGS.get(secrets);
  if (!spellings) {
    const all = new Set<string>();
    for (const secret of secrets) {
      if (secret === "") continue;
      all.add(secret);
      all.add(encodeURIComponent(secret));
    }
    spellings = [...all].sort((a, b) => b.length - a.length);
    SPELLINGS.set(secrets, spellings);
  }
  return spellings;
}

/** Every occurrence of every secret (also percent-encoded), then every Authorization credential, becomes `***`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  const spellings = spellingsOf(secrets);
  // most strings hold no secret: one search says so before any is tried on its own
  if (literalsOf(spellings).foundIn(out))
    for (const spelling of spellings) if (out.includes(spelling)) out = out.split(spelling).join(MASK);
  return out.replace(AUTHORIZATION_IN_TEXT, (_all, prefix: string, value: string) => prefix + redactAuthorizationValue(value));
}
