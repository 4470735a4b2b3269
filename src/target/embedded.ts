import { randomBytes } from "node:crypto";
import { type KeysFile, keysFileSchema, PERMISSIONS } from "../contract/index.js";
import { buildServer } from "../server/app.js";
import type { ReferenceServerOptions, StartedReference } from "./types.js";

/** Accounts for an embedded run when none are given: roomy enough for a full verification. */
export function defaultReferenceKeys(): KeysFile {
  return keysFileSchema.parse({
    accounts: [{ id: "acct_default", tierLimit: 1000, messageQuota: null }],
    keys: [{ key: `ak_${randomBytes(24).toString("base64url")}`, account: "acct_default", permissions: [...PERMISSIONS] }],
  });
}

/** The reference server in this process, on 127.0.0.1 and a free port unless told otherwise. */
export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<StartedReference> {
  const keys = options.keys ? keysFileSchema.parse(options.keys) : defaultReferenceKeys();
  const { app } = buildServer({
    keys,
    windowSeconds: options.windowSeconds,
    messageTimeoutSeconds: options.messageTimeoutSeconds,
    faults: options.faults,
  });
  const host = options.host ?? "127.0.0.1";
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return { baseUrl: `http://${host}:${port}/v1`, keys, close: () => app.close() };
}

export { runServer } from "../server/main.js";
