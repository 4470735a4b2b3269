import {
  ENDPOINTS,
  type EndpointId,
  type KeysFile,
  newApiKey,
  PERMISSIONS,
  type Permission,
  RATE_LIMITS,
} from "../../contract/index.js";
import type { FloodShape } from "./floods.js";

/** What `load --scenario capacity` drives, and how. */
export interface CapacityOptions {
  /** the tenants: accounts with tiers and keys with permissions (the `serve --keys` file) */
  tenants: KeysFile;
  /** the share of each bucket every key is driven at (0 < share ≤ 1; default 0.8) */
  share: number;
  /** the whole drive, ramp-up included */
  durationSeconds: number;
  /** the arrival rate grows from 0 to its full value over this long */
  rampSeconds: number;
  /**
   * steady: every tenant at its share throughout; noisy-neighbour: the first account of the
   * file floods far past its limits in the second half while the others keep their rate
   */
  profile: CapacityProfile;
  /** noisy-neighbour: the shapes of the flood, one after another in its half (FLOOD_SHAPES) */
  floods?: readonly FloodShape[];
  /** the storms' requests a second at most (FLOOD_DEFAULTS when absent) */
  floodRate?: number;
  /** the connection hog's idle sockets (FLOOD_DEFAULTS when absent) */
  floodSockets?: number;
  /** this process drives shard `index` of `count` (0-based): whole accounts, never split */
  shard?: Shard;
}

export const CAPACITY_PROFILES = ["steady", "noisy-neighbour"] as const;
export type CapacityProfile = (typeof CAPACITY_PROFILES)[number];

export interface Shard {
  index: number;
  count: number;
}

export const CAPACITY_DEFAULTS = { share: 0.8, durationSeconds: 60, rampShare: 0.1 } as const;

/** The request shapes of the mix; a stream is a Send Message read as server-sent events. */
const SHAPES = ["createAgent", "listAgents", "getAgent", "updateAgent", "deleteAgent", "sendMessage", "streamMessage"] as const;
export type Shape = (typeof SHAPES)[number];

export const endpointOfShape = (shape: Shape): EndpointId => (shape === "streamMessage" ? "sendMessage" : shape);

export interface TenantKey {
  key: string;
  /** its place in the keys file: how findings name it (never by the key) */
  index: number;
  account: string;
  permissions: readonly Permission[];
}

export interface TenantAccount {
  id: string;
  tierLimit: number;
  messageQuota: number | null;
  keys: TenantKey[];
}

/** The accounts of a keys file, each with its keys in file order. */
export function tenantsOf(file: KeysFile): TenantAccount[] {
  const accounts = new Map<string, TenantAccount>(
    file.accounts.map((a) => [a.id, { id: a.id, tierLimit: a.tierLimit, messageQuota: a.messageQuota, keys: [] }]),
  );
  file.keys.forEach((k, index) => {
    accounts.get(k.account)?.keys.push({ key: k.key, index, account: k.account, permissions: k.permissions });
  });
  return [...accounts.values()].filter((a) => a.keys.length > 0);
}

/**
 * The accounts shard `index` of `count` drives: every count-th account of the file. An
 * account's keys stay together (they share its tier and its agents' buckets, PROFILE §7), so
 * every per-key and per-account verdict is exact in the one shard that holds it.
 */
export function accountsOfShard(accounts: readonly TenantAccount[], shard: Shard | undefined): TenantAccount[] {
  if (!shard) return [...accounts];
  return accounts.filter((_, i) => i % shard.count === shard.index);
}

/** One steady stream of arrivals: a key, a request shape, a rate. */
export interface ArrivalStream {
  key: TenantKey;
  shape: Shape;
  /** arrivals per second once the ramp is over */
  perSecond: number;
  /** the agent a Get, Update or message addresses: the key's own, or one of its account */
  agentOwner?: TenantKey;
}

const can = (key: TenantKey, permission: Permission) => key.permissions.includes(permission);

/**
 * The arrival streams of one account: each key at `share` of each of its buckets (PROFILE §7:
 * per key and endpoint; messages per agent, shared by the keys that message it), all scaled
 * down together when their sum would pass `share` of the account's tier. A key creates and
 * deletes only when it may do both (it deletes what it created); an account with a message
 * quota sends no messages (a spent quota is a 429 of its own, PROFILE §7 Quota).
 */
