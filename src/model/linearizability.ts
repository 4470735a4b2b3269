/**
 * A linearizability checker for concurrent histories (Herlihy & Wing): is there one serial order
 * of the operations, consistent with real time (an operation that completed before another was
 * invoked comes first), in which every answer is the one a sequential model gives?
 *
 * The search is Wing & Gong's, with Lowe's memo of the (linearized set, model state) pairs already
 * tried — the algorithm Jepsen's Knossos and Porcupine use. Operations on different partitions
 * (agents: no operation of one reads or writes another) are checked apart, since a history is
 * linearizable exactly when each partition's is (linearizability is local, Herlihy & Wing §3.3);
 * that keeps each search small.
 *
 * The model is nondeterministic on purpose: an operation whose answer never came (a lost
 * connection) may or may not have taken effect, so `step` returns every state it may leave. The
 * search runs over sets of states, as Porcupine does for nondeterministic models.
 */

/** One operation of a history: its invocation and completion on one clock (ms), what it asked, what it got. */
export interface Operation<I, O> {
  /** unique in the history */
  id: number;
  /** the client that sent it (for the report's timeline) */
  client: number;
  partition: string;
  call: number;
  /** Infinity when the answer never came: it may take effect at any time after its call */
  ret: number;
  input: I;
  output: O;
}

/** The sequential specification: what each operation may do from a state. */
export interface SequentialModel<S, I, O> {
  init(partition: string): S;
  /** the states `input` may leave from `state` when the service answered `output`; none: that answer is impossible there */
  step(state: S, input: I, output: O): readonly S[];
  /** equal states have equal keys (the memo's) */
  key(state: S): string;
}

export type Verdict<I, O> =
  | { linearizable: true; partitions: number; operations: number }
  | {
      linearizable: false;
      partition: string;
      /** a sub-history that is not linearizable on its own, with no operation it can do without (see `minimalWitness`) */
      witness: Operation<I, O>[];
    }
  /** the search ran out of its step budget before deciding: no verdict */
  | { linearizable: "unknown"; partition: string; steps: number };

/** The list's head, or an entry. */
interface Link<I, O> {
  next?: Entry<I, O> | undefined;
}

interface Entry<I, O> extends Link<I, O> {
  op: Operation<I, O>;
  isCall: boolean;
  /** a call's return entry (none on a return) */
  ret?: Entry<I, O>;
  prev: Link<I, O>;
}

/** Calls and returns in time order; at a tie the call first, so the two operations count as overlapping (no false order). */
function entriesOf<I, O>(ops: readonly Operation<I, O>[]): Link<I, O> {
  const head: Link<I, O> = {};
  const events: Entry<I, O>[] = [];
  for (const op of ops) {
    const ret: Entry<I, O> = { op, isCall: false, prev: head };
    events.push({ op, isCall: true, ret, prev: head }, ret);
  }
  const timeOf = (e: Entry<I, O>) => (e.isCall ? e.op.call : e.op.ret);
  events.sort((a, b) => timeOf(a) - timeOf(b) || Number(b.isCall) - Number(a.isCall) || a.op.id - b.op.id);
  let last: Link<I, O> = head;
  for (const e of events) {
    last.next = e;
    e.prev = last;
    last = e;
  }
  return head;
}

function returnOf<I, O>(call: Entry<I, O>): Entry<I, O> {
  if (!call.ret) throw new Error("a return entry was taken for a call");
  return call.ret;
}

/** Take a call and its return out of the list (the operation is linearized). */
function lift<I, O>(call: Entry<I, O>): void {
  const ret = returnOf(call);
  call.prev.next = call.next;
  if (call.next) call.next.prev = call.prev;
  ret.prev.next = ret.next;
  if (ret.next) ret.next.prev = ret.prev;
}

/** Put them back, in the reverse order of `lift`. */
function unlift<I, O>(call: Entry<I, O>): void {
  const ret = returnOf(call);
  ret.prev.next = ret;
  if (ret.next) ret.next.prev = ret;
  call.prev.next = call;
  if (call.next) call.next.prev = call;
}

type Decision = "yes" | "no" | "unknown";

