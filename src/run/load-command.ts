/** The `load` and `load merge` commands once their options are valid: target, scenarios, reports, exit code. */

import { describeServiceClock, estimateServiceClock } from "../client/index.js";
import { MESSAGE_TIMING } from "../contract/index.js";
import { type LoadOptions, SCENARIOS, type Scenario, type ScenarioReport, type Threshold } from "../load/index.js";
import { RunProgress } from "../load/live/progress.js";
import { RemoteWriteMetrics } from "../load/live/remote-write.js";
import {
  closingLines,
  loadPlanLines,
  loadRunResult,
  reportLines,
  runScenarios,
  writeLoadReports,
} from "../load/run-of-scenarios.js";
import { MergeError, mergeShardRuns, readShardRuns } from "../load/shard/merge.js";
import { networkConditions } from "../net/behind-proxy.js";
import { exitCodeOf, newRunId, noVerdictLine } from "../report/index.js";
import { claimServiceCores } from "../target/cores.js";
import { type HarnessTarget, targetSecrets } from "../target/harness-target.js";
import type { VerifyConfig } from "./config.js";
import { assertReachable, interruptible, makeRunDir, newRun, startTarget, targetOptions } from "./lifecycle.js";
import { UsageError } from "./usage-error.js";

/**
 * A load run, once its options are valid: the target (a reference target streams at the real
 * budget), the chosen scenarios one after another, the thresholds, the reports; returns the exit code.
 */
export async function runLoad(
  config: VerifyConfig,
  scenarioIds: readonly string[] | undefined,
  thresholds: readonly Threshold[],
  options: LoadOptions = {},
  remoteWrite?: string,
): Promise<number> {
  const { runId, reportDir, runDir, seed, run } = newRun(config);
  const chosen = SCENARIOS.filter((s) => !scenarioIds || scenarioIds.includes(s.id));
  if (config.dryRun) return dryRunLoad(config, run, chosen, thresholds, options);
  const live = remoteWrite
    ? new RemoteWriteMetrics(remoteWrite, runId, (line) => process.stderr.write(`agent-harness: ${line}\n`))
    : undefined;
  // a long run says where it is: on the progress bar on a terminal, in plain lines every 10 s elsewhere
  const where = new RunProgress();
  if (!process.stderr.isTTY) where.printEvery((line) => process.stderr.write(line), 10_000);
  options = {
    ...options,
    progressDetail: () => where.line(),
    onRecorder: (recorder) => {
      where.watch(recorder);
      live?.watch(recorder);
    },
  };
  const out = process.stdout;
  out.write(`agent-harness load — run ${runId}\n`);
  // a reference target the harness starts streams at the real budget (PROFILE §5) unless told otherwise
  const { target, stop } = await startTarget(
    { ...config, messageTimeout: config.messageTimeout ?? MESSAGE_TIMING.defaultBudgetSeconds },
    run,
    options.capacity?.tenants,
    floodsReference(chosen, options),
  );
  // a stop asked after the scenarios ended waits for the report (a second stops at once)
  let running = true;
  const abort = interruptible(() => process.stderr.write(running ? STOPPING_SCENARIO : STOPPING_AFTER));
  const startedAt = new Date();
  let reports: ScenarioReport[] = [];
  let releaseCores: (() => void) | undefined;
  let stopped = false;
  try {
    await assertReachable(target);
    // made once the target answered with the keys accepted: an unreachable target, or one that
    // refused the key, leaves no empty folder behind (newRun checked the folder before any target started)
    makeRunDir(runDir, reportDir);
    releaseCores = claimCores(target, options.serviceCores);
    // Reset and Retry-After are judged on the service's clock: a deployment's may be seconds off the runner's
    target.serviceClock = await estimateServiceClock(target.baseUrl);
    out.write(`${describeServiceClock(target.serviceClock)}\n`);
    reports = await runScenarios(target, chosen, abort.signal, out, process.stderr, options);
  } finally {
    running = false;
    stopped = abort.signal.aborted;
    releaseCores?.();
    await stop();
    where.stop();
    await live?.close();
  }
  try {
    return await closeLoad({ runId, seed, startedAt, target, config, chosen, reports, thresholds, stopped }, reportDir, options);
  } finally {
    abort.release();
  }
}

const STOPPING_SCENARIO = "\ninterrupted: ending the scenario and deleting what it made…\n";
const STOPPING_AFTER = "\nasked to stop after the scenarios ended: writing the report first…\n";

