import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { budgetEndedWords, CLAUSES, type KeysFile, LIST_LIMITS, MESSAGE_TIMING, SECTIONS } from "../../src/contract/index.js";
import { FLOOD_SHAPES, FLOOD_SHORT } from "../../src/load/capacity/floods.js";
import { exampleTenants } from "../../src/load/capacity/plan.js";
import { SCENARIO_IDS } from "../../src/load/scenarios.js";
import { dockerUnavailableReason } from "../../src/target/container.js";
import { onCpus, splitCores } from "../../src/target/cores.js";
import { EMBEDDED_DEFAULTS } from "../../src/target/reference-plan.js";
import { STARTED_TARGETS, type StartedTargetKind } from "../../src/target/types.js";
import { FLOOD_DRIVE_MESSAGE_TIMEOUT_SECONDS, load, type VerifyRun, verify } from "../meta/verify-run.js";
import { startTinyproxy, tinyproxyMissing } from "../network/support/enterprise.js";
import { type AltKeys, altKeysFile, TIER_BURST_TIER } from "./alt-server/keys.js";
import { startAltServer } from "./alt-server/server.js";
import { judgeCleanup, leftovers, SWEEPS, type Sweep, sweepArgs } from "./cleanup-row.js";
import { comparePromises, lastLineOf, remoteWriteReceiver, shardArgs, tlsFront } from "./options.js";

/**
 * The configuration matrix: the harness held to its two promises — it never blames a conformant
 * service, and it never says green for checks it did not run — across what a user may type.
 * A configuration is a command with its selection and flags, a key set, a target (the embedded
 * reference, the reference in a container, the reference started by `serve`, the independent
 * server of ./alt-server, each possibly behind the delaying proxy and, a deployment, with a second
 * client busy in the same account) and W, T.
 */

export const VERIFY_SUITES = ["functional", "property", "quick-load"] as const;
/** capacity drives for a minute and more by design: the full matrix's time is better spent elsewhere */
export const LOAD_SCENARIOS = SCENARIO_IDS.filter((id) => id !== "capacity");
export const KEY_SETS = [
  "main",
  "main+read-only",
  "main+read-only+other",
  "main+read-only+other+quota",
  "all+tier",
  // and a small-tier account of its own (--tier-burst-key, --tier-burst-tier)
  "all+tier+burst",
] as const;
/**
 * The targets the harness starts itself (`--target`), then two deployments: the reference through
 * `serve`, and the independent server. A target the harness starts makes its own accounts, a key
 * set per worker, on plain HTTP; its clock is estimated while vitest forks its workers and handed
 * over, as for no deployment.
 */
export const TARGETS = [...STARTED_TARGETS, "serve", "alt"] as const;
export const startedByHarness = (target: MatrixConfig["target"]): target is StartedTargetKind =>
  STARTED_TARGETS.some((kind) => kind === target);
/** What --sections takes: PROFILE's sections, and its clause ids */
const CLAUSE_IDS = CLAUSES.map((c) => c.id);
export const NETWORKS = { none: undefined, near: "40±20", far: "150±50" } as const;
/**
 * An identifier field of another name (PROFILE §11 lets a deployment choose it), and the name the
 * message reply gives the agent's id: a harness that read one for the other would show it
 */
export const OTHER_ID_FIELD = "agentId";

export interface MatrixConfig {
  command: "verify" | "load" | "cleanup";
  /** verify: --suites; load: --scenario; cleanup: none */
  selection: string[];
  /** cleanup: what the sweep takes (./cleanup-row.ts), on a deployment seeded with a killed run's agents and others' */
  sweep?: Sweep;
  referenceFaults: boolean;
  profile?: "smoke";
  bail: boolean;
  sections?: string[];
  keySet: (typeof KEY_SETS)[number];
  target: (typeof TARGETS)[number];
  network: keyof typeof NETWORKS;
  /** a second client busy in the main account all along (external targets only) */
  busy: boolean;
  windowSeconds: number;
  messageTimeoutSeconds: number;
  /** serve's --windows-on-whole-seconds: a window starts on the whole second of its first request (PROFILE §7 allows either) */
  wholeSecondWindows?: boolean;
  /**
   * load: capacity's noisy-neighbour with these flood flags (a short drive of a few tenants) instead
   * of the selection; a conformant server passes, or exits 2 naming the flood's headroom, never 1
   */
  flood?: { shapes: string[]; rate: number; sockets: number };
  /** a deployment behind a TLS terminator with a company CA (--ca-file), `mutual` demanding a client certificate too */
  tls?: "ca" | "mutual";
  /** the independent server with a model that fails every message (500 MODEL_ERROR), as PROFILE §5 allows */
  failingModel?: true;
  /** the independent server naming its records' identifier field so (PROFILE §11), and the harness told with --id-field */
  idField?: typeof OTHER_ID_FIELD;
  /** the independent server's 400s name the field only where PROFILE asks (§4 keys, §5 List parameters): no details else (§2) */
  fewestDetails?: true;
  /** load: --out prometheus-rw= a receiver of the matrix's own, which must get the run's metrics */
  out?: true;
  /** load: `load compare` on the run's report after it: A/A exit 0, other scenarios exit 2 */
  compare?: true;
  /** load: the capacity scenario, shard 1/2 of a few tenants (a reference the harness starts serves them; a deployment has them among its keys) */
  shard?: true;
  /** --workers on a target the harness starts (one key set each; the default among those drawn); 2 when not drawn */
  workers?: number;
  /**
   * load with a flood against `serve`: the deployment runs on cores of its own (taskset, the
   * upper half of the CPUs) and the harness is told so with --service-cores
   */
  pinned?: true;
  /**
   * proxy variables in the harness's environment: `through`, a deployment reached through a
   * forward proxy (tinyproxy; HTTP_PROXY and HTTPS_PROXY, NO_PROXY empty), whose log must then hold
   * the run's requests; `bypassed`, both variables naming a proxy that answers nothing and NO_PROXY
   * the loopback range (127.0.0.0/8): every request must go direct, as curl would send it
   */
  proxy?: "through" | "bypassed";
  /** load's capacity rows (a flood or a shard): `--api-key` is one of the tenants' keys of `--keys-file` */
  tenantMainKey?: true;
}

