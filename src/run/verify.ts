import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { describeServiceClock, estimateServiceClock, handOverClock } from "../client/index.js";
import { selects } from "../contract/index.js";
import { formatSeconds, RUN_BOUND_ALLOWANCE_SECONDS, runBoundSeconds } from "../plan/plan.js";
import { formatRatio, PlannedRun } from "../plan/session.js";
import {
  type CheckResult,
  checksDone,
  exitCodeOf,
  formatProgress,
  formatPropertySummary,
  formatRefusalWaits,
  formatSummary,
  noVerdictLine,
  ProgressFailures,
  type PropertySummary,
  propertiesRan,
  type RefusalWaits,
  type RunResult,
  readPropertySummary,
  readRefusalWaits,
  writeReports,
} from "../report/index.js";
import { type HarnessTarget, type PropertyReplay, targetSecrets } from "../target/harness-target.js";
import { sweepLedger } from "./cleanup.js";
import { unreportedRows } from "./completeness.js";
import { DEFAULT_EXTERNAL_SUITES, DEFAULT_SUITES, type VerifyConfig } from "./config.js";
import { breakIfAsked } from "./internal-fault.js";
import { checkKeys } from "./key-check.js";
import { assertReachable, interruptible, makeRunDir, newRun, startTarget, targetOptions } from "./lifecycle.js";
import { writeReplays } from "./replay.js";
import { needsOfFile } from "./suite-needs.js";
import { fileInSuite, runSuites, type SuitesRun } from "./suites.js";
import { UsageError } from "./usage-error.js";

/**
 * A deployment gets load only when its owner asks for it (bursts cost its users): the default run says so.
 * Asked for, the scenarios are outside the request plan (bursts are the point) but bounded, each
 * by its own estimate: the plan says how long they add.
 */
async function loadOnDeployment(
  target: HarnessTarget,
  { suites, sections, profile }: ReturnType<typeof suiteOptionsOf>,
  asked: boolean,
): Promise<{ line: string; runnable: number; skipped: string[] }> {
  // imported here: the scenarios bring autocannon, fast-check and the histograms, which the
  // embedded default (whose quick load runs in the suites' workers) has no use for in this process
  const [{ SCENARIOS }, { whyUnavailable }] = await Promise.all([
    import("../load/scenarios.js"),
    import("../load/scenario-run.js"),
  ]);
  const chosen = SCENARIOS.filter((s) =>
    s.tenants ? false : suites.includes("load") ? true : suites.includes("quick-load") && s.quickGroup !== undefined,
  )
    // the run keeps a scenario's check as it keeps any other: --sections by its clauses and their
    // sections, --profile smoke by its tag (no scenario is a smoke check)
    .filter((s) => !sections?.length || selects(sections, s.clauses))
    .filter(() => profile !== "smoke");
  if (!chosen.length)
    return {
      line: asked
        ? `load: no load scenario chosen${sections?.length || profile === "smoke" ? " (none in this selection)" : ""}`
        : "load: none on a deployment unless asked (--suites functional,property,quick-load or load; agent-harness load)",
      runnable: 0,
      skipped: [],
    };
  // as the run decides it: behind an HTTP proxy the raw-socket scenarios are skipped too
  const runnable = chosen.filter((s) => !whyUnavailable(s, target));
  const skipped = chosen.flatMap((s) => whyUnavailable(s, target) ?? []);
  const seconds = runnable.reduce((n, s) => n + s.estimateSeconds(target), 0);
  return {
    line: `load: ${runnable.length} of ${chosen.length} scenarios can run here, outside the request plan: about ${formatSeconds(seconds)} more (their bursts are bounded per scenario)`,
    runnable: runnable.length,
    skipped,
  };
}

