import type { FastifyInstance } from "fastify";
import type { ServerContext } from "./context.js";

/**
 * Injected defects: each breaks one PROFILE clause, so the harness can prove it catches it.
 * They wrap the server from outside (hooks, wrapped store and limiter methods) and never
 * appear in its normal code paths.
 */
export interface Fault {
  readonly clause: string;
  readonly description: string;
  install(app: FastifyInstance, ctx: ServerContext): void;
}

export const FAULTS: Readonly<Record<string, Fault>> = {};

export function installFaults(app: FastifyInstance, ctx: ServerContext, names: readonly string[]): void {
  for (const name of names) {
    const fault = FAULTS[name];
    if (!fault) throw new Error(`unknown fault "${name}"; known: ${Object.keys(FAULTS).join(", ") || "(none)"}`);
    fault.install(app, ctx);
  }
}
