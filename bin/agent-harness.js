#!/usr/bin/env node
// The installed package runs the JavaScript compiled into dist/ (scripts/build-package.mjs). A
// checkout, which has the TypeScript sources, runs them through tsx, so it needs no build step
// and never runs a stale dist/.
import { existsSync } from "node:fs";

const source = new URL("../src/cli/main.ts", import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import("../dist/src/cli/main.js"));
}
process.exitCode = await main(process.argv.slice(2));
