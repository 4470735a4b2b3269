import { expect } from "vitest";
import type { ApiResult, Exchange } from "../../src/client/index.js";
import {
  budgetEndedWords,
  type ClauseId,
  type ErrorCode,
  endedByTheBudget,
  FIELD_NAMED_BY,
  isRecord,
  namesField,
  STATUS_OF_CODE,
} from "../../src/contract/index.js";
import { endpointLabel } from "../../src/report/findings.js";
import { Blocked, ConformanceFailure, HarnessError, Inconclusive, MODEL_FAILED } from "../../src/report/verdict.js";
import { isMasked, observeExchanges } from "./exchanges.js";
import { target } from "./target.js";

/**
 * The suites' assertions on an answer, as vitest matchers: each counts as an assertion (so
 * `requireAssertions` holds without a token `expect(true)`), and a failure reads in words, not
 * matcher text — `GET /agents/{agentId}: expected 200; received 404 AGENT_NOT_FOUND` — thrown as
 * the ConformanceFailure the report reads (src/report/verdict.ts).
 */

/** What the matchers read of an answer: its status, its error, the exchange that carried it. */
export interface Answer {
  status: number;
  error?: { code: string; details?: { field: string }[] } | undefined;
  exchange: Exchange;
}

const requestLabel = (ex: Exchange) => endpointLabel(ex.request.method, ex.request.url);
const answerOf = (res: Answer) =>
  `${res.status}${res.error ? ` ${res.error.code}` : res.status >= 400 ? " with no readable error code" : ""}${res.error?.details?.length ? ` (details: ${res.error.details.map((d) => d.field).join(", ")})` : ""}`;
const fieldsNamed = (res: Answer) => res.error?.details?.map((d) => d.field) ?? [];

/**
 * A matcher whose failure is the target's: thrown as a ConformanceFailure in the check's words —
 * unless the answer could not be read (a response check found its envelope or status broken):
 * then the check is blocked by that finding. Under `.not` it is an ordinary matcher.
 */
function conformance(
  this: { isNot: boolean },
  res: Answer,
  pass: boolean,
  message: () => string,
  /** the matcher expected a success: the reply a deployment's failing model may withhold */
  success = false,
) {
  if (!pass && !this.isNot) {
    if (isMasked(res.exchange))
      throw new Blocked(`${message()} — the answer could not be read (its envelope or status is broken)`);
    if (res.status === STATUS_OF_CODE.AGENT_UNAVAILABLE) unlessEndedByTheBudget(res.error?.code, res.exchange, message());
    // (an expected 400, 401, 403 or 404 answered MODEL_ERROR is a defect: the model was reached)
    if (success) unlessTheModelFailed(res.error?.code, res.exchange, message());
    throw new ConformanceFailure(message());
  }
  return { pass, message };
}

/**
 * The agents of this worker whose model failed a message (PROFILE §5: 500 MODEL_ERROR, or a
 * stream's error event; the agent is then in `error`, and its messages answer 503
 * AGENT_UNAVAILABLE until a PATCH brings it back). Every exchange feeds it, those no check judged
 * included. Only a deployment's own model fails so: on a target honouring the reference's mock
 * models (§10) a failure comes only from `mock-error`, which a check asks for.
 */
const modelFailedAgents = new Set<string>();
observeExchanges((ex) => {
  if (!ex.agentId) return;
  if (ex.endpoint === "sendMessage" && ex.response.bodyText.includes('"MODEL_ERROR"')) modelFailedAgents.add(ex.agentId);
  // a PATCH that leaves the agent out of error (PROFILE §5: status active brings it back), or a
  // delete, ends the excuse: the agent's 503s after it are the service's to explain
  else if (ex.response.status === 200 && (ex.endpoint === "deleteAgent" || (ex.endpoint === "updateAgent" && !inError(ex))))
    modelFailedAgents.delete(ex.agentId);
});

const inError = (ex: Exchange): boolean => {
  const json = ex.response.json;
  return isRecord(json) && isRecord(json.data) && json.data.status === "error";
};

/**
 * A message a deployment's own model failed, or one its agent refused as unavailable after that:
 * PROFILE §5 allows both, so the check that needed the reply cannot judge (inconclusive, in the
 * words the reports read as that cause).
 */
export function unlessTheModelFailed(code: string | undefined, ex: Exchange, expected: string): void {
  if (target.referenceFaults || ex.endpoint !== "sendMessage" || !ex.agentId) return;
  if (code === "MODEL_ERROR")
    throw new Inconclusive(`${expected}: ${MODEL_FAILED} (500 MODEL_ERROR, PROFILE §5 allows it); inconclusive`);
  if (code === "AGENT_UNAVAILABLE" && modelFailedAgents.has(ex.agentId))
    throw new Inconclusive(
      `${expected}: the agent is in error since ${MODEL_FAILED} an earlier message (PROFILE §5 allows it); inconclusive`,
    );
}