const subset = <T>(items: readonly T[], max = items.length) =>
  fc.uniqueArray(fc.constantFrom(...items), { minLength: 1, maxLength: max });

/** Every configuration the matrix may draw. W of at least ten round trips on the far network (STYLE §12). */
export function configArbitrary(): fc.Arbitrary<MatrixConfig> {
  return fc
    .record({
      // a cleanup row takes seconds, a verify or load row minutes: drawn less often, still in every few
      command: fc.oneof(
        { arbitrary: fc.constant("verify" as const), weight: 3 },
        { arbitrary: fc.constant("load" as const), weight: 3 },
        { arbitrary: fc.constant("cleanup" as const), weight: 1 },
      ),
      sweep: fc.constantFrom(...SWEEPS),
      suites: subset(VERIFY_SUITES),
      scenarios: subset(LOAD_SCENARIOS, 3),
      referenceFaults: fc.boolean(),
      smoke: fc.boolean(),
      bail: fc.boolean(),
      // sections, clauses, or both (--sections §7,list.order)
      sections: fc.option(
        fc.oneof(
          subset(SECTIONS, 3),
          subset(CLAUSE_IDS, 2),
          fc.tuple(subset(SECTIONS, 1), subset(CLAUSE_IDS, 1)).map((p) => p.flat()),
        ),
        { nil: undefined },
      ),
      keySet: fc.constantFrom(...KEY_SETS),
      target: fc.constantFrom(...TARGETS),
      network: fc.constantFrom("none" as const, "near" as const, "far" as const),
      busy: fc.boolean(),
      // 2.5: a window that is no whole number of seconds (a service whose windows start on whole
      // seconds then refills up to a second early, which the §7 checks must allow)
      windowSeconds: fc.constantFrom(1, 2, 2.5, 3, 5),
      // 2: no mock-slow reply fits; the checks that need one must say so, never blame the service
      messageTimeoutSeconds: fc.constantFrom(2, 3, 4.5),
      wholeSecondWindows: fc.boolean(),
      flood: fc.option(
        fc.record({ shapes: subset(FLOOD_SHAPES), rate: fc.constantFrom(300, 1000, 1500), sockets: fc.constantFrom(64, 256) }),
        { nil: undefined },
      ),
      tls: fc.constantFrom(undefined, "ca" as const, "mutual" as const),
      out: fc.boolean(),
      compare: fc.boolean(),
      shard: fc.boolean(),
      workers: fc.constantFrom(1, 2, EMBEDDED_DEFAULTS.workers ?? 1),
      pinned: fc.boolean(),
      failingModel: fc.boolean(),
      proxy: fc.constantFrom(undefined, "through" as const, "bypassed" as const),
      tenantMainKey: fc.boolean(),
      idField: fc.constantFrom(undefined, OTHER_ID_FIELD),
      fewestDetails: fc.boolean(),
    })
    .map((r) => normalise(r));
}

