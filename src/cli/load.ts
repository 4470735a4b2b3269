import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { FLOOD_DEFAULTS, FLOOD_SHAPES } from "../load/capacity/floods.js";
import { capacityOptionsOf } from "../load/capacity/options.js";
import { type Gate, parseGate } from "../load/compare/compare.js";
import { parseThreshold, SCENARIO_IDS, SCENARIOS, type Threshold } from "../load/index.js";
import { runCompare } from "../run/compare.js";
import { commaList, VERIFY_OPTIONS, type VerifyConfig } from "../run/config.js";
import { runLoad, runMerge } from "../run/load-command.js";
import { UsageError } from "../run/usage-error.js";
import { parseCpuList } from "../target/cores.js";
import { optionsHelp, parseOrHelp, parseVerifyConfig, readOptions } from "./config.js";
import { readKeysFile } from "./serve.js";

/**
 * `load` takes verify's target options (minus suite selection, minus the request plan's
 * --profile, which a load run has no use for: its --profile is capacity's, and minus the property
 * suite's --replay and --max-requests: a load run has no property to replay or budget, and
 * accepting them would let `load --replay F` run the scenarios as if it had replayed) and its own.
 */
export const LOAD_OPTIONS = {
  ...Object.fromEntries(
    Object.entries(VERIFY_OPTIONS).filter(
      ([name]) => !["suites", "sections", "bail", "profile", "replay", "maxRequests"].includes(name),
    ),
  ),
  scenario: {
    flag: "scenario",
    env: "AGENT_HARNESS_SCENARIO",
    type: "string",
    help: `comma-separated scenarios (default: all): ${SCENARIO_IDS.join(", ")}`,
  },
  threshold: {
    flag: "threshold",
    env: "AGENT_HARNESS_THRESHOLD",
    type: "string",
    multiple: true,
    help: "pass/fail on a figure (repeatable): 'p99<250' (ms, every endpoint, 2xx answers only), 'p99[429]<50' (the 429s; also [other]), 'errors<0.1%' (5xx and transport errors; 429s are outcomes), 'rps>100'",
  },
  keysFile: {
    flag: "keys-file",
    env: "AGENT_HARNESS_KEYS_FILE",
    type: "string",
    help: "capacity: the tenants, in serve's --keys format (accounts with tiers, keys with permissions); a reference target the harness starts serves them too",
  },
  share: {
    flag: "share",
    env: "AGENT_HARNESS_SHARE",
    type: "string",
    help: "capacity: the share of each bucket every key is driven at (default 0.8; 80% also reads)",
  },
  duration: {
    flag: "duration",
    env: "AGENT_HARNESS_DURATION",
    type: "string",
    help: "capacity: how long to drive, ramp-up included (default 60s; e.g. 90, 10m)",
  },
  ramp: {
    flag: "ramp",
    env: "AGENT_HARNESS_RAMP",
    type: "string",
    help: "capacity: the arrival rate grows from 0 over this long (default a tenth of --duration)",
  },
  profile: {
    flag: "profile",
    env: "AGENT_HARNESS_LOAD_PROFILE",
    type: "string",
    help: "capacity: steady (default) or noisy-neighbour (the first account floods the second half, in --flood's shapes one after another)",
  },
  flood: {
    flag: "flood",
    env: "AGENT_HARNESS_FLOOD",
    type: "string",
    help: `noisy-neighbour: the flood's shapes, comma-separated (default all: ${FLOOD_SHAPES.join(", ")})`,
  },
  floodRate: {
    flag: "flood-rate",
    env: "AGENT_HARNESS_FLOOD_RATE",
    type: "string",
    help: `noisy-neighbour: the storms' requests a second at most (default ${FLOOD_DEFAULTS.ratePerSecond}); a storm that reaches less than ${FLOOD_DEFAULTS.reachedShare * 100}% of it is inconclusive`,
  },
  floodSockets: {
    flag: "flood-sockets",
    env: "AGENT_HARNESS_FLOOD_SOCKETS",
    type: "string",
    help: `noisy-neighbour: the connection hog's idle keep-alive sockets (default ${FLOOD_DEFAULTS.sockets})`,
  },
  serviceCores: {
    flag: "service-cores",
    env: "AGENT_HARNESS_SERVICE_CORES",
    type: "string",
    help: "noisy-neighbour: the CPUs (e.g. 1 or 2-3) that the deployment at a loopback --base-url is pinned to on this machine; the harness runs on the others and judges the others' latency under a storm, as for a reference it starts",
  },
  shard: {
    flag: "shard",
    env: "AGENT_HARNESS_SHARD",
    type: "string",
    help: "capacity: drive shard x/n of the tenants (whole accounts), numbered from 1 as vitest's --shard 1/3; n alone takes the engine's 0-based index from JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX",
  },
  out: {
    flag: "out",
    env: "AGENT_HARNESS_OUT",
    type: "string",
    help: "send the run's metrics while it runs: prometheus-rw=URL (a Prometheus remote-write endpoint, e.g. http://prom:9090/api/v1/write)",
  },
  allowRemoteLoad: {
    flag: "allow-remote-load",
    env: "AGENT_HARNESS_ALLOW_REMOTE_LOAD",
    type: "boolean",
    help: "allow load on a base URL that is not loopback (stays within each scenario's bounds)",
  },
} as const;

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

