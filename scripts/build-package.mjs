#!/usr/bin/env node
// Compiles the harness into dist/ for the npm package: each TypeScript file the CLI runs becomes
// one JavaScript file at the same place under dist/ (dist/src, dist/suites, dist/fixtures), so
// every relative import and file URL keeps working, and vitest runs the suites as plain JS.
// Nothing is bundled: the run-time dependencies stay in node_modules, where vitest finds them.
//
//   node scripts/build-package.mjs            (npm run build:package; npm pack runs it first)
//   node scripts/build-package.mjs --outdir .build/compiled
//                                             (the same tree elsewhere in the checkout, for
//                                             AGENT_HARNESS_COMPILED: see bin/agent-harness.js)
import { cpSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { COMPILE_OPTIONS } from "./compile-options.mjs";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { outdir: { type: "string", default: "dist" } } });
// inside the checkout: the compiled modules find node_modules and package.json above them
const outdir = resolve(repoRoot, values.outdir);
if (
  !outdir.startsWith(`${repoRoot}/`) ||
  /^(src|suites|fixtures|bin|scripts|node_modules)(\/|$)/.test(outdir.slice(repoRoot.length + 1))
) {
  // it is emptied first: never the checkout itself, its sources, or a folder outside it
  console.error(`build-package: --outdir must be a folder of its own inside the checkout, not ${values.outdir}`);
  process.exit(2);
}

/** What `verify`, `load`, `serve`, `judge`, `cleanup` and `openapi` load: no unit test, no meta or container suite. */
const SOURCE_DIRS = ["src", "suites/support", "suites/functional", "suites/property", "suites/load", "fixtures"];
/** unit tests and their helpers sit beside the source (STYLE: layout), and src/package packs the package: they stay out */
const LEFT_OUT = /(?:^src\/.*\.test\.ts|\/test-support[^/]*\.ts|^src\/package\/.*)$/;
/** data files read at run time, copied as they are */
const DATA = ["fixtures/boundaries"];

const started = performance.now();
rmSync(outdir, { recursive: true, force: true });
const filesUnder = (dir) =>
  readdirSync(join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(repoRoot.length + 1));
const entryPoints = SOURCE_DIRS.flatMap(filesUnder)
  .filter((path) => path.endsWith(".ts") && !LEFT_OUT.test(path))
  .sort();
await build({ ...COMPILE_OPTIONS, absWorkingDir: repoRoot, entryPoints, outdir, outbase: "." });
for (const path of DATA) cpSync(join(repoRoot, path), join(outdir, path), { recursive: true });

const files = readdirSync(outdir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
const kib = Math.round(files.reduce((sum, e) => sum + statSync(join(e.parentPath ?? e.path, e.name)).size, 0) / 1024);
const ms = Math.round(performance.now() - started);
console.log(
  `build-package: ${entryPoints.length} modules → ${outdir.slice(repoRoot.length + 1)}/ (${files.length} files, ${kib} KiB) in ${ms} ms`,
);
