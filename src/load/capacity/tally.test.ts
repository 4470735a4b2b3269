import { describe, expect, test } from "vitest";
import type { FloodOutcome } from "./floods.js";
import { type CapacitySettings, CapacityTally, capacityFigures, neighboursVerdicts, type Phase } from "./tally.js";

const SETTINGS: CapacitySettings = {
  profile: "noisy-neighbour",
  share: 0.8,
  durationSeconds: 12,
  rampSeconds: 1,
  intervalSeconds: 1,
  tenants: 5,
  keys: 10,
  offeredPerSecond: 120,
  flooder: "acct_0",
};

const STORM: FloodOutcome = {
  shape: "refusal-storm",
  intended: 1500,
  achieved: 1490,
  unit: "req/s",
  refusedPerSecond: 1400,
  seconds: 0.9,
  spanSeconds: 1.5,
  loadAverage: 1,
  otherOnServiceCores: 0,
  sent: 1341,
};

/**
 * A noisy-neighbour tally: the others calm at 2–5 ms; under the storm `during` (ms), 200 answers
 * each, every one sent on time.
 */
function tally(during: (i: number) => number, flood: FloodOutcome = STORM): CapacityTally {
  const t = new CapacityTally();
  const fill = (phase: Phase, ms: (i: number) => number) => {
    const p = t.phase(phase);
    for (let i = 0; i < 200; i++) p.latency.recordValue(Math.round(ms(i) * 1000));
    p.sent = 200;
  };
  fill("calm", (i) => 2 + (i % 4));
  fill(flood.shape, during);
  t.floods.push(flood);
  return t;
}

const judge = (t: CapacityTally, service: CapacitySettings["service"]) => {
  const n = capacityFigures(t, { ...SETTINGS, ...(service ? { service } : {}) }).neighbours;
  if (!n) throw new Error("no noisy-neighbour figures");
  return { flood: n.floods[0], verdicts: neighboursVerdicts(n) };
};

/** a storm fault: everyone waits 300 ms more */
const slowedEveryone = (i: number) => 300 + (i % 4);
/** a clean service on the generator's machine: a few answers late behind a burst of the storm */
const tailOnly = (i: number) => (i % 50 === 0 ? 80 : 2 + (i % 4));