/** A load run's result, reports and closing lines once its scenarios ended (or stopped); returns the exit code. */
async function closeLoad(
  end: {
    runId: string;
    seed: number;
    startedAt: Date;
    target: HarnessTarget;
    config: VerifyConfig;
    chosen: readonly Scenario[];
    reports: ScenarioReport[];
    thresholds: readonly Threshold[];
    stopped: boolean;
  },
  reportDir: string,
  options: LoadOptions,
): Promise<number> {
  const { runId, seed, startedAt, target, config, chosen, reports, thresholds, stopped } = end;
  const out = process.stdout;
  const { result, loadRun } = loadRunResult({
    runId,
    seed,
    startedAt,
    target,
    network: networkConditions(config.networkDelay, config.networkProxy),
    options: targetOptions(target, config),
    chosen,
    reports,
    thresholds,
    interrupted: stopped,
  });
  const secrets = targetSecrets(target, options.capacity?.tenants);
  const dir = await writeLoadReports(result, loadRun, reportDir, secrets);
  out.write(`${closingLines(result, loadRun).join("\n")}\nreports: ${dir} (load.json, report.html)\n`);
  // a run that is not a verdict on the service says so last, where a CI log shows it (as verify does)
  const last = result.interrupted
    ? `interrupted: ran ${result.interrupted.done} of ${result.interrupted.total} scenarios, then deleted what they made; exit 130`
    : noVerdictLine(result);
  if (last) out.write(`${last}\n`);
  return exitCodeOf(result);
}

/** `load --dry-run`: the target reached, the plan printed (src/load/run-of-scenarios.ts), no scenario run, no report. */
async function dryRunLoad(
  config: VerifyConfig,
  run: ReturnType<typeof newRun>["run"],
  chosen: readonly Scenario[],
  thresholds: readonly Threshold[],
  options: LoadOptions,
): Promise<number> {
  const { target, stop } = await startTarget(
    { ...config, messageTimeout: config.messageTimeout ?? MESSAGE_TIMING.defaultBudgetSeconds },
    run,
    options.capacity?.tenants,
    floodsReference(chosen, options),
  );
  try {
    await assertReachable(target);
    // the cores are checked as the run would, then given back: a dry run says what the run would refuse
    claimCores(target, options.serviceCores)?.();
    process.stdout.write(`${loadPlanLines(target, chosen, thresholds, options).join("\n")}\n`);
  } finally {
    await stop();
  }
  return 0;
}

/**
 * `--service-cores`: the deployment's processes found and checked to run only on those CPUs, and
 * this process moved to the others (src/target/cores.ts); the target then carries them, as a
 * reference started on cores of its own does. Returns what gives this process its CPUs back.
 */
function claimCores(target: HarnessTarget, cpus: readonly number[] | undefined): (() => void) | undefined {
  if (!cpus) return undefined;
  const claim = claimServiceCores(target.baseUrl, cpus);
  if (typeof claim === "string") throw new UsageError(claim);
  target.ownCores = { cpus: claim.cpus, pids: claim.pids };
  return claim.release;
}

/**
 * `load merge`: the shards' reports read and merged (src/load/shard/merge.ts), written as one
 * run's, with each scenario's lines and the closing lines; returns the run's exit code. A
 * missing shard or a folder holding none is a usage error (exit 2).
 */
export async function runMerge(dirs: readonly string[], reportDir: string): Promise<number> {
  let merged: ReturnType<typeof mergeShardRuns>;
  try {
    merged = mergeShardRuns(readShardRuns(dirs), newRunId());
  } catch (err) {
    if (err instanceof MergeError || err instanceof SyntaxError) throw new UsageError(`load merge: ${err.message}`);
    throw err;
  }
  const { result, loadRun } = merged;
  for (const report of loadRun.scenarios) process.stdout.write(reportLines(report));
  const dir = await writeLoadReports(result, loadRun, reportDir, []);
  process.stdout.write(`${closingLines(result, loadRun).join("\n")}\nreports: ${dir} (load.json, report.html)\n`);
  const last = noVerdictLine(result);
  if (last) process.stdout.write(`${last}\n`);
  return exitCodeOf(result);
}

/**
 * noisy-neighbour's floods judge the others' latency: a reference in this process would share one
 * event loop with the storm that generates them, and the verdict would be the generator's
 * contention. Such a run starts the reference as a `serve` process of its own.
 */
function floodsReference(chosen: readonly Scenario[], options: LoadOptions): boolean {
  return options.capacity?.profile === "noisy-neighbour" && chosen.some((s) => s.id === "capacity");
}