function normalise(r: {
  command: MatrixConfig["command"];
  sweep: Sweep;
  suites: string[];
  scenarios: string[];
  referenceFaults: boolean;
  smoke: boolean;
  bail: boolean;
  sections: string[] | undefined;
  keySet: MatrixConfig["keySet"];
  target: MatrixConfig["target"];
  network: MatrixConfig["network"];
  busy: boolean;
  windowSeconds: number;
  messageTimeoutSeconds: number;
  wholeSecondWindows: boolean;
  flood?: MatrixConfig["flood"];
  tls: MatrixConfig["tls"];
  out: boolean;
  compare: boolean;
  shard: boolean;
  workers: number;
  pinned: boolean;
  failingModel?: boolean;
  proxy: MatrixConfig["proxy"];
  tenantMainKey: boolean;
  idField: MatrixConfig["idField"];
  fewestDetails?: boolean;
}): MatrixConfig {
  const verifying = r.command === "verify";
  const loading = r.command === "load";
  // cleanup sweeps a deployment (a target the harness starts is gone with its run), which it
  // reaches without --network-delay (verify's and load's)
  const sweeping = r.command === "cleanup";
  const target = sweeping && startedByHarness(r.target) ? "serve" : r.target;
  const network = sweeping ? "none" : r.network;
  const ours = startedByHarness(target);
  // capacity's tenants (--keys-file): a reference the harness starts serves them; a deployment the matrix
  // starts has them among its keys (startDeployment)
  const flood = loading ? r.flood : undefined;
  // a capacity shard drives the tenants of --keys-file (a flood has its own)
  const shard = loading && r.shard && !flood;
  // through a forward proxy: a deployment, without the delaying proxy in between (the harness's
  // own, which forwards plain HTTP to one upstream); bypassed: any target, every request direct
  const through = r.proxy === "through" && !ours && network === "none";
  return {
    command: r.command,
    selection: verifying ? r.suites : sweeping ? [] : flood || shard ? ["capacity"] : r.scenarios,
    ...(sweeping ? { sweep: r.sweep } : {}),
    ...(flood ? { flood } : {}),
    referenceFaults: !sweeping && r.referenceFaults,
    ...(verifying && r.smoke ? { profile: "smoke" as const } : {}),
    bail: verifying && r.bail,
    ...(verifying && r.sections ? { sections: r.sections } : {}),
    // a target the harness starts makes its own accounts; another client needs a deployment to share
    // a tenant's key as the main key: the other roles' keys are of accounts of their own
    keySet: ours ? "all+tier" : ((flood || shard) && r.tenantMainKey) || sweeping ? "main" : r.keySet,
    target,
    network,
    busy: !ours && r.busy,
    // ten round trips of the far network fit in 5 s, not in 2
    windowSeconds: network === "far" ? 5 : r.windowSeconds,
    // a flood drive of 12 s gives each shape under 2 s of flood: the stream hog holds its slots
    // until the time budget ends them, so a budget of 3 s would leave it no verdict, every time
    messageTimeoutSeconds: flood?.shapes.includes("stream-hog") ? FLOOD_DRIVE_MESSAGE_TIMEOUT_SECONDS : r.messageTimeoutSeconds,
    // a flag of serve's: only the reference through serve takes it
    ...(target === "serve" && r.wholeSecondWindows ? { wholeSecondWindows: true } : {}),
    // a TLS terminator fronts a deployment (a target the harness starts is its own plain HTTP);
    // --network-delay's proxy forwards plain HTTP only, and says so (exit 2) when asked for more
    ...(!ours && network === "none" && r.tls ? { tls: r.tls } : {}),
    ...(loading && r.out ? { out: true as const } : {}),
    ...(loading && r.compare ? { compare: true as const } : {}),
    ...(shard ? { shard: true as const } : {}),
    // a target the harness starts has a key set per worker: one worker is a deployment's way (the
    // files take turns on one account), the embedded default's count the most
    ...(ours ? { workers: r.workers } : {}),
    // --service-cores names a deployment's own process reached directly: the delaying proxy and the
    // TLS terminator run in the harness and the matrix, between the storm and the service
    // (and only where this machine can give it cores of its own)
    ...(flood && target === "serve" && network === "none" && !r.tls && !through && r.pinned && canPin()
      ? { pinned: true as const }
      : {}),
    // the independent server with a model that fails every message (PROFILE §5 allows it): a target
    // that then honours no mock model, so never with --reference-faults (§10)
    ...(verifying && target === "alt" && !r.referenceFaults && r.failingModel ? { failingModel: true as const } : {}),
    ...(through || r.proxy === "bypassed" ? { proxy: r.proxy } : {}),
    ...(!ours && (flood || shard) && r.tenantMainKey ? { tenantMainKey: true as const } : {}),
    // the independent server takes another name for it (the reference's is id)
    ...(target === "alt" && r.idField ? { idField: r.idField } : {}),
    ...(target === "alt" && r.fewestDetails ? { fewestDetails: true as const } : {}),
  };
}

