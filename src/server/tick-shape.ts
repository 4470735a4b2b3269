import { createHook } from "node:async_hooks";

let held: object | undefined;

/**
 * Keeps one of Node's `process.nextTick` records alive for the life of the process.
 *
 * nextTick makes each record with an object literal of computed keys, whose hidden class V8
 * reaches through weak map transitions. On this machine a server process fell, at random and
 * for good, into a state where that literal was about 20 times slower to build: CPU per GET
 * 22 µs instead of 17.6 µs, with nextTick's object literal the whole difference (line ticks of
 * `--cpu-prof`). It struck most tsx-run processes and some bundled ones, never a small
 * node:http one: it looks like a collection clearing the transition while no record is alive,
 * in a process whose map has no room left for new transitions (a micro-benchmark with 1,600
 * transitions off the root map shows the same 20×). A record held here keeps its class alive,
 * so the transition is never cleared. Of the server processes started while measuring this,
 * 21 of 41 ran slow without it (15 of 20 tsx-run ones), and 0 of 30 with it.
 */
export function holdTickShape(): void {
  if (held) return;
  const hook = createHook({
    // on only for the one nextTick below: a hook left on would replace the record (the test's tell)
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === "TickObject") held = resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
}

/** The record held, for tests: one of nextTick's own, with its callback. */
export const heldTickRecord = (): object | undefined => held;
