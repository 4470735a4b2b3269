import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { MinHeap } from "./min-heap.js";

describe("MinHeap", () => {
  test("an empty heap has nothing to peek at or pop", () => {
    const heap = new MinHeap<number>((n) => n);
    expect(heap.peek()).toBeUndefined();
    expect(heap.pop()).toBeUndefined();
  });

  test("pops every item pushed, lowest score first, with pushes between pops", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: -50, max: 50 }), fc.boolean()), { maxLength: 60 }), (steps) => {
        const heap = new MinHeap<{ score: number }>((item) => item.score);
        const model: number[] = [];
        for (const [score, popFirst] of steps) {
          if (popFirst && model.length) {
            model.sort((a, b) => a - b);
            expect(heap.peek()?.score).toBe(model[0]);
            expect(heap.pop()?.score).toBe(model.shift());
          }
          heap.push({ score });
          model.push(score);
        }
        model.sort((a, b) => a - b);
        const popped: number[] = [];
        for (let item = heap.pop(); item; item = heap.pop()) popped.push(item.score);
        expect(popped).toEqual(model);
      }),
    );
  });
});
