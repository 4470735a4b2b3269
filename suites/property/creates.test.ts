import fc from "fast-check";
import { describe, vi } from "vitest";
import { invalidBody, validCreateBody } from "../../src/arbitraries/bodies.js";
import type { Agent } from "../../src/contract/index.js";
import type { JsonObject } from "../../src/model/agents.js";
import { declareFile } from "../support/declare-file.js";
import { check, expect, target } from "../support/harness.js";
import { bodyOptions, createFor, invalid, ok, remove, sendInvalid } from "./cases.js";
import { expectHistoryKept, nextClient, notJudged, runProperty, runsFor, skipUnlessReplayed, tally } from "./support.js";

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

describe("property: agents", () => {
  check(
    ["create.created", "create.partial-nested", "record.defaults", "record.token-write-only", "create.status", "record.lengths"],
    "property: a valid create body is created as the model predicts (defaults merged with the body)",
    async ({ skip }) => {
      skipUnlessReplayed("create-valid", skip);
      const ran = await runProperty({
        title: "create-valid",
        numRuns: runsFor(200, { requests: 0.12, creates: 0.14 }, { requests: 2, creates: 1 }),
        property: () =>
          fc.asyncProperty(validCreateBody(bodyOptions), async ({ generator, value }) => {
            tally(generator);
            const client = nextClient();
            const made = await createFor(client, value as JsonObject);
            await remove(client, made.id);
            expectHistoryKept();
          }),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
    },
  );

  check(
    [
      "record.unknown-keys",
      "record.read-only-fields",
      "record.lengths",
      "create.status",
      "create.rejected-no-effect",
      "status.no-5xx-on-input",
    ],
    "property: an invalid create body → 400 naming the field where PROFILE asks, and nothing is created",
    async ({ skip }) => {
      skipUnlessReplayed("create-invalid", skip);
      // any key of the account sees the account's total, and its newest agents
      const newest = async () => {
        const res = await nextClient().listAgents({ limit: 100, sortBy: "createdAt", order: "desc" });
        const agents = ok(res);
        return { total: res.pagination!.total, ids: new Set(agents.map((a) => a.id)), agents };
      };
      /**
       * PROFILE §5: a rejected create creates nothing. Another client busy in the account (another
       * run with the same keys, any other user) changes the total as well: judged is only what this
       * request could have made. A new agent named with this run's prefix, or with the name the
       * rejected body carried, is this request's doing: a finding. Any other new agent, or a total
       * that fell, is another client's activity: the case is not judged (never a finding), since a
       * rejected create that made an agent under some other name could hide among them.
       */
      const expectNothingCreated = async (before: Awaited<ReturnType<typeof newest>>, sentName: unknown) => {
        const after = await newest();
        if (after.total === before.total) return;
        const added = after.agents.filter((a) => !before.ids.has(a.id));
        const mine = added.filter((a) => String(a.name).startsWith(target.runPrefix) || a.name === sentName);
        expect(
          mine.map((a) => a.name),
          "PROFILE §5: a rejected create creates nothing",
        ).toEqual([]);
        const others = added.filter((a) => !mine.includes(a));
        if (others.length || after.total < before.total)
          notJudged(
            `another client's activity in the account: the account changed under the check, ${others.length} agent(s) this run did not make (${others[0]?.name.slice(0, 40) ?? "none listed"}…) and a total from ${before.total} to ${after.total}`,
          );
        expect(after.total, "PROFILE §5: a rejected create creates nothing").toBe(before.total);
      };
      const ran = await runProperty({
        title: "create-invalid",
        numRuns: runsFor(250, { requests: 0.12, creates: 0.14 }, { requests: 3, creates: 1 }),
        property: () =>
          fc.asyncProperty(
            invalidBody(
              "create",
              validCreateBody(bodyOptions).map((g) => g.value as JsonObject),
            ),
            async (input) => {
              tally(input.generator);
              const before = await newest();
              const res = await sendInvalid(nextClient(), "createAgent", input);
              const made = (res.data as Agent | undefined)?.id;
              if (res.status === 201 && made) await remove(nextClient(), made);
              invalid(res, input.field, input.mustName);
              await expectNothingCreated(before, "raw" in input.body ? undefined : input.body.name);
              expectHistoryKept();
            },
          ),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
    },
  );
});
