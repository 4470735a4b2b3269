import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { verify } from "../meta/verify-run.js";
import {
  busyClient,
  harnessArgs,
  type MatrixConfig,
  OTHER_ID_FIELD,
  type Outcome,
  replayCommand,
  runConfig,
  sliceArbitrary,
  startTarget,
  TARGETS,
  targetUnavailable,
} from "./matrix.js";

/**
 * The npm-test slice of the configuration matrix (the full one: `npm run matrix`): a few cheap
 * configurations drawn with a pinned seed, each a dry run and a run of the harness in a child
 * process against the embedded reference, the reference in a container (where Docker answers;
 * CI fails without it), the reference through `serve`, or the independent server — held to: a conformant server → exit 0 and no finding; ran = the dry run's count; a
 * harness error → exit 2. Replay any row with the command its failure prints.
 */
const SEED = Number(process.env.AGENT_HARNESS_MATRIX_SEED ?? 20261128);
/** one row per target (the first each draws), so that every implementation is in every CI run */
const SLICE: MatrixConfig[] = TARGETS.map(
  (target) => fc.sample(sliceArbitrary(), { seed: SEED, numRuns: 50 }).find((c) => c.target === target)!,
);

/** Every promise kept and exit 0, or the broken ones with the command that replays the row. */
function expectKept(outcome: Outcome): void {
  expect(outcome.broken, `${outcome.lastLine}\nreplay: ${replayCommand(outcome)}`).toEqual([]);
  expect(outcome.code, outcome.lastLine).toBe(0);
}

/** A configuration on the independent server, all four keys, no network between, W = 2 s, T = 3 s. */
const onIndependentServer = (
  config: Pick<MatrixConfig, "command" | "selection" | "referenceFaults"> & Partial<MatrixConfig>,
): MatrixConfig => ({
  bail: false,
  keySet: "all+tier",
  target: "alt",
  network: "none",
  busy: false,
  windowSeconds: 2,
  messageTimeoutSeconds: 3,
  ...config,
});

// Every describe below is concurrent, so their rows share the project's three places (maxConcurrency),
// the longest (two property runs at once) first: one after another they took 55 s, the slice's
// rows waiting on nothing but the describe before them.

/**
 * Another client in the same account never makes a finding: two property runs at once against
 * one deployment with the same keys, a third client busy there all along (so the runs surely
 * meet another's agents), each within a small request budget. Each passes, or exits 2 naming
 * the other clients' activity on its last line.
 */
