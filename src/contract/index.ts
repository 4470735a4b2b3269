export * from "./clauses.js";
export * from "./endpoints.js";
export * from "./errors.js";
export * from "./keys.js";
export * from "./limits.js";
export * from "./openapi.js";
export * from "./schemas.js";
export * from "./text.js";
