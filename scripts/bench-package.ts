// The package as users meet it, measured: tarball size, install time, and the start-up of
// `agent-harness --help` from the installed package and from this checkout (median of several).
// A script, not a timed test: the figures go to docs/package.md with this command.
//
//   npm run bench:package [-- --runs 9] [-- --json]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { installTarball, packTarball, REPO_ROOT } from "../src/package/pack.js";

const USAGE = `usage: npm run bench:package [-- --runs N] [-- --json]
  --runs N   start-ups timed per side (default 9); the median is reported
  --json     print the figures as JSON
Packs the checkout, installs the tarball into a temporary folder through the npm cache, and times
'agent-harness --help' there (node bin, and npx) and in the checkout (node bin, its compiled tree).`;

const { values } = parseArgs({
  options: { runs: { type: "string", default: "9" }, json: { type: "boolean", default: false }, help: { type: "boolean" } },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`bench-package: --runs must be a positive integer\n${USAGE}`);
  process.exit(2);
}

/** Wall time of `command args` in ms, from spawn to exit; it must exit 0. */
function timed(command: string, args: string[], cwd: string): number {
  const started = performance.now();
  const result = spawnSync(command, args, { cwd, stdio: "ignore" });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}`);
  return ms;
}

/** One untimed run to warm the file cache, then the median of `runs`. */
function medianStartup(command: string, args: string[], cwd: string): { medianMs: number; minMs: number; maxMs: number } {
  timed(command, args, cwd);
  const times = Array.from({ length: runs }, () => timed(command, args, cwd)).sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms);
  return {
    medianMs: round(times[Math.floor(times.length / 2)] ?? 0),
    minMs: round(times[0] ?? 0),
    maxMs: round(times.at(-1) ?? 0),
  };
}

const work = mkdtempSync(join(tmpdir(), "agent-harness-bench-"));
try {
  const packed = await packTarball(work);
  const installed = await installTarball(packed.path);
  try {
    const figures = {
      node: process.version,
      npm: execFileSync("npm", ["--version"], { encoding: "utf8" }).trim(),
      tarballBytes: packed.size,
      unpackedBytes: packed.unpackedSize,
      files: packed.files.length,
      installMs: installed.installMs,
      runs,
      helpInstalled: medianStartup(process.execPath, [installed.bin, "--help"], installed.dir),
      helpInstalledNpx: medianStartup("npx", ["--no-install", "agent-harness", "--help"], installed.dir),
      helpCheckout: medianStartup(process.execPath, [join(REPO_ROOT, "bin/agent-harness.js"), "--help"], REPO_ROOT),
    };
    if (values.json) console.log(JSON.stringify(figures, null, 2));
    else {
      const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
      const startup = (s: { medianMs: number; minMs: number; maxMs: number }) =>
        `${s.medianMs} ms median (${s.minMs}–${s.maxMs} ms)`;
      console.log(
        [
          `node ${figures.node}, npm ${figures.npm}, ${runs} runs per start-up`,
          `tarball            ${kib(figures.tarballBytes)} (${kib(figures.unpackedBytes)} unpacked, ${figures.files} files)`,
          `install (npm i)    ${(figures.installMs / 1000).toFixed(1)} s into an empty folder, npm cache as found`,
          `--help installed   ${startup(figures.helpInstalled)}  node node_modules/agent-harness/bin/agent-harness.js`,
          `--help via npx     ${startup(figures.helpInstalledNpx)}  npx agent-harness`,
          `--help checkout    ${startup(figures.helpCheckout)}  node bin/agent-harness.js (compiled tree)`,
        ].join("\n"),
      );
    }
  } finally {
    rmSync(installed.dir, { recursive: true, force: true });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
