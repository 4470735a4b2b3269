export * from "./burst.js";
export * from "./context.js";
export * from "./define.js";
export * from "./recorder.js";
export * from "./requests.js";
export * from "./run.js";
export * from "./scenarios.js";
export * from "./thresholds.js";
