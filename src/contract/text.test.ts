import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { codePointLength, compareCodePoints } from "./index.js";

/** Hand-written from the PROFILE text (STYLE §2): the one comparator is backed by examples, not by a second copy. */
const { ascending } = JSON.parse(
  readFileSync(new URL("../../fixtures/boundaries/code-point-order.json", import.meta.url), "utf8"),
) as { ascending: string[] };

describe("PROFILE §5 code-point order, §4 code-point lengths", () => {
  test("compareCodePoints sorts the fixture's names into its order, from any start", () => {
    expect([...ascending].reverse().sort(compareCodePoints)).toEqual(ascending);
    expect([...ascending].sort(), "UTF-16 order differs, or the fixture proves nothing").not.toEqual(ascending);
  });

  test("one emoji counts 1", () => {
    expect(codePointLength("😀")).toBe(1);
    expect(compareCodePoints("😀", "😀a")).toBeLessThan(0);
  });
});