/** A message the budget ended (PROFILE §5, `endedByTheBudget`): the check cannot judge, and says so. */
export function unlessEndedByTheBudget(code: string | undefined, exchange: Exchange, expected: string): void {
  if (exchange.endpoint === "sendMessage" && endedByTheBudget(code, exchange.durationMs, target.messageTimeoutSeconds))
    throw new HarnessError(
      `${expected} after ${Math.round(exchange.durationMs)} ms: ${budgetEndedWords(target.messageTimeoutSeconds)}, as PROFILE §5 asks (a starved runner or a slow service, not a defect); inconclusive`,
    );
}

expect.extend({
  /** the answer has this status */
  toAnswer(res: Answer, status: number) {
    return conformance.call(
      this,
      res,
      res.status === status,
      () => `${requestLabel(res.exchange)}: expected ${status}; received ${answerOf(res)}`,
      status < 300,
    );
  },
  /** the answer is one of these errors: the status of its code and the code */
  toAnswerError(res: Answer, codes: readonly ErrorCode[]) {
    const wanted = codes.map((c) => `${STATUS_OF_CODE[c]} ${c}`).join(" or ");
    return conformance.call(
      this,
      res,
      codes.some((c) => STATUS_OF_CODE[c] === res.status && res.error?.code === c),
      () => `${requestLabel(res.exchange)}: expected ${wanted}; received ${answerOf(res)}`,
    );
  },
  /** the error's details[].field names one of these (PROFILE §2) */
  toNameField(res: Answer, fields: readonly string[]) {
    return conformance.call(
      this,
      res,
      fieldsNamed(res).some((f) => fields.includes(f)),
      () =>
        `${requestLabel(res.exchange)}: expected details[].field to name ${fields.length === 1 ? fields[0] : `one of ${fields.join(", ")}`} (PROFILE §2); received ${JSON.stringify(fieldsNamed(res))}`,
    );
  },
  /**
   * where the error gives details[].field at all, one names one of these (PROFILE §2: details are
   * optional, and when given, `field` names the field at fault)
   */
  toNameFieldIfAny(res: Answer, fields: readonly string[]) {
    const named = fieldsNamed(res).filter((f) => typeof f === "string" && f !== "");
    return conformance.call(
      this,
      res,
      named.length === 0 || fields.some((field) => namesField(named, field)),
      () =>
        `${requestLabel(res.exchange)}: details[].field names ${JSON.stringify(named)}, not the field at fault (${fields.join(" or ")}; PROFILE §2)`,
    );
  },
  /** no clause is broken: else a ConformanceFailure naming each in its clause's terms, then `note` */
  toBreakNoClause(this: { isNot: boolean }, broken: readonly string[], note: string) {
    const pass = broken.length === 0;
    const message = () => `${broken.join("\n")}\n${note}`;
    if (!pass && !this.isNot) throw new ConformanceFailure(message());
    return { pass, message };
  },
});

declare module "vitest" {
  interface Assertion<T> {
    toAnswer(status: number): T;
    toAnswerError(codes: readonly ErrorCode[]): T;
    toNameField(fields: readonly string[]): T;
    toNameFieldIfAny(fields: readonly string[]): T;
    toBreakNoClause(note: string): T;
  }
}

/**
 * Assert a success status and a body that parses with the endpoint's schema; return the data.
 * A body that breaks the schema is the success-schema check's finding: the check is blocked by it.
 */
export function expectOk<T>(res: ApiResult<T>, status = 200): T {
  expect(res).toAnswer(status);
  if (res.parseIssues.length)
    throw new Blocked(
      `${requestLabel(res.exchange)}: the ${status} body breaks its schema (${res.parseIssues
        .slice(0, 2)
        .map((i) => `${i.path || "body"}: ${i.message}`)
        .join("; ")})`,
    );
  return res.data as T;
}

/** Assert an error answer: its status, its code, and (optionally) a details entry naming `field`. */
export function expectError(res: Answer, code: ErrorCode | ErrorCode[], field?: string): void {
  const codes = Array.isArray(code) ? code : [code];
  // the right status with no code to read: the envelope check's finding says why; this check cannot judge
  if (res.error === undefined && codes.some((c) => STATUS_OF_CODE[c] === res.status))
    throw new Blocked(
      `${requestLabel(res.exchange)}: expected ${codes.map((c) => `${STATUS_OF_CODE[c]} ${c}`).join(" or ")}; the ${res.status} body has no readable error code (PROFILE §2 envelope)`,
    );
  expect(res).toAnswerError(codes);
  if (field !== undefined) expect(res).toNameField([field]);
}

/** A check title's words for what a rejection under `clause` must name. */
export const namingIn = (clause: ClauseId): string => (FIELD_NAMED_BY.has(clause) ? " naming the field" : "");

/**
 * A 400 INVALID_REQUEST for a fault in one of `fields` (a fault may be named at the item or its
 * list): details[].field must name it where the clause asks for it (FIELD_NAMED_BY), and may
 * otherwise be left out, but never name another field.
 */
export function expectInvalid(res: Answer, fields: readonly string[], clause: ClauseId): void {
  expectError(res, "INVALID_REQUEST");
  if (FIELD_NAMED_BY.has(clause)) expect(res).toNameField(fields);
  else expect(res).toNameFieldIfAny(fields);
}