describe("two property runs at once with the same keys", { concurrent: true }, () => {
  test("no finding in either; an exit 2 names the other client's activity", { timeout: 600_000 }, async () => {
    const config: MatrixConfig = {
      ...SLICE[0]!,
      selection: ["property"],
      profile: undefined,
      sections: undefined,
      referenceFaults: false,
      keySet: "all+tier",
      target: "serve",
      network: "none",
      busy: true,
    };
    const target = (await startTarget(config))!;
    const busy = busyClient(target.plainUrl ?? target.baseUrl, target.keys.main);
    try {
      const args = [...harnessArgs(config, target), "--max-requests", "150"];
      const runs = await Promise.all([verify(args, SEED), verify(args, SEED + 1)]);
      for (const run of runs) {
        const last = run.output.trim().split("\n").at(-1) ?? "";
        expect(
          (run.results.findings ?? []).map((f) => f.message),
          last,
        ).toEqual([]);
        const errors = run.results.checks.filter((c) => c.status === "error").map((c) => `${c.id}: ${c.message}`);
        expect(errors, last).toEqual([]);
        expect([0, 2], last).toContain(run.code);
        if (run.code === 2) expect(last).toMatch(/^inconclusive: .*another client's activity/);
      }
    } finally {
      await busy.stop();
      await target.stop();
    }
  });
});

/**
 * A verify run against the independent server whose model fails every message: no finding, no
 * harness error, exit 2 whose last line names the deployment's model; then `more` on the run.
 */
async function againstFailingModel(
  selection: Pick<MatrixConfig, "selection" | "sections">,
  args: string[],
  more: (run: Awaited<ReturnType<typeof verify>>, last: string) => void,
): Promise<void> {
  const config = onIndependentServer({ command: "verify", referenceFaults: false, failingModel: true, ...selection });
  const target = (await startTarget(config))!;
  try {
    const run = await verify([...harnessArgs(config, target), ...args], SEED);
    const last = run.output.trim().split("\n").at(-1) ?? "";
    expect(
      (run.results.findings ?? []).map((f) => f.message),
      last,
    ).toEqual([]);
    expect(
      run.results.checks.filter((c) => c.status === "error").map((c) => `${c.id}: ${c.message}`),
      last,
    ).toEqual([]);
    expect(run.code, last).toBe(2);
    expect(last).toMatch(/^inconclusive: .*the deployment's own model failed/);
    more(run, last);
  } finally {
    await target.stop();
  }
}

/**
 * A deployment's model may fail any message (PROFILE §5: 500 MODEL_ERROR, the agent then in error);
 * only a reference-compatible target says when (§10). Here the independent server's model fails
 * every message, as a deployment's model backend may: the stateful sequences follow each failure
 * as the model does (judged), the conversation property cannot follow any conversation (not
 * judged, saying why). No finding, and an exit 2 that names the deployment's model.
 */
describe("the property suites against a deployment whose model fails every message", { concurrent: true }, () => {
  test("no finding; the stateful sequences follow the failures; exit 2 names the model", { timeout: 300_000 }, async () => {
    await againstFailingModel({ selection: ["property"] }, ["--max-requests", "200"], (run, last) => {
      // the sequences judged no reply: the message clauses they cite are not passed on nothing
      const stateful = run.results.checks.find((c) => c.title.includes("stateful: random sequences"));
      expect(stateful?.status, last).toBe("inconclusive");
      // the stateful road this row is for was taken: a message the deployment's model failed, followed
      const tallied = readFileSync(join(run.runDir, "property.jsonl"), "utf8");
      expect(tallied, last).toMatch(/stateful\.send(\.stream)?-deployment-model-error/);
    });
  });
});

/**
 * The same deployment, its model failing every message, and the functional checks that need a
 * reply (a message's shape, conversations, a stream, the success envelope): each says it could not
 * judge, naming the deployment's model (PROFILE §5 allows the 500, and the 503s of the agent in
 * error after it); none blames the service.
 */
describe("the functional suites against a deployment whose model fails every message", { concurrent: true }, () => {
  test("no finding, no harness error; exit 2 names the model", { timeout: 300_000 }, async () => {
    const sections = ["message.reply", "message.conversation", "message.stream", "envelope.success"];
    await againstFailingModel({ selection: ["functional"], sections }, [], () => {});
  });
});

/**
 * A deployment whose 400s name the field at fault only where PROFILE asks (§4: unknown and
 * read-only keys; §5 List: parameters) and carry no details else, as §2 allows: a length, a type,
 * a null, a platform without `enabled`, a message body's every fault. The functional rows and the
 * invalid-input properties judge the 400, and blame no one for details left out.
 */
describe("a deployment whose 400s name a field only where PROFILE asks", { concurrent: true }, () => {
  test("functional and property: no finding, exit 0", { timeout: 300_000 }, async () => {
    const config = onIndependentServer({
      command: "verify",
      selection: ["functional", "property"],
      referenceFaults: false,
      fewestDetails: true,
      sections: ["record.lengths", "message.body", "create.platform-enabled", "record.unknown-keys"],
    });
    const target = (await startTarget(config))!;
    try {
      const run = await verify([...harnessArgs(config, target), "--max-requests", "300"], SEED);
      const last = run.output.trim().split("\n").at(-1) ?? "";
      expect(
        (run.results.findings ?? []).map((f) => f.message),
        last,
      ).toEqual([]);
      expect(run.code, last).toBe(0);
    } finally {
      await target.stop();
    }
  });
});

/**
 * A capacity shard against a deployment reached through a forward proxy (tinyproxy, HTTP_PROXY),
 * with `--api-key` one of the tenants' keys of `--keys-file`: the run shares an account with the
 * tenants it drives, and every request goes through the proxy. Drawn by the full matrix; held here
 * in every CI run.
 */
describe("a capacity shard through a forward proxy, its main key a tenant's", { concurrent: true }, () => {
  const config: MatrixConfig = {
    ...onIndependentServer({ command: "load", selection: ["capacity"], referenceFaults: false }),
    keySet: "main",
    target: "serve",
    shard: true,
    tenantMainKey: true,
    proxy: "through",
  };
  test("exit 0, no finding, the proxy's log holds the run's requests", { timeout: 300_000 }, async (context) => {
    const unavailable = await targetUnavailable(config);
    if (unavailable) context.skip(unavailable);
    const outcome = await runConfig(config, SEED);
    expectKept(outcome);
  });
});

/**
 * A deployment with a small-tier account of its own for the tier checks (--tier-burst-key), its
 * tier the standard 60: room in it for fewer Gets than the Get bucket holds before the Lists whose
 * headers the two-empty-buckets check reads. On the independent server (`serve` is the reference,
 * whose small-tier account the embedded runs take at 100; the full matrix draws both).
 */
describe("a small-tier account of 60 (--tier-burst-key)", { concurrent: true }, () => {
  test.for([["alt"]] as const)("%s: the tier checks keep every promise", { timeout: 300_000 }, async ([target]) => {
    const config: MatrixConfig = {
      ...onIndependentServer({ command: "verify", selection: ["functional"], referenceFaults: false }),
      keySet: "all+tier+burst",
      target,
      sections: ["limits.tier"],
    };
    const outcome = await runConfig(config, SEED);
    expectKept(outcome);
  });
});

describe(`matrix slice (seed ${SEED})`, { concurrent: true }, () => {
  test.for(
    SLICE.map(
      (config, i) =>
        [
          `${config.target} ${config.keySet} ${config.network} ${config.sections?.join(",")}${config.tls ? ` tls ${config.tls}` : ""}`,
          config,
          i,
        ] as const,
    ),
  )("%s", { timeout: 400_000 }, async ([, config, i], context) => {
    const unavailable = await targetUnavailable(config);
    if (unavailable) context.skip(unavailable);
    const outcome = await runConfig(config, SEED + i);
    expect(outcome.broken, `${outcome.lastLine}\nreplay: ${replayCommand(outcome)}`).toEqual([]);
  });
});

/**
 * Bursts against a server that closes every connection after one answer (HTTP/1.1 allows it; the
 * independent server does), on its own clock (7.3 s ahead), behind a TLS terminator: a pipelined
 * burst there loses all but the first request of each connection, and judging what came back
 * blamed the service ("exactly 10 of 3 admitted"); a load run that never read the service's
 * clock judged its Reset 7 s off. Drawn once by the full matrix; held here in every CI run.
 */
describe("load bursts against a server that closes each connection, on another clock, through TLS", { concurrent: true }, () => {
  test("bucket-deleteAgent and quota-headers: exit 0, no finding", { timeout: 300_000 }, async () => {
    const config = onIndependentServer({
      command: "load",
      selection: ["bucket-deleteAgent", "quota-headers"],
      referenceFaults: true,
      tls: "ca",
    });
    const outcome = await runConfig(config, SEED);
    expectKept(outcome);
  });
});

/**
 * `load` with a deployment's main key alone (no --load-key: the bursts spend the main key's own
 * buckets) while another client sends on that key a few times a second: its requests spend the
 * same Create, List and Delete buckets unseen, and the bursts once blamed the service for it
 * ("exactly 10 admitted; received 7"). Each passes, or exits 2 naming the other client.
 */
describe("load bursts on the main key while another client uses it", { concurrent: true }, () => {
  test("bucket-createAgent, -listAgents, -deleteAgent: no finding", { timeout: 300_000 }, async () => {
    const config = onIndependentServer({
      command: "load",
      selection: ["bucket-createAgent", "bucket-listAgents", "bucket-deleteAgent"],
      referenceFaults: false,
      busy: true,
    });
    const outcome = await runConfig(config, SEED);
    expect(outcome.broken, `${outcome.lastLine}\nreplay: ${replayCommand(outcome)}`).toEqual([]);
    expect([0, 2], outcome.lastLine).toContain(outcome.code);
    if (outcome.code === 2) expect(outcome.lastLine).toMatch(/another client/);
  });
});

/**
 * `agent-harness cleanup` in each of its sweeps, reaching the deployment as verify does (behind a
 * TLS terminator with a company CA, a client certificate, through a forward proxy), with another
 * client busy in the account: it deletes exactly the agents its sweep names and keeps the rest
 * (./cleanup-row.ts). A few seconds each; the full matrix draws the rest of the combinations.
 */
describe("cleanup's sweeps of a deployment", { concurrent: true }, () => {
  const sweepRow = (over: Partial<MatrixConfig>): MatrixConfig => ({
    ...onIndependentServer({ command: "cleanup", selection: [], referenceFaults: false }),
    keySet: "main",
    ...over,
  });
  test.for([
    sweepRow({ sweep: "every-run", tls: "mutual", busy: true, idField: OTHER_ID_FIELD }),
    sweepRow({ sweep: "one-run", target: "serve", tls: "ca", proxy: "through" }),
    sweepRow({ sweep: "every-age", target: "serve" }),
    sweepRow({ sweep: "dry-run", target: "serve", proxy: "bypassed" }),
  ])("$sweep: exactly its agents deleted, the rest kept, exit 0", { timeout: 300_000 }, async (config, context) => {
    const unavailable = await targetUnavailable(config);
    if (unavailable) context.skip(unavailable);
    const outcome = await runConfig(config, SEED);
    expectKept(outcome);
  });
});

/**
 * A deployment whose records name their identifier otherwise (PROFILE §11), the harness told with
 * --id-field: every record and delete confirmation is read by that name, and the checks of the
 * record's shape and of a delete find nothing on a conformant server (success-schema reading `id`
 * instead made two false findings here: record.shape and delete.ok). Two clauses, not the whole
 * of §4: the same catch in a third of the time (docs/figures.md).
 */
describe("a deployment with another identifier field", { concurrent: true }, () => {
  test("verify's record-shape and delete checks: exit 0, no finding", { timeout: 300_000 }, async () => {
    const config = onIndependentServer({
      command: "verify",
      selection: ["functional"],
      referenceFaults: false,
      sections: ["record.shape", "delete.ok"],
      idField: OTHER_ID_FIELD,
    });
    const outcome = await runConfig(config, SEED);
    expectKept(outcome);
  });
});