const loadSchema = z.object({
  scenario: commaList(z.enum(SCENARIO_IDS, { error: `--scenario takes: ${SCENARIO_IDS.join(", ")}` })).optional(),
  threshold: z.array(z.string()).default([]),
  allowRemoteLoad: z.boolean().default(false),
  keysFile: z.string().optional(),
  serviceCores: z.string().optional(),
  out: z
    .string()
    .regex(
      /^prometheus-rw=https?:\/\/\S+$/,
      "--out takes prometheus-rw=URL (http or https), e.g. prometheus-rw=http://127.0.0.1:9090/api/v1/write",
    )
    .transform((s) => s.slice("prometheus-rw=".length))
    // the input is not echoed: a URL that does not parse may still hold a password or a token
    .refine((url) => URL.canParse(url), { error: "--out prometheus-rw=URL: the URL does not parse" })
    // undici sends no user or password from a URL: every push would be refused, and the warning
    // would print the password; say so before the run instead
    .refine((url) => !URL.canParse(url) || (!new URL(url).username && !new URL(url).password), {
      error: "--out prometheus-rw: a user or password in the URL is never sent; put the endpoint behind a proxy that adds them",
    })
    .optional(),
  capacity: z.object({
    share: z.string().optional(),
    duration: z.string().optional(),
    ramp: z.string().optional(),
    profile: z.string().optional(),
    shard: z.string().optional(),
    flood: z.string().optional(),
    floodRate: z.string().optional(),
    floodSockets: z.string().optional(),
  }),
});

export const LOAD_USAGE = `usage: agent-harness load [options]
       agent-harness load merge DIR... [--report-dir DIR]   (the shards of --shard x/n as one run)
       agent-harness load compare BASE CURRENT [--max-regression 'p99:+10%']...   (a release gate)

Drives the load scenarios against the embedded reference server (default), a
container, or --base-url; writes reports/<run-id>/load.json and report.html with charts.
Options (each also read from the env var shown):
${optionsHelp(LOAD_OPTIONS)}

Latency is kept per endpoint and per outcome — 2xx admitted, 429 refused, other — and each
figure says how many answers it rests on: a 429 is answered at once and would flatter the
percentiles of the work the target did.

A latency threshold (p50 p90 p95 p99 p99.9 max mean) judges the 2xx answers unless it names
another outcome (p99[429]<50, p99[other]<100), on every endpoint of the throughput scenario or,
when it did not run, of every scenario whose latencies hold no intended wait; these hold
mock-slow, held streams or the message budget on purpose and are never judged:
${SCENARIOS.filter((s) => !s.latency.judged)
  .map((s) => s.id)
  .join(", ")}.
A latency threshold with no such answer to judge fails.

errors<N% counts 5xx answers and transport errors among all answers: a 429 is an outcome the
scenarios expect, and one a scenario did not expect is a finding of that scenario.

exit codes: 0 every scenario and threshold passed; 1 a finding or a threshold broke; 2 bad usage,
target unreachable, a scenario that could not judge (error), or nothing ran (every scenario
skipped); 130 interrupted`;

