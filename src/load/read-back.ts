import type { ClauseId } from "../contract/index.js";
import { dataFieldOf, type ScenarioContext, ScenarioSetupError } from "./context.js";

/** The name label of the agents a burst creates (`ScenarioContext.name`): read back by it. */
const BURST_LABEL = "burst";

/**
 * Read back: the account's agents a scenario's bursts created are exactly those answered 201,
 * and at most `unanswered` more (creates whose answer never came: admitted or not, nobody saw).
 * PROFILE §7: a rejected request has no effect.
 */
export async function expectCreatedExactly(
  ctx: ScenarioContext,
  key: string,
  created: readonly string[],
  clause: ClauseId,
  unanswered = 0,
): Promise<void> {
  const prefix = `${ctx.target.runPrefix}load-${ctx.recorder.scenario}-`;
  const found: string[] = [];
  for (let page = 1; page <= 50; page++) {
    const res = await ctx.client(key).listAgents({ page, limit: 100 });
    if (res.status === 429) {
      await ctx.waitForReset(res.exchange.rate?.reset);
      page--;
      continue;
    }
    if (res.status !== 200 || !res.data) throw new ScenarioSetupError(`reading the agents back answered ${res.status}`);
    for (const a of res.data) if (a.name.startsWith(prefix) && a.name.includes(`-${BURST_LABEL}-`)) found.push(a.id);
    if (!res.pagination?.hasMore) break;
  }
  const answered = new Set(created);
  const extra = found.filter((id) => !answered.has(id));
  // every agent answered 201 that was not deleted since is there, and nothing else but what an unanswered create made
  ctx.recorder.expect(
    extra.length <= unanswered,
    clause,
    "rejected-creates-created-nothing",
    `the agents read back are exactly the creates answered 201${unanswered ? `, and at most the ${unanswered} whose answer never came` : ""}`,
    () => `${extra.length} more agent(s) than 201 answers (${found.length} found, ${created.length} answered 201)`,
  );
  for (const id of extra) ctx.track(key, id);
}

/** A burst's create: a unique name per request, under the scenario's prefix (read back above). */
export const burstCreateBody = (ctx: ScenarioContext) => ({ name: `${ctx.name(BURST_LABEL)}-[<id>]` });

/** Keep the agents a burst's answers say were created: tracked for cleanup, listed for the read-back. */
export function keepCreated(ctx: ScenarioContext, key: string, created: string[]) {
  return (r: { status: number; json: unknown }) => {
    const id = dataFieldOf(r, ctx.target.idField);
    if (r.status === 201 && typeof id === "string") {
      created.push(id);
      ctx.track(key, id);
    }
  };
}