/** The harness's arguments for a configuration on a started target (keys and URL included). */
export function harnessArgs(
  config: MatrixConfig,
  started?: { baseUrl: string; keys: AltKeys; args?: string[] },
  extra: string[] = [],
): string[] {
  const args = [
    ...(config.command === "verify" ? ["--suites", config.selection.join(",")] : ["--scenario", config.selection.join(",")]),
    "--rate-window",
    String(config.windowSeconds),
    "--message-timeout",
    String(config.messageTimeoutSeconds),
  ];
  if (config.referenceFaults) args.push("--reference-faults");
  if (config.profile) args.push("--profile", config.profile);
  if (config.flood)
    args.push(
      ...["--profile", "noisy-neighbour", "--duration", "12s", "--keys-file", capacityTenants().path],
      ...["--flood", config.flood.shapes.join(","), "--flood-rate", String(config.flood.rate)],
      ...["--flood-sockets", String(config.flood.sockets)],
    );
  if (config.pinned) args.push("--service-cores", serviceCores().join(","));
  if (config.bail) args.push("--bail");
  if (config.sections) args.push("--sections", config.sections.join(","));
  if (config.idField) args.push("--id-field", config.idField);
  const delay = NETWORKS[config.network];
  if (delay) args.push("--network-delay", delay);
  args.push(...extra);
  if (!started)
    return [
      ...args,
      ...(startedByHarness(config.target) ? ["--target", config.target] : []),
      "--workers",
      String(config.workers ?? 2),
    ];
  const { keys } = started;
  const mainKey = config.tenantMainKey ? capacityTenants().file.keys[0]!.key : keys.main;
  args.push("--base-url", started.baseUrl, "--api-key", mainKey, ...(started.args ?? []));
  if (config.keySet !== "main") args.push("--read-only-key", keys.readOnly);
  const all = config.keySet.startsWith("all+tier");
  if (config.keySet.includes("other") || all) args.push("--other-account-key", keys.other);
  if (config.keySet.includes("quota") || all) args.push("--quota-key", keys.quota);
  if (all) args.push("--tier", String(TIER));
  if (config.keySet === "all+tier+burst")
    args.push("--tier-burst-key", keys.tierBurst, "--tier-burst-tier", String(TIER_BURST_TIER));
  return args;
}

/** Five tenants for the flood and shard rows, written once where `--keys-file` reads them. */
let tenants: { path: string; file: KeysFile } | undefined;
function capacityTenants(): { path: string; file: KeysFile } {
  if (tenants) return tenants;
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-matrix-tenants-"));
  tenants = { path: join(dir, "tenants.json"), file: exampleTenants(5, 2, TIER) };
  writeFileSync(tenants.path, JSON.stringify(tenants.file));
  return tenants;
}

/** A deployment's keys: the four roles, and capacity's tenants when the configuration drives them. */
function deploymentKeys(config: MatrixConfig): { keys: AltKeys; file: KeysFile } {
  const { keys, file } = altKeysFile(TIER);
  if (!config.flood && !config.shard) return { keys, file };
  const more = capacityTenants().file;
  return { keys, file: { accounts: [...file.accounts, ...more.accounts], keys: [...file.keys, ...more.keys] } };
}

/** The CPUs a pinned deployment runs on: the upper half of the matrix process's, as `load` gives a reference it starts. */
function serviceCores(): number[] {
  const split = splitCores();
  if (!split) throw new Error("a pinned deployment needs Linux, taskset and two CPUs or more");
  return split.service;
}

let pinnable: boolean | undefined;
/** Whether a deployment can be given cores of its own here (Linux, taskset, two CPUs or more); asked once. */
const canPin = () => {
  pinnable ??= splitCores() !== undefined;
  return pinnable;
};

let docker: Promise<string | undefined> | undefined;
/**
 * Why this machine cannot run the configuration's target, or undefined: the container target
 * needs a Docker daemon (asked once), a row through a forward proxy needs tinyproxy. Under CI=true a missing daemon is the CI's fault, not a
 * reason: the row runs and fails, as the container suite does.
 */
export async function targetUnavailable(config: Pick<MatrixConfig, "target" | "proxy">): Promise<string | undefined> {
  // a missing tinyproxy is a reason here, and CI's fault under CI=true (tinyproxyMissing throws:
  // the promise rejects, and the row fails)
  const noProxy = config.proxy === "through" ? tinyproxyMissing() : undefined;
  if (noProxy) return noProxy;
  if (config.target !== "container" || process.env.CI === "true") return undefined;
  docker ??= dockerUnavailableReason();
  const reason = await docker;
  return reason && `Docker is not reachable (${reason})`;
}

/**
 * The proxy variables of a configuration (curl's reading: the harness's too). Bypassed, they name a
 * port nothing listens on, so a request sent through it fails and the run shows it.
 */
export function proxyEnv(config: Pick<MatrixConfig, "proxy">, proxyUrl?: string): NodeJS.ProcessEnv {
  const both = (name: string, value: string) => ({ [name.toUpperCase()]: value, [name]: value });
  // the lower-case forms too: they come first in curl's reading, so a runner's own would win otherwise
  if (config.proxy === "through" && proxyUrl)
    return { ...both("http_proxy", proxyUrl), ...both("https_proxy", proxyUrl), ...both("no_proxy", "") };
  if (config.proxy === "bypassed")
    return { ...both("http_proxy", DEAD_PROXY), ...both("https_proxy", DEAD_PROXY), ...both("no_proxy", "127.0.0.0/8") };
  return {};
}
/** the discard port on loopback: nothing listens there here, so a connection to it is refused at once */
const DEAD_PROXY = "http://127.0.0.1:9";

/** The standard tier (PROFILE §7), every account of the targets the matrix starts. */
const TIER = 60;

