export * from "./burst.js";
export * from "./context.js";
export * from "./recorder.js";
export * from "./run.js";
export * from "./scenarios.js";
export * from "./thresholds.js";
