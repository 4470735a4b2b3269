import type { CapacityOptions } from "./capacity/plan.js";

/** What `agent-harness load` gives the scenarios besides the target: the tenants and drive of capacity. */
export interface LoadOptions {
  capacity?: CapacityOptions;
}
