import { describe, expect, test } from "vitest";
import { ENDPOINTS } from "../contract/index.js";
import { FakeClock } from "./clock.js";
import { endpointBucket, type PaceRequest, type PaceWait, RateBudget } from "./rate-budget.js";
import { type AccountShare, SlidingCap, shareCap } from "./rate-share.js";

const list = endpointBucket(ENDPOINTS.listAgents);
const create = endpointBucket(ENDPOINTS.createAgent);
const GUEST = { tier: 10, endpoint: 3 };
const WINDOW_MS = 61_250; // W + 1 s + the default margin

function setup(side: AccountShare["side"]) {
  const clock = new FakeClock();
  const waits: PaceWait[] = [];
  const budget = new RateBudget({
    clock,
    windowSeconds: 60,
    onWait: (w) => waits.push(w),
    shares: { quota: { guest: GUEST, side } },
  });
  /** acquire, then the answer `latencyMs` later (no rate headers: only the cap paces) */
  const exchange = async (request: PaceRequest, status = 200, latencyMs = 100) => {
    const ticket = await budget.acquire(request);
    clock.advance(latencyMs);
    budget.settle(ticket, { status, receivedAt: clock.now() });
  };
  return { clock, budget, waits, exchange };
}

const quota = (bucket = list, tierLimit?: number): PaceRequest => ({
  key: "key:q",
  account: "quota",
  bucket,
  ...(tierLimit ? { tierLimit } : {}),
});

describe("a shared account: each side keeps to its part of every bucket", () => {
  test("the parts: the guest its fixed part, the host the rest; a host that does not know the tier has no cap on it", () => {
    const guest: AccountShare = { guest: GUEST, side: "guest" };
    const host: AccountShare = { guest: GUEST, side: "host" };
    expect(shareCap(guest, { isTier: true, size: undefined })).toBe(10);
    expect(shareCap(host, { isTier: true, size: 60 })).toBe(50);
    expect(shareCap(host, { isTier: true, size: undefined })).toBeUndefined();
    expect(shareCap(guest, { isTier: false, size: 10 })).toBe(3);
    expect(shareCap(host, { isTier: false, size: 10 })).toBe(7);
    expect(shareCap(guest, { isTier: false, size: 2 })).toBe(2);
  });

  test("the guest sends its part of the tier, then waits until the first request's place frees, a window past its answer", async () => {
    const { clock, budget, waits, exchange } = setup("guest");
    const start = clock.now();
    // different endpoints, so only the tier's part (10) binds, not an endpoint's (3)
    const endpoints = [ENDPOINTS.listAgents, ENDPOINTS.getAgent, ENDPOINTS.updateAgent, ENDPOINTS.deleteAgent];
    for (let i = 0; i < 10; i++) await exchange(quota(endpointBucket(endpoints[i % 4]!)), 200, 0);
    expect(clock.sleeps).toEqual([]);
    // the third List went first (requests 0, 4, 8 are Lists): the fourth List waits for the first's place
    await budget.acquire(quota(list));
    expect(clock.now() - start).toBe(WINDOW_MS);
    expect(waits.at(-1)?.reason).toBe("within this side's share");
  });

  test("the host takes the rest of the tier it was told (60 - 10)", async () => {
    const { clock, budget, exchange } = setup("host");
    for (let i = 0; i < 50; i++) await exchange({ key: "key:q", account: "quota", tierLimit: 60 }, 200, 0);
    expect(clock.sleeps).toEqual([]);
    await budget.acquire({ key: "key:q", account: "quota", tierLimit: 60 });
    expect(clock.sleeps).toEqual([WINDOW_MS]);
  });

  test("an endpoint bucket of the shared key is split too: the guest's 3 of Create's 10", async () => {
    const { clock, budget, exchange } = setup("guest");
    for (let i = 0; i < 3; i++) await exchange(quota(create), 201, 0);
    await budget.acquire(quota(create));
    expect(clock.sleeps).toEqual([WINDOW_MS]);
  });

  test("a place is held while the answer is awaited; a request counted nowhere (401, 429) frees its place at once", async () => {
    const { clock, budget, exchange } = setup("guest");
    // the tier alone (a path no endpoint has): ten answers awaited take the guest's ten places
    const tierOnly: PaceRequest = { key: "key:q", account: "quota" };
    const open = [];
    for (let i = 0; i < 10; i++) open.push(await budget.acquire(tierOnly));
    let through = false;
    const eleventh = budget.acquire(tierOnly).then(() => {
      through = true;
    });
    await Promise.resolve();
    expect(through).toBe(false);
    // PROFILE §6: a 401 counts in no bucket: its place is free again
    budget.settle(open[0]!, { status: 401, code: "UNAUTHORIZED", receivedAt: clock.now() });
    await eleventh;
    expect(through).toBe(true);
    // PROFILE §7: a RATE_LIMIT_EXCEEDED answer neither (here the concurrency cap's, which says nothing of the tier)
    const concurrency = { limit: 60, remaining: 40, reset: Math.ceil(clock.now() / 1000) + 30, retryAfter: 1, malformed: [] };
    budget.settle(open[1]!, { status: 429, code: "RATE_LIMIT_EXCEEDED", rate: concurrency, receivedAt: clock.now() });
    await budget.acquire(tierOnly);
    for (const ticket of open.slice(2)) budget.settle(ticket, { status: 200, receivedAt: clock.now() });
    expect(clock.sleeps).toEqual([]);
    // a counted answer holds its place a window on
    await exchange(tierOnly);
    expect(clock.sleeps).toEqual([WINDOW_MS]);
  });

  test("an account with no share, and per-agent message buckets, are not capped", async () => {
    const { clock, exchange } = setup("guest");
    for (let i = 0; i < 30; i++) await exchange({ key: "key:m", account: "main", bucket: list }, 200, 0);
    // 8 messages to one agent: over the guest's 3 of an endpoint bucket, within its 10 of the tier
    for (let i = 0; i < 8; i++)
      await exchange({ key: "key:q", account: "quota", bucket: endpointBucket(ENDPOINTS.sendMessage, "ag_1") }, 200, 0);
    expect(clock.sleeps).toEqual([]);
  });

  test("once the other side has ended, the cap stops applying a window later", async () => {
    const { clock, budget, exchange } = setup("guest");
    for (let i = 0; i < 3; i++) await exchange(quota(create), 201, 0);
    const endedAt = clock.now() - 30_000;
    budget.endShare("quota", endedAt);
    const before = clock.now();
    await budget.acquire(quota(create));
    // the later of the first place freeing and the share's end: here the share's end
    expect(clock.now() - before).toBe(endedAt + WINDOW_MS - before);
    for (let i = 0; i < 5; i++) await budget.acquire(quota(create));
    expect(clock.sleeps).toHaveLength(1);
  });

  test("SlidingCap: a place frees at its release time; an unanswered one only by an answer", () => {
    const cap = new SlidingCap(2);
    cap.take();
    cap.take();
    expect(cap.waitMs(0)).toBeUndefined();
    cap.release(5_000);
    expect(cap.waitMs(1_000)).toBe(4_000);
    expect(cap.waitMs(5_000)).toBe(0);
  });
});
