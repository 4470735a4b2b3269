/**
 * Redaction and the curl line of an exchange. PROFILE §6: keys never appear in any response or
 * log line — the harness holds itself to the same rule, so every string it records passes here.
 */

import { literalsOf } from "./literals.js";
import { redactAuthorizationValue, redactSecrets } from "./redact.js";

/** The shell variable a curl line reads the key from. */
export const CURL_KEY_VARIABLE = "AGENT_API_KEY";
/**
 * Secrets shorter than this are redacted only where their place is known (the Authorization
 * credential), since replacing a short string everywhere would corrupt unrelated text.
 */
const MIN_SECRET_LENGTH = 8;
/** Request bodies are recorded up to this many characters. */
const BODY_EXCERPT_CHARS = 2048;
/** A curl line carries at most this many body bytes; a larger body is cut and says so. */
const CURL_BODY_BYTES = 16_384;

export class Redactor {
  private readonly secrets: readonly string[];

  /**
   * `apiKey` is the client's own key: a curl line reads it from `$<keyVariable>` (the variable
   * of the key's role, so a replay of a read-only or other-account request sends that key);
   * `others` are redacted to ***.
   */
  constructor(
    readonly apiKey: string,
    others: readonly string[] = [],
    readonly keyVariable: string = CURL_KEY_VARIABLE,
  ) {
    // Longest first, so a key that contains another is replaced whole.
    this.secrets = [...new Set([apiKey, ...others])]
      .filter((s) => s.length >= MIN_SECRET_LENGTH)
      .sort((a, b) => b.length - a.length);
  }

  /** Every secret in `text` (also percent-encoded) and every Authorization credential in it replaced by ***. */
  text(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  /** Does `text` hold a secret? (a response echoing a key breaks PROFILE §6) */
  leaks(text: string): boolean {
    return literalsOf(this.secrets).foundIn(text);
  }

  /** An Authorization value with its credential hidden: `Bearer abc` → `Bearer ***` (the scheme stays as sent). */
  authorization(value: string): string {
    return redactAuthorizationValue(value);
  }

  headers(headers: Readonly<Record<string, string>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers))
      out[name] = name.toLowerCase() === "authorization" ? this.authorization(value) : this.text(value);
    return out;
  }

  /**
   * Split `text` into literal parts (other secrets already ***) and places where the client's own
   * key stood, so a curl line can read it from `$AGENT_API_KEY`.
   */
  splitOnKey(text: string): CurlPart[] {
    const pieces = this.apiKey.length >= MIN_SECRET_LENGTH ? text.split(this.apiKey) : [text];
    const parts: CurlPart[] = [];
    pieces.forEach((piece, i) => {
      if (i > 0) parts.push({ key: true });
      if (piece !== "") parts.push({ literal: this.text(piece) });
    });
    return parts;
  }

  /** The Authorization header for a curl line: the credential is the key, or is hidden. */
  authorizationParts(value: string): CurlPart[] {
    const match = /^(\S+)(\s+)(.*)$/s.exec(value);
    const credential = match ? match[3] : value;
    if (credential !== this.apiKey || this.apiKey === "") return this.splitOnKey(value);
    return match ? [{ literal: `${match[1]}${match[2]}` }, { key: true }] : [{ key: true }];
  }
}

export type CurlPart = { literal: string } | { key: true };

/* --------------------------------------------------------------- shell words */

/** Can a single-quoted shell word show `text` as is? Yes unless it holds control characters (tab, LF, CR aside). */
function isPlain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f) return false;
  }
  return true;
}

function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** ANSI-C quoting ($'…'), for bytes a single-quoted word cannot show. */
function ansiQuoted(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) {
    if (byte === 0x27) out += "\\'";
    else if (byte === 0x5c) out += "\\\\";
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `$'${out}'`;
}

function literalWord(text: string): string {
  return isPlain(text) ? singleQuoted(text) : ansiQuoted(Buffer.from(text, "utf8"));
}

/** One shell word: literal parts quoted, the key read from its variable ($AGENT_API_KEY by default). */
function shellWord(parts: readonly CurlPart[], keyVariable = CURL_KEY_VARIABLE): string {
  const merged: CurlPart[] = [];
  for (const part of parts) {
    const last = merged.at(-1);
    if (last !== undefined && "literal" in last && "literal" in part)
      merged[merged.length - 1] = { literal: last.literal + part.literal };
    else merged.push(part);
  }
  if (merged.length === 0) return "''";
  return merged.map((p) => ("key" in p ? `"$${keyVariable}"` : literalWord(p.literal))).join("");
}

function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export interface CurlRequest {
  method: string;
  url: string;
  /** the headers as sent, not yet redacted */
  headers: Readonly<Record<string, string>>;
  body?: Uint8Array | undefined;
}

/**
 * A copy-pastable curl command reproducing the request, with the key read from
 * `$AGENT_API_KEY`. `--path-as-is` and `--globoff` keep path variants exactly as sent.
 */
export function curlCommand(request: CurlRequest, redactor: Redactor): string {
  const method = /^[A-Za-z]+$/.test(request.method) ? request.method : literalWord(request.method);
  const word = (parts: readonly CurlPart[]) => shellWord(parts, redactor.keyVariable);
  const url = word(redactor.splitOnKey(request.url));
  // an https proxy's answer to CONNECT is not the service's: left out of -i's output
  const words = ["curl", "-sS", "-i", "--suppress-connect-headers", "--path-as-is", "--globoff", "-X", method, url];
  const names = Object.keys(request.headers).map((n) => n.toLowerCase());
  // A stream is shown as it arrives.
  if (Object.entries(request.headers).some(([n, v]) => n.toLowerCase() === "accept" && v.includes("event-stream")))
    words.splice(1, 0, "-N");
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.toLowerCase() === "content-length") continue;
    const parts =
      name.toLowerCase() === "authorization"
        ? [{ literal: `${name}: ` }, ...redactor.authorizationParts(value)]
        : redactor.splitOnKey(`${name}: ${value}`);
    words.push("-H", word(parts));
  }
  let note = "";
  if (request.body !== undefined) {
    // curl adds a form Content-Type to --data-binary unless told there is none.
    if (!names.includes("content-type")) words.push("-H", "'Content-Type:'");
    let bytes = request.body;
    if (bytes.byteLength > CURL_BODY_BYTES) {
      note = `  # body cut: ${bytes.byteLength} bytes sent, first ${CURL_BODY_BYTES} shown`;
      bytes = bytes.subarray(0, CURL_BODY_BYTES);
    }
    const data = isValidUtf8(bytes)
      ? word(redactor.splitOnKey(Buffer.from(bytes).toString("utf8")))
      : ansiQuoted(Buffer.from(redactor.text(Buffer.from(bytes).toString("latin1")), "latin1"));
    words.push("--data-binary", data);
  }
  return words.join(" ") + note;
}

/**
 * The start of a request body for the record, redacted whole before it is cut: cut first, a key
 * across the cut would keep its first part.
 */
export function bodyExcerpt(body: Uint8Array | undefined, redactor: Redactor): string | undefined {
  if (body === undefined) return undefined;
  const text = redactor.text(Buffer.from(body).toString("utf8"));
  return text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}… (${body.byteLength} bytes)` : text;
}