export function parseLoadArgs(argv: string[]) {
  const loadOnly = [
    "scenario",
    "threshold",
    "allow-remote-load",
    "keys-file",
    "share",
    "duration",
    "ramp",
    "profile",
    "shard",
    "flood",
    "flood-rate",
    "flood-sockets",
    "service-cores",
    "out",
  ];
  const raw = readOptions(argv, LOAD_OPTIONS, process.env);
  const { share, duration, ramp, profile, shard, flood, floodRate, floodSockets } = raw;
  const parsed = loadSchema.safeParse({
    scenario: raw.scenario,
    threshold: raw.threshold,
    allowRemoteLoad: raw.allowRemoteLoad,
    keysFile: raw.keysFile,
    serviceCores: raw.serviceCores,
    out: raw.out,
    capacity: { share, duration, ramp, profile, shard, flood, floodRate, floodSockets },
  });
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join("; "));
  // the target options are verify's, validated by verify's schema
  const verifyArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    // only a word that starts with -- names a flag: a value may be any word ("--report-dir out")
    const flag = argv[i]!.startsWith("--") ? argv[i]!.slice(2).split("=")[0]! : undefined;
    if (flag !== undefined && loadOnly.includes(flag)) {
      if (flag !== "allow-remote-load" && !argv[i]!.includes("=")) i++;
      continue;
    }
    verifyArgs.push(argv[i]!);
  }
  const config = parseVerifyConfig(verifyArgs, { ...process.env, AGENT_HARNESS_SUITES: "" });
  const thresholds: Threshold[] = [];
  for (const source of parsed.data.threshold) {
    const t = parseThreshold(source);
    if (typeof t === "string") throw new UsageError(t);
    thresholds.push(t);
  }
  if (config.baseUrl && !LOOPBACK.test(new URL(config.baseUrl).hostname) && !parsed.data.allowRemoteLoad)
    throw new UsageError(
      `refusing to put load on ${new URL(config.baseUrl).host}: not a loopback address (add --allow-remote-load if you own it)`,
    );
  const { keysFile } = parsed.data;
  // the capacity options shape a drive of the keys file's tenants: without one they were silently dropped
  const given = Object.entries(parsed.data.capacity).filter(([, v]) => v !== undefined);
  if (!keysFile && given.length)
    throw new UsageError(
      `${given.map(([name]) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(", ")} shape the capacity scenario's drive of a keys file's tenants: add --keys-file`,
    );
  const capacity = keysFile
    ? capacityOptionsOf(readKeysFile(keysFile, "--keys-file"), parsed.data.capacity, process.env)
    : undefined;
  if (typeof capacity === "string") throw new UsageError(capacity);
  const serviceCores = serviceCoresOf(parsed.data.serviceCores, config, capacity?.profile);
  // a shard holds a share of the tenants; every other scenario would run whole in each shard
  if (capacity?.shard && parsed.data.scenario?.join() !== "capacity")
    throw new UsageError("--shard splits the tenants of the capacity scenario: give --scenario capacity alone");
  return {
    config,
    scenarios: parsed.data.scenario,
    thresholds,
    options: { ...(capacity ? { capacity } : {}), ...(serviceCores ? { serviceCores } : {}) },
    ...(parsed.data.out ? { remoteWrite: parsed.data.out } : {}),
  };
}

/**
 * `--service-cores LIST`: the CPUs a deployment on this machine is pinned to, for the storms'
 * latency verdict. Only where that verdict exists (noisy-neighbour) and the service is the one
 * at a loopback --base-url, reached directly: a reference the harness starts gets cores of its own
 * without it, and a delaying proxy would run in the harness, between the storm and the service.
 */
function serviceCoresOf(raw: string | undefined, config: VerifyConfig, profile: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  const cpus = parseCpuList(raw);
  if (!cpus) throw new UsageError(`--service-cores "${raw}": a list of CPUs as taskset takes it, e.g. 1 or 2-3 or 1,3`);
  if (profile !== "noisy-neighbour")
    throw new UsageError(
      "--service-cores judges the others' latency under the floods of the capacity scenario with --keys-file and --profile noisy-neighbour: add them",
    );
  if (!config.baseUrl || !LOOPBACK.test(new URL(config.baseUrl).hostname))
    throw new UsageError(
      "--service-cores names the CPUs of a deployment on this machine (a loopback --base-url); a reference the harness starts gets cores of its own without it",
    );
  if (config.networkDelay || config.networkProxy)
    throw new UsageError(
      "--service-cores cannot be judged through --network-delay: its proxy runs in the harness, between the storm and the service",
    );
  return cpus;
}

