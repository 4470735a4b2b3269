import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { LiteralSet, NO_LITERALS } from "./literals.js";

describe("LiteralSet", () => {
  test("answers exactly as `includes` over every member", () => {
    // a small alphabet makes members overlap, share openings and occur inside the text
    const word = (min: number, max: number) => fc.string({ unit: fc.constantFrom(..."abc-"), minLength: min, maxLength: max });
    fc.assert(
      fc.property(fc.array(word(0, 9), { maxLength: 12 }), word(0, 40), (members, text) => {
        const set = new LiteralSet(members);
        expect(set.foundIn(text)).toBe(members.some((m) => m !== "" && text.includes(m)));
        expect(set.size).toBe(new Set(members.filter((m) => m !== "")).size);
      }),
      { seed: 7, numRuns: 2000 },
    );
  });

  test("finds a token added after the first search, and nothing in an empty set", () => {
    const set = new LiteralSet(["tok-aaaa1111"]);
    const text = '{"data":{"platforms":{"slack":{"token":"tok-bbbb22223333"}}}}';
    expect(set.foundIn(text)).toBe(false);
    set.add("tok-bbbb22223333");
    expect(set.foundIn(text)).toBe(true);
    expect(NO_LITERALS.foundIn(text)).toBe(false);
  });
});
