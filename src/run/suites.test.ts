import { expect, test } from "vitest";
import { inClauseWords } from "./suites.js";

/** A test framework's wording, which a headline must translate. */
const MATCHER_TEXT = /expected .{1,200}? to (?:be|match|equal)\b|Object\.is/;

test.for([
  [
    "a matcher with a label",
    { name: "AssertionError", message: "WWW-Authenticate: expected '' to match /^\\s*bearer\\b/i", actual: '""' },
    'PROFILE §6 auth.required: Missing header, another scheme, empty or unknown key → 401 UNAUTHORIZED with WWW-Authenticate: Bearer. — WWW-Authenticate: received ""',
  ],
  [
    "a matcher on numbers (its actual is a number)",
    { name: "AssertionError", message: "expected 0 to be greater than 0 // Object.is equality", actual: 0 },
    "PROFILE §6 auth.required: Missing header, another scheme, empty or unknown key → 401 UNAUTHORIZED with WWW-Authenticate: Bearer. — received 0",
  ],
] as const)("%s: the headline is the clause and what was received, never the matcher", ([, error, headline]) => {
  const [first, ...rest] = inClauseWords(error, ["auth.required"]).split("\n");
  expect(first).toBe(headline);
  expect(first).not.toMatch(MATCHER_TEXT);
  // the matcher's own sentence stays below, for whoever debugs the check
  expect(rest[0]).toBe(error.message);
});

test("the harness's own failures already speak the clause's words", () => {
  const message = "PROFILE §5 list.order: GET /agents: expected id order; received …";
  expect(inClauseWords({ name: "ConformanceFailure", message }, ["list.order"])).toBe(message);
});
