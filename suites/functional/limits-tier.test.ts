import { RATE_LIMITS } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import {
  budget,
  check,
  clientFor,
  expect,
  expectError,
  expectOk,
  HarnessError,
  target,
  waitForRefill,
} from "../support/harness.js";
import { inBatches, label, MAX_DRAIN_ATTEMPTS, MISSING_ID, type Result, SIZES } from "../support/limits.js";

declareFile({
  keys: ["otherAccount"],
  sendsMessages: true,
  sendsUnpaced: true,
  emptiesBuckets: true,
  readsRemainingAcrossAnswers: true,
});

/**
 * PROFILE §7 tier (§9 path variants under an emptied Create bucket: the Create row of
 * suites/support/limit-buckets.ts, while its bucket is empty). Apart from limits-account.test.ts
 * and the concurrency cap (limits-cap.test.ts) so they run in parallel workers, each with its own
 * accounts: each of the three waits out windows or message budgets.
 */

/* ---------------------------------------------------------------- tier */

/** The small-tier account's label: its keys' buckets and its tier are paced as one account. */
const TIER_BURST_ACCOUNT = "tierBurst";

/**
 * Floods of the tier check at most: where no 429 came, only the timing can prove a window held
 * more than the tier, and four fault runs at once on a CI machine's two cores once fit no flood
 * into its span.
 */
const TIER_FLOODS = 3;

check(
  "limits.tier",
  "the account's requests together stop at the tier limit: on every endpoint, and on no other account",
  async ({ api, skip }) => {
    // On a reference target the harness made a small-tier account of its own: 100 requests empty it
    // inside one short window even on a busy machine, where the main account's 300 may straddle
    // windows and never run out. On a deployment: the main account and the --tier it was given.
    const small = target.keys.tierBurst !== undefined ? target.loadTiers?.tierBurst : undefined;
    const tier = small ?? target.tierLimit;
    if (tier === undefined) return skip("needs --tier");
    const client = small !== undefined && target.keys.tierBurst ? clientFor(target.keys.tierBurst, TIER_BURST_ACCOUNT) : api;
    // another account, with room for one more request before the flood: only a tier it shared could refuse it then
    const elsewhere = client !== api ? api : target.keys.otherAccount ? clientFor(target.keys.otherAccount, "other") : undefined;
    const roomElsewhere = elsewhere && (await elsewhere.listAgents({ limit: 1 })).exchange.rate?.remaining;
    const bound = 3 * tier + 20;
    // distinct agents, each its own message bucket (a 404 counts too): only the tier can run out.
    // And at most half the in-flight cap sent to one at a time (a tier's worth goes at once): PROFILE
    // §3 lets a 429 of the cap come before the 404 of a missing agent, and it would describe no tier
    const agentsNeeded = Math.max(
      Math.ceil(bound / (RATE_LIMITS.perAgentMessages / 2)),
      Math.ceil(tier / (RATE_LIMITS.messageConcurrency / 2)),
    );
    // a tier's worth at a time: in a few round trips, so it empties the tier inside one window far
    // from the service too (STYLE §12; twenty at a time took W at 80 ms a round trip)
    const flood = () =>
      inBatches(
        bound,
        tier,
        (i) => client.sendMessage(`agt_nx${i % agentsNeeded}`, { text: "hello" }, { pace: false }),
        (r) => r.status === 429,
      );
    let results = await flood();
    // a flood that met no 429 and proves nothing (its windows turned before the tier ran out: a
    // starved runner, a far service) is made again from the next window, a bounded number of times
    for (let attempt = 1; !results.some((r) => r.status === 429); attempt++) {
      const overrun = tierOverrun(results, tier);
      if (overrun) expect.fail(`no 429 in ${results.length} requests, and ${overrun}`);
      if (attempt === TIER_FLOODS)
        throw new HarnessError(
          `no 429 in ${TIER_FLOODS} floods of ${results.length} requests, yet neither the service's answers nor their timing prove a window held more than the tier of ${tier}: the windows turned before the tier could run out (a starved runner or a far service); inconclusive`,
        );
      await waitForRefill(results.at(-1)!.exchange);
      results = await flood();
    }
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length, `a 429 within ${bound} requests`).toBeGreaterThan(0);
    for (const res of limited) {
      expectError(res, "RATE_LIMIT_EXCEEDED");
      expect({ limit: res.exchange.rate?.limit, remaining: res.exchange.rate?.remaining }, label(res)).toEqual({
        limit: tier,
        remaining: 0,
      });
    }
    // PROFILE §7 "per account, all endpoints together": at once, another endpoint of the account and
    // another account; a message beside them shows the tier is still empty (its window has not turned)
    const [stillEmpty, otherEndpoint, otherAccount] = await Promise.all([
      client.sendMessage("agt_nx0", { text: "hello" }, { pace: false }),
      client.listAgents({ limit: 1 }, { pace: false }),
      roomElsewhere ? elsewhere?.listAgents({ limit: 1 }, { pace: false }) : undefined,
    ]);
    if (stillEmpty.status === 429) {
      expectError(otherEndpoint, "RATE_LIMIT_EXCEEDED");
      expect(otherEndpoint.exchange.rate?.limit, `${label(otherEndpoint)}: the tier, emptied by messages, refuses a list`).toBe(
        tier,
      );
      if (otherAccount) expectOk(otherAccount);
    }
    await waitForRefill(limited.at(-1)!.exchange);
  },
);

