import fc from "fast-check";
import { describe, vi } from "vitest";
import { validCreateBody } from "../../src/arbitraries/bodies.js";
import { invalidListQuery, validListQuery } from "../../src/arbitraries/queries.js";
import { type Agent, FIELD_NAMED_BY, type SORT_FIELDS } from "../../src/contract/index.js";
import { type JsonObject, type ModelAgent, predictList, readListQuery, recordOf } from "../../src/model/agents.js";
import { declareFile } from "../support/declare-file.js";
import { check, expect, target } from "../support/harness.js";
import { bodyOptions, createFor, expectEqual, invalid, ok, remove, said } from "./cases.js";
import { askAgain, judgeList } from "./foreign.js";
import {
  BUDGETED,
  expectHistoryKept,
  firstClient,
  listAccount,
  nextClient,
  recording,
  runProperty,
  runsFor,
  type Step,
  setupAgents,
  skipUnlessReplayed,
  tally,
} from "./support.js";

declareFile({});

/*
 * PROFILE §4–§5 as properties: generated inputs from the contract, expected
 * outcomes from the model (src/model), every response through the response-level checks.
 * Each case is self-contained (its own agents), so the shrunk case replays exactly. The
 * properties are four files (creates, patches, lists, conversations) so that a run's workers
 * take them side by side.
 */

// a property runs many cases; on a paced deployment that is minutes, not the functional checks' seconds
vi.setConfig({ testTimeout: 20 * 60_000 });

/** Creates of a list population sent at once: the target answers them within one millisecond, mostly. */
const LIST_BURST = 3;
/**
 * Whole populations made again, at most, when none tied: each retry deletes the population and
 * sends all its creates at once, so that by pigeonhole a target answering them within fewer
 * milliseconds than there are agents ties two. Retrying three at a time, forty tries all missed on
 * a loaded CI machine, and the replay of a case that needed a createdAt tie then could not
 * reproduce it.
 */
const TIE_RETRIES = 12;

/** Do two records share the sort key (PROFILE §5: then the id decides)? */
function tiesOn(records: readonly Agent[], sortBy: (typeof SORT_FIELDS)[number]): boolean {
  const keys = records.map((r) => (sortBy === "createdAt" ? String(Date.parse(r.createdAt)) : r[sortBy]));
  return new Set(keys).size < keys.length;
}