export const MERGE_USAGE = `usage: agent-harness load merge DIR... [--report-dir DIR]

Merges the reports of the shards of one capacity run (load --shard x/n, every shard 1/n … n/n once)
into one load.json, results.json, junit.xml and report.html, with the verdicts and exit code one
process would give. Each DIR is a shard's run folder or a folder of them (downloaded artifacts).`;

/**
 * The flags and positionals of `load merge` and `load compare` (one parser: `merge` takes only
 * --report-dir); a bad flag is a UsageError, --help an empty one.
 */
function subcommandArgs(argv: string[], command: "merge" | "compare") {
  let args: ReturnType<typeof parseSubcommand>;
  try {
    args = parseSubcommand(argv);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (args.values.help) throw new UsageError("");
  if (command === "merge" && (args.values.seed !== undefined || args.values["max-regression"] !== undefined))
    throw new UsageError("load merge takes only --report-dir");
  return args;
}

const parseSubcommand = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "report-dir": { type: "string" },
      "max-regression": { type: "string", multiple: true },
      seed: { type: "string" },
      help: { type: "boolean" },
    },
  });

function parseMergeArgs(argv: string[]) {
  const args = subcommandArgs(argv, "merge");
  if (!args.positionals.length) throw new UsageError("load merge needs the shards' report folders");
  return { dirs: args.positionals, reportDir: resolve(args.values["report-dir"] ?? "reports") };
}

export const COMPARE_USAGE = `usage: agent-harness load compare BASE CURRENT [--max-regression GATE]... [--report-dir DIR] [--seed N]

Compares two load runs (each a run's report folder or its load.json): per scenario, endpoint and
outcome, p50 p90 p95 p99 side by side with the change and whether it is beyond noise (a 95%
bootstrap interval of the change, resampled from both runs' recorded histograms), throughput and
error rates. Writes compare.html (both runs' latency distributions overlaid) and compare.json.

  --max-regression GATE   how much worse a figure may get (repeatable): p99:+10% or p95:+20ms
                          (latency of the 2xx answers, every endpoint of the scenarios whose latency
                          is judged; a quantile only where both runs hold 5 answers above it: p99
                          from 500, p95 from 100, p90 from 50), rps:-10% (throughput), errors:+0.5%
                          (error rate, in points)
  --report-dir DIR        where compare-<id>/ goes (default reports)
  --seed N                the bootstrap's seed (default 1: the same runs compare the same)

exit codes: 0 no gate broke; 1 a figure got worse beyond both its tolerance and the noise;
2 the runs are not comparable (other scenarios, other target settings: it says which), a latency
gate could be judged on no endpoint (too few answers: no verdict), or bad usage`;

function parseCompareArgs(argv: string[]) {
  const args = subcommandArgs(argv, "compare");
  const [base, current, ...extra] = args.positionals;
  if (!base || !current || extra.length)
    throw new UsageError("load compare takes two runs: BASE CURRENT (report folders or load.json files)");
  const gates: Gate[] = [];
  for (const source of args.values["max-regression"] ?? []) {
    const gate = parseGate(source);
    if (typeof gate === "string") throw new UsageError(gate);
    gates.push(gate);
  }
  const seed = Number(args.values.seed ?? "1");
  if (!Number.isInteger(seed)) throw new UsageError("--seed must be a whole number");
  return { paths: { base, current }, gates, reportDir: args.values["report-dir"] ?? "reports", seed };
}

/** `agent-harness load`: its options parsed and validated, then the run (src/run/load-command.ts); `load merge`: the shards as one run. */
export async function load(argv: string[]): Promise<number> {
  if (argv[0] === "compare") {
    const compare = parseOrHelp(() => parseCompareArgs(argv.slice(1)), COMPARE_USAGE);
    return compare ? runCompare(compare.paths, compare.gates, compare.reportDir, compare.seed) : 0;
  }
  if (argv[0] === "merge") {
    const merge = parseOrHelp(() => parseMergeArgs(argv.slice(1)), MERGE_USAGE);
    return merge ? runMerge(merge.dirs, merge.reportDir) : 0;
  }
  const parsed = parseOrHelp(() => parseLoadArgs(argv), LOAD_USAGE);
  return parsed ? runLoad(parsed.config, parsed.scenarios, parsed.thresholds, parsed.options, parsed.remoteWrite) : 0;
}