export function streamsOf(account: TenantAccount, share: number, windowSeconds: number): ArrivalStream[] {
  const owners = account.keys.filter((k) => can(k, ENDPOINTS.createAgent.permission));
  const ownerOf = (k: TenantKey) => (owners.includes(k) ? k : owners[0]);
  const perWindow = (size: number) => (share * size) / windowSeconds;
  const streams: ArrivalStream[] = [];
  const messagers = new Map<TenantKey, TenantKey[]>();
  for (const key of account.keys) {
    const owner = ownerOf(key);
    const add = (shape: Shape, perSecond: number, agentOwner?: TenantKey) =>
      streams.push({ key, shape, perSecond, ...(agentOwner ? { agentOwner } : {}) });
    const bucketOf = (endpoint: Exclude<EndpointId, "sendMessage">) => RATE_LIMITS.perKeyEndpoint[endpoint];
    if (can(key, ENDPOINTS.createAgent.permission) && can(key, ENDPOINTS.deleteAgent.permission)) {
      add("createAgent", perWindow(bucketOf("createAgent")));
      add("deleteAgent", perWindow(Math.min(bucketOf("createAgent"), bucketOf("deleteAgent"))));
    }
    if (can(key, ENDPOINTS.listAgents.permission)) add("listAgents", perWindow(bucketOf("listAgents")));
    if (owner && can(key, ENDPOINTS.getAgent.permission)) add("getAgent", perWindow(bucketOf("getAgent")), owner);
    if (owner && can(key, ENDPOINTS.updateAgent.permission)) add("updateAgent", perWindow(bucketOf("updateAgent")), owner);
    if (owner && account.messageQuota === null && can(key, ENDPOINTS.sendMessage.permission))
      messagers.set(owner, [...(messagers.get(owner) ?? []), key]);
  }
  // an agent's message bucket is shared by every key that messages it: half JSON, half streams
  for (const [owner, keys] of messagers)
    for (const key of keys) {
      const perSecond = perWindow(RATE_LIMITS.perAgentMessages) / keys.length / 2;
      streams.push({ key, shape: "sendMessage", perSecond, agentOwner: owner });
      streams.push({ key, shape: "streamMessage", perSecond, agentOwner: owner });
    }
  const total = streams.reduce((n, s) => n + s.perSecond, 0);
  const scale = Math.min(1, perWindow(account.tierLimit) / Math.max(total, Number.MIN_VALUE));
  return streams.map((s) => ({ ...s, perSecond: s.perSecond * scale }));
}

/**
 * The time (ms after the drive starts) of a stream's n-th arrival (n from 0), evenly spaced
 * at `perSecond` after a linear ramp from 0 over `rampMs`, shifted by `phase` (0 ≤ phase < 1)
 * of one interval: in any window of W seconds a stream sends at most ⌈rate·W⌉ requests.
 */
export function arrivalAt(n: number, perSecond: number, rampMs: number, phase: number): number {
  const perMs = perSecond / 1000;
  const k = n + phase;
  const inRamp = (perMs * rampMs) / 2;
  if (k <= inRamp && rampMs > 0) return Math.sqrt((2 * rampMs * k) / perMs);
  return rampMs + (k - inRamp) / perMs;
}

/**
 * A tenants file for trying capacity out (tests, the benchmark, docs): `accounts` accounts of
 * `tier`, each with `keysPerAccount` fresh keys — every one with all four permissions but the
 * last of each account, read-only (a reader among the writers).
 */
export function exampleTenants(accounts: number, keysPerAccount: number, tier: number): KeysFile {
  const file: KeysFile = { accounts: [], keys: [] };
  for (let a = 0; a < accounts; a++) {
    const account = `acct_tenant_${a}`;
    file.accounts.push({ id: account, tierLimit: tier, messageQuota: null });
    for (let k = 0; k < keysPerAccount; k++)
      file.keys.push({
        key: newApiKey(),
        account,
        permissions: k === keysPerAccount - 1 && k > 0 ? ["agents:read"] : [...PERMISSIONS],
      });
  }
  return file;
}
