import { type KeysFile, newApiKey, PERMISSIONS } from "../../../src/contract/index.js";

/** The key roles a full verification takes (verify --help): main, read-only, another account, a quota account. */
export interface AltKeys {
  main: string;
  readOnly: string;
  other: string;
  quota: string;
}

/** A keys file (serve's --keys format) with the four roles; the quota account has `quota` messages. */
export function altKeysFile(tierLimit: number, quota = 3): { keys: AltKeys; file: KeysFile } {
  const keys: AltKeys = { main: newApiKey(), readOnly: newApiKey(), other: newApiKey(), quota: newApiKey() };
  const all = [...PERMISSIONS];
  return {
    keys,
    file: {
      accounts: [
        { id: "main", tierLimit, messageQuota: null },
        { id: "other", tierLimit, messageQuota: null },
        { id: "quota", tierLimit, messageQuota: quota },
      ],
      keys: [
        { key: keys.main, account: "main", permissions: all },
        { key: keys.readOnly, account: "main", permissions: ["agents:read"] },
        { key: keys.other, account: "other", permissions: all },
        { key: keys.quota, account: "quota", permissions: all },
      ],
    },
  };
}
