import { describe, expect, it } from "vitest";
import { heldTickRecord, holdTickShape } from "./tick-shape.js";

describe("holdTickShape", () => {
  it("holds one of nextTick's own records, once, and leaves no hook behind", async () => {
    holdTickShape();
    const held = heldTickRecord();
    expect(held).toMatchObject({ callback: expect.any(Function) });
    holdTickShape();
    expect(heldTickRecord()).toBe(held);
    // the hook is off: later ticks run and replace nothing
    await new Promise<void>((resolve) => process.nextTick(resolve));
    expect(heldTickRecord()).toBe(held);
  });
});