export interface StartedTarget {
  baseUrl: string;
  keys: AltKeys;
  /** what the harness needs to reach it (the CA, a client certificate) */
  args?: string[];
  /** the deployment itself, behind the TLS terminator: where another client of the account talks to it */
  plainUrl?: string;
  stop: () => Promise<void>;
}

/** A deployment for the configuration, behind a TLS terminator when it draws one. */
export async function startTarget(config: MatrixConfig): Promise<StartedTarget | undefined> {
  const target = await startDeployment(config);
  if (target === undefined || config.tls === undefined) return target;
  // a terminator that cannot start must not leave the deployment running
  const front = await tlsFront(target.baseUrl, config.tls === "mutual").catch(async (err: unknown) => {
    await target.stop();
    throw err;
  });
  return {
    ...target,
    baseUrl: front.baseUrl,
    args: front.args,
    plainUrl: target.baseUrl,
    stop: async () => {
      await front.close();
      await target.stop();
    },
  };
}

/** A deployment: the reference through `serve`, or the independent server. */
async function startDeployment(config: MatrixConfig): Promise<StartedTarget | undefined> {
  if (startedByHarness(config.target)) return undefined;
  const { keys, file } = deploymentKeys(config);
  if (config.target === "alt") {
    const server = await startAltServer({
      keys: file,
      windowSeconds: config.windowSeconds,
      messageTimeoutSeconds: config.messageTimeoutSeconds,
      // its own clock, as a deployment has
      clockOffsetSeconds: 7.3,
      ...(config.failingModel ? { failingModel: true } : {}),
      ...(config.idField ? { idField: config.idField } : {}),
      ...(config.fewestDetails ? { fewestDetails: true } : {}),
    });
    return { baseUrl: server.baseUrl, keys, stop: server.close };
  }
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-matrix-"));
  const keysPath = join(dir, "keys.json");
  writeFileSync(keysPath, JSON.stringify(file));
  const [command, argv] = onCpus(config.pinned ? serviceCores() : undefined, process.execPath, [
    "bin/agent-harness.js",
    "serve",
    "--port",
    "0",
    "--keys",
    keysPath,
    "--window-seconds",
    String(config.windowSeconds),
    "--message-timeout-seconds",
    String(config.messageTimeoutSeconds),
    ...(config.wholeSecondWindows ? ["--windows-on-whole-seconds"] : []),
  ]);
  const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"] });
  const baseUrl = await readyLine(child);
  return {
    baseUrl,
    keys,
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readyLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`serve printed no ready line within 60 s:\n${out}`));
    }, 60_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve ended (${code}) before its ready line:\n${out}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * Another client of the same account, as a deployment under test rarely is idle: an agent of its
 * own made, read, listed and deleted over and over, a few requests a second, until stopped.
 * Bounded by a count as well as by the run. `idField`: the deployment's name for an agent's
 * identifier (PROFILE §11).
 */
export function busyClient(baseUrl: string, key: string, idField = "id"): { stop: () => Promise<number> } {
  let stopped = false;
  let sent = 0;
  const call = async (method: string, path: string, body?: unknown) => {
    sent++;
    return (await directCall(baseUrl, key, method, path, body)).body;
  };
  const loop = (async () => {
    for (let i = 0; i < 2000 && !stopped; i++) {
      const made = await call("POST", "/agents", { name: `someone-else-${i}` });
      const id = idOf(made, idField);
      await call("GET", "/agents?limit=5");
      if (id) {
        await call("GET", `/agents/${id}`);
        await call("DELETE", `/agents/${id}`);
      }
      // paces itself at a few requests a second: under every bucket at W = 2 s, while at longer
      // windows it may empty Create's and Delete's for a while, as a busy neighbour does
      await pause(400);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return sent;
    },
  };
}

/**
 * One request of a client of the deployment's own, straight to it (not through the harness): its
 * status (0 when it failed) and JSON body. A 429 says when to come back: the call waits for that
 * (not a guess) before it returns.
 */
async function directCall(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  }).catch(() => undefined);
  const text = await res?.text().catch(() => "");
  const retry = Number(res?.headers.get("retry-after") ?? 0);
  if (res?.status === 429 && retry > 0) await pause(retry * 1000);
  return { status: res?.status ?? 0, body: text ? safeJson(text) : undefined };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
/** The identifier of the agent an answer's body holds, by the deployment's name for it. */
const idOf = (v: unknown, idField: string): string | undefined => {
  const data = typeof v === "object" && v !== null && "data" in v ? (v as { data: unknown }).data : undefined;
  const id = typeof data === "object" && data !== null ? (data as Record<string, unknown>)[idField] : undefined;
  return typeof id === "string" ? id : undefined;
};

/** What a configuration's runs showed, and whether the harness kept its promises. */
export interface Outcome {
  config: MatrixConfig;
  seed: number;
  code: number | null;
  findings: number;
  ran: number;
  promised?: number;
  /** each promise broken, in a sentence; empty when the harness kept them */
  broken: string[];
  durationMs: number;
  lastLine: string;
}

