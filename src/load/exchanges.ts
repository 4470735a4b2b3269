/**
 * An answer as the load scenarios read it (LoadResponse) and as the client's layers read it
 * (Exchange), each made from the other: autocannon's answers pass through the response checks as
 * exchanges, and the client's exchanges come back to the scenarios as answers.
 */
import { type Exchange, errorCodeOf, type OutgoingRequest } from "../client/index.js";
import { noteConnectionHeader } from "./connection-close.js";
import type { LoadResponse } from "./recorder.js";

/** The transport's record of an answer autocannon received (unredacted: the redaction layer follows). */
export function receivedExchange(request: OutgoingRequest, answer: LoadResponse): Exchange {
  return {
    request: {
      method: request.method,
      url: request.origin + request.path,
      headers: { ...request.headers },
      bodyBytes: request.body?.byteLength ?? 0,
    },
    response: { status: answer.status, headers: answer.headers, bodyText: answer.bodyText, json: answer.json },
    durationMs: Math.round(answer.latencyMs),
    sentAt: answer.receivedAt - answer.latencyMs,
    receivedAt: answer.receivedAt,
    requestId: answer.requestId,
    rate: answer.rate,
    curl: "",
    attempt: 1,
    leaks: [],
  };
}

/** An exchange as the scenarios read answers, under its endpoint's label. */
export function loadResponseOf(ex: Exchange, endpoint: string): LoadResponse {
  noteConnectionHeader(ex.request.url, ex.response.headers);
  return {
    method: ex.request.method,
    url: ex.request.url,
    endpoint,
    status: ex.response.status,
    headers: ex.response.headers,
    bodyText: ex.response.bodyText,
    json: ex.response.json,
    code: errorCodeOf(ex.response.json),
    rate: ex.rate,
    requestId: ex.requestId,
    receivedAt: ex.receivedAt,
    latencyMs: ex.durationMs,
  };
}
