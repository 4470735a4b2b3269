import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createAgentBodySchema, listQuerySchema, messageBodySchema, updateAgentBodySchema } from "../contract/index.js";
import { invalidBody, validCreateBody, validPatch } from "./bodies.js";
import { fromJsonSchema } from "./json-schema.js";
import { contextOfBytes, invalidMessage, validMessage } from "./messages.js";
import { invalidListQuery, validListQuery } from "./queries.js";
import { codePointString, exactCodePoints } from "./strings.js";

/* The generators make what they claim: valid inputs parse with the contract, invalid ones do not. */

const options = { namePrefix: "ah-test-", referenceModels: true };
const sample = <T>(arb: fc.Arbitrary<T>, n = 200) => fc.sample(arb, { seed: 42, numRuns: n });

describe("arbitraries", () => {
  test("strings are bounded in code points, exact ones exact", () => {
    for (const s of sample(codePointString(1, 5))) expect([...s].length).toBeGreaterThanOrEqual(1);
    for (const s of sample(codePointString(1, 5))) expect([...s].length).toBeLessThanOrEqual(5);
    for (const s of sample(exactCodePoints(101), 50)) expect([...s].length).toBe(101);
  });

  test("valid create bodies and patches parse with the contract", () => {
    for (const { value } of sample(validCreateBody(options)))
      expect(createAgentBodySchema.safeParse(value).error).toBeUndefined();
    for (const { value } of sample(validPatch(options))) expect(updateAgentBodySchema.safeParse(value).error).toBeUndefined();
  });

  test("json-schema-faker cases replay from fast-check's seed", () => {
    const a = fc.sample(validCreateBody(options), { seed: 7, numRuns: 30 });
    const b = fc.sample(validCreateBody(options), { seed: 7, numRuns: 30 });
    expect(a).toEqual(b);
    expect(a.some((g) => g.generator === "create.json-schema-faker")).toBe(true);
  });

  test("json-schema-faker's bodies are valid as drawn: none is thrown away and drawn again", () => {
    // lists with no minItems once came out up to 60 long against a maxItems of 20: half the draws wasted
    const drawn = sample(fromJsonSchema(createAgentBodySchema, (raw) => raw));
    expect(drawn.filter((body) => !createAgentBodySchema.safeParse(body).success)).toEqual([]);
  });

  test("invalid bodies fail the contract", () => {
    const base = validCreateBody(options).map((g) => g.value as Record<string, unknown>);
    for (const input of sample(invalidBody("create", base))) {
      if ("raw" in input.body) continue;
      expect(createAgentBodySchema.safeParse(input.body).success, JSON.stringify(input)).toBe(false);
    }
  });

  test("list queries and messages: valid parse, invalid do not", () => {
    for (const { value } of sample(validListQuery())) expect(listQuerySchema.safeParse(value).success).toBe(true);
    for (const q of sample(invalidListQuery())) expect(listQuerySchema.safeParse(q.query).success, JSON.stringify(q)).toBe(false);
    for (const { value } of sample(validMessage())) expect(messageBodySchema.safeParse(value).success).toBe(true);
    for (const m of sample(invalidMessage())) expect(messageBodySchema.safeParse(m.body).success, m.generator).toBe(false);
  });

  test("a context of exactly 16 KiB in UTF-8, whatever the padding character", () => {
    for (const pad of ["a", "é", "€", "😀"]) expect(Buffer.byteLength(JSON.stringify(contextOfBytes(16_384, pad)))).toBe(16_384);
  });
});