/**
 * With no 429 in a flood, what proves the tier admitted more than its size between two refills
 * (PROFILE §7), if anything. Where a window starts is the service's choice, so the runner's clock
 * alone cannot say which requests shared one; two things can:
 * - the service's own answers: those describing the tier (its Limit) with one X-RateLimit-Reset
 *   were counted in one window, and one that said Remaining r leaves room for at most r more, so
 *   more than r of them sent after it arrived were admitted past the size;
 * - the timing: a window lasts W, so any span of W meets at most two windows and admits at most
 *   twice the tier; a request sent and answered within the span was counted within it.
 */
function tierOverrun(results: readonly Result[], tier: number): string | undefined {
  const told = results.flatMap(({ exchange }) =>
    exchange.rate?.limit === tier && exchange.rate.reset !== undefined && exchange.rate.remaining !== undefined
      ? [{ exchange, reset: exchange.rate.reset, remaining: exchange.rate.remaining }]
      : [],
  );
  for (const b of told) {
    const after = told.filter((a) => a.reset === b.reset && a.exchange.sentAt > b.exchange.receivedAt).length;
    if (after > b.remaining)
      return `${label(b)} said Remaining ${b.remaining} of the tier's ${tier}, and ${after} requests sent after it arrived were admitted in the same window (X-RateLimit-Reset ${b.reset})`;
  }
  const spanMs = target.windowSeconds * 1000;
  const times = results.map((r) => r.exchange).sort((x, y) => x.sentAt - y.sentAt);
  for (const first of times) {
    const within = times.filter((e) => e.sentAt >= first.sentAt && e.receivedAt <= first.sentAt + spanMs).length;
    if (within > 2 * tier)
      return `${within} requests were sent and answered within ${target.windowSeconds} s, a span that meets at most two windows of ${tier}`;
  }
  return undefined;
}

