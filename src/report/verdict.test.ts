import { expect, test } from "vitest";
import { Blocked, ConformanceFailure, classify, HarnessError, speaksInClauseWords } from "./verdict.js";

const serialized = (e: Error) => ({ ...JSON.parse(JSON.stringify(e)), name: e.name, message: e.message });

test.for([
  ["a bare assertion", [new Error("expected 1 to be 2")], { status: "failed" }],
  [
    "a conformance failure naming a clause",
    [new ConformanceFailure("x", "envelope.list")],
    { status: "failed", clauseAtFault: "envelope.list" },
  ],
  ["a blocked setup", [new Blocked("setup", "create.created")], { status: "blocked", clauseAtFault: "create.created" }],
  ["a harness error beside a failure", [new ConformanceFailure("x"), new HarnessError("no time")], { status: "error" }],
  ["a transport error", [Object.assign(new Error("reset"), { name: "TransportError" })], { status: "error" }],
  [
    "a clause the registry does not know",
    [new ConformanceFailure("x", "envelope.list"), { name: "Blocked", message: "", clause: "no.such" }],
    { status: "blocked", clauseAtFault: "envelope.list" },
  ],
] as const)("%s", ([, errors, verdict]) => {
  expect(classify(errors)).toEqual(verdict);
  // the CLI reads the error as vitest serialized it: its name and own fields
  expect(classify(errors.map((e) => (e instanceof Error ? serialized(e) : e)))).toEqual(verdict);
});

test("the harness's own errors speak the clause's words; a bare assertion does not", () => {
  expect(speaksInClauseWords(new ConformanceFailure("x"))).toBe(true);
  expect(speaksInClauseWords(new Error("expected 1 to be 2"))).toBe(false);
});
