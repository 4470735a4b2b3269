import type { Exchange } from "../client/exchange.js";
import type { Layer } from "../client/layers/dispatch.js";
import { matchEndpoint } from "../contract/index.js";
import type { CheckContext, ResponseCheck, Violation } from "./define.js";
import { runChecks } from "./run.js";

export interface ResponseCheckOptions {
  /** the base URL the requests are under, to name the endpoint each one addressed */
  baseUrl: string;
  /** everything a check needs besides the endpoint and the arrival time */
  context: Omit<CheckContext, "endpoint" | "receivedAt" | "sentAt">;
  /** told of every exchange it judged, with what the checks found (empty: the answer kept every clause) */
  onJudged: (exchange: Exchange, violations: Violation[]) => void;
  checks?: readonly ResponseCheck[];
}

/**
 * A client layer that runs every applicable response-level check on every exchange that passes
 * (place it outside the redaction layer, so it sees `leaks`). The load scenarios judge
 * conformance under load with it: their own requests pass through it, and so do the answers
 * autocannon received (src/load/context.ts), with the same checks as the functional suites.
 */
export function responseChecks(options: ResponseCheckOptions): Layer {
  return (next) => async (request) => {
    const outcome = await next(request);
    const ex = outcome.exchange;
    const endpoint = matchEndpoint(ex.request.method, ex.request.url, { baseUrl: options.baseUrl })?.spec;
    const found = runChecks(ex, { ...options.context, endpoint, receivedAt: ex.receivedAt, sentAt: ex.sentAt }, options.checks);
    options.onJudged(ex, found);
    return outcome;
  };
}