/** A `--replay` file as the property suite wrote it; its seed must agree with `--seed` when both are given. */
export function readReplayFile(file: string, seed: number | undefined, maxRequests: number | undefined): PropertyReplay {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new UsageError(`--replay: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = z
    .object({
      property: z.string().min(1),
      seed: z.number().int(),
      path: z.string().min(1),
      replayPath: z.string().optional(),
      maxRequests: z.number().int().min(1).optional(),
      referenceFaults: z.boolean().optional(),
    })
    .safeParse(raw);
  if (!parsed.success) throw new UsageError(`--replay: ${file} is not a replay file written by the property suite`);
  if (seed !== undefined && seed !== parsed.data.seed)
    throw new UsageError(`--replay: the file was written with seed ${parsed.data.seed}, not ${seed}`);
  if (maxRequests !== undefined && parsed.data.maxRequests !== undefined && maxRequests !== parsed.data.maxRequests)
    throw new UsageError(
      `--replay: the file was written with --max-requests ${parsed.data.maxRequests}, not ${maxRequests} (the budget shapes the generated cases)`,
    );
  // zod leaves an absent optional key out, so the parsed object is a replay as it is
  return parsed.data;
}

/** The suites a run chooses, in one place: a dry run shows the run's own choice. */
function suiteOptionsOf(config: VerifyConfig, target: HarnessTarget) {
  return {
    suites: config.suites ?? [...(target.kind === "external" ? DEFAULT_EXTERNAL_SUITES : DEFAULT_SUITES)],
    ...(config.sections ? { sections: config.sections } : {}),
    profile: config.profile,
  };
}

/**
 * An external target's limits are real: the run is planned before a check sends anything, by
 * counting the same suites against an embedded reference (src/plan); the load scenarios are
 * outside the plan. `verify` and `verify --dry-run` plan the same way, so they print the same plan.
 */
async function planFor(
  target: HarnessTarget,
  suiteOptions: ReturnType<typeof suiteOptionsOf>,
  calibrated?: (checks: CheckResult[]) => void,
  signal?: AbortSignal,
): Promise<PlannedRun | undefined> {
  const counted = suiteOptions.suites.filter((s) => s !== "load" && s !== "quick-load");
  if (target.kind !== "external" || !counted.length) return undefined;
  process.stdout.write("plan: counting the requests of these suites against an embedded reference…\n");
  const planned = await PlannedRun.calibrate(
    target,
    async (t) => {
      const { checks } = await runSuites({ target: t, ...suiteOptions, suites: counted, ...(signal ? { signal } : {}) });
      calibrated?.(checks);
      return checks;
    },
    needsOfFile,
  );
  const bound = runBoundSeconds(planned.plan);
  process.stdout.write(
    `${planned.describe()}\nplan: the run stops at ${formatSeconds(bound)} (twice the lower bound and ${formatSeconds(RUN_BOUND_ALLOWANCE_SECONDS)})\n`,
  );
  return planned;
}

/**
 * `verify --dry-run`: after the keys and the clock, what the run would do, and nothing more. The
 * checks that would run and those that would be skipped come from the plan's calibration run,
 * which has the target's shape (its keys, tier, capabilities): a check skipped there names the
 * flag that enables it, as it would in the run.
 */
async function dryRun(target: HarnessTarget, config: VerifyConfig, keyRequests: number): Promise<number> {
  const out = process.stdout;
  const suiteOptions = suiteOptionsOf(config, target);
  out.write(`dry run: suites ${suiteOptions.suites.join(", ")}${config.profile === "smoke" ? " (smoke)" : ""}\n`);
  let checks: CheckResult[] = [];
  const planned = await planFor(target, suiteOptions, (c) => {
    checks = c;
  });
  if (planned) {
    const runs = checks.filter((c) => c.status !== "skipped");
    // the load scenarios are outside the plan's calibration, but each that can run here is a check of the run
    const load = await loadOnDeployment(target, suiteOptions, config.suites !== undefined);
    const bySuite = countBy(runs, (c) => c.suite);
    if (load.runnable) bySuite.set("load", (bySuite.get("load") ?? 0) + load.runnable);
    const suites = [...bySuite].map(([s, n]) => `${s} ${n}`).join(", ");
    out.write(`will run: ${runs.length + load.runnable} checks${suites ? ` (${suites})` : ""}\n`);
    writeSkipped([...checks.filter((c) => c.status === "skipped").map((c) => c.message ?? "skipped"), ...load.skipped]);
    out.write(`${load.line}\n`);
  } else if (target.kind === "external") {
    // load scenarios alone: no request plan (each scenario bounds its own bursts), but a count all the same
    const load = await loadOnDeployment(target, suiteOptions, config.suites !== undefined);
    out.write(`will run: ${load.runnable} checks${load.runnable ? ` (load ${load.runnable})` : ""}\n`);
    writeSkipped(load.skipped);
    out.write(`${load.line}\n`);
  } else
    out.write(
      `plan: none for ${target.kind === "embedded" ? "an" : "a"} ${target.kind} reference the harness starts (its accounts and keys are its own, one set per worker)\n`,
    );
  out.write(
    `dry run: ${keyRequests} requests checked the keys (plus ${target.serviceClock?.probes ?? 0} unauthenticated Date probes, counted in no limit); no check ran\n`,
  );
  return 0;
}

/** The checks a dry run says will be skipped, one line per reason (the flag that enables them), the commonest first. */
function writeSkipped(reasons: readonly string[]): void {
  const skipped = countBy(reasons, (why) => why);
  for (const [why, n] of [...skipped].sort((a, b) => b[1] - a[1])) process.stdout.write(`skipped: ${n} × ${why}\n`);
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/**
 * Before any check: a wrong key, or an unreachable target, is one line and exit 2, with no
 * cleanup to report and no empty report folder; then the service's clock (PROFILE §4, §7 times),
 * unless `clockLater` (estimateWhileStarting). Returns the requests the key check spent.
 */
async function checkTargetFirst(
  target: HarnessTarget,
  config: VerifyConfig,
  stop: () => Promise<void>,
  clockLater: boolean,
): Promise<number> {
  const out = process.stdout;
  let keyRequests = 0;
  try {
    // a target the harness started has the keys it made; a deployment's are checked
    if (target.kind === "external" || config.dryRun) {
      const keys = await checkKeys(target);
      keyRequests = keys.requests;
      out.write(`${keys.lines.join("\n")}\n`);
    } else await assertReachable(target);
    if (!clockLater) {
      target.serviceClock = await estimateServiceClock(target.baseUrl);
      out.write(`${describeServiceClock(target.serviceClock)}\n`);
    }
    breakIfAsked();
  } catch (err) {
    await stop();
    throw err;
  }
  return keyRequests;
}

/**
 * The clock of a service the run started is estimated while the suites' workers start, not before
 * them (about half a second of a run's start): handed over in a file of the run's folder, which
 * each worker reads before its first check (src/client/clock-handover.ts). A deployment's run
 * plans with it first, so it is estimated before anything else there.
 */
function estimateWhileStarting(target: HarnessTarget, runDir: string) {
  const file = join(runDir, ".service-clock.json");
  target.serviceClockFile = file;
  const estimated = estimateServiceClock(target.baseUrl)
    .then((clock) => {
      target.serviceClock = clock;
      handOverClock(file, { clock });
      process.stdout.write(`${describeServiceClock(clock)}\n`);
    })
    .catch((err: unknown) => {
      // whatever failed (the estimate, or writing it), the workers learn it at once rather than wait
      try {
        handOverClock(file, { failed: err instanceof Error ? err.message : String(err) });
      } catch {
        // no file: the workers wait out their bound
      }
      throw err;
    });
  // its failure is thrown once the checks have ended (settled below)
  estimated.catch(() => {});
  return {
    /**
     * The estimate's failure, if it failed, awaited while the service still runs (the checks may end
     * before the estimate does); the file is left out of the reports. An interrupted run's is none:
     * the run says it was interrupted.
     */
    failure: async (interrupted: boolean): Promise<unknown> => {
      try {
        await estimated;
        return undefined;
      } catch (err) {
        return interrupted ? undefined : (err ?? new Error("the service's clock could not be estimated"));
      } finally {
        rmSync(file, { force: true });
      }
    },
  };
}

/** A planned run has a bound: no target (rate headers that lie to the pacing) makes it crawl. */
function runBound(planned: PlannedRun | undefined) {
  const bounded = new AbortController();
  let overran: string | undefined;
  const bound = planned ? runBoundSeconds(planned.plan) : undefined;
  const timer =
    bound === undefined
      ? undefined
      : setTimeout(() => {
          overran = `the run reached its bound of ${formatSeconds(bound)} (twice the plan's lower bound and ${formatSeconds(RUN_BOUND_ALLOWANCE_SECONDS)}) and was stopped: the checks not done did not run; a target whose rate headers mislead the pacing shows in the findings`;
          process.stdout.write(`\n${overran}\n`);
          bounded.abort();
        }, bound * 1000);
  return { signal: bounded.signal, overran: () => overran, clear: () => clearTimeout(timer) };
}