// PROFILE §7: "on a 429 RATE_LIMIT_EXCEEDED from an empty bucket, the empty bucket that refills
// last" and "the endpoint's bucket on a tie". Mutation testing found no check that ever had
// two buckets empty at once, nor one where the endpoint's bucket and the tier tied.
check(
  ["limits.headers", "limits.tier", "limits.recovery"],
  "with the tier and the Create bucket both empty, the 429 describes the one that refills last (Create's, on the reference: its window opened last, or with the tier's); after its reset both admit again",
  async ({ skip }) => {
    const tier = target.loadTiers?.tierBurst;
    if (!target.keys.tierBurst || tier === undefined) return skip("needs a small-tier account of its own (reference targets)");
    const client = clientFor(target.keys.tierBurst, TIER_BURST_ACCOUNT);
    const invalidCreate = (): Promise<Result> => client.call("createAgent", { body: { name: "" }, pace: false });
    const CREATE_BATCH = 5;
    const creates = () => inBatches(SIZES.createAgent, CREATE_BATCH, invalidCreate, () => false);
    // the rest of the tier: Gets (a 404 is counted, no effect) and Lists, each well inside its own
    // bucket; at least one List, whose headers are judged below (a small tier, 60 say, leaves room
    // for fewer Gets than the Get bucket holds)
    const gets = Math.max(0, Math.min(SIZES.getAgent - 1, tier - SIZES.createAgent - 1));
    // the Lists' headers describe the tier only while the List bucket has more left than the tier:
    // a tier of more Gets and Lists than that (or with no room for a List) cannot show it
    const lists = tier - SIZES.createAgent - gets;
    if (lists < 1 || lists >= SIZES.listAgents - SIZES.createAgent)
      return skip(
        `needs a --tier-burst-tier of ${SIZES.createAgent + 1}–${SIZES.getAgent - 1 + SIZES.listAgents - 1} (${tier}: its Gets and Lists would not leave the tier the tightest bucket)`,
      );
    // the Gets answered before the Lists go: a List counted before a Get still in flight would read
    // one more left in the tier than the Lists' last is judged to have (few Lists at a small tier)
    const others = async () => [
      ...(await inBatches(
        gets,
        10,
        (): Promise<Result> => client.getAgent(MISSING_ID, { pace: false }),
        () => false,
      )),
      ...(await inBatches(
        lists,
        10,
        (): Promise<Result> => client.listAgents({ limit: 1 }, { pace: false }),
        () => false,
      )),
    ];
    // 1. Gets and Lists open the tier's window and leave it Create's size: each create then leaves both
    //    buckets as many requests (a tie: the endpoint's is described), and Create's window opens last.
    // 2. The first create opens both windows (phase 1 waited both out): they refill in the same millisecond.
    for (const createsFirst of [false, true]) {
      let done = false;
      for (let attempt = 1; attempt <= MAX_DRAIN_ATTEMPTS && !done; attempt++) {
        // every bucket of the account full: the tier check above may have left the tier or a key's
        // Get bucket part spent, their windows running (a load scenario of the same worker paces
        // through clients of its own: what it left, a failed try finds, and the next starts over)
        if (!createsFirst) await budget.untilAccountFull(TIER_BURST_ACCOUNT);
        const made = createsFirst ? await creates() : [];
        if (createsFirst && attempt === 1) {
          // phase 1 ended with both buckets empty and waited out the reset of the one that refills
          // last (asserted there): the first burst of creates is counted, not refused
          const refused = made.slice(0, CREATE_BATCH).filter((r) => r.status === 429);
          expect(
            refused.map((r) => `${label(r)}: ${r.status}, X-RateLimit-Limit ${r.exchange.rate?.limit}`),
            "creates sent after Create's announced reset (both buckets had emptied) are refused: the buckets did not recover",
          ).toEqual([]);
        }
        const rest = await others();
        if (!createsFirst) made.push(...(await creates()));
        const tierEmpty = await client.listAgents({ limit: 1 }, { pace: false });
        const last = await invalidCreate();
        // a window that ended in the middle leaves a bucket with room: not both empty, try in a fresh window
        const admitted = [...made, ...rest].some((r) => r.status === 429) || tierEmpty.status !== 429 || last.status !== 429;
        if (admitted) {
          await waitForRefill((last.status === 429 ? last : tierEmpty).exchange);
          await budget.untilAccountFull(TIER_BURST_ACCOUNT);
          continue;
        }
        // after the Gets the tier has fewer left than the List bucket: the Lists' headers describe the tier
        const listed = rest.slice(gets).filter((r) => r.exchange.rate?.remaining !== undefined);
        const lastList = listed.reduce((a, b) => (b.exchange.rate!.remaining! < a.exchange.rate!.remaining! ? b : a));
        const leftAfterLists = createsFirst ? 0 : SIZES.createAgent;
        expect(
          { limit: lastList.exchange.rate?.limit, remaining: lastList.exchange.rate?.remaining },
          `${label(lastList)}: the headers of the ${tier - leftAfterLists}th request describe the tier (the fewest left)`,
        ).toEqual({ limit: tier, remaining: leftAfterLists });
        if (!createsFirst)
          for (const res of made)
            expect(
              res.exchange.rate?.limit,
              `${label(res)}: Create and the tier have as many left; the headers describe the endpoint's bucket`,
            ).toBe(SIZES.createAgent);
        expectError(tierEmpty, "RATE_LIMIT_EXCEEDED");
        expect(tierEmpty.exchange.rate?.limit, `${label(tierEmpty)}: the tier is empty`).toBe(tier);
        expectError(last, "RATE_LIMIT_EXCEEDED");
        // which bucket refills last is the service's to say (PROFILE §7: when a window starts is its
        // choice, and windows of fixed phase may end in any order): the tier's Reset, on the refused
        // List, against Create's, on the creates' own headers. A window opened at its first request,
        // as the reference opens it, makes Create's the later; on the same second, either may be described
        const tierReset = tierEmpty.exchange.rate?.reset;
        const createReset = made.find((r) => r.exchange.rate?.limit === SIZES.createAgent)?.exchange.rate?.reset;
        const refillsLast =
          tierReset === undefined || createReset === undefined || createReset > tierReset
            ? [SIZES.createAgent]
            : tierReset > createReset
              ? [tier]
              : [SIZES.createAgent, tier];
        expect(
          refillsLast.map((limit) => ({ limit, remaining: 0 })),
          `${label(last)}: the empty bucket that refills last (Create's Reset ${createReset}, the tier's ${tierReset}; on the same second, either)`,
        ).toContainEqual({ limit: last.exchange.rate?.limit, remaining: last.exchange.rate?.remaining });
        // both windows end by the reset it described: the next phase opens fresh ones
        await waitForRefill(last.exchange);
        done = true;
      }
      // nothing to conclude, and not the target's fault: windows keep ending mid-burst on a slow
      // machine, or a bucket stays empty after its reset (the recovery checks judge that; as an
      // error this check would end a --bail run before they ran)
      if (!done) return skip(`windows ended mid-burst or a bucket stayed empty ${MAX_DRAIN_ATTEMPTS} times: inconclusive`);
    }
  },
);

