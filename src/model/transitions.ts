import { AGENT_STATUSES, type AgentStatus, type ClauseId } from "../contract/index.js";

/**
 * The status transitions PROFILE allows an agent, as a from → to table the stateful suite fills
 * in: which roads it drove each agent along, and which it never took. "new" is before the
 * create; "deleted" is after the delete. A pair missing from the table is one PROFILE forbids.
 */
export type TransitionFrom = "new" | AgentStatus;
export type TransitionTo = AgentStatus | "deleted";
export const TRANSITION_FROM: readonly TransitionFrom[] = ["new", ...AGENT_STATUSES];
export const TRANSITION_TO: readonly TransitionTo[] = [...AGENT_STATUSES, "deleted"];

/** Each allowed pair, with the clause that allows it and the road that takes it. */
export const STATUS_TRANSITIONS: readonly { from: TransitionFrom; to: TransitionTo; clause: ClauseId; road: string }[] = [
  // PROFILE §5 Create, §8: created active unless the create says inactive; error is rejected
  { from: "new", to: "active", clause: "create.status", road: "create" },
  { from: "new", to: "inactive", clause: "create.status", road: "create with status inactive" },
  // PROFILE §5 Update: active ↔ inactive in any direction, from any state; a patch without status keeps it
  { from: "active", to: "active", clause: "update.merge-patch", road: "patch, message" },
  { from: "active", to: "inactive", clause: "update.status", road: "patch status inactive" },
  { from: "inactive", to: "active", clause: "update.status", road: "patch status active" },
  { from: "inactive", to: "inactive", clause: "update.merge-patch", road: "patch, message (503)" },
  // PROFILE §5 Send Message: a model failure sets error; only the service sets it (§8)
  { from: "active", to: "error", clause: "message.model-error", road: "message to mock-error" },
  { from: "error", to: "error", clause: "status.lifecycle", road: "patch without status, message (503)" },
  { from: "error", to: "active", clause: "message.model-error", road: "patch status active" },
  { from: "error", to: "inactive", clause: "update.status", road: "patch status inactive" },
  // PROFILE §5 Delete: from any status
  { from: "active", to: "deleted", clause: "delete.gone", road: "delete" },
  { from: "inactive", to: "deleted", clause: "delete.gone", road: "delete" },
  { from: "error", to: "deleted", clause: "delete.gone", road: "delete" },
];

export const transitionKey = (from: TransitionFrom, to: TransitionTo) => `${from}>${to}`;

export function isAllowedTransition(from: TransitionFrom, to: TransitionTo): boolean {
  return STATUS_TRANSITIONS.some((t) => t.from === from && t.to === to);
}

/**
 * How often a run must take each allowed pair: once shows the road exists, three times shows
 * it from more than one history (another agent, another conversation, another order).
 */
export const MIN_PER_PAIR = 3;

/** The allowed pairs a run took fewer than `MIN_PER_PAIR` times, each with its count. */
export function pairsBelowMinimum(
  counts: Readonly<Record<string, number>>,
  pairs: readonly { from: TransitionFrom; to: TransitionTo }[] = STATUS_TRANSITIONS,
): { from: TransitionFrom; to: TransitionTo; count: number }[] {
  return pairs
    .map((t) => ({ from: t.from, to: t.to, count: counts[transitionKey(t.from, t.to)] ?? 0 }))
    .filter((t) => t.count < MIN_PER_PAIR);
}

/** A pair below the minimum as the report says it. */
export const describeShortfall = (t: { from: TransitionFrom; to: TransitionTo; count: number }) =>
  `${t.from} → ${t.to}: reached ${t.count} time${t.count === 1 ? "" : "s"}, below ${MIN_PER_PAIR}`;

/**
 * The pair a model-guided command drives toward next: among the pairs `feasible` allows, the one
 * the counts hold least, ties broken by the table's order rotated by `offset`. A function of the
 * sequence's own counts only, so a shrunk sequence replays the same roads.
 */
export function leastReachedPair<T extends { from: TransitionFrom; to: TransitionTo }>(
  counts: Readonly<Record<string, number>>,
  offset: number,
  candidates: readonly T[],
): T | undefined {
  const n = candidates.length;
  let best: T | undefined;
  let bestCount = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const t = candidates[(offset + i) % n]!;
    const count = counts[transitionKey(t.from, t.to)] ?? 0;
    if (count < bestCount) [best, bestCount] = [t, count];
  }
  return best;
}

/** How many allowed pairs the counts reach. */
export function transitionCoverage(counts: Readonly<Record<string, number>>): { reached: number; allowed: number } {
  const reached = STATUS_TRANSITIONS.filter((t) => (counts[transitionKey(t.from, t.to)] ?? 0) > 0).length;
  return { reached, allowed: STATUS_TRANSITIONS.length };
}

/**
 * The from → to table as text: a count in each allowed cell, `·` in a cell PROFILE forbids.
 * An allowed cell never reached reads 0, so a gap in the generators shows.
 */
export function formatTransitionTable(counts: Readonly<Record<string, number>>): string {
  const width = Math.max(9, ...Object.values(counts).map((n) => String(n).length + 1));
  const cell = (s: string) => s.padStart(width);
  const header = `${"from \\ to".padEnd(10)}${TRANSITION_TO.map(cell).join("")}`;
  const rows = TRANSITION_FROM.map(
    (from) =>
      `${from.padEnd(10)}${TRANSITION_TO.map((to) => cell(isAllowedTransition(from, to) ? String(counts[transitionKey(from, to)] ?? 0) : "·")).join("")}`,
  );
  const { reached, allowed } = transitionCoverage(counts);
  const short = pairsBelowMinimum(counts).map((t) => `  ${describeShortfall(t)}`);
  return [
    `status transitions: ${reached} of ${allowed} allowed pairs reached${short.length ? "" : `, each at least ${MIN_PER_PAIR} times`}`,
    header,
    ...rows,
    ...(short.length ? [`pairs below ${MIN_PER_PAIR}:`, ...short] : []),
  ].join("\n");
}

/** Counts of several runs (or properties) added up. */
export function mergeCounts(counts: readonly Readonly<Record<string, number>>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) for (const [k, n] of Object.entries(c)) out[k] = (out[k] ?? 0) + n;
  return out;
}
