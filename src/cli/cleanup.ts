import { RATE_LIMITS } from "../contract/index.js";
import { deleteByPrefix } from "../run/cleanup.js";
import { idFieldSchema, VERIFY_OPTIONS } from "../run/config.js";
import { UsageError } from "../run/usage-error.js";
import { HARNESS_NAME_PREFIX } from "../target/harness-target.js";
import { optionsHelp, parseOrHelp, readOptions } from "./config.js";

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
    `usage: agent-harness cleanup --base-url URL --api-key KEY [--prefix P] [--id-field NAME] [--dry-run]\n${optionsHelp(CLEANUP_OPTIONS)}`,
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
  const window = raw.rateWindow ? Number(raw.rateWindow) : RATE_LIMITS.defaultWindowSeconds;
  if (!(window > 0)) throw new UsageError("--rate-window must be a number > 0");
  return deleteByPrefix(
    { baseUrl, apiKey: String(raw.apiKey), prefix, windowSeconds: window, dryRun: raw.dryRun === true, idField: idField.data },
    process.stdout,
    process.stderr,
  );
}
