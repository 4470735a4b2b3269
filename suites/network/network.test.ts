import { describe, expect, test } from "vitest";
import { CLAUSE_BY_ID } from "../../src/contract/index.js";
import { FAULTS } from "../../src/target/embedded.js";
import { failedIn, type VerifyRun, verify } from "../meta/verify-run.js";

/**
 * STYLE §12, the world is not loopback: the same verdicts across a network as on 127.0.0.1.
 * Each row is an `agent-harness verify` in a child process whose reference server sits behind
 * the delaying proxy (src/net/delay-proxy.ts, `--network-delay`). On loopback the meta suite
 * proves the same rows: the clean server passes, every fault is caught in its section.
 * The window W is at least ten round trips: 3 s at 40 ± 20 ms each way (2 s is ten too, but leaves
 * a busy runner no room), 5 s at 150 ± 50 ms.
 */

const NEAR = ["--network-delay", "40±20", "--rate-window", "3"];
const FAR = ["--network-delay", "150±50", "--rate-window", "5"];

/**
 * Workers of the clean rows, each with its own accounts: at 300 ms a round trip their checks wait
 * far more than they compute, so more workers than cores shorten the rows without starving them
 * (the far row's checks add up to about 290 s: 125 s wall with three workers).
 */
const FAR_WORKERS = 6;
const NEAR_WORKERS = 5;

const sectionOf = (fault: string) => CLAUSE_BY_ID.get(FAULTS[fault]!.clause)!.section;
const errorsIn = (run: VerifyRun) => run.results.checks.filter((c) => c.status === "error").map((c) => `${c.id}: ${c.message}`);
const summary = (run: VerifyRun) => run.output.slice(-4000);

function expectClean(run: VerifyRun) {
  expect(
    failedIn(run).map((c) => `${c.id}: ${c.message}`),
    summary(run),
  ).toEqual([]);
  expect(errorsIn(run), summary(run)).toEqual([]);
  expect(run.code).toBe(0);
}

/**
 * Caught: a finding of the fault's PROFILE section, and the run fails. (A check whose setup a
 * fault broke may err, as on loopback, which makes the exit code 2: the comparison below is of
 * the checks that failed.)
 */
function expectCaught(run: VerifyRun, fault: string) {
  const section = sectionOf(fault);
  const caught = (run.results.findings ?? []).filter((f) => f.sections.includes(section));
  expect(
    caught.map((f) => f.message),
    `no ${section} finding with --fault ${fault}\n${summary(run)}`,
  ).not.toEqual([]);
  expect(run.code, summary(run)).not.toBe(0);
}

/**
 * Faults whose checks lean on timing (bursts in one window, Reset and Retry-After, the in-flight
 * cap, the time budget, heartbeats, stream pacing) and one of each other kind of check, a few to
 * a run (one §7 fault each: two would meddle with each other's pacing). Each group runs twice at
 * once, directly and through the proxy: each fault's section has a finding on both sides (no
 * finding lost), and no check fails through the proxy that did not fail directly (no false
 * alarm). A check that fails directly only is the runner's, not the network's: on a busy runner
 * two mock-slow exchanges in a row can outlast the embedded 4.5 s budget.
 */
const GROUPS: { network: string[]; label: string; faults: string[] }[] = [
  { network: FAR, label: "150 ± 50 ms", faults: ["concurrency-unlimited", "budget-tripled", "trailing-slash-bypass"] },
  { network: NEAR, label: "40 ± 20 ms", faults: ["no-retry-after", "drop-request-id", "bad-scheme-counted"] },
  { network: NEAR, label: "40 ± 20 ms", faults: ["mock-slow-single-delta", "failed-exchange-takes-turn"] },
];

const failedIds = (run: VerifyRun) =>
  failedIn(run)
    .map((c) => c.id)
    .sort();

// One pool for every row, the longest first (the clean rows take one to two minutes, a fault group
// under one): three rows at a time (maxConcurrency), the file ends soonest when the long rows start first.
describe("network: the same verdicts through a delaying proxy as directly", { concurrent: true }, () => {
  test(
    "a conformant server at 150 ± 50 ms each way, W = 5 s: the §5 and §7 checks (streams, budget, buckets, the in-flight cap)",
    { timeout: 600_000 },
    async () => {
      expectClean(await verify(["--suites", "functional", "--sections", "§5,§7", "--workers", String(FAR_WORKERS), ...FAR]));
    },
  );

  test(
    "a conformant server at 40 ± 20 ms each way, W = 3 s: the functional suites and the quick load scenarios",
    { timeout: 600_000 },
    async () => {
      expectClean(await verify(["--suites", "functional,quick-load", "--workers", String(NEAR_WORKERS), ...NEAR]));
    },
  );

  test.for(GROUPS.map((g) => [g.label, g.faults.join(", "), g] as const))(
    "faults at %s: --fault %s",
    { timeout: 600_000 },
    async ([, , group]) => {
      // the checks of the faults' clauses (as the meta suite's fault runs): the clean rows below
      // hold the rest of the suites to no false alarm through the proxy
      const clauses = [...new Set(group.faults.map((f) => FAULTS[f]!.clause))];
      const args = [
        ...group.faults.flatMap((f) => ["--fault", f]),
        "--sections",
        clauses.join(","),
        "--suites",
        "functional",
        "--workers",
        "2",
      ];
      // the window of the delayed run, directly too: the same plan on both sides
      const window = group.network.includes("--rate-window") ? ["--rate-window", group.network.at(-1)!] : [];
      const [directRun, delayed] = await Promise.all([verify([...args, ...window]), verify([...args, ...group.network])]);
      for (const fault of group.faults) {
        expectCaught(directRun, fault);
        expectCaught(delayed, fault);
      }
      const direct = new Set(failedIds(directRun));
      expect(
        failedIds(delayed).filter((id) => !direct.has(id)),
        `checks that failed through the proxy only\n${summary(delayed)}`,
      ).toEqual([]);
    },
  );

  // PROFILE §5 Send Message: a stream is delivered as it is made; one held to the end is a finding, never a hang
  test(
    "a proxy that buffers a stream until its end is a §5 finding (not progressive), not a hang or a harness error",
    { timeout: 600_000 },
    async () => {
      const run = await verify([
        "--suites",
        "functional",
        // every check that streams (the ones a buffering proxy can hang or break), not all of §5
        "--sections",
        "message.stream,message.stream-error,message.heartbeat,message.budget",
        "--workers",
        "1",
        ...NEAR,
        "--network-proxy",
        "buffer-responses",
      ]);
      const findings = (run.results.findings ?? []).map((f) => f.message);
      expect(
        findings.some((m) => /not progressive/.test(m)),
        summary(run),
      ).toBe(true);
      expect(errorsIn(run), summary(run)).toEqual([]);
      expect(run.code).toBe(1);
    },
  );

  test(
    "a conformant server behind a load balancer that closes the connection after every response: nothing breaks",
    { timeout: 600_000 },
    async () => {
      expectClean(
        await verify(["--suites", "functional", "--profile", "smoke", ...NEAR, "--network-proxy", "close-after-response"]),
      );
    },
  );
});