/** What the checks of a run gave: the suites' rows and findings, what the plan promised, and the sweep. */
interface ChecksRun {
  suites: SuitesRun;
  /** on a deployment, the checks the plan's calibration ran: what --dry-run promised, each to be reported */
  calibrated?: CheckResult[];
  planned?: PlannedRun;
  property?: PropertySummary;
  refusalWaits?: RefusalWaits;
  /** why the run was stopped at its bound, if it was */
  overran?: string;
  /** the suites asked for whose every check the selection left out, each with why */
  ranNothing?: { suite: string; message: string }[];
}

/** The plan, then the suites in vitest with their progress, within the run's bound. */
async function runChecks(
  config: VerifyConfig,
  target: HarnessTarget,
  run: { runDir: string; secrets: readonly string[]; signal: AbortSignal },
): Promise<ChecksRun> {
  const out = process.stdout;
  const byId = new Map<string, CheckResult>();
  const failures = new ProgressFailures();
  const result: ChecksRun = { suites: { checks: [], findings: [], total: 0, planned: [], filesNotReached: 0 } };
  const suiteOptions = suiteOptionsOf(config, target);
  let bound: ReturnType<typeof runBound> | undefined;
  try {
    const planned = await planFor(target, suiteOptions, (c) => Object.assign(result, { calibrated: c }), run.signal);
    if (planned) result.planned = planned;
    if (target.kind === "external")
      out.write(`${(await loadOnDeployment(target, suiteOptions, config.suites !== undefined)).line}\n`);
    planned?.start();
    const started = performance.now();
    bound = runBound(planned);
    out.write(
      `target: ${target.kind} ${target.baseUrl} (W = ${target.windowSeconds} s, budget ${target.messageTimeoutSeconds} s)\n`,
    );
    result.suites = await runSuites({
      target,
      ...suiteOptions,
      bail: config.bail,
      signal: AbortSignal.any([run.signal, bound.signal]),
      onCheck: (c, at) => {
        // a check vitest reports again (cancelled while running) is one row, its last state
        if (byId.has(c.id)) return;
        byId.set(c.id, c);
        const position = { ...at, elapsedMs: performance.now() - started };
        const repeats = failures.repeats(c);
        out.write(
          `${formatProgress(c, { secrets: run.secrets, at: position, ...(repeats ? { repeats } : {}) })}${planned ? `  [${planned.progress(c)}]` : ""}\n`,
        );
      },
    });
    // a suite asked for whose every check the selection left out ran nothing: said, so that the
    // report's list of suites is not read as their verdict (the checks that ran keep theirs). With
    // no check at all, the run's last line says nothing ran and why, for every suite at once. Only
    // suites the user named (--suites): a default suite a profile has nothing in is the profile's
    // choice (smoke runs the functional suite's smoke checks), not a suite asked for
    for (const suite of suiteOptions.suites)
      if (
        config.suites !== undefined &&
        result.suites.checks.length > 0 &&
        !run.signal.aborted &&
        !config.bail &&
        !result.suites.checks.some((c) => c.file !== undefined && fileInSuite(suite, c.file))
      ) {
        const chosen = [
          ...(config.sections ? [config.sections.join(",")] : []),
          ...(config.profile === "smoke" ? ["--profile smoke"] : []),
        ];
        const message = `none of its checks is in the selection${chosen.length ? ` ${chosen.join(", ")}` : ""}`;
        result.ranNothing = [...(result.ranNothing ?? []), { suite, message }];
        out.write(`${suite}: ran nothing (${message})\n`);
      }
    result.property = readPropertySummary(run.runDir);
    out.write(formatPropertySummary(result.property));
    result.refusalWaits = readRefusalWaits(run.runDir);
    out.write(formatRefusalWaits(result.refusalWaits));
  } finally {
    bound?.clear();
    const overran = bound?.overran();
    if (overran !== undefined) result.overran = overran;
  }
  return result;
}

