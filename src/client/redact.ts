/**
 * The one set of redaction rules (PROFILE §6: keys never appear in any response or log line,
 * nor in what the harness records or reports). The client's Redactor and the report writers
 * both scrub with these.
 */

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
