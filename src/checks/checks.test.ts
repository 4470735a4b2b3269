import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { LiteralSet } from "../client/literals.js";
import { ENDPOINTS, matchEndpoint } from "../contract/index.js";
import type { CheckContext, ObservedExchange, ResponseCheck } from "./define.js";
import { resetBounds } from "./rate-limit-headers.js";
import { RESPONSE_CHECKS } from "./registry.js";
import { runChecks } from "./run.js";

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const KEY = "ak_test_key_0123456789";
const TOKEN = "tok-secret-platform-token";

/** A conforming authenticated 200 list answer; each row below breaks one thing in it. */
function answer(
  over: {
    status?: number;
    headers?: Record<string, string | undefined>;
    body?: unknown;
    request?: Record<string, string>;
    leaks?: string[];
  } = {},
): ObservedExchange {
  const body = over.body ?? {
    success: true,
    data: [],
    pagination: { page: 1, limit: 20, total: 0, totalPages: 0, hasMore: false },
  };
  const headers: Record<string, string | undefined> = {
    "content-type": "application/json; charset=utf-8",
    "x-request-id": "req_1",
    "x-ratelimit-limit": "60",
    "x-ratelimit-remaining": "59",
    "x-ratelimit-reset": String(Math.ceil(NOW / 1000) + 30),
    ...over.headers,
  };
  const bodyText = typeof body === "string" ? body : JSON.stringify(body);
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    json = undefined;
  }
  return {
    request: { method: "GET", url: "http://127.0.0.1/v1/agents", headers: { authorization: "Bearer ***", ...over.request } },
    response: { status: over.status ?? 200, headers, bodyText, json },
    ...(over.leaks ? { leaks: over.leaks } : {}),
  };
}

const ctx = (over: Partial<CheckContext> = {}): CheckContext => ({
  endpoint: ENDPOINTS.listAgents,
  authenticated: true,
  keys: [KEY],
  tokens: new LiteralSet([TOKEN]),
  windowSeconds: 60,
  receivedAt: NOW,
  clockSkewSeconds: 0,
  ...over,
});

const error = (code: string) => ({ success: false, error: { code, message: "m" } });
const reset = (s: number) => String(Math.ceil(NOW / 1000) + s);