/** The row of a run stopped at its bound: not a verdict on the service. */
const boundRow = (message: string): CheckResult => ({
  id: "run.bound",
  title: "the run ends within its bound",
  suite: "run",
  clauseIds: [],
  sections: [],
  status: "error",
  durationMs: 0,
  message,
});

/**
 * A verify run, once its options are valid: the target, the keys and the service's clock, the
 * plan, the suites in vitest with their progress, the sweep, the reports; returns the exit code.
 */
export async function runVerify(config: VerifyConfig): Promise<number> {
  const replay = config.replay ? readReplayFile(config.replay, config.seed, config.maxRequests) : undefined;
  const { runId, reportDir, runDir, seed, run } = newRun(config, replay?.seed);
  const startedAt = new Date();
  const out = process.stdout;
  out.write(`agent-harness verify — run ${runId}, seed ${seed}\n`);
  const { target, stop } = await startTarget(config, run);
  if (replay?.referenceFaults !== undefined && replay.referenceFaults !== target.referenceFaults) {
    await stop();
    const fix =
      target.kind !== "external"
        ? "replay it against the deployment it was written on (a reference always honours them)"
        : replay.referenceFaults
          ? "add it"
          : "leave it out";
    throw new UsageError(
      `--replay: the file was written by a run ${replay.referenceFaults ? "with" : "without"} --reference-faults (the models a body may name): ${fix}`,
    );
  }
  // the failing run's budget, unless given again (the same, or readReplayFile refused it)
  const maxRequests = config.maxRequests ?? replay?.maxRequests;
  if (replay || maxRequests) target.property = { ...(replay ? { replay } : {}), ...(maxRequests ? { maxRequests } : {}) };
  const clockLater = target.kind !== "external" && !config.dryRun;
  const keyRequests = await checkTargetFirst(target, config, stop, clockLater);
  if (config.dryRun) {
    try {
      return await dryRun(target, config, keyRequests);
    } finally {
      await stop();
    }
  }
  // made once the target answered (an unreachable one leaves no folder); one that cannot be made
  // stops the target before the run ends (newRun checked the folder before any target started)
  try {
    makeRunDir(runDir, reportDir);
  } catch (err) {
    await stop();
    throw err;
  }
  const clock = clockLater ? estimateWhileStarting(target, runDir) : undefined;
  // every key of every key set (a pool of main keys, one set per worker) is redacted everywhere
  const secrets = targetSecrets(target);
  // a stop asked after the checks ended waits for the sweep and the report (a second stops at once)
  let checking = true;
  const abort = interruptible(() =>
    out.write(
      checking
        ? "\ninterrupted: stopping the checks, then deleting the agents this run created…\n"
        : "\nasked to stop after the checks ended: deleting the agents this run created and writing its report first…\n",
    ),
  );
  let ran: ChecksRun = { suites: { checks: [], findings: [], total: 0, planned: [], filesNotReached: 0 } };
  let sweep: CheckResult | undefined;
  let clockFailure: unknown;
  let stopped = false;
  try {
    ran = await runChecks(config, target, { runDir, secrets, signal: abort.signal });
  } finally {
    checking = false;
    stopped = abort.signal.aborted;
    clockFailure = await clock?.failure(stopped);
    // whatever happened, delete what this run made and prove nothing is left: a deployment keeps no litter
    sweep = await sweepLedger(target, run.ledgerFile);
    out.write(`${formatProgress(sweep, { secrets })}\n`);
    await stop();
  }
  try {
    if (clockFailure) throw clockFailure;
    return await closeRun({ config, target, ran, sweep, stopped }, { runId, seed, startedAt, runDir, reportDir, secrets });
  } finally {
    abort.release();
  }
}

