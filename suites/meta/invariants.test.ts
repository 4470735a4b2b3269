import { spawn } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PERMISSIONS } from "../../src/contract/index.js";
import { INTERNAL_FAULTS } from "../../src/run/internal-fault.js";
import { serveProcess } from "./serve-process.js";
import { scratchDir, verify } from "./verify-run.js";

/**
 * The CLI's promises, whatever the user chose (docs/verify.md, "Exit codes"): an internal error
 * is exit 2 in one line, never 1; an interrupted run says so on its last line and exits 130; a
 * selection whose lanes leave one with no file runs, and runs started at once from one folder
 * share nothing that breaks either. Kept cheap: dry runs, and runs stopped as they start.
 */
interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `agent-harness …` in a child process; `onLine` sees each stdout line as it comes (to send a signal). */
function cli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; onLine?: (line: string, child: ReturnType<typeof spawn>) => void } = {},
) {
  const reportDir = scratchDir("agent-harness-invariants-");
  const child = spawn(process.execPath, ["bin/agent-harness.js", ...args, "--report-dir", reportDir], {
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let partial = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) options.onLine?.(line, child);
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // bounded: a run that hangs is killed, and the test then fails on its exit code
  const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
  return new Promise<CliRun>((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? "";

describe("meta: an internal error is exit 2, in one line", { concurrent: true }, () => {
  test.for(INTERNAL_FAULTS.filter((f) => f !== "exit-code"))("%s → exit 2 and one line", async (fault) => {
    const run = await cli(["verify", "--dry-run", "--workers", "1"], { env: { AGENT_HARNESS_INTERNAL_FAULT: fault } });
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^agent-harness: internal error \(a harness error, not a finding about the service\): /);
  });

  test("an exit code set after the verdict (as a vitest run that failed sets it) does not change it", async () => {
    const run = await cli(["verify", "--dry-run", "--workers", "1"], { env: { AGENT_HARNESS_INTERNAL_FAULT: "exit-code" } });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
  });
});

/** A run sent `signal` once a stdout line matches `when`; whether it was sent, and the run. */
async function interrupted(args: string[], when: RegExp, signal: NodeJS.Signals) {
  let sent = false;
  const run = await cli(args, {
    onLine: (line, child) => {
      if (!sent && when.test(line)) {
        sent = true;
        child.kill(signal);
      }
    },
  });
  return { sent, ...run };
}

describe("meta: an interrupted run", { concurrent: true }, () => {
  test("SIGINT once checks run: the checks stop, the agents are deleted, the last line says so, exit 130", async () => {
    const run = await interrupted(["verify", "--sections", "§9", "--workers", "1"], /^\[1\/\d+\+? /, "SIGINT");
    expect(run.sent).toBe(true);
    expect(run.code).toBe(130);
    expect(lastLine(run.stdout)).toMatch(
      // "of 12+": files the run never reached had checks it had not counted yet
      /^interrupted: ran \d+ of \d+\+? checks, then deleted the agents it made \(passed\); exit 130$/,
    );
  });

  test("load, SIGINT once a scenario runs: the scenario ends, the last line says so, exit 130", async () => {
    const run = await interrupted(["load", "--scenario", "throughput", "--rate-window", "2"], /^target: /, "SIGINT");
    expect(run.sent).toBe(true);
    expect(run.code).toBe(130);
    expect(lastLine(run.stdout)).toMatch(/^interrupted: ran \d+ of 1 scenarios, then deleted what they made; exit 130$/);
  });

  test("SIGTERM once the checks ended: the report is still written and the verdict stands", async () => {
    // the agents swept, the report not yet written: a stop here once lost a whole run's report.
    // One clause's checks, none of them timed: the verdict that must stand is the run's own, and
    // §7's timing checks (a flood inside one 2 s window) can say inconclusive on a runner this
    // project's other files keep busy
    const run = await interrupted(
      ["verify", "--sections", "routing.unknown", "--workers", "1"],
      /every agent the run created is deleted/,
      "SIGTERM",
    );
    expect(run.sent).toBe(true);
    expect(run.stdout).toContain(
      "asked to stop after the checks ended: deleting the agents this run created and writing its report first",
    );
    expect(run.stdout).toMatch(/^reports: /m);
    expect(run.code, run.stdout.slice(-1500)).toBe(0);
  });

  test("SIGTERM before the run listens for it: exit 130, said on the last line", async () => {
    const run = await interrupted(["verify", "--workers", "1"], /^agent-harness verify — run/, "SIGTERM");
    expect(run.sent).toBe(true);
    expect(run.code).toBe(130);
    expect(lastLine(run.stderr)).toMatch(/^agent-harness: interrupted \(SIGTERM\)/);
  });
});

describe("meta: load --dry-run", () => {
  test("prints the plan, runs no scenario, writes no report, exit 0", async () => {
    const run = await cli(["load", "--scenario", "quota-headers,capacity", "--rate-window", "2", "--dry-run"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}quota-headers: /m);
    expect(run.stdout).toContain("will run: 1 checks (load 1)");
    expect(run.stdout).toMatch(/^skipped: capacity — needs --keys-file/m);
    expect(lastLine(run.stdout)).toBe("dry run: no scenario ran");
    expect(run.stdout).not.toMatch(/^reports: /m);
  });
});

describe("meta: --bail", () => {
  test("the checks not run after the first failure are reported skipped, naming --bail; none goes unreported", async () => {
    const run = await verify(["--fault", "unknown-path-before-auth", "--sections", "§9", "--bail", "--workers", "1"]);
    expect(run.code).toBe(1);
    const notRun = run.results.checks.filter((c) => c.status === "skipped");
    expect(notRun.length).toBeGreaterThan(0);
    for (const check of notRun) expect(check.message).toMatch(/--bail/);
    expect(run.results.checks.map((c) => c.id)).not.toContain("run.complete");
  });
});

/**
 * A deployment with the four keys a service owner has: with the quota key and --reference-faults
 * the run has account lanes, and every property file is the other lane's, so `--suites property`
 * leaves the main lane no file (it once ended "No test files found", exit 1). Two dry runs at once
 * from this folder: their calibrations' lanes (four vitest runs) share no cache file that breaks one.
 */
describe("meta: a selection that leaves a lane no file, twice at once", () => {
  const ALL = [...PERMISSIONS];
  const key = (role: string) => `ak_test_${role}_invariants_0123456789`;
  let server: { baseUrl: string; stop: () => Promise<void> };

  beforeAll(async () => {
    const file = join(scratchDir("agent-harness-invariants-keys-"), "keys.json");
    writeFileSync(
      file,
      JSON.stringify({
        accounts: [
          { id: "acct_main", tierLimit: 60, messageQuota: null },
          { id: "acct_other", tierLimit: 60, messageQuota: null },
          { id: "acct_quota", tierLimit: 60, messageQuota: 5 },
        ],
        keys: [
          { key: key("main"), account: "acct_main", permissions: ALL },
          { key: key("ro"), account: "acct_main", permissions: ["agents:read"] },
          { key: key("other"), account: "acct_other", permissions: ALL },
          { key: key("quota"), account: "acct_quota", permissions: ALL },
        ],
      }),
    );
    server = await serveProcess(["--keys", file, "--window-seconds", "2"]);
  }, 60_000);
  afterAll(() => server?.stop());

  test("--suites property --reference-faults --dry-run with all four keys: exit 0, the property checks promised", async () => {
    const args = [
      "verify",
      "--base-url",
      server.baseUrl,
      "--api-key",
      key("main"),
      "--read-only-key",
      key("ro"),
      "--other-account-key",
      key("other"),
      "--quota-key",
      key("quota"),
      "--tier",
      "60",
      "--rate-window",
      "2",
      "--reference-faults",
      "--suites",
      "property",
      "--max-requests",
      "40",
      "--dry-run",
    ];
    const runs = await Promise.all([cli(args), cli(args)]);
    const promised = runs.map((run) => {
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      return Number(/^will run: (\d+) checks \(property \1\)$/m.exec(run.stdout)?.[1]);
    });
    expect(promised[0]).toBeGreaterThan(0);
    expect(promised[1]).toBe(promised[0]);
  });

  // load scenarios alone make no request plan; the dry run still says how many run and why the rest do not
  test("--suites quick-load on a deployment: the dry run promises the count the run reports", async () => {
    const args = ["verify", "--base-url", server.baseUrl, "--api-key", key("main"), "--tier", "60", "--rate-window", "2"];
    const selection = ["--suites", "quick-load"];
    const dry = await cli([...args, ...selection, "--dry-run"]);
    expect(dry.code, dry.stdout).toBe(0);
    const promised = Number(/^will run: (\d+) checks \(load \1\)$/m.exec(dry.stdout)?.[1]);
    expect(promised, dry.stdout).toBeGreaterThan(0);
    expect(dry.stdout).toMatch(/^skipped: \d+ × needs --reference-faults/m);
    const run = await cli([...args, ...selection]);
    expect(run.code, run.stdout).toBe(0);
    // the sweep of the run's agents is a check of every run, never promised
    expect(Number(/^(\d+) passed, 0 failed/m.exec(run.stdout)?.[1]) - 1, run.stdout).toBe(promised);
  });
});

/**
 * `--sections` leaves out the files the section index knows to have no check there. The index is
 * whatever the last runs collected, under other selections: a run with the smoke profile (which
 * selects a few checks of each file) must leave an index under which a `--sections` run runs
 * exactly the checks it runs with no index at all.
 */
describe("meta: --sections against an index another selection built", () => {
  const ran = (run: CliRun) => Number(/^(\d+) checks in /m.exec(run.stdout)?.[1]);

  test("after a smoke run, --sections §6 runs the checks it runs with no index", async () => {
    // the index and vite's cache live under the temporary folder: one of this test's own
    const built = scratchDir("agent-harness-invariants-index-");
    const fresh = scratchDir("agent-harness-invariants-noindex-");
    const smoke = await cli(["verify", "--suites", "functional", "--profile", "smoke", "--workers", "2"], {
      env: { TMPDIR: built },
    });
    expect(smoke.code, smoke.stdout.slice(-2000)).toBe(0);
    // the report folder holds the reports: the service's clock, handed to the workers in a file there, is gone
    const reportDir = /^reports: (.+)$/m.exec(smoke.stdout)?.[1];
    expect(reportDir, smoke.stdout.slice(-500)).toBeDefined();
    expect(readdirSync(reportDir!).filter((f) => f.startsWith("."))).toEqual([]);
    // a run leaves nothing in the temporary folder but vite's modules and the index it keeps for the
    // next, and the folder every run keeps its workers' key-set claims in, empty again (else a folder a run)
    const left = readdirSync(built, { recursive: true }).map(String);
    expect(left.filter((f) => !f.startsWith("agent-harness-vite-"))).toEqual(["agent-harness-key-sets"]);
    // the smoke run kept an index there (else the runs below would prove nothing)
    const kept = readdirSync(built, { recursive: true }).filter((f) => /(^|\/)sections-[0-9a-f]+\.json$/.test(String(f)));
    expect(kept).toHaveLength(1);
    const args = ["verify", "--suites", "functional", "--sections", "§6", "--workers", "1"];
    const [withIndex, withoutIndex] = await Promise.all([
      cli(args, { env: { TMPDIR: built } }),
      cli(args, { env: { TMPDIR: fresh } }),
    ]);
    expect([withIndex.code, withoutIndex.code], withIndex.stdout.slice(-1500)).toEqual([0, 0]);
    expect(ran(withoutIndex)).toBeGreaterThan(0);
    expect(ran(withIndex)).toBe(ran(withoutIndex));
  });
});
