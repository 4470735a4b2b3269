import { isDeepStrictEqual } from "node:util";
import { type Agent, LIST_LIMITS } from "../../src/contract/index.js";
import { expect, target } from "../support/harness.js";
import { firstClient, listAccount, nextClient, notJudged } from "./support.js";

/**
 * Another client in the account (another run with the same keys, another pipeline, the product
 * itself) adds and deletes agents while a property compares a list with its model. Such activity
 * never makes a finding: a list that differs from the model is judged on this run's own agents
 * alone when another client's activity shows, and the case is otherwise not judged (notJudged).
 */

/**
 * At most this many vanished or changed agents are read back one by one (a 404 proves someone
 * deleted one; a GET agreeing with the changed record, that someone changed it).
 */
const GONE_PROBES = 3;

/** A list query asked again: the total it answers now, and the agents of its first page. */
export interface AskedAgain {
  total: number | undefined;
  agents: readonly Agent[];
}

/**
 * The same query asked again: its total (the very query, so that a total a defective service ties
 * to the page or the limit repeats itself rather than seems to move), and the agents of its first
 * page as large as a page may be (its filter and order). A case's own page may show none of them
 * (a page past the end), and an agent another client made and deleted again may be gone before the
 * account is read whole: seen here, it is a stranger all the same.
 */
export const askAgain = (query: Readonly<Record<string, string | string[]>>) => async (): Promise<AskedAgain> => {
  const same = await nextClient().listAgents(query);
  const first = await nextClient().listAgents({ ...query, page: "1", limit: String(LIST_LIMITS.limit.max) });
  return { total: same.pagination?.total, agents: first.status === 200 ? (first.data ?? []) : [] };
};

const names = (agents: readonly Agent[]) =>
  agents
    .slice(0, 2)
    .map((a) => a.name.slice(0, 40))
    .join(", ");

/**
 * What another client did in the account, as far as the service's own answers prove it, or
 * undefined: agents on `page` or in the account now that were not there before (`baseline`) and
 * do not carry this run's prefix, agents of `baseline` whose record changed (another run patching
 * its own agents reorders a list sorted by updatedAt, name or status while no total moves): a GET
 * agrees with the list, or, when the other run wrote it again in between, shows an updatedAt later
 * than before the case, and
 * agents of `baseline` the account no longer lists that a GET answers 404 (this run never
 * deletes or updates an agent it did not make).
 */
