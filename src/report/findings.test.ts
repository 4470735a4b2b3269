import { describe, expect, test } from "vitest";
import { collectFindings, endpointLabel, type Observation } from "./findings.js";
import type { CheckResult } from "./model.js";
import { formatFinding } from "./terminal.js";
import { sampleCheck } from "./test-support.js";

const evidence = (url: string, requestId: string) => ({
  request: { method: "GET", url, headers: {} },
  response: { status: 200, headers: {}, body: "{}" },
  requestId,
  curl: `curl '${url}'`,
});

const hasMore = (url: string, requestId: string, received = "true"): Observation => ({
  check: "success-schema",
  clause: "envelope.list",
  expected: "pagination.hasMore: must be page < totalPages",
  received,
  endpoint: endpointLabel("GET", url),
  count: 1,
  evidence: evidence(url, requestId),
});

const check = (id: string, over: Partial<CheckResult> = {}): CheckResult =>
  sampleCheck({ id, title: id, clauseIds: ["auth.scheme-case"], sections: ["§6"], ...over });

describe("collectFindings: one defect, one finding", () => {
  test("the same violation seen by many checks is one finding with its occurrences and endpoints", () => {
    const given = [check("a"), check("b"), check("c")];
    const { findings, checks } = collectFindings([
      { check: given[0]!, observations: [hasMore("http://h/v1/agents?page=1", "req_1")] },
      { check: given[1]!, observations: [{ ...hasMore("http://h/v1/agents?page=2", "req_2", "true (page 2)"), count: 3 }] },
      { check: given[2]!, observations: [] },
    ]);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      id: "F1",
      kind: "response",
      clauseIds: ["envelope.list"],
      sections: ["§2"],
      endpoints: ["GET /agents"],
      occurrences: 4,
      seenIn: ["a", "b"],
      firstRequestId: "req_1",
    });
    // the checks that only saw it still passed: a test fails for its own assertions only
    expect(checks.map((c) => c.status)).toEqual(["passed", "passed", "passed"]);
    expect(checks[0]!.findingIds).toEqual(["F1"]);
    // the checks given are left as they were: the judged ones are new values
    expect(given[0]!.findingIds).toBeUndefined();
  });

  test("a check whose setup a finding broke is blocked by it; a failed check is a finding of its own, after", () => {
    const blocked = check("blocked", { status: "blocked", message: "setup: could not create an agent" });
    const own = check("own", { status: "failed", message: "GET /agents/{agentId}: expected 404 AGENT_NOT_FOUND; received 403" });
    const { findings, checks } = collectFindings([
      { check: check("saw"), observations: [hasMore("http://h/v1/agents", "req_1")] },
      { check: blocked, observations: [hasMore("http://h/v1/agents", "req_2")] },
      { check: own, observations: [] },
    ]);
    expect(findings.map((f) => [f.id, f.kind, f.check])).toEqual([
      ["F1", "response", "success-schema"],
      ["F2", "check", "own"],
    ]);
    expect(checks[1]).toMatchObject({ status: "blocked", blockedBy: "F1" });
    expect(blocked.blockedBy).toBeUndefined();
    expect(findings[0]!.blocked).toEqual(["blocked"]);
    expect(findings[1]!.message).toBe(
      "PROFILE §6 auth.scheme-case: GET /agents/{agentId}: expected 404 AGENT_NOT_FOUND; received 403",
    );
  });

  test("a blocked check whose subject is the finding's clause failed, explained by that finding", () => {
    const subject = check("subject", { status: "blocked", clauseIds: ["envelope.list"], sections: ["§2"] });
    const { findings, checks } = collectFindings([{ check: subject, observations: [hasMore("http://h/v1/agents", "req_1")] }]);
    expect(findings).toHaveLength(1);
    expect(checks[0]).toMatchObject({ status: "failed", findingIds: ["F1"] });
    expect(subject.status).toBe("blocked");
  });

  test("one setup failure is one finding, with the checks it blocked", () => {
    const message = (id: string) =>
      `setup: could not create an agent: POST /agents: expected 201; received 403 FORBIDDEN (${id})`;
    const lone = [1, 2, 3].map((n) =>
      check(`lone${n}`, { status: "blocked", message: message(`req_${n}`), clauseAtFault: "create.created" }),
    );
    const { findings, checks } = collectFindings(lone.map((c) => ({ check: c, observations: [] })));
    expect(findings.map((f) => [f.id, f.kind, f.clauseIds, f.blocked])).toEqual([
      ["F1", "check", ["create.created"], ["lone1", "lone2", "lone3"]],
    ]);
    for (const c of checks) expect(c).toMatchObject({ status: "blocked", blockedBy: "F1" });
  });

  test("a check the suite kit blocked on an unreadable answer is blocked by the finding that masked it; a failed one stays failed", () => {
    const check5 = (id: string, status: "failed" | "blocked") =>
      check(id, {
        status,
        clauseIds: ["create.validation"],
        sections: ["§5"],
        message: "POST /agents: expected 400 INVALID_REQUEST; received 400",
      });
    const envelope = {
      ...hasMore("http://h/v1/agents", "req_1"),
      check: "envelope",
      clause: "envelope.error",
      expected: "error envelope: error must be an object",
    };
    const other = hasMore("http://h/v1/agents?page=2", "req_2");
    const masked = check5("masked", "blocked");
    // a failure on another answer than the unreadable one is a defect of its own
    const failed = check5("failed", "failed");
    const { findings, checks } = collectFindings([
      { check: masked, observations: [other, envelope] },
      { check: failed, observations: [envelope] },
    ]);
    expect(findings.find((f) => f.check === "envelope")?.blocked).toEqual(["masked"]);
    expect(checks[0]).toMatchObject({ status: "blocked" });
    expect(checks[1]!.status).toBe("failed");
    expect(findings.some((f) => f.kind === "check" && f.seenIn.includes("failed"))).toBe(true);
  });

  test("a failed check on a clause no finding names is a finding of its own, named where it failed", () => {
    const failed = check("own", {
      status: "failed",
      clauseIds: ["update.merge"],
      sections: ["§5"],
      message: "PROFILE §5 update.merge: … — received 1",
      evidence: [evidence("http://h/v1/agents", "req_1"), evidence("http://h/v1/agents/agt_1", "req_2")],
    });
    const [finding] = collectFindings([{ check: failed, observations: [] }]).findings;
    expect(finding).toMatchObject({ endpoints: ["GET /agents/{agentId}"], firstRequestId: "req_2" });
  });

  test("a check that walks several answers is named at the one its failure labels, not at its last request", () => {
    const walked = [
      evidence("http://h/v1/agents?limit=1", "req_1"),
      evidence("http://h/v1/agents?limit=abc", "req_2"),
      evidence("http://h/v1/agents", "req_3"),
      evidence("http://h/v1/no-such-route", "req_4"),
    ];
    const failed = check("walk", {
      status: "failed",
      clauseIds: ["limits.headers"],
      sections: ["§7"],
      message: "400 http://h/v1/agents?limit=abc: x-ratelimit-reset after now: expected 1 to be greater than 2",
      evidence: walked,
    });
    const [finding] = collectFindings([{ check: failed, observations: [] }]).findings;
    expect(finding).toMatchObject({ endpoints: ["GET /agents"], firstRequestId: "req_2" });
    expect(finding?.evidence.map((e) => e.requestId)).toEqual(["req_2"]);
  });

  test("the terminal shows a finding in the clause's words, with where, how often and the replay", () => {
    const [f] = collectFindings([{ check: check("a"), observations: [hasMore("http://h/v1/agents", "req_1")] }]).findings;
    f!.replay = "replay-F1.sh";
    expect(formatFinding(f!, { color: false })).toEqual([
      "F1 ✗ PROFILE §2 envelope.list: expected pagination.hasMore: must be page < totalPages; received true",
      "   GET /agents · seen 1× in 1 check",
      "   first request req_1 · replay: sh replay-F1.sh",
    ]);
  });
});

