import fc from "fast-check";
import { describe, vi } from "vitest";
import { invalidBody, validCreateBody, validPatch } from "../../src/arbitraries/bodies.js";
import { type JsonObject, predictUpdate } from "../../src/model/agents.js";
import { declareFile } from "../support/declare-file.js";
import { check, expect } from "../support/harness.js";
import { bodyOptions, createFor, expectRecord, invalid, ok, remove, sendInvalid } from "./cases.js";
import { expectHistoryKept, nextClient, rememberTokens, runProperty, runsFor, skipUnlessReplayed, tally } from "./support.js";

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
    ["update.merge-patch", "update.noop", "update.status", "record.token-write-only", "create.platform-enabled"],
    "property: merge patches over a fresh agent give the model's record (RFC 7396, null resets)",
    async ({ skip }) => {
      skipUnlessReplayed("update-valid", skip);
      const ran = await runProperty({
        title: "update-valid",
        numRuns: runsFor(150, { requests: 0.2, creates: 0.14 }, { requests: 5, creates: 1 }),
        property: () =>
          fc.asyncProperty(
            validCreateBody(bodyOptions),
            fc.array(validPatch(bodyOptions), { minLength: 1, maxLength: 4 }),
            async (create, patches) => {
              tally(create.generator);
              const client = nextClient();
              const agent = await createFor(client, create.value as JsonObject);
              try {
                for (const { generator, value } of patches) {
                  tally(generator);
                  rememberTokens(value);
                  const predicted = predictUpdate(agent.config, value as JsonObject);
                  const res = await client.updateAgent(agent.id, value);
                  if (!predicted.ok) {
                    // the model rejects a platform without `enabled` (PROFILE §5): a 400 that need not name it
                    invalid(res, predicted.field, false);
                    continue;
                  }
                  const record = ok(res);
                  if (predicted.value.changed) {
                    expect(record.updatedAt, "PROFILE §4: updatedAt changes on an update that changes something").not.toBe(
                      agent.updatedAt,
                    );
                    expect(Date.parse(record.updatedAt)).toBeGreaterThanOrEqual(Date.parse(agent.updatedAt));
                  }
                  agent.config = predicted.value.config;
                  agent.updatedAt = predicted.value.changed ? record.updatedAt : agent.updatedAt;
                  expectRecord(record, agent);
                }
                expectRecord(ok(await client.getAgent(agent.id)), agent);
              } finally {
                await remove(client, agent.id);
              }
              expectHistoryKept();
            },
          ),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
    },
  );

  check(
    [
      "update.rejected-no-effect",
      "update.null-required",
      "update.status",
      "record.unknown-keys",
      "record.read-only-fields",
      "status.no-5xx-on-input",
    ],
    "property: an invalid patch → 400 naming the field where PROFILE asks, and the agent is unchanged",
    async ({ skip }) => {
      skipUnlessReplayed("update-invalid", skip);
      const ran = await runProperty({
        title: "update-invalid",
        numRuns: runsFor(150, { requests: 0.14, creates: 0.1 }, { requests: 4, creates: 1 }),
        property: () =>
          fc.asyncProperty(
            validCreateBody(bodyOptions),
            invalidBody(
              "update",
              validPatch(bodyOptions).map((g) => g.value as JsonObject),
            ),
            async (create, input) => {
              tally(input.generator);
              const client = nextClient();
              const agent = await createFor(client, create.value as JsonObject);
              try {
                // the valid patch the fault was put in may add a platform without `enabled` to this agent
                const second = "raw" in input.body ? undefined : predictUpdate(agent.config, input.body as JsonObject);
                const alsoAtFault = second && !second.ok ? second.field : undefined;
                invalid(await sendInvalid(client, "updateAgent", input, agent.id), input.field, input.mustName, alsoAtFault);
                expectRecord(ok(await client.getAgent(agent.id)), agent);
              } finally {
                await remove(client, agent.id);
              }
              expectHistoryKept();
            },
          ),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
    },
  );
});