export async function foreignActivity(
  baseline: readonly Agent[],
  page: readonly Agent[],
  answer?: { total: number; again: () => Promise<AskedAgain> },
): Promise<string | undefined> {
  const client = firstClient();
  // The same list again, with no write of this run between: a service answers it the same unless
  // the account changed. Asked before and after the account is read whole: an agent of another
  // client that was there for the list and is gone before that read shows only in a total.
  const again = answer && (await answer.again());
  const now = await listAccount(client);
  const after = answer && (await answer.again());
  const changed = [again?.total, after?.total].find((t) => t !== undefined && t !== answer?.total);
  const moved = answer && changed !== undefined ? [answer.total, changed] : undefined;
  const before = new Set(baseline.map((a) => a.id));
  const everyListed = [...page, ...(again?.agents ?? []), ...now, ...(after?.agents ?? [])];
  const strangers = [...new Map(everyListed.map((a) => [a.id, a])).values()].filter(
    (a) => !before.has(a.id) && !String(a.name).startsWith(target.runPrefix),
  );
  // an agent listed before whose record is not what it was, and which a GET of it answers as now
  // listed: this run writes only its own agents (a list that merely shows a record wrong is the
  // service's own defect, which its GET does not share)
  const was = new Map(baseline.map((a) => [a.id, a]));
  const changedByOthers: Agent[] = [];
  const differ = [...new Map([...page, ...now].map((a) => [a.id, a])).values()].filter((a) => {
    const before = was.get(a.id);
    return before !== undefined && !String(a.name).startsWith(target.runPrefix) && !isDeepStrictEqual(before, a);
  });
  // by id: an agent the case's page listed changed and the account's read no more is probed once
  const gone = new Map<string, Agent>();
  for (const agent of differ.slice(0, GONE_PROBES)) {
    const read = await client.getAgent(agent.id);
    // listed changed, then deleted before this GET: another client's doing too
    if (read.status === 404) gone.set(agent.id, agent);
    if (read.status !== 200 || !read.data) continue;
    // the GET agrees with the list; or the other client wrote it again since the list, and its
    // updatedAt moved past what it was before the case: a write after then, and not this run's
    if (isDeepStrictEqual(read.data, agent) || writtenSince(was.get(agent.id)!, read.data)) changedByOthers.push(agent);
  }
  const listed = new Set(now.map((a) => a.id));
  for (const agent of baseline.filter((a) => !listed.has(a.id) && !gone.has(a.id)).slice(0, GONE_PROBES))
    if ((await client.getAgent(agent.id)).status === 404) gone.set(agent.id, agent);
  const seen = [
    ...(strangers.length ? [`${strangers.length} agent(s) this run did not make appeared (${names(strangers)})`] : []),
    ...(gone.size
      ? [`agent(s) listed before this run's case were deleted by another client (${names([...gone.values()])})`]
      : []),
    ...(changedByOthers.length
      ? [
          `${changedByOthers.length} agent(s) listed before this run's case were changed by another client (${names(changedByOthers)})`,
        ]
      : []),
    ...(moved ? [`the same list's total went from ${moved[0]} to ${moved[1]} with no write of this run between`] : []),
  ];
  return seen.length ? seen.join("; ") : undefined;
}

/** Whether `now`'s updatedAt is later than `before`'s: the agent was written after `before` was read. */
const writtenSince = (before: Agent, now: Agent) => Date.parse(now.updatedAt) > Date.parse(before.updatedAt);

/**
 * A list answer held to the model by `judge`; when it differs and another client's activity
 * shows, only this run's own agents in it are judged — each as the model holds it, and, for one
 * answer (`order` given: the model's ids for the whole query, every page), in the query's order
 * among themselves (an order restricted to some agents is still that order, PROFILE §5); agents
 * walked over several answers shift between pages as others come and go, so their order is not
 * judged then — and the case is not judged. `total`: the answer's total and a way to ask again.
 */
export async function judgeList(
  agents: readonly Agent[],
  known: { baseline: readonly Agent[]; own: readonly Agent[]; order?: readonly string[] },
  judge: () => void,
  total?: { total: number; again: () => Promise<AskedAgain> },
): Promise<void> {
  try {
    judge();
    return;
  } catch (err) {
    const seen = await foreignActivity(known.baseline, agents, total);
    if (seen === undefined) throw err;
    const own = new Map(known.own.map((a) => [a.id, a]));
    // this run's: the agents the case made, and any other with the run's prefix that was not in the
    // account before the case (one the service should not list, such as a deleted one back). An
    // agent of the run's prefix listed before the case is an earlier check's leftover, which the
    // model holds only as the baseline listed it: another client may have changed the list around it
    const before = new Set(known.baseline.map((a) => a.id));
    const mine = agents.filter((a) => own.has(a.id) || (String(a.name).startsWith(target.runPrefix) && !before.has(a.id)));
    for (const agent of mine) expect(agent, `record of this run's ${agent.id}`).toEqual(own.get(agent.id));
    const onPage = new Set(mine.map((a) => a.id));
    if (known.order)
      expect(
        mine.map((a) => a.id),
        "PROFILE §5: this run's own agents on the page, in the query's order among themselves",
      ).toEqual(known.order.filter((id) => onPage.has(id)));
    notJudged(`another client's activity in the account: ${seen}; the list was judged on this run's own agents only`);
  }
}
