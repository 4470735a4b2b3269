import { declareFile } from "../support/declare-file.js";
import { scenarioChecks } from "./support.js";

declareFile({ keys: ["load", "tierBurst", "loadQuota", "quota"], sendsMessages: true, sendsUnpaced: true, emptiesBuckets: true });

/** The load scenarios that take a budget or a throughput profile: `--suites load` and `agent-harness load` only. */
scenarioChecks((s) => s.quickGroup === undefined && !s.tenants);
