import type { Scenario } from "./define.js";
import { BUCKET_BURSTS } from "./scenarios/bucket-bursts.js";
import { CAPACITY } from "./scenarios/capacity.js";
import { CONCURRENCY_BURSTS } from "./scenarios/concurrency-bursts.js";
import { LINEARIZABLE_HISTORY } from "./scenarios/linearizable-history.js";
import { QUOTA_HEADERS } from "./scenarios/quota-headers.js";
import { SLOT_RELEASE } from "./scenarios/slot-release.js";
import { STREAMS_AT_BUDGET } from "./scenarios/streams-at-budget.js";
import { THROUGHPUT } from "./scenarios/throughput.js";
import { TIER_MIXED } from "./scenarios/tier-mixed.js";

/**
 * Every load scenario, in the order `agent-harness load` runs them. A scenario is one file in
 * src/load/scenarios/ (defineScenario: its metadata beside its body), listed here once; a quick
 * one (quickGroup) also runs from suites/load/quick-<group>.test.ts.
 */
export const SCENARIOS: readonly Scenario[] = [
  ...BUCKET_BURSTS,
  TIER_MIXED,
  CONCURRENCY_BURSTS,
  LINEARIZABLE_HISTORY,
  SLOT_RELEASE,
  QUOTA_HEADERS,
  THROUGHPUT,
  STREAMS_AT_BUDGET,
  CAPACITY,
];

export const SCENARIO_IDS = SCENARIOS.map((s) => s.id);
