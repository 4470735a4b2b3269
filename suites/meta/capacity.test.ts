import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import type { KeysFileInput } from "../../src/contract/index.js";
import { FLOOD_SHAPES } from "../../src/load/capacity/floods.js";
import { exampleTenants } from "../../src/load/capacity/plan.js";
import type { LoadRun } from "../../src/load/run-of-scenarios.js";
import { dockerUnavailableReason, startReferenceContainer } from "../../src/target/container.js";
import { splitCores } from "../../src/target/cores.js";
import { MANY_TENANT_FAULTS, MANY_TENANTS, startReferenceServer } from "../../src/target/embedded.js";
import { EMBEDDED_DEFAULTS, referenceKeys } from "../../src/target/harness-target.js";
import { serveProcess } from "./serve-process.js";
import { FLOOD_DRIVE_MESSAGE_TIMEOUT_SECONDS, failedIn, load, loadMerge, scratchDir, type VerifyRun } from "./verify-run.js";

/**
 * Many tenants on the embedded reference: 200 keys over 50 accounts, each at 80 % of its buckets
 * for 15 s, one of them flooding in the second half (noisy-neighbour, which judges the steady
 * verdicts too). A small tier keeps the planned rate near 240 requests a second, within what two
 * shared cores carry with the target in-process. The shards drive one reference they share, as
 * shards on several machines would: the reference image in Docker when a daemon answers (CI
 * starts one), else the embedded server in this process.
 */
const TENANTS = { accounts: 50, keysPerAccount: 4, tier: 12 } as const;
const DRIVE = ["--scenario", "capacity", "--duration", "15s", "--profile", "noisy-neighbour", "--threshold", "errors<1%"];

const tenants = exampleTenants(TENANTS.accounts, TENANTS.keysPerAccount, TENANTS.tier);
const FLOOD_DRIVE = [
  ...["--scenario", "capacity", "--duration", "12s", "--profile", "noisy-neighbour"],
  ...["--message-timeout", String(FLOOD_DRIVE_MESSAGE_TIMEOUT_SECONDS)],
];
/** The tenants written where `--keys-file` reads them. */
function tenantsFile(t: typeof tenants): string {
  const dir = scratchDir("agent-harness-tenants-");
  const file = join(dir, "tenants.json");
  writeFileSync(file, JSON.stringify(t));
  return file;
}
const keysFile = tenantsFile(tenants);

const dockerMissing = await dockerUnavailableReason();
const startSharedReference = dockerMissing === undefined ? startReferenceContainer : startReferenceServer;
if (dockerMissing !== undefined)
  console.warn(`the shards drive the embedded reference: Docker is not reachable (${dockerMissing})`);

const floodKeysFile = tenantsFile(exampleTenants(5, 2, 60));

/** The one-process run, shared by the tests that read it. */
let cleanRun: Promise<VerifyRun> | undefined;
const clean = () => {
  cleanRun ??= load([...DRIVE, "--keys-file", keysFile]);
  return cleanRun;
};

/**
 * What a run decided from counts, which a merge must reproduce exactly: the clauses it found
 * broken, the unexpected 429s, each threshold, the tenants. The noisy-neighbour latency verdict
 * and whether each flood reached its intent are left out: it compares the others' p99 calm and flooded, and three shard processes on two
 * shared cores time each other, not the server (measured: 89 ms flooded against 35 ms allowed in
 * one of five merged runs of a clean server). Merged percentiles equal one histogram of all
 * samples (src/load/shard/merge.test.ts); the one-process run judges the latency below.
 */
const verdicts = (run: VerifyRun) => {
  const report = capacityOf(run);
  return {
    clauses: report?.failures
      .filter((f) => !f.check.startsWith("noisy-neighbour"))
      .map((f) => f.clause)
      .sort(),
    unexpected: report?.capacity?.counts.unexpected,
    neighboursUnexpected: [
      report?.capacity?.neighbours?.calm.unexpected,
      ...(report?.capacity?.neighbours?.floods.map((f) => f.unexpected) ?? []),
    ],
    // whether every flood reached its intent is the generators' timing too (the one process's, the
    // flooding shard's): passed and inconclusive alike say "no finding", which counts must agree on
    thresholds: run.results.checks
      .filter((c) => c.suite === "load")
      .map((c) => [c.id, c.status === "inconclusive" ? "passed" : c.status]),
    tenants: [report?.capacity?.settings.tenants, report?.capacity?.settings.keys],
  };
};