/** Each row: one defect, and the check that must name it. Every registered check has one. */
const CATCHING_ROWS: [string, string, ObservedExchange, Partial<CheckContext>?][] = [
  ["json-content-type", "text/plain on JSON", answer({ headers: { "content-type": "text/plain" } })],
  ["request-id", "no X-Request-Id", answer({ headers: { "x-request-id": undefined } })],
  ["request-id-echo", "a client id not echoed", answer({ request: { "x-request-id": "mine-1" } })],
  ["envelope", "a success without data", answer({ body: { success: true } })],
  ["envelope", "an error without code", answer({ status: 400, body: { success: false, error: { message: "m" } } })],
  ["status-pairing", "404 with INVALID_REQUEST", answer({ status: 404, body: error("INVALID_REQUEST") })],
  ["status-pairing", "a status outside §3", answer({ status: 422, body: error("INVALID_REQUEST") })],
  ["no-5xx-on-input", "500 on a list", answer({ status: 500, body: error("INTERNAL_ERROR") })],
  ["rate-limit-headers", "no X-RateLimit-Remaining", answer({ headers: { "x-ratelimit-remaining": undefined } })],
  ["rate-limit-headers", "Remaining above Limit", answer({ headers: { "x-ratelimit-remaining": "61" } })],
  ["rate-limit-headers", "Reset in milliseconds", answer({ headers: { "x-ratelimit-reset": String(NOW + 30_000) } })],
  ["rate-limit-headers", "Reset in the past", answer({ headers: { "x-ratelimit-reset": reset(-5) } })],
  [
    "retry-after",
    "a 429 without Retry-After",
    answer({ status: 429, body: error("RATE_LIMIT_EXCEEDED"), headers: { "x-ratelimit-remaining": "0" } }),
  ],
  [
    "retry-after",
    "Retry-After disagreeing with Reset",
    answer({ status: 429, body: error("RATE_LIMIT_EXCEEDED"), headers: { "x-ratelimit-remaining": "0", "retry-after": "50" } }),
  ],
  [
    "quota-no-retry-after",
    "Retry-After on INSUFFICIENT_QUOTA",
    answer({ status: 429, body: error("INSUFFICIENT_QUOTA"), headers: { "retry-after": "5" } }),
  ],
  [
    "success-schema",
    "hasMore true on the last page",
    answer({ body: { success: true, data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0, hasMore: true } } }),
  ],
  [
    "success-schema",
    "a record with an extra field",
    answer({ body: { success: true, data: { id: "agt_1", accountId: "acct_a" } } }),
    { endpoint: ENDPOINTS.getAgent },
  ],
  [
    "updated-after-created",
    "a record updated before it was created",
    answer({ body: { success: true, data: { createdAt: "2026-11-22T12:00:01.000Z", updatedAt: "2026-11-22T12:00:00.999Z" } } }),
    { endpoint: ENDPOINTS.getAgent },
  ],
  ["www-authenticate", "a 401 without WWW-Authenticate", answer({ status: 401, body: error("UNAUTHORIZED") })],
  ["no-key-in-response", "a key the client redacted", answer({ leaks: ["header:x-debug"] })],
  ["no-key-in-response", "a key in a recorded body", answer({ body: { success: true, data: { echo: KEY } } })],
  ["no-token-field", "a token member", answer({ body: { success: true, data: { platforms: { discord: { token: "x" } } } } })],
  ["no-token-value", "a sent token under another name", answer({ body: { success: true, data: { secret: TOKEN } } })],
];

