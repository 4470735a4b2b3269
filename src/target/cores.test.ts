import { describe, expect, test } from "vitest";
import { allowedCpus, CoreWatch, parseCpuList, splitCores } from "./cores.js";
import { EMBEDDED_DEFAULTS, startReferenceTarget } from "./harness-target.js";

describe("cores of its own for a reference started apart", () => {
  test("the kernel's CPU lists read as the CPUs they name", () => {
    expect(parseCpuList("0")).toEqual([0]);
    expect(parseCpuList("0-2,5")).toEqual([0, 1, 2, 5]);
    expect(parseCpuList("1,3-4")).toEqual([1, 3, 4]);
    expect(parseCpuList("")).toEqual([]);
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
    const watch = new CoreWatch([1], 1);
    // 2 s of one core: 200 ticks; the core was busy 150, the service 120 of them: 30 ticks of others'
    const share = watch.otherShare(
      { at: 0, busyTicks: 1000, serviceTicks: 500 },
      { at: 2000, busyTicks: 1150, serviceTicks: 620 },
    );
    expect(share).toBeCloseTo(0.15, 5);
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
      expect(allowedCpus(target.ownCores?.pid ?? 0)).toEqual(split.service);
      expect(allowedCpus()).toEqual(split.generator);
      // a reading of its cores names the serve process's own time
      const watch = new CoreWatch(split.service, target.ownCores?.pid ?? 0);
      expect(watch.read()?.serviceTicks).toBeGreaterThan(0);
    } finally {
      await stop();
    }
    expect(allowedCpus()).toEqual(before);
  }, 60_000);
});
