import { keysFileSchema, singleKeyFile } from "../contract/index.js";
import { buildServer } from "../server/app.js";
import { REFERENCE_TIER, type ReferenceServerOptions, type StartedReference } from "./types.js";

/** The reference server in this process, on 127.0.0.1 and a free port unless told otherwise. */
export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<StartedReference> {
  const keys = options.keys ? keysFileSchema.parse(options.keys) : singleKeyFile(REFERENCE_TIER);
  const { app } = buildServer({
    keys,
    windowSeconds: options.windowSeconds,
    windowStart: options.windowStart,
    messageTimeoutSeconds: options.messageTimeoutSeconds,
    faults: options.faults,
    clockSkewSeconds: options.clockSkewSeconds,
  });
  const host = options.host ?? "127.0.0.1";
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  // an IPv6 literal goes in brackets (RFC 3986)
  const hostInUrl = host.includes(":") ? `[${host}]` : host;
  return { baseUrl: `http://${hostInUrl}:${port}/v1`, keys, close: () => app.close() };
}

export { CAPACITY_FAULTS, FLOOD_FAULTS, MANY_TENANT_FAULTS, MANY_TENANTS } from "../server/faults/capacity.js";
/** The faults only concurrency shows: the load scenarios' concurrency checks catch them. */
export { CONCURRENCY_FAULTS } from "../server/faults/concurrency.js";
/** The injected defects the reference server knows (for the meta suite and --fault help). */
export { FAULTS } from "../server/faults/index.js";
export { LOAD_FAULTS } from "../server/faults/load.js";
/** The faults only the property suites catch: their own meta test. */
export { PROPERTY_FAULTS } from "../server/faults/property.js";
/** The faults that hide where random data rarely goes: the property suites catch them, the functional suite passes them. */
export { RARE_PATH_FAULTS } from "../server/faults/rare-paths.js";
/** The faults on the roads out of error and inactive: only the stateful suite, driving every pair, catches them. */
export { TRANSITION_FAULTS } from "../server/faults/transitions.js";