describe("noisy-neighbour: the others' latency under a storm, by where the service ran", () => {
  test("a service elsewhere: the p99 is judged, a tail over its allowance fails", () => {
    const { flood, verdicts } = judge(tally(tailOnly), { where: "elsewhere", cores: 2 });
    expect(flood?.reached).toBe(true);
    expect(verdicts.map((v) => v.ok)).toEqual([false]);
  });

  test("a service sharing the generator's cores: its latency under a storm is no verdict, whatever it was", () => {
    for (const during of [tailOnly, slowedEveryone]) {
      const { flood, verdicts } = judge(tally(during), { where: "a process of its own", cores: 2 });
      expect(flood?.unreachedBecause).toContain("storm's generator shared the service's 2 cores");
      expect(verdicts).toEqual([]);
    }
  });

  test("a service on cores of its own: the median is judged, and everyone slowed fails", () => {
    const { flood, verdicts } = judge(tally(slowedEveryone), { where: "a process of its own", cores: 1, ownCores: 1 });
    expect(flood?.reached).toBe(true);
    expect(flood?.allowedP50Ms).toBeDefined();
    expect(verdicts.map((v) => v.ok)).toEqual([false]);
    expect(verdicts[0]?.received).toMatch(/median [\d.]+ → 30\d ms \(at most/);
  });

  test("a service on cores of its own: a tail alone over its allowance is no verdict, never a failure", () => {
    const { flood, verdicts } = judge(tally(tailOnly), { where: "a process of its own", cores: 1, ownCores: 1 });
    expect(flood?.reached).toBe(false);
    expect(flood?.unreachedBecause).toContain("shared this machine with the service (on cores of their own)");
    expect(verdicts).toEqual([]);
  });

  test("a service on cores of its own: a median over its allowance by no more than the generator's lateness is no verdict, more is a failure", () => {
    // the others at 30–33 ms under the storm (allowance about 28), their p99 within its own: seen in CI
    // when the storm's generator ran up to 40 ms late on its one core
    const queued = (i: number) => 30 + (i % 4);
    const own = { where: "a process of its own" as const, cores: 1, ownCores: 1 };
    // a calm tail of 50 ms (one answer in 50): the storm's p99 is within its allowance, the median is not
    const withCalmTail = () => {
      const t = tally(queued);
      t.phase("calm").latency.recordValue(50_000);
      t.phase("calm").latency.recordValue(50_000);
      t.phase("calm").latency.recordValue(50_000);
      return t;
    };
    const late = withCalmTail();
    late.phase("refusal-storm").lagMaxMs = 40;
    const judged = judge(late, own);
    expect(judged.flood?.reached).toBe(false);
    expect(judged.flood?.unreachedBecause).toBe(
      "the others' median is over its allowance by no more than the generator's latest send (40.0 ms)",
    );
    expect(judged.verdicts).toEqual([]);
    // a generator on time, or late by less than the median's excess (about 3 ms): the median is the service's
    expect(judge(withCalmTail(), own).verdicts.map((v) => v.ok)).toEqual([false]);
    const slightlyLate = withCalmTail();
    slightlyLate.phase("refusal-storm").lagMaxMs = 2;
    expect(judge(slightlyLate, own).verdicts.map((v) => v.ok)).toEqual([false]);
  });

  test("a generator whose event loop never idled: no verdict on the others' latency, wherever the service ran; an error still fails", () => {
    // against a server that closes each connection after its answer, the storm's new connections
    // kept the generator's one core busy (loop 0.99–1.0) while the service used half of its own:
    // the others' answers waited in the generator's queue, 5 → 130 ms, and were blamed on the service
    const saturated: FloodOutcome = { ...STORM, generatorBusy: 0.99, serviceBusy: 0.5 };
    for (const service of [
      { where: "a process of its own" as const, cores: 1, ownCores: 1 },
      { where: "elsewhere" as const, cores: 2 },
    ]) {
      const { flood, verdicts } = judge(tally(slowedEveryone, saturated), service);
      expect(flood?.reached).toBe(false);
      expect(flood?.unreachedBecause).toBe(
        "the generator's event loop was busy 99% of the flood (the service's own processes 50% of its cores): its own queue is in every answer it timed",
      );
      expect(verdicts).toEqual([]);
    }
    // a loop that idled now and then times the answers: the same harm is the service's
    expect(
      judge(tally(slowedEveryone, { ...saturated, generatorBusy: 0.94 }), { where: "elsewhere", cores: 2 }).verdicts.map(
        (v) => v.ok,
      ),
    ).toEqual([false]);
    // what is not a timing still fails: the others' errors
    const failing = tally(slowedEveryone, saturated);
    failing.phase("refusal-storm").errors = 20;
    expect(judge(failing, { where: "elsewhere", cores: 2 }).verdicts.map((v) => v.ok)).toEqual([false]);
  });

  test("a service on cores of its own that other work took: no verdict on its latency, even its median", () => {
    const busy = { ...STORM, otherOnServiceCores: 0.3 };
    const { flood, verdicts } = judge(tally(slowedEveryone, busy), { where: "a process of its own", cores: 1, ownCores: 1 });
    expect(flood?.unreachedBecause).toContain("other work took 30% of the service's 1 core");
    expect(verdicts).toEqual([]);
  });

  test("a service sharing this machine while other work spiked: no verdict on the stream hog's p99, before the load average shows it", () => {
    const hog: FloodOutcome = { ...STORM, shape: "stream-hog", unit: "slots", intended: 10, achieved: 10, otherOnMachine: 0.3 };
    const shared = { where: "a process of its own" as const, cores: 2 };
    const { flood, verdicts } = judge(tally(slowedEveryone, hog), shared);
    expect(flood?.unreachedBecause).toContain("work of neither the generator nor the service took 30% of this machine's 2 cores");
    expect(verdicts).toEqual([]);
    // without it the same p99 is the service's
    expect(judge(tally(slowedEveryone, { ...hog, otherOnMachine: 0.02 }), shared).verdicts.map((v) => v.ok)).toEqual([false]);
  });

  test("a service on cores of its own, unharmed, passes", () => {
    const { flood, verdicts } = judge(
      tally((i) => 2 + (i % 5)),
      { where: "a process of its own", cores: 1, ownCores: 1 },
    );
    expect(flood?.reached).toBe(true);
    expect(verdicts.map((v) => v.ok)).toEqual([true]);
  });
});
