#!/usr/bin/env node
// Bundles the reference server into one self-contained ESM file, so the container image needs
// nothing but the node binary and this file (no node_modules, no registry).
//
//   node scripts/bundle-server.mjs [--entry src/cli/serve.ts] [--outfile .build/server/server.mjs]
import { existsSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const { values } = parseArgs({
  options: {
    entry: { type: "string", default: "src/cli/serve.ts" },
    outfile: { type: "string", default: ".build/server/server.mjs" },
  },
});
const entry = resolve(repoRoot, values.entry);
const outfile = resolve(repoRoot, values.outfile);

if (!existsSync(entry)) {
  console.error(`bundle-server: entry ${relative(repoRoot, entry)} does not exist`);
  process.exit(1);
}

// Bundled CommonJS dependencies call `require` for node built-ins; an ES module has none.
const banner = [
  'import { createRequire as __bundleCreateRequire } from "node:module";',
  "const require = __bundleCreateRequire(import.meta.url);",
].join("\n");

const started = performance.now();
await build({
  absWorkingDir: repoRoot,
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Every dependency goes into the bundle: the image has no node_modules.
  packages: "bundle",
  banner: { js: banner },
  // keepNames would wrap every function the bundle makes in a defineProperty call: fastify makes
  // closures per request, and the calls cost a fifth of the container's CPU per GET (`npm run bench`).
  // Nothing reads a function's name (errors carry their own names).
  keepNames: false,
  legalComments: "none",
  logLevel: "warning",
});
const ms = Math.round(performance.now() - started);
const kib = Math.round(statSync(outfile).size / 1024);
console.log(`bundle-server: ${relative(repoRoot, entry)} → ${relative(repoRoot, outfile)} (${kib} KiB) in ${ms} ms`);
