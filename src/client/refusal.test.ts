import { describe, expect, test } from "vitest";
import { ENDPOINTS } from "../contract/index.js";
import { FakeClock } from "./clock.js";
import { compose, pacing, recording, refusals } from "./layers/index.js";
import { outgoing, scripted } from "./layers/test-support.js";
import type { RateHeaders } from "./rate.js";
import { endpointBucket, type PaceRequest, RateBudget, type RefusalWait } from "./rate-budget.js";
import { judgeRefusal, RateLimitBreach, type Refusal, RefusedAgain } from "./refusal.js";

const told = { limit: 10, remaining: 4, reset: 1_000, sentSince: 1 };
/** the same bucket refused with room by the harness's count in the window that ended at 995 */
const bucket = {
  label: "keyEndpoint:createAgent bucket of key:a",
  clause: "limits.endpoint-bucket" as const,
  told,
  refusedWithRoomIn: { reset: 995, room: 3 },
};
const refused: Refusal = { remaining: 0, reset: 1_000, retryAfterSeconds: 2, bucket };

describe("judgeRefusal: a 429 the pacing did not expect", () => {
  test("is a breach of the bucket's clause when its last answer in the window left more room than was sent since, in a second window", () => {
    const decision = judgeRefusal(refused);
    expect(decision).toMatchObject({ kind: "breach", clause: "limits.endpoint-bucket" });
    expect(decision.kind === "breach" && decision.message).toContain("said Remaining 4 of 10");
    expect(decision.kind === "breach" && decision.message).toContain("the same room (3) in the window ending 995");
  });

  test.for([
    ["the first time", undefined],
    ["again in the same window", { reset: 1_000, room: 3 }],
    ["in another window with other room (another client's spending varies)", { reset: 995, room: 5 }],
  ] as const)("is a wait that remembers the window when the bucket refuses with room %s: another client may have spent it unseen", ([
    ,
    before,
  ]) => {
    const decision = judgeRefusal({ ...refused, bucket: { ...bucket, refusedWithRoomIn: before } });
    expect(decision).toMatchObject({ kind: "wait", waitMs: 2_000, refusedWithRoomIn: { reset: 1_000, room: 3 } });
    expect(decision.kind === "wait" && decision.why).toContain("once is no proof");
  });

  test.for([
    ["Remaining was spent by what was sent since", { bucket: { ...bucket, told: { ...told, sentSince: 4 } } }, "sent 4 since"],
    ["the last answer was of another window", { reset: 1_001 }, "another window"],
    ["no answer of the bucket yet", { bucket: { ...bucket, told: undefined } }, "no earlier answer"],
    ["another client spends the bucket", { bucket: { ...bucket, notOwn: "another client" } }, "another client"],
    ["the 429 left room (the in-flight cap's)", { remaining: 3 }, "not 0"],
    ["no bucket of the request has its Limit", { bucket: undefined }, "tell apart"],
  ] as const)("is a wait for Retry-After when %s", ([, change, why]) => {
    const decision = judgeRefusal({ ...refused, ...change });
    expect(decision).toMatchObject({ kind: "wait", waitMs: 2_000 });
    expect(decision.kind === "wait" && decision.why).toContain(why);
  });

  test("without a Retry-After the wait is left to the caller (the window W)", () => {
    expect(judgeRefusal({ ...refused, retryAfterSeconds: undefined, bucket: undefined })).toMatchObject({ waitMs: undefined });
  });
});

