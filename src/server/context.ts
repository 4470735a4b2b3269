import type { KeysFile } from "../contract/index.js";
import type { Clock } from "./clock.js";
import { KeyRing, type Principal } from "./keyring.js";
import { ConcurrencyGate, RateLimiter } from "./ratelimit.js";
import { cleanSeam, type FaultSeam } from "./seam.js";
import { AgentStore } from "./store.js";

export interface ServerOptions {
  keys: KeysFile;
  windowSeconds: number;
  messageTimeoutSeconds: number;
  clock: Clock;
  /** heartbeat comment interval on silent streams; PROFILE §5 asks for at most 15 s */
  heartbeatMs: number;
}

/** Everything a route or plugin needs, built once per server. */
export class ServerContext {
  readonly keyRing: KeyRing;
  readonly store: AgentStore;
  readonly limiter: RateLimiter;
  readonly gate = new ConcurrencyGate();
  readonly clock: Clock;
  /** where injected faults install; the clean server leaves it as it is */
  readonly seam: FaultSeam = cleanSeam();
  /** message units spent per account (PROFILE §7 Quota) */
  readonly quotaSpent = new Map<string, number>();

  /** the options without the keys: PROFILE §6 Reference keeps only their SHA-256 (in keyRing) */
  readonly options: Readonly<Omit<ServerOptions, "keys" | "clock">>;

  constructor({ keys, clock, ...options }: ServerOptions) {
    this.keyRing = new KeyRing(keys);
    this.options = options;
    this.clock = clock;
    this.store = new AgentStore(clock);
    this.limiter = new RateLimiter(clock, options.windowSeconds);
  }

  /** Spend one message unit; false when the quota is already spent. */
  spendQuota(principal: Principal): boolean {
    const quota = principal.account.messageQuota;
    const spent = this.quotaSpent.get(principal.account.id) ?? 0;
    if (quota !== null && spent >= quota) return false;
    this.quotaSpent.set(principal.account.id, spent + 1);
    return true;
  }
}

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
    /** the buckets the request was counted in, to describe them again when the answer leaves */
    rateBuckets?: readonly import("./ratelimit.js").RateBucket[];
  }
  interface FastifyContextConfig {
    /** the ENDPOINTS id of the route, for permissions and rate buckets */
    endpoint?: import("../contract/index.js").EndpointId;
    /** no auth, no rate limit (GET /health) */
    public?: boolean;
  }
}
