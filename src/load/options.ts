import type { CapacityOptions } from "./capacity/plan.js";
import type { LoadRecorder } from "./recorder.js";

/** What `agent-harness load` gives the scenarios besides the target: the tenants and drive of capacity. */
export interface LoadOptions {
  capacity?: CapacityOptions;
  /** `--service-cores`: the CPUs the deployment under test is pinned to on this machine (src/target/cores.ts) */
  serviceCores?: number[];
  /** each scenario's recorder as it starts: live metrics read it while it runs (--out prometheus-rw) */
  onRecorder?: (recorder: LoadRecorder) => void;
  /** more for the terminal's progress line (a long run's rate and errors) */
  progressDetail?: () => string | undefined;
}