/** A run's rows, result and reports once its checks ended (or stopped), its agents swept. */
async function closeRun(
  end: { config: VerifyConfig; target: HarnessTarget; ran: ChecksRun; sweep: CheckResult; stopped: boolean },
  at: { runId: string; seed: number; startedAt: Date; runDir: string; reportDir: string; secrets: readonly string[] },
): Promise<number> {
  const { config, target, ran, sweep, stopped } = end;
  const { runId, seed, startedAt, runDir, reportDir, secrets } = at;
  const { suites, calibrated, planned, property, refusalWaits, overran, ranNothing } = ran;
  // one row per check: vitest may report a cancelled check twice
  const checks = [...new Map(suites.checks.map((c) => [c.id, c])).values()];
  checks.push(sweep);
  const unreported = unreportedRows({
    planned: suites.planned,
    ...(calibrated ? { calibrated } : {}),
    checks,
    bail: config.bail,
    stopped: stopped || overran !== undefined,
  });
  checks.push(...unreported.rows);
  if (overran) checks.push(boundRow(overran));
  // a suite asked for that ran nothing is a skipped row of the reports (JUnit, HTML, the job
  // summary), not a suite left out of them in silence: not a verdict, nor a check that ran
  for (const { suite, message } of ranNothing ?? [])
    checks.push({
      id: `run.suite ${suite}`,
      title: `${suite}: ran nothing`,
      suite,
      clauseIds: [],
      sections: [],
      status: "skipped",
      durationMs: 0,
      message: `${suite} ran nothing: ${message}`,
    });
  // a replay whose property never ran (a title this version does not know, --sections or the profile
  // leaving it out) replayed nothing: the other checks passing says nothing of the defect
  const replay = target.property?.replay;
  if (replay && !stopped && !propertiesRan(runDir).includes(replay.property))
    checks.push({
      ...boundRow(
        `--replay: the property "${replay.property}" did not run (a title this version does not have, or --sections / --profile left it out): nothing was replayed`,
      ),
      id: "run.replay",
      title: "the replayed property ran",
    });
  const result: RunResult = {
    runId,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    target: { kind: target.kind, baseUrl: target.baseUrl },
    seed,
    options: {
      suites: suiteOptionsOf(config, target).suites,
      ...targetOptions(target, config),
      sections: config.sections ?? null,
      profile: config.profile,
    },
    checks,
    ...(property ? { property } : {}),
    ...(refusalWaits ? { refusalWaits } : {}),
    findings: suites.findings,
    ...(stopped ? { interrupted: interruptedAt(checks, suites) } : {}),
    ...(planned ? { plan: planned.finish() } : {}),
    ...(target.serviceClock ? { serviceClock: target.serviceClock } : {}),
  };
  return await reportRun(result, target, { runDir, reportDir, secrets, shortfall: unreported.shortfall });
}

