import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { exampleTenants } from "../../src/load/capacity/plan.js";
import type { LoadRun } from "../../src/load/run-of-scenarios.js";
import { startDelayProxy } from "../../src/net/delay-proxy.js";
import { startReferenceServer } from "../../src/target/embedded.js";
import { EMBEDDED_DEFAULTS } from "../../src/target/harness-target.js";
import { harnessExit, load } from "./verify-run.js";

/**
 * `load compare` as a release gate, on real runs: the same build twice (A/A) passes, the same
 * build 30 ms slower each way (behind a delaying proxy the harness does not know of: to it, a
 * slower deployment) fails naming the endpoint and the figure, and runs of other scenarios, or of
 * one network against another the harness made (`--network-delay`), are refused as not
 * comparable. The three runs go at once, each against a reference of its own, so the machine's
 * load falls on all of them alike. The p90 gate holds on A/A because compare's noise takes in a
 * busy second (whole time blocks resampled) and a busier machine (the runs' event-loop lag), and
 * judges a quantile only where enough answers lie above it (a p90 from 50 answers: the two GETs
 * and the messages of a 10 s capacity run); the median gate is the one +30 ms must break on a loaded runner, where
 * a loopback tail moves by more than 60 ms with whatever else runs (docs/figures.md has the A/A
 * figures). A p99 gate on runs this short is judged on no endpoint: no verdict, exit 2, never a pass.
 */
const dir = mkdtempSync(join(tmpdir(), "agent-harness-compare-"));
const keysFile = join(dir, "tenants.json");
const tenants = exampleTenants(10, 2, 12);
writeFileSync(keysFile, JSON.stringify(tenants));
const { windowSeconds, messageTimeoutSeconds } = EMBEDDED_DEFAULTS;
// a reference each, as each run's own embedded one would be: one shared would share the tenants' buckets
const references = await Promise.all(
  [1, 2, 3].map(() => startReferenceServer({ keys: tenants, windowSeconds, messageTimeoutSeconds })),
);
const origin = new URL(references[2]!.baseUrl);
const thirtyMsAway = await startDelayProxy(
  { host: origin.hostname, port: Number(origin.port) },
  { up: { ms: 30, jitterMs: 0 }, down: { ms: 30, jitterMs: 0 } },
);
afterAll(async () => {
  await thirtyMsAway.close();
  await Promise.all(references.map((r) => r.close()));
});

/** A capacity drive of the reference at `baseUrl`, a deployment to the harness. */
const drive = (baseUrl: string, ...more: string[]) =>
  load([
    ...["--scenario", "capacity", "--keys-file", keysFile, "--duration", "10s", "--base-url", baseUrl],
    ...["--api-key", tenants.keys[0]!.key, "--rate-window", String(windowSeconds)],
    ...["--message-timeout", String(messageTimeoutSeconds), "--reference-faults", ...more],
  ]);
const GATE = ["--max-regression", "p90:+10%", "--max-regression", "p50:+25ms", "--report-dir", dir];

test(
  "A/A passes, +30 ms fails naming endpoint and figure, other scenarios or networks are not comparable",
  { timeout: 300_000 },
  async () => {
    const slowerUrl = thirtyMsAway.urlFor(references[2]!.baseUrl);
    const [a, b, delayed] = await Promise.all([drive(references[0]!.baseUrl), drive(references[1]!.baseUrl), drive(slowerUrl)]);
    for (const r of [a, b, delayed]) expect(r.code, r.output.slice(-2000)).toBe(0);

    const aa = await harnessExit(["load", "compare", a.runDir, b.runDir, ...GATE]);
    expect(aa.code, aa.output).toBe(0);
    expect(aa.output).toMatch(/no regression beyond tolerance and noise/);

    // p99 from a few hundred answers at most: judged nowhere, and said so rather than passed
    const p99 = await harnessExit(["load", "compare", a.runDir, b.runDir, "--max-regression", "p99:+10%", "--report-dir", dir]);
    expect(p99.code, p99.output).toBe(2);
    expect(p99.output).toMatch(/p99:\+10%: judged nowhere: every endpoint had fewer than 500 answers in a run/);
    expect(p99.output).toMatch(/no verdict: p99:\+10% judged on no endpoint/);

    const slower = await harnessExit(["load", "compare", a.runDir, join(delayed.runDir, "load.json"), ...GATE]);
    expect(slower.code, slower.output).toBe(1);
    expect(slower.output).toMatch(/✗ capacity (GET|POST|PATCH|DELETE) \/agents\S* p50 .* beyond p50:\+25ms/);

    // the same run under another scenario's name: refused, saying which scenarios each drove
    const other = JSON.parse(readFileSync(join(b.runDir, "load.json"), "utf8")) as LoadRun;
    for (const s of other.scenarios) s.id = "throughput";
    const otherFile = join(dir, "other-load.json");
    writeFileSync(otherFile, JSON.stringify(other));
    const refused = await harnessExit(["load", "compare", a.runDir, otherFile, ...GATE]);
    expect(refused.code, refused.output).toBe(2);
    expect(refused.output).toMatch(/not comparable: the runs drove other scenarios: BASE capacity, CURRENT throughput/);

    // the same run as if made through --network-delay: another network, which the harness knows it made
    const far = JSON.parse(readFileSync(join(b.runDir, "load.json"), "utf8")) as LoadRun;
    far.target.network = "30 ± 0 ms each way";
    const farFile = join(dir, "far-load.json");
    writeFileSync(farFile, JSON.stringify(far));
    const elsewhere = await harnessExit(["load", "compare", a.runDir, farFile, ...GATE]);
    expect(elsewhere.code, elsewhere.output).toBe(2);
    expect(elsewhere.output).toMatch(
      /not comparable: the targets had other settings: network none in BASE, 30 ± 0 ms each way in CURRENT/,
    );
  },
);
