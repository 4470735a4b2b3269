import { PERMISSIONS, type Permission } from "../contract/index.js";

/**
 * One row per role a key plays in a run: where the suites find it (its `HarnessTarget.keys`
 * field, the row's name), how a person gives it (flag and env var), what a curl line and a replay
 * read it from, what it must hold (PROFILE §6 permissions) and how a report names it. The CLI's
 * options, the key check, the suites' skip notes, the curl lines, replays and the report's key
 * list are all derived from this table.
 */
export interface KeyRole {
  /** the `verify`/`load` flag that gives the key, without `--`; none for a role only a started reference has */
  flag?: string;
  /** the env var read when the flag is absent; a curl line and a replay read the key from it too */
  env?: string;
  /** a role without a flag: whose variable a curl line reads it from (on a deployment that role's key stands in) */
  standsIn?: KeyRoleName;
  /** PROFILE §6: the permissions the key holds (a reference the harness starts grants exactly these) */
  permissions: readonly Permission[];
  /** the account the key belongs to, as the suites' clients name it: `main`, or an account of its own */
  account: string;
  /** how a report names the role */
  label: string;
  /** the account has a small message quota (PROFILE §7 Quota): a reference the harness starts gives it its plan's */
  smallQuota?: boolean;
  /**
   * a reference the harness starts gives every key set the same account and key for this role: no
   * check makes anything in it, so parallel workers cannot see each other there
   */
  sharedBySets?: boolean;
  /** what the key enables: help text of its flag */
  help?: string;
}

/** Every `HarnessTarget.keys` field but `mainKeys` (the main role's keys, listed), in the table's order. */
export const KEY_ROLE_NAMES = [
  "main",
  "readOnly",
  "otherAccount",
  "quota",
  "agentless",
  "load",
  "tierBurst",
  "loadQuota",
  "propertyKeys",
] as const;
export type KeyRoleName = (typeof KEY_ROLE_NAMES)[number];

export const KEY_ROLES = {
  main: {
    flag: "api-key",
    env: "AGENT_API_KEY",
    permissions: PERMISSIONS,
    account: "main",
    label: "main",
    help: "key with all four permissions (required with --base-url); repeat it with more keys of the same account to spread the per-key buckets",
  },
  readOnly: {
    flag: "read-only-key",
    env: "AGENT_API_READ_ONLY_KEY",
    permissions: ["agents:read"],
    account: "main",
    label: "read-only",
    help: "key with agents:read only: enables the 403 checks",
  },
  otherAccount: {
    flag: "other-account-key",
    env: "AGENT_API_OTHER_ACCOUNT_KEY",
    permissions: PERMISSIONS,
    account: "other",
    label: "other-account",
    help: "key of a second account: enables the isolation checks",
  },
  quota: {
    flag: "quota-key",
    env: "AGENT_API_QUOTA_KEY",
    permissions: PERMISSIONS,
    account: "quota",
    label: "quota",
    smallQuota: true,
    help: "key of an account with a small message quota: enables the quota check (with --reference-faults)",
  },
  // a deployment is given no key of an account without agents: its other account's stands in
  // an account without agents, read with unknown ids only: one for all of a run's key sets
  agentless: { standsIn: "otherAccount", permissions: PERMISSIONS, account: "agentless", label: "agentless", sharedBySets: true },
  load: {
    flag: "load-key",
    env: "AGENT_API_LOAD_KEY",
    permissions: PERMISSIONS,
    account: "load",
    label: "load",
    help: "key of an account of its own with room for throughput (an enterprise tier): the load scenarios' bursts and throughput (default: the main key, with --tier)",
  },
  tierBurst: {
    flag: "tier-burst-key",
    env: "AGENT_API_TIER_BURST_KEY",
    permissions: PERMISSIONS,
    account: "tier-burst",
    label: "tier-burst",
    help: "key of an account of its own whose tier is below the Get, List and Update buckets together (e.g. 100): enables the tier-mixed load scenario",
  },
  loadQuota: { standsIn: "quota", permissions: PERMISSIONS, account: "load-quota", label: "load-quota", smallQuota: true },
  propertyKeys: { standsIn: "main", permissions: PERMISSIONS, account: "property", label: "property" },
} as const satisfies Record<KeyRoleName, KeyRole>;

/** The roles a person gives with a flag, in the table's order. */
export type FlaggedRole = { [R in KeyRoleName]: (typeof KEY_ROLES)[R] extends { flag: string } ? R : never }[KeyRoleName];
export const FLAGGED_ROLES = KEY_ROLE_NAMES.filter((role): role is FlaggedRole => "flag" in KEY_ROLES[role]);

/** `--read-only-key`: the flag as typed. */
export const flagOf = (role: FlaggedRole): string => `--${KEY_ROLES[role].flag}`;

/**
 * What a check that needs the role's key says when it is skipped: the flags that enable it. A
 * small-quota account's key serves a reference-compatible deployment only (PROFILE §10), so it
 * names --reference-faults too: a key given without it is not used, and the skip says why.
 */
export const needsKey = (role: FlaggedRole): string => {
  const row: KeyRole = KEY_ROLES[role];
  return `needs ${flagOf(role)}${row.smallQuota ? " with --reference-faults" : ""}`;
};

/** The variable a curl line and a replay read the role's key from: a replay sends the key the check sent. */
export function keyVariable(role: KeyRoleName): string {
  const row: KeyRole = KEY_ROLES[role];
  return row.env ?? keyVariable(row.standsIn ?? "main");
}

/** The env vars of every role given by flag: what a replay's judge knows as keys. */
export const KEY_VARIABLES: readonly string[] = FLAGGED_ROLES.map((role) => KEY_ROLES[role].env);

/** How a report names a role (a `HarnessTarget.keys` field); a name the table does not know stays as it is. */
export function roleLabel(role: string): string {
  const known = KEY_ROLE_NAMES.find((name) => name === role);
  return known ? KEY_ROLES[known].label : role;
}

/** A key set as the table reads it: each role's key (or keys), and the main role's keys listed. */
export type KeySet = { [R in KeyRoleName]?: string | readonly string[] } & { mainKeys?: readonly string[] };

/** The keys a set holds for `role`: the main role's are `mainKeys` when listed, else `main`. */
export function keysOfRole(keys: KeySet, role: KeyRoleName): readonly string[] {
  const value = role === "main" ? (keys.mainKeys ?? keys.main) : keys[role];
  return typeof value === "string" ? [value] : (value ?? []);
}

/** Every key a set holds, role by role in the table's order (main keys first), each once. */
export function keysOfSet(keys: KeySet): string[] {
  return [...new Set(KEY_ROLE_NAMES.flatMap((role) => keysOfRole(keys, role)))];
}

/** The role `key` plays in a key set, in the table's order (the main role first); undefined when none. */
export function roleOfKey(keys: KeySet, key: string): KeyRoleName | undefined {
  return KEY_ROLE_NAMES.find((role) => keysOfRole(keys, role).includes(key));
}
