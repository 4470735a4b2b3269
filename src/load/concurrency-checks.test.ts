import { describe, expect, test } from "vitest";
import { AGENT_DEFAULTS, type Agent, agentSchema, HEADERS } from "../contract/index.js";
import {
  ConcurrencyChecks,
  echoes,
  expectPatchesTookEffect,
  nextRequestId,
  patchBurst,
  remainingLine,
} from "./concurrency-checks.js";
import type { LoadResponse } from "./recorder.js";

const KEY = "ak_test_concurrency_0001";
/** Create's bucket (PROFILE §7: 10 a window), on an account whose tier is far larger */
const SIZE = 10;
const W = 2;
/** a window ending at T0 + W (target clock = harness clock here) */
const T0 = 1_800_000_000;
const RESET = T0 + W;

function answerOf(o: { sentAt: number; receivedAt: number; remaining: number; reset?: number; status?: number }): LoadResponse {
  const status = o.status ?? 201;
  return {
    method: "POST",
    url: "http://127.0.0.1/v1/agents",
    endpoint: "POST /agents",
    status,
    headers: {},
    bodyText: "",
    json: undefined,
    code: status === 429 ? "RATE_LIMIT_EXCEEDED" : undefined,
    rate: { limit: SIZE, remaining: o.remaining, reset: o.reset ?? RESET, malformed: [] },
    requestId: undefined,
    receivedAt: o.receivedAt,
    latencyMs: o.receivedAt - o.sentAt,
  };
}

/** The checks of one scenario, and the findings they make. */
function checks(tier: { of: number | undefined } = { of: 1_000_000 }) {
  const found: string[] = [];
  const c = new ConcurrencyChecks({
    windowSeconds: W,
    clock: { offsetSeconds: 0, toleranceSeconds: 0 },
    tierOf: () => tier.of,
    fail: (clause, check, _expected, received) => found.push(`${clause} ${check}: ${received}`),
  });
  const answer = (res: LoadResponse) => c.answer({ key: KEY, endpoint: "createAgent" }, res);
  // the previous window, seen ending at T0: the burst below starts in a fresh one (ms on the harness clock)
  answer(answerOf({ sentAt: (T0 - W) * 1000, receivedAt: (T0 - W) * 1000 + 5, remaining: SIZE - 1, reset: T0 }));
  return { c, found, answer };
}

/** A burst of `remaining.length` answers sent at once just after T0, received in this order. */
function burstOf(remaining: readonly number[], from = T0 * 1000 + 10, reset = RESET) {
  return remaining.map((r, i) => answerOf({ sentAt: from, receivedAt: from + 5 + i, remaining: r, reset }));
}