describe("property: list", () => {
  check(
    ["list.order", "list.filter", "list.walk", "list.past-end", "list.params", "envelope.list"],
    "property: for a random population, every page of a random query is the model's page",
    async ({ skip }) => {
      skipUnlessReplayed("list-valid", skip);
      const client = firstClient();
      const population: ModelAgent[] = [];
      let setupSteps: Step[] = [];
      // a population from the run's seed: the same seed makes the same agents
      const bodies = fc.sample(
        fc.record({
          create: validCreateBody({ ...bodyOptions, referenceModels: false }),
          // names that tie, so the id tiebreak is exercised
          twin: fc.boolean(),
        }),
        { seed: target.seed, numRuns: setupAgents(12) },
      );
      let previous: JsonObject | undefined;
      const sent = bodies.map(({ create, twin }) => {
        const body = { ...(create.value as JsonObject) };
        // a twin ties on name and status, so the id tiebreak (ids are the target's, new each run)
        // never changes what a status filter keeps: the shrunk case replays exactly
        if (twin && previous) {
          if (previous.name !== undefined) body.name = previous.name;
          if (previous.status === undefined) delete body.status;
          else body.status = previous.status;
        }
        previous = body;
        return body;
      });
      const baseline = await recording(async () => {
        const before = await listAccount(client);
        // in bursts sent at once, so createdAt ties too (PROFILE §5: ties by id in the order's direction)
        const burst = (bodies: JsonObject[]) => Promise.all(bodies.map((body) => createFor(nextClient(), body)));
        for (let i = 0; i < sent.length; i += LIST_BURST) population.push(...(await burst(sent.slice(i, i + LIST_BURST))));
        // a target that answered every burst across a millisecond boundary tied nothing: the whole
        // population is made again in one burst, a bounded number of times (once on a paced
        // deployment, where creates are scarce). A busy runner splits a small burst across
        // milliseconds often, and a replay without the ties its case needs cannot reproduce it
        for (let retry = 0; retry < (BUDGETED ? 1 : TIE_RETRIES) && !tiesOn(population.map(recordOf), "createdAt"); retry++) {
          await Promise.all(population.splice(0).map((agent) => remove(nextClient(), agent.id)));
          population.push(...(await burst(sent)));
        }
        return before;
      });
      setupSteps = baseline.steps;
      try {
        const records = (): Agent[] => [...baseline.value, ...population.map(recordOf)];
        const ran = await runProperty({
          title: "list-valid",
          numRuns: runsFor(150, { requests: 0.12, creates: 0 }, { requests: 2, creates: 0 }),
          setup: () => setupSteps,
          property: () =>
            fc.asyncProperty(validListQuery(), fc.boolean(), async ({ generator, value: sent }, walk) => {
              tally(walk ? "list.walk" : generator);
              if (walk)
                tally(
                  `list.walk.${tiesOn(records(), readListQuery(sent).sortBy) ? "ties" : "no-ties"}-on-${readListQuery(sent).sortBy}`,
                );
              const q = readListQuery(sent);
              const expected = predictList(records(), q);
              const res = await nextClient().listAgents(sent);
              const data = ok(res);
              const order = predictList(records(), { ...q, page: 1, limit: Number.MAX_SAFE_INTEGER }).ids;
              // another client in the account never makes a finding: then only this run's agents are judged
              const known = { baseline: baseline.value, own: population.map(recordOf), order };
              const again = askAgain(sent);
              await judgeList(
                data,
                known,
                () => {
                  expectEqual({ ids: data.map((a) => a.id), pagination: res.pagination }, expected, () => said(res));
                  for (const item of data)
                    expectEqual(
                      item,
                      records().find((r) => r.id === item.id),
                    );
                },
                { total: res.pagination?.total ?? 0, again },
              );
              if (!walk || expected.pagination.totalPages > 30) return;
              const seen: Agent[] = [];
              // each page's total: one that moves during the walk (no write of this run between) shows another client
              const totals: number[] = [];
              for (let page = 1; page <= expected.pagination.totalPages; page++) {
                const pageRes = await nextClient().listAgents({ ...sent, page: String(page) });
                seen.push(...ok(pageRes));
                totals.push(pageRes.pagination?.total ?? 0);
              }
              const first = totals[0] ?? 0;
              const moved = totals.find((t) => t !== first);
              const walkedAgain = async () => (moved !== undefined ? { total: moved, agents: seen } : await again());
              await judgeList(
                seen,
                { ...known, order: undefined },
                () =>
                  expect(
                    seen.map((a) => a.id),
                    "PROFILE §5: walking all pages yields every agent exactly once, in one total order",
                  ).toEqual(order),
                { total: first, again: walkedAgain },
              );
              expectHistoryKept();
            }),
        });
        expect(ran, "cases run").toBeGreaterThan(0);
      } finally {
        for (const agent of population) await remove(nextClient(), agent.id);
      }
    },
  );

  check(
    ["list.invalid-params", "status.no-5xx-on-input"],
    "property: a malformed, out-of-range, non-enum or repeated parameter → 400 naming it",
    async ({ skip }) => {
      skipUnlessReplayed("list-invalid", skip);
      const ran = await runProperty({
        title: "list-invalid",
        numRuns: runsFor(200, { requests: 0.08, creates: 0 }, { requests: 1, creates: 0 }),
        property: () =>
          fc.asyncProperty(invalidListQuery(), async ({ generator, query, field }) => {
            tally(generator);
            // PROFILE §5 List: "→ 400 INVALID_REQUEST naming the parameter"
            invalid(await nextClient().listAgents(query), field, FIELD_NAMED_BY.has("list.invalid-params"));
          }),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
    },
  );
});
