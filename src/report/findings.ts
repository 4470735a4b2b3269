import { CLAUSE_BY_ID } from "../contract/clauses.js";
import type { CheckResult, Evidence } from "./model.js";

/**
 * One defect, one finding (STYLE §10): a response-level violation is reported once,
 * under its own check and clause, however many tests happened to see it; a check that failed
 * its own assertions is a finding of its own; a check a finding kept from running is `blocked`.
 */

/** One response-level violation as one test saw it (carried in the test's task meta across workers). */
export interface Observation {
  check: string;
  clause: string;
  expected: string;
  received: string;
  /** `GET /agents/{agentId}`, or the raw method and path when no endpoint matches */
  endpoint: string;
  /** how often the test saw it */
  count: number;
  evidence: Evidence;
  /** the create whose agent the failing request addressed, and that agent's id: the replay runs it first */
  setup?: { evidence: Evidence; agentId: string };
}

export interface Finding {
  /** F1, F2, … in order of importance */
  id: string;
  /** a response-level check (seen on responses) or a check's own assertion */
  kind: "response" | "check";
  /** the response-level check id, or the check (test) id */
  check: string;
  clauseIds: string[];
  sections: string[];
  endpoints: string[];
  /** the headline, in the words of the clause: expected and received */
  message: string;
  occurrences: number;
  /** the checks it was seen in (response) or the check that failed (check) */
  seenIn: string[];
  /** checks it kept from running */
  blocked: string[];
  firstRequestId?: string;
  evidence: Evidence[];
  /** the replay script's file name in the report folder */
  replay?: string;
  /** the steps a replay runs: the setup create (if any), then the failing call */
  setup?: { evidence: Evidence; agentId: string };
}

/** What an evidence record is made of: a recorded exchange (the client's `Exchange`, redacted). */
export interface RecordedExchange {
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  response: { status: number; headers: Record<string, string>; bodyText: string };
  requestId?: string | undefined;
  curl: string;
}

/** The record of one exchange a report shows (its body cut at 4,000 characters). */
export function evidenceOf(ex: RecordedExchange): Evidence {
  return {
    request: {
      method: ex.request.method,
      url: ex.request.url,
      headers: ex.request.headers,
      ...(ex.request.body ? { body: ex.request.body } : {}),
    },
    response: { status: ex.response.status, headers: ex.response.headers, body: ex.response.bodyText.slice(0, 4000) },
    ...(ex.requestId ? { requestId: ex.requestId } : {}),
    curl: ex.curl,
  };
}

