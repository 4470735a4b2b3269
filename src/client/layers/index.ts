export * from "./dispatch.js";
export * from "./pacing.js";
export * from "./recording.js";
export * from "./redaction.js";
export * from "./refusals.js";
export * from "./retrying.js";
export * from "./transport.js";
