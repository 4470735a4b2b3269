import { shareCap } from "../client/rate-share.js";
import { ENDPOINTS, type EndpointId } from "../contract/index.js";
import type { NeedsOf } from "./file-needs.js";
import type { FootprintEntry } from "./footprint.js";

export interface PlanLimits {
  windowSeconds: number;
  tierLimit?: number | undefined;
  mainKeys: number;
  /**
   * by account label: an account two lanes use, the lane it is the main account of (the host) and
   * the guest's part of its buckets; each lane keeps to its share (src/client/rate-share.ts)
   */
  shares?: Readonly<Record<string, { host: string; guest: { tier: number; endpoint: number } }>>;
  /** what each suite file declared: the order a lane runs its files in, and which wait for the quota lane (src/plan/lanes.ts) */
  needsOf?: NeedsOf;
}

/** Each endpoint as people name it: a new endpoint is a type error here until it is named. */
const ENDPOINT_LABEL: Record<EndpointId, string> = {
  createAgent: "Create",
  listAgents: "List",
  getAgent: "Get",
  updateAgent: "Update",
  deleteAgent: "Delete",
  sendMessage: "Send Message",
};

/**
 * The buckets a counted request is in (PROFILE §7), named for people; the size of each. On an
 * account two lanes share, a lane's requests count against its share of the tier and of the
 * key's endpoint buckets (per-agent buckets are each lane's own).
 */
export function bucketsOf(entry: FootprintEntry, limits: PlanLimits): [string, number | null][] {
  const shared = entry.lane !== undefined ? limits.shares?.[entry.account] : undefined;
  const side = shared && (entry.lane === shared.host ? "host" : "guest");
  const ofShare = (name: string, isTier: boolean, size: number | null): [string, number | null] =>
    shared && side
      ? [
          `${name}, the ${entry.lane} lane's share`,
          shareCap({ guest: shared.guest, side }, { isTier, size: size ?? undefined }) ?? null,
        ]
      : [name, size];
  const tier = ofShare(`tier of the ${entry.account} account`, true, limits.tierLimit ?? null);
  if (entry.endpoint === undefined) return [tier];
  const spec = ENDPOINTS[entry.endpoint];
  if (spec.bucket.kind === "agentMessages")
    return [[`Send Message to agent ${entry.agent ?? "?"} (${entry.account} account)`, spec.bucket.size], tier];
  return [ofShare(`${ENDPOINT_LABEL[entry.endpoint]} on key ${entry.key}`, false, spec.bucket.size), tier];
}
