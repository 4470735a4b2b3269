import { expect, test } from "vitest";
import { RefusedAgain } from "../client/refusal.js";
import { vitestRunnerSources } from "../run/test-support-vitest.js";
import {
  Blocked,
  ConformanceFailure,
  classify,
  HarnessError,
  Inconclusive,
  inClauseWords,
  inconclusiveCause,
  MODEL_FAILED,
  speaksInClauseWords,
} from "./verdict.js";

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
  ["another client's activity", [new Inconclusive("2 agents this run did not make")], { status: "inconclusive" }],
  ["a failure beside an inconclusive case", [new ConformanceFailure("x"), new Inconclusive("seen")], { status: "failed" }],
  // the client's word that something other than this run spends a bucket the service said had room
  ["a request refused again and again", [new RefusedAgain("refused 4 times")], { status: "inconclusive" }],
  ["a harness error beside a refusal", [new RefusedAgain("refused"), new HarnessError("no time")], { status: "error" }],
  ["a transport error", [Object.assign(new Error("reset"), { name: "TransportError" })], { status: "error" }],
  // vitest's timeout (its runner's words, a plain Error): the run's bound ran out, not the service
  [
    "a check that outlasted its time",
    [
      new Error(
        'Test timed out in 56000ms.\nIf this is a long-running test, pass a timeout value as the last argument or configure it globally with "testTimeout".',
      ),
    ],
    { status: "error" },
  ],
  ["a hook that outlasted its time", [new Error("Hook timed out in 60000ms.")], { status: "error" }],
  ["an assertion that names a timeout", [new Error("expected 'Test timed out in 5ms' to be ''")], { status: "failed" }],
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

// a check that ran out of time is known by vitest's words: the installed runner must still write
// them, or a timeout would be read as a failure of the check's clauses again
test("vitest's runner words a timeout as the verdict reads it", () => {
  const sources = vitestRunnerSources();
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the runner's source text, searched as it is written
  const template = '`${isHook ? "Hook" : "Test"} timed out in ${timeout}ms.';
  expect(sources.some((source) => source.includes(template))).toBe(true);
});

test("the harness's own errors speak the clause's words; a bare assertion does not", () => {
  expect(speaksInClauseWords(new ConformanceFailure("x"))).toBe(true);
  expect(speaksInClauseWords(new Error("expected 1 to be 2"))).toBe(false);
});

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

test.for([
  ["another client seen", ["3 agent(s) not made by this run were listed"], /^another client's activity/],
  ["a load measurement", ["InconclusiveError: streams ended first"], /^a load measurement/],
  ["both", ["InconclusiveError: streams ended first", "Remaining spent by someone else"], /^another client's .*, or a load/],
  [
    "the deployment's model",
    [`property "messages": 1 case(s) not judged: ${MODEL_FAILED} a message`],
    /^the deployment's own model failed \(PROFILE §5/,
  ],
  [
    "two in one property",
    [`property "x": 2 case(s) not judged: another client's activity in the account: …; ${MODEL_FAILED} a message`],
    /^another client's activity in the account, or the deployment's own model failed/,
  ],
] as const)("an inconclusive verdict names its cause: %s", ([, messages, cause]) => {
  expect(inconclusiveCause(messages)).toMatch(cause);
});
