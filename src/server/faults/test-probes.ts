import { expect, test } from "vitest";
import { makeServer, type TestServer } from "../test-support.js";
import { FAULT_NAMES } from "./index.js";

/** How a fault that only many requests at once reveal shows: the clean server's answer to the probe, and the probe. */
export interface FaultProbe {
  expected: unknown;
  probe(s: TestServer): Promise<unknown>;
}

/**
 * The faults of one area are real: each is a known fault with a probe, and the probe, sent at
 * once through the public API, gets the clean server's answer only without the fault.
 */
export function probesOfFaults(
  area: { name: string; faults: Record<string, unknown> },
  probes: Record<string, FaultProbe>,
): void {
  const names = Object.keys(area.faults);
  test(`every ${area.name} fault is in FAULTS and has a probe`, () => {
    expect(Object.keys(probes).sort()).toEqual([...names].sort());
    for (const name of names) expect(FAULT_NAMES).toContain(name);
  });

  test.for(names)(`%s changes what the server answers under ${area.name}`, async (name) => {
    const { expected, probe } = probes[name]!;
    expect(await probe(makeServer()), "the clean server").toEqual(expected);
    expect(await probe(makeServer({ faults: [name] })), `with ${name}`).not.toEqual(expected);
  });
}