describe("X-RateLimit-Remaining under concurrency (PROFILE §7)", () => {
  test.for<[string, number[]]>([
    ["counted and described one by one", [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]],
    ["described when each answer leaves, after all were counted", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
    ["answered out of the order of counting", [7, 9, 8, 4, 6, 5, 1, 3, 2, 0]],
    ["some described at counting, some at leaving", [9, 7, 7, 4, 4, 4, 0, 0, 0, 0]],
  ])("a conformant burst passes: %s", ([_title, remaining]) => {
    const { c, found, answer } = checks();
    for (const r of burstOf(remaining)) answer(r);
    c.judgeRemaining();
    expect(found).toEqual([]);
  });

  test.for<[string, number[]]>([
    ["two answers claim to be the first counted", [9, 9, 8, 7]],
    ["every answer leaves out the others in flight", [9, 9, 9, 9, 9, 9, 9, 9, 9, 9]],
    ["a counted answer leaves the bucket full", [10]],
  ])("an impossible burst is a finding: %s", ([_title, remaining]) => {
    const { c, found, answer } = checks();
    for (const r of burstOf(remaining)) answer(r);
    c.judgeRemaining();
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^limits\.headers remaining-under-concurrency: /);
  });

  test("an answer received before a request was sent was counted before it", () => {
    const { c, found, answer } = checks();
    const first = answerOf({ sentAt: T0 * 1000 + 10, receivedAt: T0 * 1000 + 20, remaining: 8 });
    // sent after the first came back: at most 10 − 2 left, however far apart
    const second = answerOf({ sentAt: T0 * 1000 + 30, receivedAt: T0 * 1000 + 40, remaining: 9 });
    answer(first);
    answer(second);
    c.judgeRemaining();
    expect(found).toHaveLength(1);
  });

  test("the 429s of an empty bucket are counted in none, and a window's refusals prove it had begun", () => {
    const { c, found, answer } = checks();
    for (const r of burstOf([9, 8, 7])) answer(r);
    for (let i = 0; i < 5; i++)
      answer(answerOf({ sentAt: T0 * 1000 + 10, receivedAt: T0 * 1000 + 30, remaining: 0, status: 429 }));
    c.judgeRemaining();
    expect(found).toEqual([]);
  });

  test("no false alarm where an answer may describe a window it was not counted in", () => {
    // no earlier window seen: the burst might straddle the turn of a window (a slow answer
    // counted in one window, described in the next, PROFILE §7)
    const found: string[] = [];
    const c = new ConcurrencyChecks({
      windowSeconds: W,
      clock: { offsetSeconds: 0, toleranceSeconds: 0 },
      tierOf: () => 1_000_000,
      fail: (_clause, _check, _expected, received) => found.push(received),
    });
    for (const r of burstOf([10, 10, 10])) c.answer({ key: KEY, endpoint: "createAgent" }, r);
    // answers that came back more than W after the previous window ended: a window may have turned
    const late = checks();
    for (const r of burstOf([10, 10, 10], (T0 + W) * 1000 + 10, RESET + W)) late.answer(r);
    c.judgeRemaining();
    late.c.judgeRemaining();
    expect([...found, ...late.found]).toEqual([]);
  });

  test("the judgement says what it judged, and why it judged nothing where it could not", () => {
    const { c, answer } = checks();
    for (const r of burstOf([9, 8, 7, 6, 5, 4, 3, 2, 1, 0])) answer(r);
    // the previous window's answer is counted, not judged: nothing was seen before it
    expect(c.judgeRemaining()).toEqual({ answers: 11, judged: 10, windows: 1 });

    const late = checks();
    for (const r of burstOf([9, 8, 7], (T0 + W) * 1000 + 10, RESET + W)) late.answer(r);
    expect(late.c.judgeRemaining()).toMatchObject({
      answers: 4,
      judged: 0,
      unjudged: expect.stringMatching(/^none was sent after its window was seen to hold a request, nor came back/),
    });

    // PROFILE §7 Reset is in whole seconds: at W = 1 s a burst just after a window's end is never surely in the next
    const oneSecond = new ConcurrencyChecks({
      windowSeconds: 1,
      clock: { offsetSeconds: 0, toleranceSeconds: 0 },
      tierOf: () => 1_000_000,
      fail: () => {},
    });
    const at = (res: LoadResponse) => oneSecond.answer({ key: KEY, endpoint: "createAgent" }, res);
    at(answerOf({ sentAt: (T0 - 1) * 1000, receivedAt: (T0 - 1) * 1000 + 5, remaining: SIZE - 1, reset: T0 }));
    for (const r of burstOf([9, 8, 7], T0 * 1000 + 10, T0 + 1)) at(r);
    const tally = oneSecond.judgeRemaining();
    expect(tally).toMatchObject({ answers: 4, judged: 0 });
    expect(remainingLine(tally)).toMatch(
      /not judged on its 4 answers: none was sent .*, the only way an answer is judged at W = 1 s /,
    );
  });

  test("an answer that may describe the tier is not judged: its size is the tier's, or the tier is unknown", () => {
    for (const tier of [SIZE, undefined]) {
      const { c, found, answer } = checks({ of: tier });
      for (const r of burstOf([9, 9, 9])) answer(r);
      c.judgeRemaining();
      expect(found).toEqual([]);
    }
  });
});

describe("X-Request-Id under concurrency (PROFILE §1)", () => {
  test("ids are unique and of the echoed form; an answer carrying another request's id is told apart", () => {
    const ids = Array.from({ length: 1000 }, nextRequestId);
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    expect(echoes(ids[0], { headers: { [HEADERS.requestId]: ids[0]! } })).toBe(true);
    expect(echoes(ids[0], { headers: { [HEADERS.requestId]: ids[1]! } })).toBe(false);
    expect(echoes(undefined, { headers: {} })).toBe(true);
  });
});

describe("concurrent PATCHes of different fields (PROFILE §5 Update)", () => {
  // an agent of the contract's defaults (PROFILE §4), with the fields a test sets
  const agentWith = (over: Partial<Agent>): Agent =>
    agentSchema.parse({
      ...AGENT_DEFAULTS,
      id: "agt_1",
      name: "a",
      createdAt: "2026-11-21T00:00:00.000Z",
      updatedAt: "2026-11-21T00:00:00.000Z",
      ...over,
    });

  test("every field a 200 set reads back set; a lost one, or one set by refused PATCHes only, is a finding", () => {
    const { group, fields } = patchBurst("agt_1", 25);
    expect(group.mix.map((r) => r.endpoint)).toEqual(fields.map(() => "updateAgent"));
    const [traits, expertise, , , plugins] = fields;
    const tag = traits!.tag;
    const answer = (request: (typeof fields)[number]["request"], status: number) => ({
      ...answerOf({ sentAt: 0, receivedAt: 1, remaining: 0, status }),
      request,
    });
    const answers = [answer(traits!.request, 200), answer(expertise!.request, 200), answer(plugins!.request, 429)];
    const found: string[] = [];
    const fail = (clause: string, check: string, expected: string) => found.push(`${clause} ${check} ${expected.split(":")[0]}`);
    const both = agentWith({ personality: { traits: [tag] }, knowledge: { expertise: [tag], knowledgeBases: [] } });
    expectPatchesTookEffect(fields, answers, both, fail);
    expect(found).toEqual([]);
    // the expertise PATCH was answered 200 but a concurrent one wrote the field back
    expectPatchesTookEffect(fields, answers, agentWith({ personality: { traits: [tag] } }), fail);
    expect(found).toEqual(["update.merge-patch concurrent-patches knowledge.expertise"]);
    found.length = 0;
    expectPatchesTookEffect(fields, answers, { ...both, plugins: [tag] }, fail);
    expect(found).toEqual(["limits.429 concurrent-patches plugins"]);
  });
});
