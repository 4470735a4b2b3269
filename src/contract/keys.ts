import { randomBytes } from "node:crypto";
import { z } from "zod";
import { PERMISSIONS } from "./endpoints.js";
import { RATE_LIMITS } from "./limits.js";

/**
 * PROFILE §10: what a reference-compatible server takes at start — accounts with their tier
 * limit and message quota, and keys with their account and permissions. The file format of
 * `--keys FILE`.
 */
export const accountConfigSchema = z.strictObject({
  id: z.string().min(1),
  tierLimit: z.number().int().min(1).default(RATE_LIMITS.tiers.standard),
  messageQuota: z.number().int().min(0).nullable().default(null),
});

export const keyConfigSchema = z.strictObject({
  key: z.string().min(1),
  account: z.string().min(1),
  permissions: z.array(z.enum(PERMISSIONS)),
});

export const keysFileSchema = z
  .strictObject({ accounts: z.array(accountConfigSchema).min(1), keys: z.array(keyConfigSchema).min(1) })
  .superRefine((file, ctx) => {
    const accounts = new Set(file.accounts.map((a) => a.id));
    if (accounts.size !== file.accounts.length)
      ctx.addIssue({ code: "custom", path: ["accounts"], message: "account ids must be unique" });
    const keys = new Set<string>();
    file.keys.forEach((k, i) => {
      if (!accounts.has(k.account))
        ctx.addIssue({ code: "custom", path: ["keys", i, "account"], message: `no account "${k.account}"` });
      if (keys.has(k.key)) ctx.addIssue({ code: "custom", path: ["keys", i, "key"], message: "keys must be unique" });
      keys.add(k.key);
    });
  });

export type KeysFile = z.output<typeof keysFileSchema>;
export type KeysFileInput = z.input<typeof keysFileSchema>;
export type AccountConfig = z.output<typeof accountConfigSchema>;

/** A fresh API key, shown once to whoever started the server. */
export const newApiKey = () => `ak_${randomBytes(24).toString("base64url")}`;

/** One account with one fresh all-permission key: what a server started without `--keys` uses. */
export function singleKeyFile(tierLimit: number): KeysFile {
  return {
    accounts: [{ id: "acct_default", tierLimit, messageQuota: null }],
    keys: [{ key: newApiKey(), account: "acct_default", permissions: [...PERMISSIONS] }],
  };
}
