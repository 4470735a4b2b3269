import type { CheckResult, RunOptions, RunResult } from "./model.js";

/**
 * Test support for the report tests (not part of the harness): a made-up run with every kind of
 * result. Its keys are fake.
 */
export const SAMPLE_SECRETS = ["sk_test_4f9a2c7e1b", "sk_test_readonly_77d0"] as const;

const [adminKey, readonlyKey] = SAMPLE_SECRETS;
const BASE = "http://127.0.0.1:43117/v1";

const PASSED_CHECK: CheckResult = {
  id: "transport.request-id/every-response",
  title: "every response carries X-Request-Id",
  suite: "functional/transport",
  file: "suites/functional/transport.test.ts",
  clauseIds: ["transport.request-id"],
  sections: ["§1"],
  status: "passed",
  durationMs: 12,
};

export const sampleCheck = (overrides: Partial<CheckResult> = {}): CheckResult => ({ ...PASSED_CHECK, ...overrides });

/** A check that finding F1 failed: a PROFILE §2 envelope.list defect. */
export const checkFailedByF1 = (title: string): CheckResult =>
  sampleCheck({ id: "a", title, status: "failed", findingIds: ["F1"], clauseIds: ["envelope.list"], sections: ["§2"] });

/** The options of an embedded run as `verify` records them. */
export const SAMPLE_OPTIONS: RunOptions = {
  suites: ["functional", "property"],
  profile: "full",
  sections: null,
  windowSeconds: 2,
  messageTimeoutSeconds: 4.5,
  tierLimit: 300,
  referenceFaults: true,
  idField: "id",
  faults: [],
  keys: { main: 3, readOnly: 1, otherAccount: 1, quota: 1 },
};

export function sampleRun(overrides: Partial<RunResult> = {}): RunResult {
  const checks: CheckResult[] = [
    sampleCheck(),
    sampleCheck({
      id: "transport.json-content-type/all",
      title: "every JSON response is application/json",
      clauseIds: ["transport.json-content-type"],
      durationMs: 31,
    }),
    sampleCheck({
      id: "record.lengths/name-101",
      title: "a name of 101 code points is rejected naming the field",
      suite: "functional/limits",
      file: "suites/functional/limits.test.ts",
      clauseIds: ["record.lengths"],
      sections: ["§4"],
      status: "failed",
      durationMs: 48,
      message: [
        "expected status 400 INVALID_REQUEST with details[].field = name",
        "received status 201 (the name was stored)",
      ].join("\n"),
      evidence: [
        {
          request: {
            method: "POST",
            url: `${BASE}/agents`,
            headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
            body: JSON.stringify({ name: "n".repeat(101) }),
          },
          response: {
            status: 201,
            headers: { "content-type": "application/json; charset=utf-8", "x-request-id": "req_01HZX3" },
            body: JSON.stringify({ success: true, data: { id: "agt_1", name: "n".repeat(101), status: "active" } }),
          },
          requestId: "req_01HZX3",
          curl: `curl -sS -X POST '${BASE}/agents' -H 'Authorization: Bearer ${adminKey}' -H 'Content-Type: application/json' --data-raw '{"name":"${"n".repeat(101)}"}'`,
        },
      ],
    }),
    sampleCheck({
      id: "auth.no-key-echo/error-bodies",
      title: "an error body never echoes the key <even & \"quoted\" 'ones'>",
      suite: "functional/auth",
      file: "suites/functional/auth.test.ts",
      clauseIds: ["auth.no-key-echo", "envelope.error"],
      sections: ["§6", "§2"],
      status: "failed",
      durationMs: 9,
      message: `expected no key in the body\nreceived {"error":{"message":"bad key ${readonlyKey}"}}`,
      evidence: [
        {
          request: { method: "GET", url: `${BASE}/agents/agt_x`, headers: { Authorization: `Bearer ${readonlyKey}` } },
          response: {
            status: 404,
            headers: { "content-type": "application/json" },
            body: `{"success":false,"error":{"code":"AGENT_NOT_FOUND","message":"bad key ${readonlyKey}\u0007"}}`,
          },
          requestId: "req_01HZX4",
          curl: `curl -sS '${BASE}/agents/agt_x' -H 'Authorization: Bearer ${readonlyKey}'`,
        },
      ],
    }),
    sampleCheck({
      id: "limits.recovery/after-reset",
      title: "requests succeed again after the reset time",
      suite: "functional/limits",
      file: "suites/functional/limits.test.ts",
      clauseIds: ["limits.recovery"],
      sections: ["§7"],
      status: "error",
      durationMs: 5003,
      message: "HarnessError: target unreachable: connect ECONNREFUSED 127.0.0.1:43117",
    }),
    sampleCheck({
      id: "message.heartbeat/silent-model",
      title: "a silent stream carries a comment every 15 s",
      suite: "functional/streaming",
      file: "suites/functional/streaming.test.ts",
      clauseIds: ["message.heartbeat"],
      sections: ["§5"],
      status: "skipped",
      durationMs: 0,
      message: "slow (≥ 15 s): enable with --slow",
    }),
    sampleCheck({
      id: "list.order/property",
      title: "items are sorted by sortBy then id",
      suite: "property/list",
      file: "suites/property/list.test.ts",
      clauseIds: ["list.order"],
      sections: ["§5"],
      durationMs: 1840,
    }),
  ];
  return {
    runId: "2025-01-31T09-05-07-123Z-3f9a1c",
    startedAt: "2025-01-31T09:05:07.123Z",
    finishedAt: "2025-01-31T09:05:19.456Z",
    target: { kind: "embedded", baseUrl: BASE },
    seed: 424242,
    // a key where no key belongs: every writer must still scrub it
    options: { ...SAMPLE_OPTIONS, idField: adminKey },
    checks,
    ...overrides,
  };
}