/** `--dry-run` of the same command: its exit code and output (a dry run writes no report). */
function dryRun(args: string[], seed: number, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        "bin/agent-harness.js",
        ...args,
        "--seed",
        String(seed),
        "--dry-run",
        "--report-dir",
        mkdtempSync(join(tmpdir(), "ah-dry-")),
      ],
      { env: { ...process.env, ...env, NO_COLOR: "1" }, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

/** What the matrix reads of a run: its exit code, output, and its checks' and findings' outlines. */
export interface RunSeen {
  code: number | null;
  output: string;
  results: {
    checks: readonly { status: string; suite: string; id?: string; message?: string }[];
    findings?: readonly { message: string }[];
  };
}

/** The checks a run ran: not skipped, and of the selected suites (the run's own cleanup check is its own). */
const ranIn = (run: Pick<RunSeen, "results">) =>
  run.results.checks.filter((c) => c.status !== "skipped" && c.suite !== "run").length;

/** Runs one configuration (its dry run, then the run) and holds it to the promises. */
export async function runConfig(config: MatrixConfig, seed: number): Promise<Outcome> {
  if (config.command === "cleanup") return runCleanup(config, seed);
  const started = Date.now();
  const target = await startTarget(config);
  const busy =
    target && config.busy ? busyClient(target.plainUrl ?? target.baseUrl, target.keys.main, config.idField) : undefined;
  const receiver = config.out ? await remoteWriteReceiver() : undefined;
  let proxy: Awaited<ReturnType<typeof startTinyproxy>> | undefined;
  const broken: string[] = [];
  let run: VerifyRun | undefined;
  let crash = "";
  let promised: number | undefined;
  try {
    proxy = config.proxy === "through" ? await startTinyproxy() : undefined;
    const env = proxyEnv(config, proxy?.url);
    const extra = [
      ...(receiver ? ["--out", `prometheus-rw=${receiver.url}`] : []),
      ...(config.shard ? shardArgs(capacityTenants().path) : []),
    ];
    const args = harnessArgs(config, target, extra);
    const dry = await dryRun([config.command, ...args], seed, env);
    const will = /will run: (\d+) checks/.exec(dry.output);
    promised = will ? Number(will[1]) : undefined;
    if (dry.code !== 0 && dry.code !== 2)
      broken.push(`the dry run ended ${dry.code} (a dry run judges nothing): ${lastLineOf(dry.output)}`);
    if (/internal error/.test(dry.output) && dry.code !== 2) broken.push("an internal error in the dry run was not exit 2");
    // a dry run says so and runs nothing; one that ran the checks also spent the target's buckets before the run
    if (!/dry run/i.test(dry.output)) broken.push("--dry-run ran the checks: its output never says it is a dry run");
    try {
      run = await (config.command === "verify" ? verify(args, seed, env) : load(args, seed, env));
    } catch (err) {
      crash = err instanceof Error ? err.message : String(err);
    }
  } finally {
    await busy?.stop();
    await target?.stop();
    await receiver?.close();
    await proxy?.stop();
  }
  // the options that promise something of their own, judged where the run kept its main promises
  if (run?.code === 0 && ranIn(run) > 0) {
    if (receiver && receiver.writes() === 0) broken.push("--out prometheus-rw: the receiver got no write while the run ran");
    if (config.compare) broken.push(...(await comparePromises(run.runDir)));
    if (proxy && !proxy.log().includes(new URL(target!.baseUrl).host))
      broken.push(`through the proxy: its log holds no request to ${new URL(target!.baseUrl).host}`);
  }
  if (!run) {
    broken.push(`the run wrote no report: ${crash.split("\n").slice(0, 3).join(" / ")}`);
    return {
      config,
      seed,
      code: null,
      findings: 0,
      ran: 0,
      broken,
      durationMs: Date.now() - started,
      lastLine: crash.slice(-300),
    };
  }
  const ran = ranIn(run);
  broken.push(
    ...judgeRun(run, {
      promised,
      busy: busy !== undefined,
      deployment: target !== undefined,
      command: config.command,
      messageTimeoutSeconds: config.messageTimeoutSeconds,
    }),
  );
  const findings = run.results.findings?.length ?? 0;
  return {
    config,
    seed,
    code: run.code,
    findings,
    ran,
    promised,
    broken,
    durationMs: Date.now() - started,
    lastLine: lastLineOf(run.output),
  };
}

/**
 * A cleanup row: the deployment seeded (straight, by a client of its own) with a killed run's
 * agents, a running run's and another client's; `agent-harness cleanup` run with the sweep's
 * flags and what reaches the deployment (its CA, client certificate, proxy variables); then what
 * is left, listed straight again, held to the sweep's promises (./cleanup-row.ts).
 */
async function runCleanup(config: MatrixConfig, seed: number): Promise<Outcome> {
  const started = Date.now();
  const sweep = config.sweep ?? "every-run";
  const target = await startTarget(config);
  if (!target) throw new Error("a cleanup row needs a deployment: normalise() gives it one");
  const direct = target.plainUrl ?? target.baseUrl;
  const seeded = leftovers();
  const busy = config.busy ? busyClient(direct, target.keys.main, config.idField) : undefined;
  let proxy: Awaited<ReturnType<typeof startTinyproxy>> | undefined;
  const broken: string[] = [];
  let seen: { code: number | null; output: string; remaining: string[] } | undefined;
  try {
    for (const name of [...seeded.old, ...seeded.recent, ...seeded.foreign]) {
      // a 429 waits for its Retry-After inside directCall: a few tries are plenty for five creates
      let status = 0;
      for (let attempt = 0; attempt < 4 && status !== 201; attempt++)
        status = (await directCall(direct, target.keys.main, "POST", "/agents", { name })).status;
      if (status !== 201) throw new Error(`seeding ${name}: POST /agents answered ${status}`);
    }
    proxy = config.proxy === "through" ? await startTinyproxy() : undefined;
    const args = [
      "cleanup",
      ...["--base-url", target.baseUrl, "--api-key", target.keys.main, ...(target.args ?? [])],
      ...["--rate-window", String(config.windowSeconds)],
      ...(config.idField ? ["--id-field", config.idField] : []),
      ...sweepArgs(sweep, seeded),
    ];
    const run = await new Promise<{ code: number | null; output: string }>((resolve) =>
      execFile(
        process.execPath,
        ["bin/agent-harness.js", ...args],
        { env: { ...ownEnv(), ...proxyEnv(config, proxy?.url), NO_COLOR: "1" }, timeout: CLEANUP_RUN_MS },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output: `${stdout}\n${stderr}` }),
      ),
    );
    seen = { ...run, remaining: await agentNames(direct, target.keys.main) };
    broken.push(...judgeCleanup(seen, sweep, seeded, busy !== undefined));
    if (run.code === 0 && proxy && !proxy.log().includes(new URL(target.baseUrl).host))
      broken.push(`through the proxy: its log holds no request to ${new URL(target.baseUrl).host}`);
  } catch (err) {
    broken.push(`the cleanup row could not be run: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    // the neighbour first (it talks to the target); then every server, each stopped whatever another does
    await busy?.stop();
    const stops = await Promise.allSettled([target.stop(), proxy?.stop()]);
    for (const stop of stops)
      if (stop.status === "rejected") broken.push(`a server of the row did not stop: ${String(stop.reason)}`);
  }
  const swept = seen ? seeded.old.concat(seeded.recent).filter((name) => !seen.remaining.includes(name)).length : 0;
  return {
    config,
    seed,
    code: seen?.code ?? null,
    findings: 0,
    ran: swept,
    broken,
    durationMs: Date.now() - started,
    lastLine: seen ? lastLineOf(seen.output) : "",
  };
}

/** How long a cleanup row's sweep may take: a few deletes, each at most a window's wait on a 429 and its retries. */
const CLEANUP_RUN_MS = 100_000;

/**
 * This process's environment without the harness's settings: a runner's AGENT_HARNESS_PREFIX or
 * AGENT_HARNESS_OLDER_THAN (or any other) would change what a row's sweep takes. The compiled tree
 * a test setup names stays: it is which copy of the harness runs, not a setting of the sweep.
 */
const ownEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name === "AGENT_HARNESS_COMPILED" || !/^AGENT_(HARNESS|API)_/.test(name)),
  );

/**
 * The names of every agent of the key's account, listed straight from the deployment, page by
 * page (bounded). Not cleanup's own listing (src/run/cleanup.ts): what is left after a sweep is
 * judged by a client that shares none of the code under test.
 */
async function agentNames(baseUrl: string, key: string): Promise<string[]> {
  const names: string[] = [];
  // a 429 is asked again (directCall has waited for its Retry-After); 100 pages at most
  for (let page = 1, tries = 0; page <= 100 && tries < 200; tries++) {
    const { status, body } = await directCall(baseUrl, key, "GET", `/agents?page=${page}&limit=${LIST_LIMITS.limit.max}`);
    if (status === 429) continue;
    const data = isPage(body) ? body.data : undefined;
    if (status !== 200 || !data) throw new Error(`listing agents: GET /agents answered ${status}`);
    names.push(...data.flatMap((a) => (typeof a.name === "string" ? [a.name] : [])));
    if (data.length < LIST_LIMITS.limit.max) return names;
    page++;
  }
  throw new Error("listing agents: no last page within 100 pages and 200 requests");
}

const isPage = (v: unknown): v is { data: { name?: unknown }[] } =>
  typeof v === "object" && v !== null && "data" in v && Array.isArray((v as { data: unknown }).data);

/**
 * The promises, judged on one run of a conformant server: each broken one in a sentence.
 * `promised` is the dry run's count (undefined when it printed none).
 */
export function judgeRun(
  run: RunSeen,
  context: {
    promised: number | undefined;
    busy: boolean;
    deployment: boolean;
    command: MatrixConfig["command"];
    messageTimeoutSeconds: number;
  },
): string[] {
  const broken: string[] = [];
  const { promised, busy } = context;
  const findings = run.results.findings ?? [];
  const ran = ranIn(run);
  const lastLine = lastLineOf(run.output);
  const errored = run.results.checks.some((c) => c.status === "error");
  // a conformant server: never a finding, never exit 1
  if (findings.length > 0 || run.code === 1)
    broken.push(
      `exit ${run.code} with ${findings.length} finding(s) on a conformant server: ${findings
        .map((f) => f.message)
        .join(" | ")
        .slice(0, 600)}`,
    );
  // a harness error (a check that erred, an internal error) is exit 2
  // (alongside a finding, exit 1 is the finding's: that promise is broken above already)
  if ((errored || /internal error/.test(run.output)) && run.code !== 2 && findings.length === 0)
    broken.push(`a harness error ended ${run.code}, not 2`);
  // exit 2: with checks run, only another client's activity excuses it, and the run must name it;
  // with none run (every one skipped), the run must say why
  const erred = run.results.checks.filter((c) => c.status === "error").map((c) => `${c.id ?? "?"}: ${c.message ?? ""}`);
  // a flood the generator could not make is no verdict, and says so: the machine's headroom, not the service
  const floodShort = run.output.includes(FLOOD_SHORT);
  // a budget no mock-slow reply fits in (PROFILE §10: about 2 s) is the user's choice: the checks
  // that needed such a reply say, each in the same words, that the budget ended it
  const T = context.messageTimeoutSeconds;
  const budgetTooShort =
    T <= MESSAGE_TIMING.slowModelSeconds &&
    erred.length > 0 &&
    erred.every((m) => m.includes(budgetEndedWords(T))) &&
    !/internal error/.test(run.output);
  if (run.code === 2 && ran > 0 && !busy && !floodShort && !budgetTooShort)
    broken.push(`exit 2 on a quiet conformant server (${erred.length} erred: ${erred.join(" | ").slice(0, 600)}): ${lastLine}`);
  if (run.code === 2 && ran > 0 && busy && !/inconclusive|another client|foreign|not the run's/i.test(run.output))
    broken.push(`exit 2 with another client busy, but the output names no inconclusive reason: ${lastLine}`);
  // (on its last line, where a CI log shows it: the summary's Skipped column is no reason)
  if (run.code === 2 && ran === 0 && !/^(nothing ran|inconclusive):/.test(lastLine))
    broken.push(`exit 2 with nothing run and no reason on its last line: ${lastLine}`);
  // what the dry run promised is what ran
  if (promised !== undefined && run.code === 0 && promised !== ran)
    broken.push(`the dry run promised ${promised} checks; ${ran} ran`);
  if (promised === undefined && context.deployment && context.command === "verify" && run.code === 0)
    broken.push("the dry run of a deployment printed no count of the checks it would run");
  if (run.code === 0 && ran === 0 && context.command === "verify") broken.push("exit 0 with no check run");
  return broken;
}

/** The command that replays one configuration. */
export const replayCommand = (o: Pick<Outcome, "config" | "seed">) =>
  `npm run matrix -- --config '${JSON.stringify(o.config)}' --seed ${o.seed}`;

/**
 * The cheap corner of the matrix the npm-test slice draws from: one suite, the smoke profile, one
 * or two small sections, W = 2 s, on loopback or near; every target and key set; a deployment
 * plain or behind a TLS terminator (a company CA, a client certificate: a second of openssl once),
 * through a forward proxy or with proxy variables that NO_PROXY bypasses.
 */
export function sliceArbitrary(): fc.Arbitrary<MatrixConfig> {
  return fc
    .record({
      sections: fc.constantFrom(["§2"], ["§3"], ["§1", "§9"], ["§8"], ["auth.no-key-echo"], ["§9", "list.order"]),
      keySet: fc.constantFrom(...KEY_SETS),
      target: fc.constantFrom(...TARGETS),
      network: fc.constantFrom("none" as const, "near" as const),
      referenceFaults: fc.boolean(),
      tls: fc.constantFrom(undefined, "ca" as const, "mutual" as const),
      workers: fc.constantFrom(1, 2, EMBEDDED_DEFAULTS.workers ?? 1),
      proxy: fc.constantFrom(undefined, "through" as const, "bypassed" as const),
    })
    .map((r) => ({
      command: "verify" as const,
      selection: ["functional"],
      referenceFaults: r.referenceFaults,
      profile: "smoke" as const,
      bail: false,
      sections: [...r.sections],
      keySet: startedByHarness(r.target) ? ("all+tier" as const) : r.keySet,
      target: r.target,
      network: r.network,
      busy: false,
      windowSeconds: 2,
      messageTimeoutSeconds: 3,
      ...(!startedByHarness(r.target) && r.network === "none" && r.tls ? { tls: r.tls } : {}),
      ...(startedByHarness(r.target) ? { workers: r.workers } : {}),
      // a forward proxy fronts a deployment; proxy variables bypassed by NO_PROXY, any target
      ...(r.proxy === "bypassed" || (r.proxy === "through" && !startedByHarness(r.target)) ? { proxy: r.proxy } : {}),
    }));
}