/** Digits and long id-like tokens vary between occurrences of one defect: they do not make another. */
const normalized = (text: string) => text.replace(/[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*/g, "#");

export const findingKey = (o: Pick<Observation, "check" | "clause" | "expected">) =>
  `${o.check}|${o.clause}|${normalized(o.expected)}`;

const sectionOf = (clause: string) => CLAUSE_BY_ID.get(clause)?.section ?? "?";

/** `PROFILE §2 envelope.list: expected …; received …` */
export function observationMessage(o: Pick<Observation, "clause" | "expected" | "received">): string {
  return `PROFILE ${sectionOf(o.clause)} ${o.clause}: expected ${o.expected}; received ${o.received}`;
}

export interface CollectedCheck {
  check: CheckResult;
  observations: readonly Observation[];
}

/**
 * Findings from the checks of a run, most important first: the response-level ones (by the
 * checks they blocked, then occurrences), then each failed check's own. Sets `blockedBy` and
 * `findingIds` on the checks.
 */
export function collectFindings(collected: readonly CollectedCheck[]): Finding[] {
  const byKey = new Map<string, Finding>();
  const order: Finding[] = [];
  const findingOfCheck = new Map<CheckResult, Finding[]>();
  for (const { check, observations } of collected) {
    const seen: Finding[] = [];
    for (const o of observations) {
      const key = findingKey(o);
      let f = byKey.get(key);
      if (!f) {
        f = {
          id: "",
          kind: "response",
          check: o.check,
          clauseIds: [o.clause],
          sections: [sectionOf(o.clause)],
          endpoints: [],
          message: observationMessage(o),
          occurrences: 0,
          seenIn: [],
          blocked: [],
          ...(o.evidence.requestId ? { firstRequestId: o.evidence.requestId } : {}),
          evidence: [o.evidence],
          ...(o.setup ? { setup: o.setup } : {}),
        };
        byKey.set(key, f);
        order.push(f);
      }
      f.occurrences += o.count;
      if (!f.endpoints.includes(o.endpoint)) f.endpoints.push(o.endpoint);
      if (!f.seenIn.includes(check.id)) f.seenIn.push(check.id);
      if (!seen.includes(f)) seen.push(f);
    }
    findingOfCheck.set(check, seen);
  }
  // a blocked check is blocked by the first finding seen in it; with none, its setup failure is its own failure
  const blocker = new Map<CheckResult, Finding>();
  const explained = new Set<CheckResult>();
  let lastSeen: Finding | undefined;
  for (const { check } of collected) {
    const seen = findingOfCheck.get(check) ?? [];
    lastSeen = seen[0] ?? lastSeen;
    if (check.status !== "blocked") continue;
    const by = seen[0] ?? lastSeen;
    if (!by) check.status = "failed";
    else if (by.clauseIds.some((id) => check.clauseIds.includes(id))) {
      // the finding is this check's own subject: the check failed, and the finding says how
      check.status = "failed";
      check.message = by.message;
      explained.add(check);
    } else {
      by.blocked.push(check.id);
      blocker.set(check, by);
    }
  }
  const response = [...order].sort((a, b) => b.blocked.length - a.blocked.length || b.occurrences - a.occurrences);
  // a failed check whose clause a response-level finding already reports is that finding's, not another
  const byClause = new Map<string, Finding>();
  for (const f of response) for (const id of f.clauseIds) if (!byClause.has(id)) byClause.set(id, f);
  const own: Finding[] = [];
  const ownByKey = new Map<string, Finding>();
  for (const { check } of collected) {
    if (check.status !== "failed" || explained.has(check)) continue;
    const atFault = check.clauseAtFault ? [check.clauseAtFault] : check.clauseIds;
    const same = atFault.map((id) => byClause.get(id)).find((f) => f !== undefined);
    if (same) {
      findingOfCheck.set(check, [...(findingOfCheck.get(check) ?? []).filter((f) => f !== same), same]);
      continue;
    }
    const headline = (check.message ?? "failed").split("\n", 1)[0] ?? "";
    // checks failing on the same clause show one defect: one finding, seen in each of them
    const key = atFault[0] ?? normalized(headline);
    const twin = ownByKey.get(key);
    if (twin) {
      twin.occurrences += 1;
      twin.seenIn.push(check.id);
      findingOfCheck.set(check, [...(findingOfCheck.get(check) ?? []), twin]);
      continue;
    }
    own.push({
      id: "",
      kind: "check",
      check: check.id,
      clauseIds: atFault,
      sections: [...new Set(atFault.map(sectionOf))],
      endpoints: [...new Set((check.evidence ?? []).slice(0, 1).map((e) => endpointLabel(e.request.method, e.request.url)))],
      message: headline,
      occurrences: 1,
      seenIn: [check.id],
      blocked: [],
      ...(check.evidence?.[0]?.requestId ? { firstRequestId: check.evidence[0].requestId } : {}),
      evidence: check.evidence ?? [],
    });
    ownByKey.set(key, own.at(-1)!);
    findingOfCheck.set(check, [...(findingOfCheck.get(check) ?? []), own.at(-1)!]);
  }
  const all = [...response, ...own];
  all.forEach((f, i) => {
    f.id = `F${i + 1}`;
  });
  for (const { check } of collected) {
    const ids = (findingOfCheck.get(check) ?? []).map((f) => f.id);
    if (ids.length) check.findingIds = ids;
    const by = blocker.get(check);
    if (by) check.blockedBy = by.id;
  }
  return all;
}

/** `GET /agents/{agentId}` from a request, relative to /v1. */
export function endpointLabel(method: string, url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url;
  }
  const rel = path.replace(/^.*?\/v1(?=\/|$)/, "");
  return `${method.toUpperCase()} ${rel.replace(/^\/agents\/[^/]+/, "/agents/{agentId}")}`;
}
