import { describe, expect, test } from "vitest";
import { internalErrorLine } from "./exit-guard.js";

describe("an internal error's message", () => {
  test("is one line that says it is the harness's, not the service's", () => {
    const line = internalErrorLine(new Error("No test files found\nsecond line"), {});
    expect(line.split("\n")).toHaveLength(1);
    expect(line).toBe("agent-harness: internal error (a harness error, not a finding about the service): No test files found");
  });

  test("names an error's class when it is not a plain Error, and takes anything thrown", () => {
    expect(internalErrorLine(new TypeError("x is undefined"), {})).toMatch(/: TypeError: x is undefined$/);
    expect(internalErrorLine("a string", {})).toMatch(/: a string$/);
  });

  test("carries the stack only when AGENT_HARNESS_DEBUG is set", () => {
    const err = new Error("boom");
    expect(internalErrorLine(err, { AGENT_HARNESS_DEBUG: "1" }).split("\n").length).toBeGreaterThan(1);
  });
});
