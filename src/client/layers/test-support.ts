import type { Exchange } from "../exchange.js";
import type { RateHeaders } from "../rate.js";
import type { Dispatch, Outcome, OutgoingRequest } from "./dispatch.js";

/** A request as the client would hand it to its layers. */
export function outgoing(overrides: Partial<OutgoingRequest> = {}): OutgoingRequest {
  return {
    method: "GET",
    origin: "http://127.0.0.1:9",
    path: "/v1/agents",
    relativePath: "/agents",
    headers: { authorization: "Bearer ak_test_secretsecret" },
    timeoutMs: 1000,
    attempt: 1,
    ...overrides,
  };
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  rate?: RateHeaders;
}

/** A transport that answers from a script and remembers what it was asked. */
export function scripted(answers: Answer[], now: () => number = Date.now): Dispatch & { seen: OutgoingRequest[] } {
  const seen: OutgoingRequest[] = [];
  const dispatch = async (request: OutgoingRequest): Promise<Outcome> => {
    seen.push(request);
    const answer = answers[Math.min(seen.length, answers.length) - 1] ?? { status: 200 };
    const bodyText = answer.body ?? "";
    let json: unknown;
    try {
      json = bodyText ? JSON.parse(bodyText) : undefined;
    } catch {
      json = undefined;
    }
    const exchange: Exchange = {
      request: { method: request.method, url: request.origin + request.path, headers: { ...request.headers }, bodyBytes: 0 },
      response: { status: answer.status, headers: answer.headers ?? {}, bodyText, json },
      durationMs: 1,
      sentAt: now(),
      receivedAt: now(),
      requestId: answer.headers?.["x-request-id"],
      rate: answer.rate,
      curl: "",
      attempt: request.attempt,
      leaks: [],
    };
    request.onHead?.({ status: answer.status, rate: answer.rate, receivedAt: now() });
    return { exchange, aborted: false };
  };
  return Object.assign(dispatch, { seen });
}
