import { randomInt } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ZodError } from "zod";
import { ServiceClient, TransportError } from "../client/index.js";
import { exportNetworkSettings } from "../client/network.js";
import { type KeysFile, MESSAGE_TIMING, RATE_LIMITS } from "../contract/index.js";
import { behindProxy, describeNetwork } from "../net/behind-proxy.js";
import { newRunId } from "../report/index.js";
import { EMBEDDED_DEFAULTS, type HarnessTarget, keyRoles, runPrefixFor, startReferenceTarget } from "../target/harness-target.js";
import { givenKeys, type VerifyConfig } from "./config.js";
import { UsageError } from "./usage-error.js";

/**
 * What every run (`verify` and `load`) goes through around its checks: a run id, report folder,
 * seed and ledger; the target resolved (a deployment, or a reference server started and stopped;
 * behind a delaying proxy when asked); reachable before the first check; interruptible by
 * Ctrl-C with its cleanup still run; and the options its report records.
 */

/** Resolve the target: a deployment, or a reference server this run starts (and stops). */
export async function resolveTarget(
  config: VerifyConfig,
  run: { runPrefix: string; ledgerFile: string; seed: number },
  tenants?: KeysFile,
  apart = false,
) {
  if (config.baseUrl) {
    const target: HarnessTarget = {
      kind: "external",
      baseUrl: config.baseUrl,
      keys: givenKeys(config),
      ...(config.loadTier || config.tierBurstTier
        ? {
            loadTiers: {
              ...(config.loadTier ? { load: config.loadTier } : {}),
              ...(config.tierBurstTier ? { tierBurst: config.tierBurstTier } : {}),
            },
          }
        : {}),
      windowSeconds: config.rateWindow ?? RATE_LIMITS.defaultWindowSeconds,
      messageTimeoutSeconds: config.messageTimeout ?? MESSAGE_TIMING.defaultBudgetSeconds,
      ...(config.tier ? { tierLimit: config.tier } : {}),
      referenceFaults: config.referenceFaults,
      idField: config.idField,
      ...run,
    };
    return { target, stop: async () => {} };
  }
  return startReferenceTarget(
    config.target,
    {
      ...EMBEDDED_DEFAULTS,
      ...(config.rateWindow ? { windowSeconds: config.rateWindow } : {}),
      ...(config.messageTimeout ? { messageTimeoutSeconds: config.messageTimeout } : {}),
      ...(config.tier ? { tierLimit: config.tier } : {}),
      ...(config.workers ? { workers: config.workers } : {}),
      ...(config.clockSkew ? { clockSkewSeconds: config.clockSkew } : {}),
      ...(tenants ? { tenants } : {}),
      faults: config.fault,
    },
    run,
    apart,
  );
}

/** What `verify` and `load` set up first: the run's id, its report folder, its seed and its ledger. */
export function newRun(config: VerifyConfig, seed: number = config.seed ?? randomInt(2 ** 31)) {
  const runId = newRunId();
  const reportDir = resolve(config.reportDir);
  assertReportDirUsable(reportDir);
  const runDir = join(reportDir, runId);
  return {
    runId,
    reportDir,
    runDir,
    seed,
    run: { runPrefix: runPrefixFor(runId), ledgerFile: join(runDir, "ledger.jsonl"), seed },
  };
}

/**
 * The report folder can be made (or is a folder already): checked before any target starts, so a
 * run never ends, after its target has started, on a folder it cannot write (a file of that name,
 * a read-only place). Nothing is created here: a dry run writes nothing.
 */
function assertReportDirUsable(reportDir: string): void {
  let dir = reportDir;
  for (;;) {
    let stat: ReturnType<typeof statSync> | undefined;
    try {
      stat = statSync(dir);
    } catch {
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
      continue;
    }
    if (!stat.isDirectory())
      throw new UsageError(`--report-dir ${reportDir}: ${dir === reportDir ? "not a folder" : `${dir} is not a folder`}`);
    try {
      accessSync(dir, constants.W_OK | constants.X_OK);
    } catch {
      throw new UsageError(`--report-dir ${reportDir}: ${dir} cannot be written`);
    }
    return;
  }
}

