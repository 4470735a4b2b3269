import { describe, expect, test } from "vitest";
import { RESPONSE_CHECKS } from "../../src/checks/registry.js";
import { CLAUSE_BY_ID, CLAUSES } from "../../src/contract/index.js";
import {
  CAPACITY_FAULTS,
  CONCURRENCY_FAULTS,
  FAULTS,
  LOAD_FAULTS,
  PROPERTY_FAULTS,
  RARE_PATH_FAULTS,
  TRANSITION_FAULTS,
} from "../../src/target/embedded.js";
import { cleanDefaultRun } from "./clean-run.js";
import { atMost, failedIn, redItems, verify } from "./verify-run.js";

/**
 * The harness checks itself (STYLE §6): `verify` passes against the clean reference server and
 * fails against each injected fault, naming a failed check of the fault's PROFILE section.
 */

/** One fault or more of each section §1–§10, each run on its own section without --bail. */
const ONE_DEFECT_ONE_FINDING = new Set([
  "drop-request-id",
  "has-more-always-true",
  "validation-422",
  "account-id-exposed",
  "timestamps-without-ms",
  "delete-without-deleted-flag",
  "reply-id-without-prefix",
  "other-account-403",
  "no-www-authenticate",
  "no-retry-after",
  "deactivate-wipes-config",
  "no-allow-header",
  "reply-not-deterministic",
  "error-as-string",
  "token-echoed",
  "create-ignores-inactive",
  // without --bail the run is one section of the functional suites: 30 s instead of 2.5 min
  "budget-never-enforced",
]);

/**
 * Rows that start first, beside the clean run: each lasts several times a usual row, and started
 * in its place among the §7 rows it ran on alone after every other had ended
 * (`bucket-stays-locked`: its five bucket checks each wait out four Retry-Afters of a bucket that
 * never refills before they say inconclusive, 68 s against 2–15 s a row; measured, it ended 30 s
 * after the row before it). Such a row mostly waits, so it does not wait for the clean run either:
 * it takes the fourth place beside the clean run's three tests. Only the order changes: every row
 * runs as before.
 */
const STARTS_FIRST = ["bucket-stays-locked"];

/** The clean default run, shared with the project's other files (the browser test reads its page). */
const clean = cleanDefaultRun;

// the load, many-tenant, concurrency, property, rare-path and transition faults have their own meta tests: only their suites see them
const OWN_TESTS = [LOAD_FAULTS, CAPACITY_FAULTS, CONCURRENCY_FAULTS, PROPERTY_FAULTS, RARE_PATH_FAULTS, TRANSITION_FAULTS];
const FUNCTIONAL_FAULTS = Object.entries(FAULTS).filter(([name]) => !OWN_TESTS.some((area) => name in area));

// before the concurrent describes below: neighbours, they run as one group (vitest runs a file's
// consecutive concurrent suites together), so the rows that start first run beside the clean run
test("the rows started first are rows of this file", () => {
  const rows = new Set(FUNCTIONAL_FAULTS.map(([name]) => name));
  expect(STARTS_FIRST.filter((name) => !rows.has(name))).toEqual([]);
});

