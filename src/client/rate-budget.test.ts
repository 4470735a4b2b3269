import { describe, expect, test } from "vitest";
import { ENDPOINTS } from "../contract/index.js";
import { FakeClock } from "./clock.js";
import type { RateHeaders } from "./rate.js";
import { endpointBucket, type PaceRequest, type PaceWait, RateBudget } from "./rate-budget.js";

const create = endpointBucket(ENDPOINTS.createAgent);
const list = endpointBucket(ENDPOINTS.listAgents);
const messages = (agentId: string) => endpointBucket(ENDPOINTS.sendMessage, agentId);

function setup(options: { windowSeconds?: number } = {}) {
  const clock = new FakeClock();
  const waits: PaceWait[] = [];
  const budget = new RateBudget({ clock, onWait: (w) => waits.push(w), ...options });
  const seconds = () => clock.now() / 1000;
  const rate = (limit: number, remaining: number, resetIn: number, retryAfter?: number): RateHeaders => ({
    limit,
    remaining,
    reset: Math.ceil(seconds() + resetIn),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    malformed: [],
  });
  /** acquire, then settle with the answer at once */
  const exchange = async (request: PaceRequest, status: number, headers?: RateHeaders, code?: string) => {
    const ticket = await budget.acquire(request);
    budget.settle(ticket, { status, code, rate: headers, receivedAt: clock.now() });
  };
  return { clock, budget, waits, rate, exchange };
}

const keyA = (bucket = create): PaceRequest => ({ key: "key:aaa", bucket });