test("endpointLabel names the endpoint, not the agent", () => {
  expect(endpointLabel("delete", "http://h:1/v1/agents/agt_9/messages?x=1")).toBe("DELETE /agents/{agentId}/messages");
  expect(endpointLabel("GET", "http://h:1/v1/agents")).toBe("GET /agents");
});

test("one answer breaking one clause in two ways is one finding; a setup that broke a failed check's clause joins its finding", () => {
  const member: Observation = {
    check: "no-token-field",
    clause: "record.token-write-only",
    expected: "no token member in any response",
    received: "a token member",
    endpoint: "POST /agents",
    count: 1,
    evidence: evidence("http://h/v1/agents", "req_1"),
  };
  const value: Observation = { ...member, check: "no-token-value", expected: "no platform token in any response" };
  const status = (id: string, over: Partial<CheckResult>) =>
    sampleCheck({ id, title: id, clauseIds: ["create.status"], sections: ["§5"], ...over });
  const own = status("own", {
    status: "failed",
    message: "setup: POST /agents with status inactive made an agent of status active",
    clauseAtFault: "create.status",
  });
  const setup = status("setup", {
    status: "blocked",
    clauseIds: ["message.inactive"],
    message: "setup: POST /agents with status inactive made an agent of status active",
    clauseAtFault: "create.status",
  });
  // a setup that failed on another answer is a finding of its own, not folded into one by clause
  const otherSetup = status("other-setup", {
    status: "blocked",
    clauseIds: ["message.inactive"],
    message: "setup: could not create an agent: POST /agents: expected 201; received 400 INVALID_REQUEST",
    clauseAtFault: "create.status",
  });
  const { findings, checks } = collectFindings([
    { check: sampleCheck({ id: "tok" }), observations: [member, value] },
    { check: own, observations: [] },
    { check: setup, observations: [] },
    { check: otherSetup, observations: [] },
  ]);
  expect(findings.map((f) => [f.id, f.clauseIds, f.occurrences, f.blocked])).toEqual([
    ["F1", ["record.token-write-only"], 1, []],
    ["F2", ["create.status"], 1, ["setup"]],
    ["F3", ["create.status"], 1, ["other-setup"]],
  ]);
  expect(checks[2]).toMatchObject({ status: "blocked", blockedBy: "F2" });
});
