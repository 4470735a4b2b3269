import { scenarioChecks } from "./support.js";

/** Quick load scenarios, group 4 (src/load/scenarios.ts `quickGroup`): part of verify's default run. */
scenarioChecks((s) => s.quickGroup === 4);