describe("RateBudget", () => {
  test("the names of ENDPOINTS buckets", () => {
    expect([create.name, create.size]).toEqual(["keyEndpoint:createAgent", 10]);
    expect(messages("ag_1")).toEqual({ name: "agentMessages:ag_1", size: 60 });
  });

  test("sends at once while nothing is known", async () => {
    const { clock, budget, waits } = setup();
    await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([]);
    expect(waits).toEqual([]);
  });

  test("waits for X-RateLimit-Reset plus the margin once the endpoint's bucket is empty", async () => {
    const { clock, budget, waits, rate, exchange } = setup();
    await exchange(keyA(), 201, rate(10, 0, 30));
    const before = clock.now();
    await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([30_000 + 250]);
    expect(clock.now() - before).toBe(30_250);
    expect(waits).toEqual([{ bucket: "key:aaa/keyEndpoint:createAgent", waitMs: 30_250, reason: "empty until reset" }]);
  });

  test("counts locally between headers", async () => {
    const { clock, budget, rate, exchange } = setup();
    await exchange(keyA(), 201, rate(10, 2, 40));
    await budget.acquire(keyA());
    await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([]);
    await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([40_250]);
  });

  test("a refilled bucket admits its size again before any new header", async () => {
    const { clock, budget, rate, exchange } = setup();
    await exchange(keyA(), 201, rate(10, 0, 5));
    for (let i = 0; i < 10; i++) await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([5_250]);
  });

  test("an empty Create bucket does not hold back List once the tier's size is known", async () => {
    const { clock, rate, exchange, budget } = setup();
    // a List answer with Limit 60 while List is 60 and the tier unknown is ambiguous; a Create answer
    // with Limit 60 can only be the tier
    await exchange(keyA(), 201, rate(60, 45, 50));
    await exchange(keyA(), 201, rate(10, 0, 20));
    await budget.acquire(keyA(list));
    expect(clock.sleeps).toEqual([]);
  });

  test("headers whose Limit is not the endpoint's size describe the tier, which holds back every endpoint", async () => {
    const { clock, budget, rate, exchange } = setup();
    await exchange(keyA(), 201, rate(60, 0, 12));
    await budget.acquire(keyA(list));
    expect(clock.sleeps).toEqual([12_250]);
    expect(budget.snapshot().find((b) => b.name === "tier")).toMatchObject({ size: 60 });
  });

  test("the tier is the account's: two keys of one account share it, not their endpoint buckets", async () => {
    const { clock, budget, rate, exchange } = setup();
    await exchange({ key: "key:aaa", account: "acme", bucket: create }, 201, rate(10, 0, 30));
    await budget.acquire({ key: "key:bbb", account: "acme", bucket: create });
    expect(clock.sleeps).toEqual([]);
    await exchange({ key: "key:aaa", account: "acme", bucket: list }, 200, rate(25, 0, 9));
    await budget.acquire({ key: "key:bbb", account: "acme", bucket: list });
    expect(clock.sleeps).toEqual([9_250]);
  });

  test("a configured tier limit tells the buckets apart from the first answer", async () => {
    const { clock, budget, rate, exchange } = setup();
    await exchange({ key: "key:aaa", tierLimit: 300, bucket: list }, 200, rate(60, 0, 30));
    await budget.acquire({ key: "key:aaa", tierLimit: 300, bucket: create });
    expect(clock.sleeps).toEqual([]);
  });

  test("a 429 RATE_LIMIT_EXCEEDED is not counted; its Retry-After bounds the reset", async () => {
    const { clock, budget, rate, exchange } = setup();
    await exchange(keyA(), 429, rate(10, 0, 3, 7), "RATE_LIMIT_EXCEEDED");
    await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([7_250]);
  });

  test("a 401 gives back what it took", async () => {
    const { budget, rate, exchange } = setup();
    await exchange(keyA(), 201, rate(10, 5, 30));
    await exchange(keyA(), 401);
    expect(budget.snapshot().find((b) => b.name === create.name)?.remaining).toBe(5);
  });

  // PROFILE §7: only RATE_LIMIT_EXCEEDED is uncounted; a 429 with another code or none keeps what it took
  test.for(["INSUFFICIENT_QUOTA", undefined, "SLOW_DOWN"] as const)("a 429 %s is counted", async (code) => {
    const { budget, rate, exchange } = setup();
    await exchange(keyA(), 201, rate(10, 5, 30));
    await exchange(keyA(), 429, undefined, code);
    expect(budget.snapshot().find((b) => b.name === create.name)?.remaining).toBe(4);
  });

  test("subtracts requests still in flight from what a header says", async () => {
    const { budget, rate, clock } = setup();
    const first = await budget.acquire(keyA());
    budget.settle(first, { status: 201, rate: rate(10, 9, 30), receivedAt: clock.now() });
    const a = await budget.acquire(keyA());
    await budget.acquire(keyA());
    budget.settle(a, { status: 201, rate: rate(10, 8, 30), receivedAt: clock.now() });
    expect(budget.snapshot().find((b) => b.name === create.name)).toMatchObject({ remaining: 7, inFlight: 1 });
  });

  test("with an endpoint bucket not yet learnt, a second request waits for the first answer", async () => {
    const { budget, rate, clock, waits } = setup();
    const first = await budget.acquire(keyA());
    let secondSent = false;
    const second = budget.acquire(keyA()).then(() => {
      secondSent = true;
    });
    await Promise.resolve();
    expect(secondSent).toBe(false);
    budget.settle(first, { status: 201, rate: rate(10, 9, 30), receivedAt: clock.now() });
    await second;
    expect(secondSent).toBe(true);
    expect(waits.map((w) => w.reason)).toEqual(["awaiting an answer to learn the bucket"]);
  });

  test("a target without rate headers is not waited on", async () => {
    const { budget, exchange, clock } = setup();
    await exchange(keyA(), 201);
    await budget.acquire(keyA());
    await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([]);
  });

  test("wait: false counts without waiting, for checks that exhaust a bucket on purpose", async () => {
    const { budget, rate, exchange, clock } = setup();
    await exchange(keyA(), 201, rate(10, 0, 30));
    await budget.acquire(keyA(), { wait: false });
    expect(clock.sleeps).toEqual([]);
    expect(budget.snapshot().find((b) => b.name === create.name)?.remaining).toBe(-1);
  });

  test("Send Message counts per agent, across the account's keys", async () => {
    const { budget, rate, exchange, clock } = setup();
    await exchange({ key: "key:aaa", account: "acme", bucket: messages("ag_1") }, 200, rate(60, 0, 15));
    await budget.acquire({ key: "key:bbb", account: "acme", bucket: messages("ag_2") });
    expect(clock.sleeps).toEqual([]);
    await budget.acquire({ key: "key:bbb", account: "acme", bucket: messages("ag_1") });
    expect(clock.sleeps).toEqual([15_250]);
  });

  test("a reset further off than W + 1 s is not believed", async () => {
    const { budget, rate, exchange, clock } = setup({ windowSeconds: 2 });
    await exchange(keyA(), 201, rate(10, 0, 3_600));
    await budget.acquire(keyA());
    expect(clock.sleeps).toEqual([3_250]);
  });

  test("untilAccountFull waits for the last reset among the account's spent buckets, and for no other account's", async () => {
    const { clock, budget, rate, exchange } = setup({ windowSeconds: 10 });
    // a tier of Create's size: every Create answer tells both buckets exactly
    const acme = (key: string): PaceRequest => ({ key, account: "acme", bucket: create, tierLimit: 10 });
    // key:aaa's Create ends in 9 s; the tier, told last by key:bbb's answer, in 4 s
    await exchange(acme("key:aaa"), 201, rate(10, 6, 9));
    await exchange(acme("key:bbb"), 201, rate(10, 3, 4));
    await exchange({ key: "key:ccc", account: "other", bucket: create }, 201, rate(10, 0, 30));
    expect(await budget.untilAccountFull("acme")).toBe(9_250);
    // every window has ended: nothing to wait for
    expect(await budget.untilAccountFull("acme")).toBe(0);
    expect(await budget.untilAccountFull("nobody")).toBe(0);
    expect(clock.sleeps).toEqual([9_250]);
  });

  test("untilAccountFull waits W + 1 s after the last request of a bucket whose answers told no reset of its own", async () => {
    const { budget, rate, exchange, clock } = setup({ windowSeconds: 10 });
    // a List answer that describes the tier (Limit 25): List's own bucket has at least 20 left, its window untold
    await exchange({ key: "key:aaa", account: "acme", bucket: list }, 200, rate(25, 20, 3));
    clock.advance(2_000);
    expect(await budget.untilAccountFull("acme")).toBe(11_250 - 2_000);
  });

  describe("afterExhaustion", () => {
    test("waits for the later of Retry-After and X-RateLimit-Reset, plus the margin", async () => {
      const { budget, rate, clock, waits } = setup();
      const receivedAt = clock.now();
      clock.advance(1_000);
      const result = await budget.afterExhaustion({ receivedAt, rate: rate(10, 0, 20, 30) });
      expect(result).toEqual({ announced: true, waitedMs: 29_250 });
      expect(waits.map((w) => w.reason)).toEqual(["after exhaustion"]);
    });

    test("uses X-RateLimit-Reset alone when there is no Retry-After", async () => {
      const { budget, rate, clock } = setup();
      const result = await budget.afterExhaustion({ receivedAt: clock.now(), rate: rate(10, 0, 20) });
      expect(result.waitedMs).toBe(20_250);
    });

    test("falls back to the window W when nothing was announced (PROFILE §7), never a guess", async () => {
      const { budget, clock } = setup({ windowSeconds: 5 });
      // W + 1 s slack + the 250 ms margin: what PROFILE guarantees a bucket needs to refill
      expect(await budget.afterExhaustion({ receivedAt: clock.now(), rate: undefined })).toEqual({
        announced: false,
        waitedMs: 6_250,
      });
      expect(clock.sleeps).toEqual([6_250]);
    });

    test("a Remaining shown wrong once is a ceiling from then on: a header that never goes down costs one 429 a window", async () => {
      const { budget, clock, rate } = setup({ windowSeconds: 5 });
      const request = { key: "k", bucket: { name: "keyEndpoint:createAgent", size: 10 } };
      // a service whose Remaining always reads a full bucket: the 11th request of a window is a 429
      let sent = 0;
      let refused = 0;
      let windowStart = clock.now();
      for (let i = 0; i < 60; i++) {
        const ticket = await budget.acquire(request);
        if (clock.now() >= windowStart + 5_000) [windowStart, sent] = [clock.now(), 0];
        const resetIn = (windowStart + 5_000 - clock.now()) / 1000;
        const full = ++sent > 10;
        if (full) refused++;
        budget.settle(ticket, {
          status: full ? 429 : 201,
          code: full ? "RATE_LIMIT_EXCEEDED" : undefined,
          rate: full ? rate(10, 0, resetIn, Math.ceil(resetIn)) : rate(10, 10, resetIn),
          receivedAt: clock.now(),
        });
        if (full) sent--; // PROFILE §7: a 429 counts in no bucket
      }
      expect(refused).toBe(1);
      // 60 requests at 10 a window: about six windows, not more
      expect(clock.now() - Date.UTC(2026, 10, 22, 12, 0, 0)).toBeLessThanOrEqual(6 * 5_000 + 2_000);
    });

    test("a 429 the headers did not announce empties the bucket until the refill, not a cascade", async () => {
      const { budget, clock } = setup({ windowSeconds: 5 });
      const request = { key: "k", bucket: { name: "keyEndpoint:createAgent", size: 10 } };
      const reset = Math.ceil(clock.now() / 1000) + 3;
      // the headers claim 4 left (a wrong Remaining) while the answer is a 429 with Retry-After 3
      const ticket = await budget.acquire(request);
      budget.settle(ticket, {
        status: 429,
        code: "RATE_LIMIT_EXCEEDED",
        rate: { limit: 10, remaining: 4, reset, retryAfter: 3, malformed: [] },
        receivedAt: clock.now(),
      });
      const started = clock.now();
      await budget.acquire(request);
      expect(clock.now() - started).toBeGreaterThanOrEqual(3_000);
      expect(clock.now() - started).toBeLessThanOrEqual(6_250);
    });
  });
});