const capacityOf = (run: VerifyRun) => {
  const loadRun = JSON.parse(readFileSync(join(run.runDir, "load.json"), "utf8")) as LoadRun;
  return loadRun.scenarios.find((s) => s.id === "capacity");
};

describe("meta: capacity", () => {
  test("the clean reference carries 200 keys over 50 accounts: none refused under its limits, neighbours unharmed", async () => {
    const run = await clean();
    const report = capacityOf(run);
    expect(
      failedIn(run).map((c) => c.message),
      run.output.slice(-3000),
    ).toEqual([]);
    expect(report?.failures, run.output.slice(-3000)).toEqual([]);
    expect(report?.capacity?.settings).toMatchObject({ tenants: TENANTS.accounts, keys: 200 });
    expect(report?.capacity?.counts.unexpected).toBe(0);
    expect(report?.capacity?.counts.admitted).toBeGreaterThan(1000);
    // every shape ran; each passed, or gave no verdict naming the generator's headroom (two shared
    // cores may not make a flood on top of 240 requests a second): never a failure
    const floods = report?.capacity?.neighbours?.floods ?? [];
    expect(floods.map((f) => f.flood.shape)).toEqual([...FLOOD_SHAPES]);
    expect(floods.filter((f) => f.reached && !f.passed)).toEqual([]);
    const short = floods.filter((f) => !f.reached);
    // a flood the generator could not make is the inconclusive verdict (no finding, exit 2)
    expect(report?.status, run.output.slice(-3000)).toBe(short.length ? "inconclusive" : "passed");
    if (short.length) expect(run.output).toContain("the flood did not reach what it set out to do");
    expect(report?.streams?.ttfb.count).toBeGreaterThan(0);
    expect(run.code).toBe(short.length ? 2 : 0);
  });

  test("three shards against one shared reference, merged, give the one-process run's verdicts", async () => {
    const unsharded = await clean();
    // one reference that every shard drives, in Docker when a daemon answers
    const server = await startSharedReference({ keys: tenants, windowSeconds: EMBEDDED_DEFAULTS.windowSeconds });
    try {
      const target = ["--base-url", server.baseUrl, "--api-key", tenants.keys[0]!.key, "--rate-window", "2"];
      const shards = await Promise.all(
        // numbered as vitest numbers its shards: 1/3, 2/3, 3/3
        [1, 2, 3].map((x) => load([...DRIVE, "--keys-file", keysFile, ...target, "--shard", `${x}/3`])),
      );
      for (const s of shards) expect(capacityOf(s)?.mergeable?.settings.shard?.count, s.output.slice(-2000)).toBe(3);
      const merged = await loadMerge(shards.map((s) => s.runDir));
      expect(capacityOf(merged)?.capacity?.settings.shards, merged.output.slice(-3000)).toBe(3);
      expect(verdicts(merged), merged.output.slice(-3000)).toEqual(verdicts(unsharded));
    } finally {
      await server.close();
    }
  });

  test("no verify run of the reference has as many accounts as wake the many-tenant faults", () => {
    expect(referenceKeys(EMBEDDED_DEFAULTS).file.accounts.length).toBeLessThan(MANY_TENANTS);
  });

  test.for(
    Object.entries(MANY_TENANT_FAULTS).map(([name, f]) => [name, f.clause] as const),
  )("many-tenant fault %s (breaks %s) is caught by capacity", async ([name, clauseId]) => {
    const run = await load([...DRIVE, "--keys-file", keysFile, "--fault", name]);
    const report = capacityOf(run);
    expect(
      report?.failures.map((f) => f.clause),
      `no capacity finding citing ${clauseId} with --fault ${name}\n${run.output.slice(-3000)}`,
    ).toContain(clauseId);
    expect(report?.capacity?.counts.unexpected).toBeGreaterThan(0);
    expect(run.code).toBe(1);
  });

  /**
   * Each flood fault harms the others under its own shape: caught by that shape's check and by no
   * other shape's, at the default flood settings. Five tenants keep the steady drive small beside
   * the storm; a drive of 12 s gives each shape 1.5 s (a flood of 1 s, then its after-effects), and
   * a budget of FLOOD_DRIVE_MESSAGE_TIMEOUT_SECONDS ends the stream hog's messages twice inside its flood.
   * The refusal storm's fault runs in a `serve` its "owner" pinned to cores of its own and named by
   * `--service-cores`, so that road (a deployment on this machine) is held too at no extra run; the
   * others in the reference `load` starts on cores of its own.
   */
  test.for(
    Object.entries(FLOOD_FAULT_SHAPES).map(
      ([name, shape]) => [name, shape, name === PINNED_FAULT ? PINNED : "the reference load starts"] as const,
    ),
  )("flood fault %s is caught by %s alone, on %s", async ([name, shape, where], ctx) => {
    const run =
      where === PINNED
        ? await pinnedLoad(name, ctx)
        : await load([...FLOOD_DRIVE, "--keys-file", floodKeysFile, "--fault", name]);
    const report = capacityOf(run);
    const caughtBy =
      report?.failures
        .map((f) => f.check)
        .filter((check) => check.startsWith("noisy-neighbour "))
        .map((check) => check.slice("noisy-neighbour ".length)) ?? [];
    expect(
      caughtBy.filter((s) => s !== shape),
      run.output.slice(-3000),
    ).toEqual([]);
    // a machine too busy to make the flood gives no verdict, and says why: nothing proved either way
    const own = report?.capacity?.neighbours?.floods.find((f) => f.flood.shape === shape);
    if (!own?.reached) return ctx.skip(`no verdict on ${shape}: ${own?.unreachedBecause ?? "it did not run"}`);
    expect(caughtBy, run.output.slice(-3000)).toEqual([shape]);
    expect(run.code).toBe(1);
  });
});

