import { exportNetworkSettings, proxyProblem, tlsOptionsOf } from "../client/network.js";
import { RATE_LIMITS } from "../contract/index.js";
import { parseDurationSeconds } from "../load/capacity/options.js";
import { deleteByPrefix } from "../run/cleanup.js";
import { idFieldSchema, VERIFY_OPTIONS } from "../run/config.js";
import { UsageError } from "../run/usage-error.js";
import { HARNESS_NAME_PREFIX } from "../target/harness-target.js";
import { optionsHelp, parseOrHelp, readOptions } from "./config.js";

/** How old a run must be for the sweep of every run's prefix to take its agents: longer than a run lasts. */
export const DEFAULT_OLDER_THAN = "1h";

const CLEANUP_OPTIONS = {
  baseUrl: { flag: "base-url", env: "AGENT_API_BASE_URL", type: "string", help: "the deployment's base URL (ends with /v1)" },
  apiKey: { flag: "api-key", env: "AGENT_API_KEY", type: "string", help: "a key with agents:read and agents:delete" },
  prefix: {
    flag: "prefix",
    env: "AGENT_HARNESS_PREFIX",
    type: "string",
    help: `name prefix to sweep (default ${HARNESS_NAME_PREFIX}, every run's)`,
  },
  dryRun: { flag: "dry-run", env: "AGENT_HARNESS_DRY_RUN", type: "boolean", help: "list what would be deleted, delete nothing" },
  // the record's identifier field as verify reads it: with another, no listed agent would parse
  idField: VERIFY_OPTIONS.idField,
  // a deployment behind a company CA or demanding a client certificate is swept as it was verified
  caFile: VERIFY_OPTIONS.caFile,
  clientCert: VERIFY_OPTIONS.clientCert,
  clientKey: VERIFY_OPTIONS.clientKey,
  olderThan: {
    flag: "older-than",
    env: "AGENT_HARNESS_OLDER_THAN",
    type: "string",
    help: `only runs started at least this long ago, e.g. 30m, 2h, 0 (default ${DEFAULT_OLDER_THAN} with the prefix of every run, 0 with one run's): a run still going keeps its agents`,
  },
  rateWindow: {
    flag: "rate-window",
    env: "AGENT_API_RATE_WINDOW",
    type: "string",
    help: "rate-limit window W in seconds (default 60)",
  },
} as const;

/** `agent-harness cleanup`: sweep agents left by killed runs, by their run-prefixed names only. */
export async function cleanup(argv: string[]): Promise<number> {
  const raw = parseOrHelp(
    () => readOptions(argv, CLEANUP_OPTIONS, process.env),
    `usage: agent-harness cleanup --base-url URL --api-key KEY [--prefix P] [--older-than 1h] [--id-field NAME] [--ca-file PEM] [--client-cert PEM --client-key PEM] [--dry-run]\n${optionsHelp(CLEANUP_OPTIONS)}`,
  );
  if (!raw) return 0;
  const baseUrl = String(raw.baseUrl ?? "").replace(/\/+$/, "");
  if (!/^https?:\/\/.+\/v1$/.test(baseUrl) || !URL.canParse(baseUrl))
    throw new UsageError("cleanup needs --base-url: an http(s) URL ending with /v1");
  if (!raw.apiKey) throw new UsageError("cleanup needs --api-key (or $AGENT_API_KEY)");
  const prefix = String(raw.prefix ?? HARNESS_NAME_PREFIX);
  // a run prefix is ah-<run id>-: refuse a prefix that could match agents the harness did not make
  if (!prefix.startsWith(HARNESS_NAME_PREFIX))
    throw new UsageError(`--prefix must start with ${HARNESS_NAME_PREFIX}: the harness only deletes agents it named`);
  const idField = idFieldSchema.safeParse(raw.idField);
  if (!idField.success) throw new UsageError(idField.error.issues.map((i) => i.message).join("; "));
  // another pipeline's run on the same account may be going: the sweep of every run's prefix keeps
  // recent runs' agents unless told; one run's prefix names what to take
  const olderThanRaw = String(raw.olderThan ?? (prefix === HARNESS_NAME_PREFIX ? DEFAULT_OLDER_THAN : "0"));
  const olderThan = parseDurationSeconds(olderThanRaw, "--older-than", { zero: true });
  if (typeof olderThan === "string") throw new UsageError(olderThan);
  const window = raw.rateWindow ? Number(raw.rateWindow) : RATE_LIMITS.defaultWindowSeconds;
  if (!(window > 0)) throw new UsageError("--rate-window must be a number > 0");
  // the TLS material and the proxy variables, checked as verify checks them: a file it cannot use
  // or a proxy it cannot reach through is one line naming the flag or variable, never a crash
  const tls = { caFile: optional(raw.caFile), clientCert: optional(raw.clientCert), clientKey: optional(raw.clientKey) };
  const tlsProblem = tlsOptionsOf(tls);
  if (typeof tlsProblem === "string") throw new UsageError(tlsProblem);
  const proxy = proxyProblem(process.env);
  if (proxy) throw new UsageError(proxy);
  // the sweep's client connects with them, as every client of a run does
  exportNetworkSettings(tls);
  return deleteByPrefix(
    {
      baseUrl,
      apiKey: String(raw.apiKey),
      prefix,
      windowSeconds: window,
      dryRun: raw.dryRun === true,
      idField: idField.data,
      olderThanSeconds: olderThan,
    },
    process.stdout,
    process.stderr,
  );
}

const optional = (value: unknown): string | undefined => (typeof value === "string" && value ? value : undefined);