// PROFILE §7: the tier is per account. Mutation testing: one tier bucket shared by every
// account survived, since each account that emptied it had the smallest tier of the run.
check(
  "limits.tier",
  "another account's tier's worth of requests leaves the small-tier account's tier untouched",
  async ({ api, skip }) => {
    const tier = target.loadTiers?.tierBurst;
    if (!target.keys.tierBurst || tier === undefined) return skip("needs a small-tier account of its own (reference targets)");
    // the small-tier account with room first: the checks before this one may have left its tier
    // spent, its window running (a 429 then would say nothing of the other account's requests)
    await budget.untilAccountFull(TIER_BURST_ACCOUNT);
    const gets = SIZES.getAgent - 1;
    const others = await inBatches(
      tier,
      10,
      (i): Promise<Result> =>
        i < gets ? api.getAgent(MISSING_ID, { pace: false }) : api.listAgents({ limit: 1 }, { pace: false }),
      () => false,
    );
    const refused = others.find((r) => r.status === 429);
    if (refused) {
      // the main account's own buckets ran out (a deployment's small tier): nothing to conclude
      await waitForRefill(refused.exchange);
      return skip(`the main account could not send ${tier} requests in one window`);
    }
    const small = await clientFor(target.keys.tierBurst, TIER_BURST_ACCOUNT).getAgent(MISSING_ID, { pace: false });
    expectError(small, "AGENT_NOT_FOUND");
  },
);
