import { z } from "zod";
import type { CheckContext, ObservedExchange, ResponseCheck } from "../checks/define.js";
import { runChecks } from "../checks/run.js";
import { NO_LITERALS } from "../client/literals.js";
import { matchEndpoint } from "../contract/index.js";
import { findingKey } from "../report/index.js";
import { KEY_VARIABLES } from "../target/key-roles.js";

/**
 * The other half of a replay script (src/run/replay.ts): the verdict of one response-level
 * check on the answer curl printed, and the id of an agent the script created.
 */

/** A `curl -i` output: the last non-1xx status block and the body after it. */
export function parseCurlOutput(raw: string): ObservedExchange["response"] | undefined {
  let rest = raw;
  for (;;) {
    const m = /^HTTP\/[0-9.]+ (\d{3})[^\n]*\n([\s\S]*?)\r?\n\r?\n/.exec(rest);
    if (!m) return undefined;
    rest = rest.slice(m[0].length);
    const status = Number(m[1]);
    if (status >= 100 && status < 200) continue;
    const headers: Record<string, string> = {};
    for (const line of (m[2] ?? "").split(/\r?\n/)) {
      const i = line.indexOf(":");
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    let json: unknown;
    try {
      json = JSON.parse(rest);
    } catch {
      json = undefined;
    }
    return { status, headers, bodyText: rest, ...(json === undefined ? {} : { json }) };
  }
}

/** A create answer read leniently: `data` as an object, for the id field `--print-id` names. */
const createdData = z.object({ data: z.record(z.string(), z.unknown()) });

/** The created agent's `field` (the id the script's later calls address), when the answer has one. */
export function createdId(response: ObservedExchange["response"], field: string): string | undefined {
  const id = createdData.safeParse(response.json).data?.data[field];
  return typeof id === "string" ? id : undefined;
}

export interface JudgedRequest {
  method: string;
  url: string;
  /** the request's headers as recorded: the checks read only their names and shapes */
  headers: Record<string, string>;
  windowSeconds: number;
  idField: string;
  /** when the request was sent (ms since the epoch); default: now */
  sentAt?: number;
  /** the finding's clause and expectation: only that finding counts (any of the check's, without them) */
  clause?: string;
  expected?: string;
}

/** The violations `check` finds again in `response`, limited to the replayed finding when it is named. */
export function judgeAnswer(check: ResponseCheck, request: JudgedRequest, response: ObservedExchange["response"]) {
  const { method, url, headers } = request;
  const baseUrl = url.replace(/(\/v1)(\/.*)?$/, "$1");
  // every role's variable, the load scenarios' too (a finding under load replays with their keys)
  const keys = KEY_VARIABLES.map((v) => process.env[v]).filter((k): k is string => !!k);
  const now = Date.now();
  const ctx: CheckContext = {
    endpoint: matchEndpoint(method, url, { baseUrl })?.spec,
    authenticated: /^bearer \S/i.test(headers.authorization ?? ""),
    keys,
    tokens: NO_LITERALS,
    windowSeconds: request.windowSeconds,
    receivedAt: now,
    sentAt: request.sentAt ?? now,
    clockSkewSeconds: 1,
    idField: request.idField,
  };
  const exchange: ObservedExchange = { request: { method, url, headers }, response };
  const wanted =
    request.clause && request.expected
      ? findingKey({ check: check.id, clause: request.clause, expected: request.expected })
      : undefined;
  return runChecks(exchange, ctx, [check]).filter((v) => !wanted || findingKey(v) === wanted);
}
