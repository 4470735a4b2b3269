export * from "./findings.js";
export * from "./html.js";
export * from "./json.js";
export * from "./junit.js";
export * from "./model.js";
export * from "./redact.js";
export * from "./terminal.js";
export * from "./write.js";