describe("response-level checks", () => {
  test("a conforming answer breaks none", () => {
    expect(runChecks(answer(), ctx())).toEqual([]);
  });

  test.for(CATCHING_ROWS)("%s catches %s", ([id, _title, ex, over]) => {
    expect(runChecks(ex, ctx(over)).map((v) => v.check)).toContain(id);
  });

  test("an answer without X-Request-Id to a request that sent one is one finding: the request-id check's", () => {
    const ex = answer({ request: { "x-request-id": "mine-1" }, headers: { "x-request-id": undefined } });
    expect(runChecks(ex, ctx()).map((v) => v.check)).toEqual(["request-id"]);
  });

  test("every registered check has a row above that makes it fail, and every row names a registered check", () => {
    const registered = RESPONSE_CHECKS.map((c) => c.id).sort();
    expect([...new Set(CATCHING_ROWS.map(([id]) => id))].sort()).toEqual(registered);
  });

  test("each check is the default export of src/checks/<its id>.ts, and the registry lists each such file once", async () => {
    const infrastructure = new Set(["define.ts", "registry.ts", "run.ts", "layer.ts"]);
    const files = readdirSync(dirname(fileURLToPath(import.meta.url))).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !infrastructure.has(f),
    );
    const defaults = await Promise.all(
      files.map(
        async (f) => [f, ((await import(`./${f.replace(/\.ts$/, ".js")}`)) as { default?: ResponseCheck }).default] as const,
      ),
    );
    expect(defaults.filter(([f, check]) => check?.id !== f.replace(/\.ts$/, "")).map(([f]) => f)).toEqual([]);
    expect([...RESPONSE_CHECKS].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      defaults.map(([, check]) => check).sort((a, b) => (a?.id ?? "").localeCompare(b?.id ?? "")),
    );
  });

  test("the allowed 5xx of Send Message and a concurrency 429 are not defects", () => {
    const msg = ctx({ endpoint: ENDPOINTS.sendMessage });
    expect(runChecks(answer({ status: 500, body: error("MODEL_ERROR") }), msg)).toEqual([]);
    expect(runChecks(answer({ status: 503, body: error("AGENT_UNAVAILABLE") }), msg)).toEqual([]);
    const concurrency = answer({ status: 429, body: error("RATE_LIMIT_EXCEEDED"), headers: { "retry-after": "1" } });
    expect(runChecks(concurrency, msg)).toEqual([]);
  });

  // PROFILE §7: the 11th message in flight → Retry-After: 1, its X-RateLimit-* describing the buckets
  // as on any response: a bucket the last admitted message emptied reads Remaining 0, its Reset far off
  test("a concurrency 429 beside an emptied bucket is conformant; the same disagreement elsewhere is not", () => {
    const capped = answer({
      status: 429,
      body: error("RATE_LIMIT_EXCEEDED"),
      headers: { "retry-after": "1", "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset(40) },
    });
    const onMessages = runChecks(capped, ctx({ endpoint: ENDPOINTS.sendMessage }));
    expect(onMessages.filter((v) => v.check === "retry-after")).toEqual([]);
    const onList = runChecks(capped, ctx({ endpoint: ENDPOINTS.listAgents }));
    expect(onList.map((v) => v.check)).toContain("retry-after");
  });

  test("a broken list page cites PROFILE §2 envelope.list, in the clause's words", () => {
    const page = { page: 1, limit: 20, total: 0, totalPages: 0, hasMore: true };
    const [v] = runChecks(answer({ body: { success: true, data: [], pagination: page } }), ctx());
    expect(v).toMatchObject({ check: "success-schema", clause: "envelope.list" });
    expect(v?.received).toMatch(/^true in \{"page":1/);
    expect(v?.expected).toContain("pagination.hasMore");
  });

  // PROFILE §7: "now" is when the request was counted or when the answer leaves; a check accepts both
  test.for([
    ["computed when the request was counted, the window over before a 30 s answer left", -25],
    ["computed when the answer left", 2],
  ] as const)("X-RateLimit-Reset %s is conformant", ([_reading, resetFromNow]) => {
    const slow = answer({ headers: { "x-ratelimit-reset": reset(resetFromNow) } });
    const found = runChecks(slow, ctx({ sentAt: NOW - 30_000 })).filter((v) => v.check === "rate-limit-headers");
    expect(found).toEqual([]);
  });

  test("the bounds a functional check holds Reset to are the response check's: a slow hop moves only the upper one", () => {
    // counted at once, its window ending 0.9 s later, the answer held 2.4 s on its way back
    const at = { sentAt: 1_000_000, receivedAt: 1_002_400, offsetSeconds: 0, windowSeconds: 5, skewSeconds: 0 };
    const bounds = resetBounds(at);
    expect(1_001).toBeGreaterThan(bounds.after);
    expect(bounds.atMost).toBe(1_002.4 + 5 + 1);
    expect(resetBounds({ ...at, skewSeconds: 0.5, offsetSeconds: 10 })).toEqual({ sent: 1_010, after: 1_008.5, atMost: 1_018.9 });
  });

  test("X-RateLimit-Reset before the request was even sent is not", () => {
    const stale = answer({ headers: { "x-ratelimit-reset": reset(-40) } });
    const found = runChecks(stale, ctx({ sentAt: NOW - 30_000 })).map((v) => v.check);
    expect(found).toContain("rate-limit-headers");
  });

  test("an endpoint is matched by method and exact path; a variant matches none", () => {
    const base = "http://127.0.0.1:8080/v1";
    expect(matchEndpoint("PATCH", `${base}/agents/agt_1`, { baseUrl: base })?.spec.id).toBe("updateAgent");
    expect(matchEndpoint("POST", `${base}/agents/agt_1/messages?x=1`, { baseUrl: base })?.spec.id).toBe("sendMessage");
    expect(matchEndpoint("POST", `${base}/agents/`, { baseUrl: base })).toBeUndefined();
    expect(matchEndpoint("GET", `${base}/AGENTS`, { baseUrl: base })).toBeUndefined();
  });
});
