import { isDeepStrictEqual } from "node:util";
import type { BodyOptions, InvalidInput } from "../../src/arbitraries/bodies.js";
import type { ApiResult, ServiceClient } from "../../src/client/index.js";
import { type Agent, namesField } from "../../src/contract/index.js";
import { type JsonObject, type ModelAgent, predictCreate, recordOf } from "../../src/model/agents.js";
import { expect, target } from "../support/harness.js";
import { rememberTokens } from "./support.js";

/**
 * What the property files share: the body options of the run, and the plain steps a case takes
 * (an answer that must be 2xx, a 400 that must name a field, a create the model adopts).
 */

export const bodyOptions: BodyOptions = { namePrefix: target.runPrefix, referenceModels: target.referenceFaults };

/** The answer of a call, for an assertion message. */
export const said = (res: ApiResult<unknown>) =>
  `${res.exchange.request.method} ${res.exchange.request.url} → ${res.status} ${res.error?.code ?? ""} ${JSON.stringify(res.error?.details ?? "")}`;

/**
 * `expect(actual, message).toEqual(expected)`, with vitest's matcher machinery built only when the
 * two differ. The property suites compare every answer of every case with the model (some 20,000
 * comparisons in a default run), and an `expect` costs about 0.1 ms of CPU before it compares
 * anything (its state is copied on each call). Strict deep equality implies `toEqual`'s, so a
 * pass here is a pass there; any difference goes to `toEqual`, which judges it (undefined fields,
 * -0) and words the failure as before. The message is built only then. Not counted as an
 * assertion: each property's check asserts the cases it ran.
 */
export function expectEqual(actual: unknown, expected: unknown, message?: () => string): void {
  if (isDeepStrictEqual(actual, expected)) return;
  expect(actual, message?.()).toEqual(expected);
}

/** 2xx with a body that parses; the data. */
export function ok<T>(res: ApiResult<T>, status = 200): T {
  expectEqual({ status: res.status, parseIssues: res.parseIssues }, { status, parseIssues: [] }, () => said(res));
  return res.data as T;
}

/**
 * 400 INVALID_REQUEST for a fault in `field` (undefined when the whole body is at fault). Where
 * PROFILE asks the answer to name the field (`mustName`: an unknown or read-only key, a list
 * parameter), details[].field must name it; otherwise details may be left out (§2), but a
 * details[].field given must name it. `alsoAtFault`: a second fault the body has for the record it
 * is sent to (a platform that first appears without `enabled`): PROFILE §3 lets the answer name
 * either.
 */
export function invalid(res: ApiResult<unknown>, field: string | undefined, mustName: boolean, alsoAtFault?: string): void {
  expectEqual({ status: res.status, code: res.error?.code }, { status: 400, code: "INVALID_REQUEST" }, () => said(res));
  if (field === undefined) return;
  const named = (res.error?.details ?? []).map((d) => d.field).filter((f) => typeof f === "string" && f !== "");
  if (!mustName && named.length === 0) return;
  if (alsoAtFault !== undefined && namesField(named, alsoAtFault)) return;
  expect(namesField(named, field), `details[].field ${JSON.stringify(named)} should name ${field}`).toBe(true);
}

/** The record the target shows equals the model's, server-made fields aside; timestamps as PROFILE §4 says. */
export function expectRecord(actual: Agent, expected: ModelAgent): void {
  expectEqual(actual, recordOf(expected), () => `record of ${expected.id}`);
}

/** Create an agent the case needs; the model adopts the id and timestamps the target made. */
export async function createFor(client: ServiceClient, body: JsonObject): Promise<ModelAgent> {
  rememberTokens(body);
  const predicted = predictCreate(body);
  if (!predicted.ok) throw new Error(`the generator made an invalid create body: ${predicted.field}`);
  const agent = ok(await client.createAgent(body as never), 201);
  const model: ModelAgent = { id: agent.id, config: predicted.value, createdAt: agent.createdAt, updatedAt: agent.updatedAt };
  expectRecord(agent, model);
  return model;
}

export async function remove(client: ServiceClient, id: string): Promise<void> {
  const res = await client.deleteAgent(id);
  if (res.status !== 200 && res.status !== 404) expect([200, 404], said(res)).toContain(res.status);
}

/** Send an invalid body as the generator made it: an object as JSON, a raw body as is. */
export function sendInvalid(
  client: ServiceClient,
  endpoint: "createAgent" | "updateAgent" | "sendMessage",
  input: InvalidInput,
  agentId?: string,
) {
  rememberTokens(input.body);
  const body = "raw" in input.body ? { rawBody: input.body.raw as string } : { body: input.body };
  return client.call(endpoint, { ...body, ...(agentId ? { agentId } : {}) });
}
