import { RESPONSE_CHECKS } from "../checks/registry.js";
import { CLAUSE_BY_ID } from "../contract/clauses.js";
import type { CheckResult, Evidence, Finding } from "./model.js";

export type { Finding };

/** The response-level checks whose violation leaves an answer unreadable to the checks that needed it. */
export const MASKING_CHECKS: ReadonlySet<string> = new Set(RESPONSE_CHECKS.filter((c) => c.masksAnswer).map((c) => c.id));

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

/** A run's findings, and its checks as the findings judge them (new values, in the order given). */
export interface JudgedChecks {
  findings: Finding[];
  checks: CheckResult[];
}

/** One check as the findings judge it: a copy of the check, and what it is tied to. */
interface Judged {
  check: CheckResult;
  /** the findings seen in it or counted under it, in the order met */
  findings: Finding[];
  /** the finding that kept it from running */
  blocker?: Finding;
  /** failed, and the finding it holds says how */
  explained?: boolean;
  /** blocked by a setup answer no response-level check faults */
  setupFailure?: boolean;
}

/**
 * Findings from the checks of a run, most important first: the response-level ones (by the
 * checks they blocked, then occurrences), then each failed check's own. Collecting is one step
 * and judging the checks another: the checks come back as new values with `status`, `message`,
 * `blockedBy` and `findingIds` set; the ones given are left as they were.
 */
export function collectFindings(collected: readonly CollectedCheck[]): JudgedChecks {
  const { ordered, seenIn } = responseFindings(collected);
  const judged = collected.map(({ check }, i) => judgeBlocked(check, seenIn[i] ?? []));
  const response = [...ordered].sort((a, b) => b.blocked.length - a.blocked.length || b.occurrences - a.occurrences);
  const { own, ownByKey } = ownFindings(judged, response);
  own.push(...setupFindings(judged, ownByKey));
  // most important first: a defect that kept checks from running leads its kind (the sort is stable)
  const findings = [...response, ...own.sort((a, b) => b.blocked.length - a.blocked.length)].map((f, i) => {
    f.id = `F${i + 1}`;
    return f;
  });
  const checks = judged.map(({ check, findings: tied, blocker }) => {
    const ids = tied.map((f) => f.id);
    return { ...check, ...(ids.length ? { findingIds: ids } : {}), ...(blocker ? { blockedBy: blocker.id } : {}) };
  });
  return { findings, checks };
}

/** The response-level findings, one per defect, in the order first seen; and those seen in each check. */
function responseFindings(collected: readonly CollectedCheck[]): { ordered: Finding[]; seenIn: Finding[][] } {
  const byKey = new Map<string, Finding>();
  const secondary = new Set<string>();
  const ordered: Finding[] = [];
  const seenIn = collected.map(({ check, observations }) => {
    const seen: Finding[] = [];
    for (const o of observations) {
      const key = findingKey(o);
      let f = byKey.get(key);
      if (!f) {
        f = responseFinding(o);
        byKey.set(key, f);
        // the same answer breaking one clause in two ways (a token's member and its value) is one
        // defect: the same request and the same response, byte for byte (not only the id the target echoed)
        const answer = JSON.stringify(o.evidence);
        const twin = ordered.find((g) => g.clauseIds[0] === o.clause && JSON.stringify(g.evidence[0]) === answer);
        if (twin) {
          byKey.set(key, twin);
          secondary.add(key);
          f = twin;
        } else ordered.push(f);
      }
      // a second way of breaking the clause counts no new occurrences: the answers are the same
      if (!secondary.has(key)) f.occurrences += o.count;
      if (!f.endpoints.includes(o.endpoint)) f.endpoints.push(o.endpoint);
      if (!f.seenIn.includes(check.id)) f.seenIn.push(check.id);
      if (!seen.includes(f)) seen.push(f);
    }
    return seen;
  });
  return { ordered, seenIn };
}

