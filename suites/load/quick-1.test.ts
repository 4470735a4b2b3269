import { declareFile } from "../support/declare-file.js";
import { scenarioChecks } from "./support.js";

declareFile({ keys: ["load", "tierBurst", "loadQuota", "quota"], sendsMessages: true, sendsUnpaced: true, emptiesBuckets: true });

/** Quick load scenarios, group 1 (src/load/scenarios.ts `quickGroup`): part of verify's default run. */
scenarioChecks((s) => s.quickGroup === 1);