describe("meta: the clean reference server", { concurrent: true }, () => {
  test("passes every check", { timeout: 600_000 }, async () => {
    const run = await clean();
    expect(failedIn(run).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    expect((run.results.findings ?? []).map((f) => f.message)).toEqual([]);
    expect(run.results.checks.filter((c) => c.status === "error").map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    expect(run.code).toBe(0);
  });

  test("every clause a check cites exists in the registry", { timeout: 600_000 }, async () => {
    const run = await clean();
    const cited = new Set([...run.results.checks.flatMap((c) => c.clauseIds), ...RESPONSE_CHECKS.map((c) => c.clause)]);
    expect([...cited].filter((id) => !CLAUSE_BY_ID.has(id))).toEqual([]);
  });

  test("every MUST clause is verified by at least one check that ran", { timeout: 600_000 }, async () => {
    const run = await clean();
    const verified = new Set(run.results.checks.filter((c) => c.status === "passed").flatMap((c) => c.clauseIds));
    const unverified = CLAUSES.filter((c) => c.level === "MUST" && !verified.has(c.id)).map((c) => `${c.id} (${c.section})`);
    expect(unverified).toEqual([]);
  });
});

describe("meta: every injected fault is caught", { concurrent: true }, () => {
  test.for(
    [...FUNCTIONAL_FAULTS]
      .sort(([a], [b]) => Number(STARTS_FIRST.includes(b)) - Number(STARTS_FIRST.includes(a)))
      .map(([name, f]) => [name, f.clause] as const),
  )("fault %s (breaks %s) is caught", { timeout: 600_000 }, async ([name, clauseId]) => {
    const section = CLAUSE_BY_ID.get(clauseId)?.section;
    expect(section, `fault ${name} cites an unknown clause`).toBeDefined();
    // the clean run first, alone but for the rows that start first: its §7 timing checks (a tier's
    // worth of 429s inside one 2 s window) came out inconclusive while six fault runs shared the
    // two cores with it
    if (!STARTS_FIRST.includes(name)) await clean().catch(() => undefined);
    // four fault runs at a time (maxConcurrency) on two cores: one worker each, or the timing checks
    // of §7 starve (each run is short anyway: --sections keeps only the fault's section)
    const focused = ONE_DEFECT_ONE_FINDING.has(name);
    // judged here are the functional suites (the property suite, which reports a failed property
    // per defect on top, catches its own faults in property-faults.test.ts). With the property suite
    // in the run, its stateful sequences started first and cost twice the CPU of the whole §5
    // functional section (docs/figures.md). No --bail: it stops at the first check that is not
    // passed, an inconclusive timing check on a starved runner included, which then ends the run
    // before the check that catches the fault (seen in CI with §7's rate-limited-counted)
    const scope = ["--suites", "functional"];
    // a fault held to one finding runs its whole section, to show no other check of it goes red; any
    // other runs only the checks citing its clause (a clause's few checks instead of a section's
    // hundreds: 7 s instead of 26–38 s for §5 and §7), which proves that the clause's own checks catch it
    const selection = focused ? section! : clauseId;
    const run = await verify(["--fault", name, "--sections", selection, ...scope, "--workers", "1"]);
    const findings = run.results.findings ?? [];
    const caught = findings.filter((f) => f.sections.includes(section!));
    expect(
      caught.map((f) => f.message),
      `no ${section} finding with --fault ${name}`,
    ).not.toEqual([]);
    expect(run.code).toBe(1);
    if (!focused) return;
    const summary = findings.map((f) => `${f.id} [${f.clauseIds.join(",")}] ${f.message}`);
    // findings, failed checks no finding explains, harness errors: what a reader must act on
    expect(redItems(run), `one defect, at most 3 red items:\n${summary.join("\n")}`).toBeLessThanOrEqual(3);
    expect(findings[0]?.clauseIds, `the first finding cites ${clauseId}:\n${summary.join("\n")}`).toContain(clauseId);
  });
});

/**
 * Defects only load reveals. Each is caught by the load suite (this test); the functional
 * suite, one request at a time, passes against each (`verify --suites functional --fault NAME`
 * exits 0: src/server/faults/load.test.ts shows the clean answer to one request at a time).
 */
describe("meta: every load-only fault is caught by the load suite", { concurrent: true }, () => {
  test.for(Object.entries(LOAD_FAULTS).map(([name, f]) => [name, f.clause] as const))(
    "load fault %s (breaks %s) is caught by --suites load",
    { timeout: 600_000 },
    async ([name, clauseId]) => {
      // after the clean run, which runs alone (these rows are of one group with it: above)
      await clean().catch(() => undefined);
      // the scenarios citing the fault's clause: they must catch it (the whole load suite took 70–80 s a fault)
      const run = await verify(["--suites", "load", "--sections", clauseId, "--fault", name]);
      const caught = failedIn(run).filter((c) => c.clauseIds.includes(clauseId));
      expect(
        caught.map((c) => c.id),
        `no load check citing ${clauseId} failed with --fault ${name}\n${run.output.slice(-3000)}`,
      ).not.toEqual([]);
      expect(run.code).toBe(1);
    },
  );
});

/**
 * Defects only concurrency shows, each caught by its own concurrency check of the quick load
 * scenarios (src/load/concurrency-checks.ts) in verify's default run, and by no other check: every
 * finding names the fault's clause. One request at a time the faulty server answers like the clean
 * one (src/server/faults/concurrency.test.ts), so the functional and property suites pass.
 */
// two runs at a time, after every other run of the file: the Remaining judgement takes a burst
// only when it came back within W of the previous window's end (W = 2 s here), which three
// quick-load runs at once on two cores can miss (measured two at a time: 4 rounds of the four
// faults, each caught with its own clause alone, 45–49 s a round against about 66 s one at a time)
describe("meta: every concurrency fault is caught by its concurrency check under load", () => {
  const inTurn = atMost(2);
  describe("two at a time", { concurrent: true }, () => {
    test.for(Object.entries(CONCURRENCY_FAULTS).map(([name, f]) => [name, f.clause] as const))(
      "concurrency fault %s (breaks %s) is caught by --suites quick-load, and nothing else is",
      { timeout: 600_000 },
      async ([name, clauseId]) => {
        const run = await inTurn(() => verify(["--suites", "quick-load", "--fault", name]));
        const findings = (run.results.findings ?? []).map((f) => f.message);
        expect(findings, `--fault ${name}\n${run.output.slice(-3000)}`).not.toEqual([]);
        for (const message of findings) expect(message, `--fault ${name}`).toContain(` ${clauseId}: `);
        expect(run.code).toBe(1);
      },
    );
  });
});
