/**
 * The reference server's tests read its answers here: a success envelope parsed by the
 * contract's schema after its status is asserted, an error's status, code and envelope
 * (PROFILE §2, §3), the fields an error names, a number header.
 */
import { expect } from "vitest";
import {
  type Agent,
  agentEnvelopeSchema,
  type ErrorEnvelope,
  errorEnvelopeSchema,
  listEnvelopeSchema,
  type MessageReply,
  messageEnvelopeSchema,
  type Pagination,
} from "../contract/index.js";

/** An answer as a test reads it: status, headers (lower-case names), body text and its JSON. */
export interface Res {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
  json: unknown;
}

export function agentOf(res: Res, status: 200 | 201 = 200): Agent {
  expect(res.status, res.body).toBe(status);
  return agentEnvelopeSchema.parse(res.json).data;
}

export function listOf(res: Res): { data: Agent[]; pagination: Pagination } {
  expect(res.status, res.body).toBe(200);
  const env = listEnvelopeSchema.parse(res.json);
  return { data: env.data, pagination: env.pagination };
}

export function replyOf(res: Res): MessageReply {
  expect(res.status, res.body).toBe(200);
  return messageEnvelopeSchema.parse(res.json).data;
}

/** An error answer: its status, code and envelope (PROFILE §2, §3); returns the error. */
export function expectError(res: Res, status: number, code: string): ErrorEnvelope["error"] {
  expect({ status: res.status, code: (res.json as ErrorEnvelope | undefined)?.error?.code }, res.body).toEqual({ status, code });
  expect(res.headers["content-type"]).toMatch(/^application\/json\b/);
  return errorEnvelopeSchema.parse(res.json).error;
}

/** PROFILE §7: a body of another media type is 415; one that is not a JSON object, 400 INVALID_REQUEST. */
export function expectBodyRefused(res: Res): void {
  expect([400, 415]).toContain(res.status);
  expectError(res, res.status, res.status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "INVALID_REQUEST");
}

/** The `details[].field` names of an error answer. */
export function fieldsOf(res: Res): string[] {
  return (errorEnvelopeSchema.parse(res.json).error.details ?? []).map((d) => d.field);
}

/** A number header, or NaN when absent. */
export const num = (res: Res, header: string) => Number(res.headers[header] ?? Number.NaN);
