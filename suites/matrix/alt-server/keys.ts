import { type KeysFile, newApiKey, PERMISSIONS } from "../../../src/contract/index.js";

/**
 * The key roles a full verification takes (verify --help): main, read-only, another account, a
 * quota account, and a small-tier account of its own (--tier-burst-key)
 */
export interface AltKeys {
  main: string;
  readOnly: string;
  other: string;
  quota: string;
  tierBurst: string;
}

/** The small-tier account's tier: the standard tier, as a deployment's --tier-burst-tier may be */
export const TIER_BURST_TIER = 60;

/** A keys file (serve's --keys format) with the four roles; the quota account has `quota` messages. */
export function altKeysFile(tierLimit: number, quota = 3): { keys: AltKeys; file: KeysFile } {
  const keys: AltKeys = {
    main: newApiKey(),
    readOnly: newApiKey(),
    other: newApiKey(),
    quota: newApiKey(),
    tierBurst: newApiKey(),
  };
  const all = [...PERMISSIONS];
  return {
    keys,
    file: {
      accounts: [
        { id: "main", tierLimit, messageQuota: null },
        { id: "other", tierLimit, messageQuota: null },
        { id: "quota", tierLimit, messageQuota: quota },
        { id: "tier-burst", tierLimit: TIER_BURST_TIER, messageQuota: null },
      ],
      keys: [
        { key: keys.main, account: "main", permissions: all },
        { key: keys.readOnly, account: "main", permissions: ["agents:read"] },
        { key: keys.other, account: "other", permissions: all },
        { key: keys.quota, account: "quota", permissions: all },
        { key: keys.tierBurst, account: "tier-burst", permissions: all },
      ],
    },
  };
}
