import { scenarioChecks } from "./support.js";

/** The load scenarios that take a budget or a throughput profile: `--suites load` and `agent-harness load` only. */
scenarioChecks((s) => s.quickGroup === undefined && !s.tenants);
