import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { checkLinearizable, type Operation, type SequentialModel } from "./linearizability.js";

/** A register per partition: write v, read → v; a lost write (no answer) may or may not have happened. */
type RegisterInput = { write: number } | { read: true };
type RegisterOutput = { value?: number; lost?: true };
const REGISTER: SequentialModel<number, RegisterInput, RegisterOutput> = {
  init: () => 0,
  step: (state, input, output) => {
    if ("write" in input) return output.lost ? [state, input.write] : [input.write];
    return output.value === state ? [state] : [];
  },
  key: (state) => String(state),
};

let nextId = 0;
const op = (
  partition: string,
  call: number,
  ret: number,
  input: RegisterInput,
  output: RegisterOutput = {},
): Operation<RegisterInput, RegisterOutput> => ({ id: nextId++, client: nextId, partition, call, ret, input, output });
const isRead = (o: Operation<RegisterInput, RegisterOutput>) => "read" in o.input;

describe("checkLinearizable", () => {
  // a write of 1 over [call, ret], and reads over [call, ret] that saw a value
  test.for([
    [
      "overlapping write and reads: either order explains them",
      [0, 10],
      [
        [1, 2, 0],
        [3, 4, 1],
      ],
      true,
    ],
    [
      "a new value then the old one again, by reads that follow each other: not linearizable",
      [0, 100],
      [
        [10, 20, 1],
        [30, 40, 0],
      ],
      false,
    ],
  ] as const)("%s", ([, [call, ret], reads, linearizable]) => {
    const history = [op("a", call, ret, { write: 1 }), ...reads.map(([c, r, value]) => op("a", c, r, { read: true }, { value }))];
    expect(checkLinearizable(history, REGISTER).linearizable).toBe(linearizable);
  });

  test("a read after a completed write sees it (real-time order)", () => {
    const history = [op("a", 0, 1, { write: 1 }), op("a", 2, 3, { read: true }, { value: 0 })];
    const verdict = checkLinearizable(history, REGISTER, { isPure: isRead });
    expect(verdict.linearizable).toBe(false);
  });

  test("a call and a return at the same instant overlap", () => {
    const history = [op("a", 0, 5, { write: 1 }), op("a", 5, 6, { read: true }, { value: 0 })];
    expect(checkLinearizable(history, REGISTER).linearizable).toBe(true);
  });

  test("an answer that never came may have taken effect, or not", () => {
    const lost = op("a", 0, Number.POSITIVE_INFINITY, { write: 7 }, { lost: true });
    expect(checkLinearizable([lost, op("a", 1, 2, { read: true }, { value: 7 })], REGISTER).linearizable).toBe(true);
    expect(checkLinearizable([lost, op("a", 1, 2, { read: true }, { value: 0 })], REGISTER).linearizable).toBe(true);
    expect(checkLinearizable([lost, op("a", 1, 2, { read: true }, { value: 3 })], REGISTER).linearizable).toBe(false);
  });

  test("partitions are judged apart, and the verdict names the one that fails", () => {
    const history = [
      op("a", 0, 1, { write: 1 }),
      op("b", 0, 1, { write: 2 }),
      op("a", 2, 3, { read: true }, { value: 1 }),
      op("b", 2, 3, { read: true }, { value: 1 }),
    ];
    const verdict = checkLinearizable(history, REGISTER, { isPure: isRead });
    expect(verdict).toMatchObject({ linearizable: false, partition: "b" });
  });

  test("the witness keeps the writes and only the reads the violation needs", () => {
    const reads = Array.from({ length: 8 }, (_, i) => op("a", 20 + i * 2, 21 + i * 2, { read: true }, { value: 1 }));
    const stale = op("a", 40, 41, { read: true }, { value: 0 });
    const history = [op("a", 0, 10, { write: 1 }), ...reads, stale];
    const verdict = checkLinearizable(history, REGISTER, { isPure: isRead });
    if (verdict.linearizable !== false) throw new Error("expected a violation");
    expect(verdict.witness.map((o) => o.id)).toEqual([history[0]!.id, stale.id]);
  });

  test("a search that runs out of steps has no verdict", () => {
    const writes = Array.from({ length: 12 }, (_, i) => op("a", 0, 100, { write: i + 1 }));
    const verdict = checkLinearizable([...writes, op("a", 200, 201, { read: true }, { value: 99 })], REGISTER, { maxSteps: 50 });
    expect(verdict.linearizable).toBe("unknown");
  });

  test("a partition whose search gave up hides no violation of another", () => {
    const writes = Array.from({ length: 12 }, (_, i) => op("a", 0, 100, { write: i + 1 }));
    const undecided = [...writes, op("a", 200, 201, { read: true }, { value: 99 })];
    const violation = [op("b", 0, 1, { write: 1 }), op("b", 2, 3, { read: true }, { value: 0 })];
    const verdict = checkLinearizable([...undecided, ...violation], REGISTER, { maxSteps: 50, isPure: isRead });
    expect(verdict).toMatchObject({ linearizable: false, partition: "b" });
    expect(checkLinearizable(undecided, REGISTER, { maxSteps: 50 })).toMatchObject({ linearizable: "unknown", partition: "a" });
  });

  /**
   * Histories made by running the register for real: each operation takes effect at one instant
   * between its call and its return, so every such history is linearizable, however the calls
   * overlap; the same history with one read's answer changed to a value never written is not.
   */
  const simulated = fc
    .array(
      fc.record({
        start: fc.integer({ min: 0, max: 200 }),
        length: fc.integer({ min: 1, max: 60 }),
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        write: fc.option(fc.integer({ min: 1, max: 5 })),
        partition: fc.constantFrom("a", "b", "c"),
      }),
      { maxLength: 40 },
    )
    .map((specs) => {
      const values = new Map<string, number>();
      const timed = specs.map((s, i) => ({ ...s, i, effect: s.start + s.at * s.length })).sort((x, y) => x.effect - y.effect);
      return timed
        .map((s) => {
          const input: RegisterInput = s.write === null ? { read: true } : { write: s.write };
          const output: RegisterOutput = {};
          if (s.write === null) output.value = values.get(s.partition) ?? 0;
          else values.set(s.partition, s.write);
          return { id: s.i, client: s.i, partition: s.partition, call: s.start, ret: s.start + s.length, input, output };
        })
        .sort((x, y) => x.id - y.id);
    });

  test("every history of a real register is linearizable", () => {
    fc.assert(
      fc.property(simulated, (history) => {
        expect(checkLinearizable(history, REGISTER).linearizable).toBe(true);
      }),
      { numRuns: 200, seed: 7 },
    );
  });

  test("a read of a value nobody wrote is never linearizable", () => {
    fc.assert(
      fc.property(
        simulated.filter((h) => h.some(isRead)),
        (history) => {
          const i = history.findIndex(isRead);
          const broken = history.map((o, j) => (j === i ? { ...o, output: { value: 42 } } : o));
          const verdict = checkLinearizable(broken, REGISTER, { isPure: isRead });
          expect(verdict.linearizable).toBe(false);
          if (verdict.linearizable === false) expect(verdict.witness.filter(isRead).map((o) => o.output.value)).toEqual([42]);
        },
      ),
      { numRuns: 200, seed: 7 },
    );
  });
});