/** How far an interrupted run got: the checks done of those its files hold, and the files it never reached. */
function interruptedAt(checks: readonly CheckResult[], suites: SuitesRun): NonNullable<RunResult["interrupted"]> {
  return {
    done: checks.filter((c) => c.suite !== "run" && c.status !== "skipped").length,
    total: suites.total,
    ...(suites.filesNotReached ? { filesNotReached: suites.filesNotReached } : {}),
  };
}

/** The replays, the reports and the closing lines of a run; returns its exit code. */
async function reportRun(
  result: RunResult,
  target: HarnessTarget,
  at: { runDir: string; reportDir: string; secrets: readonly string[]; shortfall: string | undefined },
): Promise<number> {
  const out = process.stdout;
  writeReplays(result, at.runDir, target);
  const written = await writeReports(result, at.reportDir, { secrets: at.secrets });
  out.write(`\n${formatSummary(result, { secrets: at.secrets })}\n`);
  if (result.plan) out.write(`${formatRatio(result.plan)}\n`);
  if (target.serviceClock) out.write(`${describeServiceClock(target.serviceClock)}\n`);
  out.write(`reports: ${written.dir}\n`);
  const code = exitCodeOf(result);
  // a run that is not a verdict on the service says so last, where a CI log shows it
  if (result.interrupted) {
    const sweep = result.checks.find((c) => c.id === "run.cleanup");
    out.write(
      `interrupted: ran ${checksDone(result.interrupted)} checks, then deleted the agents it made (${sweep?.status}); exit 130\n`,
    );
  } else {
    const last = at.shortfall ?? noVerdictLine(result);
    if (last) out.write(`${last}\n`);
  }
  return code;
}