describe("RateBudget: what it knows of a refusal", () => {
  const create = endpointBucket(ENDPOINTS.createAgent);
  const request: PaceRequest = { key: "key:a", bucket: create, tierLimit: 60 };
  const rate = (remaining: number, reset = 1_000, limit = 10): RateHeaders => ({ limit, remaining, reset, malformed: [] });

  function setup(shares = {}) {
    const clock = new FakeClock();
    const budget = new RateBudget({ clock, windowSeconds: 5, shares });
    const answer = async (status: number, headers: RateHeaders, code?: string) => {
      const ticket = await budget.acquire(request);
      const a = { status, code, rate: headers, receivedAt: clock.now() };
      budget.settle(ticket, a);
      return budget.refusal(ticket, a);
    };
    return { budget, answer };
  }

  test("counts what was sent since the bucket's last answer, requests in flight included", async () => {
    const { budget, answer } = setup();
    await answer(201, rate(9));
    // one more in flight when the 429 comes: it may have been counted first
    const inFlight = await budget.acquire(request);
    const refusal = await answer(429, { ...rate(0), retryAfter: 2 }, "RATE_LIMIT_EXCEEDED");
    expect(refusal.bucket?.told).toEqual({ limit: 10, remaining: 9, reset: 1_000, mark: 0, uncounted: 0, sentSince: 1 });
    expect(judgeRefusal(refusal)).toMatchObject({ kind: "wait", refusedWithRoomIn: { reset: 1_000, room: 8 } });
    budget.settle(inFlight, undefined);
  });

  test("a Remaining that dropped by more than was sent shows another client: no breach then", async () => {
    const { answer } = setup();
    await answer(201, rate(9));
    await answer(201, rate(6)); // one sent, three gone
    const refusal = await answer(429, { ...rate(0), retryAfter: 2 }, "RATE_LIMIT_EXCEEDED");
    expect(refusal.bucket?.notOwn).toContain("another client");
    expect(judgeRefusal(refusal).kind).toBe("wait");
  });

  test("the first answer of a window shows another client that spent the bucket before it: a steady neighbour", async () => {
    const { answer } = setup();
    await answer(201, rate(9));
    expect((await answer(201, rate(8))).bucket?.notOwn).toBeUndefined();
    // a new window: one request of this run's, yet four of ten are gone
    const next = await answer(201, rate(6, 1_002));
    expect(next.bucket?.notOwn).toContain("another client");
  });

  test("the first answer the run gets shows what others spent in the window before the run began", async () => {
    const { answer } = setup();
    expect((await answer(201, rate(7))).bucket?.notOwn).toContain("another client");
  });

  test("requests in flight across a window's end may all be counted in the new one: no other client then", async () => {
    const { budget, answer } = setup();
    await answer(201, rate(9));
    // three sent together as the window ends; the first answer of the new window counts all three
    const tickets = [await budget.acquire(request), await budget.acquire(request), await budget.acquire(request)];
    const settle = (t: (typeof tickets)[number], remaining: number) => {
      const a = { status: 201, rate: rate(remaining, 1_002), receivedAt: 0 };
      budget.settle(t, a);
      return budget.refusal(t, a);
    };
    expect(settle(tickets[2]!, 7).bucket?.notOwn).toBeUndefined();
    expect(settle(tickets[0]!, 7).bucket?.notOwn).toBeUndefined();
    // an answer of the window before, overtaken, is not the bucket's last word
    const late = settle(tickets[1]!, 8);
    expect(late.bucket?.told?.reset).toBe(1_002);
    expect(late.bucket?.notOwn).toBeUndefined();
  });

  test("a bucket whose size is the tier's is not told apart; nor is one of an account another lane shares", async () => {
    const list = { ...request, bucket: endpointBucket(ENDPOINTS.listAgents) };
    const { budget } = setup();
    const ticket = await budget.acquire(list);
    expect(budget.refusal(ticket, { status: 429, rate: rate(0, 1_000, 60), receivedAt: 0 }).bucket).toBeUndefined();
    const shared = setup({ "key:a": { side: "host", guest: { tier: 10, endpoint: 3 } } });
    expect((await shared.answer(429, { ...rate(0), retryAfter: 2 }, "RATE_LIMIT_EXCEEDED")).bucket?.notOwn).toContain(
      "another lane",
    );
  });
});

