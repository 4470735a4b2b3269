import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { PERMISSIONS, RATE_LIMITS } from "../contract/index.js";
import { exampleTenants } from "../load/capacity/plan.js";
import { startReferenceServer } from "../target/embedded.js";
import { parseLoadArgs } from "./load.js";
import { main } from "./main.js";

/** What `run` writes to `stream`, kept out of the test's output. */
async function capture(stream: NodeJS.WriteStream, run: () => Promise<number>) {
  const chunks: string[] = [];
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string) => chunks.push(String(chunk)) > 0) as typeof stream.write;
  try {
    return { code: await run(), written: chunks.join("") };
  } finally {
    stream.write = write;
  }
}

/** A noisy-neighbour drive of two tenants (the options --service-cores belongs to). */
const tenantsPath = join(mkdtempSync(join(tmpdir(), "agent-harness-load-usage-")), "tenants.json");
writeFileSync(tenantsPath, JSON.stringify(exampleTenants(2, 1, RATE_LIMITS.tiers.standard)));
const NOISY = ["--scenario", "capacity", "--keys-file", tenantsPath, "--profile", "noisy-neighbour"];

/** Bad `load` input: one readable line and exit 2, before any target starts. */
describe("agent-harness load usage", () => {
  test.for([
    [["--threshold", "p99~250"], /--threshold "p99~250"/],
    [["--threshold", "p99[5xx]<250"], /the outcome in \[\] is one of 2xx, 429, other/],
    [["--threshold", "errors[429]<1%"], /takes no \[outcome\]/],
    [["--scenario", "no-such"], /--scenario takes/],
    [["--shard", "1/3"], /--shard shape the capacity scenario's drive of a keys file's tenants: add --keys-file/],
    [["--duration", "banana", "--shard", "1/2"], /--duration, --shard shape the capacity scenario's drive/],
    [["--out", "prometheus-rw=http://prom:99999/api/v1/write"], /--out prometheus-rw=URL: the URL does not parse/],
    [["--out", "prometheus-rw=https://u:s3cret@prom.example/api/v1/write"], /a user or password in the URL is never sent/],
    [["--base-url", "http://198.51.100.7/v1", "--api-key", "k"], /not a loopback address/],
    [["--base-url", "http://127.0.0.1:1/v1"], /--base-url needs --api-key/],
    // the property suite's options: a load run has no property to replay or budget
    [["--replay", "reports/run/replay-create-valid.json"], /Unknown option '--replay'/],
    [["--max-requests", "600"], /Unknown option '--max-requests'/],
    [["--service-cores", "one"], /--service-cores "one": a list of CPUs/],
    [["--service-cores", "1"], /with --keys-file and --profile noisy-neighbour: add them/],
    [["--service-cores", "3-1"], /--service-cores "3-1": a list of CPUs/],
    [["--service-cores", "0-4294967295"], /a list of CPUs/],
    [[...NOISY, "--service-cores", "1"], /a loopback --base-url/],
    [
      [...NOISY, "--service-cores", "1", "--base-url", "http://127.0.0.1:1/v1", "--api-key", "k", "--network-delay", "40"],
      /cannot be judged through --network-delay/,
    ],
    // nothing listens on port 1: exit 2 before any scenario, not a verdict on the target
    [
      ["--base-url", "http://127.0.0.1:1/v1", "--api-key", "k", "--report-dir", "/tmp/agent-harness-load-test"],
      /target unreachable/,
    ],
  ] as const)("%j → exit 2", async ([args, message]) => {
    const { code, written } = await capture(process.stderr, () => main(["load", ...args]));
    expect(code).toBe(2);
    expect(written).toMatch(message);
  });
});

/** Values that spell a load flag stay the value of the flag before them. */
test("--report-dir out --seed 7: the folder is out and the seed 7 (the word out once read as --out)", () => {
  const { config } = parseLoadArgs(["--report-dir", "out", "--seed", "7", "--scenario", "bucket-getAgent"]);
  expect({ reportDir: config.reportDir, seed: config.seed }).toEqual({ reportDir: "out", seed: 7 });
});

/** A report folder that is a file: refused in one line before any target starts (the run once hung, its target left running). */
test.for(["verify", "load"])("%s --report-dir naming a file → exit 2, no target started", async (command) => {
  const file = join(mkdtempSync(join(tmpdir(), "agent-harness-report-dir-")), "report.txt");
  writeFileSync(file, "not a folder");
  const rest = command === "verify" ? ["--profile", "smoke"] : ["--scenario", "bucket-getAgent"];
  const { code, written } = await capture(process.stderr, () => main([command, "--report-dir", file, ...rest]));
  expect(code).toBe(2);
  expect(written).toMatch(/--report-dir .*report\.txt: not a folder/);
});

/**
 * The exit code of a real `load` run (STYLE §7): nothing ran is not a pass, a finding is 1. The
 * reports go to a scratch folder; the terminal output is kept out of the test's.
 */
describe("agent-harness load exits as the run ended", { timeout: 60_000 }, () => {
  const reportDir = join(tmpdir(), "agent-harness-load-exit");
  const quiet = async (argv: string[]) =>
    (await capture(process.stdout, () => main(["load", ...argv, "--report-dir", reportDir]))).code;

  test("2 when nothing ran: on a deployment without --reference-faults the chosen scenarios are skipped", async () => {
    const server = await startReferenceServer();
    try {
      const argv = ["--base-url", server.baseUrl, "--api-key", server.keys.keys[0]!.key, "--scenario", "slot-release"];
      expect(await quiet(argv)).toBe(2);
    } finally {
      await server.close();
    }
  });

  test("2 when a capacity shard holds no account: nothing driven is no pass", async () => {
    // two accounts, three shards: the third holds none
    const args = ["--scenario", "capacity", "--keys-file", tenantsPath, "--shard", "3/3", "--duration", "2s"];
    const { code, written } = await capture(process.stdout, () => main(["load", ...args, "--report-dir", reportDir]));
    expect(code).toBe(2);
    expect(written).toMatch(/nothing to drive: shard 3\/3 holds no account of the keys file \(2 accounts\)/);
  });

  test("1 on a finding: a reference target with a defect only bursts reveal", async () => {
    // the shortest window the bursts judge (Reset is in whole seconds); the defect overfills Get's
    // bucket whatever W is (Create's 10 after a probe can come out exact: the connections'
    // requests arrive three a turn)
    const argv = ["--fault", "bucket-check-then-count", "--scenario", "bucket-getAgent", "--rate-window", "1"];
    expect(await quiet(argv)).toBe(1);
  });

  // slot-release judges a slot still held only by a 429 to a try sent after its allowance: a
  // service that keeps a gone client's slot until its reply would have ended gives that 429
  test("1 on a finding: slot-release against a server keeping a gone client's slot", async () => {
    expect(await quiet(["--fault", "gone-client-keeps-slot", "--scenario", "slot-release"])).toBe(1);
  });

  /**
   * What a service owner has: one account at the standard tier, its W and T, no load account.
   * The waves of streams-at-budget are sized to the room the tier leaves: two fit in a window.
   */
  test("0 for streams-at-budget at a standard tier, W = 5 s, T = 3 s: its waves fit the tier", async () => {
    const budget = 3;
    const tier = RATE_LIMITS.tiers.standard;
    const keys = {
      accounts: [{ id: "acct_owner", tierLimit: tier, messageQuota: null }],
      keys: [{ key: "ak_owner_standard_0123456789", account: "acct_owner", permissions: [...PERMISSIONS] }],
    };
    const server = await startReferenceServer({ keys, windowSeconds: 5, messageTimeoutSeconds: budget });
    try {
      const owner = ["--base-url", server.baseUrl, "--api-key", keys.keys[0]!.key, "--tier", String(tier)];
      const service = ["--rate-window", "5", "--message-timeout", String(budget), "--reference-faults"];
      expect(await quiet([...owner, ...service, "--scenario", "streams-at-budget", "--seed", "1"])).toBe(0);
    } finally {
      await server.close();
    }
  });
});