/** The run's folder made, before any target starts; a folder that cannot be made is a usage error (exit 2). */
export function makeRunDir(runDir: string, reportDir: string): void {
  try {
    // each missing folder made in turn: node's recursive mkdir loops for ever under /proc
    const missing: string[] = [];
    for (let dir = runDir; !existsSync(dir) && dirname(dir) !== dir; dir = dirname(dir)) missing.unshift(dir);
    for (const dir of missing) mkdirSync(dir);
  } catch (err) {
    throw new UsageError(
      `--report-dir ${reportDir}: cannot make a folder in it (${err instanceof Error && "code" in err ? err.code : String(err)})`,
    );
  }
}

/** resolveTarget, where a reference target that cannot start is a usage error (exit 2). */
export async function startTarget(
  config: VerifyConfig,
  run: Parameters<typeof resolveTarget>[1],
  tenants?: KeysFile,
  /** a reference target in a `serve` process of its own, not this one (a load that floods it) */
  apart = false,
) {
  // every client of the run, and of the suites' workers (which inherit this environment), connects with them
  exportNetworkSettings({ caFile: config.caFile, clientCert: config.clientCert, clientKey: config.clientKey });
  let started: Awaited<ReturnType<typeof resolveTarget>>;
  try {
    started = await resolveTarget(config, run, tenants, apart);
  } catch (err) {
    // one line: a keys file the reference refuses throws zod's issues, JSON over many lines
    const why =
      err instanceof ZodError
        ? err.issues.map((i) => `${i.path.join(".") || "keys"}: ${i.message}`).join("; ")
        : err instanceof Error
          ? err.message.split("\n")[0]
          : String(err);
    throw new UsageError(`cannot start the ${config.target} reference target: ${why}`);
  }
  if (!config.networkDelay && !config.networkProxy) return started;
  // STYLE §12: the same run across a network (and its intermediaries) must reach the same verdicts
  const delay = config.networkDelay ?? { ms: 0, jitterMs: 0 };
  const roles = config.networkProxy ?? [];
  const upstream = started.target.baseUrl;
  try {
    const moved = await behindProxy(started, {
      up: delay,
      down: delay,
      closeAfterResponse: roles.includes("close-after-response"),
      bufferResponses: roles.includes("buffer-responses"),
      seed: run.seed,
    });
    process.stdout.write(`${describeNetwork(moved.proxy, upstream)}\n`);
    return moved;
  } catch (err) {
    await started.stop();
    throw new UsageError(`--network-delay: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** SIGINT/SIGTERM abort the run after `say` tells what happens next; `release` in a `finally`. */
export function interruptible(say: () => void) {
  const abort = new AbortController();
  const onSignal = () => {
    say();
    abort.abort();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    signal: abort.signal,
    release: () => {
      process.removeListener("SIGINT", onSignal);
      process.removeListener("SIGTERM", onSignal);
    },
  };
}

/** What a report records of the target a run verified (`verify` and `load` alike). */
export function targetOptions(target: HarnessTarget, config: VerifyConfig) {
  return {
    windowSeconds: target.windowSeconds,
    messageTimeoutSeconds: target.messageTimeoutSeconds,
    tierLimit: target.tierLimit ?? null,
    referenceFaults: target.referenceFaults,
    idField: target.idField,
    faults: config.fault,
    keys: keyRoles(target.keys),
  };
}

/** Exit 2 unless the target answers an authenticated request. */
export async function assertReachable(target: HarnessTarget): Promise<void> {
  const client = new ServiceClient({ baseUrl: target.baseUrl, apiKey: target.keys.main, timeoutMs: 15_000 });
  try {
    const res = await client.listAgents({ limit: 1 });
    if (res.status === 401) throw new UsageError(`the target refused the API key (401) at ${target.baseUrl}`);
  } catch (err) {
    if (err instanceof TransportError) throw new UsageError(`target unreachable at ${target.baseUrl}: ${err.message}`);
    throw err;
  } finally {
    await client.close();
  }
}
