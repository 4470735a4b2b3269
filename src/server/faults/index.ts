import type { FastifyInstance } from "fastify";
import type { ServerContext } from "../context.js";
import { AGENTS_FAULTS } from "./agents.js";
import { AUTH_FAULTS } from "./auth.js";
import { CAPACITY_FAULTS } from "./capacity.js";
import { CONCURRENCY_FAULTS } from "./concurrency.js";
import { LIMITS_FAULTS } from "./limits.js";
import { LOAD_FAULTS } from "./load.js";
import { MESSAGES_FAULTS } from "./messages.js";
import { PROPERTY_FAULTS } from "./property.js";
import { RARE_PATH_FAULTS } from "./rare-paths.js";
import { RECORD_FAULTS } from "./record.js";
import { ROUTING_FAULTS } from "./routing.js";
import type { Fault, FaultRecord } from "./tools.js";
import { TRANSITION_FAULTS } from "./transitions.js";
import { TRANSPORT_FAULTS } from "./transport.js";

/**
 * Injected defects: each breaks one PROFILE clause, so the harness can prove it catches it.
 * They wrap the server from outside (hooks, the server's FaultSeam, wrapped public methods of
 * the store, key ring and limiter) and never appear in its normal code paths. One file per
 * area; a new area is one file and one line in AREAS.
 */
const AREAS: readonly FaultRecord[] = [
  TRANSPORT_FAULTS,
  RECORD_FAULTS,
  AGENTS_FAULTS,
  MESSAGES_FAULTS,
  AUTH_FAULTS,
  LIMITS_FAULTS,
  ROUTING_FAULTS,
  LOAD_FAULTS,
  CAPACITY_FAULTS,
  CONCURRENCY_FAULTS,
  PROPERTY_FAULTS,
  RARE_PATH_FAULTS,
  TRANSITION_FAULTS,
];

function merge(areas: readonly FaultRecord[]): FaultRecord {
  const all: Record<string, Fault> = {};
  for (const area of areas)
    for (const [name, fault] of Object.entries(area)) {
      if (name in all) throw new Error(`fault "${name}" is defined twice`);
      all[name] = fault;
    }
  return all;
}

export const FAULTS: FaultRecord = merge(AREAS);

/** The fault names, sorted: what `--fault` accepts. */
export const FAULT_NAMES: readonly string[] = Object.keys(FAULTS).sort();

export function installFaults(app: FastifyInstance, ctx: ServerContext, names: readonly string[]): void {
  for (const name of names) {
    const fault = FAULTS[name];
    if (!fault) throw new Error(`unknown fault "${name}"; known: ${FAULT_NAMES.join(", ") || "(none)"}`);
    fault.install(app, ctx);
  }
}
