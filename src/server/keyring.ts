import { hash } from "node:crypto";
import type { AccountConfig, KeysFile, Permission } from "../contract/index.js";

export interface Principal {
  /** SHA-256 of the key, hex: the only form in which the server keeps a key (PROFILE §6) */
  keyHash: string;
  account: AccountConfig;
  permissions: ReadonlySet<Permission>;
}

/**
 * One-shot (a quarter of createHash's cost) and binary (no hex text to make, and a map key half
 * as long): it runs on every request, and the reference must not bound a load run (`npm run bench`).
 * The hex form is made once per key, for Principal.
 */
const sha256 = (value: string) => hash("sha256", value, "binary");

/** Keys by hash; the plaintext is dropped as soon as it is hashed. */
export class KeyRing {
  private readonly byHash = new Map<string, Principal>();

  constructor(file: KeysFile) {
    const accounts = new Map(file.accounts.map((a) => [a.id, a]));
    for (const k of file.keys) {
      const account = accounts.get(k.account);
      // Stryker disable next-line StringLiteral: a start-up error's text (the keys file is validated before): no HTTP answer carries it
      if (!account) throw new Error(`key for unknown account ${k.account}`);
      const digest = sha256(k.key);
      const keyHash = Buffer.from(digest, "binary").toString("hex");
      this.byHash.set(digest, { keyHash, account, permissions: new Set(k.permissions) });
    }
  }

  lookup(presented: string): Principal | undefined {
    return this.byHash.get(sha256(presented));
  }
}
