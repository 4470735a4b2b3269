import { randomBytes } from "node:crypto";
import { type KeysFile, keysFileSchema, PERMISSIONS } from "../contract/index.js";

/**
 * Accounts for a reference server started without any: one account whose tier limit is high
 * enough that the per-account bucket never masks the bucket under test, and one key with
 * every permission, made fresh for each start.
 */
export function defaultReferenceKeys(): KeysFile {
  return keysFileSchema.parse({
    accounts: [{ id: "acct_default", tierLimit: 1000, messageQuota: null }],
    keys: [{ key: `ak_${randomBytes(24).toString("base64url")}`, account: "acct_default", permissions: [...PERMISSIONS] }],
  });
}
