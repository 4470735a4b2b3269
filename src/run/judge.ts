import { z } from "zod";
import type { CheckContext, ObservedExchange, ResponseCheck } from "../checks/define.js";
import { runChecks } from "../checks/run.js";
import { NO_LITERALS } from "../client/literals.js";
import { matchEndpoint, STATUS_OF_CODE } from "../contract/index.js";
import { findingKey } from "../report/index.js";
import { KEY_VARIABLES } from "../target/key-roles.js";

/**
 * The other half of a replay script (src/run/replay.ts): the verdict of one response-level
 * check on the answer curl printed, and the id of an agent the script created.
 */

/** A status line, then its header lines (none, for a proxy's `200 Connection established`), then the blank line. */
const STATUS_BLOCK = /^HTTP\/[0-9.]+ (\d{3})[^\n]*\n((?:(?!\r?\n)[^\n]*\n)*)\r?\n/;

/**
 * A `curl -i` output: the service's answer, the last status block (after any 1xx, and after the
 * `200 Connection established` an https proxy answers to curl's CONNECT), and the body after it.
 */
export function parseCurlOutput(raw: string): ObservedExchange["response"] | undefined {
  let rest = raw;
  for (;;) {
    const m = STATUS_BLOCK.exec(rest);
    if (!m) return undefined;
    rest = rest.slice(m[0].length);
    const status = Number(m[1]);
    // an interim answer, or a proxy's answer to CONNECT: the service's own follows
    if ((status >= 100 && status < 200) || /^HTTP\/[0-9.]+ \d{3}/.test(rest)) continue;
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

/** The recorded request carried a key (its credential shows as `Bearer ***`). */
const carriesKey = (headers: Record<string, string>) => /^bearer \S/i.test(headers.authorization ?? "");

/** The violations `check` finds again in `response`, limited to the replayed finding when it is named. */
export function judgeAnswer(check: ResponseCheck, request: JudgedRequest, response: ObservedExchange["response"]) {
  const { method, url, headers } = request;
  const baseUrl = url.replace(/(\/v1)(\/.*)?$/, "$1");
  // every role's variable, the load scenarios' too (a finding under load replays with their keys)
  const keys = KEY_VARIABLES.map((v) => process.env[v]).filter((k): k is string => !!k);
  const now = Date.now();
  const ctx: CheckContext = {
    endpoint: matchEndpoint(method, url, { baseUrl })?.spec,
    authenticated: carriesKey(headers),
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

/**
 * A replay's verdict on the answer it got: exit 1 with a line a violation when the check finds the
 * finding again, 0 "gone" when it finds nothing, 2 "cannot tell" when the answer is a 401 to a
 * request that carried a key: a refused key (rotated, or not the run's) answers before anything
 * the finding was about, so nothing was judged (the 401 check alone judges exactly that answer).
 */
export function replayVerdict(
  check: ResponseCheck,
  request: JudgedRequest,
  response: ObservedExchange["response"],
): { code: 0 | 1 | 2; stdout: string; stderr?: string } {
  const { method, url, headers } = request;
  const found = judgeAnswer(check, request, response);
  if (found.length)
    return {
      code: 1,
      stdout: found.map((v) => `still there: ${v.clause}: expected ${v.expected}; received ${v.received}\n`).join(""),
    };
  if (response.status === STATUS_OF_CODE.UNAUTHORIZED && carriesKey(headers) && check.id !== "www-authenticate")
    return {
      code: 2,
      stdout: "",
      stderr: `judge: cannot tell: the service refused the request's key (401 at ${method} ${url}), so ${check.id} judged nothing the finding was about: is $AGENT_API_KEY the run's key?\n`,
    };
  return { code: 0, stdout: `gone: ${check.id} finds nothing at ${method} ${url} (answered ${response.status})\n` };
}
