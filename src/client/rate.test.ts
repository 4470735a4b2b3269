import { describe, expect, test } from "vitest";
import { parseHeaderInteger, parseRateHeaders } from "./rate.js";

describe("parseRateHeaders", () => {
  test("reads the three X-RateLimit headers and Retry-After", () => {
    const rate = parseRateHeaders({
      "x-ratelimit-limit": "10",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "1795000000",
      "retry-after": "42",
    });
    expect(rate).toEqual({ limit: 10, remaining: 0, reset: 1795000000, retryAfter: 42, malformed: [] });
  });

  test("is undefined when none is present (a 401 counts against no limit)", () => {
    expect(parseRateHeaders({ "content-type": "application/json" })).toBeUndefined();
  });

  test("finds headers whatever the case of their names", () => {
    expect(parseRateHeaders({ "X-RateLimit-Limit": "60" })?.limit).toBe(60);
  });

  test.for([
    ["-1", "is not a non-negative integer"],
    ["1.5", "is not a non-negative integer"],
    ["1e2", "is not a non-negative integer"],
    ["+5", "is not a non-negative integer"],
    ["", "is not a non-negative integer"],
    ["abc", "is not a non-negative integer"],
    ["10, 10", "holds more than one value"],
    ["99999999999999999999", "is beyond 2^53-1"],
  ])("reports %j as malformed without throwing", ([value, issue]) => {
    const rate = parseRateHeaders({ "x-ratelimit-remaining": value, "x-ratelimit-limit": "10" });
    expect(rate?.remaining).toBeUndefined();
    expect(rate?.limit).toBe(10);
    expect(rate?.malformed).toEqual([{ header: "x-ratelimit-remaining", value, issue }]);
  });

  test("reports an HTTP-date Retry-After: PROFILE §7 asks for integer seconds", () => {
    const rate = parseRateHeaders({ "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" });
    expect(rate?.retryAfter).toBeUndefined();
    expect(rate?.malformed.map((m) => m.header)).toEqual(["retry-after"]);
  });

  test("reports a header sent twice", () => {
    const rate = parseRateHeaders({ "x-ratelimit-limit": ["10", "60"] });
    expect(rate?.limit).toBeUndefined();
    expect(rate?.malformed[0]).toMatchObject({ header: "x-ratelimit-limit", value: "10, 60", issue: "sent 2 times" });
  });
});

describe("parseHeaderInteger", () => {
  test("accepts leading zeros and surrounding whitespace", () => {
    expect(parseHeaderInteger(" 007 ")).toEqual({ value: 7 });
  });

  test("is undefined for an absent header", () => {
    expect(parseHeaderInteger(undefined)).toBeUndefined();
  });
});
