import { describe, expect, test } from "vitest";
import { RATE_LIMITS } from "../../contract/index.js";
import type { LoadResponse } from "../recorder.js";
import { BucketLedger, bucketsOf } from "./ledger.js";
import { arrivalAt, streamsOf, type TenantAccount } from "./plan.js";

const account: TenantAccount = {
  id: "acct_a",
  tierLimit: 20,
  messageQuota: null,
  keys: [0, 1].map((index) => ({
    key: `k${index}`,
    index,
    account: "acct_a",
    permissions: ["agents:read", "agents:write", "agents:delete", "messages:send"],
  })),
};
const key = account.keys[0]!;

const answer = (status: number, rate: Partial<NonNullable<LoadResponse["rate"]>> = {}): LoadResponse => ({
  method: "GET",
  url: "http://x/v1/agents",
  endpoint: "GET /agents",
  status,
  headers: {},
  bodyText: "",
  json: undefined,
  code: status === 429 ? "RATE_LIMIT_EXCEEDED" : undefined,
  rate: { malformed: [], ...rate },
  requestId: `r${status}`,
  receivedAt: 0,
  latencyMs: 1,
});

describe("the bucket ledger", () => {
  const list = bucketsOf(key, account, "listAgents");

  test("a 429 while every bucket had room is unexpected; one after the tier filled is not", () => {
    const ledger = new BucketLedger(2000);
    for (let i = 0; i < 19; i++) ledger.record("key #0", account.id, list, { sentAt: i, settledAt: i + 1 }, answer(200));
    ledger.record("key #0", account.id, list, { sentAt: 30, settledAt: 31 }, answer(429, { limit: 20 }));
    expect(ledger.unexpectedRefusals().map((u) => u.clause)).toEqual(["limits.tier"]);
    ledger.record("key #0", account.id, list, { sentAt: 40, settledAt: 41 }, answer(200));
    ledger.record("key #0", account.id, list, { sentAt: 50, settledAt: 51 }, answer(429, { limit: 20 }));
    // the first 429 stays unexpected (it came before the 20th), the second is the tier's
    expect(ledger.unexpectedRefusals()).toHaveLength(1);
  });

  test("requests answered more than a window before a 429 cannot explain it", () => {
    const ledger = new BucketLedger(2000);
    for (let i = 0; i < 20; i++) ledger.record("key #0", account.id, list, { sentAt: i, settledAt: i + 1 }, answer(200));
    ledger.record("key #0", account.id, list, { sentAt: 2100, settledAt: 2101 }, answer(429, { limit: 20 }));
    expect(ledger.unexpectedRefusals()).toHaveLength(1);
  });

  test("more admitted answers than a bucket's size describing one window of it is an over-admission", () => {
    const ledger = new BucketLedger(2000);
    const inWindow = answer(200, { limit: 20, reset: 99 });
    // the first answer back shows the window had begun: the 21 sent after it were counted in it
    ledger.record("key #0", account.id, list, { sentAt: 0, settledAt: 5 }, inWindow);
    for (let i = 0; i < 21; i++) ledger.record("key #0", account.id, list, { sentAt: 10 + i, settledAt: 11 + i }, inWindow);
    expect(ledger.overAdmissions().map((o) => [o.bucket.kind, o.admitted])).toEqual([["tier", 21]]);
  });

  test("an answer that left after the window it was counted in describes the next: no over-admission (PROFILE §7 'now')", () => {
    const ledger = new BucketLedger(2000);
    const next = answer(200, { limit: 20, reset: 99 });
    // counted at the end of the previous window, its answer left once the next had begun
    ledger.record("key #0", account.id, list, { sentAt: 0, settledAt: 40 }, next);
    for (let i = 0; i < 20; i++) ledger.record("key #0", account.id, list, { sentAt: 10 + i, settledAt: 11 + i }, next);
    expect(ledger.overAdmissions()).toEqual([]);
  });

  test("a request sent one clock millisecond after the first answer describing the window settled was surely counted in it", () => {
    const ledger = new BucketLedger(2000);
    const inWindow = answer(200, { limit: 20, reset: 99 });
    ledger.record("key #0", account.id, list, { sentAt: 0, settledAt: 5 }, inWindow);
    // 20 sent later, and one at 6: a time read as 6 is after anything read as 5
    ledger.record("key #0", account.id, list, { sentAt: 6, settledAt: 9 }, inWindow);
    for (let i = 0; i < 20; i++) ledger.record("key #0", account.id, list, { sentAt: 10 + i, settledAt: 11 + i }, inWindow);
    expect(ledger.overAdmissions().map((o) => [o.bucket.kind, o.admitted])).toEqual([["tier", 21]]);
  });
});

describe("the plan", () => {
  test("every key stays under its share of each bucket, the account under its share of its tier", () => {
    const W = 2;
    const streams = streamsOf(account, 0.8, W);
    const total = streams.reduce((n, s) => n + s.perSecond, 0);
    expect(total).toBeCloseTo((0.8 * account.tierLimit) / W);
    for (const s of streams.filter((x) => x.shape === "getAgent"))
      expect(s.perSecond).toBeLessThanOrEqual((0.8 * RATE_LIMITS.perKeyEndpoint.getAgent) / W);
  });

  test("evenly spaced arrivals: never more than ⌈rate·W⌉ in any window, the ramp included", () => {
    const [rate, W] = [3.2, 2000];
    const times = Array.from({ length: 100 }, (_, n) => arrivalAt(n, rate, 5000, 0.37));
    for (const t of times)
      expect(times.filter((u) => u >= t && u < t + W).length).toBeLessThanOrEqual(Math.ceil((rate * W) / 1000));
    expect(times.at(-1)! - times.at(-2)!).toBeCloseTo(1000 / rate);
  });
});
