import type { KeysFile } from "../../contract/index.js";
import { FLOOD_DEFAULTS, FLOOD_SHAPES, type FloodShape } from "./floods.js";
import { CAPACITY_DEFAULTS, CAPACITY_PROFILES, type CapacityOptions, type CapacityProfile, type Shard } from "./plan.js";

/** `90`, `90s`, `10m`, `1h` → seconds (0 only where `zero` allows it); a reason when it is none of these. */
export function parseDurationSeconds(raw: string, flag: string, options: { zero?: boolean } = {}): number | string {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(s|m|h)?\s*$/.exec(raw);
  if (!m) return `${flag} "${raw}": expected a duration such as 90, 90s, 10m or 1h`;
  const seconds = Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] === "m" || m[2] === "h" ? m[2] : "s"];
  return seconds > 0 || (options.zero && seconds === 0) ? seconds : `${flag} "${raw}": must be more than 0`;
}

/**
 * The engines that run N copies of one job say which copy this is: a Kubernetes Indexed Job
 * (JOB_COMPLETION_INDEX), an AWS Batch array job (AWS_BATCH_JOB_ARRAY_INDEX). A GitHub Actions
 * matrix passes its own index in `--shard ${{ matrix.shard }}/N`.
 */
const SHARD_INDEX_VARIABLES = ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"] as const;

/**
 * `--shard x/n` numbered as the test runners number theirs (vitest, Playwright, Jest: 1 ≤ x ≤ n,
 * so a matrix copied from their workflows works), or `--shard n` with the engine's 0-based index
 * from one of SHARD_INDEX_VARIABLES; a reason when it is neither. The Shard holds the 0-based index.
 */
export function parseShard(raw: string, env: NodeJS.ProcessEnv): Shard | string {
  const m = /^\s*(?:([0-9]+)\s*\/\s*)?([0-9]+)\s*$/.exec(raw);
  if (!m) return `--shard "${raw}": expected x/n (e.g. 1/3), or n with the index in ${SHARD_INDEX_VARIABLES.join(" or ")}`;
  const count = Number(m[2]);
  if (m[1] !== undefined) {
    const x = Number(m[1]);
    if (count < 1 || x < 1 || x > count)
      return `--shard ${raw}: shard ${x} of ${count}: expected 1 ≤ x ≤ n (numbered from 1, as vitest's --shard 1/3)`;
    return { index: x - 1, count };
  }
  const fromEnv = SHARD_INDEX_VARIABLES.map((v) => env[v]).find((v) => v !== undefined && v !== "");
  if (fromEnv === undefined)
    return `--shard ${raw}: no shard index: give x/n, or set ${SHARD_INDEX_VARIABLES.join(" or ")} (the engine that runs the copies does)`;
  const index = Number(fromEnv);
  if (!Number.isInteger(index) || count < 1 || index < 0 || index >= count)
    return `--shard ${raw}: index ${fromEnv} of ${count} shards: the engine's index is 0-based, expected 0 ≤ index < ${count}`;
  return { index, count };
}

/** The capacity drive from `load`'s options; a reason when one is wrong. */
export function capacityOptionsOf(
  tenants: KeysFile,
  raw: {
    share?: string;
    duration?: string;
    ramp?: string;
    profile?: string;
    shard?: string;
    flood?: string;
    floodRate?: string;
    floodSockets?: string;
  },
  env: NodeJS.ProcessEnv,
): CapacityOptions | string {
  const share =
    raw.share === undefined ? CAPACITY_DEFAULTS.share : Number(raw.share.replace(/%$/, "")) / (raw.share.endsWith("%") ? 100 : 1);
  if (!(share > 0 && share <= 1)) return `--share "${raw.share}": a share of each bucket, 0 < share ≤ 1 (e.g. 0.8 or 80%)`;
  const durationSeconds =
    raw.duration === undefined ? CAPACITY_DEFAULTS.durationSeconds : parseDurationSeconds(raw.duration, "--duration");
  if (typeof durationSeconds === "string") return durationSeconds;
  const rampSeconds =
    raw.ramp === undefined ? durationSeconds * CAPACITY_DEFAULTS.rampShare : parseDurationSeconds(raw.ramp, "--ramp");
  if (typeof rampSeconds === "string") return rampSeconds;
  if (rampSeconds >= durationSeconds) return `--ramp ${raw.ramp} must be shorter than --duration ${raw.duration}`;
  const profile = CAPACITY_PROFILES.find((p) => p === (raw.profile ?? "steady"));
  if (!profile) return `--profile "${raw.profile}": one of ${CAPACITY_PROFILES.join(", ")}`;
  const shard = raw.shard === undefined ? undefined : parseShard(raw.shard, env);
  if (typeof shard === "string") return shard;
  const floods = floodShapesOf(raw.flood);
  if (typeof floods === "string") return floods;
  if ((raw.flood ?? raw.floodRate ?? raw.floodSockets) !== undefined && profile !== "noisy-neighbour")
    return "--flood, --flood-rate and --flood-sockets shape the flood of --profile noisy-neighbour: add it";
  const floodRate = positiveInteger(raw.floodRate, FLOOD_DEFAULTS.ratePerSecond, "--flood-rate", "requests a second");
  if (typeof floodRate === "string") return floodRate;
  const floodSockets = positiveInteger(raw.floodSockets, FLOOD_DEFAULTS.sockets, "--flood-sockets", "idle sockets");
  if (typeof floodSockets === "string") return floodSockets;
  return {
    tenants,
    share,
    durationSeconds,
    rampSeconds,
    profile: profile satisfies CapacityProfile,
    floods,
    floodRate,
    floodSockets,
    ...(shard ? { shard } : {}),
  };
}

/** `--flood a,b`: flood shapes, each once, in the order given; every shape when absent. */
function floodShapesOf(raw: string | undefined): FloodShape[] | string {
  if (raw === undefined) return [...FLOOD_SHAPES];
  const names = raw.split(",").map((n) => n.trim());
  const shapes = names.map((n) => FLOOD_SHAPES.find((s) => s === n));
  const unknown = names.filter((_, i) => shapes[i] === undefined);
  if (unknown.length || !names.length) return `--flood "${raw}": a comma-separated list of ${FLOOD_SHAPES.join(", ")}`;
  return [...new Set(shapes.filter((s): s is FloodShape => s !== undefined))];
}

function positiveInteger(raw: string | undefined, fallback: number, flag: string, what: string): number | string {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : `${flag} "${raw}": a whole number of ${what}, more than 0`;
}
