import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, test } from "vitest";
import { allowedCpus, CoreWatch, claimServiceCores, listeningProcesses, onCpus, parseCpuList, splitCores } from "./cores.js";
import { EMBEDDED_DEFAULTS, startReferenceTarget } from "./harness-target.js";

describe("cores of its own for a reference started apart", () => {
  test("the kernel's CPU lists read as the CPUs they name", () => {
    expect(parseCpuList("0")).toEqual([0]);
    expect(parseCpuList("0-2,5")).toEqual([0, 1, 2, 5]);
    expect(parseCpuList("1,3-4")).toEqual([1, 3, 4]);
    expect(parseCpuList("1,1")).toEqual([1]);
    for (const bad of ["", "x", "3-1", "1,", "0-4294967295", "-1"]) expect(parseCpuList(bad), bad).toBeUndefined();
  });

  test("the split gives the service the upper half and the generator the rest, none shared", () => {
    const mine = allowedCpus();
    const split = splitCores();
    if (process.platform !== "linux" || !mine || mine.length < 2) {
      expect(split).toBeUndefined();
      return;
    }
    expect(split?.service.length).toBeGreaterThanOrEqual(1);
    expect(split?.generator.length).toBeGreaterThanOrEqual(split?.service.length ?? 0);
    expect([...(split?.generator ?? []), ...(split?.service ?? [])]).toEqual(mine);
  });

  test("what else ran on the service's cores is their busy time less the service's own", () => {
    const watch = new CoreWatch([1], [1]);
    // 2 s of one core: 200 ticks; the core was busy 150, the service 120 of them: 30 ticks of others'
    const share = watch.otherShare(
      { at: 0, busyTicks: 1000, serviceTicks: 500 },
      { at: 2000, busyTicks: 1150, serviceTicks: 620 },
    );
    expect(share).toBeCloseTo(0.15, 5);
    // and the service's own share: 120 of the 200 ticks
    expect(
      watch.ownShare({ at: 0, busyTicks: 1000, serviceTicks: 500 }, { at: 2000, busyTicks: 1150, serviceTicks: 620 }),
    ).toBeCloseTo(0.6, 5);
    // the service's own time is never counted as others' (rounding of the two counters apart)
    expect(watch.otherShare({ at: 0, busyTicks: 0, serviceTicks: 0 }, { at: 1000, busyTicks: 50, serviceTicks: 52 })).toBe(0);
  });

  test("a reference started apart runs on its CPUs, this process on the others until it stops", async () => {
    const before = allowedCpus();
    const split = splitCores();
    const { target, stop } = await startReferenceTarget(
      "embedded",
      { ...EMBEDDED_DEFAULTS, workers: 1 },
      { runPrefix: "ah-cores-", ledgerFile: "/dev/null", seed: 1 },
      true,
    );
    try {
      expect(target.ownProcess).toBe(true);
      if (!split) {
        expect(target.ownCores).toBeUndefined();
        return;
      }
      expect(target.ownCores?.cpus).toEqual(split.service);
      expect(allowedCpus(target.ownCores?.pids[0] ?? 0)).toEqual(split.service);
      expect(allowedCpus()).toEqual(split.generator);
      // a reading of its cores names the serve process's own time
      const watch = new CoreWatch(split.service, target.ownCores?.pids ?? []);
      expect(watch.read()?.serviceTicks).toBeGreaterThan(0);
    } finally {
      await stop();
    }
    expect(allowedCpus()).toEqual(before);
  }, 60_000);
});

/** A process of its own listening on a free loopback port (on `cpus` when given): its pid, port and a stop. */
async function listener(cpus?: readonly number[]): Promise<{ child: ChildProcess; port: number; stop: () => Promise<void> }> {
  const script = 'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => console.log(s.address().port));';
  const [command, args] = onCpus(cpus, process.execPath, ["-e", script]);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const [chunk] = (await once(child.stdout!, "data")) as [Buffer];
  return {
    child,
    port: Number(chunk.toString().trim()),
    stop: async () => {
      const exited = once(child, "exit");
      child.kill();
      await exited;
    },
  };
}

describe("a deployment on this machine named by --service-cores", () => {
  const split = splitCores();

  test("the process listening on a port is found by it, never this one", async () => {
    const server = await listener();
    try {
      expect(listeningProcesses(server.port)).toEqual(process.platform === "linux" ? [server.child.pid] : []);
    } finally {
      await server.stop();
    }
    expect(listeningProcesses(server.port)).toEqual([]);
  });

  test.runIf(process.platform === "linux")(
    "a listening process's children are the service's too (a cluster's workers)",
    async () => {
      const script =
        'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => { const c = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }); console.log(s.address().port + " " + c.pid); process.on("SIGTERM", () => { c.kill(); process.exit(0); }); });';
      const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      const [chunk] = (await once(child.stdout!, "data")) as [Buffer];
      const [port, worker] = chunk.toString().trim().split(" ").map(Number);
      try {
        expect(listeningProcesses(port!).sort()).toEqual([child.pid, worker].sort());
      } finally {
        const exited = once(child, "exit");
        child.kill();
        await exited;
      }
    },
  );

  test.runIf(split)("a service pinned to the CPUs named: claimed, this process on the others until released", async () => {
    const before = allowedCpus();
    const server = await listener(split!.service);
    try {
      const claim = claimServiceCores(`http://127.0.0.1:${server.port}/v1`, split!.service);
      if (typeof claim === "string") throw new Error(claim);
      expect(claim.pids).toEqual([server.child.pid]);
      expect(allowedCpus()).toEqual(before?.filter((cpu) => !split!.service.includes(cpu)));
      claim.release();
      expect(allowedCpus()).toEqual(before);
    } finally {
      await server.stop();
    }
  });

  test.runIf(split)(
    "a service that may run elsewhere, CPUs that leave the harness none, or no service: a line saying why",
    async () => {
      const server = await listener();
      try {
        const url = `http://127.0.0.1:${server.port}/v1`;
        expect(claimServiceCores(url, split!.service)).toMatch(/may run on CPUs .*; start the service under taskset -c/);
        expect(claimServiceCores(url, allowedCpus()!)).toMatch(/leaves the harness no CPU of its own/);
      } finally {
        await server.stop();
      }
      expect(claimServiceCores(`http://127.0.0.1:${server.port}/v1`, split!.service)).toMatch(/no process of this machine/);
    },
  );
});
