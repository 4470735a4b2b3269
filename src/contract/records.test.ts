import { describe, expect, test } from "vitest";
import { isRecord } from "./index.js";

describe("isRecord: a JSON object, as bodies and their fields arrive", () => {
  test.for([
    ["an object", { a: 1 }, true],
    ["an empty object", {}, true],
    ["an object without a prototype", Object.create(null), true],
    ["null", null, false],
    ["an array", [1], false],
    ["an empty array", [], false],
    ["a string", "{}", false],
    ["a number", 0, false],
    ["a boolean", true, false],
    ["undefined", undefined, false],
  ] as const)("%s (%j) → %s", ([, value, expected]) => {
    expect(isRecord(value)).toBe(expected);
  });
});
