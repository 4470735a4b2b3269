import type autocannon from "autocannon";
import { HEADERS, isRecord } from "../contract/index.js";

/**
 * The private members of autocannon's client that a bounded pipelined burst patches. autocannon
 * is pinned to one version in package.json, and src/load/autocannon-client.test.ts pins each
 * member's source: a release that changes what they do fails that test, not load, unnoticed.
 */

const REQUEST_ID_LINE = Buffer.from(`\r\n${HEADERS.requestId}: `);
/** The X-Request-Id written in a request autocannon built (src/load/concurrency-checks.ts gave each its own). */
function requestIdIn(request: Buffer): string | undefined {
  const at = request.indexOf(REQUEST_ID_LINE);
  if (at < 0) return undefined;
  const from = at + REQUEST_ID_LINE.length;
  return request.toString("latin1", from, request.indexOf("\r\n", from));
}

/** The parts of autocannon's (untyped) client that a bounded pipelined burst needs. */
export interface PipelinedClient {
  responseMax: number;
  reqsMade: number;
  pipelinedRequests: { size(): number; clear(): void };
  destroy(): void;
  _doRequest(): void;
  /** the bytes of the request about to be written (called once per request, as it is queued for its answer) */
  getRequestBuffer(): Buffer;
  /** opens the connection: again after the target closed it, with the requests still owed on the old one lost */
  _connect(): void;
  /** emitted as each request is written (autocannon's typings leave it out) */
  on(event: "request", listener: () => void): unknown;
}

function isPipelinedClient(client: autocannon.Client): client is autocannon.Client & PipelinedClient {
  const queue: unknown = Reflect.get(client, "pipelinedRequests");
  return (
    ["responseMax", "reqsMade", "destroy", "_doRequest", "getRequestBuffer", "_connect"].every((field) => field in client) &&
    isRecord(queue) &&
    typeof queue.size === "function" &&
    typeof queue.clear === "function"
  );
}

/**
 * autocannon with both `amount` and `pipelining` closes a connection as soon as it has sent
 * its share, dropping the answers still owed on it. Wait for them, then close.
 */
function keepPipelineUntilAnswered(client: PipelinedClient): void {
  const doRequest = client._doRequest;
  client._doRequest = function (this: PipelinedClient) {
    if (this.responseMax && this.reqsMade >= this.responseMax) {
      if (this.pipelinedRequests.size() === 0) this.destroy();
      return;
    }
    doRequest.call(this);
  };
}

/**
 * The client made ready for a pipelined burst: it waits for the answers still owed before it
 * closes, and tells `nextAnsweredId` the X-Request-Id of the request each answer is to, in order
 * (HTTP/1.1 answers come in the order of their requests on a connection). Throws when the
 * client no longer has the members this relies on.
 *
 * A target may close a connection after any answer (HTTP/1.1 allows `Connection: close` on every
 * one). autocannon then connects again but keeps the requests still owed on the old connection
 * queued, so each later answer would be paired with the wrong request and the burst would wait
 * its whole timeout for answers that never come. Here the queue is emptied on each new
 * connection and the owed requests are reported lost (`onLost`), never sent again: RFC 9112 §9.6
 * forbids a server that announced the close to process them, but Node's own server runs the
 * handler of every pipelined request it has read, so they may well have been counted.
 */
export function pipelinedClient(
  client: autocannon.Client,
  hooks: { onSent: () => void; onLost: (count: number) => void },
): { nextAnsweredId: () => string | undefined } {
  if (!isPipelinedClient(client)) throw new Error("autocannon's client no longer has the internals a pipelined burst relies on");
  keepPipelineUntilAnswered(client);
  client.on("request", hooks.onSent);
  const sentIds: Array<string | undefined> = [];
  const requestBuffer = client.getRequestBuffer;
  client.getRequestBuffer = function (this: PipelinedClient) {
    const bytes = requestBuffer.call(this);
    sentIds.push(requestIdIn(bytes));
    return bytes;
  };
  const connect = client._connect;
  client._connect = function (this: PipelinedClient) {
    const owed = this.pipelinedRequests.size();
    if (owed > 0) hooks.onLost(owed);
    this.pipelinedRequests.clear();
    sentIds.length = 0;
    connect.call(this);
  };
  return { nextAnsweredId: () => sentIds.shift() };
}
