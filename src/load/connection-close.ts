/**
 * Targets (origins) seen closing connections: an answer said `Connection: close` (HTTP/1.1 allows
 * it on any answer), or a connection ended with answers still owed on it. A pipelined burst to
 * one loses every request after the first on each connection (and a server may have counted
 * them: Node's runs the handler of each pipelined request it has read before it closes), so
 * src/load/burst.ts opens a connection per request to such a target.
 */
const closingOrigins = new Set<string>();

const CLOSE = /(^|,)\s*close\s*(,|$)/i;

/** Note an answer's `Connection` header (headers by lower-case name). */
export function noteConnectionHeader(url: string, headers: Readonly<Record<string, string>>): void {
  if (CLOSE.test(headers.connection ?? "")) noteConnectionsClosed(url);
}

/** Note that the target at `url` closed a connection with answers still owed. */
export function noteConnectionsClosed(url: string): void {
  closingOrigins.add(new URL(url).origin);
}

/** Has the target at `url` been seen closing connections? */
export function closesConnections(url: string): boolean {
  return closingOrigins.has(new URL(url).origin);
}