/** One partition's search. `budget` bounds the steps (each an operation tried at a state). */
function searchPartition<S, I, O>(
  ops: readonly Operation<I, O>[],
  model: SequentialModel<S, I, O>,
  partition: string,
  budget: { steps: number },
): Decision {
  if (ops.length === 0) return "yes";
  const head = entriesOf(ops);
  const bit = new Map(ops.map((op, i) => [op, 1n << BigInt(i)]));
  const bitOf = (op: Operation<I, O>) => bit.get(op) ?? 0n;
  let linearized = 0n;
  const seen = new Set<string>();
  const keys = new WeakMap<object, string>();
  // a state's key once: the memo asks for it at every step
  const keyOfState = (s: S) => {
    if (typeof s !== "object" || s === null) return model.key(s);
    let k = keys.get(s);
    if (k === undefined) {
      k = model.key(s);
      keys.set(s, k);
    }
    return k;
  };
  const keyOf = (states: readonly S[]) => {
    const [only] = states;
    return states.length === 1 && only !== undefined
      ? keyOfState(only)
      : [...new Set(states.map(keyOfState))].sort().join("\u0001");
  };
  const dedupe = (states: readonly S[]) => {
    if (states.length < 2) return [...states];
    const byKey = new Map<string, S>();
    for (const s of states) byKey.set(keyOfState(s), s);
    return [...byKey.values()];
  };
  let states: S[] = [model.init(partition)];
  const stack: { call: Entry<I, O>; states: S[] }[] = [];
  let entry = head.next;
  while (head.next) {
    if (budget.steps-- <= 0) return "unknown";
    if (!entry) return "no"; // cannot happen: a list that is not empty ends with a return
    if (entry.isCall) {
      const { op } = entry;
      const next = dedupe(states.flatMap((s) => model.step(s, op.input, op.output)));
      if (next.length > 0) {
        const memo = `${(linearized | bitOf(op)).toString(36)}|${keyOf(next)}`;
        if (!seen.has(memo)) {
          seen.add(memo);
          linearized |= bitOf(op);
          stack.push({ call: entry, states });
          states = next;
          lift(entry);
          entry = head.next;
          continue;
        }
      }
      entry = entry.next;
    } else {
      // a return whose call could not be linearized before it: undo the last choice
      const top = stack.pop();
      if (!top) return "no";
      linearized &= ~bitOf(top.call.op);
      states = top.states;
      unlift(top.call);
      entry = top.call.next;
    }
  }
  return "yes";
}

/** Operations by partition, in the order of their calls. */
function partitionsOf<I, O>(history: readonly Operation<I, O>[]): Map<string, Operation<I, O>[]> {
  const out = new Map<string, Operation<I, O>[]>();
  for (const op of [...history].sort((a, b) => a.call - b.call)) {
    const list = out.get(op.partition) ?? [];
    list.push(op);
    out.set(op.partition, list);
  }
  return out;
}

export interface CheckOptions<I, O> {
  /** the search's step budget per partition (the witness search's too) */
  maxSteps?: number;
  /**
   * Operations that change no state whatever the answer (reads): taking one out of a linearizable
   * history leaves it linearizable, so a sub-history without it that is still not linearizable
   * proves the whole one is not. The witness drops such operations while the violation stays.
   */
  isPure?(op: Operation<I, O>): boolean;
}

const DEFAULT_MAX_STEPS = 2_000_000;

/**
 * Check a history: each partition on its own. The first that is not linearizable gives the verdict,
 * with its witness; a partition whose search gave up hides no violation of another (every partition
 * is searched), and without a violation the first that gave up makes the verdict unknown.
 */
export function checkLinearizable<S, I, O>(
  history: readonly Operation<I, O>[],
  model: SequentialModel<S, I, O>,
  options: CheckOptions<I, O> = {},
): Verdict<I, O> {
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const partitions = partitionsOf(history);
  let gaveUp: string | undefined;
  for (const [partition, ops] of partitions) {
    const budget = { steps: maxSteps };
    const decision = searchPartition(ops, model, partition, budget);
    if (decision === "unknown") gaveUp ??= partition;
    if (decision === "no")
      return { linearizable: false, partition, witness: minimalWitness(ops, model, partition, options.isPure, maxSteps) };
  }
  if (gaveUp !== undefined) return { linearizable: "unknown", partition: gaveUp, steps: maxSteps };
  return { linearizable: true, partitions: partitions.size, operations: history.length };
}

/**
 * The smallest sub-history that still proves the violation: each pure operation taken out in turn,
 * and left out while what remains is still not linearizable (ddmin's one-at-a-time pass, repeated
 * until nothing more goes). Operations that change state stay: without one, a history that was
 * linearizable could stop being so, and the sub-history would prove nothing.
 */
export function minimalWitness<S, I, O>(
  ops: readonly Operation<I, O>[],
  model: SequentialModel<S, I, O>,
  partition: string,
  isPure: ((op: Operation<I, O>) => boolean) | undefined,
  maxSteps = DEFAULT_MAX_STEPS,
): Operation<I, O>[] {
  let kept = [...ops];
  if (!isPure) return kept;
  for (let changed = true; changed; ) {
    changed = false;
    for (const op of [...kept]) {
      if (!isPure(op)) continue;
      const without = kept.filter((o) => o !== op);
      if (searchPartition(without, model, partition, { steps: maxSteps }) === "no") {
        kept = without;
        changed = true;
      }
    }
  }
  return kept;
}