/** A response-level finding as its first observation shows it, before any occurrence is counted. */
function responseFinding(o: Observation): Finding {
  return {
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
}

/**
 * A check that failed while holding an answer it could not read (a broken envelope, a status
 * with another status's codes) is blocked by the finding that says why, not a defect of its own:
 * by the finding that masked its answer, else the first seen in it. Returns a new check when it changes.
 */
function judgeBlocked(check: CheckResult, seen: Finding[]): Judged {
  if (check.status !== "blocked") return { check, findings: seen };
  // an answer it could not read (the suite kit blocks the check on it) is blamed on what masked it
  const masking = seen.find((f) => MASKING_CHECKS.has(f.check) && !f.clauseIds.some((id) => check.clauseIds.includes(id)));
  const by = masking ?? seen[0];
  if (!by) {
    // its setup failed on an answer no response-level check faults: one finding per setup failure
    // unless the answer it failed on was its own subject's: then it failed
    if (check.clauseAtFault && check.clauseIds.includes(check.clauseAtFault))
      return { check: { ...check, status: "failed" }, findings: seen };
    return { check, findings: seen, setupFailure: true };
  }
  if (by.clauseIds.some((id) => check.clauseIds.includes(id))) {
    // the finding is this check's own subject: the check failed, and the finding says how
    return { check: { ...check, status: "failed", message: by.message }, findings: seen, explained: true };
  }
  by.blocked.push(check.id);
  return { check, findings: seen, blocker: by };
}

/** Each failed check's own finding, unless a response-level finding already reports its clause. */
function ownFindings(judged: Judged[], response: readonly Finding[]) {
  const byClause = new Map<string, Finding>();
  for (const f of response) for (const id of f.clauseIds) if (!byClause.has(id)) byClause.set(id, f);
  const own: Finding[] = [];
  const ownByKey = new Map<string, Finding>();
  for (const j of judged) {
    const { check } = j;
    if (check.status !== "failed" || j.explained) continue;
    const atFault = check.clauseAtFault ? [check.clauseAtFault] : check.clauseIds;
    const same = atFault.map((id) => byClause.get(id)).find((f) => f !== undefined);
    if (same) {
      // counted under it: the finding lists it among the checks that showed it
      if (!same.seenIn.includes(check.id)) same.seenIn.push(check.id);
      j.findings = [...j.findings.filter((f) => f !== same), same];
      continue;
    }
    const headline = (check.message ?? "failed").split("\n", 1)[0] ?? "";
    // checks failing on the same clause show one defect: one finding, seen in each of them
    const key = atFault[0] ?? normalized(headline);
    const twin = ownByKey.get(key);
    if (twin) {
      twin.occurrences += 1;
      twin.seenIn.push(check.id);
      for (const endpoint of endpointsOf(check)) if (!twin.endpoints.includes(endpoint)) twin.endpoints.push(endpoint);
      j.findings = [...j.findings, twin];
      continue;
    }
    const finding = checkFinding(check, atFault, headline);
    own.push(finding);
    ownByKey.set(key, finding);
    j.findings = [...j.findings, finding];
  }
  return { own, ownByKey };
}

/** One setup failure (the same answer to the same call) is one finding, with the checks it blocked. */
function setupFindings(judged: Judged[], ownByKey: ReadonlyMap<string, Finding>): Finding[] {
  const made: Finding[] = [];
  const setupByKey = new Map<string, Finding>();
  for (const j of judged) {
    if (!j.setupFailure) continue;
    const { check } = j;
    const headline = (check.message ?? "setup failed").split("\n", 1)[0] ?? "";
    // a check that failed on the very setup answer (its clause, its words) already says it: the setup joins it
    const key = normalized(headline);
    const failedOnIt = check.clauseAtFault ? ownByKey.get(check.clauseAtFault) : undefined;
    const joined = failedOnIt && normalized(failedOnIt.message).includes(key) ? failedOnIt : undefined;
    let finding = joined ?? setupByKey.get(key);
    if (!finding) {
      finding = {
        ...checkFinding(check, check.clauseAtFault ? [check.clauseAtFault] : [], headline),
        seenIn: [],
        occurrences: 0,
      };
      setupByKey.set(key, finding);
      made.push(finding);
    }
    // a setup finding's occurrences are the setups that failed; a joined finding's its failed checks
    if (!joined) finding.occurrences += 1;
    finding.blocked.push(check.id);
    j.blocker = finding;
  }
  return made;
}

/**
 * The exchange a check's failure judged: the one whose URL its failure message names (a check that
 * walks several answers labels the one it is asserting on; the longest URL named, as `/agents` is
 * part of `/agents?limit=abc`, and the last of those), else the last it made.
 */
function judgedExchange(check: CheckResult): Evidence | undefined {
  const evidence = check.evidence ?? [];
  const message = check.message ?? "";
  let named: Evidence | undefined;
  for (const e of evidence)
    if (message.includes(e.request.url) && e.request.url.length >= (named?.request.url.length ?? 0)) named = e;
  return named ?? evidence.at(-1);
}

/** Where a check's failure was seen: the endpoint of the request it judged. */
const endpointsOf = (check: CheckResult) =>
  [judgedExchange(check)].flatMap((e) => (e ? [endpointLabel(e.request.method, e.request.url)] : []));

/** A finding made of a check's own failure: its headline, the clauses at fault, the request it judged. */
function checkFinding(check: CheckResult, clauseIds: string[], headline: string): Finding {
  const last = judgedExchange(check);
  return {
    id: "",
    kind: "check",
    check: check.id,
    clauseIds,
    sections: [...new Set(clauseIds.map(sectionOf))],
    endpoints: endpointsOf(check),
    // the broken clause leads, as on every finding: `PROFILE §5 list.invalid-params: GET /agents: …`
    message:
      headline.startsWith("PROFILE ") || clauseIds[0] === undefined
        ? headline
        : `PROFILE ${sectionOf(clauseIds[0])} ${clauseIds[0]}: ${headline}`,
    occurrences: 1,
    seenIn: [check.id],
    blocked: [],
    ...(last?.requestId ? { firstRequestId: last.requestId } : {}),
    evidence: last ? [last] : [],
  };
}

/** The endpoints a finding names on its one line; results.json lists them all. */
const ENDPOINTS_LISTED = 4;

/** `GET /agents, POST /agents and 26 more`. */
export function endpointList(endpoints: readonly string[], listed = ENDPOINTS_LISTED): string {
  if (endpoints.length === 0) return "—";
  const more = endpoints.length - listed;
  return more > 0 ? `${endpoints.slice(0, listed).join(", ")} and ${more} more` : endpoints.join(", ");
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