const PINNED = "a deployment pinned to cores of its own and named by --service-cores";
const PINNED_FAULT = "refusal-storm-slows-everyone";

/**
 * The flood drive against a `serve` with `fault`, started on the upper half of the CPUs (taskset)
 * as a service owner pins a deployment, and named by `--service-cores`: the storm's latency is then
 * judged as for a reference the harness starts (without the option the verdict is moot: generator
 * and service would share every core). Skipped where cores cannot be split.
 */
async function pinnedLoad(fault: string, ctx: { skip: (note: string) => never }): Promise<VerifyRun> {
  const cores = splitCores();
  if (!cores) return ctx.skip("fewer than two CPUs, or no taskset: no core to give the deployment");
  const seconds = String(FLOOD_DRIVE_MESSAGE_TIMEOUT_SECONDS);
  const server = await serveProcess(
    ["--keys", floodKeysFile, "--window-seconds", "2", "--message-timeout-seconds", seconds, "--fault", fault],
    cores.service,
  );
  try {
    const key = (JSON.parse(readFileSync(floodKeysFile, "utf8")) as KeysFileInput).keys[0]!.key;
    const run = await load([
      ...FLOOD_DRIVE,
      ...["--keys-file", floodKeysFile, "--rate-window", "2"],
      ...["--base-url", server.baseUrl, "--api-key", key, "--service-cores", cores.service.join(",")],
    ]);
    expect(capacityOf(run)?.capacity?.settings.service?.ownCores, run.output.slice(-3000)).toBe(cores.service.length);
    return run;
  } finally {
    await server.stop();
  }
}

/** Which shape wakes which flood fault (src/server/faults/capacity.test.ts proves it in small). */
const FLOOD_FAULT_SHAPES = {
  "refusal-storm-slows-everyone": "refusal-storm",
  "unknown-key-global-lock": "unknown-key-storm",
  "budget-end-stalls-server": "stream-hog",
  "connection-cap": "connection-hog",
} as const;
