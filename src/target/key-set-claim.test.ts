import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { claimKeySet, processIsAlive } from "./key-set-claim.js";

const fresh = () => mkdtempSync(join(tmpdir(), "key-sets-"));
const DEAD = new Set([9001, 9002]);
const alive = (pid: number) => !DEAD.has(pid);

describe("claimKeySet: each live worker its own key set", () => {
  test("workers take the sets in turn; the same process keeps its set", () => {
    const dir = fresh();
    expect([101, 102, 103].map((pid) => claimKeySet(dir, 3, pid, alive))).toEqual([1, 2, 3]);
    expect(claimKeySet(dir, 3, 102, alive)).toBe(2);
    expect(readFileSync(join(dir, "set-2"), "utf8")).toBe("102");
  });

  test("a set whose owner died (no exit event) is taken over; a live owner's never is", () => {
    const dir = fresh();
    writeFileSync(join(dir, "set-1"), "101");
    writeFileSync(join(dir, "set-2"), "9001");
    expect(claimKeySet(dir, 3, 104, alive)).toBe(2);
    expect(readFileSync(join(dir, "set-1"), "utf8")).toBe("101");
    expect(claimKeySet(dir, 3, 105, alive)).toBe(3);
  });

  test("more live workers than sets is an error that says what to do", () => {
    const dir = fresh();
    claimKeySet(dir, 1, 101, alive);
    expect(() => claimKeySet(dir, 1, 102, alive)).toThrow(/lower --workers/);
  });

  test("a mutex left by a killed process is broken once stale", () => {
    const dir = fresh();
    // a stale mutex directory: older than the staleness bound
    mkdirSync(join(dir, ".mutex"));
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, ".mutex"), old, old);
    expect(claimKeySet(dir, 2, 101, alive)).toBe(1);
  });

  test("processIsAlive: this process is, an unused pid is not", () => {
    expect(processIsAlive(process.pid)).toBe(true);
    expect(processIsAlive(2 ** 22 + 12_345)).toBe(false);
  });
});