describe("refusals: the client layer acting on it", () => {
  const limited = (remaining: number) => ({
    status: 429,
    body: '{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":""}}',
    headers: { "retry-after": "2" },
    rate: { limit: 10, remaining, reset: 1_000, retryAfter: 2, malformed: [] },
  });
  const ok = (remaining: number) => ({ status: 201, rate: { limit: 10, remaining, reset: 1_000, malformed: [] } });

  function client(answers: Parameters<typeof scripted>[0]) {
    const clock = new FakeClock();
    const waits: RefusalWait[] = [];
    const budget = new RateBudget({ clock, windowSeconds: 5, onRefusalWait: (w) => waits.push(w) });
    const seen: number[] = [];
    const transport = scripted(answers, () => clock.now());
    const dispatch = compose(
      refusals(clock),
      recording((ex) => seen.push(ex.response.status)),
      pacing(budget, { key: "key:a", tierLimit: 60 }),
    )(transport);
    const create = () => dispatch(outgoing({ method: "POST", endpoint: "createAgent" }));
    return { clock, waits, seen, create };
  }

  test("a refusal that proves nothing waits exactly Retry-After, goes again and is counted per bucket", async () => {
    const { clock, waits, seen, create } = client([limited(0), ok(9)]);
    const outcome = await create();
    expect(outcome.exchange.response.status).toBe(201);
    expect(seen, "both attempts are recorded").toEqual([429, 201]);
    expect(clock.sleeps[0]).toBe(2_000);
    expect(waits).toEqual([
      { bucket: "key:a/keyEndpoint:createAgent", waitMs: 2_000, why: expect.stringContaining("no earlier") },
    ]);
  });

  test("a refusal the bucket's own answers disprove in two windows is thrown as a §7 finding, never handed to the check", async () => {
    const next = (answer: ReturnType<typeof ok>) => ({ ...answer, rate: { ...answer.rate, reset: 1_002 } });
    // a service that refuses each window's second create with nine of ten left
    const { create, seen } = client([ok(9), limited(0), ok(8), next(ok(9)), next(limited(0))]);
    await create();
    // once: waited out and sent again (another client on the key may have spent the bucket unseen)
    expect((await create()).exchange.response.status).toBe(201);
    await create();
    await expect(create()).rejects.toBeInstanceOf(RateLimitBreach);
    expect(seen).toEqual([201, 429, 201, 201, 429]);
  });

  test("a refusal with room after a drop this run did not send is never a finding: another client spends the bucket", async () => {
    const next = (answer: ReturnType<typeof ok>) => ({ ...answer, rate: { ...answer.rate, reset: 1_002 } });
    // window 1: refused with room; window 2: one create, then Remaining fell by three
    const { create } = client([ok(9), limited(0), ok(8), next(ok(9)), next(ok(6)), next(limited(0)), next(ok(4))]);
    for (let i = 0; i < 5; i++) expect((await create()).exchange.response.status).toBe(201);
  });

  test("a neighbour that spends the bucket at each window's start, then its last unit, is never a finding", async () => {
    const at = (reset: number) => (answer: ReturnType<typeof ok>) => ({ ...answer, rate: { ...answer.rate, reset } });
    const [w2, w3, w4] = [at(1_002), at(1_004), at(1_006)];
    // windows 2 and 3: the neighbour took eight before this run's first create and the last unit after it
    const { create, seen } = client([ok(9), limited(0), w2(ok(1)), w2(limited(0)), w3(ok(1)), w3(limited(0)), w4(ok(9))]);
    for (let i = 0; i < 4; i++) expect((await create()).exchange.response.status).toBe(201);
    expect(seen).toEqual([201, 429, 201, 429, 201, 429, 201]);
  });

  test("a neighbour that spends no more at a window's start than this run's refused requests were is seen all the same", async () => {
    const at = (reset: number) => (answer: ReturnType<typeof ok>) => ({ ...answer, rate: { ...answer.rate, reset } });
    const [w2, w3, w4] = [at(1_002), at(1_004), at(1_006)];
    // each window: the neighbour takes one unit before this run's first create, the rest after it;
    // the 429 before each retry was counted nowhere, so one unit gone beside the retry is the neighbour's
    const { create } = client([ok(9), limited(0), w2(ok(8)), w2(limited(0)), w3(ok(8)), w3(limited(0)), w4(ok(9))]);
    for (let i = 0; i < 4; i++) expect((await create()).exchange.response.status).toBe(201);
  });

  test("refused again and again: the harness cannot judge, a harness error", async () => {
    const { create } = client([limited(0)]);
    await expect(create()).rejects.toBeInstanceOf(RefusedAgain);
  });

  test("a request not paced (a check emptying a bucket on purpose) gets its 429 as it came", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ clock });
    const unpaced = compose(refusals(clock), pacing(budget, { key: "key:a" }))(scripted([limited(0)]));
    const outcome = await unpaced(outgoing({ method: "POST", endpoint: "createAgent", pace: false }));
    expect([outcome.exchange.response.status, clock.sleeps]).toEqual([429, []]);
  });
});
