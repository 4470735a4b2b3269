// CPU of one verify run as a process of its own against in a warm CLI (suites/meta/warm-runner.mjs),
// interleaved: `node scripts/bench-warm-runner.mjs [rounds]`. Needs the compiled tree the meta suite
// uses: `node scripts/build-package.mjs --outdir .build/compiled-meta` first. The CPU counted is the
// process's and its reaped children's (the run's vitest workers), from /proc.
import { execFileSync, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const rounds = Number(process.argv[2] ?? 5);
const argv = ["verify", "--seed", "1", "--fault", "key-in-header", "--sections", "auth.no-key-echo", "--suites", "functional"];
argv.push("--workers", "1", "--report-dir", join(tmpdir(), "agent-harness-bench-warm"));
const env = { ...process.env, NO_COLOR: "1", AGENT_HARNESS_COMPILED: ".build/compiled-meta" };

/** user + system CPU seconds of a process and of its children it has reaped */
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
};

function own() {
  let timed;
  try {
    timed = execFileSync("/usr/bin/time", ["-f", "%U %S %e", process.execPath, "bin/agent-harness.js", ...argv], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    }).toString();
  } catch (err) {
    timed = err.stderr.toString(); // exit 1: the fault's finding
  }
  const [user, sys, wall] = timed.trim().split("\n").at(-1).split(" ").map(Number);
  return { cpu: user + sys, wall };
}

const runner = fork("suites/meta/warm-runner.mjs", [], { env, stdio: "ignore" });
await new Promise((resolve) => runner.once("message", resolve));
const warm = (id) =>
  new Promise((resolve) => {
    const [cpu, started] = [cpuOf(runner.pid), Date.now()];
    runner.once("message", (m) => resolve({ cpu: cpuOf(runner.pid) - cpu, wall: (Date.now() - started) / 1000, code: m.code }));
    runner.send({ id, argv });
  });
try {
  for (let round = 0; round < rounds; round++) {
    const cold = own();
    const hot = await warm(round);
    console.log(
      `round ${round + 1}: own process ${cold.cpu.toFixed(2)} s CPU, ${cold.wall.toFixed(1)} s wall | warm ${hot.cpu.toFixed(2)} s CPU, ${hot.wall.toFixed(1)} s wall (exit ${hot.code})`,
    );
  }
} finally {
  runner.kill();
}
